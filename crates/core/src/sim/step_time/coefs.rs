//! The operators' linear coefficients a step is timed from: per attention operator, FLOPs and
//! bytes per attended key and per new token; per token-proportional operator (linear layers, the
//! head), FLOPs and bytes at `T` tokens, read from the operator lists at 1 and 2 tokens.

use crate::calc::perf::{PassWork, Phase};
use crate::calc::roofline::expected_distinct_experts;

pub(super) const ATTN_OPS: [&str; 2] = ["op_attn_score", "op_attn_av"];

pub(super) const HEAD_OPS: [&str; 2] = ["op_final_norm", "op_lm_head"];

/// One attention operator's linear coefficients (summed over the layers it stands for).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct AttnCoef {
    /// Sliding window, tokens (`None` = full attention).
    pub(super) window: Option<u64>,
    /// Decode FLOPs per attended key.
    pub(super) flops_per_key: f64,
    /// Decode FLOPs per new token not proportional to keys.
    pub(super) flops_per_token: f64,
    /// Prefill FLOPs per (query, key) pair.
    pub(super) flops_per_pair: f64,
    /// KV bytes per key read.
    pub(super) bytes_per_key: f64,
    /// Bytes per new token (its activations and its own K/V).
    pub(super) bytes_per_token: f64,
}

/// Per-operator sums of one step being built.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(super) struct AttnSums {
    pub(super) decode_keys: f64,
    pub(super) prefill_pairs: f64,
    pub(super) prefill_keys: f64,
}

/// One token-proportional operator: FLOPs and bytes at `T` tokens are
/// `flops0 + flops1·T` and `bytes0 + bytes1·T`, plus, for routed experts, `expert_bytes ×
/// distinct(T)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct TokenCoef {
    pub(super) flops0: f64,
    pub(super) flops1: f64,
    pub(super) bytes0: f64,
    pub(super) bytes1: f64,
    pub(super) expert_bytes: f64,
}

/// Expected distinct experts for `t` tokens: `(experts, top_k)` of the model's MoE layers.
pub(super) fn distinct(moe: Option<(u64, u64)>, t: f64) -> f64 {
    moe.map_or(0.0, |(e, k)| expected_distinct_experts(e, k, t))
}

/// Coefficients of the operators `keep` selects, from the operator lists at 1 and 2 tokens.
pub(super) fn token_coefs(
    w1: &PassWork,
    w2: &PassWork,
    keep: fn(&str) -> bool,
    moe: Option<(u64, u64)>,
) -> Vec<TokenCoef> {
    w1.ops
        .iter()
        .zip(&w2.ops)
        .filter(|(a, _)| keep(&a.name))
        .map(|(a, b)| {
            let flops1 = b.flops.0 - a.flops.0;
            if a.name == "op_moe_experts" && moe.is_some() {
                // bytes(T) = U·distinct(T) + a·T, solved from T = 1 and 2.
                let (d1, d2) = (distinct(moe, 1.0), distinct(moe, 2.0));
                let den = 2.0 * d1 - d2;
                let u = if den.abs() > 0.0 {
                    (2.0 * a.bytes - b.bytes) / den
                } else {
                    0.0
                };
                TokenCoef {
                    flops0: a.flops.0 - flops1,
                    flops1,
                    bytes0: 0.0,
                    bytes1: a.bytes - u * d1,
                    expert_bytes: u,
                }
            } else {
                let bytes1 = b.bytes - a.bytes;
                TokenCoef {
                    flops0: a.flops.0 - flops1,
                    flops1,
                    bytes0: a.bytes - bytes1,
                    bytes1,
                    expert_bytes: 0.0,
                }
            }
        })
        .collect()
}

/// A pass of the selected operators (attention, linear or head), to be updated in place.
pub(super) fn select(from: &PassWork, phase: Phase, keep: fn(&str) -> bool) -> PassWork {
    PassWork {
        phase,
        ops: from.ops.iter().filter(|o| keep(&o.name)).cloned().collect(),
        allreduces: 0,
        allreduce_bytes: 0.0,
        layers: from.layers,
    }
}

pub(super) fn is_attn(name: &str) -> bool {
    ATTN_OPS.contains(&name)
}

pub(super) fn is_head(name: &str) -> bool {
    HEAD_OPS.contains(&name)
}

pub(super) fn is_linear(name: &str) -> bool {
    !is_attn(name) && !is_head(name)
}

pub(super) fn capped(x: f64, window: Option<u64>) -> f64 {
    window.map_or(x, |w| x.min(w as f64))
}
