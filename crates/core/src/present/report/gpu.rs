//! One compared GPU's results: its fit [`Verdict`] and its [`GpuReport`] (memory, textbook and
//! vLLM concurrency, cost, suggestions), and the cheapest of them.

use super::derivations::{cost_derivation, titled};
use super::parts::{GpuFixed, GpuPart, ModelPart};
use crate::base::derivation::Derivation;
use crate::base::error::CalcError;
use crate::base::units::Bytes;
use crate::calc::memory::{self, textbook_budget, what_would_fit, Suggestion};
use crate::hardware::catalog::Accelerator;
use crate::present::series::{GpuBudget, MemoryBar};
use crate::scenario::{BudgetRule, Scenario};
use serde::{Deserialize, Serialize};

/// How well the scenario fits one GPU (one replica of `tp` GPUs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The weights and all requested concurrent requests fit.
    Fits,
    /// The weights fit and some requests, fewer than requested.
    Partial,
    /// Not even one request fits (or not even the weights).
    DoesNotFit,
}

impl Verdict {
    /// Translation key of its label.
    pub const fn key(self) -> &'static str {
        match self {
            Verdict::Fits => "verdict_fits",
            Verdict::Partial => "verdict_partial",
            Verdict::DoesNotFit => "verdict_no_fit",
        }
    }
}

/// The results for one compared GPU.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuReport {
    /// Stable key (catalog id, or `custom-<index>`), used in test ids.
    pub key: String,
    /// The accelerator as used (custom ones validated into catalog form).
    pub accelerator: Accelerator,
    /// Memory of one GPU: weights, KV of the requested load, activations, overhead, free.
    pub bar: MemoryBar,
    /// Capacity and what is not KV, for the KV and batch charts.
    pub budget: GpuBudget,
    /// Fit verdict for the requested concurrency.
    pub verdict: Verdict,
    /// Textbook: concurrent requests from the marketed capacity.
    pub requests_theoretical: u64,
    /// Textbook: concurrent requests from the usable capacity minus the activation reserve.
    pub requests_practical: u64,
    /// Concurrent requests under the chosen rule (textbook practical, or vLLM's ⌊concurrency⌋).
    pub requests: u64,
    /// vLLM's log lines (always computed, with the chosen or default settings).
    pub vllm_log: Vec<String>,
    /// vLLM's reported maximum concurrency (×).
    pub vllm_concurrency: f64,
    /// Price of one replica (`tp` GPUs), US dollars per hour, when known.
    pub usd_per_hour: Option<f64>,
    /// Price per concurrent request slot, US dollars per hour (`price / requests`).
    pub usd_per_request_hour: Option<f64>,
    /// Ways to make it fit, when not even one request does.
    pub suggestions: Vec<Suggestion>,
    /// Derivations: weights per GPU, activation reserve, textbook and vLLM budgets, cost.
    pub derivations: Vec<Derivation>,
}

/// One report per compared GPU, in the scenario's order, and the errors of those that could
/// not be evaluated, by key; the cost's derivation in full (`MATH`) or as its title only.
pub(super) fn gpu_reports<const MATH: bool>(
    s: &Scenario,
    part: &ModelPart,
    gpus: &[GpuPart],
) -> (Vec<GpuReport>, Vec<(String, CalcError)>) {
    let mut reports = Vec::new();
    let mut gpu_errors = Vec::new();
    for (i, g) in gpus.iter().enumerate() {
        let key = g.choice.key(i);
        match g
            .fixed
            .as_ref()
            .map_err(Clone::clone)
            .and_then(|f| gpu_report::<MATH>(s, part, f, key.clone()))
        {
            Ok(r) => reports.push(r),
            Err(e) => gpu_errors.push((key, e)),
        }
    }
    (reports, gpu_errors)
}

/// Index of the GPU with the lowest price per request, when prices are known.
pub(super) fn cheapest_index(gpus: &[GpuReport]) -> Option<usize> {
    gpus.iter()
        .enumerate()
        .filter_map(|(i, g)| g.usd_per_request_hour.map(|c| (i, c)))
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(i, _)| i)
}

