//! Properties of a fleet of replicas behind a router (`core::sim::fleet`) and of the planner's
//! search on simulated tails (`core::sim::sizing`): round-robin over one replica is the
//! single-replica simulation bit for bit; least-loaded is not worse than round-robin at P99
//! TTFT on bursty traffic (checked on seeds, not a theorem); more replicas do not raise the
//! P99s at a fixed total rate (on the cases below); the search's count meets the targets and
//! one fewer does not (re-simulated here, not read from the search); bad input gets a
//! sentence in English and Korean.

mod common;

use common::{h100, qwen8b, qwen8b_replica};
use llm_serving_calculator::core::base::Lang;
use llm_serving_calculator::core::calc::Efficiencies;
use llm_serving_calculator::core::calc::{
    plan, Bucket, Candidate, PerfTiming, PlanInputs, Targets, Traffic,
};
use llm_serving_calculator::core::hardware::Catalog;
use llm_serving_calculator::core::present::{
    plan_lengths, run_requests, simulated_plan, SimPlanSettings, MAX_RUN_REQUESTS, MIN_SPAN_S,
};
use llm_serving_calculator::core::sim::{
    simulate_fleet, size_fleet, Arrival, Budget, EngineConfig, Lengths, Replica, Router, SimResult,
    Slo, WorkloadSpec,
};
use proptest::prelude::*;

fn workload(arrival: Arrival, n: u64, seed: u64) -> WorkloadSpec {
    WorkloadSpec {
        arrival,
        lengths: Lengths::ShareGpt,
        num_requests: n,
        seed,
        ..WorkloadSpec::default()
    }
}

/// A replica that queues: `max_num_seqs` 8 (about 5 req/s of ShareGPT-like requests), so that
/// the router's choice decides how long requests wait.
fn queueing_replica() -> Replica {
    let engine = EngineConfig {
        max_num_seqs: Some(8),
        ..EngineConfig::default()
    };
    Replica::new(&qwen8b(), h100(), &engine, &Efficiencies::default()).expect("replica")
}

fn fleet(rep: &Replica, n: u64, router: Router, wl: &WorkloadSpec) -> SimResult {
    simulate_fleet(rep, n, router, wl, None, Budget::default()).expect("fleet")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(10))]

    /// Round-robin over one replica (and least-loaded, which has one choice) is the
    /// single-replica simulation: the same result to the bit, also when the budget stops it.
    #[test]
    fn one_replica_fleet_is_the_single_replica(
        rate in prop::sample::select(vec![2.0f64, 15.0, 60.0, f64::INFINITY]),
        burst in prop::sample::select(vec![0.3f64, 1.0]),
        seed in 0u64..1000,
        warmup in 0u64..20,
        steps in prop::sample::select(vec![300u64, 2_000_000]),
    ) {
        let mut rep = qwen8b_replica();
        let mut wl = workload(Arrival::from_rate(rate, burst), 120, seed);
        wl.warmup = warmup;
        let slo = Some(Slo { ttft_ms: 300.0, tpot_ms: 40.0 });
        let budget = Budget { max_steps: steps };
        let one = rep.run(&wl, slo, budget).expect("single");
        for router in [Router::RoundRobin, Router::LeastLoaded] {
            let f = simulate_fleet(&rep, 1, router, &wl, slo, budget).expect("fleet");
            prop_assert_eq!(format!("{f:?}"), format!("{one:?}"));
        }
    }
}

/// Every request is accounted for in a fleet too, and the pooled statistics cover them all.
#[test]
fn a_fleet_accounts_for_every_request() {
    let rep = qwen8b_replica();
    let wl = workload(Arrival::Poisson { rate: 30.0 }, 400, 3);
    for router in [Router::RoundRobin, Router::LeastLoaded] {
        let r = fleet(&rep, 3, router, &wl);
        assert_eq!(r.completed, 400, "{router:?}");
        assert_eq!(
            r.completed_all + r.running_at_end + r.waiting_at_end + r.not_sent_at_end,
            r.generated
        );
        assert!(r.request_throughput <= 30.0 * 1.5);
        // Deterministic for the seed.
        assert_eq!(
            format!("{r:?}"),
            format!("{:?}", fleet(&rep, 3, router, &wl))
        );
    }
    // A budget stops the fleet with a partial result.
    let r = simulate_fleet(
        &rep,
        3,
        Router::LeastLoaded,
        &wl,
        None,
        Budget { max_steps: 500 },
    )
    .expect("runs");
    assert!(r.partial && r.steps <= 500 && r.completed < 400, "{r:?}");
}

