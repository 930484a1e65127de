//! One typed entry point: a [`Scenario`] and the [`Catalog`] in, a [`Report`] out.
//!
//! The report carries every headline number the app and the CLI show (parameters, weights,
//! KV cache, per-GPU memory, maximum concurrency under the chosen rule, cost per request) and a
//! [`Derivation`] for each, so the UI only renders.
//!
//! ```
//! use llm_serving_calculator::core::{hardware::catalog::Catalog, present::report::evaluate, scenario::Scenario};
//! // The default scenario: Llama-2-7b (fp16) on A10G and L40S, 4,096 tokens per request.
//! let r = evaluate(&Scenario::default(), Catalog::builtin()).unwrap();
//! assert_eq!(r.model.params.total, 6_738_415_616);
//! assert_eq!(r.kv_per_token.0, 524_288); // 2 × 32 layers × 32 heads × 128 × 2 B
//! let a10g = &r.gpus[0];
//! assert_eq!((a10g.requests_practical, a10g.requests_theoretical), (4, 5));
//! ```

use crate::core::base::derivation::{bytes_text, group, Derivation, Source, Term};
use crate::core::base::dtype::Dtype;
use crate::core::base::error::{CalcError, Phrase};
use crate::core::base::units::Tokens;
use crate::core::base::units::{fmt_sig, Bytes};
use crate::core::calc::memory::{self, textbook_budget, what_would_fit, KvProfile, Suggestion};
use crate::core::calc::{kv, weights};
use crate::core::hardware::catalog::{Accelerator, Catalog};
use crate::core::model::config::parse_model_text;
use crate::core::model::presets;
use crate::core::model::quick;
use crate::core::model::{Mixer, ModelDesc};
use crate::core::present::series::{
    batch_series, context_grid, kv_series, BatchSeries, CostBar, CostBars, CostMetric, GpuBudget,
    KvSeries, MemoryBar, MemoryBars,
};
use crate::core::scenario::{BudgetRule, GpuChoice, ModelSource, Scenario};
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

/// Everything computed for a scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// The model as parsed.
    pub model: ModelDesc,
    /// Weight precision used.
    pub weight_dtype: Dtype,
    /// KV-cache precision used.
    pub kv_dtype: Dtype,
    /// Weight bytes of the whole model.
    pub weights: Bytes,
    /// KV bytes per token, whole model, all layers.
    pub kv_per_token: Bytes,
    /// KV bytes of one request at the chosen context length.
    pub kv_per_request: Bytes,
    /// KV bytes of all requested concurrent requests.
    pub kv_total: Bytes,
    /// Tokens per request.
    pub context_len: u64,
    /// Concurrent requests asked for.
    pub concurrency: u64,
    /// GPUs per replica.
    pub tp: u64,
    /// One entry per compared GPU, in the scenario's order.
    pub gpus: Vec<GpuReport>,
    /// Index into `gpus` of the lowest price per request, when prices are known.
    pub cheapest: Option<usize>,
    /// Errors for GPUs that could not be evaluated (a custom GPU with bad figures), by key.
    #[serde(skip)]
    pub gpu_errors: Vec<(String, CalcError)>,
    /// Derivations of the model-level numbers: params, weights, KV per token/request/total.
    pub derivations: Vec<Derivation>,
    /// How one request's KV cache grows with its length, on one GPU of a replica.
    pub kv_profile: KvProfile,
}

impl Report {
    /// The "does it fit?" chart data: one bar per GPU.
    pub fn memory_bars(&self) -> MemoryBars {
        MemoryBars {
            bars: self.gpus.iter().map(|g| g.bar.clone()).collect(),
        }
    }

    fn budgets(&self) -> Vec<GpuBudget> {
        self.gpus.iter().map(|g| g.budget.clone()).collect()
    }

    /// The KV chart data: KV memory against tokens per request for a few batch sizes
    /// (1, 4, 16, 64 and the chosen concurrency), up to twice the chosen context length.
    pub fn kv_series(&self) -> KvSeries {
        let max = self.context_len.saturating_mul(2).max(4096);
        let mut batches = vec![1, 4, 16, 64, self.concurrency];
        batches.retain(|b| *b <= self.concurrency.max(64));
        kv_series(
            |t| self.kv_profile.per_request(t),
            Tokens(max),
            Tokens(self.context_len),
            &batches,
            &self.budgets(),
        )
    }

