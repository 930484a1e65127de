//! The serving simulator against published benchmarks under load
//! (`fixtures/serving_observations.csv`, described in `fixtures/serving_observations.md`).
//!
//! Every row the simulator can stand for is mapped: a vLLM engine (the simulator models
//! vLLM's scheduler; SGLang, TensorRT-LLM and NIM rows are skipped), a model among the
//! presets, a GPU in the catalog, no speculative decoding or pipeline parallelism, and for
//! vLLM 0.6 (V0) only the rows with chunked prefill on. The engine flags the row states are
//! used (TP, `--max-model-len`, `--max-num-batched-tokens`, `--gpu-memory-utilization`, the
//! logged KV-cache size, `--block-size`); the rest are vLLM's defaults. Lengths: the built-in
//! ShareGPT-like distribution for ShareGPT rows, fixed lengths (the realised mean output when
//! the row states it) for random and sonnet rows. Efficiencies: the defaults, fitted on the
//! static benchmarks of `data/perf_calibration.csv`, so none of these rows was seen by the fit.
//! These rows validate the **roofline** step model (`StepModelKind::Roofline`, what `--eff`
//! and `calibrate --fit` use), as they have since issue 17; `serving_benchmarks_on_the_kernel_model`
//! runs the same rows on the default measured-kernel step model and prints both.
//! The roofline's server path ([`ROOFLINE_FRONTEND_MS`]) was fitted on one row, CSV line 2, and the compute factor of
//! vLLM's Marlin MXFP4 MoE kernel on Hopper (`calc::perf::FIT_MARLIN_HOPPER_MOE_COMPUTE`) on one
//! row, CSV line 25 ([`FIT_ROWS`]): those rows are run and printed but left out of the
//! held-out figures, and `frontend_default_is_the_fit_on_its_row` and
//! `marlin_hopper_moe_compute_is_the_fit_on_its_row` recompute the fits.
//!
//! The test prints one line per row and the median and P90 relative error per statistic
//! (the median ITL printed, never asserted: the decode step without queueing), then asserts
//! the achieved levels (see `docs/SERVING_SIMULATOR.md`, "Validation", for the figures, and
//! `docs/history/SERVING_SIMULATOR.md` for why they are where they are).
//! `sharegpt_burst_median_ttft_share_of_the_run` is a sensitivity of the ShareGPT burst rows to the
//! length distribution, with a sample of the dataset itself
//! (`fixtures/sharegpt_sample_lengths.csv`).

mod common;

use common::percentile;
use llm_serving_calculator::core::base::Dtype;
use llm_serving_calculator::core::calc::memory::VllmStartup;
use llm_serving_calculator::core::calc::Efficiencies;
use llm_serving_calculator::core::hardware::Catalog;
use llm_serving_calculator::core::model::{parse_model_text, preset};
use llm_serving_calculator::core::sim::{
    Arrival, Budget, EngineConfig, Lengths, Replica, SimResult, StepModelKind, WorkloadSpec,
    DEFAULT_FRONTEND_OVERHEAD_MS, DEFAULT_FRONTEND_PER_TOKEN_US,
};

/// The server's path these rows are validated with on the roofline step model: the fit on
/// CSV line 2 (GPUStack's Qwen3-8B on one H100 at one client: 60.38 ms measured, 12.19 ms of
/// engine), the simulator's default until issue 44 replaced it with the fit on the measured
/// end-to-end runs (`DEFAULT_FRONTEND_OVERHEAD_MS`, `tests/serving_e2e_validation.rs`).
const ROOFLINE_FRONTEND_MS: f64 = 48.0;
use std::collections::BTreeMap;

const CSV: &str = include_str!("fixtures/serving_observations.csv");

/// CSV lines a default was fitted on: run and printed, never counted in the held-out figures.
/// Line 2 (GPUStack, Qwen3-8B on one H100, `--max-concurrency 1`) fixes the frontend path;
/// line 25 (GPUStack, gpt-oss-120b on two H100s, 1,000 ShareGPT prompts at once) fixes
/// `calc::perf::FIT_MARLIN_HOPPER_MOE_COMPUTE` (its median TPOT).
const FIT_ROWS: &[usize] = &[2, 25];

/// The statistics compared, with their column in the CSV.
const STATS: &[(&str, &str)] = &[
    ("median_ttft", "median_ttft_ms"),
    ("p99_ttft", "p99_ttft_ms"),
    ("median_tpot", "median_tpot_ms"),
    ("p99_tpot", "p99_tpot_ms"),
    ("request_throughput", "request_throughput_rps"),
    ("mean_ttft", "mean_ttft_ms"),
    ("mean_tpot", "mean_tpot_ms"),
    // Printed, never asserted: the decode step itself (a typical gap between two tokens),
    // without the queueing that TTFT and throughput add.
    ("median_itl", "median_itl_ms"),
    ("saturation_rate", "request_throughput_rps"),
];

fn predicted(stat: &str, r: &SimResult) -> f64 {
    match stat {
        "median_ttft" => r.ttft_ms.median,
        "p99_ttft" => r.ttft_ms.p99,
        "median_tpot" => r.tpot_ms.median,
        "p99_tpot" => r.tpot_ms.p99,
        "mean_ttft" => r.ttft_ms.mean,
        "mean_tpot" => r.tpot_ms.mean,
        "median_itl" => r.itl_ms.median,
        _ => r.request_throughput,
    }
}

/// One mapped row.
#[derive(Clone)]
struct Case {
    line: usize,
    label: String,
    /// The page the row was published on (the cross-validation's grouping).
    source: String,
    model: &'static str,
    gpu: &'static str,
    engine: EngineConfig,
    workload: WorkloadSpec,
    /// Rate inf with at least 500 prompts and no concurrency cap: the throughput measured is
    /// the replica's saturation rate.
    saturation: bool,
    measured: BTreeMap<&'static str, f64>,
}

/// The number right after `key` in `text` (digits, commas, one dot).
fn number_after(text: &str, key: &str) -> Option<f64> {
    let at = text.find(key)? + key.len();
    let s: String = text[at..]
        .trim_start_matches([' ', '=', ':'])
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.' || *c == ',')
        .filter(|c| *c != ',')
        .collect();
    s.trim_end_matches('.').parse().ok()
}

