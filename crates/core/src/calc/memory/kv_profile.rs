//! KV profile: how the cache of one request grows with its length, per GPU.

use super::helpers::out_of_range;
use crate::base::checked::bits_to_bytes_saturating;
use crate::base::dtype::Dtype;
use crate::base::error::{CalcError, Phrase};
use crate::base::units::Bytes;
use crate::calc::kv as kvmod;
use crate::calc::tp::check_heads as check_tp;
use crate::hardware::Architecture;
use crate::model::{Mixer, ModelDesc};
use serde::{Deserialize, Serialize};

/// How one layer's KV cache grows with the sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum KvLayerKind {
    /// Full attention (or MLA): every token stays cached.
    Full,
    /// Sliding-window attention: at most `window` tokens stay cached.
    Sliding {
        /// Window in tokens.
        window: u64,
    },
}

/// One attention layer's cache on one GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct KvLayer {
    /// Full or sliding.
    pub kind: KvLayerKind,
    /// Bytes cached per token by this layer on one GPU: `kv_heads_per_rank × (k_dim + v_dim) ×
    /// dtype bytes`, or `(kv_lora_rank + qk_rope_head_dim) × dtype bytes` for MLA, plus the
    /// sparse-attention indexer's key of an MLA layer that runs one (its own bytes, whatever the
    /// KV precision: `core::kv::layer_fixed_bytes_per_token`; vLLM pages it in the same group,
    /// so a block's bytes are the sum); on Hopper, an fp8 latent of a sparse-attention model in
    /// vLLM's `fp8_ds_mla` layout (`core::kv::fp8_ds_mla_bytes_per_token`, 656 B for 512 + 64;
    /// `core::kv::uses_fp8_ds_mla`).
    pub bytes_per_token: Bytes,
}

/// The per-GPU KV cache of a model at one KV precision and TP degree.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct KvProfile {
    /// Attention layers, in model order.
    pub layers: Vec<KvLayer>,
    /// Constant recurrent state per sequence (SSM / linear-attention layers), per GPU.
    pub state_per_seq: Bytes,
    /// The same per recurrent layer, in model order (vLLM pages each layer's state as one
    /// block of a `MambaSpec`); empty where the profile is given as plain quantities.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub state_layers: Vec<Bytes>,
}

impl KvProfile {
    /// `n` identical full-attention layers of `bytes_per_token` each (plain quantities).
    pub fn uniform(n: u64, bytes_per_token: Bytes) -> KvProfile {
        let n = usize::try_from(n.min(1 << 20)).unwrap_or(0);
        KvProfile {
            layers: vec![
                KvLayer {
                    kind: KvLayerKind::Full,
                    bytes_per_token
                };
                n
            ],
            state_per_seq: Bytes::ZERO,
            state_layers: Vec::new(),
        }
    }

    /// Builds the profile from a model at KV precision `kv` and tensor-parallel degree `tp` on
    /// a GPU of architecture `arch`, with `core::kv`'s per-layer elements (per-GPU KV heads;
    /// MLA latents replicated on every GPU, as in vLLM), the cache layout vLLM picks there (a
    /// sparse-attention model's fp8 latents in `fp8_ds_mla` on Hopper only,
    /// `core::kv::uses_fp8_ds_mla`; [`Architecture::Unknown`] for no GPU in particular keeps
    /// the plain latent) and its recurrent state (model precision, split across TP ranks).
    pub fn from_model(
        model: &ModelDesc,
        kv: Dtype,
        tp: u64,
        arch: Architecture,
    ) -> Result<KvProfile, CalcError> {
        if tp == 0 {
            return Err(out_of_range("tp", tp, Phrase::tr("rng_whole_at_least_1")));
        }
        let bits = kv.bits();
        // vLLM picks the cache layout once for the engine (every MLA layer alike).
        let ds_mla = kvmod::uses_fp8_ds_mla(model, kv, arch);
        let mut p = KvProfile::default();
        // With MTP loaded, its layers are cached too (`ModelDesc::kv_layers`, `core::kv`).
        for l in model.kv_layers() {
            let window = match &l.mixer {
                Mixer::Attention {
                    num_heads,
                    kv_heads,
                    window,
                    ..
                } => {
                    check_tp(*num_heads, *kv_heads, tp)?;
                    *window
                }
                Mixer::Mla { num_heads, .. } => {
                    check_tp(*num_heads, 0, tp)?;
                    None
                }
                Mixer::Ssm { .. } => continue,
            };
            let elems = kvmod::layer_elems_per_token(&l.mixer, tp)?;
            let fixed = Bytes(
                kvmod::layer_fixed_bytes_per_token(&l.mixer)
                    + kvmod::layer_ds_mla_extra_bytes(&l.mixer, ds_mla),
            );
            p.layers.push(KvLayer {
                kind: match window {
                    Some(w) => KvLayerKind::Sliding { window: w },
                    None => KvLayerKind::Full,
                },
                bytes_per_token: bits_to_bytes_saturating(elems, bits) + fixed,
            });
        }
        p.state_per_seq = kvmod::state_bytes(model, model.weights.base, tp)?.bytes;
        p.state_layers = kvmod::state_bytes_per_layer(model, model.weights.base, tp)?;
        Ok(p)
    }

    /// Bytes per token summed over all attention layers, as if every layer kept every token
    /// (what one vLLM block of one token costs when all layers are full attention).
    pub fn per_token_all_layers(&self) -> Bytes {
        self.layers
            .iter()
            .fold(Bytes::ZERO, |a, l| a + l.bytes_per_token)
    }

    /// KV bytes of one request of `len` tokens: full layers × len, sliding layers ×
    /// min(len, window), plus the constant state.
    pub fn per_request(&self, len: u64) -> Bytes {
        self.layers.iter().fold(self.state_per_seq, |a, l| {
            let t = match l.kind {
                KvLayerKind::Full => len,
                KvLayerKind::Sliding { window } => len.min(window),
            };
            a + l.bytes_per_token * t
        })
    }

    /// KV bytes of `batch` requests of `len` tokens each.
    pub fn per_batch(&self, batch: u64, len: u64) -> Bytes {
        self.per_request(len) * batch
    }

    /// Whether the model has any attention KV cache.
    pub fn has_attention(&self) -> bool {
        !self.layers.is_empty()
    }

    /// The longest request (tokens) whose KV fits in `budget`; `None` if even the constant
    /// state does not fit. Capped at 2^40 tokens.
    pub fn max_len_within(&self, budget: Bytes) -> Option<u64> {
        if self.per_request(0) > budget {
            return None;
        }
        let (mut lo, mut hi) = (0u64, 1u64 << 40);
        if self.per_request(hi) <= budget {
            return Some(hi);
        }
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if self.per_request(mid) <= budget {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        Some(lo)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::units::MIB;

    #[test]
    fn max_len_within_is_the_boundary() {
        // 1 KiB per token, 1 MiB budget → 1,024 tokens exactly.
        let p = KvProfile::uniform(1, Bytes(1024));
        assert_eq!(p.max_len_within(Bytes(MIB)), Some(1024));
    }
}