    /// The batch chart data: maximum concurrent requests against context length per GPU.
    pub fn batch_series(&self) -> BatchSeries {
        let max = self
            .model
            .max_position_embeddings
            .unwrap_or(0)
            .max(self.context_len)
            .max(8192);
        let grid = context_grid(Tokens(128), Tokens(max), Tokens(self.context_len));
        batch_series(
            |t| self.kv_profile.per_request(t),
            &grid,
            Tokens(self.context_len),
            &self.budgets(),
        )
    }

    /// The cost chart data: price per concurrent request, for GPUs with a price.
    pub fn cost_bars(&self) -> CostBars {
        CostBars {
            bars: self
                .gpus
                .iter()
                .filter_map(|g| {
                    g.usd_per_hour
                        .map(|p| CostBar::new(g.accelerator.name.clone(), p, g.requests, None))
                })
                .collect(),
            metric: CostMetric::PerRequestHour,
        }
    }

    /// The model-level derivation with this title key.
    pub fn derivation(&self, title_key: &str) -> Option<&Derivation> {
        self.derivations.iter().find(|d| d.title_key == title_key)
    }
}

/// The scenario's model as the worker's jobs read it: [`model_of`] its source, with the MTP
/// layers loaded when the scenario says so.
pub fn scenario_model(s: &Scenario) -> Result<ModelDesc, CalcError> {
    let mut model = model_of(&s.model)?;
    model.load_mtp = s.include_mtp;
    Ok(model)
}

/// The model described by the scenario.
pub fn model_of(source: &ModelSource) -> Result<ModelDesc, CalcError> {
    match source {
        ModelSource::Preset(id) => presets::get(id)
            .ok_or_else(|| CalcError::BadValue {
                key: "model".into(),
                found: Phrase::quoted(id),
                expected: Phrase::tr("exp_builtin_preset"),
            })?
            .parse(),
        ModelSource::Pasted(text) => parse_model_text(text),
        ModelSource::Quick { params, dtype } => Ok(quick::quick_model(*params, *dtype)),
    }
}

/// KV per token, whole model, with the textbook formula when every layer is alike.
fn kv_token_derivation(m: &ModelDesc, kv: Dtype, per_token: Bytes) -> Derivation {
    let b = kv.bytes();
    let attn: Vec<(u64, u64, u64)> = m
        .layers
        .iter()
        .filter_map(|l| match l.mixer {
            Mixer::Attention {
                kv_heads,
                head_dim,
                v_head_dim,
                ..
            } => Some((kv_heads, head_dim, v_head_dim)),
            _ => None,
        })
        .collect();
    let uniform = attn
        .first()
        .filter(|f| attn.iter().all(|x| x == *f) && f.1 == f.2);
    let result = format!("{} B = {}", group(per_token.0), per_token.fmt_gib());
    let b_term = Term::new(
        "b",
        "term_bytes_per_kv",
        fmt_sig(b),
        "B",
        Source::User("kv_dtype".into()),
    );
    match uniform {
        Some(&(kvh, hd, _)) if attn.len() == m.layers.len() => Derivation {
            title_key: "kv_per_token".into(),
            formula: "KV_token = 2 × L × H_kv × d_head × b".into(),
            substituted: format!("2 × {} × {} × {} × {}", attn.len(), kvh, hd, fmt_sig(b)),
            result,
            terms: vec![
                Term::new(
                    "L",
                    "term_layers",
                    attn.len().to_string(),
                    "",
                    Source::ConfigKey("num_hidden_layers".into()),
                ),
                Term::new(
                    "H_kv",
                    "term_kv_heads",
                    kvh.to_string(),
                    "",
                    Source::ConfigKey("num_key_value_heads".into()),
                ),
                Term::new(
                    "d_head",
                    "term_head_dim",
                    hd.to_string(),
                    "",
                    Source::Derived("hidden_size / num_attention_heads".into()),
                ),
                b_term,
            ],
            notes: vec![],
            ..Default::default()
        },
        _ => Derivation {
            title_key: "kv_per_token".into(),
            formula: "KV_token = Σ_(ℓ = 1…L) (K_ℓ + V_ℓ) × b".into(),
            substituted: format!("Σ_(ℓ = 1…{}) (K_ℓ + V_ℓ) × {}", attn.len(), fmt_sig(b)),
            result,
            terms: vec![
                Term::new(
                    "L",
                    "term_kv_layers",
                    attn.len().to_string(),
                    "",
                    Source::Derived("ldg_layers_with_kv".into()),
                ),
                b_term,
            ],
            notes: vec!["note_kv_mixed_layers".into()],
            ..Default::default()
        },
    }
}

