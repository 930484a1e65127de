//! What a vLLM process sees on a GPU beyond the catalog's figures: the total memory PyTorch
//! reports, and the weights as vLLM's kernels lay them out (which can be larger than the
//! checkpoint's bytes).
//!
//! * **Total memory.** vLLM's budget starts from `torch.cuda.mem_get_info()`'s total, which is
//!   below the `memory.total` nvidia-smi prints: vLLM logs "total_gpu_memory 79.22GiB" on an
//!   H100 80 GB (`vllm_observations.csv`, vllm-project/vllm PR #10511 and PR #12126, whose
//!   author names the GPU "H100-80G"), where nvidia-smi reports 81,559 MiB = 79.65 GiB. Where
//!   such a log exists, [`vllm_total_memory`] returns it; elsewhere the catalog's capacity.
//! * **MXFP4 MoE experts.** vLLM's `Mxfp4MoEMethod.create_weights`
//!   (`vllm/model_executor/layers/quantization/mxfp4.py`) allocates the expert tensors padded
//!   for the kernel it picked. On NVIDIA GPUs without native FP4 (Ampere, Ada, Hopper without
//!   the separately installed `triton_kernels`) that is Marlin's weight-only FP4 path, whose
//!   kernel needs `n % 256 == 0` and `k % 128 == 0`: the intermediate size per TP partition is
//!   rounded up to a multiple of 128 and the hidden size to a multiple of 256
//!   ([`Mxfp4MoeLayout::Marlin`]). gpt-oss's 2,880 × 2,880 experts become 2,944 × 3,072
//!   (+9.0%): 65.90 GiB of weights on one GPU instead of the checkpoint's 60.77, against
//!   "Model loading took 65.9651 GiB" in vLLM 0.10.1's log on one H100 with the Marlin path
//!   (vllm-project/vllm#23278; test `marlin_layout_reproduces_the_vllm_log`). Other layouts
//!   are not modelled: vLLM 0.14.1 with the Triton backend on Hopper logged 64.38 GiB
//!   (vllm-project/vllm#33155); Blackwell's FlashInfer paths pad both sizes to 256; ROCm pads to
//!   its own alignment. Expert biases (bf16, about 6 MB for gpt-oss-120b) are not padded here.

use super::helpers::{bytes_result, gib_str};
use crate::core::base::derivation::{group, Derivation, Source, Term};
use crate::core::base::dtype::Dtype;
use crate::core::base::error::CalcError;
use crate::core::base::units::{Bytes, GIB};
use crate::core::calc::weights::{chosen, WeightBytes};
use crate::core::hardware::catalog::{Accelerator, Architecture, Peak};
use crate::core::model::{Ffn, ModelDesc};

/// The total memory vLLM's log reports for an H100 80 GB: 79.22 GiB (module docs).
pub const H100_80GB_VLLM_TOTAL_GIB: f64 = 79.22;

/// The source key of a total memory taken from a vLLM log ([`vllm_total`]).
pub const VLLM_TOTAL_LOGGED: &str = "src_vllm_total_logged";

/// nvidia-smi's `memory.total` of the H100 80 GB parts (SXM and PCIe), MiB.
const H100_80GB_SMI_MIB: u64 = 81_559;

/// Total GPU memory as vLLM's budget sees it: the logged `total_gpu_memory` where a vLLM log
/// gives it for this part (the H100 80 GB, SXM or PCIe: Hopper parts that report 81,559 MiB
/// to nvidia-smi, the log not naming the form factor), otherwise the catalog's capacity.
pub fn vllm_total_memory(gpu: &Accelerator) -> Bytes {
    logged_total(gpu).unwrap_or_else(|| gpu.capacity())
}

/// The logged `total_gpu_memory` of `gpu`, when a vLLM log gives one for this part.
fn logged_total(gpu: &Accelerator) -> Option<Bytes> {
    // The Hopper parts nvidia-smi reports with 81,559 MiB: the H100 80 GB (SXM, PCIe).
    let h100_80gb = gpu.architecture == Architecture::Hopper
        && gpu.memory_reported == Some(Bytes(H100_80GB_SMI_MIB << 20));
    h100_80gb.then_some(Bytes((H100_80GB_VLLM_TOTAL_GIB * GIB as f64) as u64))
}

