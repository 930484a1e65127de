//! Capacity planning: from a traffic level and its peak to GPUs, replicas and cost.
//!
//! For every candidate accelerator and tensor-parallel degree that fits inside one node
//! (1, 2, 4, 8 up to the GPUs a node holds; TP must divide the attention heads):
//! 1. the batch memory allows: `floor((capacity × util − W/tp) / KV per sequence)`;
//! 2. the largest batch `B*` that still meets the latency targets, by binary search (TTFT and
//!    TPOT both rise with the batch), from a [`Timing`] model (the performance model,
//!    [`PerfTiming`], in the app);
//! 3. requests/s per replica from Little's law: a replica keeps `B*` requests in flight, each
//!    for `e2e = TTFT + (O − 1) × TPOT`, so it completes `B* / e2e` requests per second
//!    (equivalently, concurrency = rate × latency);
//! 4. replicas `= ceil(rate / per-replica rate)` (at least 1) for the average and the peak
//!    (`average × peak multiplier`, the chapter's Black-Friday 400 %), GPUs `= replicas × tp`,
//!    cost per hour `= GPUs × price`, per month `× 730 h`, headroom `= capacity / load − 1`.
//!
//! A replica serves by continuous batching with chunked prefill ([`PerfTiming`]): `B`
//! sequences are in flight and a new request joins as one leaves. In steady state each request
//! is prefilled once over its `O` decode steps, so every step also carries `B / O` prompts:
//! - `TPOT(B) = decode(B) + prefill(B) / O` (one decode step of the `B` sequences, plus its share
//!   of the prompts; `prefill(B)` is the prefill pass over `B` prompts);
//! - `TTFT(B) = prefill(1) + TPOT(B)` (its own prompt, plus waiting for the step in flight;
//!   `prefill(1)` alone at `B = 1`, when no other sequence is in flight).
//!
//! Over a request's life `TTFT + (O − 1) × TPOT = prefill(1) + O × decode(B) + prefill(B)`: the
//! same GPU time as the static batch of the performance model (`prefill(B) + (O − 1) ×
//! decode(B)`) plus one prompt and one step, so throughput per replica barely moves while TTFT
//! no longer grows with the whole batch's prompts (the static batch prefills all `B` prompts
//! before the first token, which made long prompts limit the batch through TTFT). Queueing
//! delay is not modelled (replicas keep the arrival rate at or below the service rate; headroom
//! is the margin).
//!
//! Replicas stay inside one node (the chapter: 900 GB/s inside, ≈ 50 GB/s across, 18× less);
//! traffic is served by adding replicas. A model that needs more GPUs than a node holds gets a
//! row with [`Reason::CrossesNodes`].
//!
//! Several prompt/output length buckets (at most [`MAX_BUCKETS`], shares summing to 1) are
//! served as one mixed batch: a step of a mixed batch costs the share-weighted mean of the
//! per-bucket step times (exact for the linear parts: weights read once, KV and FLOPs per
//! sequence), memory holds the share-weighted mean KV per sequence, and the mean request takes
//! `TTFT + (Ō − 1) × TPOT`.

use crate::core::base::derivation::{Derivation, Source, Term};
use crate::core::base::dtype::Dtype;
use crate::core::base::error::{CalcError, Phrase};
use crate::core::base::units::{fmt_sig, Seconds};
use crate::core::calc::loading;
use crate::core::calc::perf::{self, Efficiencies, Workload};
use crate::core::hardware::catalog::{Accelerator, Catalog, Topology};
use crate::core::model::{Mixer, ModelDesc};
use serde::{Deserialize, Serialize};

/// Hours in a month for monthly cost (8,760 h / 12).
pub const HOURS_PER_MONTH: f64 = 730.0;
/// At most this many length buckets.
pub const MAX_BUCKETS: usize = 5;
/// Largest TP degree tried inside a node (the chapter: a node holds up to 8 GPUs).
pub const MAX_TP_IN_NODE: u64 = 8;
/// Largest TP degree tried for a replica that crosses nodes (to say how many it would need).
pub const MAX_TP_ACROSS_NODES: u64 = 64;
/// Largest batch searched.
pub const MAX_BATCH: u64 = 1_000_000;
/// Accepted GPUs per node, inclusive: one standalone card up to an NVL72 rack (the largest
/// scale-up domain in the catalog).
pub const GPUS_PER_NODE_RANGE: (u32, u32) = (1, 72);
/// Tolerance on the sum of bucket shares.
pub const SHARE_TOLERANCE: f64 = 1e-6;

/// One class of requests: prompt and output lengths and its share of the traffic.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Bucket {
    /// Prompt tokens per request.
    pub input_len: u64,
    /// Generated tokens per request.
    pub output_len: u64,
    /// Fraction of requests, 0–1; all shares sum to 1.
    pub share: f64,
}

/// The traffic to serve.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Traffic {
    /// Average request rate, requests per second (> 0).
    pub avg_rate_rps: f64,
    /// Peak rate / average rate (≥ 1; the chapter's Black Friday: 4 and more).
    pub peak_multiplier: f64,
    /// Length buckets (1 to [`MAX_BUCKETS`]); one bucket = the mean lengths.
    pub buckets: Vec<Bucket>,
}

impl Traffic {
    /// One bucket of mean lengths.
    pub fn mean(
        avg_rate_rps: f64,
        peak_multiplier: f64,
        input_len: u64,
        output_len: u64,
    ) -> Traffic {
        Traffic {
            avg_rate_rps,
            peak_multiplier,
            buckets: vec![Bucket {
                input_len,
                output_len,
                share: 1.0,
            }],
        }
    }

    /// Peak request rate, requests per second.
    pub fn peak_rate_rps(&self) -> f64 {
        self.avg_rate_rps * self.peak_multiplier
    }

    /// Share-weighted mean prompt and output lengths, tokens.
    pub fn mean_lengths(&self) -> (f64, f64) {
        let i = self
            .buckets
            .iter()
            .map(|b| b.share * b.input_len as f64)
            .sum();
        let o = self
            .buckets
            .iter()
            .map(|b| b.share * b.output_len as f64)
            .sum();
        (i, o)
    }

    /// Checks the rates, multiplier, lengths and shares.
    pub fn validate(&self) -> Result<(), CalcError> {
        let r = self.avg_rate_rps;
        if !(r.is_finite() && r > 0.0 && r <= 1e9) {
            return Err(CalcError::out_of_range(
                Phrase::tr("fld_avg_rate"),
                r,
                Phrase::tr("rng_above0_at_most").val("max", "10^9"),
            ));
        }
        let p = self.peak_multiplier;
        if !(p.is_finite() && (1.0..=1000.0).contains(&p)) {
            return Err(CalcError::out_of_range(
                Phrase::tr("fld_peak_mult"),
                p,
                Phrase::tr("rng_peak_mult"),
            ));
        }
        if self.buckets.is_empty() || self.buckets.len() > MAX_BUCKETS {
            return Err(CalcError::OutOfRange {
                field: Phrase::tr("fld_buckets"),
                value: self.buckets.len().to_string(),
                range: Phrase::tr("rng_from_to")
                    .val("lo", 1)
                    .val("hi", MAX_BUCKETS),
            });
        }
        for b in &self.buckets {
            for (name, v) in [
                ("fld_input_len", b.input_len),
                ("fld_output_len", b.output_len),
            ] {
                if v == 0 || v > 10_000_000 {
                    return Err(CalcError::OutOfRange {
                        field: Phrase::tr(name),
                        value: v.to_string(),
                        range: Phrase::tr("rng_tokens_from_to")
                            .val("lo", 1)
                            .val("hi", "10,000,000"),
                    });
                }
            }
            if !(b.share.is_finite() && b.share > 0.0 && b.share <= 1.0) {
                return Err(CalcError::out_of_range(
                    Phrase::tr("fld_bucket_share"),
                    b.share,
                    Phrase::tr("rng_above0_at_most").val("max", 1),
                ));
            }
        }
        let sum: f64 = self.buckets.iter().map(|b| b.share).sum();
        if (sum - 1.0).abs() > SHARE_TOLERANCE {
            return Err(CalcError::out_of_range(
                Phrase::tr("fld_share_sum"),
                sum,
                Phrase::tr("rng_share_sum"),
            ));
        }
        Ok(())
    }
}