/// The number right before `key` in `text`.
fn number_before(text: &str, key: &str) -> Option<f64> {
    let at = text.find(key)?;
    let s: String = text[..at]
        .trim_end()
        .chars()
        .rev()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    s.parse().ok()
}

fn map_model(m: &str) -> Option<(&'static str, Option<Dtype>)> {
    Some(match m {
        "Qwen/Qwen3-8B" => ("Qwen__Qwen3-8B", None),
        "Qwen/Qwen3-32B" => ("Qwen__Qwen3-32B", None),
        "Qwen/Qwen3-32B-FP8" => ("Qwen__Qwen3-32B", Some(Dtype::Fp8)),
        "Qwen/Qwen3-32B-AWQ" => ("Qwen__Qwen3-32B", Some(Dtype::Int4)),
        "openai/gpt-oss-120b" => ("openai__gpt-oss-120b", None),
        // Qwen2-7B and Qwen2.5-7B share the architecture (28 layers, hidden 3,584, 28/4
        // heads, intermediate 18,944, vocabulary 152,064).
        "Qwen/Qwen2-7B-Instruct" => ("Qwen__Qwen2.5-7B-Instruct", None),
        "Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4" => ("Qwen__Qwen2.5-7B-Instruct", Some(Dtype::Int4)),
        _ if m.starts_with("Qwen/Qwen3-8B (FP8") => ("Qwen__Qwen3-8B", Some(Dtype::Fp8)),
        _ => return None,
    })
}

fn map_gpu(g: &str) -> Option<&'static str> {
    let t = g.to_ascii_lowercase();
    Some(if t.starts_with("h100") {
        // The SXM part: the GPUStack docs say so since their revision of 2026-01-06 (gpustack
        // commit 1f37f1b8: "A single NVIDIA H100 SXM GPU", "2 × NVIDIA H100 SXM GPUs").
        "h100-sxm"
    } else if t.starts_with("a100") {
        "a100-sxm-80gb"
    } else if t.starts_with("a10 ") {
        "a10"
    } else if t.starts_with("rtx 4090") {
        "rtx-4090"
    } else if t.contains("mi300x") {
        "mi300x"
    } else {
        return None;
    })
}

/// 1,000 (prompt, output) token counts of ShareGPT V3 as `vllm bench serve` samples it (first
/// human and first gpt turn of conversations with at least two turns, shuffled with seed 0,
/// kept when prompt and output have at least 4 tokens, the prompt at most 1,024 and both at
/// most 2,048), counted with Qwen2.5's tokenizer (Qwen3's vocabulary). Provenance and its
/// limits in `tests/fixtures/SOURCES.md`.
const SHAREGPT_SAMPLE: &str = include_str!("fixtures/sharegpt_sample_lengths.csv");

/// The first `n` pairs of [`SHAREGPT_SAMPLE`] (cycled), scaled to the given means.
fn dataset_sample_scaled(n: u64, input: f64, output: f64) -> Lengths {
    let all: Vec<(u64, u64)> = SHAREGPT_SAMPLE
        .lines()
        .skip(1)
        .filter_map(|l| {
            let (a, b) = l.split_once(',')?;
            Some((a.trim().parse().ok()?, b.trim().parse().ok()?))
        })
        .collect();
    let pairs: Vec<(u64, u64)> = all.iter().copied().cycle().take(n as usize).collect();
    let k = pairs.len().max(1) as f64;
    let mi = pairs.iter().map(|p| p.0 as f64).sum::<f64>() / k;
    let mo = pairs.iter().map(|p| p.1 as f64).sum::<f64>() / k;
    let scale = |v: u64, f: f64| ((v as f64 * f).round() as u64).max(1);
    Lengths::List {
        pairs: pairs
            .iter()
            .map(|&(i, o)| (scale(i, input / mi), scale(o, output / mo)))
            .collect(),
    }
}

/// The mean prompt and output of a list of pairs.
fn list_means(pairs: &[(u64, u64)]) -> (f64, f64) {
    let k = pairs.len().max(1) as f64;
    (
        pairs.iter().map(|p| p.0 as f64).sum::<f64>() / k,
        pairs.iter().map(|p| p.1 as f64).sum::<f64>() / k,
    )
}

/// The built-in ShareGPT-like draws for `n` prompts, scaled so that their means are the
/// realised means the row states (its prompts are a particular sample: 232.6 / 220.6 tokens
/// for the first 100, 217.4 / 201.4 for 1,000); unscaled when the row states none.
fn sharegpt_scaled(n: u64, input: f64, output: f64) -> Lengths {
    let draws = WorkloadSpec {
        lengths: Lengths::ShareGpt,
        num_requests: n,
        ..WorkloadSpec::default()
    }
    .generate()
    .expect("draws")
    .requests;
    let k = draws.len().max(1) as f64;
    let mi = draws.iter().map(|r| r.input as f64).sum::<f64>() / k;
    let mo = draws.iter().map(|r| r.output as f64).sum::<f64>() / k;
    if input <= 0.0 || output <= 0.0 {
        return Lengths::ShareGpt;
    }
    let scale = |v: u64, f: f64| ((v as f64 * f).round() as u64).max(1);
    Lengths::List {
        pairs: draws
            .iter()
            .map(|r| (scale(r.input, input / mi), scale(r.output, output / mo)))
            .collect(),
    }
}