pub(crate) fn accelerator_of(g: &GpuChoice, catalog: &Catalog) -> Result<Accelerator, CalcError> {
    match g {
        GpuChoice::Catalog(id) => catalog.get(id).cloned(),
        GpuChoice::Custom(c) => c.validate(),
    }
}

/// Evaluates a scenario. Errors concern the model or the whole scenario (unparsable config,
/// TP that does not divide the heads); a single bad GPU is reported in
/// [`Report::gpu_errors`] and the others are still evaluated.
/// The model-level part ([`ModelPart`]) and the workload part ([`evaluate_with`]) in a row;
/// the app keeps the first across workload edits.
pub fn evaluate(s: &Scenario, catalog: &Catalog) -> Result<Report, CalcError> {
    let part = ModelPart::new(model_of(&s.model)?, ModelChoices::of(s))?;
    Ok(evaluate_with(s, &part, catalog))
}

/// What [`ModelPart::new`] reads of a scenario besides its model: whether the MTP layers are
/// loaded, the TP degree and the chosen weight and KV precisions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelChoices {
    /// [`Scenario::include_mtp`].
    pub include_mtp: bool,
    /// [`Scenario::tp`].
    pub tp: u32,
    /// [`Scenario::weight_dtype`].
    pub weight_dtype: Option<Dtype>,
    /// [`Scenario::kv_dtype`].
    pub kv_dtype: Option<Dtype>,
}

impl ModelChoices {
    /// The model-level choices of `s`.
    pub fn of(s: &Scenario) -> ModelChoices {
        ModelChoices {
            include_mtp: s.include_mtp,
            tp: s.tp,
            weight_dtype: s.weight_dtype,
            kv_dtype: s.kv_dtype,
        }
    }
}

/// The part of a report that depends only on the model and its [`ModelChoices`]: the weight
/// bytes (and at FP8 and INT4, which the "what would fit" suggestions try), the KV cache per
/// token, the parameter and KV-per-token derivations. The app keeps it while the workload is
/// edited (context length, concurrency, GPUs, budget rule): such an edit only runs
/// [`evaluate_with`].
#[derive(Debug, Clone, PartialEq)]
pub struct ModelPart {
    /// The model, with [`ModelChoices::include_mtp`] applied.
    model: ModelDesc,
    /// The choices it was made with.
    choices: ModelChoices,
    /// The weight precision in effect.
    weight_dtype: Dtype,
    /// The KV-cache precision in effect.
    kv_dtype: Dtype,
    /// Weight bytes at the chosen precision, whole and per GPU of the replica.
    weights: weights::WeightBytes,
    /// One request's KV cache on the whole model (TP 1).
    whole: KvProfile,
    /// One request's KV cache on one GPU of a replica.
    per_gpu: KvProfile,
    /// KV bytes per token, whole model, all layers.
    kv_per_token: Bytes,
    /// Derivations of the parameter count and of the KV bytes per token.
    d_params: Derivation,
    d_kv_token: Derivation,
    /// Weights per GPU at FP8 and INT4 (those that can be computed).
    smaller: Vec<(Dtype, Bytes)>,
}