/// Latency targets.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Targets {
    /// Time to first token at most this.
    pub ttft: Seconds,
    /// Time per output token at most this.
    pub tpot: Seconds,
}

impl Targets {
    /// From milliseconds.
    pub fn from_ms(ttft_ms: f64, tpot_ms: f64) -> Targets {
        Targets {
            ttft: Seconds::from_ms(ttft_ms),
            tpot: Seconds::from_ms(tpot_ms),
        }
    }

    fn validate(&self) -> Result<(), CalcError> {
        for (name, v) in [
            ("fld_ttft_target", self.ttft.ms()),
            ("fld_tpot_target", self.tpot.ms()),
        ] {
            if !(v.is_finite() && v > 0.0 && v <= 3_600_000.0) {
                return Err(CalcError::out_of_range(
                    Phrase::tr(name),
                    v,
                    Phrase::tr("rng_above0_at_most").val("max", "3,600,000 ms"),
                ));
            }
        }
        Ok(())
    }
}

/// One candidate accelerator.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    /// Catalog id or alias.
    pub gpu: String,
    /// GPUs in one node; `None` = [`default_gpus_per_node`].
    pub gpus_per_node: Option<u32>,
    /// Price per GPU-hour, US dollars; `None` = the catalog price.
    pub price_usd_per_gpu_hour: Option<f64>,
}

impl Candidate {
    /// A catalog GPU with its default node size and price.
    pub fn new(gpu: &str) -> Candidate {
        Candidate {
            gpu: gpu.to_string(),
            gpus_per_node: None,
            price_usd_per_gpu_hour: None,
        }
    }
}

/// Everything the planner needs besides the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanInputs {
    /// Traffic and lengths.
    pub traffic: Traffic,
    /// Latency targets.
    pub targets: Targets,
    /// Candidate accelerators.
    pub candidates: Vec<Candidate>,
}

/// GPUs per node for an accelerator: its scale-up domain (8 for HGX and PCIe servers, 4 for
/// GeForce boxes, 72 for NVL72, 1 for a standalone chip); bridged cards (domain 2–4) sit in
/// 8-card PCIe servers, so 8.
pub fn default_gpus_per_node(gpu: &Accelerator) -> u32 {
    match gpu.interconnect.topology {
        Topology::Standalone => 1,
        Topology::Bridge => gpu.interconnect.domain_size.max(8),
        _ => gpu.interconnect.domain_size.max(1),
    }
}

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

/// The passes behind [`StepTimes`] under continuous batching (module docs).
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
/// prefill (module docs): `TPOT(B) = decode(B) + prefill(B) / O` and `TTFT(B) = prefill(1) +
/// TPOT(B)` (`prefill(1)` at `B = 1`), where `decode(B)` is perf's decode step at the mean
/// context and `prefill(B)` its prefill pass over `B` prompts; memory at
/// `crate::core::calc::memory::DEFAULT_GPU_MEMORY_UTILIZATION`.
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

    /// vLLM's rule, the one definition: [`crate::core::calc::tp::check_model`].
    fn check_tp(&self, tp: u64) -> Result<(), CalcError> {
        crate::core::calc::tp::check_model(self.model, tp)
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
                * crate::core::calc::memory::DEFAULT_GPU_MEMORY_UTILIZATION,
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
/// best option is one says so ([`Plan::best_lower_bound`], the note `phr_plan_best_lower_bound`).
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

/// Why an option is not the one to pick.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// The weights do not fit (or leave no room for one sequence's KV cache).
    DoesNotFit,
    /// Even at batch 1 the time to first token is above the target.
    MissesTtft,
    /// Even at batch 1 the time per output token is above the target.
    MissesTpot,
    /// Meets the targets but costs more at the peak than the best option.
    MoreExpensive,
    /// The replica would need more GPUs than one node holds.
    CrossesNodes,
    /// Meets the targets but has no price to compare.
    NoPrice,
    /// Meets the targets only on lower-bound times ([`LowerBound`]) while an option timed in
    /// full also meets them.
    LatencyLowerBound,
}

impl Reason {
    /// Stable id (as in JSON).
    pub const fn id(self) -> &'static str {
        match self {
            Reason::DoesNotFit => "does_not_fit",
            Reason::MissesTtft => "misses_ttft",
            Reason::MissesTpot => "misses_tpot",
            Reason::MoreExpensive => "more_expensive",
            Reason::CrossesNodes => "crosses_nodes",
            Reason::NoPrice => "no_price",
            Reason::LatencyLowerBound => "latency_lower_bound",
        }
    }

    /// The i18n key of its label.
    pub const fn label_key(self) -> &'static str {
        match self {
            Reason::DoesNotFit => "plan_reason_does_not_fit",
            Reason::MissesTtft => "plan_reason_misses_ttft",
            Reason::MissesTpot => "plan_reason_misses_tpot",
            Reason::MoreExpensive => "plan_reason_more_expensive",
            Reason::CrossesNodes => "plan_reason_crosses_nodes",
            Reason::NoPrice => "plan_reason_no_price",
            Reason::LatencyLowerBound => "plan_reason_latency_lower_bound",
        }
    }
}

