//! Disaggregated prefill and decode (`core::sim::disagg`): the KV's transfer is the KV model's
//! bytes over the link; TTFT is made of its stages; the decode pool's batch sets TPOT; a
//! request of one output token ends at its prefill worker; the run is deterministic; more
//! decode workers do not raise TPOT; bad input gets a sentence.

mod common;

use common::{h100, qwen8b, qwen8b_replica};
use llm_serving_calculator::core::base::{Dtype, Lang};
use llm_serving_calculator::core::calc::kv;
use llm_serving_calculator::core::sim::{
    simulate_disagg, Arrival, Budget, DisaggConfig, KvLink, Lengths, SimResult, WorkloadSpec,
};

fn closed_loop(clients: u64, input: u64, output: u64, n: u64) -> WorkloadSpec {
    WorkloadSpec {
        arrival: Arrival::AllAtOnce,
        lengths: Lengths::Fixed { input, output },
        num_requests: n,
        max_concurrency: Some(clients),
        ..WorkloadSpec::default()
    }
}

fn run(cfg: &DisaggConfig, wl: &WorkloadSpec) -> SimResult {
    let (p, d) = (qwen8b_replica(), qwen8b_replica());
    simulate_disagg(&p, &d, h100(), cfg, wl, None, Budget::default()).expect("disagg")
}

/// One request's KV crosses the link in its bytes (Qwen3-8B's KV per token in bf16 × a prompt
/// of whole blocks, from the KV model) over InfiniBand's 50 GB/s, plus the fixed latency.
#[test]
fn the_transfer_is_the_kv_bytes_over_the_link() {
    let cfg = DisaggConfig {
        link: KvLink::Ib,
        transfer_latency_ms: 2.0,
        ..DisaggConfig::default()
    };
    let r = run(&cfg, &closed_loop(1, 1024, 16, 6));
    let s = r.disagg.expect("summary");
    let per_token = kv::per_token(&qwen8b(), Dtype::Bf16, 1)
        .expect("kv")
        .bytes
        .0 as f64;
    let want_ms = 2.0 + 1024.0 * per_token / 50e9 * 1e3;
    assert!(
        (s.kv_bytes_per_gpu - 1024.0 * per_token).abs() < 1.0,
        "{} bytes",
        s.kv_bytes_per_gpu
    );
    assert!(
        (s.transfer_ms.mean - want_ms).abs() < 1e-6,
        "{} vs {want_ms} ms",
        s.transfer_ms.mean
    );
    // NVLink on an H100 (450 GB/s each way) is nine times faster in its bytes.
    let nv = run(
        &DisaggConfig {
            link: KvLink::Nvlink,
            transfer_latency_ms: 2.0,
            ..DisaggConfig::default()
        },
        &closed_loop(1, 1024, 16, 6),
    );
    let nv_ms = nv.disagg.expect("summary").transfer_ms.mean;
    assert!(
        (nv_ms - (2.0 + 1024.0 * per_token / 450e9 * 1e3)).abs() < 1e-6,
        "{nv_ms} ms"
    );
}

/// One client at a time: each request's TTFT is its prefill stage, its transfer and its first
/// decode stage, and nothing else waits.
#[test]
fn ttft_is_the_sum_of_its_stages() {
    let r = run(&DisaggConfig::default(), &closed_loop(1, 2048, 64, 8));
    let s = r.disagg.as_ref().expect("summary");
    let parts = s.prefill_stage_ms.mean + s.transfer_ms.mean + s.decode_first_ms.mean;
    assert!(
        (r.ttft_ms.mean - parts).abs() < 1e-6 * r.ttft_ms.mean,
        "TTFT {} ms vs stages {parts} ms",
        r.ttft_ms.mean
    );
    assert_eq!(r.completed, 8);
    assert!(!r.partial);
    // The decode stage is one decode step of one request: shorter than the prefill stage of
    // 2,048 tokens.
    assert!(s.decode_first_ms.mean < s.prefill_stage_ms.mean);
}

/// Requests of one output token end at their prefill worker: no transfer, all completed.
#[test]
fn one_token_requests_end_at_the_prefill_worker() {
    let r = run(&DisaggConfig::default(), &closed_loop(4, 512, 1, 20));
    assert_eq!(r.completed, 20);
    assert_eq!(r.num_prompts, 20);
    let s = r.disagg.expect("summary");
    // No transfer to measure (a distribution of no samples has no mean).
    assert!(s.transfer_ms.mean.is_nan(), "{}", s.transfer_ms.mean);
    assert_eq!(s.decode_busy, 0.0);
}