/// On bursty arrivals (gamma gaps, coefficient of variation 2) at about 75 % of a fleet of
/// four queueing replicas' capacity, sending each request to the replica with the fewest
/// outstanding requests gives a P99 TTFT no higher than round-robin's (2 % tolerance).
/// Join-the-shortest-queue beats round-robin on waiting for identical servers; for the P99 of
/// one finite run it is no theorem, so this is checked on four seeds. Where no replica
/// queues, least-loaded can lose (docs/SERVING_SIMULATOR.md, "A fleet"): the count of
/// outstanding requests does not measure a step's prefill work.
#[test]
fn least_loaded_is_not_worse_than_round_robin_when_replicas_queue() {
    let rep = queueing_replica();
    for seed in 0..4 {
        let wl = workload(Arrival::from_rate(15.0, 0.25), 600, seed);
        let rr = fleet(&rep, 4, Router::RoundRobin, &wl);
        let ll = fleet(&rep, 4, Router::LeastLoaded, &wl);
        assert!(
            ll.ttft_ms.p99 <= rr.ttft_ms.p99 * 1.02,
            "seed {seed}: least-loaded {} ms > round-robin {} ms",
            ll.ttft_ms.p99,
            rr.ttft_ms.p99
        );
    }
}

/// At a fixed total rate of 15 req/s (three times one queueing replica's capacity), one to
/// six replicas: P99 TTFT never rises with the count (2 % tolerance) and P99 TPOT stays
/// within 3 % of the count before (it barely depends on the count once the batch is full).
#[test]
fn more_replicas_never_raise_p99_at_a_fixed_rate() {
    let rep = queueing_replica();
    for (router, burst) in [(Router::RoundRobin, 1.0), (Router::LeastLoaded, 0.5)] {
        let wl = workload(Arrival::from_rate(15.0, burst), 600, 7);
        let mut prev: Option<SimResult> = None;
        for n in 1..=6 {
            let r = fleet(&rep, n, router, &wl);
            if let Some(p) = &prev {
                assert!(
                    r.ttft_ms.p99 <= p.ttft_ms.p99 * 1.02,
                    "{router:?} {n}: TTFT {} > {}",
                    r.ttft_ms.p99,
                    p.ttft_ms.p99
                );
                assert!(
                    r.tpot_ms.p99 <= p.tpot_ms.p99 * 1.03,
                    "{router:?} {n}: TPOT {} > {}",
                    r.tpot_ms.p99,
                    p.tpot_ms.p99
                );
            }
            prev = Some(r);
        }
    }
}

#[track_caller]
fn meets(r: &SimResult, slo: Slo) -> bool {
    !r.partial
        && r.completed == r.num_prompts
        && r.ttft_ms.p99 <= slo.ttft_ms
        && r.tpot_ms.p99 <= slo.tpot_ms
}

/// The search's count meets the P99 targets and one fewer does not, checked by simulating
/// both counts here; starting far below or far above gives the same count.
#[test]
fn the_search_count_meets_and_one_fewer_fails() {
    let rep = queueing_replica();
    let base = workload(Arrival::Poisson { rate: 1.0 }, 500, 11);
    let slo = Slo {
        ttft_ms: 400.0,
        tpot_ms: 60.0,
    };
    let rate = 12.0;
    let mut counts = Vec::new();
    for (router, guess) in [
        (Router::LeastLoaded, 1),
        (Router::LeastLoaded, 40),
        (Router::RoundRobin, 4),
    ] {
        let s =
            size_fleet(&rep, router, &base, rate, slo, guess, Budget::default()).expect("search");
        let n = s.replicas.expect("found");
        assert!(s.capped.is_none(), "{s:?}");
        // One replica carries about 5 req/s: it cannot be one.
        assert!(n > 1, "{s:?}");
        let mut wl = base.clone();
        wl.arrival = Arrival::Poisson { rate };
        let at = simulate_fleet(&rep, n, router, &wl, Some(slo), Budget::default()).expect("n");
        assert!(meets(&at, slo), "{router:?} n={n}: {:?}", at.ttft_ms);
        assert_eq!(s.at_count.map(|t| t.p99_ttft_ms), Some(at.ttft_ms.p99));
        if n > 1 {
            let fewer = simulate_fleet(&rep, n - 1, router, &wl, Some(slo), Budget::default())
                .expect("n-1");
            assert!(
                !meets(&fewer, slo),
                "{router:?} n-1={}: {:?}",
                n - 1,
                fewer.ttft_ms
            );
            assert_eq!(s.one_fewer.map(|t| t.replicas), Some(n - 1));
        }
        counts.push((router, n));
    }
    let ll: Vec<u64> = counts
        .iter()
        .filter(|(r, _)| *r == Router::LeastLoaded)
        .map(|(_, n)| *n)
        .collect();
    assert!(ll.windows(2).all(|w| w[0] == w[1]), "{counts:?}");
}

