//! The performance model: time to first token, time per output token, throughput, end-to-end
//! latency, cost and energy for one model on one accelerator type at a tensor-parallel degree.
//!
//! Every operator of a phase costs `max(FLOPs / (peak × compute_eff), bytes / (bandwidth ×
//! bandwidth_eff))` (the roofline, per operator); tensor parallelism adds two ring all-reduces
//! per layer, each `2(tp − 1)/tp × bytes / link bandwidth (one direction) + latency`; every
//! forward pass (the prefill, each decode step) adds a fixed overhead. The efficiencies are a
//! plain, editable [`Efficiencies`] whose defaults come from the fit in `core::calibration`
//! (see `docs/calibration.md`).
//!
//! Conventions (documented, and used by the calibration):
//! - A request is `input_len` prompt tokens and `output_len` generated tokens; a batch is `B`
//!   such requests served together (a static batch).
//! - TTFT = one prefill pass over the `B × input_len` prompt tokens (+ overhead).
//! - TPOT = one decode step for `B` sequences at the *mean* context of the generation,
//!   `input_len + output_len / 2` tokens (decode cost is linear in context, so
//!   `TTFT + (O − 1) × TPOT` is then the exact end-to-end time of the static batch);
//!   [`DecodeContext::End`] gives the slowest, last step instead.
//! - Output tokens/s (total) = `B × O / e2e` (prefill included, as TensorRT-LLM reports it);
//!   tokens/s per user = `1 / TPOT` (the streaming rate one user sees).

use crate::core::base::derivation::{Derivation, Source, Term};
use crate::core::base::dtype::Dtype;
use crate::core::base::error::{CalcError, Phrase};
use crate::core::base::i18n::{tr, Lang};
use crate::core::base::units::{fmt_sig, Bytes, BytesPerSecond, Flops, FlopsPerSecond, Seconds};
use crate::core::calc::kv;
use crate::core::calc::memory::DEFAULT_GPU_MEMORY_UTILIZATION;
use crate::core::calc::roofline;
use crate::core::calc::weights;
use crate::core::hardware::catalog::{Accelerator, Link, PrecisionNote, PrecisionReason};
use crate::core::model::{ModelDesc, WeightFormat};
use serde::{Deserialize, Serialize};

/// Fitted default: fraction of the dense peak reached by prefill matmuls.
/// From `core::calibration::fit` on the training rows (see `docs/calibration.md`).
pub const FIT_COMPUTE_PREFILL: f64 = 0.56;
/// Fitted default: fraction of the dense peak reached by decode matmuls.
pub const FIT_COMPUTE_DECODE: f64 = 0.53;
/// Fitted default: fraction of the peak DRAM bandwidth reached by memory-bound operators.
pub const FIT_BANDWIDTH: f64 = 0.74;
/// Fitted default: fixed time per decode step (kernel launches, sampling, scheduling), seconds.
pub const FIT_STEP_OVERHEAD_S: f64 = 0.0012;
/// Fitted default: latency of one all-reduce (launch + synchronisation), seconds.
pub const FIT_ALLREDUCE_LATENCY_S: f64 = 0.000_03;
/// Fitted default: fixed time per prefill pass, seconds.
pub const FIT_PREFILL_OVERHEAD_S: f64 = 0.0056;
/// Fraction of the fitted compute efficiency that vLLM's Marlin MXFP4 MoE kernel reaches on a
/// Hopper GPU (applied to the routed experts' FLOPs only; their weight bytes stream at the
/// fitted bandwidth). Marlin is an Ampere-generation kernel (`mma.sync`, no Hopper `wgmma`
/// or TMA), so its compute-bound regime (prefill chunks, large decode batches) falls short of
/// the dense bf16 GEMMs the default efficiencies were fitted on; memory-bound small batches
/// are unaffected. **A fit on one row**: CSV line 25 (GPUStack, gpt-oss-120b on two H100s,
/// TP 2, 1,000 ShareGPT prompts at once, vLLM 0.10.2, ample KV cache), median TPOT 51.57 ms;
/// that row is left out of every held-out figure and `tests/serving_validation.rs`
/// (`marlin_hopper_moe_compute_is_the_fit_on_its_row`) recomputes the fit. Used only by the
/// serving simulator (`sim::step_time`), which models vLLM; the static model does not apply it.
pub const FIT_MARLIN_HOPPER_MOE_COMPUTE: f64 = 0.274;
/// Not fitted (too few multi-GPU rows): fraction of the one-direction link bandwidth a ring
/// all-reduce reaches. ml-engineering measured 396 of 450 GB/s (88%) one way on 8×H200.
pub const DEFAULT_INTERCONNECT: f64 = 0.8;

/// Efficiencies: the only free parameters of the model. Visible and editable; the defaults come
/// from the calibration fit.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Efficiencies {
    /// Fraction of the dense peak (FLOP/s) reached in the prefill phase, 0–1.
    pub compute_prefill: f64,
    /// Fraction of the dense peak (FLOP/s) reached in the decode phase, 0–1.
    pub compute_decode: f64,
    /// Fraction of the peak memory bandwidth (B/s) reached, 0–1.
    pub bandwidth: f64,
    /// Fixed time per decode step (kernel launches, sampling, scheduling), seconds.
    pub step_overhead_s: f64,
    /// Fixed time per prefill pass (request scheduling, first sampling), seconds.
    pub prefill_overhead_s: f64,

    /// Fixed latency per all-reduce, seconds.
    pub allreduce_latency_s: f64,
    /// Fraction of the one-direction interconnect bandwidth reached by an all-reduce, 0–1.
    pub interconnect: f64,
}

impl Default for Efficiencies {
    fn default() -> Self {
        Efficiencies {
            compute_prefill: FIT_COMPUTE_PREFILL,
            compute_decode: FIT_COMPUTE_DECODE,
            bandwidth: FIT_BANDWIDTH,
            step_overhead_s: FIT_STEP_OVERHEAD_S,
            allreduce_latency_s: FIT_ALLREDUCE_LATENCY_S,
            prefill_overhead_s: FIT_PREFILL_OVERHEAD_S,
            interconnect: DEFAULT_INTERCONNECT,
        }
    }
}

impl Efficiencies {
    /// Checks every field is finite and in range (fractions in (0, 1], times in [0, 10] s).
    pub fn validate(&self) -> Result<(), CalcError> {
        for (name, v) in [
            ("compute_prefill", self.compute_prefill),
            ("compute_decode", self.compute_decode),
            ("bandwidth", self.bandwidth),
            ("interconnect", self.interconnect),
        ] {
            if !(v.is_finite() && v > 0.0 && v <= 1.0) {
                return Err(CalcError::out_of_range(
                    Phrase::verbatim(name),
                    v,
                    Phrase::tr("rng_fraction"),
                ));
            }
        }
        for (name, v) in [
            ("step_overhead_s", self.step_overhead_s),
            ("allreduce_latency_s", self.allreduce_latency_s),
            ("prefill_overhead_s", self.prefill_overhead_s),
        ] {
            if !(v.is_finite() && (0.0..=10.0).contains(&v)) {
                return Err(CalcError::out_of_range(
                    Phrase::verbatim(name),
                    v,
                    Phrase::tr("rng_seconds_from_to").val("lo", 0).val("hi", 10),
                ));
            }
        }
        Ok(())
    }
}

/// Which decode step TPOT describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum DecodeContext {
    /// The step at the mean context `input + output / 2` (the average TPOT of the request).
    #[default]
    Mean,
    /// The last step, at context `input + output` (the slowest step).
    End,
}

