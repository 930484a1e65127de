//! One typed entry point: a [`Scenario`] and the [`Catalog`] in, a [`Report`] out.
//!
//! The report carries every headline number the app and the CLI show (parameters, weights,
//! KV cache, per-GPU memory, maximum concurrency under the chosen rule, cost per request) and a
//! [`Derivation`] for each, so the UI only renders.
//!
//! ```
//! use llmcalc_core::{hardware::catalog::Catalog, present::report::evaluate, scenario::Scenario};
//! // The default scenario: Llama-2-7b (fp16) on A10G and L40S, 4,096 tokens per request.
//! let r = evaluate(&Scenario::default(), Catalog::builtin()).unwrap();
//! assert_eq!(r.model.params.total, 6_738_415_616);
//! assert_eq!(r.kv_per_token.0, 524_288); // 2 × 32 layers × 32 heads × 128 × 2 B
//! let a10g = &r.gpus[0];
//! assert_eq!((a10g.requests_practical, a10g.requests_theoretical), (4, 5));
//! ```

mod derivations;
mod gpu;
mod parts;

use crate::base::derivation::Derivation;
use crate::base::dtype::Dtype;
use crate::base::error::{CalcError, Phrase};
use crate::base::units::{Bytes, Tokens};
use crate::calc::memory::KvProfile;
use crate::hardware::catalog::Catalog;
use crate::model::config::parse_model_text;
use crate::model::{presets, quick, ModelDesc};
use crate::present::series::{
    batch_series, context_grid, kv_series, BatchSeries, CostBar, CostBars, CostMetric, GpuBudget,
    KvSeries, MemoryBars,
};
use crate::scenario::{ModelSource, Scenario};
use derivations::{kv_request_derivation, kv_total_derivation, titled};
use gpu::{cheapest_index, gpu_reports};
use serde::{Deserialize, Serialize};

pub use gpu::{GpuReport, Verdict};
pub(crate) use parts::accelerator_of;
pub use parts::{gpu_parts, GpuPart, ModelChoices, ModelPart};

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

/// Evaluates a scenario. Errors concern the model or the whole scenario (unparsable config,
/// TP that does not divide the heads); a single bad GPU is reported in
/// [`Report::gpu_errors`] and the others are still evaluated.
/// The model-level part ([`ModelPart`]) and the workload part ([`evaluate_with`]) in a row;
/// the app keeps the first across workload edits.
pub fn evaluate(s: &Scenario, catalog: &Catalog) -> Result<Report, CalcError> {
    let part = ModelPart::new(model_of(&s.model)?, ModelChoices::of(s))?;
    Ok(evaluate_with(s, &part, catalog))
}

/// The report of `s` from its model-level part, made with `s`'s model and
/// [`ModelChoices::of`]`(s)`: this reads only the workload of `s` (context length,
/// concurrency, GPUs, budget rule). Equal to [`evaluate`]`(s, catalog)` when `part` is
/// `s`'s.
pub fn evaluate_with(s: &Scenario, part: &ModelPart, catalog: &Catalog) -> Report {
    evaluate_with_gpus(s, part, &gpu_parts(part, &s.gpus, catalog, Vec::new()))
}

/// The report of `s` from its model-level part and the parts of its GPUs
/// ([`gpu_parts`]`(part, &s.gpus, …)`, in the scenario's order): this reads only the context
/// length, the concurrency and the budget rule of `s`. Equal to [`evaluate`]`(s, catalog)`
/// when the parts are `s`'s.
pub fn evaluate_with_gpus(s: &Scenario, part: &ModelPart, gpus: &[GpuPart]) -> Report {
    report_of::<true>(s, part, gpus)
}

/// The report of `s` on `model` (its model source's), with the derivations the report builds
/// itself (the parameter count, KV per token, per request and in all, each GPU's cost) as
/// titles only; the calculations' own derivations are kept. For a screen that shows no math
/// (`present::FirstScreen`), so the module that paints it links none of those builders: equal
/// to [`evaluate`] but for those derivations' bodies.
pub(crate) fn evaluate_titles_only(
    s: &Scenario,
    model: ModelDesc,
    catalog: &Catalog,
) -> Result<Report, CalcError> {
    let part = ModelPart::titles_only(model, ModelChoices::of(s))?;
    Ok(report_of::<false>(
        s,
        &part,
        &gpu_parts(&part, &s.gpus, catalog, Vec::new()),
    ))
}

/// [`evaluate_with_gpus`], the derivations the report builds in full (`MATH`) or as titles
/// only.
fn report_of<const MATH: bool>(s: &Scenario, part: &ModelPart, gpus: &[GpuPart]) -> Report {
    debug_assert!(gpus.iter().map(|g| &g.choice).eq(s.gpus.iter()));
    let ctx = s.context_len.max(1);
    let kv_per_request = part.whole.per_request(ctx);
    let kv_total = part.whole.per_batch(s.concurrency, ctx);
    let (d_kv_req, d_kv_total) = if MATH {
        (
            kv_request_derivation(part.kv_per_token, kv_per_request, ctx),
            kv_total_derivation(kv_per_request, kv_total, s.concurrency),
        )
    } else {
        (titled("kv_per_request"), titled("kv_total"))
    };
    let (gpus, gpu_errors) = gpu_reports::<MATH>(s, part, gpus);
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
/// `r` with the derivations [`evaluate_titles_only`] makes titles only reduced to their
/// titles, for tests.
#[cfg(test)]
pub(crate) fn own_math_as_titles(mut r: Report) -> Report {
    const OWN: [&str; 5] = [
        "params_total",
        "kv_per_token",
        "kv_per_request",
        "kv_total",
        "cost_per_request",
    ];
    let derivations = r
        .derivations
        .iter_mut()
        .chain(r.gpus.iter_mut().flat_map(|g| g.derivations.iter_mut()));
    for d in derivations.filter(|d| OWN.contains(&d.title_key.as_str())) {
        *d = titled(&d.title_key);
    }
    r
}

#[cfg(test)]
mod tests {
    use super::report_for_test as eval;
    use super::*;
    use crate::calc::weights;
    use crate::scenario::{BudgetRule, GpuChoice, ModelSource};

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
        use crate::calc::{loading, perf};
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

    /// The titles-only report is the full one but for its own derivations' bodies, for every
    /// preset, at the default settings and with TP, other precisions, a vLLM rule and GPUs
    /// with and without a price.
    #[test]
    fn a_titles_only_report_is_the_full_one_but_its_own_math() {
        let variations: [fn(&mut Scenario); 4] = [
            |_| {},
            |s| {
                s.tp = 2;
                s.kv_dtype = Some(Dtype::Fp8);
            },
            |s| {
                s.weight_dtype = Some(Dtype::Int4);
                s.gpus = vec![
                    GpuChoice::Catalog("h100-sxm".into()),
                    GpuChoice::Catalog("rtx-5090".into()),
                ];
            },
            |s| {
                s.budget = BudgetRule::Vllm {
                    gpu_memory_utilization: 0.8,
                    block_size: 32,
                };
            },
        ];
        for p in presets::all() {
            for vary in variations {
                let mut s = Scenario {
                    model: ModelSource::Preset(p.id.to_string()),
                    ..Scenario::default()
                };
                vary(&mut s);
                let full = evaluate(&s, Catalog::builtin()).map(own_math_as_titles);
                let model = model_of(&s.model).expect("preset");
                let titles = evaluate_titles_only(&s, model, Catalog::builtin());
                assert_eq!(titles, full, "{}", p.id);
            }
        }
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