/// A target no fleet meets is capped and said so.
#[test]
fn an_impossible_target_caps_the_search() {
    let rep = qwen8b_replica();
    let base = workload(Arrival::Poisson { rate: 1.0 }, 100, 1);
    let slo = Slo {
        ttft_ms: 0.001,
        tpot_ms: 60.0,
    };
    let s = size_fleet(
        &rep,
        Router::LeastLoaded,
        &base,
        2.0,
        slo,
        250,
        Budget::default(),
    )
    .expect("search");
    assert_eq!(s.replicas, None);
    assert!(s.capped.is_some(), "{s:?}");
}

/// Bad input gets one sentence, in English and in Korean.
#[test]
fn bad_input_gets_a_sentence_in_both_languages() {
    let rep = qwen8b_replica();
    let base = workload(Arrival::Poisson { rate: 1.0 }, 100, 1);
    let good = Slo {
        ttft_ms: 500.0,
        tpot_ms: 50.0,
    };
    let mut errors = Vec::new();
    for (ttft, tpot) in [
        (0.0, 50.0),
        (-1.0, 50.0),
        (f64::NAN, 50.0),
        (500.0, f64::INFINITY),
    ] {
        let slo = Slo {
            ttft_ms: ttft,
            tpot_ms: tpot,
        };
        errors.push(
            size_fleet(
                &rep,
                Router::RoundRobin,
                &base,
                5.0,
                slo,
                1,
                Budget::default(),
            )
            .expect_err("target"),
        );
    }
    for rate in [0.0, -2.0, f64::NAN, f64::INFINITY, 1.0e12] {
        errors.push(
            size_fleet(
                &rep,
                Router::RoundRobin,
                &base,
                rate,
                good,
                1,
                Budget::default(),
            )
            .expect_err("rate"),
        );
    }
    let wl = workload(Arrival::Poisson { rate: 5.0 }, 10, 0);
    for n in [0, 100_000] {
        errors.push(
            simulate_fleet(&rep, n, Router::RoundRobin, &wl, None, Budget::default())
                .expect_err("replicas"),
        );
    }
    let mut closed = wl.clone();
    closed.max_concurrency = Some(8);
    errors.push(
        simulate_fleet(
            &rep,
            2,
            Router::RoundRobin,
            &closed,
            None,
            Budget::default(),
        )
        .expect_err("closed loop"),
    );
    errors.push(Router::parse("random").expect_err("router"));
    for e in &errors {
        let (en, ko) = (e.message(Lang::En), e.message(Lang::Ko));
        assert!(!en.is_empty() && !ko.is_empty() && en != ko, "{en} / {ko}");
        assert!(
            !en.contains("rng_") && !en.contains("fld_") && !en.contains("exp_"),
            "an untranslated key: {en}"
        );
        assert!(
            ko.chars().any(|c| ('\u{AC00}'..='\u{D7A3}').contains(&c)),
            "no Hangul: {ko}"
        );
    }
}

