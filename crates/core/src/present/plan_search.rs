//! The planner's search for the serving worker ([`JobKind::Search`](super::serving::JobKind)):
//! the scenario's planner inputs turned into a [`SearchSpec`] (the average rate, the P99
//! targets, the first length bucket's prompt and output lengths, the compared GPUs with their
//! prices, the engines, layouts, speculation and largest deployment of the search inputs, the
//! scenario's precisions and efficiencies), searched by `sim::search::search_configurations`
//! (the same as `llmcalc plan --search`), and its answer prepared for the page as plain data
//! ([`SearchView`]) with every text in the job's language: each configuration in one line
//! ([`describe_candidate`], which the CLI prints too), the summary, the refusals, the notes.
//!
//! Like the sweep it runs only in the worker, which posts the search's progress as it goes;
//! the page draws the Pareto front from the view ([`SearchView::chart`], pure and cheap).

use crate::base::error::{CalcError, Phrase};
use crate::base::i18n::{fill, tr, Lang};
use crate::base::units::fmt_sig;
use crate::hardware::catalog::Catalog;
use crate::model::presets;
use crate::model::ModelDesc;
use crate::present::report::{accelerator_of, scenario_model};
use crate::present::serving_load::SEED;
use crate::present::views::plan_inputs;
use crate::scenario::{ModelSource, Scenario};
use crate::sim::config::{EngineConfig, Slo};
use crate::sim::parallel::Parallel;
use crate::sim::search::{
    search_configurations, Candidate, Layout, PlanPoint, Progress, SearchGpu, SearchResult,
    SearchSpec, Statistic, DEFAULT_SHORTLIST,
};
use serde::{Deserialize, Serialize};

/// One configuration at one decode batch, as the page shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchRow {
    /// Index in [`SearchView::descriptions`].
    pub candidate: usize,
    /// Deployments for the rate.
    pub replicas: u64,
    /// GPUs of one deployment.
    pub gpus_per_deployment: u64,
    /// GPUs in all.
    pub gpus: u64,
    /// Nodes in all.
    pub nodes: u64,
    /// Decode batch per unit at full load (the screen's operating point).
    pub batch: u64,
    /// US dollars per hour of the whole service.
    pub usd_per_hour: f64,
    /// US dollars per million output tokens.
    pub usd_per_m_output: f64,
    /// Output tokens per second each user sees.
    pub tokens_per_s_user: f64,
    /// Mean TTFT and TPOT of the screen (closed form), ms.
    pub mean_ms: (f64, f64),
    /// Simulated P99 TTFT and P99 TPOT, ms (`None`: not simulated).
    pub p99_ms: Option<(f64, f64)>,
    /// Meets both targets: simulated when simulated, else the screen's estimate.
    pub meets: bool,
}

/// What the planner shows of a search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct SearchView {
    /// The counts in one sentence (configurations considered, timed, refused; points
    /// screened; simulations).
    pub summary: String,
    /// Configurations considered (refused ones included).
    pub considered: u64,
    /// Points (configuration × batch) screened.
    pub screened_points: u64,
    /// Simulations run.
    pub simulations: u64,
    /// The P99 targets, ms: TTFT, TPOT.
    pub targets_ms: (f64, f64),
    /// Each configuration the rows refer to, in one line.
    pub descriptions: Vec<String>,
    /// The points returned: the front, the short list, the nearest and a sample of the rest.
    pub rows: Vec<SearchRow>,
    /// The Pareto front (indices in `rows`, fastest per user first).
    pub front: Vec<usize>,
    /// The simulated points (indices in `rows`), cheapest first.
    pub shortlist: Vec<usize>,
    /// The cheapest simulated point meeting both targets (index in `rows`).
    pub best: Option<usize>,
    /// Its launch commands.
    pub commands: Vec<String>,
    /// When none meets: the sentence, and the nearest points (indices in `rows`).
    pub none_meets: Option<String>,
    /// The nearest points when none meets.
    pub nearest: Vec<usize>,
    /// The rules that stopped configurations, each with its count, in the job's language.
    pub refused: Vec<String>,
    /// GPUs left out (no price, an invalid custom GPU), one sentence each.
    pub notes: Vec<String>,
}

