//! The time of one engine step from vLLM's measured kernels (`core::hardware::kernels`): the
//! step's GEMMs, attention, all-reduces and fused MoE at the shapes the model has on one GPU,
//! each timed by the compact tables of the GPU (or of its architecture's measured sibling),
//! plus the engine's own time per step that no kernel holds.
//!
//! One step of `d` decodes and prompt chunks of `p` tokens in all (`T = d + p`) costs, over
//! the layers (identical layers counted once and multiplied):
//!
//! ```text
//! step = Σ_layers [ GEMMs(T) + fused MoE(T) + elementwise(T) + 2 all-reduces(T·h·2 B)
//!                   + decode attention(d, mean keys) + prefill attention(chunks, pairs) ]
//!        + lm_head(S) + engine time per step
//! ```
//!
//! - GEMMs as vLLM fuses them: QKV in one (`(h_q + 2 h_kv)·d` outputs per GPU), the output
//!   projection, gate and up in one, down; MLA's fused `q_a`/`kv_a` (held whole on every GPU),
//!   `q_b`, `kv_b` (also standing for the absorbed decode form's per-head products, which read
//!   the same weights and do the same FLOPs) and the output projection; a MoE layer's router
//!   (16-bit) and shared experts. The GEMM precision follows the checkpoint as vLLM runs it
//!   ([`gemm_dtype`]): FP8 with 128 × 128 blocks, FP8 per tensor, NVFP4, else 16-bit (weight-only
//!   INT4 and MXFP4 checkpoints keep their dense layers in 16 bits).
//! - Fused MoE at the routed experts' intermediate size per GPU, in the experts' precision
//!   ([`moe_dtype`]); vLLM's MXFP4 experts on Hopper run Marlin's kernel, which the tables do
//!   not hold, and are timed on the roofline ([`marlin_moe_s`](time::marlin_moe_s)).
//! - Attention: decode queries as one call at their mean number of keys (capped at a sliding
//!   window); prompt chunks as one call over their (query, key) pairs. MLA is timed as
//!   multi-query attention over its latent (decode) and as multi-head attention at the mean of
//!   its q/k and v head sizes (prefill, which vLLM computes in the un-absorbed form).
//! - Elementwise work (two RMSNorms, the residual adds, rotary embedding, the activation):
//!   [`ELEMENTWISE_PASSES`] reads and writes of the `T × h` activations (and the gated
//!   activation's `T × 3·I/TP`) at the GPU's bandwidth, which the kernel tables do not hold.
//! - All-reduce: two per layer under tensor parallelism, of `T × h` 16-bit values.
//!
//! The engine's time per step beyond its kernels (scheduling, input preparation, the sampler,
//! the CUDA-graph launch, output processing) is [`StepOverhead`]: one fitted time per step,
//! with asynchronous scheduling ([`FIT_STEP_ASYNC_S`], vLLM 0.14 and later) or without
//! ([`FIT_STEP_SYNC_S`]). A vLLM step of more tokens than its largest captured CUDA graph
//! runs without one, its kernels launched one by one from the CPU: such a step adds
//! [`FIT_EAGER_LAYER_S`] per layer ([`StepOverhead::with_eager_steps`]). The kernel tables
//! are CUDA-graph replays and hold none of it. A time per prompt token was tried on the
//! development rows and moved the figures by under a point, so it is not modelled.

mod time;

use crate::base::dtype::Dtype;
use crate::calc::kv::kv_heads_per_rank;
use crate::hardware::{
    kernels_for, Accelerator, GemmDtype, GpuKernels, KernelSource, MoeDtype, MoeShape, Roof,
    Routing,
};
use crate::model::{Ffn, Mixer, ModelDesc, WeightFormat};
use crate::sim::parallel::Parallel;

/// `Σ_{i=1..x} min(i, W)`: (query, key) pairs of the first `x` positions under a window.
pub(crate) fn pairs_upto(x: f64, window: Option<u64>) -> f64 {
    match window {
        Some(w) if (w as f64) < x => {
            let w = w as f64;
            w * (w + 1.0) / 2.0 + (x - w) * w
        }
        _ => x * (x + 1.0) / 2.0,
    }
}