/// The planner's simulated sizing keeps the analytic counts of the plan beside its own, and
/// its counts meet the targets while one fewer does not (re-simulated here).
#[test]
fn the_planner_shows_both_counts_and_why_fewer_fails() {
    let m = qwen8b();
    let inp = PlanInputs {
        traffic: Traffic::mean(40.0, 3.0, 1024, 256),
        targets: Targets::from_ms(500.0, 30.0),
        candidates: vec![Candidate::new("h100-sxm")],
    };
    let p = plan(&inp, Catalog::builtin(), &PerfTiming::new(&m)).expect("plan");
    let best = p.best_option().expect("best").clone();
    let mut set = SimPlanSettings {
        router: Router::LeastLoaded,
        ..SimPlanSettings::default()
    };
    set.workload.num_requests = 300;
    let s = simulated_plan(&m, &p, &inp, Catalog::builtin(), &set).expect("simulated");
    assert_eq!(
        (s.analytic_replicas_avg, s.analytic_replicas_peak),
        (best.replicas_avg, best.replicas_peak)
    );
    assert_eq!(s.derivations.len(), 2);
    let rep = Replica::new(
        &m,
        h100(),
        &EngineConfig {
            tp: best.tp,
            ..EngineConfig::default()
        },
        &Efficiencies::default(),
    )
    .expect("replica");
    let slo = Slo {
        ttft_ms: 500.0,
        tpot_ms: 30.0,
    };
    for (sizing, requests) in [(&s.average, s.requests_avg), (&s.peak, s.requests_peak)] {
        let n = sizing.replicas.expect("found");
        let mut wl = set.workload.clone();
        // The planner raises the count so that the arrivals span a minute.
        assert_eq!(requests, run_requests(300, sizing.rate_rps));
        assert!(requests as f64 >= (sizing.rate_rps * MIN_SPAN_S).min(MAX_RUN_REQUESTS as f64));
        wl.num_requests = requests;
        wl.lengths = Lengths::Fixed {
            input: 1024,
            output: 256,
        };
        wl.arrival = Arrival::Poisson {
            rate: sizing.rate_rps,
        };
        let run = |k| {
            simulate_fleet(
                &rep,
                k,
                Router::LeastLoaded,
                &wl,
                Some(slo),
                Budget::default(),
            )
        };
        assert!(meets(&run(n).expect("n"), slo), "{sizing:?}");
        if n > 1 {
            assert!(!meets(&run(n - 1).expect("n-1"), slo), "{sizing:?}");
        }
    }
    assert!(s.peak.rate_rps > s.average.rate_rps);
}

/// A short run starts empty and ends before the fleet settles: asked for 400 requests at a
/// peak of 240 req/s (1.7 s of arrivals), the planner used to find 6 replicas where Little's
/// law says 13 and a minute of arrivals needs 14. The run now spans a minute, so the
/// simulated count stays near the analytic one, and the note says the count was raised.
#[test]
fn a_short_request_count_does_not_understate_the_peak() {
    let m = qwen8b();
    let inp = PlanInputs {
        traffic: Traffic::mean(60.0, 4.0, 1024, 256),
        targets: Targets::from_ms(500.0, 50.0),
        candidates: vec![Candidate::new("h100-sxm")],
    };
    let p = plan(&inp, Catalog::builtin(), &PerfTiming::new(&m)).expect("plan");
    let mut set = SimPlanSettings::default();
    set.workload.num_requests = 400;
    let s = simulated_plan(&m, &p, &inp, Catalog::builtin(), &set).expect("simulated");
    let n = s.peak.replicas.expect("found");
    let analytic = s.analytic_replicas_peak as f64;
    assert!(
        n as f64 >= 0.8 * analytic,
        "simulated {n}, Little's law {analytic}"
    );
    assert_eq!(s.requests_peak, run_requests(400, p.peak_rate_rps));
    assert!(s.requests_peak > 400);
    assert!(s
        .notes
        .iter()
        .any(|n| n.to_string().contains(&s.requests_peak.to_string())));
}

/// Several buckets become a list in which each holds its share, spread evenly.
#[test]
fn plan_lengths_keep_the_shares() {
    let b = |i, o, share| Bucket {
        input_len: i,
        output_len: o,
        share,
    };
    let Lengths::List { pairs } = plan_lengths(&[b(100, 10, 0.7), b(2000, 200, 0.3)]) else {
        panic!("a list");
    };
    assert_eq!(pairs.len(), 100);
    let long = pairs.iter().filter(|p| p.0 == 2000).count();
    assert_eq!(long, 30);
    // Spread: every window of 10 holds 3 long requests.
    assert!(pairs
        .chunks(10)
        .all(|c| c.iter().filter(|p| p.0 == 2000).count() == 3));
    assert_eq!(
        plan_lengths(&[b(5, 6, 1.0)]),
        Lengths::Fixed {
            input: 5,
            output: 6
        }
    );
}