/// The serving scenario: batch, lengths, parallelism and precisions.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Workload {
    /// Concurrent sequences `B` (≥ 1).
    pub batch: u64,
    /// Prompt tokens per request `I` (≥ 1).
    pub input_len: u64,
    /// Generated tokens per request `O` (≥ 1).
    pub output_len: u64,
    /// Tensor-parallel degree (GPUs per replica, ≥ 1).
    pub tp: u64,
    /// Weight precision override; `None` = the checkpoint's own format.
    pub weights_dtype: Option<Dtype>,
    /// KV-cache precision; `None` = the checkpoint's 16-bit base precision.
    pub kv_dtype: Option<Dtype>,
    /// Which decode step TPOT describes.
    pub context: DecodeContext,
}

impl Workload {
    /// A workload with the checkpoint's precisions and TPOT at the mean context.
    pub fn new(batch: u64, input_len: u64, output_len: u64, tp: u64) -> Workload {
        Workload {
            batch,
            input_len,
            output_len,
            tp,
            weights_dtype: None,
            kv_dtype: None,
            context: DecodeContext::Mean,
        }
    }

    /// The context a decode step is timed at: the prompt plus half the output (the mean over
    /// the generation) or plus all of it (the last step).
    pub fn decode_context(&self) -> u64 {
        match self.context {
            DecodeContext::Mean => self.input_len + self.output_len / 2,
            DecodeContext::End => self.input_len + self.output_len,
        }
    }

    fn validate(&self) -> Result<(), CalcError> {
        for (name, v, max) in [
            ("batch", self.batch, 1_000_000u64),
            ("input_len", self.input_len, 100_000_000),
            ("output_len", self.output_len, 100_000_000),
            ("tp", self.tp, 1024),
        ] {
            CalcError::whole_in(Phrase::verbatim(name), v, (1, max))?;
        }
        Ok(())
    }
}

pub use crate::core::calc::roofline::Phase;

/// What limits a timed operator or pass (the roofline's [`roofline::Bound`] plus the fixed
/// costs that only a timed pass has).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Limit {
    /// FLOPs / (peak × efficiency) is the larger time.
    Compute,
    /// Bytes / (bandwidth × efficiency) is the larger time.
    Memory,
    /// Tensor-parallel communication and fixed overheads dominate.
    Overhead,
}

/// One operator of a phase, per GPU, already multiplied by the number of identical layers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PerfOp {
    /// Operator translation key from `core::roofline` (`op_attn_q`, `op_mlp_down`, `op_lm_head`, …).
    pub name: String,
    /// Layers (or 1) this entry covers.
    pub count: u64,
    /// FLOPs on one GPU, all `count` layers together.
    pub flops: Flops,
    /// Bytes moved to or from DRAM on one GPU, all `count` layers together.
    pub bytes: f64,
}

/// Per-GPU work of one forward pass, independent of the efficiencies.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PassWork {
    /// The phase.
    pub phase: Phase,
    /// Operators, per GPU.
    pub ops: Vec<PerfOp>,
    /// All-reduces in the pass (0 when tp = 1).
    pub allreduces: u64,
    /// Bytes of one all-reduce (the full activation tensor, `tokens × h × 2` B).
    pub allreduce_bytes: f64,
    /// Decoder layers (for the per-layer overhead).
    pub layers: u64,
}

/// The time of one pass, split by cause.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PassTime {
    /// Sum over operators of max(compute, memory) time.
    pub ops: Seconds,
    /// Part of `ops` from compute-bound operators.
    pub compute_bound: Seconds,
    /// Part of `ops` from memory-bound operators.
    pub memory_bound: Seconds,
    /// All-reduce time.
    pub comm: Seconds,
    /// Fixed per-pass overhead (per step + per layer).
    pub overhead: Seconds,
    /// The total.
    pub total: Seconds,
    /// FLOPs of the pass on one GPU.
    pub flops: Flops,
    /// Bytes of the pass on one GPU.
    pub bytes: f64,
    /// What dominates.
    pub bound: Limit,
}

/// The accelerator figures the model reads, resolved once.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Hardware {
    /// Dense peak at the compute precision (infinite when none is published: compute not timed).
    pub peak: FlopsPerSecond,
    /// Peak DRAM bandwidth.
    pub bandwidth: BytesPerSecond,
    /// One-direction GPU-to-GPU bandwidth used by all-reduces (`None` when there is no link).
    pub link_one_way: Option<BytesPerSecond>,
    /// The precision the matmuls run at.
    pub compute_dtype: Dtype,
}

/// Time one pass with the given hardware and efficiencies.
pub fn time_pass(w: &PassWork, hw: &Hardware, eff: &Efficiencies, tp: u64) -> PassTime {
    let (ce, overhead) = match w.phase {
        Phase::Prefill => (eff.compute_prefill, eff.prefill_overhead_s),
        Phase::Decode => (eff.compute_decode, eff.step_overhead_s),
    };
    let (mut ops, mut cb, mut mb, mut flops, mut bytes) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for op in &w.ops {
        let tc = op.flops.0 / (hw.peak.0 * ce);
        let tm = op.bytes / (hw.bandwidth.0 * eff.bandwidth);
        if tc >= tm {
            cb += tc;
        } else {
            mb += tm;
        }
        ops += tc.max(tm);
        flops += op.flops.0;
        bytes += op.bytes;
    }
    let comm = allreduce_time(w.allreduce_bytes, tp, hw.link_one_way, eff) * w.allreduces as f64;
    let total = ops + comm + overhead;
    let bound = if comm + overhead > ops {
        Limit::Overhead
    } else if cb >= mb {
        Limit::Compute
    } else {
        Limit::Memory
    };
    PassTime {
        ops: Seconds(ops),
        compute_bound: Seconds(cb),
        memory_bound: Seconds(mb),
        comm: Seconds(comm),
        overhead: Seconds(overhead),
        total: Seconds(total),
        flops: Flops(flops),
        bytes,
        bound,
    }
}

/// Ring all-reduce of `bytes` over `tp` GPUs: `2(tp − 1)/tp × bytes / (link × eff) + latency`,
/// seconds; 0 for tp = 1. A missing link is treated as infinitely slow (the caller checks).
pub fn allreduce_time(
    bytes: f64,
    tp: u64,
    link: Option<BytesPerSecond>,
    eff: &Efficiencies,
) -> f64 {
    if tp <= 1 {
        return 0.0;
    }
    let Some(link) = link else {
        return f64::INFINITY;
    };
    let t = tp as f64;
    2.0 * (t - 1.0) / t * bytes / (link.0 * eff.interconnect) + eff.allreduce_latency_s
}

/// The precision the matmuls run at, and a note when it differs from the weights'.
///
/// fp8 / fp6 / fp4 weights are served W8A8-style (activations quantized too, as TensorRT-LLM
/// does), so they ask for that precision; int4 / int8 weights are weight-only quantization
/// (dequantized, 16-bit activations). The catalog's `compute_precision` then falls back where
/// the chip lacks the precision (fp8 on A100 → 16-bit).
pub fn compute_dtype(weights: Dtype, gpu: &Accelerator) -> (Dtype, Option<PerfNote>) {
    let act = match weights {
        Dtype::Fp8 | Dtype::Fp6 | Dtype::Fp4 => weights,
        Dtype::Fp32 => Dtype::Fp32,
        _ => Dtype::Bf16,
    };
    let (d, note) = gpu.compute_precision(weights, act);
    (
        d,
        note.map(|note| PerfNote::Precision {
            gpu: gpu.name.clone(),
            note,
        }),
    )
}