/// One point of the Pareto chart.
#[derive(Debug, Clone, PartialEq)]
pub struct ParetoPoint {
    /// Tokens per second per user (x).
    pub tokens_per_s_user: f64,
    /// US dollars per million output tokens (y).
    pub usd_per_m_output: f64,
    /// Meets both targets.
    pub meets: bool,
    /// Simulated (else the screen's estimate).
    pub simulated: bool,
    /// The configuration in one line (the tooltip).
    pub label: String,
}

/// The search's chart: every point, the front as a line, the best highlighted; texts in the
/// page's language.
#[derive(Debug, Clone, PartialEq)]
pub struct ParetoChart {
    /// The points.
    pub points: Vec<ParetoPoint>,
    /// The front (indices in `points`, fastest per user first).
    pub front: Vec<usize>,
    /// The best (index in `points`).
    pub best: Option<usize>,
    /// The x axis' title.
    pub x_title: String,
    /// The y axis' title.
    pub y_title: String,
    /// Legend: the front's line.
    pub front_label: String,
    /// Legend: a point meeting the targets.
    pub meets_label: String,
    /// Legend: a point missing them.
    pub misses_label: String,
    /// Legend: the best.
    pub best_label: String,
    /// Drawn when there is no point.
    pub empty_label: String,
}

impl SearchView {
    /// The chart of the view, its texts in `lang`.
    pub fn chart(&self, lang: Lang) -> ParetoChart {
        let label = |c: usize| self.descriptions.get(c).cloned().unwrap_or_default();
        ParetoChart {
            points: self
                .rows
                .iter()
                .map(|r| ParetoPoint {
                    tokens_per_s_user: r.tokens_per_s_user,
                    usd_per_m_output: r.usd_per_m_output,
                    meets: r.meets,
                    simulated: r.p99_ms.is_some(),
                    label: label(r.candidate),
                })
                .collect(),
            front: self.front.clone(),
            best: self.best,
            x_title: tr(lang, "ps_axis_tps_user").to_string(),
            y_title: tr(lang, "ps_axis_usd_m").to_string(),
            front_label: tr(lang, "ps_legend_front").to_string(),
            meets_label: tr(lang, "ps_legend_meets").to_string(),
            misses_label: tr(lang, "ps_legend_misses").to_string(),
            best_label: tr(lang, "ps_legend_best").to_string(),
            empty_label: tr(lang, "chart_no_data").to_string(),
        }
    }

    /// The row of the best configuration and its description.
    pub fn best_row(&self) -> Option<(&SearchRow, &str)> {
        let r = self.rows.get(self.best?)?;
        Some((r, self.descriptions.get(r.candidate)?.as_str()))
    }
}

/// The shape of one engine instance: `TP 2 × DP 4 × PP 2, EP 8`.
fn shape(p: &Parallel) -> String {
    let mut s = format!("TP {}", p.tp);
    if p.dp > 1 {
        s += &format!(" × DP {}", p.dp);
    }
    if p.pp > 1 {
        s += &format!(" × PP {}", p.pp);
    }
    if p.ep > 1 {
        s += &format!(", EP {}", p.ep);
    }
    s
}