/// The report of one compared GPU (`key`: its stable key).
fn gpu_report<const MATH: bool>(
    s: &Scenario,
    part: &ModelPart,
    fixed: &GpuFixed,
    key: String,
) -> Result<GpuReport, CalcError> {
    let (weights, profile) = (&part.weights, fixed.profile(part));
    let acc = &fixed.acc;
    let ctx = s.context_len.max(1);
    let tp = weights.tp;
    let (w_gpu, d_wgpu) = (weights.per_gpu, weights.per_gpu_derivation.clone());
    let inp = fixed.textbook.inputs(w_gpu, profile.per_request(ctx));
    let tb = textbook_budget(&inp);
    let d_act = fixed.textbook.activation.clone();
    let start = &fixed.start;
    let vin = &start.inputs_under(&vllm_engine(s, start.engine, ctx));
    let vb = memory::vllm_budget(vin, profile)?;
    let kv_load = profile.per_batch(s.concurrency, ctx);
    let (requests, bar) = match s.budget {
        BudgetRule::Textbook => (
            tb.practical,
            MemoryBar::new(
                acc.name.clone(),
                inp.usable_capacity,
                w_gpu,
                kv_load,
                inp.activation_reserve,
                Bytes::ZERO,
            ),
        ),
        BudgetRule::Vllm { .. } => {
            let reserved = vin.total_memory.saturating_sub(vb.requested_memory);
            (
                if vb.max_concurrency.is_finite() && vb.max_concurrency > 0.0 {
                    vb.max_concurrency.floor().min(1e15) as u64
                } else {
                    0
                },
                MemoryBar::new(
                    acc.name.clone(),
                    vin.total_memory,
                    vin.weights,
                    kv_load,
                    vin.activation_peak,
                    vin.non_torch + reserved,
                ),
            )
        }
    };
    let weights_fit = tb.budget_practical > Bytes::ZERO;
    // With no KV cache at all (quick mode) the textbook count is unbounded; it still needs
    // room for the weights.
    let requests = if weights_fit { requests } else { 0 };
    let verdict = verdict_of(weights_fit, requests, s.concurrency, &bar);
    let suggestions = what_would_fit(&inp, profile, ctx, &part.smaller);
    let usd_per_hour = acc.price.as_ref().map(|p| p.usd_per_hour * tp as f64);
    let usd_per_request_hour = usd_per_hour
        .filter(|_| requests > 0)
        .map(|p| p / requests as f64);
    let mut derivations = vec![d_wgpu, d_act];
    derivations.extend(tb.derivations);
    derivations.extend(start.derivations());
    derivations.extend(vb.derivations.clone());
    if let (Some(p), Some(c)) = (usd_per_hour, usd_per_request_hour) {
        derivations.push(if MATH {
            cost_derivation(acc, p, c, tp, requests)
        } else {
            titled("cost_per_request")
        });
    }
    Ok(GpuReport {
        key,
        budget: GpuBudget::from_textbook(acc.name.clone(), &inp),
        bar,
        verdict,
        requests_theoretical: if tb.budget_theoretical > Bytes::ZERO {
            tb.theoretical
        } else {
            0
        },
        requests_practical: if weights_fit { tb.practical } else { 0 },
        requests,
        vllm_log: vb.log_lines,
        vllm_concurrency: vb.max_concurrency,
        usd_per_hour,
        usd_per_request_hour,
        suggestions,
        derivations,
        accelerator: acc.clone(),
    })
}

/// vLLM's knobs for one GPU (`memory::vllm_start`, as the serving simulator and `llmcalc
/// vllm` find them) from its defaults `e` there: the chosen rule's utilization and block size
/// (vLLM's defaults under the textbook rule), `max_model_len` = the context length.
fn vllm_engine(s: &Scenario, mut e: memory::VllmEngine, ctx: u64) -> memory::VllmEngine {
    e.max_model_len = ctx;
    if let BudgetRule::Vllm {
        gpu_memory_utilization,
        block_size,
    } = s.budget
    {
        e.gpu_memory_utilization = gpu_memory_utilization;
        e.block_size = u64::from(block_size);
    }
    e
}

/// The fit verdict: no weights room, all requests and the bar fit, some requests, or none.
fn verdict_of(weights_fit: bool, requests: u64, concurrency: u64, bar: &MemoryBar) -> Verdict {
    if !weights_fit {
        Verdict::DoesNotFit
    } else if requests >= concurrency && bar.fits() {
        Verdict::Fits
    } else if requests > 0 {
        Verdict::Partial
    } else {
        Verdict::DoesNotFit
    }
}