/// A note on a performance result, typed so that the UI can say it in either language
/// ([`PerfNote::message`]); the CLI's JSON `notes` carry the English sentences.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "code", rename_all = "snake_case")]
pub enum PerfNote {
    /// The matmuls run at another precision than the weights ask for (`core::catalog`).
    Precision {
        /// Accelerator display name.
        gpu: String,
        /// What was asked, what is used and why.
        note: PrecisionNote,
    },
    /// No dense peak is published at the compute precision (A10G): compute time is left out,
    /// so TTFT and large-batch times are lower bounds.
    NoPeak {
        /// Accelerator display name.
        gpu: String,
        /// The compute precision without a published peak.
        dtype: Dtype,
    },
    /// The TP degree is larger than the scale-up domain: the replica crosses nodes.
    CrossesNodes {
        /// Accelerator display name.
        gpu: String,
        /// Tensor-parallel degree.
        tp: u64,
        /// GPUs in one scale-up domain.
        domain: u32,
    },
    /// Quick mode: no layer structure, so attention and the KV cache are not timed.
    QuickMode,
    /// The requested batch does not fit in memory.
    BatchDoesNotFit {
        /// Accelerator display name.
        gpu: String,
        /// Tensor-parallel degree.
        tp: u64,
        /// Requested batch.
        batch: u64,
        /// Tokens per sequence (prompt + output).
        tokens: u64,
        /// Largest batch that fits.
        max_batch: u64,
    },
}

impl PerfNote {
    /// Stable code (the JSON tag; CLI `note_codes`).
    pub const fn code(&self) -> &'static str {
        match self {
            PerfNote::Precision { .. } => "precision",
            PerfNote::NoPeak { .. } => "no_peak",
            PerfNote::CrossesNodes { .. } => "crosses_nodes",
            PerfNote::QuickMode => "quick_mode",
            PerfNote::BatchDoesNotFit { .. } => "batch_does_not_fit",
        }
    }

    /// The translation key of the sentence.
    pub const fn key(&self) -> &'static str {
        match self {
            PerfNote::Precision { .. } => "perf_note_precision",
            PerfNote::NoPeak { .. } => "perf_note_no_peak",
            PerfNote::CrossesNodes { .. } => "perf_note_crosses_nodes",
            PerfNote::QuickMode => "perf_note_quick_mode",
            PerfNote::BatchDoesNotFit { .. } => "perf_note_batch_no_fit",
        }
    }

    /// The sentence in a language, placeholders filled.
    pub fn message(&self, lang: Lang) -> String {
        let t = tr(lang, self.key());
        match self {
            PerfNote::Precision { gpu, note } => t
                .replace("{gpu}", gpu)
                .replace("{message}", &note.message(lang)),
            PerfNote::NoPeak { gpu, dtype } => {
                t.replace("{gpu}", gpu).replace("{dtype}", dtype.id())
            }
            PerfNote::CrossesNodes { gpu, tp, domain } => t
                .replace("{gpu}", gpu)
                .replace("{tp}", &tp.to_string())
                .replace("{domain}", &domain.to_string()),
            PerfNote::QuickMode => t.to_string(),
            PerfNote::BatchDoesNotFit {
                gpu,
                tp,
                batch,
                tokens,
                max_batch,
            } => t
                .replace("{gpu}", gpu)
                .replace("{tp}", &tp.to_string())
                .replace("{batch}", &batch.to_string())
                .replace("{tokens}", &tokens.to_string())
                .replace("{max_batch}", &max_batch.to_string()),
        }
    }
}

/// Resolves the hardware figures for a weight precision and TP degree (the chip's own link).
pub fn hardware(
    gpu: &Accelerator,
    weights: Dtype,
    tp: u64,
) -> Result<(Hardware, Vec<PerfNote>), CalcError> {
    let (cd, note) = compute_dtype(weights, gpu);
    if !(gpu.bandwidth.0.is_finite() && gpu.bandwidth.0 > 0.0) {
        return Err(CalcError::MissingSpec {
            gpu: gpu.name.clone(),
            what: Phrase::tr("what_mem_bw"),
        });
    }
    let mut notes: Vec<PerfNote> = note.into_iter().collect();
    // No published peak (A10G): time only the bytes, and say the result is a lower bound
    // (this note replaces the catalog's shorter "no published peak" one).
    let peak = match gpu.peak_flops(cd).filter(|p| p.0.is_finite() && p.0 > 0.0) {
        Some(p) => p,
        None => {
            notes.retain(|n| {
                !matches!(n, PerfNote::Precision { note, .. } if note.reason == PrecisionReason::NoPublishedPeak)
            });
            notes.push(PerfNote::NoPeak {
                gpu: gpu.name.clone(),
                dtype: cd,
            });
            FlopsPerSecond(f64::INFINITY)
        }
    };
    let tp32 = u32::try_from(tp).unwrap_or(u32::MAX);
    let link = gpu.allreduce_bandwidth(Link::Own, tp32);
    if tp > 1 {
        if link.is_none() {
            return Err(CalcError::MissingSpec {
                gpu: gpu.name.clone(),
                what: Phrase::tr("what_link_bw"),
            });
        }
        if tp > u64::from(gpu.interconnect.domain_size.max(1)) {
            notes.push(PerfNote::CrossesNodes {
                gpu: gpu.name.clone(),
                tp,
                domain: gpu.interconnect.domain_size,
            });
        }
    }
    Ok((
        Hardware {
            peak,
            bandwidth: gpu.bandwidth,
            link_one_way: link,
            compute_dtype: cd,
        },
        notes,
    ))
}

/// Per-element byte sizes at a workload's precisions.
#[derive(Debug, Clone, PartialEq)]
struct Sizes {
    /// Decoder linear weights (quick mode reads every weight at this size), bytes per element.
    wb: f64,
    /// KV cache, bytes per element.
    kvb: f64,
}

const ACT_BYTES: f64 = 2.0;

/// The KV precision of a workload: as given, else vLLM's `auto` ([`kv::auto_kv_dtype`]).
fn kv_dtype(fmt: &WeightFormat, wl: &Workload) -> Dtype {
    wl.kv_dtype.unwrap_or(kv::auto_kv_dtype(fmt.base))
}

fn sizes(m: &ModelDesc, wl: &Workload) -> (Sizes, WeightFormat) {
    let fmt = match wl.weights_dtype {
        Some(d) if d != m.weights.dtype => weights::format_for(d, m.weights.base),
        _ => m.weights.clone(),
    };
    let s = Sizes {
        wb: fmt.bytes_per_element(),
        kvb: kv_dtype(&fmt, wl).bytes(),
    };
    (s, fmt)
}

