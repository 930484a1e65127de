//! Roofline maths: ridge points, attainable FLOP/s, and per-operator FLOPs, bytes and
//! arithmetic intensity of a transformer in prefill and decode.
//!
//! Conventions (course chapter, section 5 of `WORKED_EXAMPLES.md`; Williams, Waterman &
//! Patterson, "Roofline", CACM 2009):
//! * intensity = FLOPs / bytes moved (FLOP/B); a multiply-add counts as 2 FLOPs;
//! * ridge point = peak FLOP/s / bandwidth; attainable = min(peak, intensity × bandwidth);
//! * a matmul `[M,K] × [K,N]` does `2·M·N·K` FLOPs and moves `b·(M·K + K·N + M·N)` bytes.
//!
//! [`model_ops`] lists the operators of a whole model for one step, per GPU under tensor
//! parallelism, ready for a performance model to time each as
//! `max(FLOPs / (peak × eff), bytes / (bandwidth × eff))`. Weights are counted at the weight
//! precision, activations at the activation precision, the KV cache at the KV precision.
//!
//! Where each part lives: the ridge point, attainable FLOP/s and the bound in `ridge`; one
//! matmul in `matmul`; the operator inventory apart from the maths: its vocabulary (passes,
//! precisions, an operator's cost, a linear layer) in `op`, the mixers' operators in `mixer`,
//! the feed-forward and MoE operators in `ffn`, and a layer's and the whole model's list in
//! `inventory`.

mod ffn;
mod inventory;
mod matmul;
mod mixer;
mod op;
mod ridge;

pub use ffn::expected_distinct_experts;
pub use inventory::{layer_ops, model_ops, total};
pub use matmul::{matmul, matmul_derivation, Matmul, MatmulCost, MATMUL_ELEM_BYTES};
pub use op::{OpCost, Pass, Phase, Precisions};
pub use ridge::{
    attainable, attainable_derivation, intensity, ridge_derivation, ridge_point, Attainable, Bound,
};