/// Reads and writes of the `T × hidden` activations per layer outside GEMMs and attention
/// (input and post-attention RMSNorm: read and write each; the two residual adds: two reads,
/// one write each; rotary on q and k: about one pass): 12 passes, at the GPU's bandwidth.
pub const ELEMENTWISE_PASSES: f64 = 12.0;

/// The engine's time per step beyond its kernels with asynchronous scheduling (vLLM 0.14 and
/// later by default: the scheduler and the output processing of one step overlap the GPU's
/// next), seconds: 1.25 ms. **A fit on the development rows** of
/// `tests/fixtures/measured_serving_e2e.csv` (the median |error| of the mean TPOT of the runs
/// on vLLM 0.14 or later, with every other term fixed); `tests/serving_e2e_validation.rs`
/// re-derives it and reports it left out one model at a time.
pub const FIT_STEP_ASYNC_S: f64 = 1.25e-3;
/// The same without asynchronous scheduling (vLLM before 0.14, or
/// `--no-async-scheduling`): the CPU's work per step runs between the GPU's steps, seconds:
/// 2.0 ms, fitted the same way on the runs before 0.14.
pub const FIT_STEP_SYNC_S: f64 = 1.5e-3;

/// vLLM's CPU time per layer of a step that runs without a CUDA graph (more tokens than its
/// largest captured graph, [`vllm_graph_tokens`]), seconds: 0.4 ms. Such a step's kernels are
/// launched one by one from Python (the compiled model's pieces, the attention and the
/// collectives), and on a large model that costs more than the kernels take. **A fit on the
/// development rows** of `tests/fixtures/measured_serving_e2e.csv`, by re-simulation (the
/// median plus the 90th percentile of the |error| of the mean TTFT of every vLLM row, each with
/// its setup's capture size; `tests/serving_e2e_validation.rs`, `eager_layer_scan`: 0.45 ms on
/// every row, 0.1 point better than 0.4; 0.40–0.45 ms with each model left out). NVIDIA AIConfigurator charges vLLM prefills 0.8 ms per layer for the same dispatch,
/// on every request (`vllm_backend.py`, `_prefill_dispatch_overhead_ms`).
pub const FIT_EAGER_LAYER_S: f64 = 0.4e-3;

/// The most tokens vLLM runs in one captured CUDA graph: `max_cudagraph_capture_size` when set
/// (0 for `--enforce-eager`), else vLLM's default, `min(2 × max_num_seqs, 512)`
/// (`vllm/config/vllm.py`, `_set_cudagraph_sizes`, vLLM 0.11 and later).
pub fn vllm_graph_tokens(capture_size: Option<u64>, max_num_seqs: u64) -> u64 {
    capture_size.unwrap_or_else(|| max_num_seqs.saturating_mul(2).min(512))
}

/// The engine's time per step that no kernel holds (scheduling, input preparation, the
/// sampler, the CUDA-graph launch, output processing), seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepOverhead {
    /// Per step.
    pub fixed: f64,
    /// Per layer, for a step of more than [`StepOverhead::graph_tokens`] tokens.
    pub eager_per_layer: f64,
    /// The most tokens a step runs as a captured CUDA graph.
    pub graph_tokens: u64,
}

impl StepOverhead {
    /// The fitted time per step with or without asynchronous scheduling, every step inside
    /// a CUDA graph.
    pub fn fitted(async_scheduling: bool) -> StepOverhead {
        StepOverhead {
            fixed: if async_scheduling {
                FIT_STEP_ASYNC_S
            } else {
                FIT_STEP_SYNC_S
            },
            eager_per_layer: 0.0,
            graph_tokens: u64::MAX,
        }
    }

    /// The same with vLLM's CUDA graphs: a step of more than `graph_tokens` tokens adds
    /// [`FIT_EAGER_LAYER_S`] per layer.
    pub fn with_eager_steps(self, graph_tokens: u64) -> StepOverhead {
        StepOverhead {
            eager_per_layer: FIT_EAGER_LAYER_S,
            graph_tokens,
            ..self
        }
    }

