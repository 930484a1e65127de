//! The performance model's only free parameters, [`Efficiencies`]: the fraction of the dense
//! peak reached by prefill and decode matmuls, of the DRAM bandwidth by memory-bound operators, of
//! the link bandwidth by all-reduces, and the fixed overheads per pass. The defaults are fitted
//! to measured benchmarks (`calc::calibration`, `docs/calibration.md`).

use crate::base::error::{CalcError, Phrase};
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