/// Total GPU memory as vLLM's budget sees it ([`vllm_total_memory`]), with where the figure
/// comes from and its derivation: the value vLLM logged for this part (its source named, the
/// catalog's capacity beside it), or the catalog's capacity.
#[derive(Debug, Clone, PartialEq)]
pub struct VllmTotal {
    /// The total, bytes.
    pub bytes: Bytes,
    /// Its source: `src_vllm_total_logged` (a vLLM log of this part) or the catalog's
    /// `memory_reported` / capacity.
    pub source: Source,
    /// `M = total_gpu_memory (vLLM log)` or `M = catalog capacity`, with both figures.
    pub derivation: Derivation,
}

/// [`vllm_total_memory`] with its source and derivation.
pub fn vllm_total(gpu: &Accelerator) -> VllmTotal {
    let cap = gpu.capacity();
    let cap_src = Source::Catalog(format!("{} memory", gpu.id));
    match logged_total(gpu) {
        Some(b) => VllmTotal {
            bytes: b,
            source: Source::Derived(VLLM_TOTAL_LOGGED.into()),
            derivation: Derivation {
                title_key: "vllm_total_memory".into(),
                formula: "M = total_gpu_memory (vLLM log) < M_smi".into(),
                substituted: format!("{} GiB < {} GiB", gib_str(b), gib_str(cap)),
                result: bytes_result(b),
                terms: vec![
                    Term::new(
                        "M",
                        "term_total_gpu_memory",
                        gib_str(b),
                        "GiB",
                        Source::Derived(VLLM_TOTAL_LOGGED.into()),
                    ),
                    Term::new("M_smi", "term_memory_smi", gib_str(cap), "GiB", cap_src),
                ],
                notes: vec!["note_vllm_total_logged".into()],
            },
        },
        None => VllmTotal {
            bytes: cap,
            source: cap_src.clone(),
            derivation: Derivation {
                title_key: "vllm_total_memory".into(),
                formula: "M = M_catalog".into(),
                substituted: format!("{} GiB", gib_str(cap)),
                result: bytes_result(cap),
                terms: vec![Term::new(
                    "M",
                    "term_total_gpu_memory",
                    gib_str(cap),
                    "GiB",
                    cap_src,
                )],
                notes: vec!["note_vllm_total_catalog".into()],
            },
        },
    }
}

/// How vLLM lays out MXFP4 MoE expert weights on a GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mxfp4MoeLayout {
    /// Marlin's weight-only FP4 path: intermediate size per partition rounded up to 128,
    /// hidden size to 256.
    Marlin,
    /// The checkpoint's shapes (no padding modelled).
    Checkpoint,
}

/// The layout vLLM picks on `gpu`: Marlin on NVIDIA GPUs without native FP4 (module docs),
/// else the checkpoint's shapes.
pub fn mxfp4_moe_layout(gpu: &Accelerator) -> Mxfp4MoeLayout {
    let nvidia = gpu.vendor.eq_ignore_ascii_case("nvidia");
    if nvidia && matches!(gpu.peaks.fp4, Peak::NotSupported) {
        Mxfp4MoeLayout::Marlin
    } else {
        Mxfp4MoeLayout::Checkpoint
    }
}

fn round_up(v: u64, to: u64) -> u64 {
    v.div_ceil(to.max(1)).saturating_mul(to.max(1))
}

/// MXFP4 bytes of `elems` elements: 4 bits each plus one 8-bit scale per 32, `elems × 17 / 32`.
fn mxfp4_bytes(elems: u64) -> u64 {
    u64::try_from(u128::from(elems) * 17 / 32).unwrap_or(u64::MAX)
}

