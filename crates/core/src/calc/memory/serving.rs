//! Serving memory: weights, activation reserve and the KV cache of a batch.

use super::kv_profile::KvProfile;
use crate::base::units::Bytes;

/// Memory of serving `batch` requests of `len` tokens: weights + activation reserve + KV.
pub fn serving_memory(
    weights: Bytes,
    reserve: Bytes,
    profile: &KvProfile,
    batch: u64,
    len: u64,
) -> Bytes {
    weights + reserve + profile.per_batch(batch, len)
}