/// The per-GPU work of one pass from the shared operator list (`core::roofline::model_ops`),
/// so the roofline view and the timings use the same FLOPs and bytes. Prefill: `B × I` new
/// tokens attending causally; decode: `B` new tokens attending to `ctx` cached tokens plus
/// themselves. Weights and FLOPs are divided over the `tp` GPUs, the KV cache over the KV
/// heads each rank holds. Quick-mode models (no layers) read every weight once.
pub fn pass_work(
    m: &ModelDesc,
    wl: &Workload,
    phase: Phase,
    ctx: u64,
) -> Result<PassWork, CalcError> {
    if m.layers.is_empty() {
        return Ok(quick_pass_work(m, wl, phase));
    }
    let (_, fmt) = sizes(m, wl);
    let kv = kv_dtype(&fmt, wl);
    let p = roofline::Precisions::from_format(&fmt, Dtype::Bf16, kv);
    let (seq, tokens) = match phase {
        Phase::Prefill => (wl.input_len, wl.batch as f64 * wl.input_len as f64),
        Phase::Decode => (ctx.saturating_add(1), wl.batch as f64),
    };
    let rw = roofline::Pass {
        phase,
        batch: wl.batch,
        seq,
    };
    let ops = roofline::model_ops(m, &rw, &p, wl.tp.max(1))?
        .into_iter()
        .map(|o| PerfOp {
            name: o.name_key,
            count: o.layers,
            flops: o.flops,
            bytes: o.bytes.0 as f64,
        })
        .collect();
    let allreduces = if wl.tp > 1 {
        2 * m.layers.len().max(1) as u64
    } else {
        0
    };
    let h = m.hidden_size as f64;
    Ok(PassWork {
        phase,
        ops,
        allreduces,
        allreduce_bytes: tokens * h * ACT_BYTES,
        layers: m.layers.len() as u64,
    })
}

/// Quick mode (no layer structure): one operator reading every weight once, `2 × active
/// params` FLOPs per token; attention and the KV cache are not timed.
fn quick_pass_work(m: &ModelDesc, wl: &Workload, phase: Phase) -> PassWork {
    let (sz, _) = sizes(m, wl);
    let tp = wl.tp.max(1) as f64;
    let tokens = match phase {
        Phase::Prefill => wl.batch as f64 * wl.input_len as f64,
        Phase::Decode => wl.batch as f64,
    };
    let p = m.params.active.max(m.params.total) as f64;
    let op = PerfOp {
        name: "op_weights".into(),
        count: 1,
        flops: Flops(2.0 * tokens * m.params.active as f64 / tp),
        bytes: p * sz.wb / tp,
    };
    PassWork {
        phase,
        ops: vec![op],
        allreduces: 0,
        allreduce_bytes: 0.0,
        layers: 0,
    }
}

/// Weight bytes on one GPU at the workload's precision and TP degree (`core::weights`: the
/// checkpoint's exact size when known and not overridden, else the format's bytes).
pub fn weight_bytes_per_gpu(m: &ModelDesc, wl: &Workload) -> f64 {
    let tp = wl.tp.max(1);
    match weights::chosen(m, wl.weights_dtype, tp) {
        Ok(w) => w.per_gpu.0 as f64,
        Err(_) => f64::INFINITY,
    }
}

/// KV-cache bytes of one sequence of `tokens` tokens on one GPU, plus its recurrent state
/// (`core::kv::per_sequence` + `core::kv::state_bytes`: sliding windows capped, KV heads per
/// rank under TP); infinite when the TP degree does not divide the heads.
pub fn kv_bytes_per_seq_per_gpu(m: &ModelDesc, wl: &Workload, tokens: u64) -> f64 {
    let (_, fmt) = sizes(m, wl);
    let d = kv_dtype(&fmt, wl);
    let tp = wl.tp.max(1);
    match (
        kv::per_sequence(m, d, tp, tokens),
        kv::state_bytes(m, d, tp),
    ) {
        (Ok(a), Ok(b)) => a.bytes.0 as f64 + b.bytes.0 as f64,
        _ => f64::INFINITY,
    }
}

/// The largest batch whose weights plus KV cache for `I + O` tokens per sequence fit in
/// `DEFAULT_GPU_MEMORY_UTILIZATION × capacity` of each GPU; 0 when even the weights do not fit.
pub fn max_batch_for(m: &ModelDesc, gpu: &Accelerator, wl: &Workload) -> u64 {
    let cap = gpu.capacity().0 as f64 * DEFAULT_GPU_MEMORY_UTILIZATION;
    let free = cap - weight_bytes_per_gpu(m, wl);
    if free <= 0.0 {
        return 0;
    }
    let per_seq = kv_bytes_per_seq_per_gpu(m, wl, wl.input_len + wl.output_len);
    if per_seq <= 0.0 {
        return 1_000_000;
    }
    (free / per_seq).floor().clamp(0.0, 1_000_000.0) as u64
}

/// Whether a TP degree splits the model's attention into whole heads on every GPU: the one
/// rule, [`crate::core::calc::tp::check_model`].
pub use crate::core::calc::tp::check_model as check_model_tp;

/// The compute precision whose dense peak `gpu` lacks when the model's compute is not timed
/// on it ([`PerfNote::NoPeak`]: TTFT and compute-bound times are then lower bounds), else
/// `None`. The same rule as [`evaluate`]'s notes, for callers that only need the verdict (the
/// capacity planner).
pub fn untimed_compute(m: &ModelDesc, gpu: &Accelerator, wl: &Workload) -> Option<Dtype> {
    let (_, fmt) = sizes(m, wl);
    let (_, notes) = hardware(gpu, fmt.dtype, wl.tp).ok()?;
    notes.into_iter().find_map(|n| match n {
        PerfNote::NoPeak { dtype, .. } => Some(dtype),
        _ => None,
    })
}

/// The checks every timing starts with (workload, efficiencies, a model with layers or a
/// parameter count, whole heads per GPU), then the hardware figures and their notes (also the
/// start of the serving simulator's step timing, `core::sim::step_time`).
pub fn timed_hardware(
    m: &ModelDesc,
    gpu: &Accelerator,
    wl: &Workload,
    eff: &Efficiencies,
) -> Result<(Hardware, Vec<PerfNote>), CalcError> {
    wl.validate()?;
    eff.validate()?;
    if m.layers.is_empty() && m.params.active == 0 {
        return Err(CalcError::MissingKey {
            key: "num_hidden_layers".into(),
            why: Phrase::tr("why_time_model"),
        });
    }
    check_model_tp(m, wl.tp)?;
    let (_, fmt) = sizes(m, wl);
    hardware(gpu, fmt.dtype, wl.tp)
}

/// The full report for one model, accelerator, TP degree and workload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PerfReport {
    /// Accelerator id.
    pub gpu: String,
    /// TP degree.
    pub tp: u64,
    /// Batch.
    pub batch: u64,
    /// Time to first token.
    pub ttft: Seconds,
    /// Time per output token (decode step at the chosen context).
    pub tpot: Seconds,
    /// End-to-end latency `TTFT + (O − 1) × TPOT`.
    pub e2e: Seconds,
    /// Output tokens per second, all sequences, `B × O / e2e`.
    pub output_tokens_per_s: f64,
    /// Output tokens per second seen by one user, `1 / TPOT`.
    pub output_tokens_per_s_per_user: f64,
    /// Prefill timing.
    pub prefill: PassTime,
    /// Decode-step timing.
    pub decode: PassTime,
    /// Context (tokens) of the timed decode step.
    pub decode_context: u64,
    /// Precision of the matmuls.
    pub compute_dtype: Dtype,
    /// Efficiencies used.
    pub efficiencies: Efficiencies,
    /// Largest batch memory allows for these lengths (0 = the weights do not fit).
    pub max_batch: u64,
    /// Whether the requested batch fits in memory.
    pub fits: bool,
    /// US dollars per million output tokens (when a price is known).
    pub usd_per_million_tokens: Option<f64>,
    /// US dollars per request.
    pub usd_per_request: Option<f64>,
    /// Output tokens per joule at TDP (an upper-bound power, so a lower bound on efficiency).
    pub tokens_per_joule_at_tdp: Option<f64>,
    /// Notes, typed ([`PerfNote::message`] says them in a language).
    pub notes: Vec<PerfNote>,
    /// Derivations of the headline numbers.
    pub derivations: Vec<Derivation>,
}

