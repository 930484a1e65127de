//! Prepared data for the analysis views: the interactive roofline, the matmul explorer, the
//! performance model per GPU (latency, throughput, cost, energy), "How accurate is this?" and
//! the capacity planner. Everything here is pure and tested natively; the UI only renders it.
//!
//! The inputs these views add to the scenario (editable efficiencies, price overrides, the
//! matmul shape, the planner's traffic and targets) live in [`ViewInputs`], which reads and
//! writes its own URL parameters so every view is shareable by link.
//!
//! Formulas are those of `core::roofline` (intensity = FLOPs / bytes; attainable =
//! min(peak, intensity × bandwidth)), `core::perf` (each operator costs max(FLOPs / (peak ×
//! e_c), bytes / (bandwidth × e_bw))), `core::calibration` (ranges from the training
//! residuals) and `core::capacity` (Little's law, replicas = ⌈rate / per-replica rate⌉), with the
//! replicas re-sized on simulated P99s by `core::sim::sizing` ([`simulated_plan`]).

mod accuracy;
mod common;
mod largest;
mod matmul;
mod perf;
mod planner;
mod planner_sim;
mod roofline;

pub use accuracy::{
    accuracy_scatter, accuracy_stats, metric_key, metric_unit, AccPoint, AccStatRow,
    AccuracyScatter,
};
pub use common::{weight_format, ViewGpu};
pub use largest::{largest_view, LargestRow, LargestView};
pub use matmul::{matmul_view, MatmulView};
pub use perf::{
    cost_bars, cost_rows, custom_efficiencies_note, latency_curves, perf_rows, tp_tables, PerfRow,
    TpTable, CURVE_MAX_BATCH,
};
pub use planner::{
    plan_inputs, planner_gpus_per_node, planner_view, PlanCostChart, PlanCostSeries, PlanLoad,
    PlannerView, PLAN_CHART_MAX_SERIES,
};
pub use planner_sim::{
    plan_lengths, run_requests, simulated_plan, SimPlanSettings, SimulatedPlan, MAX_RUN_REQUESTS,
    MIN_SPAN_S,
};
pub use roofline::{roofline_view, OpsShown, PointDetail, RooflineView};

#[cfg(test)]
mod tests {
    use crate::calc::perf::Efficiencies;
    use crate::present::series::Matmul;
    use crate::scenario::Scenario;
    use crate::scenario::{view_inputs_from_query, NoticeKind, PlannerInputs, ViewInputs};

    #[test]
    fn view_inputs_round_trip_through_the_scenario_query() {
        let mut s = Scenario::default();
        s.views.eff.compute_decode = 0.61;
        s.views.eff.step_overhead_s = 0.0025;
        s.views.matmul = Matmul {
            m: 1,
            n: 4096,
            k: 4096,
        };
        s.views.plan.rate_rps = 2.5;
        s.views.plan.tpot_ms = 30.0;
        s.views.set_price("l40s", Some(1.25));
        let q = s.to_query();
        let (back, notices) = Scenario::from_query(&q);
        assert!(notices.is_empty(), "{q}: {notices:?}");
        assert_eq!(back.views, s.views, "{q}");
        assert_eq!(view_inputs_from_query(&q), s.views);
        // Defaults add nothing to the link.
        assert_eq!(ViewInputs::default().query_parts(), Vec::<String>::new());
    }

    #[test]
    fn the_perf_section_says_when_fitted_efficiencies_are_in_use() {
        use crate::base::i18n::{tr, Lang};
        use crate::present::views::custom_efficiencies_note;
        assert_eq!(
            custom_efficiencies_note(&Scenario::default(), Lang::En),
            None
        );
        // A link as `llmcalc calibrate --fit` prints it.
        let (s, notices) = Scenario::from_query("e_cp=0.39&e_bw=0.59&e_so=0.9");
        assert!(notices.is_empty(), "{notices:?}");
        for lang in [Lang::En, Lang::Ko] {
            let note = custom_efficiencies_note(&s, lang).unwrap();
            for k in [
                "view_eff_compute_prefill",
                "view_eff_bandwidth",
                "view_eff_step_overhead",
            ] {
                assert!(note.contains(tr(lang, k)), "{note}");
            }
            assert!(
                !note.contains(tr(lang, "view_eff_compute_decode")),
                "{note}"
            );
            let d = Efficiencies::default();
            for v in ["0.39", "0.59", "0.9 ms", &format!("{}", d.bandwidth)] {
                assert!(note.contains(v), "{v}: {note}");
            }
        }
    }

    #[test]
    fn bad_view_parameters_fall_back_with_a_notice() {
        let (s, notices) =
            Scenario::from_query("e_bw=2&e_cd=abc&mm_m=0&pl_rate=-1&price=zz&pl_peak=4");
        assert_eq!(s.views.eff, Efficiencies::default());
        assert_eq!(s.views.matmul, Matmul::default());
        assert_eq!(s.views.plan, PlannerInputs::default());
        assert!(s.views.prices.is_empty());
        let kinds: Vec<(&str, NoticeKind)> =
            notices.iter().map(|n| (n.param.as_str(), n.kind)).collect();
        assert_eq!(
            kinds,
            vec![
                ("e_bw", NoticeKind::OutOfRange),
                ("e_cd", NoticeKind::Invalid),
                ("mm_m", NoticeKind::OutOfRange),
                ("pl_rate", NoticeKind::OutOfRange),
                ("price", NoticeKind::Invalid),
            ]
        );
    }
}
