//! Properties of the serving simulator (`core::sim`) that must hold whatever the
//! calibration: a lone request equals the static batch-1 model; throughput never exceeds the
//! offered rate; latencies rise with the rate beyond saturation; every request is accounted
//! for (finished, running, waiting or not yet sent), also when the step budget stops a run;
//! a seed fixes the run; KV pressure preempts; bad input is refused with a sentence.

mod common;

use common::{gpu, h100, qwen8b, qwen8b_replica};
use llm_serving_calculator::core::base::i18n::tr;
use llm_serving_calculator::core::base::Lang;
use llm_serving_calculator::core::calc::{
    evaluate, max_model_len_warning, Efficiencies, Workload, MAX_MODEL_LEN_WITHOUT_CONFIG,
};
use llm_serving_calculator::core::model::{parse_model_text, preset};
use llm_serving_calculator::core::sim::{
    simulate, sweep_rates, Arrival, Budget, Lengths, SimConfig, SimNote, SimResult, Slo,
    StepModelKind, WorkloadSpec, DEFAULT_FRONTEND_OVERHEAD_MS, DEFAULT_FRONTEND_PER_TOKEN_US,
    LOCKSTEP_TTFT_RATIO, SGLANG_FRONTEND_OVERHEAD_MS, TRTLLM_FRONTEND_OVERHEAD_MS,
};
use proptest::prelude::*;

fn config(arrival: Arrival, lengths: Lengths, n: u64) -> SimConfig {
    common::sim_config(arrival, lengths, n)
}

fn run(cfg: &SimConfig) -> SimResult {
    simulate(&qwen8b(), h100(), cfg).expect("simulates")
}

#[track_caller]
fn assert_accounted(r: &SimResult) {
    assert_eq!(
        r.completed_all + r.running_at_end + r.waiting_at_end + r.not_sent_at_end,
        r.generated,
        "every request is finished, running, waiting or not yet sent: {r:?}"
    );
}

/// At 0.02 req/s (a request every 50 s, each served in under 2 s) every request is alone:
/// on the roofline step model, TTFT is the static prefill plus the server's fixed path (the
/// default, which the static model does not have) and TPOT the static decode step at the mean
/// context. (The default measured-kernel step model is not the static model's:
/// `a_lone_request_on_the_kernel_model_is_its_kernels`.)
#[test]
fn a_lone_request_equals_the_static_batch_one_model() {
    let (i, o) = (1000u64, 200u64);
    let mut cfg = config(
        Arrival::Poisson { rate: 0.02 },
        Lengths::Fixed {
            input: i,
            output: o,
        },
        30,
    );
    cfg.engine.step_model = StepModelKind::Roofline;
    cfg.engine.frontend_per_token_us = 0.0;
    let r = run(&cfg);
    let s = evaluate(
        &qwen8b(),
        h100(),
        &Workload::new(1, i, o, 1),
        &Efficiencies::default(),
        None,
    )
    .expect("static");
    let rel = |a: f64, b: f64| (a - b).abs() / b;
    let fo = DEFAULT_FRONTEND_OVERHEAD_MS;
    assert_eq!(r.completed, 30);
    assert_eq!(r.max_batch, 1);
    assert!(
        rel(r.ttft_ms.median - fo, s.ttft.ms()) < 1e-3,
        "{} − {fo} vs {}",
        r.ttft_ms.median,
        s.ttft.ms()
    );
    assert!(rel(r.ttft_ms.p99 - fo, s.ttft.ms()) < 1e-3);
    // The static TPOT is one step at context I + O/2; the simulated mean over the steps at
    // I+1 … I+O−1 differs by the half-token rounding only.
    assert!(
        rel(r.tpot_ms.median, s.tpot.ms()) < 2e-3,
        "{} vs {}",
        r.tpot_ms.median,
        s.tpot.ms()
    );
    assert!(rel(r.e2el_ms.median - fo, s.e2e.ms()) < 2e-3);
    assert_eq!(r.queue_ms.p99, 0.0);
    assert_accounted(&r);
}