impl PerfReport {
    /// Whether TTFT (and other compute-bound times) are lower bounds because the accelerator
    /// publishes no dense peak at the compute precision ([`PerfNote::NoPeak`]).
    pub fn compute_untimed(&self) -> bool {
        self.notes
            .iter()
            .any(|n| matches!(n, PerfNote::NoPeak { .. }))
    }
}

/// Runs the performance model. `price_usd_per_gpu_hour` overrides the catalog price.
pub fn evaluate(
    m: &ModelDesc,
    gpu: &Accelerator,
    wl: &Workload,
    eff: &Efficiencies,
    price_usd_per_gpu_hour: Option<f64>,
) -> Result<PerfReport, CalcError> {
    let (hw, mut notes) = timed_hardware(m, gpu, wl, eff)?;
    if m.layers.is_empty() {
        notes.push(PerfNote::QuickMode);
    }
    let ctx = wl.decode_context();
    let pre_w = pass_work(m, wl, Phase::Prefill, 0)?;
    let dec_w = pass_work(m, wl, Phase::Decode, ctx)?;
    let prefill = time_pass(&pre_w, &hw, eff, wl.tp);
    let decode = time_pass(&dec_w, &hw, eff, wl.tp);
    let ttft = prefill.total;
    let tpot = decode.total;
    let o = wl.output_len as f64;
    let e2e = Seconds(ttft.0 + (o - 1.0) * tpot.0);
    let total_tps = wl.batch as f64 * o / e2e.0;
    let user_tps = 1.0 / tpot.0;
    let max_batch = max_batch_for(m, gpu, wl);
    let fits = wl.batch <= max_batch;
    if !fits {
        notes.push(PerfNote::BatchDoesNotFit {
            gpu: gpu.name.clone(),
            tp: wl.tp,
            batch: wl.batch,
            tokens: wl.input_len + wl.output_len,
            max_batch,
        });
    }
    let price = price_usd_per_gpu_hour
        .or(gpu.price.as_ref().map(|p| p.usd_per_hour))
        .filter(|p| p.is_finite() && *p >= 0.0);
    let gpus = wl.tp as f64;
    let usd_per_million = price.map(|p| p * gpus / 3600.0 / total_tps * 1e6);
    let usd_per_request = price.map(|p| p * gpus / 3600.0 * e2e.0 / wl.batch as f64);
    let tpj = gpu
        .tdp_w
        .filter(|w| *w > 0.0)
        .map(|w| total_tps / (w * gpus));
    let usable = gpu.capacity().0 as f64 * DEFAULT_GPU_MEMORY_UTILIZATION;
    let memory = (
        usable,
        weight_bytes_per_gpu(m, wl),
        kv_bytes_per_seq_per_gpu(m, wl, wl.input_len + wl.output_len),
        max_batch,
    );
    let derivations = derivations(&Deriv {
        memory,
        gpu,
        wl,
        eff,
        hw: &hw,
        prefill: &prefill,
        decode: &decode,
        ctx,
        e2e,
        total_tps,
        price,
        usd_per_million,
        tpj,
    });
    Ok(PerfReport {
        gpu: gpu.id.clone(),
        tp: wl.tp,
        batch: wl.batch,
        ttft,
        tpot,
        e2e,
        output_tokens_per_s: total_tps,
        output_tokens_per_s_per_user: user_tps,
        prefill,
        decode,
        decode_context: ctx,
        compute_dtype: hw.compute_dtype,
        efficiencies: *eff,
        max_batch,
        fits,
        usd_per_million_tokens: usd_per_million,
        usd_per_request,
        tokens_per_joule_at_tdp: tpj,
        notes,
        derivations,
    })
}

/// One point of the latency–throughput curve.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CurvePoint {
    /// Batch.
    pub batch: u64,
    /// Output tokens/s seen by one user (`1 / TPOT`).
    pub tokens_per_s_per_user: f64,
    /// Output tokens/s of the whole batch (`B × O / e2e`).
    pub tokens_per_s_total: f64,
    /// TTFT, seconds.
    pub ttft_s: f64,
    /// TPOT, seconds.
    pub tpot_s: f64,
}

/// The prefill pass (TTFT) and one decode step (TPOT) exactly as [`evaluate`] times them, without
/// its memory, cost and derivations: the capacity planner's inner loop calls this many times.
pub fn pass_times(
    m: &ModelDesc,
    gpu: &Accelerator,
    wl: &Workload,
    eff: &Efficiencies,
) -> Result<(Seconds, Seconds), CalcError> {
    let (hw, _) = timed_hardware(m, gpu, wl, eff)?;
    let ctx = wl.decode_context();
    let prefill = time_pass(&pass_work(m, wl, Phase::Prefill, 0)?, &hw, eff, wl.tp);
    let decode = time_pass(&pass_work(m, wl, Phase::Decode, ctx)?, &hw, eff, wl.tp);
    Ok((prefill.total, decode.total))
}

/// The latency–throughput curve: batch 1, 2, 4, … (powers of two, plus the memory limit) up to
/// the largest batch memory allows (at most `max_points` points). Empty when nothing fits.
pub fn sweep(
    m: &ModelDesc,
    gpu: &Accelerator,
    wl: &Workload,
    eff: &Efficiencies,
    max_points: usize,
) -> Result<Vec<CurvePoint>, CalcError> {
    let max_b = max_batch_for(m, gpu, wl).min(1_000_000);
    let mut batches = Vec::new();
    let mut b = 1u64;
    while b <= max_b && batches.len() < max_points.saturating_sub(1) {
        batches.push(b);
        b = b.saturating_mul(2);
    }
    if max_b >= 1 && batches.last() != Some(&max_b) {
        batches.push(max_b);
    }
    let mut out = Vec::with_capacity(batches.len());
    for b in batches {
        let r = evaluate(m, gpu, &Workload { batch: b, ..*wl }, eff, None)?;
        out.push(CurvePoint {
            batch: b,
            tokens_per_s_per_user: r.output_tokens_per_s_per_user,
            tokens_per_s_total: r.output_tokens_per_s,
            ttft_s: r.ttft.0,
            tpot_s: r.tpot.0,
        });
    }
    Ok(out)
}

/// Largest TP degree the sweep tries (one 8-GPU server).
pub const TP_SWEEP_MAX: u64 = 8;

/// One row of the tensor-parallel sweep.
#[derive(Debug, Clone, PartialEq)]
pub struct TpRow {
    /// Tensor-parallel degree (GPUs per replica).
    pub tp: u64,
    /// Whether this is the scenario's own degree.
    pub chosen: bool,
    /// The report at this degree and the workload's batch; `max_batch == 0` means the weights
    /// do not fit.
    pub result: Result<PerfReport, CalcError>,
}

impl TpRow {
    /// Whether the weights fit at all at this degree (some batch ≥ 1 fits).
    pub fn model_fits(&self) -> bool {
        self.result.as_ref().is_ok_and(|r| r.max_batch > 0)
    }
}

/// The TP degrees the sweep tries on an accelerator: every degree from 1 to the GPUs of one
/// scale-up domain (at most [`TP_SWEEP_MAX`]) that splits the model into whole heads, plus the
/// scenario's own degree `chosen` (even when it is outside that range), ascending.
pub fn tp_candidates(m: &ModelDesc, gpu: &Accelerator, chosen: u64) -> Vec<u64> {
    let top = u64::from(gpu.interconnect.domain_size.max(1)).min(TP_SWEEP_MAX);
    let mut out: Vec<u64> = (1..=top)
        .filter(|t| check_model_tp(m, *t).is_ok())
        .collect();
    if chosen >= 1 && !out.contains(&chosen) {
        out.push(chosen);
        crate::core::base::order::sort_dedup(&mut out);
    }
    out
}

