//! One forward pass timed on the roofline, and its derivation: every operator costs
//! `max(FLOPs / (peak × compute_eff), bytes / (bandwidth × bandwidth_eff))`, tensor parallelism
//! adds two ring all-reduces per layer, each `2(tp − 1)/tp × bytes / link bandwidth + latency`
//! ([`allreduce_time`]), and the pass adds a fixed overhead ([`time_pass`]). Also the figures
//! every derivation of the report reads (`Deriv`) and how their terms are written.

use super::efficiencies::Efficiencies;
use super::hardware::Hardware;
use super::workload::Workload;
use crate::base::derivation::{Derivation, Source, Term};
use crate::base::units::{fmt_sig, BytesPerSecond, Flops, Seconds};
use crate::hardware::catalog::Accelerator;
use serde::{Deserialize, Serialize};

pub use crate::calc::roofline::Phase;

/// What limits a timed operator or pass (the roofline's
/// [`roofline::Bound`](crate::calc::roofline::Bound) plus the fixed costs that only a
/// timed pass has).
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

pub(super) struct Deriv<'a> {
    pub(super) gpu: &'a Accelerator,
    pub(super) wl: &'a Workload,
    pub(super) eff: &'a Efficiencies,
    pub(super) hw: &'a Hardware,
    pub(super) prefill: &'a PassTime,
    pub(super) decode: &'a PassTime,
    pub(super) ctx: u64,
    pub(super) e2e: Seconds,
    pub(super) total_tps: f64,
    pub(super) price: Option<f64>,
    pub(super) usd_per_million: Option<f64>,
    pub(super) tpj: Option<f64>,
    /// (usable bytes per GPU, weight bytes per GPU, KV bytes per sequence per GPU, max batch).
    pub(super) memory: (f64, f64, f64, u64),
}

pub(super) fn term(symbol: &str, name_key: &str, value: f64, unit: &str, source: Source) -> Term {
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
pub(super) fn user_count(symbol: &str, name_key: &str, n: u64, field: &str) -> Term {
    term(symbol, name_key, n as f64, "", Source::User(field.into()))
}

pub(super) fn pass_derivation(d: &Deriv, p: &PassTime, key: &str, ce: f64) -> Derivation {
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
pub(super) fn decode_derivation(d: &Deriv) -> Derivation {
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
