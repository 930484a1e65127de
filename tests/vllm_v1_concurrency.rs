//! The serving simulator against vLLM V1 serving runs at fixed lengths and concurrency from a
//! source outside the calibration and the serving validation: NVIDIA's AIConfigurator
//! (`fixtures/vllm_v1_aiconfigurator_qwen3_32b_h100.csv`, provenance in `fixtures/SOURCES.md`):
//! vLLM 0.12.0 serving Qwen/Qwen3-32B (the bf16 checkpoint) on H100 SXM at TP 2, 4 and 8,
//! `C` = 8 … 128 clients, 1,024 or 4,096 prompt tokens and 128, 512 or 1,024 output tokens.
//!
//! Workload, as AIConfigurator's benchmark template runs it (`aiperf profile --concurrency C
//! --num-requests 20·C --warmup-request-count 2·C`, `ignore_eos`): `C` clients, 2·C warm-up
//! requests left out, then 20·C. One assumption: the outputs spread by ±3 tokens around the
//! stated length (at most 2.3% of it). The simulator is deterministic, so clients whose
//! requests are all alike stay in lockstep (every prompt in the same step, every decode step
//! without a prompt chunk); a real server's jitter (network, tokenization, streaming) breaks
//! that. The source's TTFTs say it was broken: at TP 8, `C` = 8 and 1,024 prompt tokens the
//! measured TTFT is 91 ms, shorter than the 8 × 1,024-token prefill step lockstep would put in it.
//!
//! What it shows (printed; `docs/history/SERVING_SIMULATOR.md`, "2026-12-04", reads it): the signed
//! error of the mean TPOT per concurrency (the source does not say whether its TPOT is a mean
//! or a median), and, per (TP, lengths), the slope of the gap
//! `measured − predicted` against `C`: the time per step that each further running request
//! costs vLLM V1 beyond the model. The asserted levels are the achieved ones rounded up, so a
//! change to the model that moves them shows here.

mod common;

use common::percentile;
use llm_serving_calculator::core::calc::Efficiencies;
use llm_serving_calculator::core::model::{parse_model_text, preset};
use llm_serving_calculator::core::sim::{
    Arrival, Budget, EngineConfig, Lengths, Replica, SimNote, StepModelKind, WorkloadSpec,
    LOCKSTEP_TTFT_RATIO,
};
use std::collections::BTreeMap;

const CSV: &str = include_str!("fixtures/vllm_v1_aiconfigurator_qwen3_32b_h100.csv");

/// One row: TP, prompt and output tokens, clients, measured and predicted mean TPOT (ms),
/// measured and predicted TTFT (ms; the predicted one the mean), and whether the run carried
/// the lockstep note.
struct Row {
    tp: u64,
    isl: u64,
    osl: u64,
    c: u64,
    measured: f64,
    predicted: f64,
    ttft_measured: f64,
    ttft_predicted: f64,
    lockstep_note: bool,
}

/// The outputs spread by ±3 tokens (the assumption above).
const SPREAD: u64 = 3;

fn rows() -> Vec<Row> {
    rows_with(&Efficiencies::default(), 0.0)
}

/// [`rows`] with the given efficiencies and time per running request (seconds).
fn rows_with(eff: &Efficiencies, per_request: f64) -> Vec<Row> {
    rows_spread(eff, per_request, SPREAD)
}