/// One row of the plan: an accelerator at one TP degree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanOption {
    /// Accelerator id.
    pub gpu: String,
    /// Display name.
    pub gpu_name: String,
    /// GPUs per replica.
    pub tp: u64,
    /// GPUs in one node.
    pub gpus_per_node: u32,
    /// Price per GPU-hour (US dollars), when known.
    pub price_usd_per_gpu_hour: Option<f64>,
    /// Largest batch memory allows (0 = the weights do not fit).
    pub max_batch_memory: u64,
    /// The batch used: the largest within memory that meets both targets (0 when none does).
    pub batch: u64,
    /// TTFT at `batch` (at batch 1 when no batch meets the targets).
    pub ttft: Seconds,
    /// TPOT at `batch` (at batch 1 when no batch meets the targets).
    pub tpot: Seconds,
    /// Mean end-to-end latency `TTFT + (Ō − 1) × TPOT`.
    pub e2e: Seconds,
    /// The passes behind TTFT and TPOT at `batch`, when the timing model gives them.
    pub step_parts: Option<StepParts>,
    /// What limits the batch: `memory`, `ttft` or `tpot`.
    pub batch_limited_by: String,
    /// Output tokens per second of one replica, `B × Ō / e2e`.
    pub output_tokens_per_s_per_replica: f64,
    /// Requests per second of one replica, `B / e2e` (Little's law).
    pub requests_per_s_per_replica: f64,
    /// Requests in flight at the average rate, `rate × e2e` (Little's law).
    pub concurrency_avg: f64,
    /// Requests in flight at the peak rate.
    pub concurrency_peak: f64,
    /// Replicas for the average rate, `max(1, ceil(rate / per replica))`.
    pub replicas_avg: u64,
    /// Replicas for the peak rate.
    pub replicas_peak: u64,
    /// GPUs for the average rate, `replicas × tp`.
    pub gpus_avg: u64,
    /// GPUs for the peak rate.
    pub gpus_peak: u64,
    /// Nodes for the peak rate.
    pub nodes_peak: u64,
    /// US dollars per hour at the average rate.
    pub cost_per_hour_avg: Option<f64>,
    /// US dollars per hour at the peak rate.
    pub cost_per_hour_peak: Option<f64>,
    /// US dollars per month (730 h) provisioned for the peak.
    pub cost_per_month_peak: Option<f64>,
    /// US dollars per month (730 h) at the average rate (autoscaled).
    pub cost_per_month_avg: Option<f64>,
    /// US dollars per million output tokens with the average provisioning at the average rate.
    pub usd_per_million_tokens_avg: Option<f64>,
    /// Spare capacity at the average rate, `replicas × per replica / rate − 1`.
    pub headroom_avg: f64,
    /// Spare capacity at the peak rate.
    pub headroom_peak: f64,
    /// Cold start of one more replica (load + engine start-up, `core::loading` defaults): how
    /// long scaling out takes to absorb a surge.
    pub cold_start: Option<Seconds>,
    /// Whether a batch within memory meets both latency targets.
    pub meets_targets: bool,
    /// Set when TTFT and TPOT are only lower bounds (then `meets_targets` is not established;
    /// a miss still is).
    #[serde(default)]
    pub latency_lower_bound: Option<LowerBound>,
    /// Why this option is not the pick (`None` for the best option).
    pub reason: Option<Reason>,
    /// Notes, in either UI language (English in the CLI's JSON).
    pub notes: Vec<Phrase>,
}

/// The planner's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// Model name.
    pub model: String,
    /// Average rate, req/s.
    pub avg_rate_rps: f64,
    /// Peak rate, req/s.
    pub peak_rate_rps: f64,
    /// Mean prompt tokens.
    pub mean_input_len: f64,
    /// Mean output tokens.
    pub mean_output_len: f64,
    /// Targets.
    pub targets: Targets,
    /// Rows: viable options by cost at the peak, then the others.
    pub options: Vec<PlanOption>,
    /// Index into `options` of the best option (cheapest viable at the peak).
    pub best: Option<usize>,
    /// Notes (skipped TP degrees, the cold start of one more replica), in either UI language
    /// (English in the CLI's JSON).
    pub notes: Vec<Phrase>,
    /// Derivations of the best option's headline numbers.
    pub derivations: Vec<Derivation>,
}

impl Plan {
    /// The best option, if any.
    pub fn best_option(&self) -> Option<&PlanOption> {
        self.best.and_then(|i| self.options.get(i))
    }

    /// Why the best option's latency is only a lower bound, when it is (no option timed in
    /// full meets the targets); the plan's notes then say so.
    pub fn best_lower_bound(&self) -> Option<LowerBound> {
        self.best_option().and_then(|o| o.latency_lower_bound)
    }
}

/// Mixed-batch memory: the largest batch whose weights plus share-weighted mean KV fit.
fn max_batch(
    t: &dyn Timing,
    gpu: &Accelerator,
    tp: u64,
    traffic: &Traffic,
) -> Result<u64, CalcError> {
    let mut kv = 0.0;
    let mut need = None;
    for b in &traffic.buckets {
        let m = t.memory(gpu, tp, b.input_len, b.output_len)?;
        kv += b.share * m.kv_bytes_per_seq;
        need = Some(m);
    }
    let Some(m) = need else { return Ok(0) };
    let free = m.usable_bytes - m.weight_bytes;
    if !(free.is_finite() && free > 0.0) {
        return Ok(0);
    }
    if kv <= 0.0 {
        return Ok(MAX_BATCH);
    }
    Ok((free / kv).floor().clamp(0.0, MAX_BATCH as f64) as u64)
}

/// Mixed-batch step times: share-weighted means of the per-bucket TTFT and TPOT.
fn mixed_times(
    t: &dyn Timing,
    gpu: &Accelerator,
    tp: u64,
    batch: u64,
    traffic: &Traffic,
) -> Result<StepTimes, CalcError> {
    let (mut ttft, mut tpot) = (0.0, 0.0);
    let mut parts = Some(StepParts {
        prefill_one: Seconds(0.0),
        prefill_batch: Seconds(0.0),
        decode: Seconds(0.0),
    });
    for b in &traffic.buckets {
        let s = t.times(gpu, tp, batch, b.input_len, b.output_len)?;
        ttft += b.share * s.ttft.0;
        tpot += b.share * s.tpot.0;
        parts = parts.zip(s.parts).map(|(a, p)| StepParts {
            prefill_one: Seconds(a.prefill_one.0 + b.share * p.prefill_one.0),
            prefill_batch: Seconds(a.prefill_batch.0 + b.share * p.prefill_batch.0),
            decode: Seconds(a.decode.0 + b.share * p.decode.0),
        });
    }
    Ok(StepTimes {
        ttft: Seconds(ttft),
        tpot: Seconds(tpot),
        parts,
    })
}

fn meets(s: &StepTimes, t: &Targets) -> bool {
    s.ttft.0 <= t.ttft.0 && s.tpot.0 <= t.tpot.0
}

/// The largest batch in `1..=max_b` that meets the targets, by binary search (both times rise
/// with the batch), with its step times; `None` when batch 1 misses (its times are returned).
fn best_batch(
    t: &dyn Timing,
    gpu: &Accelerator,
    tp: u64,
    max_b: u64,
    traffic: &Traffic,
    targets: &Targets,
) -> Result<(Option<u64>, StepTimes), CalcError> {
    let one = mixed_times(t, gpu, tp, 1, traffic)?;
    if !meets(&one, targets) {
        return Ok((None, one));
    }
    let top = mixed_times(t, gpu, tp, max_b, traffic)?;
    if meets(&top, targets) {
        return Ok((Some(max_b), top));
    }
    // Invariant: lo meets, hi does not.
    let (mut lo, mut hi, mut lo_t) = (1u64, max_b, one);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        let s = mixed_times(t, gpu, tp, mid, traffic)?;
        if meets(&s, targets) {
            lo = mid;
            lo_t = s;
        } else {
            hi = mid;
        }
    }
    Ok((Some(lo), lo_t))
}

fn replicas_for(rate: f64, per_replica: f64) -> u64 {
    if !(per_replica.is_finite() && per_replica > 0.0) {
        return 0;
    }
    (rate / per_replica).ceil().clamp(1.0, 1e15) as u64
}

struct Row<'a> {
    gpu: &'a Accelerator,
    tp: u64,
    gpn: u32,
    price: Option<f64>,
    crosses: bool,
}

