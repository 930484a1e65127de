//! Performance model through the public API and the `llmcalc perf` CLI, on real configs.

use llm_serving_calculator::cli;
use llm_serving_calculator::core::catalog::Catalog;
use llm_serving_calculator::core::config::parse_model_text;
use llm_serving_calculator::core::dtype::Dtype;
use llm_serving_calculator::core::model::ModelDesc;
use llm_serving_calculator::core::perf::{
    evaluate, max_batch_for, sweep, weight_bytes_per_gpu, Efficiencies, Workload,
};

const LLAMA2_7B: &str = "data/presets/meta-llama__Llama-2-7b-hf.json";
const LLAMA31_8B: &str = "data/presets/meta-llama__Meta-Llama-3.1-8B.json";

#[track_caller]
fn model(path: &str) -> ModelDesc {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    parse_model_text(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[track_caller]
fn run(args: &[&str]) -> (i32, String, String) {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = cli::run(&args, &mut out, &mut err);
    (
        code,
        String::from_utf8_lossy(&out).into_owned(),
        String::from_utf8_lossy(&err).into_owned(),
    )
}

#[test]
fn batch1_decode_tracks_bandwidth_across_gpus() {
    // At batch 1 decode streams the weights: TPOT ≈ W / (BW × e_bw) + t_step on every GPU,
    // so the ratio between two GPUs follows their bandwidths once the overhead is removed.
    let m = model(LLAMA2_7B);
    let e = Efficiencies::default();
    let wl = Workload::new(1, 64, 2, 1);
    let w = weight_bytes_per_gpu(&m, &wl);
    for id in ["a10g", "l40s", "a100-sxm-80gb", "h100-sxm", "h200-sxm"] {
        let g = Catalog::builtin().get(id).unwrap_or_else(|e| panic!("{e}"));
        let r = evaluate(&m, g, &wl, &e, None).unwrap_or_else(|e| panic!("{id}: {e}"));
        let expect = w / (g.bandwidth.0 * e.bandwidth) + e.step_overhead_s;
        let rel = r.tpot.0 / expect - 1.0;
        // Below by at most the embedding table (2% of the weights), above by the small KV cache.
        assert!(
            (-0.025..0.01).contains(&rel),
            "{id}: {} vs {expect} ({rel})",
            r.tpot.0
        );
    }
}

#[test]
fn latency_throughput_curve_has_a_flat_part() {
    // The chapter: giving up a little latency buys a lot of throughput. From batch 1 to 8 the
    // per-user rate falls by far less than the total rate rises.
    let m = model(LLAMA31_8B);
    let g = Catalog::builtin()
        .get("l40s")
        .unwrap_or_else(|e| panic!("{e}"));
    let c = sweep(
        &m,
        g,
        &Workload::new(1, 512, 256, 1),
        &Efficiencies::default(),
        32,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let (b1, b8) = (c[0], c[3]);
    assert_eq!((b1.batch, b8.batch), (1, 8));
    assert!(
        b8.tokens_per_s_total / b1.tokens_per_s_total > 6.0,
        "{b1:?} {b8:?}"
    );
    assert!(
        b8.tokens_per_s_per_user / b1.tokens_per_s_per_user > 0.85,
        "{b1:?} {b8:?}"
    );
    // Memory ends the curve.
    let max_b = max_batch_for(&m, g, &Workload::new(1, 512, 256, 1));
    assert_eq!(c.last().map(|p| p.batch), Some(max_b));
}

#[test]
fn a10g_vs_l40s_cost_per_token() {
    // WORKED_EXAMPLES §3: the L40S costs ~1.9× the A10G per hour but serves 4× the requests,
    // so it is cheaper per token at the largest batch each allows (Llama-2-7B, 4,096 tokens).
    let m = model(LLAMA2_7B);
    let e = Efficiencies::default();
    let cost = |id: &str| {
        let g = Catalog::builtin().get(id).unwrap_or_else(|e| panic!("{e}"));
        let wl = Workload::new(1, 2048, 2048, 1);
        let b = max_batch_for(&m, g, &wl);
        let r = evaluate(&m, g, &Workload { batch: b, ..wl }, &e, None)
            .unwrap_or_else(|e| panic!("{e}"));
        (b, r.usd_per_million_tokens.unwrap_or(f64::NAN))
    };
    let (ba, ca) = cost("a10g");
    let (bl, cl) = cost("l40s");
    assert!(bl >= 3 * ba, "{ba} vs {bl}");
    assert!(cl < ca, "L40S ${cl}/M vs A10G ${ca}/M");
}

#[test]
fn cli_perf_json_has_the_headline_fields() {
    let (code, out, err) = run(&[
        "perf",
        "--config",
        LLAMA2_7B,
        "--gpu",
        "h100-sxm",
        "--batch",
        "8",
        "--input-len",
        "512",
        "--output-len",
        "128",
        "--weights-dtype",
        "fp8",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    for k in [
        "ttft_ms",
        "tpot_ms",
        "output_tokens_per_s",
        "output_tokens_per_s_per_user",
        "e2e_latency_ms",
    ] {
        let x = v[k].as_f64().unwrap_or(f64::NAN);
        assert!(x.is_finite() && x > 0.0, "{k} = {x}");
    }
    let (ttft, tpot, e2e) = (
        v["ttft_ms"].as_f64(),
        v["tpot_ms"].as_f64(),
        v["e2e_latency_ms"].as_f64(),
    );
    if let (Some(a), Some(b), Some(c)) = (ttft, tpot, e2e) {
        assert!((c - (a + 127.0 * b)).abs() < 1e-6 * c);
    }
    assert_eq!(v["compute_dtype"], "fp8");
    assert!(v["ranges_p10_p90"]["tpot_ms"].is_array());
}

#[test]
fn cli_perf_text_and_tp() {
    let (code, out, err) = run(&[
        "perf",
        "--config",
        LLAMA31_8B,
        "--gpu",
        "a100-sxm-80gb",
        "--tp",
        "2",
        "--batch",
        "4",
        "--input-len",
        "100",
        "--output-len",
        "10",
        "--weights-dtype",
        "fp8",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("TTFT") && out.contains("TP 2"), "{out}");
    // A100 has no fp8: the note says the compute falls back.
    assert!(out.contains("note:"), "{out}");
}

#[test]
fn cli_perf_bad_input_exits_2_with_one_sentence() {
    for args in [
        &[
            "perf",
            "--config",
            LLAMA2_7B,
            "--gpu",
            "h100-sxm",
            "--batch",
            "0",
            "--input-len",
            "1",
            "--output-len",
            "1",
        ][..],
        &[
            "perf",
            "--config",
            LLAMA2_7B,
            "--gpu",
            "nope-9000",
            "--batch",
            "1",
            "--input-len",
            "1",
            "--output-len",
            "1",
        ],
        &[
            "perf",
            "--config",
            LLAMA2_7B,
            "--gpu",
            "h100-sxm",
            "--input-len",
            "1",
            "--output-len",
            "1",
        ],
        &[
            "perf",
            "--config",
            "/nonexistent.json",
            "--gpu",
            "h100-sxm",
            "--batch",
            "1",
            "--input-len",
            "1",
            "--output-len",
            "1",
        ],
        &[
            "perf",
            "--config",
            LLAMA2_7B,
            "--gpu",
            "h100-sxm",
            "--batch",
            "1",
            "--input-len",
            "1",
            "--output-len",
            "1",
            "--weights-dtype",
            "fp7",
        ],
        &[
            "perf",
            "--config",
            LLAMA2_7B,
            "--gpu",
            "h100-sxm",
            "--batch",
            "1",
            "--input-len",
            "1",
            "--output-len",
            "1",
            "--context",
            "middle",
        ],
    ] {
        let (code, out, err) = run(args);
        assert_eq!(code, 2, "{args:?}: {out}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
    }
}

#[test]
fn cli_accuracy_report() {
    let (code, out, err) = run(&["perf", "--accuracy"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("tpot_ms") && out.contains("mapped"), "{out}");
    let (code, out, _) = run(&["perf", "--accuracy", "--json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}"));
    assert!(v["rows"].as_array().is_some_and(|r| r.len() > 60));
}

#[test]
fn fp8_kv_and_weights_raise_the_memory_limit() {
    let m = model(LLAMA2_7B);
    let g = Catalog::builtin()
        .get("l40s")
        .unwrap_or_else(|e| panic!("{e}"));
    let wl = Workload::new(1, 2048, 2048, 1);
    let b16 = max_batch_for(&m, g, &wl);
    let mut w8 = wl;
    w8.weights_dtype = Some(Dtype::Fp8);
    w8.kv_dtype = Some(Dtype::Fp8);
    let b8 = max_batch_for(&m, g, &w8);
    assert!(b8 > 2 * b16, "{b16} → {b8}");
}