/// The performance model at every TP degree of [`tp_candidates`], at the workload's batch and
/// lengths (its own `tp` marks the chosen row). Each row is computed like [`evaluate`]: with
/// more GPUs each holds `1/tp` of the weights (so the memory-allowed batch rises), reads `1/tp`
/// of them per step (so a bandwidth-bound TPOT falls) and pays two all-reduces per layer (so
/// the fall stops where communication dominates). Cost counts all `tp` GPUs.
pub fn tp_sweep(
    m: &ModelDesc,
    gpu: &Accelerator,
    wl: &Workload,
    eff: &Efficiencies,
    price_usd_per_gpu_hour: Option<f64>,
) -> Vec<TpRow> {
    tp_candidates(m, gpu, wl.tp)
        .into_iter()
        .map(|tp| TpRow {
            tp,
            chosen: tp == wl.tp,
            result: evaluate(m, gpu, &Workload { tp, ..*wl }, eff, price_usd_per_gpu_hour),
        })
        .collect()
}

struct Deriv<'a> {
    gpu: &'a Accelerator,
    wl: &'a Workload,
    eff: &'a Efficiencies,
    hw: &'a Hardware,
    prefill: &'a PassTime,
    decode: &'a PassTime,
    ctx: u64,
    e2e: Seconds,
    total_tps: f64,
    price: Option<f64>,
    usd_per_million: Option<f64>,
    tpj: Option<f64>,
    /// (usable bytes per GPU, weight bytes per GPU, KV bytes per sequence per GPU, max batch).
    memory: (f64, f64, f64, u64),
}

fn term(symbol: &str, name_key: &str, value: f64, unit: &str, source: Source) -> Term {
    let value = if value.abs() >= 1e6 && value.is_finite() {
        format!("{value:.4e}")
    } else {
        fmt_sig(value)
    };
    Term::new(symbol, name_key, value, unit, source)
}

/// [`fmt_sig`], but a plain "0" for zero.
fn fmt0(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else {
        fmt_sig(v)
    }
}

/// An efficiency fitted to measurements (docs/calibration.md), a term of the pass derivations.
fn fitted_term(symbol: &str, name_key: &str, value: f64) -> Term {
    term(
        symbol,
        name_key,
        value,
        "",
        Source::Default("src_fitted_calibration".into()),
    )
}

/// A count the user chose in field `field` (the TP degree, the batch), a term of the pass and
/// throughput derivations.
fn user_count(symbol: &str, name_key: &str, n: u64, field: &str) -> Term {
    term(symbol, name_key, n as f64, "", Source::User(field.into()))
}

fn pass_derivation(d: &Deriv, p: &PassTime, key: &str, ce: f64) -> Derivation {
    Derivation {
        title_key: key.into(),
        formula: "Σ_i max(F_i / (P × e_c), M_i / (BW × e_bw)) + n_ar × t_ar + t_0".into(),
        substituted: format!(
            "P × e_c = {} TFLOP/s × {}, BW × e_bw = {} GB/s × {}: {} ms [F_i / (P × e_c)] + {} ms [M_i / (BW × e_bw)] + {} ms [n_ar × t_ar] + {} ms [t_0]",
            fmt_sig(d.hw.peak.tflops()),
            fmt_sig(ce),
            fmt_sig(d.hw.bandwidth.gbps()),
            fmt_sig(d.eff.bandwidth),
            fmt0(p.compute_bound.ms()),
            fmt0(p.memory_bound.ms()),
            fmt0(p.comm.ms()),
            fmt0(p.overhead.ms())
        ),
        result: format!("{} ms", fmt_sig(p.total.ms())),
        terms: vec![
            term(
                "F",
                "term_flops_per_gpu",
                p.flops.0,
                "FLOP",
                Source::Derived("src_flops_sum".into()),
            ),
            term(
                "M",
                "term_bytes_per_gpu",
                p.bytes,
                "B",
                Source::Derived("src_bytes_moved_per_gpu".into()),
            ),
            term(
                "P",
                "term_peak",
                d.hw.peak.tflops(),
                "TFLOP/s",
                Source::Catalog(format!("{}_tflops", d.hw.compute_dtype)),
            ),
            term(
                "BW",
                "term_bandwidth",
                d.hw.bandwidth.gbps(),
                "GB/s",
                Source::Catalog("bw_gbps".into()),
            ),
            fitted_term("e_c", "term_compute_eff", ce),
            fitted_term("e_bw", "term_bandwidth_eff", d.eff.bandwidth),
            user_count("tp", "term_tp", d.wl.tp, "tp"),
            user_count("B", "term_batch", d.wl.batch, "batch"),
        ],
        notes: vec![],
        ..Default::default()
    }
}

/// The decode pass's derivation (TPOT) with the mean context `C` as an extra term.
fn decode_derivation(d: &Deriv) -> Derivation {
    let mut x = pass_derivation(d, d.decode, "perf_tpot", d.eff.compute_decode);
    x.terms.push(term(
        "C",
        "term_context",
        d.ctx as f64,
        "unit_tokens",
        Source::Derived("src_mean_context".into()),
    ));
    x
}

/// The derivation of the end-to-end latency, `TTFT + (O − 1) × TPOT`.
fn e2e_derivation(d: &Deriv) -> Derivation {
    let o = d.wl.output_len as f64;
    Derivation {
        title_key: "perf_e2e_latency".into(),
        formula: "TTFT + (O − 1) × TPOT".into(),
        substituted: format!(
            "{} ms + ({} − 1) × {} ms",
            fmt_sig(d.prefill.total.ms()),
            d.wl.output_len,
            fmt_sig(d.decode.total.ms())
        ),
        result: format!("{} ms", fmt_sig(d.e2e.ms())),
        terms: vec![term(
            "O",
            "term_output_len",
            o,
            "unit_tokens",
            Source::User("output_len".into()),
        )],
        notes: vec![],
        ..Default::default()
    }
}

/// The derivation of the output throughput, `B × O / e2e`.
fn throughput_derivation(d: &Deriv) -> Derivation {
    Derivation {
        title_key: "perf_output_tokens_per_s".into(),
        formula: "B × O / e2e".into(),
        substituted: format!(
            "{} × {} / {} s",
            d.wl.batch,
            d.wl.output_len,
            fmt_sig(d.e2e.0)
        ),
        result: format!("{} tok/s", fmt_sig(d.total_tps)),
        terms: vec![user_count("B", "term_batch", d.wl.batch, "batch")],
        notes: vec![],
        ..Default::default()
    }
}

/// The derivation of the largest batch that fits, `⌊(C × u − W_gpu) / KV_seq,gpu⌋`.
fn max_batch_derivation(d: &Deriv) -> Derivation {
    let (usable, w, kv, b) = d.memory;
    Derivation {
        result_key: "drv_n_sequences".into(),
        title_key: "perf_max_batch".into(),
        formula: "⌊(C × u − W_gpu) / KV_seq,gpu⌋".into(),
        substituted: format!(
            "⌊({} − {}) / {}⌋",
            Bytes::saturating_from_f64(usable).fmt_gib(),
            Bytes::saturating_from_f64(w).fmt_gib(),
            Bytes::saturating_from_f64(kv).fmt_gib()
        ),
        result: b.to_string(),
        terms: vec![
            term(
                "u",
                "term_memory_utilization",
                DEFAULT_GPU_MEMORY_UTILIZATION,
                "",
                Source::Default("src_vllm_default_gmu".into()),
            ),
            term(
                "I + O",
                "term_context",
                (d.wl.input_len + d.wl.output_len) as f64,
                "unit_tokens",
                Source::User("input_len + output_len".into()),
            ),
        ],
        notes: vec![],
    }
}