/// On the default measured-kernel step model a lone request's TTFT is its server path (the
/// fixed part and the serial work per prompt token) and one prefill step, and its parts add
/// up: `mean_frontend_ms + mean_queue_ms + mean_prefill_ms` is the mean TTFT.
#[test]
fn a_lone_request_on_the_kernel_model_is_its_kernels() {
    let (i, o) = (1000u64, 200u64);
    let r = run(&config(
        Arrival::Poisson { rate: 0.02 },
        Lengths::Fixed {
            input: i,
            output: o,
        },
        30,
    ));
    assert_eq!(r.max_batch, 1);
    assert!(r
        .notes
        .iter()
        .any(|n| matches!(n, SimNote::Kernels { sibling: false, .. })));
    let path = DEFAULT_FRONTEND_OVERHEAD_MS + DEFAULT_FRONTEND_PER_TOKEN_US * i as f64 / 1e3;
    assert!(
        (r.frontend_ms.mean - path).abs() < 1e-9,
        "{}",
        r.frontend_ms.mean
    );
    assert_eq!(r.queue_ms.p99, 0.0);
    let parts = r.frontend_ms.mean + r.queue_ms.mean + r.prefill_ms.mean;
    assert!(
        (parts - r.ttft_ms.mean).abs() < 1e-6,
        "{parts} vs {}",
        r.ttft_ms.mean
    );
    // The prefill of 1,000 tokens of an 8B model on an H100: tens of milliseconds.
    assert!(
        (10.0..200.0).contains(&r.prefill_ms.mean),
        "{}",
        r.prefill_ms.mean
    );
}

/// Where no measured kernels cover the GPU (another vendor), the roofline times the steps
/// and the run says so; where the user chose the roofline, it does not.
#[test]
fn a_gpu_without_kernel_tables_falls_back_to_the_roofline_with_a_note() {
    let cfg = config(
        Arrival::Poisson { rate: 1.0 },
        Lengths::Fixed {
            input: 500,
            output: 50,
        },
        20,
    );
    let fallback = |r: &SimResult| r.notes.contains(&SimNote::RooflineFallback);
    let amd = simulate(&qwen8b(), gpu("mi300x"), &cfg).expect("simulates");
    assert!(fallback(&amd), "{:?}", amd.notes);
    assert!(!amd
        .notes
        .iter()
        .any(|n| matches!(n, SimNote::Kernels { .. })));
    assert!(!SimNote::RooflineFallback.message(Lang::Ko).is_empty());
    let mut chosen = cfg.clone();
    chosen.engine.step_model = StepModelKind::Roofline;
    for (id, c) in [
        ("h100-sxm", &cfg),
        ("h100-sxm", &chosen),
        ("mi300x", &chosen),
    ] {
        let r = simulate(&qwen8b(), gpu(id), c).expect("simulates");
        assert!(!fallback(&r), "{id}: {:?}", r.notes);
    }
}

/// The frontend path adds its time once to every TTFT and E2EL and nothing to TPOT or ITL
/// when requests are alone; under closed-loop clients it also spaces each client's requests,
/// so throughput falls by the share of a request's time it takes.
#[test]
fn the_frontend_path_adds_to_ttft_and_e2el_only() {
    let lone = |fo: f64| {
        let mut cfg = config(
            Arrival::Poisson { rate: 0.02 },
            Lengths::Fixed {
                input: 500,
                output: 100,
            },
            20,
        );
        cfg.engine.frontend_overhead_ms = fo;
        run(&cfg)
    };
    let (a, b) = (lone(0.0), lone(120.0));
    let close = |x: f64, y: f64| (x - y).abs() < 1e-6;
    assert!(close(b.ttft_ms.median - a.ttft_ms.median, 120.0), "{b:?}");
    assert!(close(b.ttft_ms.p99 - a.ttft_ms.p99, 120.0));
    assert!(close(b.e2el_ms.mean - a.e2el_ms.mean, 120.0));
    assert!(close(b.tpot_ms.median, a.tpot_ms.median));
    assert!(close(b.itl_ms.p99, a.itl_ms.p99));
    assert_eq!(b.queue_ms.p99, 0.0, "the frontend path is not queueing");
    // One client: each request takes its engine time plus the frontend path.
    let client = |fo: f64| {
        let mut cfg = config(Arrival::AllAtOnce, Lengths::ShareGpt, 40);
        cfg.workload.max_concurrency = Some(1);
        cfg.engine.frontend_overhead_ms = fo;
        run(&cfg)
    };
    let (c0, c1) = (client(0.0), client(200.0));
    let per_request = |r: &SimResult| r.duration_s / r.completed as f64;
    assert!(
        (per_request(&c1) - per_request(&c0) - 0.2).abs() < 1e-6,
        "{} vs {}",
        per_request(&c1),
        per_request(&c0)
    );
    assert!(c1.request_throughput < c0.request_throughput);
    for bad in [-1.0, f64::NAN, f64::INFINITY, 1e6] {
        let mut cfg = config(Arrival::AllAtOnce, Lengths::ShareGpt, 4);
        cfg.engine.frontend_overhead_ms = bad;
        let e = simulate(&qwen8b(), h100(), &cfg).expect_err("bad frontend overhead");
        assert!(e.to_string().contains("frontend_overhead_ms"), "{e}");
        // The per-token part is refused in its own unit.
        let mut cfg = config(Arrival::AllAtOnce, Lengths::ShareGpt, 4);
        cfg.engine.frontend_per_token_us = bad;
        let e = simulate(&qwen8b(), h100(), &cfg).expect_err("bad per-token path");
        let e = e.to_string();
        assert!(
            e.contains("frontend_per_token_us") && e.contains("µs"),
            "{e}"
        );
    }
}