/// A run is a function of its inputs; every sent request completes; the decode pool's
/// batch follows the clients.
#[test]
fn deterministic_and_complete() {
    let cfg = DisaggConfig {
        prefill_workers: 2,
        decode_workers: 3,
        ..DisaggConfig::default()
    };
    let wl = WorkloadSpec {
        arrival: Arrival::Poisson { rate: 8.0 },
        lengths: Lengths::ShareGpt,
        num_requests: 300,
        seed: 7,
        ..WorkloadSpec::default()
    };
    let (a, b) = (run(&cfg, &wl), run(&cfg, &wl));
    assert_eq!(a, b);
    assert_eq!(a.completed, a.num_prompts);
    assert_eq!(a.completed_all, 300);
    let s = a.disagg.expect("summary");
    assert!(
        s.prefill_busy > 0.0 && s.prefill_busy < 1.0,
        "{}",
        s.prefill_busy
    );
    assert!(
        s.decode_busy > 0.0 && s.decode_busy <= 1.0,
        "{}",
        s.decode_busy
    );
}

/// At a fixed closed-loop load, more decode workers split the batch: TPOT does not rise.
#[test]
fn more_decode_workers_do_not_raise_tpot() {
    let wl = closed_loop(64, 1024, 256, 256);
    let tpot = |d: u64| {
        let cfg = DisaggConfig {
            prefill_workers: 1,
            decode_workers: d,
            ..DisaggConfig::default()
        };
        let r = run(&cfg, &wl);
        (r.tpot_ms.mean, r.disagg.expect("summary").decode_mean_batch)
    };
    let (one, b1) = tpot(1);
    let (four, b4) = tpot(4);
    assert!(
        four <= one,
        "TPOT {four} ms with 4 decode workers vs {one} ms with 1"
    );
    assert!(b4 < b1, "mean decode batch {b4} vs {b1}");
}

/// Bad counts, links and latencies: one sentence naming the rule.
#[test]
fn bad_input_gets_a_sentence() {
    let wl = closed_loop(1, 128, 8, 2);
    let (p, d) = (qwen8b_replica(), qwen8b_replica());
    for cfg in [
        DisaggConfig {
            prefill_workers: 0,
            ..DisaggConfig::default()
        },
        DisaggConfig {
            decode_workers: 100_000,
            ..DisaggConfig::default()
        },
        DisaggConfig {
            transfer_latency_ms: f64::NAN,
            ..DisaggConfig::default()
        },
    ] {
        let e = simulate_disagg(&p, &d, h100(), &cfg, &wl, None, Budget::default())
            .expect_err("refused");
        for lang in [Lang::En, Lang::Ko] {
            let s = e.message(lang);
            assert!(!s.is_empty() && !s.contains('{'), "{s}");
        }
    }
    let e = KvLink::parse("carrier-pigeon").expect_err("refused");
    assert!(
        e.message(Lang::En).contains("nvlink"),
        "{}",
        e.message(Lang::En)
    );
}

/// The CLI: `--disagg` runs the two pools and prints their figures; its flags without it, a
/// sweep with it and a bad link each get one sentence (exit 2).
#[test]
fn the_cli_runs_and_refuses() {
    let base = [
        "simulate",
        "--config",
        "tests/fixtures/Qwen__Qwen3-8B.json",
        "--gpu",
        "h100-sxm",
        "--rate",
        "inf",
        "--max-concurrency",
        "4",
        "--input-len",
        "512",
        "--output-len",
        "32",
        "--num-requests",
        "12",
    ];
    let with = |extra: &[&str]| {
        let mut a: Vec<&str> = base.to_vec();
        a.extend_from_slice(extra);
        common::run_cli(&a)
    };
    let (code, out, err) = with(&["--disagg", "--decode-workers", "2", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    let d = &v["disagg"];
    assert_eq!(d["decode_workers"], 2);
    // One 8-GPU node holds both pools: NVLink by default.
    assert_eq!(d["kv_link"], "nvlink");
    assert!(
        d["transfer_ms"]["mean"]
            .as_f64()
            .is_some_and(|x| x >= 200.0),
        "{d}"
    );
    assert_eq!(v["completed"], 12);
    for (extra, says) in [
        (&["--decode-workers", "2"][..], "need --disagg"),
        (&["--disagg", "--kv-link", "smoke"][..], "nvlink"),
        (
            &["--disagg", "--prefill-workers", "0"][..],
            "--prefill-workers",
        ),
        (
            &["--disagg", "--decode-workers", "1000"][..],
            "decode workers",
        ),
    ] {
        let (code, _, err) = with(extra);
        assert_eq!(code, 2, "{extra:?}: {err}");
        assert!(
            err.contains(says) && err.lines().count() == 1,
            "{extra:?}: {err}"
        );
    }
}

/// The default link: the scale-up fabric when both pools fit in one of its domains, else the
/// NIC; a PCIe-only card has no fabric to use.
#[test]
fn the_default_link_follows_the_fabric() {
    assert_eq!(KvLink::auto(8, h100()), KvLink::Nvlink);
    assert_eq!(KvLink::auto(16, h100()), KvLink::Ib);
    assert_eq!(KvLink::auto(64, common::gpu("gb200")), KvLink::Nvlink);
    assert_eq!(KvLink::auto(2, common::gpu("l40s")), KvLink::Ib);
}