/// MXFP4 bytes per GPU of `model`'s routed experts (values and scales) as `layout` stores
/// them under tensor parallelism `tp` (0 for a model whose experts are not MXFP4). Per MoE
/// layer: `E × (r·I + I) × H × 17/32` with `I = ⌈I_e / tp⌉` and `r` = 2 for gated experts
/// (vLLM's fused `w13`) else 1; Marlin rounds `I` up to 128 and `H` to 256.
pub fn mxfp4_moe_expert_bytes(model: &ModelDesc, tp: u64, layout: Mxfp4MoeLayout) -> Bytes {
    if !model.weights.method.eq_ignore_ascii_case("mxfp4") {
        return Bytes::ZERO;
    }
    let (i_align, h_align) = match layout {
        Mxfp4MoeLayout::Marlin => (128, 256),
        Mxfp4MoeLayout::Checkpoint => (1, 1),
    };
    let h = round_up(model.hidden_size, h_align);
    let mut total: u64 = 0;
    for l in &model.layers {
        if let Ffn::Moe {
            experts,
            expert_intermediate,
            gated,
            ..
        } = &l.ffn
        {
            let i = round_up(expert_intermediate.div_ceil(tp.max(1)), i_align);
            let r = if *gated { 3 } else { 2 };
            let elems = experts.saturating_mul(r * i).saturating_mul(h);
            total = total.saturating_add(mxfp4_bytes(elems));
        }
    }
    Bytes(total)
}

/// Bytes per GPU that `layout` adds to the checkpoint's MXFP4 MoE expert weights of `model`
/// under tensor parallelism `tp` ([`mxfp4_moe_expert_bytes`] of the layout less that of the
/// checkpoint; 0 for other models and for [`Mxfp4MoeLayout::Checkpoint`]).
pub fn mxfp4_moe_padding(model: &ModelDesc, tp: u64, layout: Mxfp4MoeLayout) -> Bytes {
    mxfp4_moe_expert_bytes(model, tp, layout)
        - mxfp4_moe_expert_bytes(model, tp, Mxfp4MoeLayout::Checkpoint)
}

/// The weights one GPU holds as vLLM loads them: the chosen precision's bytes per GPU
/// (`calc::weights::chosen`) plus the padding of vLLM's MXFP4 MoE kernel layout on this GPU
/// ([`mxfp4_moe_padding`]; only for the checkpoint's own format: a chosen precision is
/// modelled unpadded).
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedWeights {
    /// Bytes on one GPU, `W = W_ckpt + P`.
    pub bytes: Bytes,
    /// The chosen precision's weights (whole model and per GPU, with their derivations).
    pub checkpoint: WeightBytes,
    /// The layout vLLM's MXFP4 MoE kernel uses for them.
    pub layout: Mxfp4MoeLayout,
    /// The padding `P` that layout adds, per GPU (0 for most models).
    pub padding: Bytes,
    /// Where `bytes` comes from: `weights_per_gpu`, or `src_vllm_weights_padded`.
    pub source: Source,
    /// `W = W_ckpt + P` when the padding is not 0.
    pub derivation: Option<Derivation>,
}

