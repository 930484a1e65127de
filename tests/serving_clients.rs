//! The simulated clients as benchmarks run them (issue 44, part 2): fixed-length closed-loop
//! clients against measured runs of the same kind, and the warm-up a benchmark drains before
//! it measures.

mod common;

use common::e2e::{rows, simulate, Outcome};
use common::percentile;
use llm_serving_calculator::core::calc::Efficiencies;
use llm_serving_calculator::core::model::{parse_model_text, preset};
use llm_serving_calculator::core::sim::{
    Arrival, Budget, EngineConfig, Lengths, Replica, SimResult, WorkloadSpec,
};

/// 64 clients sending fixed-length requests (1,024 prompt tokens; 128, 512 or 1,024 output
/// tokens) to Qwen3-32B on H100s at TP 2, 4 and 8: AIConfigurator's own runs (aiperf, 20
/// requests per client after 2 drained warm-up ones; `fixtures/measured_serving_e2e.csv`),
/// 194 to 388 ms of mean TTFT. Fixed lengths keep requests that start together finishing
/// together, and the server's path makes the clients that finish a step apart send again
/// together: the prompts come in waves, as the measured TTFTs (8 or so decode steps) show.
/// The simulator reproduces that regime (median |error| within 20%). Without the server's
/// path (the engine alone) it does not: the waves are smaller and the TTFT too low.
#[test]
fn sixty_four_fixed_length_clients_reach_the_measured_ttft_regime() {
    let runs: Vec<_> = rows()
        .into_iter()
        .filter(|r| {
            r.model == "Qwen/Qwen3-32B" && r.precision.is_empty() && r.c == 64 && r.isl == 1024
        })
        .collect();
    assert_eq!(runs.len(), 9, "TP 2, 4, 8 × three output lengths");
    let mut with_path = Vec::new();
    let mut engine_only = Vec::new();
    for r in &runs {
        let err = |s: &SimResult| (s.ttft_ms.mean / r.ttft_ms - 1.0).abs();
        if let Outcome::Simulated(s) = simulate(r, &|_| {}) {
            println!(
                "TP {} {}+{}: measured {:.0} ms, simulated {:.0} ms (server path {:.1}, queue {:.1}, prefill {:.1})",
                r.tp, r.isl, r.osl, r.ttft_ms, s.ttft_ms.mean, s.frontend_ms.mean, s.queue_ms.mean, s.prefill_ms.mean
            );
            with_path.push(err(&s));
        }
        if let Outcome::Simulated(s) = simulate(r, &|e| {
            e.frontend_overhead_ms = 0.0;
            e.frontend_per_token_us = 0.0;
        }) {
            engine_only.push(err(&s));
        }
    }
    let (a, b) = (
        percentile(&mut with_path, 0.5),
        percentile(&mut engine_only, 0.5),
    );
    println!(
        "median |TTFT error|: {:.1}% with the server's path, {:.1}% with the engine alone",
        a * 100.0,
        b * 100.0
    );
    assert_eq!(with_path.len(), 9);
    assert!(a <= 0.20, "median |TTFT error| {a:.3}");
    assert!(
        b > a,
        "the engine alone should be further off: {b:.3} vs {a:.3}"
    );
}

fn gpt_oss_on_four_h200(wl: &WorkloadSpec) -> SimResult {
    let model =
        parse_model_text(preset("openai__gpt-oss-120b").expect("preset").json()).expect("model");
    let engine = EngineConfig {
        tp: 4,
        max_num_batched_tokens: Some(8192),
        ..EngineConfig::default()
    };
    Replica::new(
        &model,
        common::gpu("h200-sxm"),
        &engine,
        &Efficiencies::default(),
    )
    .expect("replica")
    .run(wl, None, Budget::default())
    .expect("runs")
}

fn clients(c: u64, per_client: u64, warmup_per_client: u64, drained: bool) -> WorkloadSpec {
    WorkloadSpec {
        arrival: Arrival::AllAtOnce,
        max_concurrency: Some(c),
        lengths: Lengths::Fixed {
            input: 1024,
            output: 1024,
        },
        num_requests: (per_client + warmup_per_client) * c,
        warmup: warmup_per_client * c,
        warmup_drained: drained,
        seed: 0,
    }
}

/// A drained warm-up (vLLM bench's `--num-warmups`, aiperf's `--warmup-request-count`) runs to
/// its end before the first measured request is sent, so the measured run starts from an idle
/// engine with every client sending at once: its statistics are exactly those of the same run
/// without a warm-up. A warm-up that is only the stream's first requests is not: its clients
/// are already out of phase when the measured requests start, so there is no first wave.
#[test]
fn the_warm_up_is_drained_as_the_benchmark_drains_it() {
    let drained = gpt_oss_on_four_h200(&clients(16, 10, 2, true));
    let none = gpt_oss_on_four_h200(&clients(16, 10, 0, false));
    let streamed = gpt_oss_on_four_h200(&clients(16, 10, 2, false));
    assert_eq!(drained.num_prompts, 160);
    assert_eq!(drained.completed, 160);
    for (a, b) in [
        (drained.ttft_ms.mean, none.ttft_ms.mean),
        (drained.tpot_ms.mean, none.tpot_ms.mean),
        (drained.duration_s, none.duration_s),
    ] {
        assert!((a - b).abs() <= 1e-9 * b.abs().max(1.0), "{a} vs {b}");
    }
    assert!(
        streamed.ttft_ms.mean != drained.ttft_ms.mean,
        "a streamed warm-up should change the measured run"
    );
}