/// The derivation of the cost per million output tokens, when a price is known.
fn cost_derivation(d: &Deriv) -> Option<Derivation> {
    if let (Some(p), Some(c)) = (d.price, d.usd_per_million) {
        Some(Derivation {
            title_key: "perf_usd_per_million_tokens".into(),
            formula: "price × tp / 3600 / TPS × 10^6".into(),
            substituted: format!(
                "{p} $/h × {} / 3600 / {} × 10^6",
                d.wl.tp,
                fmt_sig(d.total_tps)
            ),
            result: format!("${}", fmt_sig(c)),
            terms: vec![
                term(
                    "price",
                    "term_price",
                    p,
                    "$/GPU-h",
                    Source::Catalog("price_usd_per_hour".into()),
                ),
                tps_term(d),
            ],
            notes: vec![],
            ..Default::default()
        })
    } else {
        None
    }
}

/// `TPS`, the output throughput the cost and energy derivations divide by.
fn tps_term(d: &Deriv) -> Term {
    term(
        "TPS",
        "term_tps",
        d.total_tps,
        "tok/s",
        Source::Derived("perf_output_tokens_per_s".into()),
    )
}

/// The derivation of tokens per joule at the TDP, when the TDP is known.
fn energy_derivation(d: &Deriv) -> Option<Derivation> {
    if let (Some(w), Some(t)) = (d.gpu.tdp_w, d.tpj) {
        Some(Derivation {
            title_key: "perf_tokens_per_joule".into(),
            formula: "TPS / (TDP × tp)".into(),
            substituted: format!("{} / ({w} W × {})", fmt_sig(d.total_tps), d.wl.tp),
            result: format!("{} tok/J", fmt_sig(t)),
            terms: vec![
                term("TDP", "term_tdp", w, "W", Source::Catalog("tdp_w".into())),
                tps_term(d),
            ],
            notes: vec!["note_tdp_upper_bound".into()],
            ..Default::default()
        })
    } else {
        None
    }
}