/// A row's option before any timing: identity, memory-bound batch cap and cold start, with
/// every timing, fleet and cost figure unset.
fn blank_option(r: &Row, t: &dyn Timing, max_b: u64) -> PlanOption {
    PlanOption {
        gpu: r.gpu.id.clone(),
        gpu_name: r.gpu.name.clone(),
        tp: r.tp,
        gpus_per_node: r.gpn,
        price_usd_per_gpu_hour: r.price,
        max_batch_memory: max_b,
        batch: 0,
        ttft: Seconds(f64::NAN),
        tpot: Seconds(f64::NAN),
        e2e: Seconds(f64::NAN),
        step_parts: None,
        batch_limited_by: "memory".into(),
        output_tokens_per_s_per_replica: 0.0,
        requests_per_s_per_replica: 0.0,
        concurrency_avg: 0.0,
        concurrency_peak: 0.0,
        replicas_avg: 0,
        replicas_peak: 0,
        gpus_avg: 0,
        gpus_peak: 0,
        nodes_peak: 0,
        cost_per_hour_avg: None,
        cost_per_hour_peak: None,
        cost_per_month_peak: None,
        cost_per_month_avg: None,
        usd_per_million_tokens_avg: None,
        headroom_avg: 0.0,
        headroom_peak: 0.0,
        cold_start: t.cold_start(r.gpu, r.tp),
        meets_targets: false,
        latency_lower_bound: None,
        reason: None,
        notes: Vec::new(),
    }
}

/// Marks an option whose batch 1 misses a target: the reason (which target, unless the row
/// crosses nodes), the limiting target and the note giving both times against their targets.
fn mark_missed(o: &mut PlanOption, r: &Row, s: &StepTimes, targets: &Targets) {
    let reason = if s.ttft.0 > targets.ttft.0 {
        Reason::MissesTtft
    } else {
        Reason::MissesTpot
    };
    o.reason = Some(if r.crosses {
        Reason::CrossesNodes
    } else {
        reason
    });
    o.batch_limited_by = if reason == Reason::MissesTtft {
        "ttft".into()
    } else {
        "tpot".into()
    };
    o.notes.push(
        Phrase::tr("phr_plan_at_batch_one")
            .val("ttft", fmt_sig(s.ttft.ms()))
            .val("ttft_target", fmt_sig(targets.ttft.ms()))
            .val("tpot", fmt_sig(s.tpot.ms()))
            .val("tpot_target", fmt_sig(targets.tpot.ms())),
    );
}

/// Fills the fleet of an option that meets the targets at batch `b`: per-replica throughput,
/// concurrency, replicas, GPUs and nodes at the average and peak rates, headroom and costs.
fn fill_fleet(o: &mut PlanOption, r: &Row, traffic: &Traffic, b: u64, mean_o: f64) {
    let e2e = o.e2e.0;
    let per = b as f64 / e2e;
    o.requests_per_s_per_replica = per;
    o.output_tokens_per_s_per_replica = b as f64 * mean_o / e2e;
    let (avg, peak) = (traffic.avg_rate_rps, traffic.peak_rate_rps());
    o.concurrency_avg = avg * e2e;
    o.concurrency_peak = peak * e2e;
    o.replicas_avg = replicas_for(avg, per);
    o.replicas_peak = replicas_for(peak, per);
    o.gpus_avg = o.replicas_avg.saturating_mul(r.tp);
    o.gpus_peak = o.replicas_peak.saturating_mul(r.tp);
    let gpn = u64::from(r.gpn.max(1));
    o.nodes_peak = if r.tp <= gpn {
        o.replicas_peak.div_ceil(gpn / r.tp)
    } else {
        o.replicas_peak.saturating_mul(r.tp.div_ceil(gpn))
    };
    o.headroom_avg = o.replicas_avg as f64 * per / avg - 1.0;
    o.headroom_peak = o.replicas_peak as f64 * per / peak - 1.0;
    if let Some(p) = r.price {
        o.cost_per_hour_avg = Some(o.gpus_avg as f64 * p);
        o.cost_per_hour_peak = Some(o.gpus_peak as f64 * p);
        o.cost_per_month_peak = Some(o.gpus_peak as f64 * p * HOURS_PER_MONTH);
        o.cost_per_month_avg = Some(o.gpus_avg as f64 * p * HOURS_PER_MONTH);
        // Dollars per hour at the average provisioning over output tokens per hour served.
        o.usd_per_million_tokens_avg = Some(o.gpus_avg as f64 * p / (avg * mean_o * 3600.0) * 1e6);
    }
}

/// One plan option for a row: the memory-bound batch, the largest batch meeting the targets,
/// its step times, and the fleet and costs it implies (or why the row fails).
fn option_row(r: &Row, t: &dyn Timing, inp: &PlanInputs) -> Result<PlanOption, CalcError> {
    let traffic = &inp.traffic;
    let (_, mean_o) = traffic.mean_lengths();
    let max_b = max_batch(t, r.gpu, r.tp, traffic)?;
    let mut o = blank_option(r, t, max_b);
    if r.crosses {
        o.notes.push(
            Phrase::tr("phr_plan_spans_nodes")
                .val("gpu", &r.gpu.name)
                .val("tp", r.tp)
                .val("nodes", r.tp.div_ceil(u64::from(r.gpn.max(1))))
                .val("gpn", r.gpn),
        );
    }
    if max_b == 0 {
        o.reason = Some(if r.crosses {
            Reason::CrossesNodes
        } else {
            Reason::DoesNotFit
        });
        o.notes.push(
            Phrase::tr("phr_plan_does_not_fit")
                .val("gpu", &r.gpu.name)
                .val("tp", r.tp),
        );
        return Ok(o);
    }
    let (batch, s) = best_batch(t, r.gpu, r.tp, max_b, traffic, &inp.targets)?;
    o.latency_lower_bound = t.lower_bound(r.gpu, r.tp);
    if let Some(lb) = o.latency_lower_bound {
        o.notes.push(lb.phrase(&r.gpu.name));
    }
    o.ttft = s.ttft;
    o.tpot = s.tpot;
    o.step_parts = s.parts;
    o.e2e = Seconds(s.ttft.0 + (mean_o - 1.0).max(0.0) * s.tpot.0);
    let Some(b) = batch else {
        mark_missed(&mut o, r, &s, &inp.targets);
        return Ok(o);
    };
    o.batch = b;
    o.meets_targets = true;
    o.batch_limited_by = if b == max_b {
        "memory".into()
    } else {
        let next = mixed_times(t, r.gpu, r.tp, b + 1, traffic)?;
        if next.tpot.0 > inp.targets.tpot.0 {
            "tpot".into()
        } else {
            "ttft".into()
        }
    };
    fill_fleet(&mut o, r, traffic, b, mean_o);
    if r.crosses {
        o.reason = Some(Reason::CrossesNodes);
    }
    Ok(o)
}

fn price_of(gpu: &Accelerator, given: Option<f64>) -> Result<Option<f64>, CalcError> {
    match given {
        Some(p) if !(p.is_finite() && (0.0..=1e6).contains(&p)) => Err(CalcError::out_of_range(
            Phrase::tr("fld_price").val("gpu", &gpu.name),
            p,
            Phrase::tr("rng_from_to")
                .val("lo", 0)
                .val("hi", "1,000,000"),
        )),
        Some(p) => Ok(Some(p)),
        None => Ok(gpu
            .price
            .as_ref()
            .map(|p| p.usd_per_hour)
            .filter(|p| p.is_finite() && *p >= 0.0)),
    }
}

