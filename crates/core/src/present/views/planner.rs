//! The capacity planner: options ranked by cost at the peak, cost against load, load and
//! offload figures per candidate GPU.

use crate::base::error::CalcError;
use crate::base::i18n::{tr, Lang};
use crate::calc::capacity::{self, Candidate, PerfTiming, Plan, PlanInputs, Targets, Traffic};
use crate::calc::loading::{self, LoadInputs, LoadReport, OffloadInputs, OffloadReport};
use crate::calc::perf;
use crate::hardware::catalog::Catalog;
use crate::model::ModelDesc;
use crate::present::views::common::perf_workload;
use crate::scenario::Scenario;
use serde::{Deserialize, Serialize};

/// Most options drawn on the cost-against-load chart (the cheapest at the peak; the table
/// lists them all).
pub const PLAN_CHART_MAX_SERIES: usize = 4;

/// One option's cost against the load, for the chart.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanCostSeries {
    /// "H100 SXM × TP 1".
    pub name: String,
    /// (rate req/s, US dollars per hour).
    pub points: Vec<(f64, f64)>,
    /// Whether this is the best option.
    pub best: bool,
}

/// The planner's cost-against-load chart with its translated strings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanCostChart {
    /// One series per viable priced option.
    pub series: Vec<PlanCostSeries>,
    /// Average rate, req/s (a marker).
    pub avg_rate: f64,
    /// Peak rate, req/s (a marker).
    pub peak_rate: f64,
    /// X axis title.
    pub x_title: String,
    /// Y axis title.
    pub y_title: String,
    /// Marker label: average.
    pub avg_label: String,
    /// Marker label: peak.
    pub peak_label: String,
    /// "No data".
    pub empty_label: String,
}

/// Load time and offloading figures of one candidate.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanLoad {
    /// GPU display name and TP ("H100 SXM × 2").
    pub name: String,
    /// Load and cold start, or why not.
    pub load: Result<LoadReport, CalcError>,
    /// Decode with weights or KV in host memory, or why not.
    pub offload: Result<OffloadReport, CalcError>,
}

/// Everything the planner view shows.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannerView {
    /// The ranked options (also when no option meets the targets).
    pub plan: Option<Plan>,
    /// Why no option is chosen, or why the inputs are refused.
    pub error: Option<CalcError>,
    /// Cost against load.
    pub chart: PlanCostChart,
    /// Load and offload per candidate GPU (at the TP of its first option).
    pub loads: Vec<PlanLoad>,
    /// Compared GPUs left out of the plan (custom accelerators are not in the catalog).
    pub left_out: Vec<String>,
}

/// The planner inputs from the scenario: traffic (rate, peak, the scenario's prompt and
/// output lengths), targets, the compared catalog GPUs with any price overrides.
pub fn plan_inputs(s: &Scenario) -> (PlanInputs, Vec<String>) {
    let p = &s.views.plan;
    let mut left_out = Vec::new();
    let mut candidates = Vec::new();
    for (i, g) in s.gpus.iter().enumerate() {
        match g {
            crate::scenario::GpuChoice::Catalog(id) => {
                let mut c = Candidate::new(id);
                c.price_usd_per_gpu_hour = s.views.price(&g.key(i));
                c.gpus_per_node = p.gpus_per_node;
                candidates.push(c);
            }
            crate::scenario::GpuChoice::Custom(c) => left_out.push(c.name.clone()),
        }
    }
    (
        PlanInputs {
            traffic: Traffic::mean(
                p.rate_rps,
                p.peak_multiplier,
                s.perf.input_len,
                s.perf.output_len,
            ),
            targets: Targets::from_ms(p.ttft_ms, p.tpot_ms),
            candidates,
        },
        left_out,
    )
}