    /// Seconds for a step of `tokens` over `layers` layers (those of one pipeline stage).
    pub fn at(&self, tokens: u64, layers: f64) -> f64 {
        if tokens > self.graph_tokens {
            self.fixed + self.eager_per_layer * layers
        } else {
            self.fixed
        }
    }
}

/// The precision vLLM runs a model's dense GEMMs in, from the checkpoint's format or a
/// requested weight precision.
pub fn gemm_dtype(w: &WeightFormat, requested: Option<Dtype>) -> GemmDtype {
    match requested {
        Some(Dtype::Fp8) => return GemmDtype::Fp8,
        Some(Dtype::Fp4) => return GemmDtype::Nvfp4,
        Some(_) => return GemmDtype::Bf16,
        None => {}
    }
    if w.experts_only {
        return GemmDtype::Bf16;
    }
    match w.dtype {
        Dtype::Fp8 if w.group_size.is_some_and(|g| g > 1) => GemmDtype::Fp8Block,
        Dtype::Fp8 => GemmDtype::Fp8,
        Dtype::Fp4 if w.group_size == Some(16) => GemmDtype::Nvfp4,
        _ => GemmDtype::Bf16,
    }
}

/// The precision of a model's routed experts as vLLM runs them.
pub fn moe_dtype(w: &WeightFormat, requested: Option<Dtype>) -> MoeDtype {
    match requested {
        Some(Dtype::Fp8) => return MoeDtype::Fp8,
        Some(Dtype::Fp4) => return MoeDtype::Nvfp4,
        Some(Dtype::Int4) => return MoeDtype::Int4W4A16,
        Some(_) => return MoeDtype::Bf16,
        None => {}
    }
    match w.dtype {
        Dtype::Fp8 if w.group_size.is_some_and(|g| g > 1) => MoeDtype::Fp8Block,
        Dtype::Fp8 => MoeDtype::Fp8,
        Dtype::Fp4 if w.group_size == Some(16) => MoeDtype::Nvfp4,
        Dtype::Fp4 => MoeDtype::Mxfp4W4A16,
        Dtype::Int4 => MoeDtype::Int4W4A16,
        _ => MoeDtype::Bf16,
    }
}

/// One class of attention (its per-GPU heads and window) and the step's sums for it.
#[derive(Debug, Clone, PartialEq)]
struct AttnClass {
    /// Layers of this class.
    layers: f64,
    /// Decode heads (query, KV, head_dim) on this GPU.
    decode_heads: (f64, f64, f64),
    /// Prefill heads.
    prefill_heads: (f64, f64, f64),
    window: Option<u64>,
    /// Step sums: decode queries' keys; prefill pairs, tokens and chunks.
    decode_keys: f64,
    decodes: f64,
    pairs: f64,
    tokens: f64,
    chunks: f64,
}

/// One class of identical layers' token-proportional work.
#[derive(Debug, Clone, PartialEq)]
struct LinearClass {
    layers: f64,
    gemms: Vec<(f64, f64, GemmDtype)>,
    moe: Option<(MoeShape, MoeDtype)>,
    /// Elementwise bytes per token.
    elementwise_bytes: f64,
}

/// Times engine steps from the measured kernels.
#[derive(Debug, Clone)]
pub struct KernelStep {
    kernels: &'static GpuKernels,
    source: KernelSource,
    roof: Roof,
    tp: u64,
    kv_fp8: bool,
    hidden: f64,
    layers: f64,
    linear: Vec<LinearClass>,
    attn: Vec<AttnClass>,
    head: (f64, f64),
    overhead: StepOverhead,
    /// The instance's parallelism beyond tensor parallelism (`sim::parallel`), when any.
    par: Option<ParStep>,
    /// vLLM's padded MXFP4 layout over the checkpoint's expert shapes, when the routed
    /// experts run through Marlin's MXFP4 kernel on Hopper ([`marlin_moe_s`](time::marlin_moe_s)).
    marlin: Option<f64>,
    memo: Vec<f64>,
    head_memo: Vec<f64>,
}

