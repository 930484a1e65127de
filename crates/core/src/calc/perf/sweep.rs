//! Sweeps of the performance model: the latency–throughput curve over batch sizes
//! ([`sweep`], [`pass_times`]) and the report at every TP degree that splits the model into whole
//! heads, up to one 8-GPU server ([`tp_sweep`]).

use super::efficiencies::Efficiencies;
use super::evaluate::{evaluate, timed_hardware, PerfReport};
use super::pass::{time_pass, Phase};
use super::work::{check_model_tp, max_batch_for, pass_work};
use super::workload::Workload;
use crate::base::error::CalcError;
use crate::base::units::Seconds;
use crate::hardware::catalog::Accelerator;
use crate::model::ModelDesc;
use serde::{Deserialize, Serialize};

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
        crate::base::order::sort_dedup(&mut out);
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