impl ModelPart {
    /// The model-level part of a report on `model` under `choices`. Errors: a TP degree the
    /// model cannot be split by, a model whose KV cache cannot be sized.
    pub fn new(mut model: ModelDesc, choices: ModelChoices) -> Result<ModelPart, CalcError> {
        model.load_mtp = choices.include_mtp;
        let tp = u64::from(choices.tp.max(1));
        let weight_dtype = choices.weight_dtype.unwrap_or(model.weights.dtype);
        let kv_dtype = choices
            .kv_dtype
            .unwrap_or_else(|| kv::default_kv_dtype(&model));
        // Weight bytes at the chosen precision (`None` = the checkpoint's own format), whole
        // and per GPU of the replica: the one rule of `weights` (group scales, experts-only
        // quantization, replicated parts, the TP check).
        let weights = weights::chosen(&model, choices.weight_dtype, tp)?;
        let whole = KvProfile::from_model(&model, kv_dtype, 1)?;
        let per_gpu = KvProfile::from_model(&model, kv_dtype, tp)?;
        let kv_per_token = whole.per_token_all_layers();
        let d_params = params_derivation(&model);
        let d_kv_token = match kv::per_token(&model, kv_dtype, 1) {
            Ok(k) if k.bytes == kv_per_token => {
                let mut d = k.derivation;
                d.title_key = "kv_per_token".into();
                d
            }
            _ => kv_token_derivation(&model, kv_dtype, kv_per_token),
        };
        let smaller = smaller_weights(&model, tp);
        Ok(ModelPart {
            model,
            choices,
            weight_dtype,
            kv_dtype,
            weights,
            whole,
            per_gpu,
            kv_per_token,
            d_params,
            d_kv_token,
            smaller,
        })
    }

    /// The choices it was made with (a scenario with other [`ModelChoices`] needs another).
    pub fn choices(&self) -> ModelChoices {
        self.choices
    }
}

/// The report of `s` from its model-level part, made with `s`'s model and
/// [`ModelChoices::of`]`(s)`: this reads only the workload of `s` (context length,
/// concurrency, GPUs, budget rule). Equal to [`evaluate`]`(s, catalog)` when `part` is
/// `s`'s.
pub fn evaluate_with(s: &Scenario, part: &ModelPart, catalog: &Catalog) -> Report {
    evaluate_with_gpus(s, part, &gpu_parts(part, &s.gpus, catalog, Vec::new()))
}

/// The part of one compared GPU's report that depends only on the GPU and the model-level
/// part ([`ModelPart`]: the model, TP, the weight precision), not on the workload: the
/// accelerator, the textbook's capacities and activation reserve, and what vLLM starts from
/// (its total memory, the weights as loaded, the profiling run's activation peak), each
/// with its derivation. The app keeps one per GPU while the context length, the concurrency
/// or the budget rule is edited; such an edit only runs [`evaluate_with_gpus`].
#[derive(Debug, Clone, PartialEq)]
pub struct GpuPart {
    /// The GPU it was made for.
    choice: GpuChoice,
    /// What was found, or why the GPU cannot be evaluated.
    fixed: Result<GpuFixed, CalcError>,
}

/// [`GpuPart`]'s findings.
#[derive(Debug, Clone, PartialEq)]
struct GpuFixed {
    acc: Accelerator,
    textbook: memory::TextbookGpu,
    start: memory::VllmStart,
}

impl GpuPart {
    /// The part of `choice` for the model-level part `part`.
    pub fn new(part: &ModelPart, choice: &GpuChoice, catalog: &Catalog) -> GpuPart {
        GpuPart {
            choice: choice.clone(),
            fixed: gpu_fixed(part, choice, catalog),
        }
    }

    /// The GPU it was made for.
    pub fn choice(&self) -> &GpuChoice {
        &self.choice
    }
}

/// The accelerator, then the textbook's and vLLM's per-GPU inputs (the errors in the order
/// [`gpu_report`] met them before the split: the accelerator, the textbook, vLLM's start).
fn gpu_fixed(part: &ModelPart, g: &GpuChoice, catalog: &Catalog) -> Result<GpuFixed, CalcError> {
    let acc = accelerator_of(g, catalog)?;
    // The report's textbook reserve is estimated at TP 1 (`textbook_for`).
    let textbook = memory::TextbookGpu::new(&part.model, &acc, 1)?;
    let (tp, weight_dtype) = (part.weights.tp, part.choices.weight_dtype);
    // The context length is a per-workload knob (`VllmStart::inputs_under`); 1 stands in.
    let e = memory::VllmEngine::defaults(&acc, tp, weight_dtype, 1);
    let start = memory::vllm_start(&part.model, &acc, &e)?;
    Ok(GpuFixed {
        acc,
        textbook,
        start,
    })
}

/// The GPU parts of `gpus` for `part`, in that order: a part of `kept` (made with the same
/// `part`) is reused for each GPU it was made for, the others are made.
pub fn gpu_parts(
    part: &ModelPart,
    gpus: &[GpuChoice],
    catalog: &Catalog,
    kept: Vec<GpuPart>,
) -> Vec<GpuPart> {
    let mut kept: Vec<Option<GpuPart>> = kept.into_iter().map(Some).collect();
    gpus.iter()
        .map(|g| {
            kept.iter_mut()
                .find(|k| k.as_ref().is_some_and(|k| k.choice == *g))
                .and_then(Option::take)
                .unwrap_or_else(|| GpuPart::new(part, g, catalog))
        })
        .collect()
}