/// [`rows_with`] with the outputs spread by ±`spread` tokens (0: the stated lengths).
fn rows_spread(eff: &Efficiencies, per_request: f64, spread: u64) -> Vec<Row> {
    let model = parse_model_text(preset("Qwen__Qwen3-32B").expect("preset").json()).expect("model");
    let gpu = common::gpu("h100-sxm");
    let mut out = Vec::new();
    common::for_each_csv_row(CSV, |line, f| {
        let num = |k: &str| -> f64 { f[k].parse().unwrap_or_else(|_| panic!("line {line}: {k}")) };
        assert_eq!(
            (f["backend"], f["backend_version"], f["system"], f["mode"]),
            ("vllm", "0.12.0", "h100_sxm", "agg"),
            "line {line}"
        );
        let (tp, isl, osl, c) = (
            num("tp_size") as u64,
            num("isl") as u64,
            num("osl") as u64,
            num("batch_size") as u64,
        );
        // The roofline step model and its 48 ms server path, as these runs checked it before
        // issue 44 (`tests/serving_e2e_validation.rs` checks them on the default model, with
        // the benchmark's own flags), and vLLM 0.12's synchronous scheduling.
        let engine = EngineConfig {
            tp,
            step_model: StepModelKind::Roofline,
            frontend_overhead_ms: 48.0,
            frontend_per_token_us: 0.0,
            async_scheduling: false,
            ..EngineConfig::default()
        };
        let n = 22 * c;
        let pairs = (0..n)
            .map(|i| (isl, osl + (i * 7919) % (2 * spread + 1) - spread))
            .collect();
        let r = Replica::new(&model, gpu, &engine, eff)
            .expect("replica")
            .with_per_sequence_cost(per_request, false)
            .run(
                &WorkloadSpec {
                    arrival: Arrival::AllAtOnce,
                    max_concurrency: Some(c),
                    lengths: Lengths::List { pairs },
                    num_requests: n,
                    warmup: 2 * c,
                    warmup_drained: false,
                    seed: 0,
                },
                None,
                Budget::default(),
            )
            .expect("runs");
        out.push(Row {
            tp,
            isl,
            osl,
            c,
            measured: num("silicon_tpot_ms"),
            predicted: r.tpot_ms.mean,
            ttft_measured: num("silicon_ttft_ms"),
            ttft_predicted: r.ttft_ms.mean,
            lockstep_note: r
                .notes
                .iter()
                .any(|n| matches!(n, SimNote::Lockstep { .. })),
        });
    });
    out
}

/// Least-squares slope of `y` against `x`.
fn slope(points: &[(f64, f64)]) -> f64 {
    let n = points.len() as f64;
    let (mx, my) = (
        points.iter().map(|p| p.0).sum::<f64>() / n,
        points.iter().map(|p| p.1).sum::<f64>() / n,
    );
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    sxy / sxx
}

#[test]
fn vllm_v1_tpot_by_concurrency() {
    let rows = rows();
    assert_eq!(rows.len(), 90, "the fixture's 90 runs");
    // Achieved |median signed error| of the mean TPOT per concurrency, rounded up.
    let levels = [(8, 0.14), (16, 0.10), (32, 0.04), (64, 0.02), (128, 0.03)];
    for (c, level) in levels {
        let mut e: Vec<f64> = rows
            .iter()
            .filter(|r| r.c == c)
            .map(|r| r.predicted / r.measured - 1.0)
            .collect();
        let m = percentile(&mut e, 0.5);
        println!(
            "C = {c:3}: {} runs, median signed TPOT error {:+6.1}%",
            e.len(),
            m * 100.0
        );
        common::assert_within_level(&format!("C = {c}"), m, level);
    }
    let mut groups: BTreeMap<(u64, u64, u64), Vec<(f64, f64)>> = BTreeMap::new();
    for r in &rows {
        groups
            .entry((r.tp, r.isl, r.osl))
            .or_default()
            .push((r.c as f64, r.measured - r.predicted));
    }
    let (mut decode_heavy, mut prompt_heavy) = (Vec::new(), Vec::new());
    for ((tp, isl, osl), points) in &groups {
        let s = slope(points) * 1000.0;
        println!(
            "TP {tp}, {isl} + {osl} tokens: measured − predicted grows by {s:6.1} µs per request \
             (C = 8 … 128: {:+.2} … {:+.2} ms)",
            points.first().map_or(0.0, |p| p.1),
            points.last().map_or(0.0, |p| p.1)
        );
        if *osl == 1024 {
            decode_heavy.push(s);
        } else if *osl == 128 && *isl == 4096 {
            prompt_heavy.push(s);
        }
    }
    let med = percentile(&mut decode_heavy, 0.5);
    let prompt = percentile(&mut prompt_heavy, 0.5);
    println!(
        "median over the 1,024-output groups (decode steps, few prompt chunks): {med:.1} µs per \
         running request per step; over the 4,096 + 128 groups (a prompt chunk in most steps): \
         {prompt:.1} µs"
    );
    // Achieved, with a band either side: where decode steps dominate, vLLM V1 spends a time
    // per running request the model does not hold, well below V0's 76-98 µs
    // (vllm_static_batches.rs); where long prompt chunks share most steps the gap shrinks as C
    // grows instead (the model's mixed steps are slower than vLLM's).
    assert!(
        (25.0..=55.0).contains(&med),
        "decode-heavy median slope {med:.1} µs"
    );
    assert!(prompt < 0.0, "prompt-heavy median slope {prompt:.1} µs");
}