/// A configuration in one line, in `lang`: the GPU, the engine and its version, the layout and
/// the speculation (`NVIDIA H100 SXM vLLM 0.19 aggregated TP 1`, `… disaggregated 1 × prefill
/// [TP 1] : 2 × decode [TP 2] over nvlink, MTP k = 2`).
pub fn describe_candidate(c: &Candidate, lang: Lang) -> String {
    let layout = match &c.layout {
        Layout::Aggregated { par } => fill(tr(lang, "ps_desc_agg"), &[("shape", &shape(par))]),
        Layout::Disaggregated {
            prefill,
            decode,
            prefill_workers,
            decode_workers,
            link,
        } => fill(
            tr(lang, "ps_desc_disagg"),
            &[
                ("pw", &prefill_workers.to_string()),
                ("pshape", &shape(prefill)),
                ("dw", &decode_workers.to_string()),
                ("dshape", &shape(decode)),
                ("link", link.id()),
            ],
        ),
    };
    let spec = c
        .spec
        .map(|s| format!(", {} k = {}", s.method.name().to_uppercase(), s.k))
        .unwrap_or_default();
    format!(
        "{} {} {} {layout}{spec}",
        c.gpu_name,
        c.engine.name(),
        c.engine.version()
    )
}

/// The name the launch commands serve: a preset's Hugging Face id, a pasted config's
/// `_name_or_path`, else `./model`; only when it is safe to paste into a shell (letters,
/// digits, `._-/`).
fn served_name(s: &Scenario, model: &ModelDesc) -> String {
    let name = match &s.model {
        // Some ids carry a note after a space ("… (now meta-llama/Llama-3.1-405B)").
        ModelSource::Preset(id) => {
            presets::get(id).and_then(|p| p.hf_id.split_whitespace().next().map(str::to_string))
        }
        ModelSource::Pasted(_) => Some(model.name.clone()),
        ModelSource::Quick { .. } => None,
    };
    name.filter(|n| {
        !n.is_empty()
            && n.len() <= 200
            && !n.starts_with('-')
            && n.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-' | b'/'))
    })
    .unwrap_or_else(|| "./model".to_string())
}

/// The search of the scenario's planner inputs, and the notes of the GPUs left out (in
/// `lang`). No GPU left is an error with a sentence.
pub fn search_spec(
    s: &Scenario,
    catalog: &Catalog,
    lang: Lang,
) -> Result<(SearchSpec, Vec<String>), CalcError> {
    let mut notes = Vec::new();
    let mut gpus = Vec::new();
    for (i, choice) in s.gpus.iter().enumerate() {
        let gpu = match accelerator_of(choice, catalog) {
            Ok(g) => g,
            Err(e) => {
                notes.push(e.message(lang));
                continue;
            }
        };
        let price = s
            .views
            .price(&choice.key(i))
            .or(gpu.price.as_ref().map(|p| p.usd_per_hour))
            .filter(|p| p.is_finite() && *p > 0.0);
        match price {
            Some(usd_per_gpu_hour) => gpus.push(SearchGpu {
                gpu,
                usd_per_gpu_hour,
            }),
            None => notes.push(fill(tr(lang, "ps_note_no_price"), &[("gpu", &gpu.name)])),
        }
    }
    if gpus.is_empty() {
        return Err(CalcError::BadValue {
            key: "price".into(),
            found: Phrase::tr("ps_found_no_price"),
            expected: Phrase::tr("exp_search_priced_gpu"),
        });
    }
    let (inp, _) = plan_inputs(s);
    let (input_len, output_len) = inp
        .traffic
        .buckets
        .first()
        .map_or((s.perf.input_len, s.perf.output_len), |b| {
            (b.input_len, b.output_len)
        });
    let p = &s.views.plan;
    let search = &s.views.search;
    let (aggregated, disaggregated) = search.layouts.flags();
    let spec = SearchSpec {
        rate_rps: p.rate_rps,
        input_len,
        output_len,
        targets: Slo {
            ttft_ms: p.ttft_ms,
            tpot_ms: p.tpot_ms,
        },
        statistic: Statistic::P99,
        gpus,
        engines: search.engine_list(),
        max_gpus: search.max_gpus,
        aggregated,
        disaggregated,
        speculative: search.speculative,
        base: EngineConfig {
            weights_dtype: s.weight_dtype,
            kv_dtype: s.kv_dtype,
            ..EngineConfig::default()
        },
        frontend_overhead_ms: None,
        eff: s.views.eff,
        shortlist: DEFAULT_SHORTLIST,
        seed: SEED,
    };
    Ok((spec, notes))
}

