//! `llmcalc perf --config FILE --gpu ID [--tp N] --batch B --input-len I --output-len O
//! [--weights-dtype D] [--kv-dtype D] [--context mean|end] [--price USD] [--compute-eff F]
//! [--bandwidth-eff F] [--tp-sweep] [--json]`: TTFT, time per output token, throughput and
//! end-to-end latency from the performance model (`core::perf`), with the calibrated range of
//! each.
//!
//! With `--tp-sweep` it prints one row per tensor-parallel degree instead (`core::perf::
//! tp_sweep`: 1 up to the GPUs of one node that split the heads evenly, plus `--tp`, which is
//! marked `chosen`); `--json` then prints an array of rows with the fixed keys of [`tp_row_json`].
//!
//! `llmcalc perf --accuracy [--json]` prints the calibration report instead: predicted against
//! measured for every mapped benchmark row, and the error per metric on training and held-out
//! rows. Bad input exits 2 with one sentence.

use super::args::{read_file, required};
use super::opts::PerfArgs;
use super::{write_json, write_serialized, write_text, CliError};
use crate::core::base::fmt_sig;
use crate::core::base::Dtype;
use crate::core::base::Lang;
use crate::core::calc::{accuracy_table, range_for, render_stats, Metric};
use crate::core::calc::{evaluate, tp_sweep, PassTime, PerfNote, PerfReport, TpRow, Workload};
use crate::core::hardware::Catalog;
use crate::core::model::parse_model_text;
use serde_json::{json, Value};
use std::io::Write;

/// Runs the command.
pub fn run(args: &PerfArgs, out: &mut dyn Write) -> Result<(), CliError> {
    if args.accuracy {
        return accuracy(args.json, out);
    }
    let t = &args.target;
    let text = read_file("config", t.config.as_deref())?;
    let model = parse_model_text(&text)?;
    let gpu = Catalog::builtin().get(required("gpu", t.gpu.as_deref())?)?;
    let needed = |flag: &str, v: Option<u64>| {
        v.ok_or_else(|| CliError::Usage(format!("--{flag} is required")))
    };
    let batch = needed("batch", args.batch)?;
    let input_len = needed("input-len", args.input_len)?;
    let output_len = needed("output-len", args.output_len)?;
    let mut wl = Workload::new(batch, input_len, output_len, t.tp);
    wl.weights_dtype = t
        .dtypes
        .weights_dtype
        .as_deref()
        .map(Dtype::parse)
        .transpose()?;
    wl.kv_dtype = t.dtypes.kv_dtype.as_deref().map(Dtype::parse).transpose()?;
    wl.context = args.context;
    let mut eff = super::eff::efficiencies(&args.eff)?;
    if let Some(c) = args.compute_eff {
        eff.compute_prefill = c;
        eff.compute_decode = c;
    }
    if let Some(b) = args.bandwidth_eff {
        eff.bandwidth = b;
    }
    let price = args.price;
    if args.tp_sweep {
        let rows = tp_sweep(&model, gpu, &wl, &eff, price);
        if args.json {
            let v: Vec<Value> = rows.iter().map(|r| tp_row_json(&gpu.id, r)).collect();
            return write_json(out, &Value::Array(v));
        }
        let text = render_sweep(&rows, &model.name, &gpu.id, wl.batch);
        return write_text(out, &text);
    }
    let r = evaluate(&model, gpu, &wl, &eff, price)?;
    if args.json {
        return write_json(out, &to_json(&r));
    }
    let text = render(&r, &model.name);
    write_text(out, &text)
}

fn pass_json(p: &PassTime) -> Value {
    json!({
        "total_ms": p.total.ms(),
        "bound": p.bound,
        "compute_bound_ms": p.compute_bound.ms(),
        "memory_bound_ms": p.memory_bound.ms(),
        "comm_ms": p.comm.ms(),
        "overhead_ms": p.overhead.ms(),
        "flops_per_gpu": p.flops.0,
        "bytes_per_gpu": p.bytes,
    })
}

fn range_json(m: Metric, v: f64) -> Value {
    let (lo, hi) = range_for(m, v);
    json!([lo, hi])
}

