//! What a pass moves and computes, and what fits in memory: the operators of a prefill or
//! decode pass with their FLOPs and bytes per GPU ([`pass_work`], from the roofline's inventory),
//! weight and KV bytes per GPU, and the largest batch that fits,
//! `⌊(C × u − W_gpu) / KV_seq⌋` ([`max_batch_for`]), with its derivation.

use super::pass::{term, Deriv, PassWork, PerfOp, Phase};
use super::workload::Workload;
use crate::base::derivation::{Derivation, Source};
use crate::base::dtype::Dtype;
use crate::base::error::CalcError;
use crate::base::expr::Expr;
use crate::base::units::{Bytes, Flops};
use crate::calc::kv;
use crate::calc::memory::DEFAULT_GPU_MEMORY_UTILIZATION;
use crate::calc::roofline;
use crate::calc::weights;
use crate::hardware::catalog::Accelerator;
use crate::model::{ModelDesc, WeightFormat};

/// Per-element byte sizes at a workload's precisions.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Sizes {
    /// Decoder linear weights (quick mode reads every weight at this size), bytes per element.
    wb: f64,
    /// KV cache, bytes per element.
    kvb: f64,
}

const ACT_BYTES: f64 = 2.0;

/// The KV precision of a workload: as given, else vLLM's `auto` ([`kv::auto_kv_dtype`]).
pub(super) fn kv_dtype(fmt: &WeightFormat, wl: &Workload) -> Dtype {
    wl.kv_dtype.unwrap_or(kv::auto_kv_dtype(fmt.base))
}

pub(super) fn sizes(m: &ModelDesc, wl: &Workload) -> (Sizes, WeightFormat) {
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
/// rule, [`crate::calc::tp::check_model`].
pub use crate::calc::tp::check_model as check_model_tp;

/// The derivation of the largest batch that fits, `⌊(C × u − W_gpu) / KV_seq,gpu⌋`.
pub(super) fn max_batch_derivation(d: &Deriv) -> Derivation {
    let (usable, w, kv, b) = d.memory;
    let gib = |symbol: &str, x: f64| Expr::sym(symbol, Bytes::saturating_from_f64(x).fmt_gib(), x);
    let capacity = Expr::mul([Expr::sym("C", "", f64::NAN), Expr::sym("u", "", f64::NAN)]);
    let capacity = Expr::computed(
        capacity,
        Bytes::saturating_from_f64(usable).fmt_gib(),
        usable,
    );
    let e = Expr::floor(Expr::over(
        Expr::minus(capacity, gib("W_gpu", w)),
        gib("KV_seq,gpu", kv),
    ));
    // The result is `max_batch_for`'s, which also bounds the count and answers an empty cache.
    Derivation {
        result_key: "drv_n_sequences".into(),
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
        ..Derivation::of("perf_max_batch", &e)
    }
}