/// Runs a search job: the scenario's search ([`search_spec`]), `progress` told of each GPU
/// and engine screened and each simulation, the answer prepared for the page.
pub fn run_search_job(
    query: &str,
    lang: Lang,
    catalog: &Catalog,
    progress: &mut dyn FnMut(Progress),
) -> Result<SearchView, CalcError> {
    let (s, _) = Scenario::from_query(query);
    let model = scenario_model(&s)?;
    let (spec, notes) = search_spec(&s, catalog, lang)?;
    let r = search_configurations(&model, &served_name(&s, &model), &spec, progress)?;
    Ok(search_view(&r, notes, lang))
}

fn row(p: &PlanPoint, r: &SearchResult) -> SearchRow {
    SearchRow {
        candidate: p.candidate,
        replicas: p.replicas,
        gpus_per_deployment: r.candidates.get(p.candidate).map_or(0, |c| c.gpus),
        gpus: p.gpus,
        nodes: p.nodes,
        batch: p.batch,
        usd_per_hour: p.usd_per_hour,
        usd_per_m_output: p.usd_per_m_output,
        tokens_per_s_user: p.tokens_per_s_user,
        mean_ms: (p.ttft_ms, p.tpot_ms),
        p99_ms: p.simulated.map(|c| (c.p99_ttft_ms, c.p99_tpot_ms)),
        meets: p.meets,
    }
}

