//! The timing and memory model the planner reads ([`Timing`]) and its implementation by the
//! performance model under continuous batching with chunked prefill ([`PerfTiming`]):
//! `TPOT(B) = decode(B) + prefill(B) / O` and `TTFT(B) = prefill(1) + TPOT(B)` (the capacity
//! module's docs derive both); [`LowerBound`] says when those times are only lower bounds.

use crate::base::dtype::Dtype;
use crate::base::error::{CalcError, Phrase};
use crate::base::units::Seconds;
use crate::calc::loading;
use crate::calc::perf::{self, Efficiencies, Workload};
use crate::hardware::catalog::Accelerator;
use crate::model::{Mixer, ModelDesc};
use serde::{Deserialize, Serialize};

/// TTFT and TPOT of one replica at a batch.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct StepTimes {
    /// Time to first token.
    pub ttft: Seconds,
    /// Time per output token.
    pub tpot: Seconds,
    /// The passes they are made of, when the model knows them (for the derivation).
    #[serde(default)]
    pub parts: Option<StepParts>,
}

/// The passes behind [`StepTimes`] under continuous batching (the capacity module's docs).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct StepParts {
    /// Prefill of one prompt.
    pub prefill_one: Seconds,
    /// Prefill pass over the `B` prompts of the batch.
    pub prefill_batch: Seconds,
    /// One decode step of the `B` sequences.
    pub decode: Seconds,
}

/// Memory figures of one replica, per GPU.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MemoryNeed {
    /// Bytes the engine may use on one GPU.
    pub usable_bytes: f64,
    /// Weight bytes on one GPU.
    pub weight_bytes: f64,
    /// KV-cache (and state) bytes of one sequence of `input + output` tokens on one GPU.
    pub kv_bytes_per_seq: f64,
}

/// The timing and memory model the planner reads. [`PerfTiming`] implements it with the
/// performance model; tests use simple analytic ones.
pub trait Timing {
    /// Model name for messages.
    fn model_name(&self) -> String;
    /// Whether a TP degree splits the model into whole heads (an error says why not).
    fn check_tp(&self, _tp: u64) -> Result<(), CalcError> {
        Ok(())
    }
    /// Cold start of a new replica on `tp` GPUs (load + engine start-up), when known.
    fn cold_start(&self, _gpu: &Accelerator, _tp: u64) -> Option<Seconds> {
        None
    }
    /// Why this model's times on `tp` GPUs of `gpu` are only lower bounds, when they are
    /// (the accelerator publishes no dense peak at the compute precision, so compute is not
    /// timed).
    fn lower_bound(&self, _gpu: &Accelerator, _tp: u64) -> Option<LowerBound> {
        None
    }
    /// Memory of one replica on `tp` GPUs for one sequence of these lengths.
    fn memory(
        &self,
        gpu: &Accelerator,
        tp: u64,
        input_len: u64,
        output_len: u64,
    ) -> Result<MemoryNeed, CalcError>;
    /// TTFT and TPOT at `batch` sequences of these lengths.
    fn times(
        &self,
        gpu: &Accelerator,
        tp: u64,
        batch: u64,
        input_len: u64,
        output_len: u64,
    ) -> Result<StepTimes, CalcError>;
}

/// [`Timing`] from the performance model (`core::perf`) under continuous batching with chunked
/// prefill (the capacity module's docs): `TPOT(B) = decode(B) + prefill(B) / O` and
/// `TTFT(B) = prefill(1) + TPOT(B)` (`prefill(1)` at `B = 1`), where `decode(B)` is perf's
/// decode step at the mean context and `prefill(B)` its prefill pass over `B` prompts; memory at
/// `crate::calc::memory::DEFAULT_GPU_MEMORY_UTILIZATION`.
#[derive(Debug, Clone)]
pub struct PerfTiming<'a> {
    /// The model.
    pub model: &'a ModelDesc,
    /// Efficiencies (fitted defaults).
    pub eff: Efficiencies,
    /// Weight precision override.
    pub weights_dtype: Option<Dtype>,
    /// KV precision override.
    pub kv_dtype: Option<Dtype>,
}

impl<'a> PerfTiming<'a> {
    /// With the fitted efficiencies and the checkpoint's precisions.
    pub fn new(model: &'a ModelDesc) -> Self {
        PerfTiming {
            model,
            eff: Efficiencies::default(),
            weights_dtype: None,
            kv_dtype: None,
        }
    }