/// When no TP degree inside a node fits the model: the row of the smallest TP beyond
/// `r.tp` (the node's largest) that fits, to say how many GPUs a replica would need.
fn cross_node_row(r: &Row, t: &dyn Timing, inp: &PlanInputs) -> Option<PlanOption> {
    let mut tp = (r.tp + 1).next_power_of_two();
    while tp <= MAX_TP_ACROSS_NODES {
        if t.check_tp(tp).is_ok() && max_batch(t, r.gpu, tp, &inp.traffic).unwrap_or(0) > 0 {
            return option_row(&Row { tp, ..*r }, t, inp).ok();
        }
        tp *= 2;
    }
    None
}

/// Every option row, ranked, without judging feasibility (the UI shows these next to an
/// error). Rows: viable options (meet the targets, inside one node) by cost at the peak, then
/// the rest. Unknown GPU ids and bad inputs are errors.
pub fn options(inp: &PlanInputs, catalog: &Catalog, t: &dyn Timing) -> Result<Plan, CalcError> {
    inp.traffic.validate()?;
    inp.targets.validate()?;
    if inp.candidates.is_empty() {
        return Err(CalcError::OutOfRange {
            field: Phrase::tr("fld_candidates"),
            value: "0".into(),
            range: Phrase::tr("rng_one_accel"),
        });
    }
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    for c in &inp.candidates {
        let gpu = catalog.get(&c.gpu)?;
        let (lo, hi) = GPUS_PER_NODE_RANGE;
        let gpn = match c.gpus_per_node {
            Some(n) if n < lo || n > hi => {
                return Err(CalcError::OutOfRange {
                    field: Phrase::tr("fld_gpus_per_node").val("gpu", &gpu.name),
                    value: n.to_string(),
                    range: Phrase::tr("rng_whole_from_to").val("lo", lo).val("hi", hi),
                })
            }
            Some(n) => n,
            None => default_gpus_per_node(gpu),
        };
        let price = price_of(gpu, c.price_usd_per_gpu_hour)?;
        let in_node_max = MAX_TP_IN_NODE.min(u64::from(gpn));
        let mut any_fits = false;
        let mut tp = 1u64;
        while tp <= in_node_max {
            if let Err(e) = t.check_tp(tp) {
                notes.push(
                    Phrase::tr("phr_plan_tp_skipped")
                        .val("tp", tp)
                        .val("gpu", &gpu.name)
                        .sub("why", Phrase::error(e)),
                );
            } else {
                match option_row(
                    &Row {
                        gpu,
                        tp,
                        gpn,
                        price,
                        crosses: false,
                    },
                    t,
                    inp,
                ) {
                    Ok(o) => {
                        any_fits |= o.max_batch_memory > 0;
                        rows.push(o);
                    }
                    Err(e) => notes.push(
                        Phrase::tr("phr_plan_option_skipped")
                            .val("gpu", &gpu.name)
                            .val("tp", tp)
                            .sub("why", Phrase::error(e)),
                    ),
                }
            }
            tp *= 2;
        }
        if !any_fits {
            let beyond = Row {
                gpu,
                tp: in_node_max,
                gpn,
                price,
                crosses: true,
            };
            rows.extend(cross_node_row(&beyond, t, inp));
        }
    }
    rank(&mut rows);
    let best = rows
        .iter()
        .position(|o| o.meets_targets && o.reason.is_none());
    if let Some(o) = best
        .and_then(|i| rows.get(i))
        .filter(|o| o.latency_lower_bound.is_some())
    {
        notes.push(
            Phrase::tr("phr_plan_best_lower_bound")
                .val("gpu", &o.gpu_name)
                .val("tp", o.tp),
        );
    }
    if let Some(c) = best.and_then(|i| rows.get(i)).and_then(|o| o.cold_start) {
        notes.push(Phrase::tr("phr_plan_cold_start").val("s", fmt_sig(c.0)));
    }
    let derivations = best
        .and_then(|i| rows.get(i))
        .map(|o| plan_derivations(o, inp))
        .unwrap_or_default();
    let (mi, mo) = inp.traffic.mean_lengths();
    Ok(Plan {
        model: t.model_name(),
        avg_rate_rps: inp.traffic.avg_rate_rps,
        peak_rate_rps: inp.traffic.peak_rate_rps(),
        mean_input_len: mi,
        mean_output_len: mo,
        targets: inp.targets,
        options: rows,
        best,
        notes,
        derivations,
    })
}

fn viable(o: &PlanOption) -> bool {
    o.meets_targets && o.reason != Some(Reason::CrossesNodes)
}

/// Sorts rows (viable and timed in full by cost at peak, unpriced after priced; then viable
/// on lower-bound times only, likewise; then the rest) and assigns `MoreExpensive` / `NoPrice`
/// / `LatencyLowerBound` to viable rows other than the first. The best is thus timed in full
/// whenever such an option meets the targets.
fn rank(rows: &mut [PlanOption]) {
    let key = |o: &PlanOption| {
        let group = if viable(o) && o.latency_lower_bound.is_none() {
            0
        } else if viable(o) {
            1
        } else if o.meets_targets {
            2
        } else {
            match o.reason {
                Some(Reason::CrossesNodes) => 3,
                Some(Reason::MissesTpot) | Some(Reason::MissesTtft) => 4,
                _ => 5,
            }
        };
        (
            group,
            o.cost_per_hour_peak.unwrap_or(f64::INFINITY),
            o.gpus_peak,
        )
    };
    crate::core::base::order::sort_by(rows, &|a, b| {
        let (ga, ca, na) = key(a);
        let (gb, cb, nb) = key(b);
        ga.cmp(&gb)
            .then(ca.total_cmp(&cb))
            .then(na.cmp(&nb))
            .then(a.gpu.cmp(&b.gpu))
            .then(a.tp.cmp(&b.tp))
    });
    let mut first = true;
    for o in rows.iter_mut().filter(|o| viable(o)) {
        if first {
            o.reason = None;
            first = false;
        } else if o.latency_lower_bound.is_some() {
            o.reason = Some(Reason::LatencyLowerBound);
        } else {
            o.reason = Some(if o.cost_per_hour_peak.is_some() {
                Reason::MoreExpensive
            } else {
                Reason::NoPrice
            });
        }
    }
}

/// Plans capacity and reports impossible inputs as errors: a model that fits on no candidate
/// inside one node, a TTFT or TPOT target below what any option reaches at batch 1, or targets
/// that no single option meets together.
pub fn plan(inp: &PlanInputs, catalog: &Catalog, t: &dyn Timing) -> Result<Plan, CalcError> {
    let p = options(inp, catalog, t)?;
    if p.best.is_some() {
        return Ok(p);
    }
    feasibility_error(&p).map_or(Ok(p), Err)
}