/// The report of `s` from its model-level part and the parts of its GPUs
/// ([`gpu_parts`]`(part, &s.gpus, …)`, in the scenario's order): this reads only the context
/// length, the concurrency and the budget rule of `s`. Equal to [`evaluate`]`(s, catalog)`
/// when the parts are `s`'s.
pub fn evaluate_with_gpus(s: &Scenario, part: &ModelPart, gpus: &[GpuPart]) -> Report {
    debug_assert!(gpus.iter().map(|g| &g.choice).eq(s.gpus.iter()));
    let ctx = s.context_len.max(1);
    let kv_per_request = part.whole.per_request(ctx);
    let kv_total = part.whole.per_batch(s.concurrency, ctx);
    let d_kv_req = kv_request_derivation(part.kv_per_token, kv_per_request, ctx);
    let d_kv_total = kv_total_derivation(kv_per_request, kv_total, s.concurrency);
    let (gpus, gpu_errors) = gpu_reports(s, part, gpus);
    let cheapest = cheapest_index(&gpus);

    Report {
        weight_dtype: part.weight_dtype,
        kv_dtype: part.kv_dtype,
        weights: part.weights.total,
        kv_per_token: part.kv_per_token,
        kv_per_request,
        kv_total,
        context_len: ctx,
        concurrency: s.concurrency,
        tp: part.weights.tp,
        gpus,
        cheapest,
        gpu_errors,
        derivations: vec![
            part.d_params.clone(),
            part.weights.derivation.clone(),
            part.d_kv_token.clone(),
            d_kv_req,
            d_kv_total,
        ],
        kv_profile: part.per_gpu.clone(),
        model: part.model.clone(),
    }
}

/// The parameter count's derivation: the sum of the model's parts.
fn params_derivation(model: &ModelDesc) -> Derivation {
    let p = &model.params;
    let parts = [
        ("P_emb", "term_p_emb", p.embeddings + p.position_embeddings),
        ("P_attn", "term_p_attn", p.attention),
        ("P_mlp", "term_p_mlp", p.mlp),
        ("P_exp", "term_p_exp", p.experts),
        ("P_router", "term_p_router", p.router),
        ("P_norm", "term_p_norm", p.norms),
        ("P_head", "term_p_head", p.lm_head),
        ("P_other", "term_p_other", p.ssm + p.other),
    ];
    Derivation {
        title_key: "params_total".into(),
        formula: "P = P_emb + P_attn + P_mlp + P_exp + P_router + P_norm + P_head + P_other".into(),
        substituted: parts
            .iter()
            .map(|(_, _, n)| group(*n))
            .collect::<Vec<_>>()
            .join(" + "),
        result: group(model.params.total),
        terms: parts
            .iter()
            .map(|(sym, key, n)| {
                Term::new(
                    sym,
                    key,
                    group(*n),
                    "",
                    Source::Derived("params_total".into()),
                )
            })
            .collect(),
        notes: vec![],
        ..Default::default()
    }
}

/// KV of one request: KV per token times the context length (noted when a window or a state
/// makes it differ).
fn kv_request_derivation(kv_per_token: Bytes, kv_per_request: Bytes, ctx: u64) -> Derivation {
    Derivation {
        title_key: "kv_per_request".into(),
        formula: "KV_req = KV_token × S".into(),
        substituted: format!("{} B × {}", group(kv_per_token.0), group(ctx)),
        result: bytes_text(kv_per_request, false),
        terms: vec![
            Term::new(
                "KV_token",
                "kv_per_token",
                group(kv_per_token.0),
                "B",
                Source::Derived("kv_per_token".into()),
            ),
            Term::new(
                "S",
                "term_context_len",
                group(ctx),
                "unit_tokens",
                Source::User("context_len".into()),
            ),
        ],
        notes: if kv_per_request == kv_per_token * ctx {
            vec![]
        } else {
            vec!["note_kv_window_or_state".into()]
        },
        ..Default::default()
    }
}

