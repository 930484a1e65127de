//! Helpers shared by the integration tests: each test file that needs them says `mod common;`
//! (a folder, so that Cargo does not build it as a test of its own).
// Every test crate uses only some of these.
#![allow(dead_code)]

pub mod disagg_e2e;
pub mod e2e;
pub mod engines_e2e;
pub mod english;
pub mod source_files;
pub mod text;

use llm_serving_calculator::cli;
use llm_serving_calculator::core::base::csv;
use llm_serving_calculator::core::calc::Efficiencies;
use llm_serving_calculator::core::hardware::{Accelerator, Catalog};
use llm_serving_calculator::core::model::{parse_model_text, preset, ModelDesc, ParamBreakdown};
use llm_serving_calculator::core::sim::{EngineConfig, Replica};
use std::collections::BTreeMap;

/// Qwen3-8B from its preset config.
pub fn qwen8b() -> ModelDesc {
    parse_model_text(preset("Qwen__Qwen3-8B").expect("preset").json()).expect("parses")
}

/// A built-in accelerator by id.
#[track_caller]
pub fn gpu(id: &str) -> &'static Accelerator {
    Catalog::builtin()
        .get(id)
        .unwrap_or_else(|e| panic!("{id}: {e}"))
}

/// The H100 SXM from the built-in catalog.
pub fn h100() -> &'static Accelerator {
    gpu("h100-sxm")
}

/// Qwen3-8B on one H100 with vLLM's defaults and the fitted efficiencies.
pub fn qwen8b_replica() -> Replica {
    Replica::new(
        &qwen8b(),
        h100(),
        &EngineConfig::default(),
        &Efficiencies::default(),
    )
    .expect("replica")
}

/// Runs the CLI in-process: (exit status, stdout, stderr).
pub fn run_cli(args: &[&str]) -> (i32, String, String) {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = cli::run(&args, &mut out, &mut err);
    (
        code,
        String::from_utf8_lossy(&out).into_owned(),
        String::from_utf8_lossy(&err).into_owned(),
    )
}

/// The planner's traffic and targets as CLI flags: `rate` requests/s at a ×4 peak, 1024 input
/// and 256 output tokens, TTFT 2000 ms and TPOT `tpot` ms.
pub fn traffic<'a>(rate: &'a str, tpot: &'a str) -> Vec<&'a str> {
    vec![
        "--rate",
        rate,
        "--peak-multiplier",
        "4",
        "--input-len",
        "1024",
        "--output-len",
        "256",
        "--ttft-ms",
        "2000",
        "--tpot-ms",
        tpot,
    ]
}

/// The Qwen3-8B preset's config file, as the CLI tests pass it.
pub const QWEN3_8B: &str = "data/presets/Qwen__Qwen3-8B.json";

/// The CLI's words for `command` on `config` and `gpu` (`perf --config … --gpu …`), then `rest`.
pub fn on<'a>(command: &'a str, config: &'a str, gpu: &'a str, rest: &[&'a str]) -> Vec<&'a str> {
    [&[command, "--config", config, "--gpu", gpu][..], rest].concat()
}

/// `perf` on `config` and `gpu` at a batch and input/output lengths (`--batch … --input-len …
/// --output-len …`), then `rest`.
pub fn perf<'a>(
    config: &'a str,
    gpu: &'a str,
    [batch, input, output]: [&'a str; 3],
    rest: &[&'a str],
) -> Vec<&'a str> {
    let sizes = [
        "--batch",
        batch,
        "--input-len",
        input,
        "--output-len",
        output,
    ];
    on("perf", config, gpu, &[&sizes[..], rest].concat())
}

/// `calibrate` of the `vllm bench serve` result `bench` against `config` on `gpu`, then `rest`.
pub fn calibrate<'a>(
    bench: &'a str,
    config: &'a str,
    gpu: &'a str,
    rest: &[&'a str],
) -> Vec<&'a str> {
    let head = [
        "calibrate",
        "--bench",
        bench,
        "--config",
        config,
        "--gpu",
        gpu,
    ];
    [&head[..], rest].concat()
}

/// The breakdown's invariant (`ParamBreakdown::check_sums`: components add up to the total,
/// sub-totals inside it).
pub fn consistent(p: &ParamBreakdown) -> Result<(), String> {
    p.check_sums()
}

/// Calls `f` with each record of a CSV text after its header: its 1-based line and its fields
/// by column name.
pub fn for_each_csv_row(text: &str, mut f: impl FnMut(usize, &BTreeMap<&str, &str>)) {
    let recs = csv::parse(text).expect("csv parses");
    let header = &recs.first().expect("header").fields;
    for r in recs.iter().skip(1) {
        let fields: BTreeMap<&str, &str> = header
            .iter()
            .map(String::as_str)
            .zip(r.fields.iter().map(String::as_str))
            .collect();
        f(r.line, &fields);
    }
}

/// The `q` quantile (0–1) of `v` (sorted in place), numpy's convention: the core's `quantile`.
pub fn percentile(v: &mut [f64], q: f64) -> f64 {
    llm_serving_calculator::core::base::quantile(v, q)
}

/// Asserts that a median signed error stays within its achieved level (the level rounded up
/// from a run), naming `what` when it does not.
pub fn assert_within_level(what: &str, err: f64, level: f64) {
    assert!(
        err.abs() <= level,
        "{what}: median error {:+.1}% beyond {:.0}%",
        err * 100.0,
        level * 100.0
    );
}

/// The file of `data/i18n/<module>` (`shell` or `late`) that holds the row `key`, as
/// `data/i18n/<module>/<file>` (`…/?` when none does), for failure messages.
pub fn i18n_file_of(module: &str, key: &str) -> String {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("data/i18n")
        .join(module);
    let header = format!("[{key}]");
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .collect();
    files.sort();
    files
        .into_iter()
        .find(|p| std::fs::read_to_string(p).is_ok_and(|t| t.lines().any(|l| l.trim() == header)))
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .map_or_else(
            || format!("data/i18n/{module}/?"),
            |n| format!("data/i18n/{module}/{n}"),
        )
}

/// `f` of each item, in the items' order, computed on every core: each thread takes the next
/// item not yet taken until none is left (the simulations of the validation tests are
/// independent).
pub fn in_parallel<R: Sync, O: Send>(items: &[R], f: &(dyn Fn(&R) -> O + Sync)) -> Vec<O> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let next = AtomicUsize::new(0);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut done: Vec<(usize, O)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(r) = items.get(i) else { break mine };
                        mine.push((i, f(r)));
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().expect("a worker thread panicked"))
            .collect()
    });
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, o)| o).collect()
}

/// A simulation of `n` requests arriving as `arrival` with `lengths`, everything else default.
pub fn sim_config(
    arrival: llm_serving_calculator::core::sim::Arrival,
    lengths: llm_serving_calculator::core::sim::Lengths,
    n: u64,
) -> llm_serving_calculator::core::sim::SimConfig {
    use llm_serving_calculator::core::sim::{SimConfig, WorkloadSpec};
    SimConfig {
        workload: WorkloadSpec {
            arrival,
            lengths,
            num_requests: n,
            ..WorkloadSpec::default()
        },
        ..SimConfig::default()
    }
}