/// Why a plan without a best option has none, as an error (`None` when it has one).
pub fn feasibility_error(p: &Plan) -> Option<CalcError> {
    if p.best.is_some() {
        return None;
    }
    let in_node: Vec<&PlanOption> = p
        .options
        .iter()
        .filter(|o| o.max_batch_memory > 0 && o.reason != Some(Reason::CrossesNodes))
        .collect();
    if in_node.is_empty() {
        let need = p
            .options
            .iter()
            .filter(|o| o.reason == Some(Reason::CrossesNodes))
            .map(|o| {
                Phrase::tr("phr_needs_tp")
                    .val("gpu", &o.gpu_name)
                    .val("tp", o.tp)
            })
            .collect::<Vec<_>>();
        return Some(CalcError::NoOptionFits {
            model: p.model.clone(),
            detail: if !need.is_empty() {
                Phrase::List(need)
            } else if let (true, Some(n)) = (p.options.is_empty(), p.notes.first()) {
                n.clone()
            } else {
                Phrase::tr("phr_no_candidate_holds")
            },
        });
    }
    let fastest = |f: fn(&PlanOption) -> f64| {
        in_node
            .iter()
            .min_by(|a, b| f(a).total_cmp(&f(b)))
            .map(|o| (f(o), format!("{} × TP {}", o.gpu_name, o.tp)))
    };
    if let Some((best, opt)) = fastest(|o| o.tpot.0) {
        if best > p.targets.tpot.0 {
            return Some(CalcError::TargetTooTight {
                metric: "TPOT".into(),
                target_ms: fmt_sig(p.targets.tpot.ms()),
                best_ms: fmt_sig(best * 1e3),
                option: opt,
            });
        }
    }
    if let Some((best, opt)) = fastest(|o| o.ttft.0) {
        if best > p.targets.ttft.0 {
            return Some(CalcError::TargetTooTight {
                metric: "TTFT".into(),
                target_ms: fmt_sig(p.targets.ttft.ms()),
                best_ms: fmt_sig(best * 1e3),
                option: opt,
            });
        }
    }
    Some(CalcError::NoOptionMeetsTargets {
        ttft_ms: fmt_sig(p.targets.ttft.ms()),
        tpot_ms: fmt_sig(p.targets.tpot.ms()),
    })
}

/// [`plan`] with the performance model for `model`.
pub fn plan_model(
    inp: &PlanInputs,
    catalog: &Catalog,
    model: &ModelDesc,
    weights_dtype: Option<Dtype>,
    kv_dtype: Option<Dtype>,
    eff: &Efficiencies,
) -> Result<Plan, CalcError> {
    let t = PerfTiming {
        model,
        eff: *eff,
        weights_dtype,
        kv_dtype,
    };
    plan(inp, catalog, &t)
}

/// TTFT and TPOT under continuous batching (module docs), when the passes are known.
fn step_derivations(o: &PlanOption, mo: f64) -> Vec<Derivation> {
    let Some(p) = o.step_parts else {
        return Vec::new();
    };
    let ms = |x: Seconds| fmt_sig(x.ms());
    // At batch 1 nothing is in flight, so a new request waits for no step.
    let (wait, wait_note) = if o.batch > 1 {
        (format!(" + {} ms", ms(o.tpot)), "note_ttft_wait")
    } else {
        (" + 0".to_string(), "note_ttft_batch1")
    };
    let term = |sym: &str, key: &str, x: Seconds, why: String| {
        Term::num(sym, key, x.ms(), "ms", Source::Derived(why))
    };
    vec![
        Derivation {
            title_key: "plan_tpot_under_load".into(),
            formula: "t_dec(B) + t_pre(B) / Ō".into(),
            substituted: format!(
                "{} ms + {} ms / {}",
                ms(p.decode),
                ms(p.prefill_batch),
                fmt_sig(mo)
            ),
            result: format!("{} ms", ms(o.tpot)),
            terms: vec![
                term(
                    "t_dec(B)",
                    "term_decode_step",
                    p.decode,
                    "src_decode_step_of_batch".into(),
                ),
                term(
                    "t_pre(B)",
                    "term_prefill_batch",
                    p.prefill_batch,
                    "src_prefill_pass_of_batch".into(),
                ),
            ],
            notes: vec!["note_chunked_prefill".into()],
            ..Default::default()
        },
        Derivation {
            title_key: "plan_ttft_under_load".into(),
            formula: "t_pre(1) + TPOT(B)".into(),
            substituted: format!("{} ms{wait}", ms(p.prefill_one)),
            result: format!("{} ms", ms(o.ttft)),
            terms: vec![term(
                "t_pre(1)",
                "term_prefill_one",
                p.prefill_one,
                "src_prefill_one_prompt".into(),
            )],
            notes: vec![wait_note.into()],
            ..Default::default()
        },
    ]
}

fn plan_derivations(o: &PlanOption, inp: &PlanInputs) -> Vec<Derivation> {
    let (_, mo) = inp.traffic.mean_lengths();
    let mut v = step_derivations(o, mo);
    v.extend([
        Derivation {
            title_key: "plan_e2e".into(),
            formula: "TTFT + (Ō − 1) × TPOT".into(),
            substituted: format!(
                "{} ms + ({} − 1) × {} ms",
                fmt_sig(o.ttft.ms()),
                fmt_sig(mo),
                fmt_sig(o.tpot.ms())
            ),
            result: format!("{} s", fmt_sig(o.e2e.0)),
            terms: vec![
                Term::num(
                    "B",
                    "term_batch",
                    o.batch as f64,
                    "",
                    Source::Derived(
                        match o.batch_limited_by.as_str() {
                            "memory" => "src_batch_limited_by_memory",
                            "ttft" => "src_batch_limited_by_ttft",
                            _ => "src_batch_limited_by_tpot",
                        }
                        .into(),
                    ),
                ),
                Term::num(
                    "Ō",
                    "term_output_len",
                    mo,
                    "unit_tokens",
                    Source::User("output_len".into()),
                ),
            ],
            notes: vec![],
            ..Default::default()
        },
        Derivation {
            result_key: "drv_n_rps".into(),
            title_key: "plan_requests_per_replica".into(),
            formula: "B / e2e".into(),
            substituted: format!("{} / {} s", o.batch, fmt_sig(o.e2e.0)),
            result: fmt_sig(o.requests_per_s_per_replica),
            terms: vec![],
            notes: vec!["note_littles_law".into()],
        },
        Derivation {
            result_key: "drv_n_replicas".into(),
            title_key: "plan_replicas_peak".into(),
            formula: "⌈λ × k_peak / r⌉".into(),
            substituted: format!(
                "⌈{} × {} / {}⌉ (× {} = {} GPU)",
                fmt_sig(inp.traffic.avg_rate_rps),
                fmt_sig(inp.traffic.peak_multiplier),
                fmt_sig(o.requests_per_s_per_replica),
                o.tp,
                o.gpus_peak
            ),
            result: o.replicas_peak.to_string(),
            terms: vec![
                Term::num(
                    "λ",
                    "term_rate",
                    inp.traffic.avg_rate_rps,
                    "view_unit_rps",
                    Source::User("rate".into()),
                ),
                Term::num(
                    "k_peak",
                    "term_peak_multiplier",
                    inp.traffic.peak_multiplier,
                    "×",
                    Source::User("peak_multiplier".into()),
                ),
                Term::num(
                    "r",
                    "term_rps_per_replica",
                    o.requests_per_s_per_replica,
                    "view_unit_rps",
                    Source::Derived("plan_requests_per_replica".into()),
                ),
            ],
            notes: vec![],
        },
    ]);
    if let (Some(p), Some(c)) = (o.price_usd_per_gpu_hour, o.cost_per_hour_peak) {
        v.push(Derivation {
            title_key: "plan_cost_peak".into(),
            formula: "N × tp × price".into(),
            substituted: format!("{} × {} × ${}", o.replicas_peak, o.tp, fmt_sig(p)),
            result: format!(
                "${}/h (× {} h = ${})",
                fmt_sig(c),
                fmt_sig(HOURS_PER_MONTH),
                fmt_sig(c * HOURS_PER_MONTH)
            ),
            terms: vec![
                Term::num(
                    "N",
                    "term_replicas_peak",
                    o.replicas_peak as f64,
                    "",
                    Source::Derived("plan_replicas_peak".into()),
                ),
                Term::num(
                    "price",
                    "term_price",
                    p,
                    "$/GPU-h",
                    Source::Catalog("price_usd_per_hour".into()),
                ),
            ],
            notes: vec![],
            ..Default::default()
        });
    }
    v
}

