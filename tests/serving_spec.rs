//! Speculative decoding in the simulator (`core::sim::spec`), seen from a run's result: a
//! lone request gains about the mean accepted length per step, the gain shrinks as the batch
//! fills the GPU, SGLang caps its running requests under speculation, and the acceptance
//! drawn over a run matches the rates. Published speedups: `tests/spec_decode_validation.rs`.

mod common;

use common::{h100, qwen8b};
use llm_serving_calculator::core::sim::{
    simulate, Arrival, EngineKind, Lengths, SimResult, SpecConfig, SpecMethod,
};

fn run(spec: Option<SpecConfig>, clients: u64, engine: EngineKind) -> SimResult {
    let mut cfg = common::sim_config(
        Arrival::AllAtOnce,
        Lengths::Fixed {
            input: 512,
            output: 256,
        },
        (4 * clients).max(8),
    );
    cfg.workload.max_concurrency = Some(clients);
    cfg.engine.engine = engine;
    cfg.engine.spec = spec;
    simulate(&qwen8b(), h100(), &cfg).expect("simulates")
}

/// One client: the steps per output token fall by about the mean accepted length (each step
/// yields that many tokens on average), and TPOT falls by less (a verifying step and the
/// drafter's passes cost more than a plain decode step).
#[test]
fn a_lone_request_gains_about_the_accepted_length() {
    let spec = SpecConfig::new(SpecMethod::Eagle3, 3);
    let (b, s) = (
        run(None, 1, EngineKind::Vllm),
        run(Some(spec), 1, EngineKind::Vllm),
    );
    let length = spec.mean_accepted_length();
    let per_token = |r: &SimResult| r.steps as f64 / r.total_output_tokens as f64;
    let fewer = per_token(&b) / per_token(&s);
    assert!((fewer / length - 1.0).abs() < 0.1, "{fewer} vs {length}");
    let speedup = b.tpot_ms.mean / s.tpot_ms.mean;
    assert!(speedup > 1.2 && speedup < length, "{speedup} {length}");
}

/// The same speculation gains less with 256 clients than with one: the verification's
/// `1 + k` tokens per request push the step toward the compute roof.
#[test]
fn the_gain_shrinks_as_the_batch_grows() {
    let spec = Some(SpecConfig::new(SpecMethod::Eagle3, 3));
    let gain = |c: u64| {
        run(spec, c, EngineKind::Vllm).output_throughput
            / run(None, c, EngineKind::Vllm).output_throughput
    };
    let (one, many) = (gain(1), gain(256));
    assert!(many < one, "{many} {one}");
}

/// SGLang runs at most 48 requests at once under speculation unless told otherwise; without it
/// its default is far higher.
#[test]
fn sglang_caps_its_batch_under_speculation() {
    let spec = Some(SpecConfig::new(SpecMethod::Eagle3, 2));
    let (b, s) = (
        run(None, 128, EngineKind::Sglang),
        run(spec, 128, EngineKind::Sglang),
    );
    assert_eq!(s.engine.max_num_seqs, 48);
    assert!(b.engine.max_num_seqs > 48);
    assert!(
        s.max_batch <= 48 && b.max_batch > 48,
        "{} {}",
        s.max_batch,
        b.max_batch
    );
}

/// Over a run the output tokens per verifying step average the rates' mean accepted length
/// (one client, so every step after the prompt's verifies): within 5% over about 900 draws
/// (their spread is about 2%; the last steps of each request, with fewer drafts left, pull the
/// average down by about 1%).
#[test]
fn acceptance_over_a_run_matches_the_rates() {
    let spec = SpecConfig::uniform(SpecMethod::Ngram, 4, 0.6);
    let s = run(Some(spec), 1, EngineKind::Vllm);
    let decode_steps = s.steps as f64 - s.completed as f64;
    let per_step = (s.total_output_tokens - s.completed) as f64 / decode_steps;
    let want = spec.mean_accepted_length();
    assert!((per_step / want - 1.0).abs() < 0.05, "{per_step} {want}");
}