/// KV of all requested concurrent requests: KV per request times the concurrency.
fn kv_total_derivation(kv_per_request: Bytes, kv_total: Bytes, concurrency: u64) -> Derivation {
    Derivation {
        title_key: "kv_total".into(),
        formula: "KV = KV_req × N".into(),
        substituted: format!("{} B × {}", group(kv_per_request.0), group(concurrency)),
        result: bytes_text(kv_total, false),
        terms: vec![Term::new(
            "N",
            "term_concurrency",
            group(concurrency),
            "",
            Source::User("concurrency".into()),
        )],
        notes: vec![],
        ..Default::default()
    }
}

/// One report per compared GPU, in the scenario's order, and the errors of those that could
/// not be evaluated, by key.
fn gpu_reports(
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
            .and_then(|f| gpu_report(s, part, f, key.clone()))
        {
            Ok(r) => reports.push(r),
            Err(e) => gpu_errors.push((key, e)),
        }
    }
    (reports, gpu_errors)
}

/// Index of the GPU with the lowest price per request, when prices are known.
fn cheapest_index(gpus: &[GpuReport]) -> Option<usize> {
    gpus.iter()
        .enumerate()
        .filter_map(|(i, g)| g.usd_per_request_hour.map(|c| (i, c)))
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(i, _)| i)
}