/// The report as the CLI's JSON object (times in ms, rates per second, SI units).
pub fn to_json(r: &PerfReport) -> Value {
    json!({
        "gpu": r.gpu,
        "tp": r.tp,
        "batch": r.batch,
        "ttft_ms": r.ttft.ms(),
        "tpot_ms": r.tpot.ms(),
        "output_tokens_per_s": r.output_tokens_per_s,
        "output_tokens_per_s_per_user": r.output_tokens_per_s_per_user,
        "e2e_latency_ms": r.e2e.ms(),
        "ranges_p10_p90": {
            "ttft_ms": range_json(Metric::Ttft, r.ttft.ms()),
            "tpot_ms": range_json(Metric::Tpot, r.tpot.ms()),
            "e2e_latency_ms": range_json(Metric::E2e, r.e2e.ms()),
            "output_tokens_per_s": range_json(Metric::Throughput, r.output_tokens_per_s),
        },
        "prefill": pass_json(&r.prefill),
        "decode": pass_json(&r.decode),
        "decode_context_tokens": r.decode_context,
        "compute_dtype": r.compute_dtype,
        "efficiencies": r.efficiencies,
        "max_batch": r.max_batch,
        "fits": r.fits,
        "usd_per_million_output_tokens": r.usd_per_million_tokens,
        "usd_per_request": r.usd_per_request,
        "tokens_per_joule_at_tdp": r.tokens_per_joule_at_tdp,
        "tokens_per_joule_note": "from TDP: the board's maximum power, so energy per token is an upper-bound estimate",
        "notes": notes_en(&r.notes),
        "note_codes": note_codes(&r.notes),
        "derivations": r.derivations,
    })
}

/// Notes as English sentences (the stable JSON form).
fn notes_en(n: &[PerfNote]) -> Vec<String> {
    n.iter().map(|n| n.message(Lang::En)).collect()
}

/// The notes' stable codes, in the same order.
fn note_codes(n: &[PerfNote]) -> Vec<&'static str> {
    n.iter().map(PerfNote::code).collect()
}

/// One row of `--tp-sweep --json`: always the keys `gpu`, `tp`, `chosen`, `weights_fit`,
/// `max_batch`, `batch`, `fits`, `ttft_ms`, `tpot_ms`, `output_tokens_per_s_per_user`,
/// `output_tokens_per_s`, `e2e_latency_ms`, `usd_per_million_output_tokens`, `notes`,
/// `note_codes`, `error`. The timings are `null` when the row has an error or the weights do
/// not fit at that degree; `error` is `null` or one sentence.
pub fn tp_row_json(gpu: &str, row: &TpRow) -> Value {
    let ok = row.result.as_ref().ok();
    let timed = ok.filter(|r| r.max_batch > 0);
    json!({
        "gpu": gpu,
        "tp": row.tp,
        "chosen": row.chosen,
        "weights_fit": row.model_fits(),
        "max_batch": ok.map(|r| r.max_batch),
        "batch": ok.map(|r| r.batch),
        "fits": ok.is_some_and(|r| r.fits),
        "ttft_ms": timed.map(|r| r.ttft.ms()),
        "tpot_ms": timed.map(|r| r.tpot.ms()),
        "output_tokens_per_s_per_user": timed.map(|r| r.output_tokens_per_s_per_user),
        "output_tokens_per_s": timed.map(|r| r.output_tokens_per_s),
        "e2e_latency_ms": timed.map(|r| r.e2e.ms()),
        "usd_per_million_output_tokens": timed.and_then(|r| r.usd_per_million_tokens),
        "notes": ok.map(|r| notes_en(&r.notes)).unwrap_or_default(),
        "note_codes": ok.map(|r| note_codes(&r.notes)).unwrap_or_default(),
        "error": row.result.as_ref().err().map(ToString::to_string),
    })
}