    fn workload(&self, batch: u64, tp: u64, i: u64, o: u64) -> Workload {
        let mut wl = Workload::new(batch, i, o, tp);
        wl.weights_dtype = self.weights_dtype;
        wl.kv_dtype = self.kv_dtype;
        wl
    }
}

/// Query and KV heads of the first attention (or MLA: one latent shared by all heads) layer.
pub fn attention_heads(m: &ModelDesc) -> Option<(u64, u64)> {
    m.layers.iter().find_map(|l| match l.mixer {
        Mixer::Attention {
            num_heads,
            kv_heads,
            ..
        } => Some((num_heads, kv_heads)),
        Mixer::Mla { num_heads, .. } => Some((num_heads, num_heads)),
        Mixer::Ssm { .. } => None,
    })
}

impl Timing for PerfTiming<'_> {
    fn model_name(&self) -> String {
        self.model.name.clone()
    }

    /// vLLM's rule, the one definition: [`crate::calc::tp::check_model`].
    fn check_tp(&self, tp: u64) -> Result<(), CalcError> {
        crate::calc::tp::check_model(self.model, tp)
    }

    /// `core::loading::load_time` with its defaults (local NVMe, PCIe or NVLink-C2C at 0.8,
    /// 60 s engine start-up).
    fn cold_start(&self, gpu: &Accelerator, tp: u64) -> Option<Seconds> {
        let inp = loading::LoadInputs {
            tp,
            weights_dtype: self.weights_dtype,
            ..loading::LoadInputs::default()
        };
        loading::load_time(self.model, gpu, &inp)
            .ok()
            .map(|r| r.cold_start)
    }

    /// The performance model's own verdict ([`perf::untimed_compute`]).
    fn lower_bound(&self, gpu: &Accelerator, tp: u64) -> Option<LowerBound> {
        perf::untimed_compute(self.model, gpu, &self.workload(1, tp, 1, 1))
            .map(|dtype| LowerBound::NoComputePeak { dtype })
    }

    fn memory(
        &self,
        gpu: &Accelerator,
        tp: u64,
        input_len: u64,
        output_len: u64,
    ) -> Result<MemoryNeed, CalcError> {
        let wl = self.workload(1, tp, input_len, output_len);
        Ok(MemoryNeed {
            usable_bytes: gpu.capacity().0 as f64
                * crate::calc::memory::DEFAULT_GPU_MEMORY_UTILIZATION,
            weight_bytes: perf::weight_bytes_per_gpu(self.model, &wl),
            kv_bytes_per_seq: perf::kv_bytes_per_seq_per_gpu(
                self.model,
                &wl,
                input_len + output_len,
            ),
        })
    }

    fn times(
        &self,
        gpu: &Accelerator,
        tp: u64,
        batch: u64,
        input_len: u64,
        output_len: u64,
    ) -> Result<StepTimes, CalcError> {
        let pass = |b: u64| {
            perf::pass_times(
                self.model,
                gpu,
                &self.workload(b, tp, input_len, output_len),
                &self.eff,
            )
        };
        let (prefill_batch, decode) = pass(batch)?;
        let prefill_one = if batch == 1 {
            prefill_batch
        } else {
            pass(1)?.0
        };
        let o = output_len.max(1) as f64;
        let tpot = Seconds(decode.0 + prefill_batch.0 / o);
        let wait = if batch > 1 { tpot.0 } else { 0.0 };
        Ok(StepTimes {
            ttft: Seconds(prefill_one.0 + wait),
            tpot,
            parts: Some(StepParts {
                prefill_one,
                prefill_batch,
                decode,
            }),
        })
    }
}

/// Why an option's TTFT and TPOT are only lower bounds: it may meet the targets on paper
/// and miss them in service. Such options rank after those timed in full, and a plan whose
/// best option is one says so ([`Plan::best_lower_bound`](super::Plan::best_lower_bound),
/// the note `phr_plan_best_lower_bound`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LowerBound {
    /// The accelerator publishes no dense peak at the compute precision (`dtype`): compute is
    /// not timed, so prefill (TTFT) is timed on bytes alone.
    NoComputePeak {
        /// The compute precision without a dense peak.
        dtype: Dtype,
    },
}

impl LowerBound {
    /// The sentence saying why, for the option on `gpu`.
    pub fn phrase(self, gpu: &str) -> Phrase {
        match self {
            LowerBound::NoComputePeak { dtype } => Phrase::tr("phr_plan_lower_bound")
                .val("gpu", gpu)
                .val("dtype", dtype.id()),
        }
    }
}