/// One option's cost as the load varies.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CostSeries {
    /// Accelerator id.
    pub gpu: String,
    /// TP degree.
    pub tp: u64,
    /// US dollars per hour at each rate of [`CostCurve::rates_rps`].
    pub cost_per_hour: Vec<f64>,
}

/// Cost per hour against the request rate, for a chart.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CostCurve {
    /// Request rates from 0 to 2 × the peak, req/s.
    pub rates_rps: Vec<f64>,
    /// One series per viable priced option.
    pub series: Vec<CostSeries>,
    /// The cheapest option's cost at each rate.
    pub cheapest: Vec<f64>,
}

/// Cost per hour of every viable priced option at `points` rates from 0 to 2 × the peak:
/// `max(1, ceil(rate / per replica)) × tp × price` (one replica stays up at zero load).
pub fn cost_curve(p: &Plan, points: usize) -> CostCurve {
    let n = points.clamp(2, 1000);
    let top = 2.0 * p.peak_rate_rps;
    let rates: Vec<f64> = (0..n).map(|i| top * i as f64 / (n - 1) as f64).collect();
    let series: Vec<CostSeries> = p
        .options
        .iter()
        .filter(|o| viable(o))
        .filter_map(|o| {
            let price = o.price_usd_per_gpu_hour?;
            Some(CostSeries {
                gpu: o.gpu.clone(),
                tp: o.tp,
                cost_per_hour: rates
                    .iter()
                    .map(|r| {
                        replicas_for(*r, o.requests_per_s_per_replica).max(1) as f64
                            * o.tp as f64
                            * price
                    })
                    .collect(),
            })
        })
        .collect();
    let cheapest = (0..n)
        .map(|i| {
            series
                .iter()
                .filter_map(|s| s.cost_per_hour.get(i).copied())
                .fold(f64::INFINITY, f64::min)
        })
        .map(|c| if c.is_finite() { c } else { f64::NAN })
        .collect();
    CostCurve {
        rates_rps: rates,
        series,
        cheapest,
    }
}

/// A line of models in several sizes, for "largest model that meets the target" (the chapter:
/// a well-served 32B or 70B can replace an 8B on the same hardware at the same latency).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    /// Qwen3 dense: 8B, 32B.
    Qwen3,
    /// Llama 3.1 / 3.2: 1B, 3B, 8B, 70B, 405B.
    Llama3,
    /// Qwen2.5 Instruct: 7B, 32B.
    Qwen25,
    /// Llama 2: 7B, 13B.
    Llama2,
    /// Qwen3 mixture of experts: 30B-A3B, 235B-A22B.
    Qwen3Moe,
    /// Mixtral: 8x7B, 8x22B.
    Mixtral,
    /// gpt-oss: 20b, 120b.
    GptOss,
}

impl Family {
    /// Every family, in display order.
    pub const ALL: &'static [Family] = &[
        Family::Qwen3,
        Family::Llama3,
        Family::Qwen25,
        Family::Llama2,
        Family::Qwen3Moe,
        Family::Mixtral,
        Family::GptOss,
    ];

    /// Stable id (URL `pl_fam`, CLI `--family`, JSON).
    pub const fn id(self) -> &'static str {
        match self {
            Family::Qwen3 => "qwen3",
            Family::Llama3 => "llama3",
            Family::Qwen25 => "qwen2.5",
            Family::Llama2 => "llama2",
            Family::Qwen3Moe => "qwen3-moe",
            Family::Mixtral => "mixtral",
            Family::GptOss => "gpt-oss",
        }
    }

    /// Display name (a product name, the same in every language).
    pub const fn name(self) -> &'static str {
        match self {
            Family::Qwen3 => "Qwen3",
            Family::Llama3 => "Llama 3.x",
            Family::Qwen25 => "Qwen2.5",
            Family::Llama2 => "Llama 2",
            Family::Qwen3Moe => "Qwen3 MoE",
            Family::Mixtral => "Mixtral",
            Family::GptOss => "gpt-oss",
        }
    }

    /// Ids of its presets (`core::presets`), smallest first.
    pub const fn preset_ids(self) -> &'static [&'static str] {
        match self {
            Family::Qwen3 => &["qwen3-8b", "qwen3-32b"],
            Family::Llama3 => &[
                "llama-3.2-1b-instruct",
                "llama-3.2-3b-instruct",
                "llama-3.1-8b",
                "llama-3.1-70b",
                "llama-3.1-405b",
            ],
            Family::Qwen25 => &["qwen2.5-7b-instruct", "qwen2.5-32b-instruct"],
            Family::Llama2 => &["llama-2-7b", "llama-2-13b"],
            Family::Qwen3Moe => &["qwen3-30b-a3b", "qwen3-235b-a22b"],
            Family::Mixtral => &["mixtral-8x7b", "mixtral-8x22b"],
            Family::GptOss => &["gpt-oss-20b", "gpt-oss-120b"],
        }
    }

    /// The family with this id (case-insensitive; `qwen2_5` and `qwen25` also work).
    pub fn parse(s: &str) -> Result<Family, CalcError> {
        let norm = |x: &str| {
            x.trim()
                .to_ascii_lowercase()
                .replace(['.', '-', '_', ' '], "")
        };
        let t = norm(s);
        Family::ALL
            .iter()
            .copied()
            .find(|f| !t.is_empty() && norm(f.id()) == t)
            .ok_or_else(|| CalcError::BadValue {
                key: "model family".into(),
                found: Phrase::quoted(s),
                expected: Phrase::tr("exp_one_of").val(
                    "list",
                    Family::ALL
                        .iter()
                        .map(|f| f.id())
                        .collect::<Vec<_>>()
                        .join(", "),
                ),
            })
    }

    /// The parsed models of the family, smallest first, named by their presets' display names.
    pub fn models(self) -> Result<Vec<ModelDesc>, CalcError> {
        self.preset_ids()
            .iter()
            .map(|id| {
                crate::core::model::presets::get(id)
                    .ok_or_else(|| CalcError::BadValue {
                        key: "preset".into(),
                        found: Phrase::verbatim(*id),
                        expected: Phrase::tr("exp_compiled_preset"),
                    })
                    .and_then(|p| {
                        // The preset's display name ("Qwen3 32B"), not the config's model type.
                        p.parse().map(|mut m| {
                            m.name.clone_from(&p.name);
                            m
                        })
                    })
            })
            .collect()
    }
}

/// Verdict for one model in "largest model that meets the target".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelVerdict {
    /// Model name.
    pub model: String,
    /// Total parameters.
    pub params_total: u64,
    /// Parameters active per token.
    pub params_active: u64,
    /// Whether the weights (plus one sequence's KV cache) fit inside one node of some candidate.
    pub fits: bool,
    /// Whether some option fits and meets the targets.
    pub meets_targets: bool,
    /// The best option for this model (cheapest at the peak among those meeting the targets).
    pub best: Option<PlanOption>,
    /// Why not, when it does not (one English sentence).
    pub why_not: Option<String>,
    /// The same as a typed error (for a translated sentence).
    #[serde(skip)]
    pub error: Option<CalcError>,
}