fn render_sweep(rows: &[TpRow], model: &str, gpu: &str, batch: u64) -> String {
    let mut s = format!("{model} on {gpu}, batch {batch}, by tensor-parallel degree\n");
    s.push_str(&format!(
        "  {:>4} {:>9} {:>11} {:>11} {:>13} {:>13} {:>11} {:>11}\n",
        "TP", "max batch", "TTFT ms", "TPOT ms", "tok/s/user", "tok/s total", "e2e ms", "$/M tok"
    ));
    let mut notes: Vec<String> = Vec::new();
    for row in rows {
        let mark = if row.chosen { "*" } else { " " };
        match &row.result {
            Err(e) => s.push_str(&format!("{mark}{:>4}  {e}\n", row.tp)),
            Ok(r) if r.max_batch == 0 => s.push_str(&format!(
                "{mark}{:>4} {:>9}  the weights do not fit\n",
                row.tp, 0
            )),
            Ok(r) => {
                s.push_str(&format!(
                    "{mark}{:>4} {:>9} {:>11} {:>11} {:>13} {:>13} {:>11} {:>11}{}\n",
                    row.tp,
                    r.max_batch,
                    fmt_sig(r.ttft.ms()),
                    fmt_sig(r.tpot.ms()),
                    fmt_sig(r.output_tokens_per_s_per_user),
                    fmt_sig(r.output_tokens_per_s),
                    fmt_sig(r.e2e.ms()),
                    r.usd_per_million_tokens.map_or("-".into(), fmt_sig),
                    if r.fits { "" } else { "  (batch does not fit)" }
                ));
            }
        }
        for n in row.result.iter().flat_map(|r| &r.notes) {
            if matches!(n, PerfNote::BatchDoesNotFit { .. }) {
                continue;
            }
            let m = n.message(Lang::En);
            if !notes.contains(&m) {
                notes.push(m);
            }
        }
    }
    s.push_str("  (* = the --tp degree)\n");
    for n in notes {
        s.push_str(&format!("  note: {n}\n"));
    }
    s
}

fn render(r: &PerfReport, model: &str) -> String {
    let rng = |m: Metric, v: f64| {
        let (lo, hi) = range_for(m, v);
        format!("(likely {}–{})", fmt_sig(lo), fmt_sig(hi))
    };
    let mut s = format!("{model} on {} × TP {}, batch {}\n", r.gpu, r.tp, r.batch);
    s.push_str(&format!(
        "  TTFT            {:>10} ms  {}  [{:?}-bound]\n",
        fmt_sig(r.ttft.ms()),
        rng(Metric::Ttft, r.ttft.ms()),
        r.prefill.bound
    ));
    s.push_str(&format!(
        "  time/out token  {:>10} ms  {}  [{:?}-bound, context {}]\n",
        fmt_sig(r.tpot.ms()),
        rng(Metric::Tpot, r.tpot.ms()),
        r.decode.bound,
        r.decode_context
    ));
    s.push_str(&format!(
        "  e2e latency     {:>10} ms  {}\n",
        fmt_sig(r.e2e.ms()),
        rng(Metric::E2e, r.e2e.ms())
    ));
    s.push_str(&format!(
        "  output tokens/s {:>10} total, {} per user\n",
        fmt_sig(r.output_tokens_per_s),
        fmt_sig(r.output_tokens_per_s_per_user)
    ));
    s.push_str(&format!(
        "  memory allows   {:>10} sequences{}\n",
        r.max_batch,
        if r.fits {
            ""
        } else {
            " (this batch does not fit)"
        }
    ));
    if let Some(c) = r.usd_per_million_tokens {
        s.push_str(&format!(
            "  cost            {:>10} $ per million output tokens\n",
            fmt_sig(c)
        ));
    }
    if let Some(t) = r.tokens_per_joule_at_tdp {
        s.push_str(&format!(
            "  energy          {:>10} tokens/J at TDP (upper-bound power)\n",
            fmt_sig(t)
        ));
    }
    let e = &r.efficiencies;
    s.push_str(&format!(
        "  efficiencies    compute {}/{} (prefill/decode), bandwidth {}, overhead {} ms/step, {} ms/prefill, compute at {}\n",
        e.compute_prefill,
        e.compute_decode,
        e.bandwidth,
        fmt_sig(e.step_overhead_s * 1e3),
        fmt_sig(e.prefill_overhead_s * 1e3),
        r.compute_dtype
    ));
    for n in &r.notes {
        s.push_str(&format!("  note: {}\n", n.message(Lang::En)));
    }
    s
}

fn accuracy(json: bool, out: &mut dyn Write) -> Result<(), CliError> {
    let r = accuracy_table();
    if json {
        return write_serialized(out, &r);
    }
    let mapped = r.rows.iter().filter(|a| !a.row.derived).count();
    let mut s = format!(
        "calibration: {} rows in data/perf_calibration.csv, {mapped} mapped, {} skipped\n",
        r.total_rows,
        r.skipped.len()
    );
    s.push_str(&render_stats(&r));
    write_text(out, &s)
}
