//! Performance model through the public API and the `llmcalc perf` CLI, on real configs.

mod common;

use common::{on, perf, run_cli as run};

use llm_serving_calculator::core::base::dtype::Dtype;
use llm_serving_calculator::core::base::i18n::Lang;
use llm_serving_calculator::core::calc::perf::{
    evaluate, max_batch_for, sweep, tp_candidates, tp_sweep, weight_bytes_per_gpu, Efficiencies,
    PerfNote, TpRow, Workload,
};
use llm_serving_calculator::core::hardware::catalog::Catalog;
use llm_serving_calculator::core::model::config::parse_model_text;
use llm_serving_calculator::core::model::ModelDesc;

const LLAMA2_7B: &str = "data/presets/meta-llama__Llama-2-7b-hf.json";
const LLAMA31_8B: &str = "data/presets/meta-llama__Meta-Llama-3.1-8B.json";
const LLAMA2_13B: &str = "data/presets/meta-llama__Llama-2-13b-hf.json";
const LLAMA31_70B: &str = "data/presets/meta-llama__Meta-Llama-3.1-70B.json";
const LLAMA32_1B: &str = "data/presets/meta-llama__Llama-3.2-1B-Instruct.json";

#[track_caller]
fn model(path: &str) -> ModelDesc {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    parse_model_text(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
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
    let (code, out, err) = run(&perf(
        LLAMA2_7B,
        "h100-sxm",
        ["8", "512", "128"],
        &["--weights-dtype", "fp8", "--json"],
    ));
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
    let (code, out, err) = run(&perf(
        LLAMA31_8B,
        "a100-sxm-80gb",
        ["4", "100", "10"],
        &["--tp", "2", "--weights-dtype", "fp8"],
    ));
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("TTFT") && out.contains("TP 2"), "{out}");
    // A100 has no fp8: the note says the compute falls back.
    assert!(out.contains("note:"), "{out}");
}

