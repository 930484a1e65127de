//! The SGLang and TensorRT-LLM profiles of the serving simulator (`core::sim::engines`): what
//! each scheduler does that vLLM's does not, seen from a run's result, and their defaults and
//! refusals. Their accuracy on measured runs is `tests/engines_e2e_validation.rs`.

mod common;

use common::{h100, qwen8b};
use llm_serving_calculator::core::base::i18n::tr;
use llm_serving_calculator::core::base::Lang;
use llm_serving_calculator::core::model::{parse_model_text, preset};
use llm_serving_calculator::core::sim::{
    simulate, Arrival, EngineKind, Lengths, Policy, SimConfig, SimResult,
};

fn config(engine: EngineKind, arrival: Arrival, lengths: Lengths, n: u64) -> SimConfig {
    let mut cfg = common::sim_config(arrival, lengths, n);
    cfg.engine.engine = engine;
    cfg
}

fn run(cfg: &SimConfig) -> SimResult {
    simulate(&qwen8b(), h100(), cfg).expect("simulates")
}

/// Two requests, the second (short) arriving while the first decodes: vLLM runs the second's prompt in
/// a step beside the first's decode, SGLang in a step of its own (a prompt batch or a decode
/// batch, never both), so its run takes exactly one step more; with `--enable-mixed-chunk`
/// SGLang mixes them as vLLM does.
#[test]
fn sglang_runs_a_prompt_batch_without_the_decodes() {
    // The first request outlives the second, so a step it waits shows in the run's length.
    let lengths = Lengths::List {
        pairs: vec![(512, 300), (512, 5)],
    };
    // Gaps of 0.5 s, all but constant: the first request still decodes when the second comes.
    let arrival = Arrival::Gamma {
        rate: 2.0,
        burstiness: 1e6,
    };
    let steps = |engine: EngineKind, mixed: bool| {
        let mut cfg = config(engine, arrival, lengths.clone(), 2);
        cfg.engine.max_num_batched_tokens = Some(8192);
        cfg.engine.mixed_chunk = mixed;
        let r = run(&cfg);
        assert_eq!(r.completed, 2, "{engine:?}");
        r.steps
    };
    let vllm = steps(EngineKind::Vllm, false);
    assert_eq!(steps(EngineKind::Sglang, false), vllm + 1);
    assert_eq!(steps(EngineKind::Sglang, true), vllm);
    assert_eq!(steps(EngineKind::Trtllm, false), vllm);
}

/// With a pool of about ten requests' worth, vLLM admits more than it can finish and preempts;
/// TensorRT-LLM's `GUARANTEED_NO_EVICT` admits a request only when its whole prompt and output
/// fit beside what the running ones still need, so it never preempts; SGLang reserves only a
/// share of the running requests' output and retracts when a decode step runs out of pages.
/// All finish.
#[test]
fn under_kv_pressure_trtllm_never_evicts_and_sglang_retracts() {
    let lengths = Lengths::Fixed {
        input: 300,
        output: 600,
    };
    let pressed = |engine: EngineKind, blocks: u64| {
        let mut cfg = config(engine, Arrival::AllAtOnce, lengths.clone(), 200);
        cfg.engine.num_gpu_blocks_override = Some(blocks);
        let r = run(&cfg);
        assert_eq!(r.completed, 200, "{engine:?}");
        assert!(r.peak_kv_occupancy <= 1.0, "{engine:?}");
        r
    };
    // 9,600 tokens in each engine's pages (16, 1 and 32 tokens).
    assert!(pressed(EngineKind::Vllm, 600).preemptions > 0);
    let trt = pressed(EngineKind::Trtllm, 300);
    assert_eq!(trt.preemptions, 0);
    // At most 10 requests of 900 tokens (29 blocks of 32 each) fit 300 blocks at once.
    assert!(trt.series.points.iter().all(|p| p.batch <= 10), "{trt:?}");
    assert!(pressed(EngineKind::Sglang, 9600).preemptions > 0);
}

/// Each engine's defaults on an H100 (`sim::engines`): SGLang's chunk of 8,192 tokens, pages of
/// 1 and a pool of `fraction × free − weights`; TensorRT-LLM's 8,192 tokens a step, 2,048
/// requests, blocks of 32 and a pool of 0.9 of what its warm-up leaves; each policy named.
#[test]
fn each_engine_resolves_its_own_defaults() {
    let m = qwen8b();
    let r = |engine: EngineKind| {
        let mut cfg = SimConfig::default();
        cfg.engine.engine = engine;
        cfg.engine.resolve(&m, h100()).expect("resolves")
    };
    let (v, s, t) = (
        r(EngineKind::Vllm),
        r(EngineKind::Sglang),
        r(EngineKind::Trtllm),
    );
    assert_eq!(v.policy, Policy::Vllm);
    assert_eq!(
        s.policy,
        Policy::Sglang {
            mixed_chunk: false,
            max_prefill_tokens: 16384,
            recv_interval: 1
        }
    );
    assert_eq!(
        t.policy,
        Policy::Trtllm {
            chunked: false,
            adp_timeout_iters: 0,
            adp_ranks: 1,
            batch_wait: (0, 0.0),
        }
    );
    assert_eq!((s.max_num_batched_tokens, s.block_size), (8192, 1));
    assert_eq!(
        (t.max_num_batched_tokens, t.max_num_seqs, t.block_size),
        (8192, 2048, 32)
    );
    // Each pool is its own rule's: SGLang's 0.835 of the free memory less the weights holds
    // less than vLLM's 0.9 of the total less weights, activations and the rest; every pool
    // lies between 40 and 70 GiB of KV for Qwen3-8B's 16.4 GB on 79 GiB.
    let tokens = |x: &llm_serving_calculator::core::sim::Resolved| x.num_gpu_blocks * x.block_size;
    assert!(tokens(&s) < tokens(&v), "{} {}", tokens(&s), tokens(&v));
    let per_token = 36.0 * 8.0 * 128.0 * 2.0 * 2.0; // Qwen3-8B's bf16 KV bytes per token
    for x in [&v, &s, &t] {
        let gib = tokens(x) as f64 * per_token / (1u64 << 30) as f64;
        assert!((40.0..70.0).contains(&gib), "{gib} GiB");
    }
}

