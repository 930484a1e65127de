//! Serving-simulator speed, native: one run of 10,000 requests and a sweep of 12 rates ×
//! 2,000 requests (what the app's "Serving under load" section runs), Qwen3-8B on one H100
//! SXM with ShareGPT-like lengths; and one planner search on simulated tails (the smallest
//! fleet meeting P99 targets, least-loaded router, 2,000 requests per run, from a deliberately
//! poor first guess of 1 replica); and the app's two worker jobs for the default scenario
//! (the serving section's sweep of every compared GPU, the planner's simulated sizing), from
//! the job's JSON text to the reply's, as the Web Worker runs them. Reports only, never
//! asserts.
//! Run: `cargo run --release --example bench_sim`.

use llm_serving_calculator::core::calc::Efficiencies;
use llm_serving_calculator::core::hardware::Catalog;
use llm_serving_calculator::core::model::{parse_model_text, preset};
use llm_serving_calculator::core::present::{run_job_json, JobKind, ServingJob};
use llm_serving_calculator::core::scenario::Scenario;
use llm_serving_calculator::core::sim::{
    size_fleet, sweep_rates, Arrival, Budget, EngineConfig, Lengths, Replica, Router, Slo,
    WorkloadSpec,
};
use std::time::Instant;

fn main() {
    let Some(p) = preset("Qwen__Qwen3-8B") else {
        eprintln!("bench_sim: preset missing");
        return;
    };
    let (Ok(model), Ok(gpu)) = (
        parse_model_text(p.json()),
        Catalog::builtin().get("h100-sxm"),
    ) else {
        eprintln!("bench_sim: model or GPU missing");
        return;
    };
    let eff = Efficiencies::default();
    println!("bench_sim: Qwen3-8B on H100 SXM, ShareGPT-like lengths, vLLM defaults");
    for (label, arrival) in [
        (
            "10,000 requests, Poisson 20 req/s",
            Arrival::Poisson { rate: 20.0 },
        ),
        ("10,000 requests, all at once     ", Arrival::AllAtOnce),
    ] {
        let wl = WorkloadSpec {
            arrival,
            lengths: Lengths::ShareGpt,
            num_requests: 10_000,
            ..WorkloadSpec::default()
        };
        let start = Instant::now();
        let Ok(mut rep) = Replica::new(&model, gpu, &EngineConfig::default(), &eff) else {
            eprintln!("bench_sim: replica failed");
            return;
        };
        let built = start.elapsed();
        match rep.run(&wl, None, Budget::default()) {
            Ok(r) => println!(
                "{label}  {:8.1} ms (setup {:5.1} ms)  steps {:7}  completed {}  {:.2} req/s  P99 TTFT {:.0} ms",
                start.elapsed().as_secs_f64() * 1e3,
                built.as_secs_f64() * 1e3,
                r.steps,
                r.completed,
                r.request_throughput,
                r.ttft_ms.p99
            ),
            Err(e) => eprintln!("bench_sim: {e}"),
        }
    }
    let wl = WorkloadSpec {
        lengths: Lengths::ShareGpt,
        num_requests: 2_000,
        ..WorkloadSpec::default()
    };
    let rates: Vec<f64> = (1..=12).map(|i| f64::from(i) * 4.0).collect();
    let start = Instant::now();
    let Ok(mut rep) = Replica::new(&model, gpu, &EngineConfig::default(), &eff) else {
        return;
    };
    match sweep_rates(&mut rep, &wl, &rates, None, Budget::default()) {
        Ok(s) => println!(
            "sweep 12 rates x 2,000 requests (+1 saturation run)  {:8.1} ms  saturation {:.2} req/s",
            start.elapsed().as_secs_f64() * 1e3,
            s.saturation_rate
        ),
        Err(e) => eprintln!("bench_sim: {e}"),
    }
    let slo = Slo {
        ttft_ms: 500.0,
        tpot_ms: 30.0,
    };
    for (rate, guess) in [(100.0, 1u64), (400.0, 1), (400.0, 20)] {
        let start = Instant::now();
        match size_fleet(&rep, Router::LeastLoaded, &wl, rate, slo, guess, Budget::default()) {
            Ok(s) => println!(
                "planner search {rate:>5} req/s from {guess:>2} replica(s)  {:8.1} ms  {} runs  replicas {:?}",
                start.elapsed().as_secs_f64() * 1e3,
                s.tried.len(),
                s.replicas
            ),
            Err(e) => eprintln!("bench_sim: {e}"),
        }
    }
    worker_jobs();
}

/// The worker's jobs for the default scenario, JSON in and out.
fn worker_jobs() {
    let s = Scenario::default();
    for (label, kind) in [
        (
            "worker job: serving sweep, default scenario",
            JobKind::Sweep,
        ),
        (
            "worker job: planner sizing, default scenario",
            JobKind::Plan,
        ),
    ] {
        let job = ServingJob {
            id: 1,
            query: s.to_query(),
            lang: "en".into(),
            kind,
            text: String::new(),
        };
        let Ok(text) = serde_json::to_string(&job) else {
            return;
        };
        let start = Instant::now();
        let reply = run_job_json(&text);
        println!(
            "{label}  {:8.1} ms  ({} GPU(s), reply {} KB)",
            start.elapsed().as_secs_f64() * 1e3,
            s.gpus.len(),
            reply.len() / 1000
        );
    }
}