/// Every derivation of the performance model, in report order: TTFT, TPOT, e2e latency,
/// output throughput, per-user rate, max batch, then cost and energy when known.
fn derivations(d: &Deriv) -> Vec<Derivation> {
    let mut v = vec![
        pass_derivation(d, d.prefill, "perf_ttft", d.eff.compute_prefill),
        decode_derivation(d),
        e2e_derivation(d),
        throughput_derivation(d),
    ];
    v.push(Derivation {
        title_key: "perf_tokens_per_s_per_user".into(),
        formula: "1 / TPOT".into(),
        substituted: format!("1 / {} s", fmt_sig(d.decode.total.0)),
        result: format!("{} tok/s", fmt_sig(1.0 / d.decode.total.0)),
        terms: vec![],
        notes: vec![],
        ..Default::default()
    });
    v.push(max_batch_derivation(d));
    v.extend(cost_derivation(d));
    v.extend(energy_derivation(d));
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::calc::calibration::{dense_model, map_model};
    use crate::core::hardware::catalog::Catalog;

    fn llama7b() -> ModelDesc {
        map_model("Llama-2-7B")
            .map(dense_model)
            .unwrap_or_else(|| panic!("Llama-2-7B spec"))
    }

    fn gpu(id: &str) -> &'static Accelerator {
        Catalog::builtin().get(id).unwrap_or_else(|e| panic!("{e}"))
    }

    #[track_caller]
    fn eval(m: &ModelDesc, g: &str, wl: &Workload) -> PerfReport {
        evaluate(m, gpu(g), wl, &Efficiencies::default(), None).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn batch1_decode_is_weight_bytes_over_effective_bandwidth() {
        // Decode at batch 1 reads every weight once: TPOT ≈ W / (BW × e_bw) + t_step.
        // Llama-2-7B bf16 on A100 SXM 80GB: W = 13,476,831,232 B; BW = 2,039 GB/s.
        let m = llama7b();
        let wl = Workload::new(1, 128, 2, 1);
        let r = eval(&m, "a100-sxm-80gb", &wl);
        let e = Efficiencies::default();
        let w = weight_bytes_per_gpu(&m, &wl);
        assert_eq!(w, 13_476_831_232.0);
        // The embedding table is not streamed (only B rows are gathered): V × h × 2 B.
        let streamed = w - 32000.0 * 4096.0 * 2.0;
        let expect =
            streamed / (gpu("a100-sxm-80gb").bandwidth.0 * e.bandwidth) + e.step_overhead_s;
        // The KV cache of ≤ 129 tokens (≤ 68 MB) and activations add a little.
        let rel = r.tpot.0 / expect - 1.0;
        assert!(
            (0.0..0.01).contains(&rel),
            "tpot {} vs {expect}: {rel}",
            r.tpot.0
        );
        assert_eq!(r.decode.bound, Limit::Memory);
    }

    #[test]
    fn prefill_flops_are_two_params_per_token_plus_attention() {
        // Matmuls: 2 × (attention + MLP params) × S; lm_head on the last token: 2 × h × V;
        // attention: per layer 4 × heads × head_dim × S(S+1)/2 (QKᵀ and PV, causal).
        let m = llama7b();
        let s = 2048u64;
        let w = pass_work(&m, &Workload::new(1, s, 1, 1), Phase::Prefill, 0)
            .unwrap_or_else(|e| panic!("{e}"));
        let f: f64 = w.ops.iter().map(|o| o.flops.0).sum();
        let p = &m.params;
        let sf = s as f64;
        let attn = 32.0 * 4.0 * 32.0 * 128.0 * sf * (sf + 1.0) / 2.0;
        let expect = 2.0 * (p.attention + p.mlp) as f64 * sf + 2.0 * 4096.0 * 32000.0 + attn;
        // Norms, activation functions and rotary embeddings add well under 0.5%.
        assert!(
            (0.0..0.005).contains(&(f / expect - 1.0)),
            "{f} vs {expect}"
        );
        // And the rule of thumb 2 × params × tokens holds within the attention share (~5%).
        let rough = 2.0 * p.total as f64 * sf;
        assert!((f / rough - 1.0).abs() < 0.06, "{f} vs {rough}");
    }

    #[test]
    fn throughput_rises_with_batch_until_memory_runs_out() {
        let m = llama7b();
        let g = gpu("l40s");
        let wl = Workload::new(1, 1024, 1024, 1);
        let e = Efficiencies::default();
        let curve = sweep(&m, g, &wl, &e, 64).unwrap_or_else(|e| panic!("{e}"));
        let max_b = max_batch_for(&m, g, &wl);
        assert!(max_b > 4, "{max_b}");
        assert_eq!(curve.last().map(|p| p.batch), Some(max_b));
        for pair in curve.windows(2) {
            let (a, b) = (&pair[0], &pair[1]);
            assert!(b.tokens_per_s_total > a.tokens_per_s_total, "{a:?} → {b:?}");
            assert!(
                b.tokens_per_s_per_user <= a.tokens_per_s_per_user,
                "{a:?} → {b:?}"
            );
        }
        let over = evaluate(
            &m,
            g,
            &Workload {
                batch: max_b + 1,
                ..wl
            },
            &e,
            None,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert!(!over.fits);
        let at = evaluate(&m, g, &Workload { batch: max_b, ..wl }, &e, None)
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(at.fits);
    }

    #[test]
    fn tpot_rises_with_context() {
        let m = llama7b();
        let t: Vec<f64> = [128u64, 2048, 8192]
            .iter()
            .map(|&i| eval(&m, "h100-sxm", &Workload::new(8, i, 128, 1)).tpot.0)
            .collect();
        assert!(t[0] < t[1] && t[1] < t[2], "{t:?}");
        let mean = eval(&m, "h100-sxm", &Workload::new(8, 2048, 2048, 1));
        let end = eval(
            &m,
            "h100-sxm",
            &Workload {
                context: DecodeContext::End,
                ..Workload::new(8, 2048, 2048, 1)
            },
        );
        assert_eq!(mean.decode_context, 3072);
        assert_eq!(end.decode_context, 4096);
        assert!(end.tpot.0 > mean.tpot.0);
    }

    #[test]
    fn tensor_parallelism_cuts_per_gpu_work_and_adds_communication() {
        let m = map_model("Llama-2-70B")
            .map(dense_model)
            .unwrap_or_else(|| panic!("spec"));
        let r: Vec<PerfReport> = [1u64, 2, 4, 8]
            .iter()
            .map(|&tp| {
                let mut wl = Workload::new(16, 512, 128, tp);
                wl.weights_dtype = Some(Dtype::Fp8);
                eval(&m, "h100-sxm", &wl)
            })
            .collect();
        assert_eq!(r[0].decode.comm.0, 0.0);
        for w in r.windows(2) {
            assert!(
                w[1].decode.ops.0 < w[0].decode.ops.0,
                "per-GPU op time falls"
            );
            assert!(
                w[1].decode.comm.0 > w[0].decode.comm.0,
                "communication grows"
            );
            assert!(w[1].prefill.comm.0 > w[0].prefill.comm.0);
        }
        // Two all-reduces per layer of B × S × h × 2 bytes; ring over NVSwitch 450 GB/s one way.
        let e = Efficiencies::default();
        let bytes = 16.0 * 8192.0 * 2.0;
        let one = 2.0 * 3.0 / 4.0 * bytes / (450e9 * e.interconnect) + e.allreduce_latency_s;
        let got = r[2].decode.comm.0;
        assert!((got / (160.0 * one) - 1.0).abs() < 1e-9, "{got}");
    }

    #[test]
    fn fp8_on_a100_computes_at_16_bit_with_a_note() {
        let m = llama7b();
        let mut wl = Workload::new(1, 128, 16, 1);
        wl.weights_dtype = Some(Dtype::Fp8);
        let a100 = eval(&m, "a100-sxm-80gb", &wl);
        assert_eq!(a100.compute_dtype.bits(), 16);
        assert!(!a100.notes.is_empty());
        let h100 = eval(&m, "h100-sxm", &wl);
        assert_eq!(h100.compute_dtype, Dtype::Fp8);
        // fp8 weights halve the bytes read per decode step.
        let w16 = weight_bytes_per_gpu(&m, &Workload::new(1, 128, 16, 1));
        let w8 = weight_bytes_per_gpu(&m, &wl);
        assert!(w8 < 0.52 * w16 && w8 > 0.5 * w16, "{w8} vs {w16}");
    }

    #[test]
    fn cost_and_energy_follow_throughput() {
        let m = llama7b();
        let wl = Workload::new(16, 512, 256, 1);
        let r = evaluate(&m, gpu("l40s"), &wl, &Efficiencies::default(), Some(2.0))
            .unwrap_or_else(|e| panic!("{e}"));
        // $/M tokens = price × GPUs / 3600 / (tokens/s) × 10^6.
        let c = 2.0 / 3600.0 / r.output_tokens_per_s * 1e6;
        assert_eq!(r.usd_per_million_tokens, Some(c));
        let per_req = 2.0 / 3600.0 * r.e2e.0 / 16.0;
        assert_eq!(r.usd_per_request, Some(per_req));
        let tdp = gpu("l40s").tdp_w.unwrap_or(f64::NAN);
        assert_eq!(r.tokens_per_joule_at_tdp, Some(r.output_tokens_per_s / tdp));
        assert!(r
            .derivations
            .iter()
            .any(|d| d.title_key == "perf_tokens_per_joule"));
        // Every key a derivation names has a translation.
        for d in &r.derivations {
            assert!(
                crate::core::base::i18n::has(&d.title_key),
                "{}",
                d.title_key
            );
            for t in &d.terms {
                assert!(crate::core::base::i18n::has(&t.name_key), "{}", t.name_key);
            }
            for n in &d.notes {
                assert!(crate::core::base::i18n::has(n), "{n}");
            }
        }
    }

    #[test]
    fn e2e_is_ttft_plus_decode_steps() {
        let m = llama7b();
        let r = eval(&m, "h100-sxm", &Workload::new(4, 1000, 200, 1));
        assert!((r.e2e.0 - (r.ttft.0 + 199.0 * r.tpot.0)).abs() < 1e-12);
        assert!((r.output_tokens_per_s - 4.0 * 200.0 / r.e2e.0).abs() < 1e-9);
        assert!((r.output_tokens_per_s_per_user - 1.0 / r.tpot.0).abs() < 1e-9);
    }

    #[test]
    fn every_preset_on_every_kind_of_chip_gives_finite_times() {
        // MoE, MLA, sliding windows, Mamba and hybrids: no panic, no NaN, positive times.
        let e = Efficiencies::default();
        for p in crate::core::model::presets::all() {
            let Ok(m) = p.parse() else { continue };
            for g in [
                "h100-sxm",
                "a100-sxm-80gb",
                "l40s",
                "a10g",
                "mi300x",
                "tpu-v5e",
                "m4-max",
                "b200",
            ] {
                for (wd, tp) in [
                    (None, 1),
                    (Some(Dtype::Fp8), 2),
                    (Some(Dtype::Int4), 1),
                    (Some(Dtype::Fp4), 8),
                ] {
                    let mut wl = Workload::new(4, 1000, 200, tp);
                    wl.weights_dtype = wd;
                    match evaluate(&m, gpu(g), &wl, &e, None) {
                        Ok(r) => {
                            for (what, v) in [
                                ("perf_ttft", r.ttft.0),
                                ("perf_tpot", r.tpot.0),
                                ("e2e", r.e2e.0),
                                ("tok/s", r.output_tokens_per_s),
                            ] {
                                assert!(
                                    v.is_finite() && v > 0.0,
                                    "{} on {g} {wd:?} tp{tp}: {what} = {v}",
                                    p.id
                                );
                            }
                            assert!(r.tpot.0 >= e.step_overhead_s);
                        }
                        // Only typed errors: TP not dividing heads, a missing link or figure.
                        Err(err) => assert!(!err.to_string().is_empty()),
                    }
                }
            }
        }
    }

    #[test]
    fn bad_inputs_are_errors_not_panics() {
        let m = llama7b();
        let e = Efficiencies::default();
        assert!(evaluate(&m, gpu("h100-sxm"), &Workload::new(0, 1, 1, 1), &e, None).is_err());
        assert!(evaluate(&m, gpu("h100-sxm"), &Workload::new(1, 1, 1, 0), &e, None).is_err());
        let bad = Efficiencies {
            bandwidth: 0.0,
            ..e
        };
        assert!(evaluate(&m, gpu("h100-sxm"), &Workload::new(1, 1, 1, 1), &bad, None).is_err());
        let nan = Efficiencies {
            step_overhead_s: f64::NAN,
            ..e
        };
        assert!(nan.validate().is_err());
    }
}