/// The engine flags a row states (in its columns and its notes), else vLLM's defaults.
fn engine_of(f: &BTreeMap<&str, &str>, wd: Option<Dtype>) -> EngineConfig {
    let get = |k: &str| f.get(k).copied().unwrap_or("");
    let notes = get("notes");
    let mut e = EngineConfig {
        tp: get("tp").parse().unwrap_or(1),
        weights_dtype: wd,
        // The roofline step model and its server path, as these rows have validated it since
        // issue 17 (`serving_benchmarks_on_the_kernel_model` runs them on the default).
        step_model: StepModelKind::Roofline,
        frontend_overhead_ms: ROOFLINE_FRONTEND_MS,
        frontend_per_token_us: 0.0,
        ..EngineConfig::default()
    };
    if get("weights_dtype").contains("fp8_e4m3 KV") {
        e.kv_dtype = Some(Dtype::Fp8);
    }
    let flag = |k: &str| number_after(notes, k);
    e.max_model_len = flag("--max-model-len")
        .or(flag("max_model_len"))
        .map(|v| v as u64);
    e.max_num_batched_tokens = flag("--max-num-batched-tokens")
        .or(flag("max_num_batched_tokens="))
        .map(|v| v as u64);
    if let Some(u) = flag("--gpu-memory-utilization").or(flag("gpu_memory_utilization")) {
        e.gpu_memory_utilization = u;
    }
    if let Some(b) = flag("--block-size=") {
        e.block_size = b as u64;
    }
    if let Some(tokens) = flag("GPU KV cache") {
        e.num_gpu_blocks_override = Some(tokens as u64 / e.block_size);
    }
    if get("engine_version").starts_with("0.6") {
        // vLLM V0 with chunked prefill: 512-token steps by default.
        e.max_num_batched_tokens = Some(512);
        e.max_num_seqs = Some(256);
    }
    if notes.contains("max running seqs 256") {
        e.max_num_seqs = Some(256);
    }
    // vLLM turned asynchronous scheduling on by default in 0.14.
    e.async_scheduling = get("engine_version")
        .split('.')
        .nth(1)
        .and_then(|m| m.parse::<u64>().ok())
        .is_some_and(|minor| minor >= 14);
    e
}

/// Why a row is not mapped, or its case.
fn map_row(line: usize, f: &BTreeMap<&str, &str>) -> Result<Case, String> {
    let get = |k: &str| f.get(k).copied().unwrap_or("");
    let notes = get("notes");
    let engine_name = get("engine");
    if engine_name != "vLLM" {
        return Err(format!("engine {engine_name}: the simulator models vLLM"));
    }
    if notes.contains("PIPELINE PARALLEL") || get("weights_dtype").contains("EAGLE") {
        return Err("pipeline parallel or speculative decoding".into());
    }
    if notes.contains("chunked prefill not enabled") {
        return Err("vLLM V0 without chunked prefill (prefill-only steps): not modelled".into());
    }
    let (model, wd) = map_model(get("model")).ok_or(format!("model {}", get("model")))?;
    let gpu = map_gpu(get("gpu")).ok_or(format!("GPU {}", get("gpu")))?;
    let n: u64 = get("num_prompts")
        .parse()
        .map_err(|_| "no num_prompts".to_string())?;
    let e = engine_of(f, wd);
    let dataset = get("dataset").to_ascii_lowercase();
    let input: f64 = get("input_len").parse().unwrap_or(0.0);
    let output_col: f64 = get("output_len").parse().unwrap_or(0.0);
    let lengths = if dataset.starts_with("sharegpt") {
        sharegpt_scaled(n, input, output_col)
    } else {
        let out = number_before(notes, " realised")
            .or_else(|| {
                let total =
                    number_after(notes, "Totals: input").and(number_after(notes, ", output"))?;
                Some(total / number_after(notes, "successful")?)
            })
            .unwrap_or(output_col);
        Lengths::Fixed {
            input: input.round().max(1.0) as u64,
            output: out.round().max(1.0) as u64,
        }
    };
    let rate = get("request_rate");
    let conc = get("max_concurrency").parse::<u64>().ok();
    let arrival = if rate == "inf" {
        Arrival::AllAtOnce
    } else {
        Arrival::Poisson {
            rate: rate.parse().map_err(|_| format!("rate {rate}"))?,
        }
    };
    let mut measured = BTreeMap::new();
    for (stat, col) in STATS {
        if let Ok(v) = get(col).parse::<f64>() {
            measured.insert(*stat, v);
        }
    }
    if notes.contains("prefix-cache hit") {
        // The source: identical prompts across runs left the prefix cache warm, so TTFT
        // measured cache hits the simulator is not told about; TTFT is not compared.
        for s in ["median_ttft", "p99_ttft", "mean_ttft"] {
            measured.remove(s);
        }
    }
    let saturation = rate == "inf" && conc.is_none() && n >= 500;
    if !saturation {
        measured.remove("saturation_rate");
    }
    if measured.is_empty() {
        return Err("no statistic to compare".into());
    }
    Ok(Case {
        line,
        source: get("source_url").to_string(),
        label: format!(
            "{} {} tp{} {} c={} n={n} {}",
            get("model"),
            gpu,
            e.tp,
            rate,
            conc.map_or("-".into(), |c| c.to_string()),
            match &lengths {
                Lengths::ShareGpt | Lengths::List { .. } => "sharegpt".to_string(),
                Lengths::Fixed { input, output } => format!("{input}/{output}"),
                _ => String::new(),
            }
        ),
        model,
        gpu,
        engine: e,
        workload: WorkloadSpec {
            arrival,
            max_concurrency: conc,
            lengths,
            num_requests: n,
            ..WorkloadSpec::default()
        },
        saturation,
        measured,
    })
}

fn cases() -> (Vec<Case>, Vec<(usize, String)>) {
    let (mut ok, mut skipped) = (Vec::new(), Vec::new());
    common::for_each_csv_row(CSV, |line, f| match map_row(line, f) {
        Ok(c) => ok.push(c),
        Err(why) => skipped.push((line, why)),
    });
    (ok, skipped)
}

/// Runs one mapped case.
fn run_case(c: &Case) -> SimResult {
    run_case_with(c, None)
}

/// The engine a row ran, and whether its KV pool is the start-up floor. Every row's server
/// started and served it, so its pool is what the core says a started vLLM server had
/// (`VllmBudget::blocks_if_started`): our budget, or, where the budget says vLLM would have
/// refused to start (`VllmStartup::Refuses`: the source's memory contradicts our budget, as
/// for Qwen3-32B on one H100 at vLLM's default `max_model_len` of 40,960, lines 13 and 17–20),
/// the start-up minimum, the fewest blocks its server can have had.
fn engine_of_case(c: &Case) -> (EngineConfig, bool) {
    let cat = Catalog::builtin();
    let m = parse_model_text(preset(c.model).expect("preset").json()).expect("model");
    let gpu = cat.get(c.gpu).expect("gpu");
    let mut e = c.engine.clone();
    let r = e
        .resolve(&m, gpu)
        .unwrap_or_else(|err| panic!("line {}: {err}", c.line));
    let floor = e.num_gpu_blocks_override.is_none()
        && matches!(r.budget.startup(), VllmStartup::Refuses { .. });
    if floor {
        e.num_gpu_blocks_override = Some(r.budget.blocks_if_started());
    }
    (e, floor)
}