/// vLLM's asynchronous scheduling schedules step k+1 while step k runs: a request that
/// arrives while requests are decoding waits about one step more for its first step than
/// under synchronous scheduling (its mean queueing grows by about one step, the TPOT, not
/// more), and a request that finds the engine idle is admitted at once under both.
#[test]
fn asynchronous_scheduling_admits_a_step_later() {
    let with = |async_scheduling: bool, rate: f64| {
        let mut cfg = config(
            Arrival::Poisson { rate },
            Lengths::Fixed {
                input: 500,
                output: 400,
            },
            300,
        );
        cfg.engine.step_model = StepModelKind::Roofline;
        cfg.engine.frontend_overhead_ms = 0.0;
        cfg.engine.frontend_per_token_us = 0.0;
        cfg.engine.async_scheduling = async_scheduling;
        run(&cfg)
    };
    // About 15 requests decoding at any time.
    let (a, s) = (with(true, 5.0), with(false, 5.0));
    let extra = a.queue_ms.mean - s.queue_ms.mean;
    assert!(
        extra > 0.5 * s.tpot_ms.mean && extra < 1.5 * s.tpot_ms.mean,
        "async {} ms, sync {} ms of queueing, TPOT {} ms",
        a.queue_ms.mean,
        s.queue_ms.mean,
        s.tpot_ms.mean
    );
    // Mostly alone (a request every 50 s, each served in about 3 s): the median request finds
    // nothing in flight.
    let (a, s) = (with(true, 0.02), with(false, 0.02));
    assert_eq!((a.queue_ms.median, s.queue_ms.median), (0.0, 0.0));
    assert_eq!(a.ttft_ms.median, s.ttft_ms.median);
}

/// The serving section's label of the server path quotes the default in both languages.
#[test]
fn the_server_path_label_states_the_default() {
    for ms in [
        DEFAULT_FRONTEND_OVERHEAD_MS,
        SGLANG_FRONTEND_OVERHEAD_MS,
        TRTLLM_FRONTEND_OVERHEAD_MS,
    ] {
        let default = format!(" {ms}");
        for lang in [Lang::En, Lang::Ko] {
            let label = tr(lang, "sv_frontend_overhead");
            assert!(label.contains(&default), "{lang:?}: {label}");
        }
    }
}

