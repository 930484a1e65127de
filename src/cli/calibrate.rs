//! `llmcalc calibrate --bench FILE --config F --gpu ID [--tp N] [engine flags of simulate]
//! [--seed N] [--json]`: reads what `vllm bench serve` reported (its text summary or its JSON
//! result file, `core::sim::parse_bench`), simulates the same setup (rate, concurrency cap,
//! burstiness, request count, lengths) on the given model, GPU and engine flags, and shows
//! every measured statistic beside the predicted one with the relative error.
//!
//! JSON: `setup` (what was read), `comparisons` (`key`, `measured`, `predicted`,
//! `relative_error`, vLLM's keys), `predicted` (the whole simulated result, as `simulate
//! --json`). A file in neither format exits 2 with one sentence saying what is expected.

use super::simulate::{engine, num, result_json};
use super::{write_json, write_text, Args, CliError};
use crate::core::calc::Efficiencies;
use crate::core::hardware::Catalog;
use crate::core::model::parse_model_text;
use crate::core::sim::{parse_bench, Budget, Comparison, Lengths, Replica};
use serde_json::{json, Value};
use std::io::Write;

/// Runs `llmcalc calibrate`.
pub fn run(args: &Args, out: &mut dyn Write) -> Result<(), CliError> {
    let bench = parse_bench(&args.read_file("bench")?)?;
    let model = parse_model_text(&args.read_file("config")?)?;
    let gpu = Catalog::builtin().get(args.require("gpu")?)?;
    let e = engine(args)?;
    let seed = args.u64_opt("seed")?.unwrap_or(0);
    let wl = bench.workload(seed);
    let mut rep = Replica::new(&model, gpu, &e, &Efficiencies::default())?;
    let r = rep.run(&wl, None, Budget::default())?;
    let cmp = bench.compare(&r);
    let lengths = match &bench.lengths {
        Lengths::Fixed { input, output } => format!("fixed {input} in / {output} out (the means)"),
        Lengths::List { pairs } => format!("{} per-request pairs", pairs.len()),
        _ => String::new(),
    };
    if args.flag("json") {
        let v = json!({
            "setup": {
                "request_rate": if bench.request_rate.is_finite() { num(bench.request_rate) } else { json!("inf") },
                "max_concurrency": bench.max_concurrency,
                "burstiness": bench.burstiness,
                "num_prompts": bench.num_prompts,
                "lengths": lengths,
                "model_id": bench.model,
            },
            "comparisons": cmp.iter().map(|c| json!({
                "key": c.key,
                "measured": num(c.measured),
                "predicted": num(c.predicted),
                "relative_error": num(c.relative_error),
            })).collect::<Vec<Value>>(),
            "predicted": result_json(&r, bench.request_rate, bench.max_concurrency),
        });
        return write_json(out, &v);
    }
    write_text(
        out,
        &render(
            &bench.request_rate,
            bench.max_concurrency,
            &lengths,
            bench.num_prompts,
            &cmp,
        ),
    )
}

fn render(rate: &f64, conc: Option<u64>, lengths: &str, n: u64, cmp: &[Comparison]) -> String {
    let mut s = format!(
        "setup read: rate {}, max concurrency {}, {n} requests, lengths {lengths}\n",
        if rate.is_finite() {
            format!("{rate}")
        } else {
            "inf".into()
        },
        conc.map_or("none".into(), |c| c.to_string()),
    );
    s.push_str(&format!(
        "{:<26} {:>14} {:>14} {:>8}\n",
        "statistic", "measured", "predicted", "error"
    ));
    for c in cmp {
        s.push_str(&format!(
            "{:<26} {:>14.2} {:>14.2} {:>+7.0}%\n",
            c.key,
            c.measured,
            c.predicted,
            c.relative_error * 100.0
        ));
    }
    s
}
