//! `llmcalc calibrate --bench FILE --config F --gpu ID [--tp N] [engine flags of simulate]
//! [--seed N] [--fit] [--json]`: reads what `vllm bench serve` reported (its text summary or its JSON
//! result file, `core::sim::parse_bench`), simulates the same setup (rate, concurrency cap,
//! burstiness, request count, lengths) on the given model, GPU and engine flags, and shows
//! every measured statistic beside the predicted one with the relative error.
//!
//! JSON: `setup` (what was read), `comparisons` (`key`, `measured`, `predicted`,
//! `relative_error`, vLLM's keys), `predicted` (the whole simulated result, as `simulate
//! --json`). A file in neither format exits 2 with one sentence saying what is expected.
//!
//! `--fit` also fits the efficiencies to the benchmark (`core::sim::fit_bench_from`: the decode
//! efficiency to its TPOT, the prefill one to its TTFT) and adds `fitted` to the JSON:
//! `efficiencies` (every field after the fit), `knobs` (`name`, `statistic`, `before`,
//! `after`, `at_bound`), `errors` (per statistic: `measured`, `relative_error_before`,
//! `relative_error_after`), `simulations`, and `url_params` (the link parameters that
//! reproduce the fit in the app). A benchmark with no TPOT/ITL or TTFT exits 2 with a
//! sentence. Without `--fit` the output is unchanged.
//!
//! `--eff e_bw=…,e_cp=…` (the `url_params` of an earlier fit, `cli/eff.rs`) sets the
//! efficiencies the comparison uses and the fit starts from; `--frontend-overhead-ms` the
//! server's frontend path (as `simulate`).

use super::args::{read_file, required};
use super::opts::CalibrateArgs;
use super::simulate::{engine, notes_text, num, result_json};
use super::{write_json, write_text, CliError};
use crate::core::base::{f64_any_text, f64_any_value, tr, Lang};
use crate::core::hardware::Catalog;
use crate::core::model::parse_model_text;
use crate::core::scenario::ViewInputs;
use crate::core::sim::{
    fit_bench_from, parse_bench, Budget, Comparison, FitResult, Lengths, Replica,
};
use serde_json::{json, Value};
use std::io::Write;

/// Runs `llmcalc calibrate`.
pub fn run(args: &CalibrateArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let bench = parse_bench(&read_file("bench", args.bench.as_deref())?)?;
    let model = parse_model_text(&read_file("config", args.config.as_deref())?)?;
    let gpu = Catalog::builtin().get(required("gpu", args.gpu.as_deref())?)?;
    let mut e = engine(&args.engine, args.tp, !args.eff.eff.is_empty())?;
    if args.fit {
        // The fit adjusts the roofline's efficiencies: compare on that model.
        e = crate::core::sim::roofline(&e);
    }
    let seed = args.load.seed;
    let wl = bench.workload(seed);
    let eff = super::eff::efficiencies(&args.eff)?;
    let mut rep = Replica::new(&model, gpu, &e, &eff)?;
    let r = rep.run(&wl, None, Budget::default())?;
    let cmp = bench.compare(&r);
    let fit = if args.fit {
        Some(fit_bench_from(&model, gpu, &e, &bench, &eff, seed, &r)?)
    } else {
        None
    };
    let lengths = match &bench.lengths {
        Lengths::Fixed { input, output } => format!("fixed {input} in / {output} out (the means)"),
        Lengths::List { pairs } => format!("{} per-request pairs", pairs.len()),
        _ => String::new(),
    };
    if args.json {
        let mut v = json!({
            "setup": {
                "request_rate": f64_any_value(bench.request_rate),
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
        if let (Some(f), Some(obj)) = (&fit, v.as_object_mut()) {
            obj.insert("fitted".into(), fitted_json(f));
        }
        return write_json(out, &v);
    }
    let mut text = render(
        &bench.request_rate,
        bench.max_concurrency,
        &lengths,
        bench.num_prompts,
        &cmp,
    );
    text.push_str(&notes_text(&r.notes));
    if let Some(f) = &fit {
        text.push_str(&render_fit(f));
    }
    write_text(out, &text)
}

/// The link parameters of the fitted efficiencies (those that differ from the defaults).
fn url_params(f: &FitResult) -> String {
    let v = ViewInputs {
        eff: f.efficiencies,
        ..ViewInputs::default()
    };
    v.query_parts().join("&")
}

/// Per statistic: the relative error before and after the fit.
fn error_pairs(f: &FitResult) -> Vec<(&Comparison, f64)> {
    f.before
        .iter()
        .filter_map(|b| {
            let a = f.after.iter().find(|a| a.key == b.key)?;
            Some((b, a.relative_error))
        })
        .collect()
}

fn fitted_json(f: &FitResult) -> Value {
    json!({
        "efficiencies": serde_json::to_value(f.efficiencies).unwrap_or(Value::Null),
        "knobs": f.knobs.iter().map(|k| json!({
            "name": k.knob.field(),
            "statistic": k.statistic,
            "before": num(k.before),
            "after": num(k.after),
            "at_bound": k.at_bound,
        })).collect::<Vec<Value>>(),
        "errors": error_pairs(f).into_iter().map(|(b, after)| json!({
            "key": b.key,
            "measured": num(b.measured),
            "relative_error_before": num(b.relative_error),
            "relative_error_after": num(after),
        })).collect::<Vec<Value>>(),
        "simulations": f.simulations,
        "ttft_fitted": !f.ttft_not_fitted,
        "url_params": url_params(f),
    })
}

fn render_fit(f: &FitResult) -> String {
    let mut s = format!("\nfitted efficiencies ({} simulations):\n", f.simulations);
    for k in &f.knobs {
        s.push_str(&format!(
            "  {:<20} {:>10.4} -> {:<10.4} to {}{}\n",
            k.knob.field(),
            k.before,
            k.after,
            k.statistic,
            if k.at_bound { " (at its bound)" } else { "" }
        ));
    }
    s.push_str(&format!(
        "{:<26} {:>14} {:>8} {:>8}\n",
        "statistic", "measured", "before", "after"
    ));
    for (b, after) in error_pairs(f) {
        s.push_str(&format!(
            "{:<26} {:>14.2} {:>+7.0}% {:>+7.0}%\n",
            b.key,
            b.measured,
            b.relative_error * 100.0,
            after * 100.0
        ));
    }
    if f.ttft_not_fitted {
        s.push_str(&format!("{}\n", tr(Lang::En, "bb_ttft_not_fitted")));
    }
    s.push_str(&format!("link parameters: {}\n", url_params(f)));
    s
}

fn render(rate: &f64, conc: Option<u64>, lengths: &str, n: u64, cmp: &[Comparison]) -> String {
    let mut s = format!(
        "setup read: rate {}, max concurrency {}, {n} requests, lengths {lengths}\n",
        f64_any_text(*rate).map_or_else(|| format!("{rate}"), String::from),
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