/// Beyond the saturation rate, P50 and P99 TTFT and the queueing delay grow with the rate.
#[test]
fn latency_rises_with_rate_beyond_the_knee() {
    let mut rep = qwen8b_replica();
    let wl = WorkloadSpec {
        lengths: Lengths::ShareGpt,
        num_requests: 1500,
        ..WorkloadSpec::default()
    };
    let probe = sweep_rates(&mut rep, &wl, &[], None, Budget::default()).expect("sweep");
    let sat = probe.saturation_rate;
    assert!(sat > 0.0);
    let rates: Vec<f64> = [1.1, 1.4, 2.0, 3.0].iter().map(|f| f * sat).collect();
    let s = sweep_rates(&mut rep, &wl, &rates, None, Budget::default()).expect("sweep");
    for w in s.points.windows(2) {
        let (a, b) = (&w[0].result, &w[1].result);
        assert!(w[1].saturated);
        assert!(
            b.ttft_ms.median >= a.ttft_ms.median,
            "{} {}",
            a.ttft_ms.median,
            b.ttft_ms.median
        );
        assert!(
            b.ttft_ms.p99 >= a.ttft_ms.p99,
            "{} {}",
            a.ttft_ms.p99,
            b.ttft_ms.p99
        );
        assert!(b.queue_ms.mean >= a.queue_ms.mean);
    }
    // Below the knee the latency stays near its floor: at half the saturation rate the
    // median TTFT the engine adds (beyond the server's path, which open-loop arrivals only
    // shift) is a small fraction of the overloaded one (a sixth, on the measured-kernel
    // step model: 16 against 101 ms).
    let low = sweep_rates(&mut rep, &wl, &[0.5 * sat], None, Budget::default()).expect("sweep");
    let last = s.points.last().expect("points");
    let (lo, hi) = (&low.points[0].result, &last.result);
    assert!(
        (lo.ttft_ms.median - lo.frontend_ms.median) * 5.0
            < hi.ttft_ms.median - hi.frontend_ms.median,
        "{} − {} vs {} − {}",
        lo.ttft_ms.median,
        lo.frontend_ms.median,
        hi.ttft_ms.median,
        hi.frontend_ms.median
    );
}

/// Goodput and the highest rate meeting the targets: a target met at a low rate and missed
/// beyond saturation.
#[test]
fn the_sweep_finds_the_highest_rate_meeting_targets() {
    let mut rep = qwen8b_replica();
    let wl = WorkloadSpec {
        lengths: Lengths::ShareGpt,
        num_requests: 800,
        ..WorkloadSpec::default()
    };
    let slo = Slo {
        ttft_ms: 500.0,
        tpot_ms: 50.0,
    };
    let s = sweep_rates(
        &mut rep,
        &wl,
        &[1.0, 5.0, 1000.0],
        Some(slo),
        Budget::default(),
    )
    .expect("sweep");
    assert_eq!(s.max_rate_meeting_targets, Some(5.0));
    let g = |i: usize| s.points[i].result.goodput.expect("goodput");
    assert!(g(0) > 0.95 && g(2) < g(0), "{} {}", g(0), g(2));
}

/// A small KV cache forces preemptions; every request still finishes, and the KV occupancy
/// never exceeds the pool.
#[test]
fn kv_pressure_preempts_and_everything_finishes() {
    let mut cfg = config(
        Arrival::AllAtOnce,
        Lengths::Fixed {
            input: 300,
            output: 600,
        },
        200,
    );
    cfg.engine.num_gpu_blocks_override = Some(600); // 9,600 tokens: ~10 requests at full length
    let r = run(&cfg);
    assert!(r.preemptions > 0);
    assert_eq!(r.completed, 200);
    assert!(r.peak_kv_occupancy <= 1.0 && r.peak_kv_occupancy > 0.9);
    assert!(r.series.points.iter().all(|p| p.kv_occupancy <= 1.0));
    assert_accounted(&r);
}

/// vLLM V1's prefix cache keeps a preempted request's blocks until they are evicted: with a
/// pool between one and two long requests' worth, requests that are admitted, grow and are
/// preempted take their cached prefix back on readmission instead of recomputing it, so the
/// run costs little more than serving them one at a time (`max_num_seqs` 1, no preemption).
/// Recomputing from scratch at every readmission took 7.8 times as long here (145 s, not 18.6).
#[test]
fn a_preempted_request_takes_its_cached_prefix_back() {
    let mut cfg = config(
        Arrival::AllAtOnce,
        Lengths::Fixed {
            input: 30_000,
            output: 200,
        },
        6,
    );
    cfg.engine.max_model_len = Some(32_768);
    cfg.engine.num_gpu_blocks_override = Some(2_900); // one 30,200-token request: 1,888
    let r = run(&cfg);
    cfg.engine.max_num_seqs = Some(1);
    let serial = run(&cfg);
    assert_eq!(serial.preemptions, 0);
    assert!(
        r.preemptions > 0,
        "the pool is between one and two requests"
    );
    assert_eq!(r.completed, 6);
    assert_accounted(&r);
    assert!(
        r.duration_s <= serial.duration_s * 1.10,
        "{} s against {} s one at a time",
        r.duration_s,
        serial.duration_s
    );
}