/// Runs the planner for the scenario: options ranked by cost at the peak, the reason each
/// loses, cost against load, and load/offload figures per candidate.
pub fn planner_view(m: &ModelDesc, s: &Scenario, catalog: &Catalog, lang: Lang) -> PlannerView {
    let (inp, left_out) = plan_inputs(s);
    let timing = PerfTiming {
        model: m,
        eff: s.views.eff,
        weights_dtype: s.weight_dtype,
        kv_dtype: s.kv_dtype,
    };
    let (plan, error) = match capacity::options(&inp, catalog, &timing) {
        Ok(p) => {
            let e = capacity::feasibility_error(&p);
            (Some(p), e)
        }
        Err(e) => (None, Some(e)),
    };
    let mut chart = PlanCostChart {
        series: Vec::new(),
        avg_rate: inp.traffic.avg_rate_rps,
        peak_rate: inp.traffic.peak_rate_rps(),
        x_title: tr(lang, "view_plan_load_axis").to_string(),
        y_title: tr(lang, "view_plan_cost_axis").to_string(),
        avg_label: tr(lang, "view_plan_avg").to_string(),
        peak_label: tr(lang, "view_plan_peak_marker").to_string(),
        empty_label: tr(lang, "chart_no_data").to_string(),
    };
    let mut loads = Vec::new();
    if let Some(p) = &plan {
        let curve = capacity::cost_curve(p, 61);
        let best = p.best_option().map(|o| (o.gpu.clone(), o.tp));
        chart.series = curve
            .series
            .iter()
            .map(|cs| {
                let name = p
                    .options
                    .iter()
                    .find(|o| o.gpu == cs.gpu && o.tp == cs.tp)
                    .map_or(cs.gpu.clone(), |o| format!("{} × {}", o.gpu_name, o.tp));
                PlanCostSeries {
                    name,
                    points: curve
                        .rates_rps
                        .iter()
                        .copied()
                        .zip(cs.cost_per_hour.iter().copied())
                        .collect(),
                    best: best.as_ref() == Some(&(cs.gpu.clone(), cs.tp)),
                }
            })
            .take(PLAN_CHART_MAX_SERIES)
            .collect();
        let mut seen: Vec<String> = Vec::new();
        for o in &p.options {
            if seen.contains(&o.gpu) || o.max_batch_memory == 0 {
                continue;
            }
            seen.push(o.gpu.clone());
            let Ok(gpu) = catalog.get(&o.gpu) else {
                continue;
            };
            let load = loading::load_time(
                m,
                gpu,
                &LoadInputs {
                    tp: o.tp,
                    weights_dtype: s.weight_dtype,
                    ..LoadInputs::default()
                },
            );
            let offload = loading::offload(
                m,
                gpu,
                &OffloadInputs {
                    workload: perf::Workload {
                        tp: o.tp,
                        ..perf_workload(s, 1)
                    },
                    ..OffloadInputs::default()
                },
                &s.views.eff,
            );
            loads.push(PlanLoad {
                name: format!("{} × {}", o.gpu_name, o.tp),
                load,
                offload,
            });
        }
    }
    PlannerView {
        plan,
        error,
        chart,
        loads,
        left_out,
    }
}

