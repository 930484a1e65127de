//! The planner's answer: one [`PlanOption`] per accelerator and TP degree, the [`Reason`] an
//! option is not the one to pick, and the [`Plan`] that ranks them; [`HOURS_PER_MONTH`] turns its
//! hourly costs into monthly ones.

use super::timing::{LowerBound, StepParts};
use super::traffic::Targets;
use crate::base::derivation::Derivation;
use crate::base::error::Phrase;
use crate::base::units::Seconds;
use serde::{Deserialize, Serialize};

/// Hours in a month for monthly cost (8,760 h / 12).
pub const HOURS_PER_MONTH: f64 = 730.0;

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