/// The step budget stops a run: partial, noted, and still every request accounted for.
#[test]
fn the_budget_stops_a_run_with_a_partial_result() {
    let mut cfg = config(Arrival::Poisson { rate: 50.0 }, Lengths::ShareGpt, 3000);
    cfg.budget = Budget { max_steps: 500 };
    let r = run(&cfg);
    assert!(r.partial);
    assert_eq!(r.steps, 500);
    assert!(r.completed < 3000);
    assert!(!r.notes.is_empty());
    assert_accounted(&r);
}

/// Fixed clients (max concurrency) and warm-up.
#[test]
fn clients_and_warmup() {
    let mut cfg = config(Arrival::AllAtOnce, Lengths::ShareGpt, 120);
    cfg.workload.max_concurrency = Some(4);
    cfg.workload.warmup = 20;
    let r = run(&cfg);
    assert_eq!(r.max_batch, 4);
    assert_eq!(r.num_prompts, 100);
    assert_eq!(r.completed, 100);
    assert_eq!(r, run(&cfg), "a seed fixes the run");
    let mut other = cfg.clone();
    other.workload.seed = 9;
    assert_ne!(r.ttft_ms, run(&other).ttft_ms);
}

/// Clients whose requests are all alike, each sending its next as soon as its last returns
/// for at least a round, carry the lockstep note (in both languages, with its factor); any
/// one condition missing (a single round, one client, no cap, varied lengths, a rate the
/// clients keep up with), none.
#[test]
fn alike_clients_carry_the_lockstep_note() {
    let fixed = Lengths::Fixed {
        input: 512,
        output: 64,
    };
    // The note belongs to the roofline step model (on the measured-kernel one, fixed-length
    // clients form the waves measured runs show: `tests/serving_clients.rs`).
    let lockstep = |arrival: Arrival, lengths: Lengths, n: u64, clients: Option<u64>| {
        let mut cfg = config(arrival, lengths, n);
        cfg.workload.max_concurrency = clients;
        cfg.engine.step_model = StepModelKind::Roofline;
        run(&cfg)
            .notes
            .into_iter()
            .find(|n| matches!(n, SimNote::Lockstep { .. }))
    };
    let mut default = config(Arrival::AllAtOnce, fixed.clone(), 40);
    default.workload.max_concurrency = Some(8);
    assert!(!run(&default)
        .notes
        .iter()
        .any(|n| matches!(n, SimNote::Lockstep { .. })));
    let note = lockstep(Arrival::AllAtOnce, fixed.clone(), 40, Some(8));
    assert_eq!(note, Some(SimNote::Lockstep { clients: 8 }));
    let factor = format!("{LOCKSTEP_TTFT_RATIO:.1}");
    for lang in [Lang::En, Lang::Ko] {
        let text = note.as_ref().map(|n| n.message(lang)).unwrap_or_default();
        // Both placeholders filled: the factor shown, and the count (another count, another
        // sentence).
        let other = SimNote::Lockstep { clients: 9 }.message(lang);
        assert!(
            text.contains(&factor) && !text.contains('{') && text != other,
            "{text}"
        );
    }
    let alike_list = Lengths::List {
        pairs: vec![(512, 64); 3],
    };
    assert!(lockstep(Arrival::AllAtOnce, alike_list, 40, Some(8)).is_some());
    // Offered far faster than 8 clients serve: they run closed-loop, as at rate inf.
    assert!(lockstep(
        Arrival::Poisson { rate: 1000.0 },
        fixed.clone(),
        40,
        Some(8)
    )
    .is_some());
    let varied = Lengths::List {
        pairs: vec![(512, 64), (512, 65)],
    };
    for (arrival, lengths, n, clients) in [
        (Arrival::AllAtOnce, varied, 40, Some(8)),
        (Arrival::AllAtOnce, Lengths::ShareGpt, 40, Some(8)),
        (Arrival::AllAtOnce, fixed.clone(), 8, Some(8)),
        (Arrival::AllAtOnce, fixed.clone(), 40, Some(1)),
        (Arrival::AllAtOnce, fixed.clone(), 40, None),
        (Arrival::Poisson { rate: 2.0 }, fixed.clone(), 40, Some(8)),
    ] {
        assert_eq!(lockstep(arrival, lengths, n, clients), None);
    }
}

