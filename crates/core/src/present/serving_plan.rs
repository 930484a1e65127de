//! The planner's job for the serving worker ([`JobKind::Plan`](super::serving::JobKind)):
//! the plan of the scenario (as the planner section computes it, `views::planner`), then its
//! best option's replicas for the average and the peak rate sized on simulated P99 TTFT and
//! TPOT behind the section's router (`views::planner_sim::simulated_plan`, the same as
//! `llmcalc plan … --simulate --router R`). The engine's flags, the request count, warm-up
//! and burstiness are the "Serving under load" inputs; the lengths, rates and TP are the
//! plan's.
//!
//! Like the sweep, it runs only in the worker: the page's main module never links the
//! simulator, it reads the prepared [`PlanSimView`].

use crate::base::error::CalcError;
use crate::base::i18n::Lang;
use crate::calc::capacity::{self, PerfTiming};
use crate::hardware::catalog::Catalog;
use crate::present::report::scenario_model;
use crate::present::serving_load::{engine_config, workload};
use crate::present::views::{plan_inputs, simulated_plan, SimPlanSettings, SimulatedPlan};
use crate::scenario::Scenario;
use crate::sim::config::Budget;
use serde::{Deserialize, Serialize};

/// What the planner shows of the simulated sizing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanSimView {
    /// The sizing of the best option (average and peak, N and N − 1 with their P99s).
    pub plan: SimulatedPlan,
    /// Its notes (capped searches, partial runs), in the job's language.
    pub notes: Vec<String>,
}

/// The planner's simulation settings from the scenario: the section's router and engine
/// flags, its request count, warm-up and burstiness (rate, lengths and TP are replaced by
/// the plan's), the scenario's efficiencies.
pub fn plan_sim_settings(s: &Scenario) -> SimPlanSettings {
    SimPlanSettings {
        router: s.views.serving.router,
        engine: engine_config(s),
        workload: workload(s),
        efficiencies: s.views.eff,
        budget: Budget::default(),
    }
}

/// Runs a planner job: the scenario's plan, then its best option sized on simulated P99s.
/// A plan without a best option (no GPU meets the targets) is an error with the planner's
/// own sentence.
pub fn run_plan_job(query: &str, lang: Lang, catalog: &Catalog) -> Result<PlanSimView, CalcError> {
    let (s, _) = Scenario::from_query(query);
    let model = scenario_model(&s)?;
    let (inp, _) = plan_inputs(&s);
    let timing = PerfTiming {
        model: &model,
        eff: s.views.eff,
        weights_dtype: s.weight_dtype,
        kv_dtype: s.kv_dtype,
    };
    let plan = capacity::plan(&inp, catalog, &timing)?;
    let sized = simulated_plan(&model, &plan, &inp, catalog, &plan_sim_settings(&s))?;
    let notes = sized.notes.iter().map(|n| n.text(lang)).collect();
    Ok(PlanSimView { plan: sized, notes })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::present::serving::{run_job_json, JobKind, ServingJob, WorkerReply};
    use crate::scenario::GpuChoice;
    use crate::sim::fleet::Router;

    fn query(router: Router) -> String {
        let mut s = Scenario {
            gpus: vec![GpuChoice::Catalog("h100-sxm".into())],
            ..Scenario::default()
        };
        s.views.serving.num_requests = 400;
        s.views.serving.warmup = 20;
        s.views.serving.router = router;
        s.to_query()
    }

    fn planned(router: Router) -> PlanSimView {
        let job = ServingJob {
            id: 3,
            query: query(router),
            lang: "en".into(),
            kind: JobKind::Plan,
            text: String::new(),
        };
        let text = serde_json::to_string(&job).unwrap_or_default();
        match serde_json::from_str::<WorkerReply>(&run_job_json(&text)) {
            Ok(WorkerReply::Planned { id, plan }) => {
                assert_eq!(id, 3);
                *plan
            }
            other => panic!("expected a planner result, got {other:?}"),
        }
    }

    #[test]
    fn a_plan_job_sizes_the_best_option_with_n_meeting_and_n_minus_one_missing() {
        let v = planned(Router::RoundRobin);
        let p = &v.plan;
        assert_eq!(p.router, Router::RoundRobin);
        assert_eq!(p.num_requests, 400);
        for s in [&p.average, &p.peak] {
            let n = s.replicas.unwrap_or_else(|| panic!("no count: {s:?}"));
            assert!(n >= 1);
            let at = s.at_count.unwrap_or_else(|| panic!("no tails at N"));
            assert_eq!(at.replicas, n);
            assert!(at.meets_targets, "{at:?}");
            assert!(at.p99_ttft_ms <= p.targets.ttft_ms && at.p99_tpot_ms <= p.targets.tpot_ms);
            // N − 1 misses (it is simulated unless N is 1).
            match s.one_fewer {
                Some(f) => {
                    assert_eq!(f.replicas + 1, n);
                    assert!(!f.meets_targets, "{f:?}");
                }
                None => assert_eq!(n, 1),
            }
        }
        // The peak needs at least as many replicas as the average.
        assert!(p.peak.replicas >= p.average.replicas);
        // The same as the CLI's sizing on the same settings.
        let (s, _) = Scenario::from_query(&query(Router::RoundRobin));
        assert_eq!(plan_sim_settings(&s).workload.num_requests, 400);
    }

    #[test]
    fn the_router_reaches_the_sizing() {
        let v = planned(Router::LeastLoaded);
        assert_eq!(v.plan.router, Router::LeastLoaded);
        assert!(v.plan.average.replicas.is_some());
    }

    #[test]
    fn an_impossible_target_fails_with_a_sentence() {
        let (mut s, _) = Scenario::from_query(&query(Router::RoundRobin));
        s.views.plan.tpot_ms = 0.01;
        let job = ServingJob {
            id: 9,
            query: s.to_query(),
            lang: "ko".into(),
            kind: JobKind::Plan,
            text: String::new(),
        };
        let text = serde_json::to_string(&job).unwrap_or_default();
        match serde_json::from_str::<WorkerReply>(&run_job_json(&text)) {
            Ok(WorkerReply::Failed { id, message }) => {
                assert_eq!(id, 9);
                assert!(!message.is_empty());
            }
            other => panic!("expected a failure, got {other:?}"),
        }
    }
}
