//! The operators of a layer's feed-forward block, per GPU under tensor parallelism: the dense
//! MLP, and the mixture of experts, which reads only the experts its tokens route to (the expected
//! number of distinct experts of `E` touched by `n` tokens choosing `k` each is
//! `E × (1 − (1 − k/E)^n)`).

use super::op::{linear, OpCost, Precisions, Step};
use crate::base::checked::bits_to_bytes_real;
use crate::base::units::Bytes;
use crate::model::Ffn;

/// Expected distinct experts touched by `tokens` tokens each choosing `k` of `e` experts,
/// under uniform routing: `E × (1 − (1 − k/E)^tokens)`.
pub fn expected_distinct_experts(e: u64, k: u64, tokens: f64) -> f64 {
    if e == 0 {
        return 0.0;
    }
    let p = (k.min(e) as f64) / e as f64;
    let r = e as f64 * (1.0 - (1.0 - p).powf(tokens.max(0.0)));
    if r.is_finite() {
        r.clamp(0.0, e as f64)
    } else {
        e as f64
    }
}

/// The MoE operators: `op_moe_router`, `op_moe_experts` (FLOPs of the `top_k` chosen
/// experts, weight bytes of the expected distinct experts touched, at the experts' width: the
/// model's, or a latent MoE's `L`), for a latent MoE `op_moe_latent` (the projections `h → L`
/// and `L → h`, held whole on every GPU) and, with shared experts, `op_moe_shared`. `shared` is
/// `(shared_experts, shared_intermediate)`.
fn moe_ops(
    st: &Step,
    p: &Precisions,
    tp: u64,
    (experts, top_k, expert_intermediate): (u64, u64, u64),
    (shared_experts, shared_intermediate): (u64, u64),
    (gated, latent): (bool, Option<u64>),
) -> Vec<OpCost> {
    let Step {
        ph, t, hf, act, lb, ..
    } = *st;
    let mut ops = Vec::new();
    ops.push(linear(
        "op_moe_router",
        ph,
        t,
        hf,
        experts as f64,
        p.base_bits,
        act,
    ));
    let m = if gated { 3.0 } else { 2.0 };
    let ir = expert_intermediate.div_ceil(tp) as f64;
    let k = top_k.min(experts) as f64;
    let distinct = expected_distinct_experts(experts, top_k, t);
    let ef = latent.map_or(hf, |l| l as f64);
    if let Some(l) = latent {
        let lf = l as f64;
        ops.push(OpCost::new(
            "op_moe_latent",
            ph,
            4.0 * t * hf * lf,
            bits_to_bytes_real(2.0 * hf * lf, lb),
            bits_to_bytes_real(2.0 * t * (hf + lf), act),
            Bytes::ZERO,
        ));
    }
    ops.push(OpCost::new(
        "op_moe_experts",
        ph,
        2.0 * t * k * m * ef * ir,
        bits_to_bytes_real(distinct * m * ef * ir, p.expert_bits),
        bits_to_bytes_real(t * ef + t * k * (2.0 * ef + m * ir), act),
        Bytes::ZERO,
    ));
    if shared_experts > 0 {
        let is = shared_experts
            .saturating_mul(shared_intermediate)
            .div_ceil(tp) as f64;
        ops.push(OpCost::new(
            "op_moe_shared",
            ph,
            2.0 * t * m * hf * is,
            bits_to_bytes_real(m * hf * is, lb),
            bits_to_bytes_real(t * (2.0 * hf + m * is), act),
            Bytes::ZERO,
        ));
    }
    ops
}

/// The feed-forward operators: dense `op_mlp_gate_up` (gated) or `op_mlp_up`, then
/// `op_mlp_down`; MoE ([`moe_ops`]); none for a layer without one.
pub(super) fn ffn_ops(st: &Step, ffn: &Ffn, p: &Precisions, tp: u64) -> Vec<OpCost> {
    let hf = st.hf;
    let mut ops = Vec::new();
    match ffn {
        Ffn::Dense {
            intermediate,
            gated,
        } => {
            let ir = intermediate.div_ceil(tp);
            if *gated {
                ops.push(st.linear("op_mlp_gate_up", hf, 2.0 * ir as f64));
            } else {
                ops.push(st.linear("op_mlp_up", hf, ir as f64));
            }
            ops.push(st.linear("op_mlp_down", ir as f64, hf));
        }
        Ffn::Moe {
            experts,
            top_k,
            expert_intermediate,
            shared_experts,
            shared_intermediate,
            gated,
            latent,
        } => ops.extend(moe_ops(
            st,
            p,
            tp,
            (*experts, *top_k, *expert_intermediate),
            (*shared_experts, *shared_intermediate),
            (*gated, *latent),
        )),
        Ffn::None => {}
    }
    ops
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distinct_experts() {
        // One token touches exactly k; many tokens touch all E.
        assert!((expected_distinct_experts(8, 2, 1.0) - 2.0).abs() < 1e-12);
        assert!((expected_distinct_experts(128, 8, 1e6) - 128.0).abs() < 1e-9);
        // Two tokens, E=8, k=2: 8 × (1 − 0.75²) = 3.5.
        assert!((expected_distinct_experts(8, 2, 2.0) - 3.5).abs() < 1e-12);
    }
}