/// Out-of-range engine knobs and a model the other engines' pools do not cover are refused
/// with a sentence.
#[test]
fn bad_engine_input_is_refused() {
    let m = qwen8b();
    for f in [0.0, -0.1, 1.5, f64::NAN] {
        let mut cfg = SimConfig::default();
        cfg.engine.engine = EngineKind::Sglang;
        cfg.engine.memory_fraction = Some(f);
        let e = cfg.engine.resolve(&m, h100()).expect_err("refused");
        let s = e.message(Lang::En);
        assert!(s.contains("memory_fraction"), "{s}");
    }
    let mut cfg = SimConfig::default();
    cfg.engine.engine = EngineKind::Trtllm;
    cfg.engine.page_size = Some(0);
    assert!(cfg.engine.resolve(&m, h100()).is_err());
    let mamba =
        parse_model_text(preset("ArthurZ__mamba-2.8b").expect("preset").json()).expect("parses");
    cfg.engine.page_size = None;
    let e = cfg.engine.resolve(&mamba, h100()).expect_err("refused");
    assert!(
        e.message(Lang::En)
            .contains(tr(Lang::En, "exp_sim_engine_recurrent")),
        "{}",
        e.message(Lang::En)
    );
    // A hybrid model: TensorRT-LLM's state pool is not modelled, SGLang's is; a model with
    // no attention layers SGLang does not serve.
    let hybrid = parse_model_text(
        preset("nvidia__Nemotron-H-56B-Base-8K")
            .expect("preset")
            .json(),
    )
    .expect("parses");
    cfg.engine.tp = 2;
    let e = cfg.engine.resolve(&hybrid, h100()).expect_err("refused");
    assert!(
        e.message(Lang::En)
            .contains(tr(Lang::En, "exp_sim_engine_recurrent")),
        "{}",
        e.message(Lang::En)
    );
    cfg.engine.engine = EngineKind::Sglang;
    let r = cfg
        .engine
        .resolve(&hybrid, h100())
        .expect("SGLang sizes its state pool");
    assert!(r.pool.is_some_and(|p| p.state_slots > 0));
    cfg.engine.tp = 1;
    let e = cfg.engine.resolve(&mamba, h100()).expect_err("refused");
    assert!(
        e.message(Lang::En)
            .contains(tr(Lang::En, "exp_sim_sglang_recurrent_only")),
        "{}",
        e.message(Lang::En)
    );
}

/// TensorRT-LLM's batch waiting (`batch_wait_timeout_iters` T, `batch_wait_max_tokens_ratio`
/// R): a prompt that arrives while another request decodes waits T decode steps, unless its
/// tokens and the decodes' reach `R × max_num_tokens`; a prompt that finds the engine idle
/// goes in at once. Two requests, the second arriving while the first decodes: waiting adds T
/// of the first's decode steps to the second's TTFT, so half of that to the mean.
#[test]
fn trtllm_batch_waiting_holds_prompts_back_while_requests_decode() {
    let lengths = Lengths::List {
        pairs: vec![(512, 300), (512, 5)],
    };
    let arrival = Arrival::Gamma {
        rate: 2.0,
        burstiness: 1e6,
    };
    let with = |wait: Option<(u64, f64)>| {
        let mut cfg = config(EngineKind::Trtllm, arrival, lengths.clone(), 2);
        cfg.engine.max_num_batched_tokens = Some(8192);
        cfg.engine.batch_wait = wait;
        let r = run(&cfg);
        assert_eq!(r.completed, 2, "{wait:?}");
        r
    };
    let off = with(None);
    let waits = 20;
    let held = with(Some((waits, 0.9)));
    let added = held.ttft_ms.mean - off.ttft_ms.mean;
    let expected = waits as f64 * off.tpot_ms.mean / 2.0;
    assert!(
        (added / expected - 1.0).abs() < 0.25,
        "added {added:.1} ms, expected about {expected:.1} ms"
    );
    // 513 tokens reach 0.05 × 8,192: no wait.
    let full = with(Some((waits, 0.05)));
    assert!((full.ttft_ms.mean - off.ttft_ms.mean).abs() < 1e-9);
    // A ratio outside [0, 1] is refused with the flag's name.
    let m = qwen8b();
    for r in [1.5, -0.1, f64::NAN] {
        let mut cfg = SimConfig::default();
        cfg.engine.engine = EngineKind::Trtllm;
        cfg.engine.batch_wait = Some((20, r));
        let e = cfg.engine.resolve(&m, h100()).expect_err("refused");
        assert!(
            e.message(Lang::En).contains("batch_wait_max_tokens_ratio"),
            "{}",
            e.message(Lang::En)
        );
    }
}