/// [`run_case`] with the Marlin-on-Hopper compute factor `k` in place of the fitted constant.
fn run_case_with(c: &Case, k: Option<f64>) -> SimResult {
    run_case_under(c, &Efficiencies::default(), k, (0.0, false))
}

/// [`run_case_with`] under the efficiencies `eff` and a time per step for each sampling
/// request beyond the first: `(seconds, divided by the TP degree)`
/// (`Replica::with_per_sequence_cost`; 0 s is the shipped model).
fn run_case_under(
    c: &Case,
    eff: &Efficiencies,
    k: Option<f64>,
    per_request: (f64, bool),
) -> SimResult {
    let cat = Catalog::builtin();
    let m = parse_model_text(preset(c.model).expect("preset").json()).expect("model");
    let gpu = cat.get(c.gpu).expect("gpu");
    let (engine, _) = engine_of_case(c);
    let mut rep =
        Replica::new(&m, gpu, &engine, eff).unwrap_or_else(|e| panic!("line {}: {e}", c.line));
    if let Some(k) = k {
        rep = rep.with_marlin_hopper_moe_compute(k);
    }
    if per_request.0 > 0.0 {
        rep = rep.with_per_sequence_cost(per_request.0, per_request.1);
    }
    rep.run(&c.workload, None, Budget::default())
        .unwrap_or_else(|e| panic!("line {}: {e}", c.line))
}

/// The Marlin-on-Hopper factor in [0.05, 1] whose `tpot(k)` gives `measured`: bisection in
/// ln k (a lower factor makes the experts slower, so TPOT falls as k rises).
fn bisect_marlin(tpot: impl Fn(f64) -> f64, measured: f64) -> f64 {
    let (mut lo, mut hi) = (0.05f64.ln(), 1.0f64.ln());
    for _ in 0..14 {
        let mid = 0.5 * (lo + hi);
        if tpot(mid.exp()) > measured {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (0.5 * (lo + hi)).exp()
}

/// `c` with the dataset's own ShareGPT lengths ([`dataset_sample_scaled`]) at the means of its
/// drawn ones, when it has a list of lengths.
fn with_dataset_lengths(mut c: Case) -> Case {
    if let Lengths::List { pairs } = &c.workload.lengths {
        let (mi, mo) = list_means(pairs);
        c.workload.lengths = dataset_sample_scaled(c.workload.num_requests, mi, mo);
    }
    c
}

/// Runs every mapped row; returns the relative errors per statistic (held-out rows only).
fn run_all() -> BTreeMap<&'static str, Vec<f64>> {
    let (cases, skipped) = cases();
    run_rows(&cases, &skipped)
}

/// Runs the given mapped rows (see [`run_all`]).
fn run_rows(cases: &[Case], skipped: &[(usize, String)]) -> BTreeMap<&'static str, Vec<f64>> {
    let mut errors: BTreeMap<&'static str, Vec<f64>> = BTreeMap::new();
    println!("{} rows mapped, {} skipped", cases.len(), skipped.len());
    for (line, why) in skipped {
        println!("  skipped line {line}: {why}");
    }
    for c in cases {
        let r = run_case(c);
        let fit_row = FIT_ROWS.contains(&c.line);
        let floor = engine_of_case(c).1;
        let mut line = format!(
            "{}line {:3} {:58} blocks {:6}{} preempt {:5}{}",
            if fit_row { "FIT " } else { "" },
            c.line,
            c.label,
            r.engine.num_gpu_blocks,
            if floor { " (floor)" } else { "" },
            r.preemptions,
            if r.partial { " PARTIAL" } else { "" }
        );
        for (stat, _) in STATS {
            if let Some(&meas) = c.measured.get(stat) {
                let pred = predicted(stat, &r);
                let rel = (pred - meas) / meas;
                if !fit_row {
                    errors.entry(stat).or_default().push(rel.abs());
                }
                line.push_str(&format!(
                    " | {stat} {meas:.4} vs {pred:.4} ({:+.0}%)",
                    rel * 100.0
                ));
            }
        }
        let _ = c.saturation;
        println!("{line}");
    }
    println!(
        "\nheld-out rows (fit rows {FIT_ROWS:?} left out)\nstatistic              rows  median |err|  P90 |err|"
    );
    for (stat, e) in &mut errors {
        let n = e.len();
        let med = percentile(e, 0.5);
        let p90 = percentile(e, 0.9);
        println!(
            "{stat:22} {n:4}  {:10.2}%  {:8.2}%",
            med * 100.0,
            p90 * 100.0
        );
    }
    errors
}

#[test]
fn serving_benchmarks_reproduced_within_the_stated_error() {
    let mut errors = run_all();
    // Issue 17's targets: median error ≤ 20% for median TTFT, median TPOT and request
    // throughput, ≤ 30% for P99 TTFT and P99 TPOT, ≤ 15% for the saturation rate, on rows no
    // fit saw (FIT_ROWS left out). Achieved on the 2026-12-02 run with vLLM V1's prefix cache
    // of a preempted request's blocks (`sim::free_queue`) and the core's start-up floor of the
    // KV pool (`VllmBudget::blocks_if_started`): median TTFT 28.04% (NOT met; 30.4% before the
    // cache), P99 TTFT 21.65%, median TPOT 17.96% (17.3% before: the rows that no longer
    // recompute expose steps timed too fast), P99 TPOT 17.51%, request throughput 11.93%,
    // saturation rate 12.02% (met); unchanged on 2026-12-03 (lead 3 worked through, nothing
    // changed: the decode steps at large batches are too fast, see the docs). On 2026-12-04
    // the pool lost vLLM's null block (`Resolved::usable_blocks`): request throughput 12.05%,
    // saturation rate 12.09%, the rest unchanged. Each is asserted at the achieved level
    // rounded up slightly, so a regression fails (the reasons for the TTFT gap are in
    // docs/history/SERVING_SIMULATOR.md, "why the median TTFT stays above 20%").
    assert_levels(
        &mut errors,
        &[
            ("median_ttft", 0.29),
            ("median_tpot", 0.18),
            ("request_throughput", 0.125),
            ("p99_ttft", 0.22),
            ("p99_tpot", 0.18),
            ("saturation_rate", 0.13),
        ],
    );
}