#[test]
fn cli_perf_bad_input_exits_2_with_one_sentence() {
    let one = ["1", "1", "1"];
    for args in [
        perf(LLAMA2_7B, "h100-sxm", ["0", "1", "1"], &[]),
        perf(LLAMA2_7B, "nope-9000", one, &[]),
        on(
            "perf",
            LLAMA2_7B,
            "h100-sxm",
            &["--input-len", "1", "--output-len", "1"],
        ),
        perf("/nonexistent.json", "h100-sxm", one, &[]),
        perf(LLAMA2_7B, "h100-sxm", one, &["--weights-dtype", "fp7"]),
        perf(LLAMA2_7B, "h100-sxm", one, &["--context", "middle"]),
    ] {
        let (code, out, err) = run(&args);
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

#[track_caller]
fn report(row: &TpRow) -> &llm_serving_calculator::core::calc::perf::PerfReport {
    row.result
        .as_ref()
        .unwrap_or_else(|e| panic!("TP {}: {e}", row.tp))
}

/// Ring all-reduce time from its textbook formula: `2(t − 1)/t × bytes / (link × e) + latency`.
fn ring(bytes: f64, tp: u64, link_one_way: f64, e: &Efficiencies) -> f64 {
    let t = tp as f64;
    2.0 * (t - 1.0) / t * bytes / (link_one_way * e.interconnect) + e.allreduce_latency_s
}

#[test]
fn tp_sweep_on_a_bandwidth_bound_model() {
    // Llama-2-7B bf16 on H100 SXM at batch 1: each GPU reads W / tp bytes per decode step and
    // pays 2 × 32 ring all-reduces of h × 2 bytes over NVLink (900 GB/s bidirectional, 450
    // one way), so TPOT(tp) ≈ W_tp / (BW × e_bw) + 64 × ring(8192 B, tp) + t_step.
    let m = model(LLAMA2_7B);
    let g = Catalog::builtin()
        .get("h100-sxm")
        .unwrap_or_else(|e| panic!("{e}"));
    let e = Efficiencies::default();
    let wl = Workload::new(1, 1024, 256, 2);
    let rows = tp_sweep(&m, g, &wl, &e, None);
    assert_eq!(rows.iter().map(|r| r.tp).collect::<Vec<_>>(), [1, 2, 4, 8]);
    assert_eq!(
        rows.iter()
            .filter(|r| r.chosen)
            .map(|r| r.tp)
            .collect::<Vec<_>>(),
        [2]
    );
    let link = g.interconnect.per_direction().map_or(f64::NAN, |b| b.0);
    let cap = g.capacity().0 as f64 * 0.9;
    for r in &rows {
        let rep = report(r);
        let wtp = Workload { tp: r.tp, ..wl };
        let w = weight_bytes_per_gpu(&m, &wtp);
        let comm = if r.tp > 1 {
            64.0 * ring(4096.0 * 2.0, r.tp, link, &e)
        } else {
            0.0
        };
        let expect = w / (g.bandwidth.0 * e.bandwidth) + comm + e.step_overhead_s;
        let rel = rep.tpot.0 / expect - 1.0;
        // Below by at most the embedding lookup, above by the KV cache of 1,152 tokens.
        assert!(
            (-0.03..0.06).contains(&rel),
            "TP {}: {} vs {expect}",
            r.tp,
            rep.tpot.0
        );
        // Memory: (0.9 × capacity − W_tp) / KV bytes of 1,280 tokens on 32 / tp KV heads.
        let kv = 2.0 * 32.0 * (32 / r.tp) as f64 * 128.0 * 2.0 * 1280.0;
        assert_eq!(
            rep.max_batch,
            ((cap - w) / kv).floor() as u64,
            "TP {}",
            r.tp
        );
        // The table's TP row is the plain model at that degree.
        let direct = evaluate(&m, g, &wtp, &e, None).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(direct.tpot, rep.tpot);
    }
    for w in rows.windows(2) {
        let (a, b) = (report(&w[0]), report(&w[1]));
        assert!(b.tpot < a.tpot, "TPOT TP {}→{}", w[0].tp, w[1].tp);
        assert!(
            b.max_batch > a.max_batch,
            "max batch TP {}→{}",
            w[0].tp,
            w[1].tp
        );
        // More GPUs for a faster stream: each token costs more (cost counts every GPU).
        assert!(
            b.usd_per_million_tokens > a.usd_per_million_tokens,
            "cost TP {}→{}",
            w[0].tp,
            w[1].tp
        );
    }
}

#[test]
fn tp_sweep_stops_paying_off_where_communication_dominates() {
    // Llama-3.2-1B on H100 at batch 1: going from TP 1 to TP 2 saves half the weight read,
    // W / (2 × BW × e_bw) ≈ 0.5 ms, but adds 2 × 16 all-reduces, each at least the fixed
    // latency: when that costs more than it saves, TPOT rises.
    let m = model(LLAMA32_1B);
    let g = Catalog::builtin()
        .get("h100-sxm")
        .unwrap_or_else(|e| panic!("{e}"));
    let e = Efficiencies::default();
    let wl = Workload::new(1, 256, 64, 1);
    let w1 = weight_bytes_per_gpu(&m, &wl);
    let w2 = weight_bytes_per_gpu(&m, &Workload { tp: 2, ..wl });
    let saved = (w1 - w2) / (g.bandwidth.0 * e.bandwidth);
    let link = g.interconnect.per_direction().map_or(f64::NAN, |b| b.0);
    let added = 32.0 * ring(2048.0 * 2.0, 2, link, &e);
    assert!(added > saved, "precondition: {added} vs {saved}");
    let rows = tp_sweep(&m, g, &wl, &e, None);
    let tpot = |tp: u64| {
        rows.iter()
            .find(|r| r.tp == tp)
            .map_or(f64::NAN, |r| report(r).tpot.0)
    };
    assert!(tpot(2) > tpot(1), "{} vs {}", tpot(2), tpot(1));
    // The communication part is what grew.
    let comm = |tp: u64| {
        rows.iter()
            .find(|r| r.tp == tp)
            .map_or(f64::NAN, |r| report(r).decode.comm.0)
    };
    assert!(
        (comm(2) - added).abs() < 1e-9 * added,
        "{} vs {added}",
        comm(2)
    );
    assert_eq!(comm(1), 0.0);
}

#[test]
fn tp_candidates_split_the_heads_and_stay_in_one_node() {
    // A degree is tried when it divides the attention heads and divides (or is a multiple of)
    // the KV heads, from 1 to the GPUs of one scale-up domain (at most 8); the scenario's own
    // degree is always listed.
    for (path, heads, kv) in [
        (LLAMA2_7B, 32u64, 32u64),
        (LLAMA2_13B, 40, 40),
        (LLAMA31_8B, 32, 8),
    ] {
        let m = model(path);
        for id in ["a10g", "l40s", "h100-sxm", "a100-sxm-80gb"] {
            let g = Catalog::builtin().get(id).unwrap_or_else(|e| panic!("{e}"));
            let top = u64::from(g.interconnect.domain_size.max(1)).min(8);
            let want: Vec<u64> = (1..=top)
                .filter(|t| heads % t == 0 && (kv % t == 0 || t % kv == 0))
                .collect();
            assert_eq!(tp_candidates(&m, g, 1), want, "{path} on {id}");
            let mut with16 = want.clone();
            with16.push(16);
            assert_eq!(tp_candidates(&m, g, 16), with16, "{path} on {id}");
        }
    }
    // Llama-2-13B's 40 heads give TP 5 too; 16 does not divide them, so that row is an error.
    let m = model(LLAMA2_13B);
    let g = Catalog::builtin()
        .get("h100-sxm")
        .unwrap_or_else(|e| panic!("{e}"));
    let rows = tp_sweep(
        &m,
        g,
        &Workload::new(1, 64, 8, 16),
        &Efficiencies::default(),
        None,
    );
    assert!(rows.iter().any(|r| r.tp == 5 && r.result.is_ok()));
    let last = rows.last().unwrap_or_else(|| panic!("no rows"));
    assert!(last.chosen && last.tp == 16 && last.result.is_err());
}

#[test]
fn tp_sweep_says_where_the_weights_do_not_fit() {
    // Llama-3.1-70B bf16 (≈ 141 GB) on 24 GB A10Gs: the weights fit from the degree where
    // W / tp < 0.9 × capacity (TP 8 here), and the rows below say they do not.
    let m = model(LLAMA31_70B);
    let g = Catalog::builtin()
        .get("a10g")
        .unwrap_or_else(|e| panic!("{e}"));
    let wl = Workload::new(1, 1024, 256, 1);
    let rows = tp_sweep(&m, g, &wl, &Efficiencies::default(), None);
    let cap = g.capacity().0 as f64 * 0.9;
    let mut fits_somewhere = false;
    let mut fails_somewhere = false;
    for r in &rows {
        let w = weight_bytes_per_gpu(&m, &Workload { tp: r.tp, ..wl });
        assert_eq!(r.model_fits(), w < cap, "TP {}", r.tp);
        fits_somewhere |= r.model_fits();
        fails_somewhere |= !r.model_fits();
    }
    assert!(fits_somewhere && fails_somewhere);
}

#[test]
fn a_gpu_without_a_peak_says_its_ttft_is_a_lower_bound_in_both_languages() {
    // Apple publishes no GPU TFLOPS for the M4 Max: compute is not timed, so TTFT is a lower
    // bound from the bytes alone, and the report says so once.
    let m = model(LLAMA2_7B);
    let g = Catalog::builtin()
        .get("m4-max")
        .unwrap_or_else(|e| panic!("{e}"));
    let r = evaluate(
        &m,
        g,
        &Workload::new(4, 1024, 128, 1),
        &Efficiencies::default(),
        None,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(r.compute_untimed());
    let peaks: Vec<&PerfNote> = r
        .notes
        .iter()
        .filter(|n| matches!(n, PerfNote::NoPeak { .. } | PerfNote::Precision { .. }))
        .collect();
    assert_eq!(peaks.len(), 1, "{peaks:?}");
    let n = peaks[0];
    assert_eq!(n.code(), "no_peak");
    let en = n.message(Lang::En);
    let ko = n.message(Lang::Ko);
    for s in [&en, &ko] {
        assert!(
            s.contains("Apple M4 Max") && s.contains("bf16") && s.contains("TTFT"),
            "{s}"
        );
        assert!(!s.contains('{'), "unfilled placeholder: {s}");
    }
    assert!(en.contains("lower bound"), "{en}");
    assert!(ko.contains("하한"), "{ko}");
    // The L40S publishes its peak: no such note, TTFT is timed.
    let l = Catalog::builtin()
        .get("l40s")
        .unwrap_or_else(|e| panic!("{e}"));
    let rl = evaluate(
        &m,
        l,
        &Workload::new(4, 1024, 128, 1),
        &Efficiencies::default(),
        None,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        !rl.compute_untimed() && rl.notes.is_empty(),
        "{:?}",
        rl.notes
    );
}

#[test]
fn every_perf_note_is_said_in_both_languages() {
    use llm_serving_calculator::core::hardware::catalog::{PrecisionNote, PrecisionReason};
    let notes = [
        PerfNote::Precision {
            gpu: "G".into(),
            note: PrecisionNote {
                requested: Dtype::Fp8,
                used: Dtype::Bf16,
                reason: PrecisionReason::NotSupported,
            },
        },
        PerfNote::NoPeak {
            gpu: "G".into(),
            dtype: Dtype::Bf16,
        },
        PerfNote::CrossesNodes {
            gpu: "G".into(),
            tp: 16,
            domain: 8,
        },
        PerfNote::QuickMode,
        PerfNote::BatchDoesNotFit {
            gpu: "G".into(),
            tp: 2,
            batch: 64,
            tokens: 4096,
            max_batch: 12,
        },
    ];
    let mut codes = std::collections::HashSet::new();
    for n in &notes {
        assert!(codes.insert(n.code()), "duplicate code {}", n.code());
        let (en, ko) = (n.message(Lang::En), n.message(Lang::Ko));
        assert_ne!(en, ko, "{n:?}");
        for s in [&en, &ko] {
            assert!(!s.contains('{') && !s.contains('⟨'), "{s}");
        }
        // Every number the note carries is in both sentences.
        let nums: Vec<String> = match n {
            PerfNote::CrossesNodes { tp, domain, .. } => vec![tp.to_string(), domain.to_string()],
            PerfNote::BatchDoesNotFit {
                tp,
                batch,
                tokens,
                max_batch,
                ..
            } => [tp, batch, tokens, max_batch]
                .iter()
                .map(|x| x.to_string())
                .collect(),
            _ => vec![],
        };
        for x in nums {
            assert!(en.contains(&x) && ko.contains(&x), "{x}: {en} / {ko}");
        }
    }
}

/// A custom GPU whose name looks like a placeholder (`{tp}`, `{batch}`) keeps its name in the
/// performance section's "batch does not fit" note: the name is inserted once, never scanned
/// again for the note's other placeholders.
#[test]
fn a_custom_gpu_named_like_a_placeholder_keeps_its_name_in_the_note() {
    use llm_serving_calculator::core::hardware::catalog::CustomAccelerator;
    use llm_serving_calculator::core::present::{evaluate as report, perf_rows, ViewGpu};
    use llm_serving_calculator::core::scenario::{GpuChoice, Scenario};
    for name in ["{tp}", "{batch}"] {
        let mut s = Scenario {
            gpus: vec![GpuChoice::Custom(CustomAccelerator {
                name: name.into(),
                memory_gib: 24.0,
                bandwidth_gbps: 1000.0,
                bf16_tflops: 100.0,
                fp8_tflops: None,
                price_usd_per_hour: None,
                tdp_w: None,
            })],
            tp: 1,
            ..Scenario::default()
        };
        s.perf.batch = 4096;
        let r = report(&s, Catalog::builtin()).unwrap_or_else(|e| panic!("{e}"));
        let rows = perf_rows(&r.model, &s, &ViewGpu::from_report(&r));
        let rep = rows[0].result.as_ref().unwrap_or_else(|e| panic!("{e}"));
        let note = rep
            .notes
            .iter()
            .find(|n| matches!(n, PerfNote::BatchDoesNotFit { .. }))
            .unwrap_or_else(|| panic!("{:?}", rep.notes));
        for lang in [Lang::En, Lang::Ko] {
            let text = note.message(lang);
            assert!(text.contains(&format!("{name} × TP 1")), "{text}");
        }
    }
}

#[test]
fn cli_perf_tp_sweep_json_rows() {
    let sweep = |rest: &[&'static str]| {
        let tp = [&["--tp", "2", "--tp-sweep"][..], rest].concat();
        run(&perf(LLAMA31_8B, "a10g", ["8", "1024", "256"], &tp))
    };
    let (code, out, err) = sweep(&["--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    let rows = v
        .as_array()
        .unwrap_or_else(|| panic!("not an array: {out}"));
    let m = model(LLAMA31_8B);
    let g = Catalog::builtin()
        .get("a10g")
        .unwrap_or_else(|e| panic!("{e}"));
    let want = tp_candidates(&m, g, 2);
    assert_eq!(rows.len(), want.len());
    let keys = [
        "gpu",
        "tp",
        "chosen",
        "weights_fit",
        "max_batch",
        "batch",
        "fits",
        "ttft_ms",
        "tpot_ms",
        "output_tokens_per_s_per_user",
        "output_tokens_per_s",
        "e2e_latency_ms",
        "usd_per_million_output_tokens",
        "notes",
        "note_codes",
        "error",
    ];
    for (row, tp) in rows.iter().zip(&want) {
        let obj = row.as_object().unwrap_or_else(|| panic!("{row}"));
        let mut got: Vec<&str> = obj.keys().map(String::as_str).collect();
        got.sort_unstable();
        let mut k = keys.to_vec();
        k.sort_unstable();
        assert_eq!(got, k);
        assert_eq!(row["tp"].as_u64(), Some(*tp));
        assert_eq!(row["chosen"].as_bool(), Some(*tp == 2));
        assert_eq!(row["gpu"], "a10g");
        // e2e = TTFT + (O − 1) × TPOT; tokens/s per user = 1000 / TPOT ms.
        let f = |k: &str| row[k].as_f64().unwrap_or(f64::NAN);
        assert!(
            (f("e2e_latency_ms") - (f("ttft_ms") + 255.0 * f("tpot_ms"))).abs()
                < 1e-6 * f("e2e_latency_ms")
        );
        assert!(
            (f("output_tokens_per_s_per_user") - 1000.0 / f("tpot_ms")).abs()
                < 1e-9 * f("output_tokens_per_s_per_user")
        );
        // The A10G has a (third-party) dense peak: compute is timed, no lower-bound note.
        assert!(row["note_codes"]
            .as_array()
            .is_some_and(|c| !c.iter().any(|c| c == "no_peak")));
    }
    // The text form marks the chosen degree.
    let (code, out, err) = sweep(&[]);
    assert_eq!(code, 0, "{err}");
    assert!(out.lines().any(|l| l.starts_with("*   2")), "{out}");
    assert!(!out.contains("publishes no dense bf16 peak"), "{out}");
}