/// The answer of a search as the page shows it, its texts in `lang`.
pub fn search_view(r: &SearchResult, notes: Vec<String>, lang: Lang) -> SearchView {
    let refused_count: u64 = r.refused.iter().map(|x| x.count).sum();
    let summary = fill(
        tr(lang, "ps_summary"),
        &[
            ("considered", &r.considered.to_string()),
            ("screened", &r.screened.to_string()),
            ("refused", &refused_count.to_string()),
            ("points", &r.screened_points.to_string()),
            ("sims", &r.simulations.to_string()),
            ("rate", &fmt_sig(r.rate_rps)),
            ("input", &r.input_len.to_string()),
            ("output", &r.output_len.to_string()),
        ],
    );
    let none_meets = r.best.is_none().then(|| {
        fill(
            tr(lang, "ps_none_meets"),
            &[
                ("ttft", &fmt_sig(r.targets.ttft_ms)),
                ("tpot", &fmt_sig(r.targets.tpot_ms)),
            ],
        )
    });
    SearchView {
        summary,
        considered: r.considered,
        screened_points: r.screened_points,
        simulations: r.simulations,
        targets_ms: (r.targets.ttft_ms, r.targets.tpot_ms),
        descriptions: r
            .candidates
            .iter()
            .map(|c| describe_candidate(c, lang))
            .collect(),
        rows: r.points.iter().map(|p| row(p, r)).collect(),
        front: r.front.clone(),
        shortlist: r.shortlist.clone(),
        best: r.best,
        commands: r.commands.clone(),
        none_meets,
        nearest: r.nearest.clone(),
        refused: r
            .refused
            .iter()
            .map(|x| {
                let text = match lang {
                    Lang::En => &x.en,
                    Lang::Ko => &x.ko,
                };
                format!("{} × {text}", x.count)
            })
            .collect(),
        notes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::present::serving::{run_job_json_with, JobKind, ServingJob, WorkerReply};
    use crate::scenario::GpuChoice;

    /// Qwen3-8B on an H100 and an L40S at 20 req/s of 1,024 → 128 tokens (the CLI's example),
    /// the search on.
    fn query(targets: (f64, f64), gpus: &[&str]) -> String {
        let mut s = Scenario {
            model: ModelSource::Preset("qwen3-8b".into()),
            gpus: gpus
                .iter()
                .map(|g| GpuChoice::Catalog((*g).into()))
                .collect(),
            ..Scenario::default()
        };
        s.perf.input_len = 1024;
        s.perf.output_len = 128;
        s.views.plan.rate_rps = 20.0;
        (s.views.plan.ttft_ms, s.views.plan.tpot_ms) = targets;
        s.views.search.on = true;
        s.to_query()
    }

    /// Runs a job as the worker does: the replies posted while it runs, then the answer.
    fn job(query: String, lang: &str) -> (Vec<WorkerReply>, WorkerReply) {
        let job = ServingJob {
            id: 5,
            query,
            lang: lang.into(),
            kind: JobKind::Search,
            text: String::new(),
        };
        let text = serde_json::to_string(&job).unwrap_or_default();
        let mut posted = Vec::new();
        let last = run_job_json_with(&text, &mut |m| {
            posted.push(serde_json::from_str(m).unwrap_or_else(|e| panic!("{e}: {m}")));
        });
        let last = serde_json::from_str(&last).unwrap_or_else(|e| panic!("{e}: {last}"));
        (posted, last)
    }

    #[test]
    fn a_search_job_posts_its_progress_then_the_best_with_its_commands() {
        let (posted, last) = job(query((1000.0, 40.0), &["h100-sxm", "l40s"]), "en");
        let stages: Vec<(String, u64, u64)> = posted
            .into_iter()
            .map(|p| match p {
                WorkerReply::Progress {
                    id,
                    done,
                    total,
                    stage,
                } => {
                    assert_eq!(id, 5);
                    (stage, done, total)
                }
                other => panic!("expected progress, got {other:?}"),
            })
            .collect();
        // Two GPUs × three engines screened, then each simulation.
        assert_eq!(
            stages.iter().filter(|s| s.0 == "screen").count(),
            6,
            "{stages:?}"
        );
        assert!(stages.iter().any(|s| s.0 == "simulate"));
        assert!(stages.iter().all(|s| s.1 <= s.2 && s.2 > 0));
        let WorkerReply::Searched { id, view } = last else {
            panic!("expected a search, got {last:?}")
        };
        assert_eq!(id, 5);
        assert!(view.considered >= 1000, "{}", view.summary);
        let (best, desc) = view.best_row().unwrap_or_else(|| panic!("no best"));
        let (ttft, tpot) = best
            .p99_ms
            .unwrap_or_else(|| panic!("the best was simulated"));
        assert!(best.meets && ttft <= 1000.0 && tpot <= 40.0, "{best:?}");
        assert!(best.nodes >= 1 && best.gpus >= best.gpus_per_deployment);
        assert!(desc.starts_with("NVIDIA"), "{desc}");
        assert!(
            view.commands.iter().any(|c| c.contains("Qwen/Qwen3-8B")),
            "{:?}",
            view.commands
        );
        assert!(view.none_meets.is_none() && view.nearest.is_empty());
        assert!(!view.front.is_empty() && !view.shortlist.is_empty());
        assert!(view.summary.contains("configurations"), "{}", view.summary);
        // The chart: every row a point, the front and the best carried over.
        let chart = view.chart(Lang::Ko);
        assert_eq!(chart.points.len(), view.rows.len());
        assert_eq!(chart.best, view.best);
        assert_ne!(chart.x_title, view.chart(Lang::En).x_title);
    }

    #[test]
    fn targets_nobody_meets_give_the_sentence_and_the_nearest() {
        let (_, last) = job(query((20.0, 1.0), &["l40s"]), "ko");
        let WorkerReply::Searched { view, .. } = last else {
            panic!("expected a search, got {last:?}")
        };
        assert!(view.best.is_none() && view.commands.is_empty());
        let sentence = view
            .none_meets
            .clone()
            .unwrap_or_else(|| panic!("no sentence"));
        assert!(
            sentence.contains("20") && sentence.contains('1'),
            "{sentence}"
        );
        assert!(!view.nearest.is_empty());
        assert!(view.nearest.iter().all(|&i| i < view.rows.len()));
        // In Korean.
        assert!(view.descriptions.iter().any(|d| d.contains("통합")));
    }

    #[test]
    fn a_gpu_without_a_price_is_left_out_with_a_note_and_none_left_is_a_sentence() {
        let (s, _) = Scenario::from_query(&query((1000.0, 40.0), &["h100-pcie", "l40s"]));
        let (spec, notes) =
            search_spec(&s, Catalog::builtin(), Lang::En).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(spec.gpus.len(), 1);
        assert_eq!(spec.gpus[0].gpu.id, "l40s");
        assert_eq!(notes.len(), 1);
        assert!(notes[0].contains("H100 PCIe"), "{notes:?}");
        // With a price set in the scenario, it is searched.
        let mut priced = s.clone();
        priced.views.set_price("h100-pcie", Some(2.5));
        let (spec, notes) =
            search_spec(&priced, Catalog::builtin(), Lang::En).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((spec.gpus.len(), notes.len()), (2, 0));
        assert_eq!(spec.gpus[0].usd_per_gpu_hour, 2.5);
        // None left.
        let (_, last) = job(query((1000.0, 40.0), &["h100-pcie"]), "en");
        match last {
            WorkerReply::Failed { id, message } => {
                assert_eq!(id, 5);
                assert!(message.contains("price"), "{message}");
            }
            other => panic!("expected a failure, got {other:?}"),
        }
    }

    #[test]
    fn the_search_reads_its_inputs_and_the_planners() {
        let mut s = Scenario::from_query(&query((1500.0, 60.0), &["h100-sxm"])).0;
        s.views.search.engines = [false, true, false];
        s.views.search.layouts = crate::scenario::SearchLayouts::Aggregated;
        s.views.search.speculative = false;
        s.views.search.max_gpus = 4;
        let (spec, _) =
            search_spec(&s, Catalog::builtin(), Lang::En).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(spec.engines, vec![crate::sim::engines::EngineKind::Sglang]);
        assert!(spec.aggregated && !spec.disaggregated && !spec.speculative);
        assert_eq!(spec.max_gpus, 4);
        assert_eq!((spec.input_len, spec.output_len), (1024, 128));
        assert_eq!((spec.targets.ttft_ms, spec.targets.tpot_ms), (1500.0, 60.0));
        assert_eq!(spec.rate_rps, 20.0);
    }

    #[test]
    fn descriptions_and_served_names() {
        let c = Candidate {
            gpu: "h100-sxm".into(),
            gpu_name: "NVIDIA H100 SXM".into(),
            usd_per_gpu_hour: 1.0,
            engine: crate::sim::engines::EngineKind::Vllm,
            layout: Layout::Disaggregated {
                prefill: Parallel::default(),
                decode: Parallel {
                    tp: 2,
                    ..Parallel::default()
                },
                prefill_workers: 1,
                decode_workers: 2,
                link: crate::sim::disagg::KvLink::Nvlink,
            },
            spec: None,
            gpus: 5,
        };
        assert_eq!(
            describe_candidate(&c, Lang::En),
            "NVIDIA H100 SXM vLLM 0.19 disaggregated 1 × prefill [TP 1] : 2 × decode [TP 2] over nvlink"
        );
        assert!(describe_candidate(&c, Lang::Ko).contains("분리"));
        let m = scenario_model(&Scenario::default()).unwrap_or_else(|e| panic!("{e}"));
        let mut s = Scenario::default();
        assert_eq!(served_name(&s, &m), "meta-llama/Llama-2-7b-hf");
        s.model = ModelSource::Pasted(String::new());
        let mut hostile = m.clone();
        hostile.name = "x; rm -rf /".into();
        assert_eq!(served_name(&s, &hostile), "./model");
    }
}