/// What a step needs of the instance's parallelism: the shape, the GPUs of one node and the
/// in-node link's bandwidth per direction.
#[derive(Debug, Clone, Copy)]
struct ParStep {
    shape: Parallel,
    per_node: u64,
    link_bw: f64,
    crossings: u64,
    /// DP ranks whose tokens meet in each MoE layer (the active ones).
    dp_tokens: f64,
}

/// Most token counts remembered.
const MEMO_MAX: usize = 1 << 16;

/// The fused-MoE kernel vLLM runs for experts of `d` on a GPU of roofline `roof`, where the
/// tables' own kernel for `d` is not the one the engine used.
fn kernel_moe_dtype(d: MoeDtype, roof: &Roof) -> MoeDtype {
    match d {
        // On Blackwell vLLM runs MXFP4 experts through FlashInfer's TRT-LLM MoE (MXFP4
        // weights, MXFP8 activations: `VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8`), a kernel the
        // tables measured for NVFP4 experts, not the W4A16 one they measured for MXFP4.
        MoeDtype::Mxfp4W4A16 if roof.fp4.is_some() => MoeDtype::Nvfp4,
        // The tables' INT4 kernel (Marlin W4A16) is 3-5 times slower at 64 and more tokens
        // than what vLLM ran for Kimi-K2.5's INT4 experts on H200 and B200; the FP8
        // block-scaled fused MoE's efficiency stands in for it (on the INT4 roofline).
        MoeDtype::Int4W4A16 => MoeDtype::Fp8Block,
        d => d,
    }
}

/// The attention class of one layer's mixer and its GEMMs (pushed to `gemms`), on one GPU at
/// TP `tp`; `None` for a recurrent mixer.
fn mixer_class(
    mixer: &Mixer,
    h: f64,
    tp: u64,
    g: GemmDtype,
    gemms: &mut Vec<(f64, f64, GemmDtype)>,
) -> Option<AttnClass> {
    match *mixer {
        Mixer::Attention {
            num_heads,
            kv_heads,
            head_dim,
            v_head_dim,
            window,
        } => {
            let hr = (num_heads / tp.max(1)) as f64;
            let hkv = kv_heads_per_rank(kv_heads, tp) as f64;
            let (d, dv) = (head_dim as f64, v_head_dim as f64);
            gemms.push(((hr + hkv) * d + hkv * dv, h, g));
            gemms.push((h, hr * dv, g));
            let heads = (hr, hkv, d);
            Some(AttnClass::new(heads, heads, window))
        }
        Mixer::Mla {
            num_heads,
            kv_lora_rank,
            q_lora_rank,
            qk_nope_head_dim,
            qk_rope_head_dim,
            v_head_dim,
            ..
        } => {
            let hr = (num_heads / tp.max(1)) as f64;
            let (r, rope, nope, v) = (
                kv_lora_rank as f64,
                qk_rope_head_dim as f64,
                qk_nope_head_dim as f64,
                v_head_dim as f64,
            );
            match q_lora_rank {
                Some(q) => {
                    gemms.push((q as f64 + r + rope, h, g));
                    gemms.push((hr * (nope + rope), q as f64, g));
                }
                None => {
                    gemms.push((r + rope, h, g));
                    gemms.push((hr * (nope + rope), h, g));
                }
            }
            gemms.push((hr * (nope + v), r, g));
            gemms.push((h, hr * v, g));
            // Decode: MQA over the latent (K and V one tensor: half of it each).
            let decode = (hr, 1.0, (r + rope) / 2.0);
            let prefill = (hr, hr, (nope + rope + v) / 2.0);
            Some(AttnClass::new(decode, prefill, None))
        }
        Mixer::Ssm { .. } => None,
    }
}