/// [`LoadedWeights`] of `model` at `weights_dtype` (`None` = the checkpoint's format) under
/// tensor parallelism `tp` on `gpu` (`None`: a GPU not named, whose kernels are unknown: the
/// checkpoint's shapes).
pub fn vllm_loaded_weights(
    model: &ModelDesc,
    weights_dtype: Option<Dtype>,
    tp: u64,
    gpu: Option<&Accelerator>,
) -> Result<LoadedWeights, CalcError> {
    let checkpoint = chosen(model, weights_dtype, tp)?;
    let layout = match gpu {
        Some(g) if weights_dtype.is_none() => mxfp4_moe_layout(g),
        _ => Mxfp4MoeLayout::Checkpoint,
    };
    let padding = mxfp4_moe_padding(model, tp, layout);
    let bytes = checkpoint.per_gpu + padding;
    let (source, derivation) = if padding == Bytes::ZERO {
        (Source::Derived("weights_per_gpu".into()), None)
    } else {
        let d = Derivation {
            title_key: "vllm_loaded_weights".into(),
            formula: "W = W_ckpt + P_marlin".into(),
            substituted: format!("{} B + {} B", group(checkpoint.per_gpu.0), group(padding.0)),
            result: bytes_result(bytes),
            terms: vec![
                Term::new(
                    "W_ckpt",
                    "term_weights",
                    gib_str(checkpoint.per_gpu),
                    "GiB",
                    Source::Derived("weights_per_gpu".into()),
                ),
                Term::new(
                    "P_marlin",
                    "term_mxfp4_marlin_padding",
                    gib_str(padding),
                    "GiB",
                    Source::Derived("src_vllm_marlin_padding".into()),
                ),
            ],
            notes: vec!["note_vllm_marlin_padding".into()],
        };
        (Source::Derived("src_vllm_weights_padded".into()), Some(d))
    };
    Ok(LoadedWeights {
        bytes,
        checkpoint,
        layout,
        padding,
        source,
        derivation,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::calc::weights::chosen;
    use crate::core::hardware::Catalog;
    use crate::core::model::{parse_model_text, preset};

    fn gpt_oss_120b() -> ModelDesc {
        parse_model_text(preset("openai__gpt-oss-120b").expect("preset").json).expect("model")
    }

    /// vLLM 0.10.1 on one H100 with the Marlin MXFP4 path logged "Model loading took 65.9651
    /// GiB" for gpt-oss-120b (vllm-project/vllm#23278). The checkpoint's bytes are 7.9% short
    /// of it; with Marlin's padding they are within 0.2%.
    #[test]
    fn marlin_layout_reproduces_the_vllm_log() {
        let m = gpt_oss_120b();
        let logged = 65.9651;
        let ckpt = chosen(&m, None, 1).expect("weights").per_gpu;
        let pad = mxfp4_moe_padding(&m, 1, Mxfp4MoeLayout::Marlin);
        let ours = (ckpt + pad).gib();
        assert!(
            (ckpt.gib() - logged).abs() / logged > 0.07,
            "{}",
            ckpt.gib()
        );
        assert!(
            (ours - logged).abs() / logged < 0.002,
            "{ours} GiB vs {logged}"
        );
        // Per expert matrix set: 3 × 2,944 × 3,072 against 3 × 2,880 × 2,880 elements.
        let layers = m
            .layers
            .iter()
            .filter(|l| matches!(l.ffn, Ffn::Moe { .. }))
            .count() as u64;
        let by_hand = layers * 128 * 3 * (2944 * 3072 - 2880 * 2880) * 17 / 32;
        assert_eq!(pad, Bytes(by_hand));
    }

    #[test]
    fn padding_follows_the_partition_and_the_gpu() {
        let m = gpt_oss_120b();
        let cat = Catalog::builtin();
        let layout = |id: &str| mxfp4_moe_layout(cat.get(id).expect("gpu"));
        assert_eq!(layout("h100-sxm"), Mxfp4MoeLayout::Marlin);
        assert_eq!(layout("a100-sxm-80gb"), Mxfp4MoeLayout::Marlin);
        assert_eq!(layout("b200"), Mxfp4MoeLayout::Checkpoint);
        assert_eq!(layout("mi300x"), Mxfp4MoeLayout::Checkpoint);
        // TP 2: 1,440 → 1,536 per partition (+6.7%), hidden 2,880 → 3,072 (+6.7%).
        let p1 = mxfp4_moe_padding(&m, 1, Mxfp4MoeLayout::Marlin);
        let p2 = mxfp4_moe_padding(&m, 2, Mxfp4MoeLayout::Marlin);
        let layers = 36u64;
        assert_eq!(
            p2,
            Bytes(layers * 128 * 3 * (1536 * 3072 - 1440 * 2880) * 17 / 32)
        );
        assert!(p2 < p1);
        assert_eq!(
            mxfp4_moe_padding(&m, 1, Mxfp4MoeLayout::Checkpoint),
            Bytes::ZERO
        );
        // A model without MXFP4 experts gets nothing.
        let q = parse_model_text(preset("Qwen__Qwen3-8B").expect("preset").json).expect("m");
        assert_eq!(
            mxfp4_moe_padding(&q, 1, Mxfp4MoeLayout::Marlin),
            Bytes::ZERO
        );
    }

    #[test]
    fn h100_total_is_the_logged_one() {
        let cat = Catalog::builtin();
        let h = cat.get("h100-sxm").expect("gpu");
        let t = vllm_total_memory(h).gib();
        assert!((t - 79.22).abs() < 1e-6, "{t}");
        assert!(h.capacity().gib() > t + 0.4);
        let a = cat.get("a100-sxm-80gb").expect("gpu");
        assert_eq!(vllm_total_memory(a), a.capacity());
    }
}