/// GPUs per node the planner's field shows: the override, else the catalog default of the
/// first compared catalog GPU (8, the chapter's node, when none), within the accepted range.
pub fn planner_gpus_per_node(s: &Scenario, catalog: &Catalog) -> u32 {
    let (lo, hi) = capacity::GPUS_PER_NODE_RANGE;
    s.views
        .plan
        .gpus_per_node
        .or_else(|| {
            s.gpus.iter().find_map(|g| match g {
                crate::scenario::GpuChoice::Catalog(id) => {
                    catalog.get(id).ok().map(capacity::default_gpus_per_node)
                }
                crate::scenario::GpuChoice::Custom(_) => None,
            })
        })
        .unwrap_or(8)
        .clamp(lo, hi)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::dtype::Dtype;
    use crate::calc::capacity::Family;
    use crate::present::views::common::test_util::{gpus, model};
    use crate::present::views::roofline::{roofline_view, OpsShown};
    use crate::scenario::{parse_gpus_per_node, NoticeKind, PlannerInputs};
    use crate::scenario::{GpuChoice, ModelSource};

    #[test]
    fn planner_ranks_options_and_explains_impossible_targets() {
        let mut s = Scenario {
            gpus: vec![
                GpuChoice::Catalog("l40s".into()),
                GpuChoice::Catalog("h100-sxm".into()),
            ],
            ..Scenario::default()
        };
        let m = model(&s);
        let v = planner_view(&m, &s, Catalog::builtin(), Lang::En);
        let p = v.plan.as_ref().unwrap_or_else(|| panic!("{:?}", v.error));
        assert!(v.error.is_none(), "{:?}", v.error);
        assert!(p.best.is_some());
        assert!(!v.chart.series.is_empty() && v.chart.series.len() <= PLAN_CHART_MAX_SERIES);
        assert!(v.chart.series.iter().filter(|c| c.best).count() == 1);
        assert!(!v.loads.is_empty());
        // Every non-best row says why it loses.
        for (i, o) in p.options.iter().enumerate() {
            assert_eq!(o.reason.is_none(), Some(i) == p.best, "{o:?}");
        }
        // A TPOT target no option can meet is an error with the rows still shown.
        s.views.plan.tpot_ms = 0.01;
        let v = planner_view(&m, &s, Catalog::builtin(), Lang::En);
        assert!(v.error.is_some());
        assert!(v.plan.is_some_and(|p| !p.options.is_empty()));
        // Quick mode and custom GPUs do not panic.
        s.model = ModelSource::Quick {
            params: 7_000_000_000,
            dtype: Dtype::Bf16,
        };
        s.gpus
            .push(GpuChoice::Custom(crate::scenario::default_custom()));
        let m2 = model(&s);
        let v = planner_view(&m2, &s, Catalog::builtin(), Lang::Ko);
        assert_eq!(v.left_out.len(), 1);
        assert!(roofline_view(&m2, &s, &gpus(&["l40s"]), OpsShown::Decode, Lang::En).is_err());
    }

    #[test]
    fn planner_node_and_family_round_trip_and_refuse_nonsense() {
        let mut s = Scenario::default();
        s.views.plan.gpus_per_node = Some(4);
        s.views.plan.family = Family::Llama3;
        let q = s.to_query();
        assert!(
            q.contains("pl_node=4") && q.contains("pl_fam=llama3"),
            "{q}"
        );
        let (back, notices) = Scenario::from_query(&q);
        assert!(notices.is_empty(), "{q}: {notices:?}");
        assert_eq!(back.views.plan, s.views.plan);
        // Zero, too many, not a number, an unknown family: a notice each, defaults kept.
        let (lo, hi) = capacity::GPUS_PER_NODE_RANGE;
        let bad = format!(
            "pl_node=0&pl_node={}&pl_node=two&pl_fam=gemma&pl_node=-1",
            hi + 1
        );
        let (s2, notices) = Scenario::from_query(&bad);
        assert_eq!(s2.views.plan, PlannerInputs::default());
        // One notice per parameter name, with how many times it came (the first kind).
        let kinds: Vec<(&str, NoticeKind, u32)> = notices
            .iter()
            .map(|n| (n.param.as_str(), n.kind, n.count))
            .collect();
        assert_eq!(
            kinds,
            vec![
                ("pl_node", NoticeKind::OutOfRange, 4),
                ("pl_fam", NoticeKind::Invalid, 1),
            ]
        );
        assert_eq!(parse_gpus_per_node(&lo.to_string()), Ok(lo));
        assert_eq!(parse_gpus_per_node(&hi.to_string()), Ok(hi));
        // The field shows the override, else the first catalog GPU's node.
        let mut s3 = Scenario {
            gpus: vec![GpuChoice::Catalog("rtx-4090".into())],
            ..Scenario::default()
        };
        let c = Catalog::builtin();
        let want = c
            .get("rtx-4090")
            .map(capacity::default_gpus_per_node)
            .unwrap_or(0);
        assert_eq!(planner_gpus_per_node(&s3, c), want);
        s3.views.plan.gpus_per_node = Some(2);
        assert_eq!(planner_gpus_per_node(&s3, c), 2);
        // …and the plan uses it: no in-node option has a TP above 2.
        let m = model(&s3);
        let v = planner_view(&m, &s3, c, Lang::En);
        let p = v.plan.unwrap_or_else(|| panic!("{:?}", v.error));
        assert!(p.options.iter().all(|o| o.gpus_per_node == 2
            && (o.tp <= 2 || o.reason == Some(capacity::Reason::CrossesNodes))));
    }
}