/// One layer's feed-forward work: its GEMMs (pushed to `gemms`), its fused MoE, and the
/// elementwise bytes per token beyond the shared ones (a gated MLP's activation); `None` for
/// a latent MoE.
fn ffn_work(
    ffn: &Ffn,
    h: f64,
    tp: u64,
    (g, md): (GemmDtype, MoeDtype),
    gemms: &mut Vec<(f64, f64, GemmDtype)>,
) -> Option<(Option<(MoeShape, MoeDtype)>, f64)> {
    match *ffn {
        Ffn::Dense {
            intermediate,
            gated,
        } => {
            let ir = intermediate.div_ceil(tp.max(1)) as f64;
            let up = if gated { 2.0 * ir } else { ir };
            gemms.push((up, h, g));
            gemms.push((h, ir, g));
            Some((None, (up + ir) * 2.0))
        }
        Ffn::Moe {
            experts,
            top_k,
            expert_intermediate,
            shared_experts,
            shared_intermediate,
            latent,
            ..
        } => {
            if latent.is_some() {
                return None;
            }
            gemms.push((experts as f64, h, GemmDtype::Bf16));
            if shared_experts > 0 {
                let is = (shared_experts * shared_intermediate).div_ceil(tp.max(1)) as f64;
                gemms.push((2.0 * is, h, g));
                gemms.push((h, is, g));
            }
            let shape = MoeShape {
                tokens: 1.0,
                hidden: h,
                inter: expert_intermediate as f64 / tp.max(1) as f64,
                top_k: top_k as f64,
                experts: experts as f64,
                ep: 1.0,
                routing: Routing::Uniform,
            };
            Some((Some((shape, md)), 0.0))
        }
        Ffn::None => Some((None, 0.0)),
    }
}

impl KernelStep {
    /// The kernel step model of `model` on `gpu` at TP `tp`, or `None` when `gpu` has no
    /// measured tables (nor a sibling) or the model has a layer the tables do not cover (a
    /// recurrent mixer, a latent MoE): those keep the roofline step model.
    pub fn new(
        model: &ModelDesc,
        gpu: &Accelerator,
        tp: u64,
        weights: Option<Dtype>,
        kv: Dtype,
        overhead: StepOverhead,
    ) -> Option<KernelStep> {
        let (kernels, source) = kernels_for(gpu)?;
        let roof = Roof::of(gpu)?;
        let md = moe_dtype(&model.weights, weights);
        // vLLM runs weight-only INT4 experts (compressed-tensors W4A16) through Marlin's fused
        // MoE; on Hopper it is timed as MXFP4's is ([`marlin_moe_s`]); elsewhere by a table's
        // stand-in ([`kernel_moe_dtype`]).
        let int4_marlin =
            md == MoeDtype::Int4W4A16 && gpu.architecture == crate::hardware::Architecture::Hopper;
        let dtypes = (
            gemm_dtype(&model.weights, weights),
            if int4_marlin {
                md
            } else {
                kernel_moe_dtype(md, &roof)
            },
        );
        let h = model.hidden_size as f64;
        let mut linear: Vec<LinearClass> = Vec::new();
        let mut attn: Vec<AttnClass> = Vec::new();
        for l in &model.layers {
            let mut gemms = Vec::new();
            let a = mixer_class(&l.mixer, h, tp, dtypes.0, &mut gemms)?;
            let (moe, extra) = ffn_work(&l.ffn, h, tp, dtypes, &mut gemms)?;
            let lc = LinearClass {
                layers: 1.0,
                gemms,
                moe,
                elementwise_bytes: ELEMENTWISE_PASSES * h * 2.0 + extra,
            };
            match linear
                .iter_mut()
                .find(|c| c.gemms == lc.gemms && c.moe == lc.moe)
            {
                Some(c) => c.layers += 1.0,
                None => linear.push(lc),
            }
            match attn.iter_mut().find(|c| {
                c.decode_heads == a.decode_heads
                    && c.prefill_heads == a.prefill_heads
                    && c.window == a.window
            }) {
                Some(c) => c.layers += 1.0,
                None => attn.push(a),
            }
        }
        Some(KernelStep {
            kernels,
            source,
            roof,
            tp,
            kv_fp8: kv == Dtype::Fp8,
            hidden: h,
            layers: model.layers.len() as f64,
            linear,
            attn,
            head: ((model.vocab_size as f64 / tp.max(1) as f64).ceil(), h),
            overhead,
            par: None,
            marlin: int4_marlin.then_some(1.0),
            memo: Vec::new(),
            head_memo: Vec::new(),
        })
    }