/// The lockstep of clients whose requests are all alike (`SimNote::Lockstep`): at the stated
/// lengths every run carries the note and the median simulated / measured TTFT is the factor
/// the note quotes ([`LOCKSTEP_TTFT_RATIO`], within 0.1); with the ±3-token spread no run
/// carries it and the TTFT comes far closer. The TPOT moves much less between the two (the
/// note says so).
#[test]
fn lockstep_at_the_stated_lengths() {
    let (fixed, spread) = (rows_spread(&Efficiencies::default(), 0.0, 0), rows());
    assert!(
        fixed.iter().all(|r| r.lockstep_note),
        "every run at fixed lengths"
    );
    assert!(
        spread.iter().all(|r| !r.lockstep_note),
        "no run with spread outputs"
    );
    let ttft_ratio = |rows: &[Row]| {
        let mut v: Vec<f64> = rows
            .iter()
            .map(|r| r.ttft_predicted / r.ttft_measured)
            .collect();
        percentile(&mut v, 0.5)
    };
    let (at_fixed, at_spread) = (ttft_ratio(&fixed), ttft_ratio(&spread));
    let mut tpot_moves: Vec<f64> = fixed
        .iter()
        .zip(&spread)
        .map(|(f, s)| (f.predicted / s.predicted - 1.0).abs())
        .collect();
    let tpot_move = percentile(&mut tpot_moves, 0.5);
    let tpot_p90 = percentile(&mut tpot_moves, 0.9);
    println!(
        "simulated / measured mean TTFT, median: {at_fixed:.2} at the stated lengths, \
         {at_spread:.2} with outputs ±{SPREAD}; the mean TPOT moves by a median {:.1}% \
         (P90 {:.1}%) between the two",
        tpot_move * 100.0,
        tpot_p90 * 100.0
    );
    assert!(
        (at_fixed - LOCKSTEP_TTFT_RATIO).abs() <= 0.1,
        "the note quotes {LOCKSTEP_TTFT_RATIO}, the runs give {at_fixed:.2}"
    );
    // Achieved levels, rounded up.
    assert!(at_spread <= 1.5, "with spread outputs {at_spread:.2}");
    common::assert_within_level("TPOT move (median)", tpot_move, 0.04);
}

/// The efficiencies that fit these runs best (a sensitivity, `docs/history/SERVING_SIMULATOR.md`,
/// "2026-12-04"): a grid over the bandwidth and prefill compute efficiencies, the decode step's
/// fixed time and a time per running request, scored by the mean |ln(predicted / measured)| of
/// the 90 mean TPOTs. About two minutes: `cargo test --release --test vllm_v1_concurrency --
/// --ignored --nocapture`. The check: the best point fits better than the defaults.
#[test]
#[ignore = "a grid of about two minutes; its figures are in docs/history/SERVING_SIMULATOR.md"]
fn efficiencies_fitted_on_the_v1_runs() {
    let score = |rows: &[Row]| {
        rows.iter()
            .map(|r| (r.predicted / r.measured).ln().abs())
            .sum::<f64>()
            / rows.len() as f64
    };
    let defaults = score(&rows());
    let mut res = Vec::new();
    for bandwidth in [0.74, 0.80, 0.86, 0.92] {
        for step_overhead_s in [0.0012, 0.0006] {
            for compute_prefill in [0.56, 0.66, 0.76] {
                for per_request in [0.0, 25e-6, 39e-6, 55e-6] {
                    let eff = Efficiencies {
                        bandwidth,
                        step_overhead_s,
                        compute_prefill,
                        ..Efficiencies::default()
                    };
                    let s = score(&rows_with(&eff, per_request));
                    res.push((s, bandwidth, step_overhead_s, compute_prefill, per_request));
                }
            }
        }
    }
    res.sort_by(|a, b| a.0.total_cmp(&b.0));
    println!("defaults: mean |ln(predicted / measured)| {defaults:.4}");
    for (s, bw, so, cp, pr) in res.iter().take(5) {
        println!(
            "{s:.4}: bandwidth {bw}, decode step {:.1} ms, prefill compute {cp}, {:.0} µs per request",
            so * 1e3,
            pr * 1e6
        );
    }
    assert!(res[0].0 < defaults);
}
