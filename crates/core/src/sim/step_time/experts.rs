//! vLLM's routed experts where they differ from the checkpoint: the padded MXFP4 layout's size
//! and Marlin's MXFP4 kernel on Hopper (its compute-efficiency factor).

use crate::calc::memory::{mxfp4_moe_expert_bytes, mxfp4_moe_layout, Mxfp4MoeLayout};
use crate::calc::perf::Workload;
use crate::hardware::{Accelerator, Architecture};
use crate::model::ModelDesc;

/// How much larger vLLM's MXFP4 MoE expert tensors are than the checkpoint's on `gpu`
/// (`core::memory::mxfp4_moe_padding`: Marlin rounds the intermediate size per partition up to
/// 128 and the hidden size to 256, and its kernel streams and multiplies the padded tiles):
/// 1.090 for gpt-oss (2,880 × 2,880 experts) at TP 1, 1.138 at TP 2 and 4; 1 for other models,
/// other GPUs and a requested weight precision. The static performance model, which is not
/// vLLM's, keeps the checkpoint's shapes.
pub(super) fn expert_layout_scale(model: &ModelDesc, gpu: &Accelerator, wl: &Workload) -> f64 {
    if wl.weights_dtype.is_some() {
        return 1.0;
    }
    let plain = mxfp4_moe_expert_bytes(model, wl.tp, Mxfp4MoeLayout::Checkpoint).0 as f64;
    let laid = mxfp4_moe_expert_bytes(model, wl.tp, mxfp4_moe_layout(gpu)).0 as f64;
    if plain > 0.0 {
        laid / plain
    } else {
        1.0
    }
}

/// Whether `gpu` is a Hopper part, by the catalog's `architecture` column (H100, H200,
/// GH200). A custom accelerator's architecture is unknown: not Hopper, so the factor is 1.
fn is_hopper(gpu: &Accelerator) -> bool {
    gpu.architecture == Architecture::Hopper
}

/// Whether vLLM runs `model`'s routed experts through Marlin's MXFP4 kernel on a Hopper
/// `gpu` (the case [`FIT_MARLIN_HOPPER_MOE_COMPUTE`] applies to).
pub(super) fn marlin_on_hopper(model: &ModelDesc, gpu: &Accelerator, wl: &Workload) -> bool {
    wl.weights_dtype.is_none()
        && mxfp4_moe_layout(gpu) == Mxfp4MoeLayout::Marlin
        && mxfp4_moe_expert_bytes(model, wl.tp, Mxfp4MoeLayout::Checkpoint).0 > 0
        && is_hopper(gpu)
}

/// The routed experts' compute-efficiency factor: `k` (clamped to [0.001, 1]) for MXFP4
/// experts on the Marlin layout of a Hopper GPU, else 1.
pub(super) fn expert_compute_factor(marlin_on_hopper: bool, k: f64) -> f64 {
    if marlin_on_hopper {
        k.clamp(1e-3, 1.0)
    } else {
        1.0
    }
}