/// The report of one compared GPU (`key`: its stable key).
fn gpu_report(
    s: &Scenario,
    part: &ModelPart,
    fixed: &GpuFixed,
    key: String,
) -> Result<GpuReport, CalcError> {
    let (weights, profile) = (&part.weights, &part.per_gpu);
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
        derivations.push(cost_derivation(acc, p, c, tp, requests));
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

/// Weights per GPU at FP8 and INT4, for the "what would fit" suggestions.
fn smaller_weights(model: &ModelDesc, tp: u64) -> Vec<(Dtype, Bytes)> {
    [Dtype::Fp8, Dtype::Int4]
        .iter()
        .filter_map(|d| Some((*d, weights::chosen(model, Some(*d), tp).ok()?.per_gpu)))
        .collect()
}

/// Price per request slot: the replica's price `p` (US dollars per hour) over `requests`.
fn cost_derivation(acc: &Accelerator, p: f64, c: f64, tp: u64, requests: u64) -> Derivation {
    Derivation {
        title_key: "cost_per_request".into(),
        formula: "c = price × TP / N".into(),
        substituted: format!("${} × {} / {}", fmt_sig(p / tp as f64), tp, requests),
        result: format!("${} /h", fmt_sig(c)),
        terms: vec![
            Term::new(
                "price",
                "term_price",
                fmt_sig(p / tp as f64),
                "USD/h",
                Source::Catalog(
                    acc.price
                        .as_ref()
                        .map(|x| x.source.clone())
                        .unwrap_or_default(),
                ),
            ),
            Term::new(
                "N",
                "term_requests",
                requests.to_string(),
                "",
                Source::Derived("card_max_requests".into()),
            ),
        ],
        notes: vec![],
        ..Default::default()
    }
}

/// The report of `s` on the built-in catalog, for tests (a bad scenario panics with its
/// sentence).
#[cfg(test)]
#[track_caller]
pub(crate) fn report_for_test(s: &Scenario) -> Report {
    match evaluate(s, Catalog::builtin()) {
        Ok(r) => r,
        Err(e) => panic!("{e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::report_for_test as eval;
    use super::*;
    use crate::core::scenario::ModelSource;

    #[test]
    fn chapter_example() {
        // WORKED_EXAMPLES §2–3: Llama-2-7b fp16, 4,096 tokens: KV/token = 2 × 32 × 32 × 128 × 2
        // B; per request × 4,096 = 2 GiB; A10G 5 → 4, L40S 17 → 16.
        let r = eval(&Scenario::default());
        assert_eq!(r.kv_per_token, Bytes(2 * 32 * 32 * 128 * 2));
        assert_eq!(r.kv_per_request, Bytes(2 * 32 * 32 * 128 * 2 * 4096));
        assert_eq!(r.weights, Bytes(6_738_415_616 * 2));
        let got: Vec<(&str, u64, u64)> = r
            .gpus
            .iter()
            .map(|g| (g.key.as_str(), g.requests_theoretical, g.requests_practical))
            .collect();
        assert_eq!(got, vec![("a10g", 5, 4), ("l40s", 17, 16)]);
        // Cost per request: the L40S is cheaper per request slot.
        assert_eq!(r.cheapest, Some(1));
    }

    /// One rule for a GPU's share of the weights: the report's memory bar and vLLM budget, the
    /// performance model and loading all hold the same bytes per GPU (DeepSeek-V3 at TP 8, with
    /// MLA's replicated down-projections; gpt-oss at TP 2, MXFP4 experts and bf16 attention;
    /// Llama-3.1-70B at fp8, TP 4).
    #[test]
    fn every_caller_holds_the_same_weights_per_gpu() {
        use crate::core::calc::{loading, perf};
        for (preset, tp, wd) in [
            ("deepseek-ai__DeepSeek-V3", 8u32, None),
            ("openai__gpt-oss-120b", 2, None),
            ("meta-llama__Meta-Llama-3.1-70B", 4, Some(Dtype::Fp8)),
        ] {
            let s = Scenario {
                model: ModelSource::Preset(preset.into()),
                gpus: vec![GpuChoice::Catalog("h200".into())],
                tp,
                weight_dtype: wd,
                ..Scenario::default()
            };
            let r = eval(&s);
            let m = &r.model;
            let tp = u64::from(tp);
            let rule = weights::chosen(m, wd, tp).map(|w| w.per_gpu).ok();
            assert_eq!(Some(r.gpus[0].bar.weights), rule, "{preset}: report");
            let wl = perf::Workload {
                weights_dtype: wd,
                ..perf::Workload::new(1, 128, 16, tp)
            };
            let perf_w = perf::weight_bytes_per_gpu(m, &wl);
            assert_eq!(rule.map(|b| b.0 as f64), Some(perf_w), "{preset}: perf");
            let inp = loading::LoadInputs {
                tp,
                weights_dtype: wd,
                ..loading::LoadInputs::default()
            };
            let load = loading::load_time(m, &r.gpus[0].accelerator, &inp).map(|l| l.bytes_per_gpu);
            assert_eq!(load.ok(), rule, "{preset}: loading");
            // The derivation shown beside the bar is the rule's own.
            let shown = r.gpus[0]
                .derivations
                .iter()
                .find(|d| d.title_key == "mem_weights_per_gpu");
            assert!(shown.is_some_and(|d| d.notes.contains(&"note_tp_weights".to_string())));
        }
    }

    #[test]
    fn memory_grows_with_context_and_concurrency() {
        let mut s = Scenario::default();
        let a = eval(&s);
        s.context_len *= 2;
        let b = eval(&s);
        s.concurrency *= 2;
        let c = eval(&s);
        assert!(b.kv_total > a.kv_total && c.kv_total > b.kv_total);
        assert!(b.gpus[0].requests_practical <= a.gpus[0].requests_practical);
    }

    #[test]
    fn bad_inputs_are_errors_not_panics() {
        let mut s = Scenario {
            model: ModelSource::Pasted("{".into()),
            ..Scenario::default()
        };
        assert!(evaluate(&s, Catalog::builtin()).is_err());
        s.model = ModelSource::Preset("nope".into());
        assert!(evaluate(&s, Catalog::builtin()).is_err());
        s.model = Scenario::default().model;
        s.tp = 3; // does not divide 32 heads
        assert!(matches!(
            evaluate(&s, Catalog::builtin()),
            Err(CalcError::TpDoesNotDivide { .. })
        ));
        s.tp = 1;
        s.gpus = vec![
            GpuChoice::Catalog("zzz".into()),
            GpuChoice::Catalog("l40s".into()),
        ];
        let r = eval(&s);
        assert_eq!(r.gpus.len(), 1);
        assert_eq!(r.gpu_errors.len(), 1);
        s.model = ModelSource::Quick {
            params: 1_000_000_000_000_000,
            dtype: Dtype::Fp32,
        };
        let r = eval(&s);
        assert_eq!(r.gpus[0].verdict, Verdict::DoesNotFit);
        s.context_len = u64::MAX;
        s.concurrency = u64::MAX;
        s.model = Scenario::default().model;
        let _ = evaluate(&s, Catalog::builtin());
    }

    /// A model-level part kept across edits of the workload gives the report that
    /// evaluating each edited scenario from scratch gives (what the app relies on).
    #[test]
    fn a_kept_model_part_gives_the_fresh_report() {
        for (preset, tp, wd) in [
            ("meta-llama__Llama-2-7b-hf", 1u32, None),
            ("deepseek-ai__DeepSeek-V3", 8, None),
            ("openai__gpt-oss-120b", 2, Some(Dtype::Fp8)),
        ] {
            let base = Scenario {
                model: ModelSource::Preset(preset.into()),
                tp,
                weight_dtype: wd,
                ..Scenario::default()
            };
            let model = model_of(&base.model).expect("preset");
            let part = ModelPart::new(model, ModelChoices::of(&base)).expect("part");
            let edits: [fn(&mut Scenario); 5] = [
                |s| s.context_len = 131_072,
                |s| s.concurrency = 1_000,
                |s| s.gpus = vec![GpuChoice::Catalog("h100-sxm".into())],
                |s| {
                    s.budget = BudgetRule::Vllm {
                        gpu_memory_utilization: 0.8,
                        block_size: 32,
                    }
                },
                |s| s.gpus.push(GpuChoice::Catalog("zzz".into())),
            ];
            let mut s = base.clone();
            for edit in edits {
                edit(&mut s);
                assert_eq!(part.choices(), ModelChoices::of(&s));
                let kept = evaluate_with(&s, &part, Catalog::builtin());
                let fresh = evaluate(&s, Catalog::builtin()).expect("report");
                assert_eq!(kept, fresh, "{preset}");
            }
        }
    }

    /// Parts of the GPUs kept across edits of the context length, the concurrency, the
    /// budget rule and the GPU list (each edit reusing the parts of the GPUs still compared)
    /// give the report that evaluating each edited scenario from scratch gives.
    #[test]
    fn kept_gpu_parts_give_the_fresh_report() {
        for (preset, tp, wd) in [
            ("meta-llama__Llama-2-7b-hf", 1u32, None),
            ("openai__gpt-oss-120b", 2, None),
            ("deepseek-ai__DeepSeek-V3", 8, Some(Dtype::Int4)),
        ] {
            let base = Scenario {
                model: ModelSource::Preset(preset.into()),
                tp,
                weight_dtype: wd,
                gpus: vec![
                    GpuChoice::Catalog("a10g".into()),
                    GpuChoice::Catalog("h100-sxm".into()),
                    GpuChoice::Catalog("zzz".into()),
                ],
                ..Scenario::default()
            };
            let model = model_of(&base.model).expect("preset");
            let part = ModelPart::new(model, ModelChoices::of(&base)).expect("part");
            let catalog = Catalog::builtin();
            let mut kept = gpu_parts(&part, &base.gpus, catalog, Vec::new());
            let edits: [fn(&mut Scenario); 7] = [
                |s| s.context_len = 131_072,
                |s| s.concurrency = 1_000,
                |s| s.context_len = 1,
                |s| {
                    s.budget = BudgetRule::Vllm {
                        gpu_memory_utilization: 0.8,
                        block_size: 32,
                    }
                },
                |s| s.gpus.reverse(),
                |s| s.gpus.insert(1, GpuChoice::Catalog("a100-sxm-80gb".into())),
                |s| {
                    s.gpus.remove(0);
                    s.context_len = 8_192;
                },
            ];
            let mut s = base.clone();
            for edit in edits {
                edit(&mut s);
                kept = gpu_parts(&part, &s.gpus, catalog, kept);
                let got = evaluate_with_gpus(&s, &part, &kept);
                let fresh = evaluate(&s, catalog).expect("report");
                assert_eq!(got, fresh, "{preset}");
            }
        }
    }

    #[test]
    fn a_model_part_fails_as_evaluate_does() {
        let s = Scenario {
            tp: 3, // does not divide 32 heads
            ..Scenario::default()
        };
        let model = model_of(&s.model).expect("preset");
        assert_eq!(
            ModelPart::new(model, ModelChoices::of(&s)).err(),
            evaluate(&s, Catalog::builtin()).err()
        );
    }

    #[test]
    fn every_preset_evaluates() {
        for p in presets::all() {
            let s = Scenario {
                model: ModelSource::Preset(p.id.to_string()),
                ..Scenario::default()
            };
            let r = evaluate(&s, Catalog::builtin());
            assert!(r.is_ok(), "{}: {:?}", p.id, r.err());
        }
    }
}