/// Bad input gets an error (a sentence), never a panic.
#[test]
fn bad_input_is_refused() {
    for rate in [0.0, -3.0, f64::NAN] {
        let cfg = config(Arrival::Poisson { rate }, Lengths::ShareGpt, 10);
        let e = simulate(&qwen8b(), h100(), &cfg).expect_err("bad rate");
        assert!(e.to_string().contains("request_rate"), "{e}");
    }
    let mut cfg = config(
        Arrival::AllAtOnce,
        Lengths::Fixed {
            input: 50_000,
            output: 10,
        },
        10,
    );
    let e = simulate(&qwen8b(), h100(), &cfg).expect_err("too long");
    assert!(e.to_string().contains("50010"), "{e}");
    cfg.workload.lengths = Lengths::Fixed {
        input: 10,
        output: 10,
    };
    cfg.engine.prefix_hit = 1.5;
    assert!(simulate(&qwen8b(), h100(), &cfg).is_err());
    // A sliding-window model pages a full and a sliding group: 1,510 tokens need 95 blocks in
    // each, 190 in all, more than a pool of 100 (which would hold 1,600 tokens of one group).
    let oss =
        parse_model_text(preset("openai__gpt-oss-20b").expect("preset").json()).expect("model");
    let mut cfg = config(
        Arrival::AllAtOnce,
        Lengths::Fixed {
            input: 1500,
            output: 10,
        },
        3,
    );
    cfg.engine.num_gpu_blocks_override = Some(100);
    let e = simulate(&oss, h100(), &cfg).expect_err("does not fit the pool");
    assert!(e.to_string().contains("1510"), "{e}");
    cfg.engine.num_gpu_blocks_override = Some(200);
    assert_eq!(simulate(&oss, h100(), &cfg).expect("fits").completed, 3);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    /// Completed requests per second never exceed the rate they were sent at (the realised
    /// rate of the drawn arrivals), and every request is accounted for.
    #[test]
    fn throughput_never_exceeds_the_offered_rate(
        rate in 0.2f64..60.0,
        burst in prop::sample::select(vec![0.3f64, 1.0, 3.0]),
        seed in 0u64..1000,
        hit in prop::sample::select(vec![0.0f64, 0.5]),
    ) {
        let mut cfg = config(Arrival::from_rate(rate, burst), Lengths::ShareGpt, 300);
        cfg.workload.seed = seed;
        cfg.engine.prefix_hit = hit;
        let r = run(&cfg);
        let reqs = cfg.workload.generate().expect("draws").requests;
        let span = reqs.last().expect("some").ready_s - reqs[0].ready_s;
        let offered = reqs.len() as f64 / span;
        prop_assert!(r.request_throughput <= offered, "{} > {}", r.request_throughput, offered);
        prop_assert_eq!(r.completed, 300);
        assert_accounted(&r);
    }
}

/// A replica keeps the times of the decode-only steps it has computed across its runs (a
/// sweep's rates repeat most small batches); that changes no result: a run on a replica that
/// has already run other workloads equals, bit for bit, the same run on a fresh one.
#[test]
fn a_warm_step_cache_changes_no_result() {
    let wl = |arrival, n| WorkloadSpec {
        arrival,
        lengths: Lengths::ShareGpt,
        num_requests: n,
        ..WorkloadSpec::default()
    };
    let target = wl(Arrival::Poisson { rate: 8.0 }, 300);
    let fresh = qwen8b_replica()
        .run(&target, None, Budget::default())
        .expect("runs");
    let mut warm = qwen8b_replica();
    for a in [
        Arrival::AllAtOnce,
        Arrival::Poisson { rate: 2.0 },
        Arrival::Poisson { rate: 30.0 },
    ] {
        warm.run(&wl(a, 300), None, Budget::default())
            .expect("runs");
    }
    let again = warm.run(&target, None, Budget::default()).expect("runs");
    assert!(fresh.steps > 0);
    assert_eq!(
        serde_json::to_string(&fresh).expect("serialises"),
        serde_json::to_string(&again).expect("serialises")
    );
}