    /// The same model with its MXFP4 routed experts run by Marlin's kernel on Hopper, in
    /// vLLM's padded layout (`scale`: its bytes and FLOPs over the checkpoint's), timed by
    /// [`marlin_moe_s`](time::marlin_moe_s) instead of the tables' MXFP4 kernel.
    pub fn with_marlin_moe(mut self, scale: f64) -> KernelStep {
        self.marlin = Some(if scale.is_finite() && scale > 0.0 {
            scale
        } else {
            1.0
        });
        self.memo.clear();
        self
    }

    /// The same model with the routed MXFP4 and INT4 experts timed by the tables (their MXFP4
    /// kernel; INT4's stand-in, [`kernel_moe_dtype`]): engines other than vLLM, which do not
    /// run Marlin for them.
    pub fn without_marlin_moe(mut self) -> KernelStep {
        if self.marlin.take().is_some() {
            let roof = self.roof;
            for c in &mut self.linear {
                if let Some((_, d)) = &mut c.moe {
                    *d = kernel_moe_dtype(*d, &roof);
                }
            }
            self.memo.clear();
        }
        self
    }

    /// The same model under the instance's parallelism `p` on `gpu` (`sim::parallel`): the
    /// routed experts split `p.ep` ways by expert and `p.moe_tp()` ways by intermediate
    /// size, each MoE layer run on the tokens of `p.dp` ranks after gathering them, the
    /// stages of a pipeline passed one after the other. `p.tp` must be the TP this model was
    /// built at.
    pub fn with_parallel(mut self, p: Parallel, gpu: &Accelerator) -> KernelStep {
        let tp = self.tp.max(1) as f64;
        let moe_tp = p.moe_tp().max(1) as f64;
        for c in &mut self.linear {
            if let Some((s, _)) = &mut c.moe {
                s.inter = s.inter * tp / moe_tp;
                s.ep = p.ep.max(1) as f64;
            }
        }
        self.par = Some(ParStep {
            shape: p,
            per_node: p.per_node(gpu),
            // A GPU without a published link: the NIC's figure.
            link_bw: gpu.interconnect.per_direction().map_or(
                crate::hardware::interconnect::INTER_NODE_PER_DIRECTION_GBPS * 1e9,
                |b| b.0,
            ),
            crossings: p.node_crossings(gpu),
            dp_tokens: p.dp.max(1) as f64,
        });
        self.memo.clear();
        self.head_memo.clear();
        self
    }

    /// Runs the MoE layers on the tokens of `ranks` DP ranks from now on (at most the
    /// shape's `dp`: fewer when fewer ranks have requests); whether that changed anything.
    pub fn set_active_ranks(&mut self, ranks: u64) -> bool {
        let Some(p) = &mut self.par else {
            return false;
        };
        let r = ranks.clamp(1, p.shape.dp.max(1)) as f64;
        if r == p.dp_tokens {
            return false;
        }
        p.dp_tokens = r;
        self.memo.clear();
        true
    }

    /// The same model with the engine's time per step set to `o` (remembered times dropped).
    pub fn with_overhead(mut self, o: StepOverhead) -> KernelStep {
        self.overhead = o;
        self
    }

    /// The engine's time per step beyond its kernels.
    pub fn overhead(&self) -> StepOverhead {
        self.overhead
    }

    /// Whether the tables are the GPU's own or a sibling's.
    pub fn source(&self) -> KernelSource {
        self.source
    }

    /// The measured GPU whose tables are used and its vLLM version.
    pub fn table(&self) -> (&str, &str) {
        (&self.kernels.table, &self.kernels.vllm)
    }

    /// No attention class has a sliding window.
    pub fn full_attention(&self) -> bool {
        self.attn.iter().all(|a| a.window.is_none())
    }
}

impl AttnClass {
    fn new(decode: (f64, f64, f64), prefill: (f64, f64, f64), window: Option<u64>) -> AttnClass {
        AttnClass {
            layers: 1.0,
            decode_heads: decode,
            prefill_heads: prefill,
            window,
            decode_keys: 0.0,
            decodes: 0.0,
            pairs: 0.0,
            tokens: 0.0,
            chunks: 0.0,
        }
    }
}

#[cfg(test)]
mod tests;