/// Asserts each statistic's median relative error is at most its level.
fn assert_levels(errors: &mut BTreeMap<&'static str, Vec<f64>>, levels: &[(&str, f64)]) {
    let mut failures = Vec::new();
    for &(stat, level) in levels {
        let m = percentile(errors.get_mut(stat).expect("stat has rows"), 0.5);
        if m > level {
            failures.push(format!(
                "{stat}: median error {:.1}% > {:.1}%",
                m * 100.0,
                level * 100.0
            ));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// The same rows on the default measured-kernel step model, with the default server path
/// (`DEFAULT_FRONTEND_OVERHEAD_MS`, `DEFAULT_FRONTEND_PER_TOKEN_US`) and vLLM's asynchronous
/// scheduling as each row's version had it. Printed beside the roofline's and asserted at the
/// achieved levels, rounded up. These rows are mostly vLLM 0.10–0.11 at saturation (ShareGPT
/// bursts, heavy preemption) and are further off than on the roofline fitted to them: the
/// docs' "Method and accuracy" names the rows that move and why (gpt-oss-120b on H100, whose
/// Marlin MXFP4 kernel the tables do not hold; Qwen3-32B on one H100 at the KV pool's floor).
#[test]
fn serving_benchmarks_on_the_kernel_model() {
    let (mut cases, skipped) = cases();
    for c in &mut cases {
        c.engine.step_model = StepModelKind::Kernels;
        c.engine.frontend_overhead_ms = DEFAULT_FRONTEND_OVERHEAD_MS;
        c.engine.frontend_per_token_us = DEFAULT_FRONTEND_PER_TOKEN_US;
    }
    let mut errors = run_rows(&cases, &skipped);
    // P99 TTFT went from 50.8% to 53.2% on 2026-12-06, when asynchronous scheduling's one-step
    // admission delay was modelled and the server path refitted from 32 to 22 ms; the other
    // statistics moved by under 0.1 point.
    assert_levels(
        &mut errors,
        &[
            ("median_ttft", 0.53),
            ("median_tpot", 0.35),
            ("request_throughput", 0.23),
            ("p99_ttft", 0.54),
            ("p99_tpot", 0.25),
            ("saturation_rate", 0.59),
        ],
    );
}

/// The roofline's server path is the fit on its one row: the row's measured median TTFT less
/// the simulator's without a frontend (GPU work only), to the millisecond.
#[test]
fn roofline_frontend_is_the_fit_on_its_row() {
    let (cases, _) = cases();
    let line = *FIT_ROWS.first().expect("one fit row");
    let mut c = cases
        .into_iter()
        .find(|c| c.line == line)
        .expect("the fit row is mapped");
    let measured = *c.measured.get("median_ttft").expect("median TTFT");
    c.engine.frontend_overhead_ms = 0.0;
    let engine_only = run_case(&c).ttft_ms.median;
    let fitted = measured - engine_only;
    println!(
        "line {line}: measured median TTFT {measured} ms, engine only {engine_only:.2} ms, \
         frontend {fitted:.2} ms (the roofline's {ROOFLINE_FRONTEND_MS} ms)"
    );
    assert!(
        (fitted - ROOFLINE_FRONTEND_MS).abs() <= 1.0,
        "fitted {fitted:.2} ms against {ROOFLINE_FRONTEND_MS} ms"
    );
    c.engine.frontend_overhead_ms = ROOFLINE_FRONTEND_MS;
    let with = run_case(&c).ttft_ms.median;
    assert!(
        ((with - measured) / measured).abs() <= 0.02,
        "with the default: {with:.2} ms against {measured} ms"
    );
}

/// The KV pool of the gpt-oss-120b rows, against vLLM's own start-up logs on one H100.
/// The simulator's budget takes the weights as vLLM's Marlin MXFP4 path lays them out
/// (`memory::mxfp4_moe_padding`): that reproduces "Model loading took 65.9651 GiB" (vLLM
/// 0.10.1, Marlin, github.com/vllm-project/vllm/issues/23278) within 0.2%, where the
/// checkpoint's bytes were 7.9% short. vLLM 0.14.1 with the Triton MXFP4 backend logged 64.38
/// GiB (issues/33155); which backend the rows' vLLM 0.10.2 used is not stated, so this re-runs
/// the three GPUStack TP1 ShareGPT rows with the pool the Triton figure would leave and prints
/// the errors: a sensitivity, not part of the held-out figures.
#[test]
fn gpt_oss_kv_pool_with_the_weights_vllm_logs() {
    use llm_serving_calculator::core::calc::memory::{
        mxfp4_moe_layout, mxfp4_moe_padding, vllm_total_memory,
    };
    use llm_serving_calculator::core::calc::weights;
    const GIB: f64 = (1u64 << 30) as f64;
    let (cases, _) = cases();
    let m = parse_model_text(preset("openai__gpt-oss-120b").expect("preset").json()).expect("m");
    let cat = Catalog::builtin();
    let h100 = cat.get("h100-sxm").expect("gpu");
    let ckpt = weights::chosen(&m, None, 1).expect("weights").per_gpu;
    let ours = (ckpt + mxfp4_moe_padding(&m, 1, mxfp4_moe_layout(h100))).0 as f64;
    let marlin_log = 65.9651 * GIB;
    assert!(
        ((ours - marlin_log) / marlin_log).abs() < 0.002,
        "ours {:.3} GiB against the Marlin log's 65.9651",
        ours / GIB
    );
    assert!((vllm_total_memory(h100).0 as f64 / GIB - 79.22).abs() < 1e-6);
    let triton_log = 64.38 * GIB;
    for line in [21, 24, 28] {
        let mut c = cases
            .iter()
            .find(|c| c.line == line)
            .cloned()
            .expect("row mapped");
        let base = run_case(&c);
        let rep = Replica::new(&m, h100, &c.engine, &Efficiencies::default()).expect("replica");
        let b = &rep.resolved().budget;
        let kv = b.available_kv.0 as f64 + (ours - triton_log);
        let blocks = (kv / b.bytes_per_block.0 as f64).floor().max(1.0) as u64;
        c.engine.num_gpu_blocks_override = Some(blocks);
        let r = run_case(&c);
        let err = |stat: &str, v: f64| {
            c.measured
                .get(stat)
                .map_or(f64::NAN, |m| (v - m) / m * 100.0)
        };
        println!(
            "line {line}, weights {:.2} GiB (Marlin) → 64.38 (Triton log): KV {:.2} → {:.2} GiB, \
             blocks {} → {blocks}; median TTFT {:+.0}% → {:+.0}%, throughput {:+.0}% → {:+.0}%",
            ours / GIB,
            b.available_kv.0 as f64 / GIB,
            kv / GIB,
            base.engine.num_gpu_blocks,
            err("median_ttft", base.ttft_ms.median),
            err("median_ttft", r.ttft_ms.median),
            err("request_throughput", base.request_throughput),
            err("request_throughput", r.request_throughput),
        );
        assert!(blocks > base.engine.num_gpu_blocks);
        assert!(
            r.ttft_ms.median <= base.ttft_ms.median,
            "a larger pool queues less"
        );
    }
}

/// `FIT_MARLIN_HOPPER_MOE_COMPUTE` is the fit on its one row, CSV line 25: the factor whose
/// simulation gives the row's measured median TPOT, found by bisection in ln k, within 3% of
/// the constant; and the constant reproduces the row's median TPOT within 3%.
#[test]
fn marlin_hopper_moe_compute_is_the_fit_on_its_row() {
    use llm_serving_calculator::core::calc::perf::FIT_MARLIN_HOPPER_MOE_COMPUTE;
    let line = 25;
    assert!(FIT_ROWS.contains(&line));
    let (cases, _) = cases();
    let c = cases
        .into_iter()
        .find(|c| c.line == line)
        .expect("the fit row is mapped");
    let measured = *c.measured.get("median_tpot").expect("median TPOT");
    let tpot = |k: f64| run_case_with(&c, Some(k)).tpot_ms.median;
    // A lower factor makes the experts slower: TPOT falls as k rises.
    assert!(tpot(0.05) > measured && tpot(1.0) < measured);
    let fitted = bisect_marlin(tpot, measured);
    let with = tpot(FIT_MARLIN_HOPPER_MOE_COMPUTE);
    println!(
        "line {line}: measured median TPOT {measured} ms; fitted factor {fitted:.4} \
         (constant {FIT_MARLIN_HOPPER_MOE_COMPUTE}); with the constant {with:.2} ms"
    );
    assert!(
        ((fitted - FIT_MARLIN_HOPPER_MOE_COMPUTE) / FIT_MARLIN_HOPPER_MOE_COMPUTE).abs() <= 0.03,
        "fitted {fitted:.4} against the constant {FIT_MARLIN_HOPPER_MOE_COMPUTE}"
    );
    assert!(
        ((with - measured) / measured).abs() <= 0.03,
        "{with} vs {measured}"
    );
}

/// Where a ShareGPT burst's median TTFT falls in its run: `median TTFT / duration`, for the
/// held-out rows that send at least 500 ShareGPT prompts at once. Under overload the TTFT of a
/// request is when a seat or blocks free up for it, so this share says how the queue drains,
/// whatever the speed of the steps. Printed for the measured run and three length sources, all
/// scaled to the row's mean lengths: the built-in ShareGPT-like draws (log-normal, σ = 1: an
/// assumption), the dataset's own lengths as vLLM bench samples them ([`SHAREGPT_SAMPLE`]),
/// and every request at the mean. Then the held-out figures of the whole validation with the
/// dataset's lengths on every ShareGPT row. A sensitivity, not part of the asserted figures,
/// fitted to nothing. The checks are the mechanism's direction: with σ = 1 the short requests
/// leave first and free their seats early, so the queue drains fast at first and slowly later
/// (survivor bias) and the median request is admitted earlier in the run than with equal
/// lengths; and the dataset's lengths, whose upper tail is lighter (P99 output 772 tokens in
/// the sample against about 1,300 for σ = 1), put the median request nearer the measured
/// share than σ = 1 does.
#[test]
fn sharegpt_burst_median_ttft_share_of_the_run() {
    let (cases, skipped) = cases();
    let share = |ttft_ms: f64, n: f64, rps: f64| ttft_ms / 1000.0 / (n / rps);
    let (mut drawn, mut equal, mut off_drawn, mut off_sample) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for c in cases
        .iter()
        .filter(|c| c.saturation && !FIT_ROWS.contains(&c.line))
    {
        let Lengths::List { pairs } = &c.workload.lengths else {
            continue;
        };
        let (Some(&ttft), Some(&rps)) = (
            c.measured.get("median_ttft"),
            c.measured.get("request_throughput"),
        ) else {
            continue;
        };
        let (mi, mo) = list_means(pairs);
        let n = c.workload.num_requests;
        let with = |lengths: Lengths| {
            let mut v = c.clone();
            v.workload.lengths = lengths;
            run_case(&v)
        };
        let a = run_case(c);
        let d = with(dataset_sample_scaled(n, mi, mo));
        let b = with(Lengths::Fixed {
            input: mi.round() as u64,
            output: mo.round() as u64,
        });
        let n = n as f64;
        let sm = share(ttft, n, rps);
        let [sa, sd, sb] = [&a, &d, &b].map(|r| share(r.ttft_ms.median, n, r.request_throughput));
        let err = |v: f64, m: f64| (v - m) / m * 100.0;
        println!(
            "line {:3} {:38} median TTFT share: measured {sm:.2}, σ = 1 {sa:.2}, dataset {sd:.2}, \
             equal {sb:.2} | median TTFT {:+.0}% / {:+.0}% / {:+.0}%, throughput {:+.0}% / {:+.0}% \
             / {:+.0}%",
            c.line,
            c.label,
            err(a.ttft_ms.median, ttft),
            err(d.ttft_ms.median, ttft),
            err(b.ttft_ms.median, ttft),
            err(a.request_throughput, rps),
            err(d.request_throughput, rps),
            err(b.request_throughput, rps),
        );
        drawn.push(sa);
        equal.push(sb);
        off_drawn.push((sa - sm).abs());
        off_sample.push((sd - sm).abs());
    }
    assert!(drawn.len() >= 8, "{} ShareGPT burst rows", drawn.len());
    let (md, me) = (percentile(&mut drawn, 0.5), percentile(&mut equal, 0.5));
    let (od, os) = (
        percentile(&mut off_drawn, 0.5),
        percentile(&mut off_sample, 0.5),
    );
    println!(
        "median over the rows: share σ = 1 {md:.2}, equal lengths {me:.2}; distance to the \
         measured share σ = 1 {od:.3}, dataset {os:.3}"
    );
    assert!(
        me > md,
        "equal lengths should admit the median request later in the run: {me:.2} vs {md:.2}"
    );
    assert!(
        os < od,
        "the dataset's lengths should put the median request nearer the measured share"
    );
    println!("\nthe whole validation with the dataset's lengths on every ShareGPT row:");
    let sampled: Vec<Case> = cases.iter().cloned().map(with_dataset_lengths).collect();
    run_rows(&sampled, &skipped);
}

/// The statistics the validation asserts, with their targets (issue 17, item 8).
const TARGETS: &[(&str, f64)] = &[
    ("median_ttft", 0.20),
    ("p99_ttft", 0.30),
    ("median_tpot", 0.20),
    ("p99_tpot", 0.30),
    ("request_throughput", 0.20),
    ("saturation_rate", 0.15),
];

/// A cross-validation scheme: its name and the unit a row is left out with.
type Scheme<'a> = (&'static str, Box<dyn Fn(usize) -> String + 'a>);

/// One point of the cross-validation's grid: the engine terms a fit would choose.
#[derive(Clone, Copy, Debug)]
struct Terms {
    /// Time per step per request sampling beyond the first, µs.
    per_sequence_us: f64,
    /// Whether that time is divided by the TP degree.
    per_rank: bool,
    /// The Marlin-on-Hopper MoE compute factor.
    marlin: f64,
    /// The frontend path, ms.
    frontend_ms: f64,
    /// The dataset's own ShareGPT lengths instead of the σ = 1 draws.
    dataset_lengths: bool,
}

/// Signed relative error per (row, statistic) of every mapped row under `t`.
fn errors_under(cases: &[Case], t: Terms) -> Errors {
    let mut out = BTreeMap::new();
    for c0 in cases {
        let mut c = c0.clone();
        c.engine.frontend_overhead_ms = t.frontend_ms;
        if t.dataset_lengths {
            c = with_dataset_lengths(c);
        }
        let per_request = (t.per_sequence_us * 1e-6, t.per_rank);
        let r = run_case_under(&c, &Efficiencies::default(), Some(t.marlin), per_request);
        for (stat, _) in TARGETS {
            if let Some(&meas) = c.measured.get(stat) {
                out.insert((c.line, *stat), (predicted(stat, &r) - meas) / meas);
            }
        }
    }
    out
}

/// Signed relative errors by (CSV line, statistic).
type Errors = BTreeMap<(usize, &'static str), f64>;

/// Median |error| of `stat` over the rows `keep` lets in; NaN when there is none.
fn median_abs(errs: &Errors, stat: &str, keep: &dyn Fn(usize) -> bool) -> f64 {
    let mut v: Vec<f64> = errs
        .iter()
        .filter(|((line, s), _)| *s == stat && keep(*line))
        .map(|(_, e)| e.abs())
        .collect();
    percentile(&mut v, 0.5)
}

/// The fit's objective on the rows `keep` lets in: the sum over the asserted statistics of
/// median |error| / target (the validation's own criterion; a statistic without rows adds 0).
fn objective(errs: &Errors, keep: &dyn Fn(usize) -> bool) -> f64 {
    TARGETS
        .iter()
        .map(|(stat, target)| {
            let m = median_abs(errs, stat, keep);
            if m.is_nan() {
                0.0
            } else {
                m / target
            }
        })
        .sum()
}

/// The cross-validation's grid (144 points).
fn grid() -> Vec<Terms> {
    let mut grid = Vec::new();
    for per_sequence_us in [0.0, 20.0, 45.0, 85.0, 110.0] {
        for per_rank in [false, true] {
            if per_sequence_us == 0.0 && per_rank {
                continue;
            }
            for marlin in [0.274, 0.4, 0.6, 1.0] {
                for frontend_ms in [20.0, DEFAULT_FRONTEND_OVERHEAD_MS] {
                    for dataset_lengths in [false, true] {
                        grid.push(Terms {
                            per_sequence_us,
                            per_rank,
                            marlin,
                            frontend_ms,
                            dataset_lengths,
                        });
                    }
                }
            }
        }
    }
    grid
}

/// The V1 cost per running request measured outside the validation
/// (`tests/vllm_v1_concurrency.rs`: 39 µs), on the held-out rows of the asserted validation,
/// with the Marlin factor at 1 (line 25 cannot be fitted with it) and at its default.
fn print_v1_cost(cases: &[Case]) {
    println!("\nwith V1's measured 39 µs per request (held-out rows, fit rows left out):");
    for (marlin, dataset_lengths) in [(1.0, false), (0.274, false), (1.0, true), (0.274, true)] {
        let t = Terms {
            per_sequence_us: 39.0,
            per_rank: false,
            marlin,
            frontend_ms: DEFAULT_FRONTEND_OVERHEAD_MS,
            dataset_lengths,
        };
        let e = errors_under(cases, t);
        let mut line = format!("  Marlin {marlin}, dataset lengths {dataset_lengths}:");
        for (stat, _) in TARGETS {
            let m = median_abs(&e, stat, &|l| !FIT_ROWS.contains(&l));
            line.push_str(&format!(" {stat} {:.1}%", m * 100.0));
        }
        let l25 = e.get(&(25, "median_tpot")).copied().unwrap_or(f64::NAN);
        println!("{line}; line 25 median TPOT {:+.0}%", l25 * 100.0);
    }
}

/// Cross-validation of engine terms fitted on the serving rows themselves (a sensitivity,
/// not the asserted validation; `docs/history/SERVING_SIMULATOR.md`, "2026-12-04"). The simulator's
/// defaults fit two constants on one row each; here every term is chosen from a grid (a
/// per-request time per step, with or without division by the TP degree; the Marlin factor;
/// the frontend path; the length distribution of ShareGPT rows) by the validation's own
/// criterion on the training rows, and each held-out unit is predicted by the point its
/// training rows chose: leaving out one row, one setup (source, model, GPU, TP) or one
/// source's model on one GPU. Prints the held-out figures of each scheme and the best
/// point chosen by looking at all rows (which is not a validation), and the held-out figures
/// with the V1 cost per request measured outside the validation ([`print_v1_cost`]). Run it with
/// `cargo test --release --test serving_validation -- --ignored --nocapture cross_validated`
/// (about a minute). The check: every scheme predicts every row once.
#[test]
#[ignore = "an experiment of about a minute; its figures are in docs/history/SERVING_SIMULATOR.md"]
fn cross_validated_engine_terms() {
    let (cases, _) = cases();
    let grid = grid();
    let half = grid.len() / 2;
    let (a, b) = grid.split_at(half);
    let runs: Vec<_> = std::thread::scope(|s| {
        let h = s.spawn(|| {
            a.iter()
                .map(|&t| errors_under(&cases, t))
                .collect::<Vec<_>>()
        });
        let mut rest: Vec<_> = b.iter().map(|&t| errors_under(&cases, t)).collect();
        let mut all = h.join().expect("thread");
        all.append(&mut rest);
        all
    });
    let setup = |c: &Case| format!("{} {} {} tp{}", c.source, c.model, c.gpu, c.engine.tp);
    let page_model_gpu = |c: &Case| format!("{} {} {}", c.source, c.model, c.gpu);
    let by_line: BTreeMap<usize, &Case> = cases.iter().map(|c| (c.line, c)).collect();
    let schemes: [Scheme; 3] = [
        ("leave one row out", Box::new(|l: usize| l.to_string())),
        (
            "leave one setup out",
            Box::new(|l: usize| setup(by_line[&l])),
        ),
        (
            "leave one page-model-GPU out",
            Box::new(|l: usize| page_model_gpu(by_line[&l])),
        ),
    ];
    let all_keys: Vec<(usize, &'static str)> = runs[0].keys().copied().collect();
    for (name, unit) in &schemes {
        let units: std::collections::BTreeSet<String> =
            cases.iter().map(|c| unit(c.line)).collect();
        let mut held: Errors = BTreeMap::new();
        let mut chosen: BTreeMap<String, usize> = BTreeMap::new();
        for u in &units {
            let train = |l: usize| &unit(l) != u;
            let best = (0..runs.len())
                .min_by(|&i, &j| {
                    objective(&runs[i], &train).total_cmp(&objective(&runs[j], &train))
                })
                .expect("grid");
            *chosen.entry(format!("{:?}", grid[best])).or_default() += 1;
            if units.len() <= 20 {
                println!("  {name}: {u} -> {:?}", grid[best]);
            }
            for (k, e) in &runs[best] {
                if &unit(k.0) == u {
                    held.insert(*k, *e);
                }
            }
        }
        assert_eq!(
            held.len(),
            all_keys.len(),
            "{name}: every row predicted once"
        );
        println!("\n{name} ({} units):", units.len());
        for (stat, target) in TARGETS {
            let n = held.keys().filter(|(_, s)| s == stat).count();
            let m = median_abs(&held, stat, &|_| true);
            println!(
                "  {stat:20} {n:3} rows  median |err| {:6.2}%  target {:4.0}%  {}",
                m * 100.0,
                target * 100.0,
                if m <= *target { "met" } else { "not met" }
            );
        }
        for (point, n) in &chosen {
            println!("  chosen {n:3}x: {point}");
        }
    }
    print_v1_cost(&cases);
    let everything = |_: usize| true;
    let best = (0..runs.len())
        .min_by(|&i, &j| {
            objective(&runs[i], &everything).total_cmp(&objective(&runs[j], &everything))
        })
        .expect("grid");
    println!(
        "\nchosen by looking at every row (in-sample, not a validation): {:?}",
        grid[best]
    );
    for (stat, _) in TARGETS {
        let m = median_abs(&runs[best], stat, &everything);
        println!("  {stat:20} median |err| {:6.2}%", m * 100.0);
    }
}

/// The efficiencies fitted on vLLM V1's runs outside the validation
/// (`vllm_v1_concurrency.rs`, `efficiencies_fitted_on_the_v1_runs`: bandwidth 0.92, prefill
/// compute 0.66, 55 µs per running request) applied to every mapped row, with the
/// Marlin-on-Hopper factor refitted on its row (capped at 1), and the held-out figures printed:
/// does an engine-wide fit from one source carry over to the others? A sensitivity
/// (`docs/history/SERVING_SIMULATOR.md`, "2026-12-04"). The check: the fit row is refitted or
/// capped.
#[test]
#[ignore = "a sensitivity; its figures are in docs/history/SERVING_SIMULATOR.md"]
fn v1_fitted_efficiencies_on_the_held_out_rows() {
    let eff = Efficiencies {
        bandwidth: 0.92,
        compute_prefill: 0.66,
        ..Efficiencies::default()
    };
    let (cases, _) = cases();
    let run = |c: &Case, k: f64| run_case_under(c, &eff, Some(k), (55e-6, false));
    let fit_row = cases.iter().find(|c| c.line == 25).expect("line 25");
    let measured = fit_row.measured["median_tpot"];
    let tpot = |k: f64| run(fit_row, k).tpot_ms.median;
    let k = if tpot(1.0) > measured {
        1.0
    } else {
        bisect_marlin(tpot, measured)
    };
    let at_k = tpot(k) / measured - 1.0;
    assert!(
        k == 1.0 || at_k.abs() < 0.01,
        "factor {k}: line 25 {at_k:+.3}"
    );
    let mut errs: Errors = BTreeMap::new();
    for c in cases.iter().filter(|c| !FIT_ROWS.contains(&c.line)) {
        let r = run(c, k);
        for (stat, _) in TARGETS {
            if let Some(&m) = c.measured.get(stat) {
                errs.insert((c.line, *stat), (predicted(stat, &r) - m) / m);
            }
        }
    }
    println!(
        "Marlin factor {k:.3} (line 25 median TPOT {:+.0}%)",
        at_k * 100.0
    );
    for (stat, _) in TARGETS {
        let m = median_abs(&errs, stat, &|_| true);
        println!("  {stat:20} median |err| {:5.1}%", m * 100.0);
    }
}