/// A model with recurrent layers pages them as vLLM does (`Paging::Mamba`): LFM2-1.2B's one
/// attention group holds `⌈tokens / 16⌉` blocks and each of its two convolution groups (10
/// layers in groups of 6) one block per request, so 1,510 tokens need 95 + 2 = 97 blocks, and
/// a pool of 98 with vLLM's null block; Bamba-9B runs with the block size vLLM sets for it (528 tokens), not the flag's 16.
#[test]
fn recurrent_layers_take_one_block_per_group_and_the_raised_block_size() {
    let read = |f: &str| {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/corpus")
            .join(f);
        parse_model_text(&std::fs::read_to_string(p).expect("config")).expect("model")
    };
    let lfm2 = read("LiquidAI__LFM2-1.2B.json");
    let mut cfg = config(
        Arrival::AllAtOnce,
        Lengths::Fixed {
            input: 1500,
            output: 10,
        },
        3,
    );
    cfg.engine.max_model_len = Some(4096);
    cfg.engine.num_gpu_blocks_override = Some(97);
    let e = simulate(&lfm2, h100(), &cfg).expect_err("97 blocks do not fit 97 less the null");
    assert!(e.to_string().contains("1510"), "{e}");
    cfg.engine.num_gpu_blocks_override = Some(98);
    let r = simulate(&lfm2, h100(), &cfg).expect("fits");
    assert_eq!((r.completed, r.engine.block_size), (3, 16));
    assert_accounted(&r);
    let bamba = read("ibm-ai-platform__Bamba-9B.json");
    cfg.engine.num_gpu_blocks_override = None;
    let r = simulate(&bamba, h100(), &cfg).expect("fits");
    assert_eq!((r.completed, r.engine.block_size), (3, 528));
    assert_accounted(&r);
}

/// `llmcalc vllm` on a config that states no maximum length and without `--max-model-len`
/// budgets for the 2,048 tokens vLLM assumes, prints vLLM's warning first and says so in JSON.
#[test]
fn a_config_without_a_maximum_length_gets_vllms_2048() {
    let config = "tests/fixtures/ArthurZ__mamba-2.8b.json";
    let args = ["vllm", "--config", config, "--gpu", "a100-sxm-80gb"];
    let (code, out, err) = common::run_cli(&args);
    assert_eq!(code, 0, "{err}");
    let first = out.lines().next().unwrap_or_default();
    assert_eq!(first, format!("WARNING {}", max_model_len_warning()));
    assert!(
        out.contains("Maximum concurrency for 2,048 tokens per request"),
        "{out}"
    );
    let (code, json, err) = common::run_cli(&[&args[..], &["--json"]].concat());
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&json).expect("json");
    assert_eq!(v["max_model_len"], MAX_MODEL_LEN_WITHOUT_CONFIG);
    assert_eq!(v["max_model_len_assumed"], true);
    let (_, out, _) = common::run_cli(&[&args[..], &["--max-model-len", "4096"]].concat());
    assert!(!out.contains("WARNING"), "{out}");
}

/// A model of recurrent layers only runs with one block per request whatever its length (vLLM
/// V1's block of `max_model_len` tokens): with three blocks, one of them vLLM's null block,
/// two 1,500-token requests fit where an attention model would need ⌈1,510 / 16⌉ each, and
/// the others wait for a block.
#[test]
fn a_recurrent_only_model_holds_one_block_per_request() {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/ArthurZ__mamba-2.8b.json");
    let mamba = parse_model_text(&std::fs::read_to_string(p).expect("config")).expect("model");
    let mut cfg = config(
        Arrival::AllAtOnce,
        Lengths::Fixed {
            input: 1500,
            output: 10,
        },
        4,
    );
    // The config states no maximum length: vLLM assumes 2,048 (and says so), and so do we.
    let r = simulate(&mamba, h100(), &cfg).expect("runs without max_model_len");
    let assumed = MAX_MODEL_LEN_WITHOUT_CONFIG;
    assert_eq!(
        (r.engine.max_model_len, r.engine.block_size),
        (assumed, assumed)
    );
    assert!(r
        .notes
        .contains(&SimNote::MaxModelLenAssumed { len: assumed }));
    assert!(r.notes[0].message(Lang::En).contains("2048"));
    cfg.engine.max_model_len = Some(4096);
    let r = simulate(&mamba, h100(), &cfg).expect("runs");
    assert_eq!((r.completed, r.engine.block_size), (4, 4096));
    assert!(!r
        .notes
        .iter()
        .any(|n| matches!(n, SimNote::MaxModelLenAssumed { .. })));
    assert_eq!(r.max_batch, 4);
    assert_accounted(&r);
    // Three blocks, one of them vLLM's null block: two requests at a time.
    cfg.engine.num_gpu_blocks_override = Some(3);
    let r = simulate(&mamba, h100(), &cfg).expect("runs");
    assert_eq!((r.completed, r.max_batch), (4, 2));
    assert_accounted(&r);
}
