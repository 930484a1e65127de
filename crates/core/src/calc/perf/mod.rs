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
//!
//! Where each part lives: the fitted efficiencies in `efficiencies`; the workload in
//! `workload`; the hardware figures and the notes on precision in `hardware`; one pass timed on
//! the roofline, with its derivation, in `pass`; the operators, bytes and memory of a pass and
//! the largest batch in `work`; the full report and its derivations in `evaluate`; the batch and
//! TP sweeps in `sweep`.

mod efficiencies;
mod evaluate;
mod hardware;
mod pass;
mod sweep;
mod work;
mod workload;

pub use efficiencies::{
    Efficiencies, DEFAULT_INTERCONNECT, FIT_ALLREDUCE_LATENCY_S, FIT_BANDWIDTH, FIT_COMPUTE_DECODE,
    FIT_COMPUTE_PREFILL, FIT_MARLIN_HOPPER_MOE_COMPUTE, FIT_PREFILL_OVERHEAD_S,
    FIT_STEP_OVERHEAD_S,
};
pub use evaluate::{evaluate, timed_hardware, untimed_compute, PerfReport};
pub use hardware::{compute_dtype, hardware, Hardware, PerfNote};
pub use pass::{allreduce_time, time_pass, Limit, PassTime, PassWork, PerfOp, Phase};
pub use sweep::{pass_times, sweep, tp_candidates, tp_sweep, CurvePoint, TpRow, TP_SWEEP_MAX};
pub use work::{
    check_model_tp, kv_bytes_per_seq_per_gpu, max_batch_for, pass_work, weight_bytes_per_gpu,
};
pub use workload::{DecodeContext, Workload};