/// "Largest model that meets the target": plans each model on the same candidates, traffic
/// and targets; largest (total parameters) first. The first verdict with `meets_targets` is
/// the answer. Unknown GPUs and bad inputs are errors; a model that misses is a verdict.
pub fn largest_models(
    models: &[ModelDesc],
    inp: &PlanInputs,
    catalog: &Catalog,
    weights_dtype: Option<Dtype>,
    kv_dtype: Option<Dtype>,
    eff: &Efficiencies,
) -> Result<Vec<ModelVerdict>, CalcError> {
    inp.traffic.validate()?;
    inp.targets.validate()?;
    let mut out = Vec::with_capacity(models.len());
    for m in models {
        let t = PerfTiming {
            model: m,
            eff: *eff,
            weights_dtype,
            kv_dtype,
        };
        let (fits, best, error) = match options(inp, catalog, &t) {
            Ok(p) => (
                p.options
                    .iter()
                    .any(|o| o.max_batch_memory > 0 && o.reason != Some(Reason::CrossesNodes)),
                p.best_option().cloned(),
                feasibility_error(&p),
            ),
            Err(e @ (CalcError::UnknownGpu { .. } | CalcError::OutOfRange { .. })) => {
                return Err(e)
            }
            Err(e) => (false, None, Some(e)),
        };
        out.push(ModelVerdict {
            model: m.name.clone(),
            params_total: m.params.total,
            params_active: m.params.active,
            fits,
            meets_targets: best.is_some(),
            best,
            why_not: error.as_ref().map(ToString::to_string),
            error,
        });
    }
    crate::core::base::order::sort_by(&mut out, &|a, b| b.params_total.cmp(&a.params_total));
    Ok(out)
}

/// "Largest model that meets the target" for one [`Family`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LargestReport {
    /// The family.
    pub family: Family,
    /// One verdict per size, largest first.
    pub verdicts: Vec<ModelVerdict>,
    /// Index into `verdicts` of the largest size that meets the targets.
    pub largest: Option<usize>,
    /// Index into `verdicts` of the next smaller size that also meets the targets, to compare
    /// with (the chapter: the 8B a tuned deployment can replace with a 32B or 70B).
    pub next_smaller: Option<usize>,
}

/// [`largest_models`] over the sizes of a family.
pub fn largest_in_family(
    family: Family,
    inp: &PlanInputs,
    catalog: &Catalog,
    weights_dtype: Option<Dtype>,
    kv_dtype: Option<Dtype>,
    eff: &Efficiencies,
) -> Result<LargestReport, CalcError> {
    let models = family.models()?;
    let verdicts = largest_models(&models, inp, catalog, weights_dtype, kv_dtype, eff)?;
    let largest = verdicts.iter().position(|v| v.meets_targets);
    let next_smaller = largest.and_then(|i| {
        verdicts
            .iter()
            .enumerate()
            .skip(i + 1)
            .find(|(_, v)| v.meets_targets && v.params_total < verdicts[i].params_total)
            .map(|(j, _)| j)
    });
    Ok(LargestReport {
        family,
        verdicts,
        largest,
        next_smaller,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::model::presets;

    fn model(id: &str) -> ModelDesc {
        presets::get(id)
            .map(|p| p.parse())
            .unwrap_or_else(|| panic!("preset {id}"))
            .unwrap_or_else(|e| panic!("{e}"))
    }

    fn inputs(rate: f64, gpus: &[&str], ttft_ms: f64, tpot_ms: f64) -> PlanInputs {
        PlanInputs {
            traffic: Traffic::mean(rate, 4.0, 1024, 256),
            targets: Targets::from_ms(ttft_ms, tpot_ms),
            candidates: gpus.iter().map(|g| Candidate::new(g)).collect(),
        }
    }

    #[test]
    fn best_batch_is_the_largest_meeting_the_targets() {
        // Check the binary search against a linear scan with the performance model.
        let m = model("meta-llama__Llama-2-7b-hf");
        let t = PerfTiming::new(&m);
        let g = Catalog::builtin()
            .get("l40s")
            .unwrap_or_else(|e| panic!("{e}"));
        let inp = inputs(1.0, &["l40s"], 2000.0, 30.0);
        let max_b = max_batch(&t, g, 1, &inp.traffic).unwrap_or(0);
        assert!(max_b > 2, "{max_b}");
        let (b, _) = best_batch(&t, g, 1, max_b, &inp.traffic, &inp.targets)
            .unwrap_or_else(|e| panic!("{e}"));
        let scan = (1..=max_b)
            .filter(|&b| {
                mixed_times(&t, g, 1, b, &inp.traffic).is_ok_and(|s| meets(&s, &inp.targets))
            })
            .max();
        assert_eq!(b, scan);
        // The memory limit equals perf's max batch for one bucket.
        let wl = Workload::new(1, 1024, 256, 1);
        assert_eq!(max_b, perf::max_batch_for(&m, g, &wl));
    }

    #[test]
    fn buckets_average_like_the_mean_for_linear_costs() {
        // Two buckets with the same lengths behave exactly like one.
        let m = model("meta-llama__Llama-2-7b-hf");
        let t = PerfTiming::new(&m);
        let one = inputs(2.0, &["h100-sxm"], 1000.0, 40.0);
        let mut two = one.clone();
        two.traffic.buckets = vec![
            Bucket {
                input_len: 1024,
                output_len: 256,
                share: 0.25,
            },
            Bucket {
                input_len: 1024,
                output_len: 256,
                share: 0.75,
            },
        ];
        let a = plan(&one, Catalog::builtin(), &t).unwrap_or_else(|e| panic!("{e}"));
        let b = plan(&two, Catalog::builtin(), &t).unwrap_or_else(|e| panic!("{e}"));
        let (x, y) = (a.best_option(), b.best_option());
        assert_eq!(
            x.map(|o| (o.batch, o.replicas_peak)),
            y.map(|o| (o.batch, o.replicas_peak))
        );
        assert!(x
            .zip(y)
            .is_some_and(|(x, y)| (x.e2e.0 / y.e2e.0 - 1.0).abs() < 1e-12));
    }

    #[test]
    fn shares_must_sum_to_one() {
        let mut t = Traffic::mean(1.0, 4.0, 100, 100);
        t.buckets = vec![
            Bucket {
                input_len: 100,
                output_len: 100,
                share: 0.5,
            },
            Bucket {
                input_len: 10,
                output_len: 10,
                share: 0.4,
            },
        ];
        assert!(matches!(t.validate(), Err(CalcError::OutOfRange { .. })));
        t.buckets = vec![
            Bucket {
                input_len: 100,
                output_len: 100,
                share: 1.0
            };
            6
        ];
        assert!(t.validate().is_err());
    }

    #[test]
    fn tp_must_divide_heads_and_bridges_sit_in_eight_card_nodes() {
        // Qwen3-32B: 64 query heads, 8 KV heads → TP 1–8 split whole heads; TP 3 does not.
        let m = model("Qwen__Qwen3-32B");
        let t = PerfTiming::new(&m);
        assert!([1, 2, 4, 8, 16].iter().all(|tp| t.check_tp(*tp).is_ok()));
        assert!(t.check_tp(3).is_err());
        let c = Catalog::builtin();
        let g = |id: &str| c.get(id).map(default_gpus_per_node).unwrap_or(0);
        assert_eq!(g("h100-pcie"), 8);
        assert_eq!(g("h100-sxm"), 8);
        assert_eq!(g("rtx-4090"), 4);
        assert_eq!(g("gb200"), 72);
    }
}
