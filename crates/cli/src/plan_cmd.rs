//! `llmcalc plan --config FILE --gpu ID [--gpu ID …] --rate R [--peak-multiplier M]
//! (--input-len I --output-len O | --buckets I:O:SHARE,…) --ttft-ms T --tpot-ms P
//! [--gpus-per-node N] [--price USD | --price ID=USD …] [--weights-dtype D] [--kv-dtype D]
//! [--curve N] [--json]`: GPUs and replicas for a request rate and its peak (`core::capacity`).
//!
//! JSON: an array with one entry per (GPU, TP) option, the best first, each loser with its
//! `reason`, and `latency_lower_bound` (`{"kind": "no_compute_peak", "dtype"}` or `null`) when
//! its TTFT and TPOT are only lower bounds: such options rank after those timed in full, and a
//! best option that is one is flagged in the text output and the plan's notes. `--curve N` prints the cost-against-load series instead (N rates from 0 to 2 ×
//! peak). Impossible targets or inputs exit 2 with one sentence.
//!
//! `--simulate [--router round-robin|least-loaded] [--num-requests N] [--seed N]
//! [--burstiness B] [--max-num-seqs S] [--max-num-batched-tokens T] [--block-size 16]
//! [--gpu-memory-utilization 0.9] [--max-model-len L] [--prefix-hit F]` (the engine flags as
//! in `simulate`) re-sizes the best option's replicas on simulated P99s (`core::sim::sizing`:
//! a fleet behind the router, the smallest count meeting P99 TTFT and P99 TPOT, searched from
//! the Little's-law count). The JSON's best option (the first entry) then carries a
//! `simulated` object: `{"gpu", "tp", "router", "targets": {"p99_ttft_ms", "p99_tpot_ms"},
//! "num_requests" (asked), "seed", "average": S, "peak": S, "notes": [sentences]}`, each `S`
//! being `{"rate", "num_requests" (of each run at that rate: raised so that the arrivals span
//! 60 s, `present::views::planner_sim::run_requests`), "analytic_replicas", "replicas" (null when capped), "capped" (null or
//! {"kind": "replicas"|"runs", "max"}), "partial", "at_replicas": T, "one_fewer": T, "tried":
//! [T]}` and each `T` `{"replicas", "p99_ttft_ms", "p99_tpot_ms", "goodput", "completed",
//! "partial", "meets_targets"}` (or null). The text output adds one line per rate. Without
//! `--simulate` the output is as before.
//!
//! `llmcalc plan --largest --family F --gpu ID … --rate R … --ttft-ms T --tpot-ms P [--json]`
//! (no `--config`): "largest model that meets the target" over the sizes of a family (`qwen3`,
//! `llama3`, `qwen2.5`, `llama2`, `qwen3-moe`, `mixtral`, `gpt-oss`) on the same candidates,
//! traffic and targets. JSON: `{"family", "largest", "targets": {"ttft_ms", "tpot_ms"},
//! "models": [{"model", "params_total", "params_active", "fits", "meets_targets", "why_not",
//! "best"}]}`, largest model first, `best` an option object as above (or null).

use super::args::{read_file, required, short};
use super::opts::PlanArgs;
use super::simulate::num;
use super::{write_json, write_serialized, write_text, CliError};
use crate::core::base::fmt_sig;
use crate::core::base::Dtype;
use crate::core::base::Lang;
use crate::core::calc::{
    cost_curve, largest_in_family, plan, Bucket, Candidate, Family, LargestReport, PerfTiming,
    Plan, PlanInputs, PlanOption, Targets, Traffic,
};
use crate::core::hardware::Catalog;
use crate::core::model::{parse_model_text, ModelDesc};
use crate::core::present::{simulated_plan, SimPlanSettings, SimulatedPlan};
use crate::core::sim::{Budget, FleetSizing, FleetTails, Router};
use serde_json::{json, Value};
use std::io::Write;

fn required_f64(k: &str, v: Option<f64>) -> Result<f64, CliError> {
    v.ok_or_else(|| CliError::Usage(format!("--{k} is required")))
}

/// `I:O:SHARE,I:O:SHARE` → buckets.
fn parse_buckets(s: &str) -> Result<Vec<Bucket>, CliError> {
    let bad = || {
        CliError::Usage(format!(
            "--buckets must look like 1024:256:0.7,4096:512:0.3, not \"{}\"",
            short(s)
        ))
    };
    s.split(',')
        .map(|part| {
            let f: Vec<&str> = part.trim().split(':').collect();
            let [i, o, sh] = f.as_slice() else {
                return Err(bad());
            };
            let input_len = i.trim().parse::<u64>().map_err(|_| bad())?;
            let output_len = o.trim().parse::<u64>().map_err(|_| bad())?;
            let share = sh.trim().parse::<f64>().map_err(|_| bad())?;
            Ok(Bucket {
                input_len,
                output_len,
                share,
            })
        })
        .collect()
}

/// The rate, accepting zero and negative numbers so the core can explain why they are refused.
fn rate(args: &PlanArgs) -> Result<f64, CliError> {
    let s = required("rate", args.serving.rate.as_deref())?;
    s.trim().parse::<f64>().map_err(|_| {
        CliError::Usage(format!(
            "--rate must be a number of requests per second, not \"{}\"",
            short(s)
        ))
    })
}

pub(super) fn candidates(args: &PlanArgs) -> Result<Vec<Candidate>, CliError> {
    let ids = &args.gpu;
    if ids.is_empty() {
        return Err(CliError::Usage(
            "--gpu is required (repeat it to compare GPUs)".into(),
        ));
    }
    // Out-of-range values (0 included) reach the core, which says what the range is.
    let gpn = args
        .gpus_per_node
        .map(|n| u32::try_from(n).unwrap_or(u32::MAX));
    let mut cands: Vec<Candidate> = ids
        .iter()
        .map(|id| Candidate {
            gpu: id.to_string(),
            gpus_per_node: gpn,
            price_usd_per_gpu_hour: None,
        })
        .collect();
    let cat = Catalog::builtin();
    for p in &args.price {
        let (target, value) = match p.split_once('=') {
            Some((id, v)) => (Some(id.trim()), v),
            None => (None, p.as_str()),
        };
        let usd = match value.trim().parse::<f64>() {
            Ok(v) if v.is_finite() && (0.0..=1e6).contains(&v) => v,
            _ => {
                return Err(CliError::Usage(format!(
                    "--price must be US dollars per GPU-hour (or ID=USD), not \"{}\"",
                    short(p)
                )))
            }
        };
        match target {
            None => cands
                .iter_mut()
                .for_each(|c| c.price_usd_per_gpu_hour = Some(usd)),
            Some(id) => {
                let want = cat.get(id)?.id.clone();
                let mut hit = false;
                for c in cands.iter_mut() {
                    if cat.get(&c.gpu).is_ok_and(|g| g.id == want) {
                        c.price_usd_per_gpu_hour = Some(usd);
                        hit = true;
                    }
                }
                if !hit {
                    return Err(CliError::Usage(format!(
                        "--price names {}, which is not one of the --gpu candidates",
                        short(id)
                    )));
                }
            }
        }
    }
    Ok(cands)
}

/// Parses the command line into planner inputs.
pub fn inputs(args: &PlanArgs) -> Result<PlanInputs, CliError> {
    let buckets =
        match args.buckets.as_deref() {
            Some(b) => parse_buckets(b)?,
            None => {
                let i = args.load.input_len.ok_or_else(|| {
                    CliError::Usage("--input-len is required (or --buckets)".into())
                })?;
                let o = args.load.output_len.ok_or_else(|| {
                    CliError::Usage("--output-len is required (or --buckets)".into())
                })?;
                vec![Bucket {
                    input_len: i,
                    output_len: o,
                    share: 1.0,
                }]
            }
        };
    Ok(PlanInputs {
        traffic: Traffic {
            avg_rate_rps: rate(args)?,
            peak_multiplier: args.peak_multiplier,
            buckets,
        },
        targets: Targets::from_ms(
            required_f64("ttft-ms", args.ttft_ms)?,
            required_f64("tpot-ms", args.tpot_ms)?,
        ),
        candidates: candidates(args)?,
    })
}

fn dtype(v: Option<&String>) -> Result<Option<Dtype>, CliError> {
    Ok(v.map(|s| Dtype::parse(s)).transpose()?)
}

/// Runs the command.
pub fn run(args: &PlanArgs, out: &mut dyn Write) -> Result<(), CliError> {
    if args.search {
        return super::plan_search::run(args, out);
    }
    if args.largest {
        return run_largest(args, out);
    }
    if args.family.is_some() {
        return Err(CliError::Usage(
            "--family goes with --largest (the largest size of the family that meets the targets)"
                .into(),
        ));
    }
    let model = parse_model_text(&read_file("config", args.config.as_deref())?)?;
    let inp = inputs(args)?;
    let dtypes = &args.engine.dtypes;
    let timing = PerfTiming {
        model: &model,
        eff: super::eff::efficiencies(&args.serving.eff)?,
        weights_dtype: dtype(dtypes.weights_dtype.as_ref())?,
        kv_dtype: dtype(dtypes.kv_dtype.as_ref())?,
    };
    let p = plan(&inp, Catalog::builtin(), &timing)?;
    if let Some(n) = args.curve {
        let c = cost_curve(&p, usize::try_from(n.min(1000)).unwrap_or(1000));
        return write_serialized(out, &c);
    }
    let sim = if args.simulate {
        Some(simulate(args, &model, &p, &inp)?)
    } else {
        None
    };
    if args.json {
        let mut opts: Vec<Value> = p.options.iter().map(option_json).collect();
        if let (Some(s), Some(Value::Object(m))) = (&sim, p.best.and_then(|i| opts.get_mut(i))) {
            m.insert("simulated".into(), simulated_json(s));
        }
        return write_json(out, &Value::Array(opts));
    }
    let mut text = render(&p);
    if let Some(s) = &sim {
        text.push_str(&render_simulated(s));
    }
    write_text(out, &text)
}

/// `--simulate`: the best option re-sized on simulated P99s.
fn simulate(
    args: &PlanArgs,
    model: &ModelDesc,
    p: &Plan,
    inp: &PlanInputs,
) -> Result<SimulatedPlan, CliError> {
    let given = [
        ("lengths", args.load.lengths.is_some()),
        ("dataset", args.load.dataset.is_some()),
        ("max-concurrency", args.load.max_concurrency.is_some()),
        ("tp", args.tp.is_some()),
        ("sweep", args.serving.sweep.is_some()),
    ];
    if let Some((k, _)) = given.iter().find(|(_, g)| *g) {
        return Err(CliError::Usage(format!(
            "plan --simulate takes its lengths, rate and TP from the plan; drop --{k}"
        )));
    }
    let router = match args.router.as_deref() {
        Some(r) => Router::parse(r)?,
        None => Router::default(),
    };
    let eff = &args.serving.eff;
    let set = SimPlanSettings {
        router,
        engine: super::simulate::engine(&args.engine, 1, !eff.eff.is_empty())?,
        workload: super::simulate::workload(&args.load, 1.0)?,
        efficiencies: super::eff::efficiencies(eff)?,
        budget: Budget::default(),
    };
    Ok(simulated_plan(model, p, inp, Catalog::builtin(), &set)?)
}

fn tails_json(t: Option<&FleetTails>) -> Value {
    t.map_or(Value::Null, |t| {
        json!({
            "replicas": t.replicas,
            "p99_ttft_ms": num(t.p99_ttft_ms),
            "p99_tpot_ms": num(t.p99_tpot_ms),
            "goodput": num(t.goodput),
            "completed": t.completed,
            "partial": t.partial,
            "meets_targets": t.meets_targets,
        })
    })
}

fn sizing_json(s: &FleetSizing, analytic: u64, requests: u64) -> Value {
    json!({
        "rate": num(s.rate_rps),
        "num_requests": requests,
        "analytic_replicas": analytic,
        "replicas": s.replicas,
        "capped": s.capped,
        "partial": s.partial,
        "at_replicas": tails_json(s.at_count.as_ref()),
        "one_fewer": tails_json(s.one_fewer.as_ref()),
        "tried": s.tried.iter().map(|t| tails_json(Some(t))).collect::<Vec<_>>(),
    })
}

/// The `simulated` object of the best option (keys in the module doc).
pub fn simulated_json(s: &SimulatedPlan) -> Value {
    json!({
        "gpu": s.gpu,
        "tp": s.tp,
        "router": s.router.id(),
        "targets": {"p99_ttft_ms": num(s.targets.ttft_ms), "p99_tpot_ms": num(s.targets.tpot_ms)},
        "num_requests": s.num_requests,
        "seed": s.seed,
        "average": sizing_json(&s.average, s.analytic_replicas_avg, s.requests_avg),
        "peak": sizing_json(&s.peak, s.analytic_replicas_peak, s.requests_peak),
        "notes": s.notes.iter().map(ToString::to_string).collect::<Vec<_>>(),
    })
}

fn render_simulated(s: &SimulatedPlan) -> String {
    let mut t = format!(
        "\nsimulated: {} × TP {} behind a {} router, {} / {} requests per run at the average / peak rate (seed {}), P99 targets TTFT ≤ {} ms, TPOT ≤ {} ms\n",
        s.gpu_name,
        s.tp,
        s.router.id(),
        s.requests_avg,
        s.requests_peak,
        s.seed,
        fmt_sig(s.targets.ttft_ms),
        fmt_sig(s.targets.tpot_ms)
    );
    let analytic = [s.analytic_replicas_avg, s.analytic_replicas_peak];
    for ((label, d), n0) in ["average", "peak"].iter().zip(&s.derivations).zip(analytic) {
        t.push_str(&format!(
            "{label}: {} (Little's law: {n0})",
            d.result_text(Lang::En)
        ));
        if !d.substituted.is_empty() {
            t.push_str(&format!(" — {}", d.substituted));
        }
        t.push('\n');
    }
    for n in &s.notes {
        t.push_str(&format!("note: {n}\n"));
    }
    t
}

/// Runs `--largest --family F`.
fn run_largest(args: &PlanArgs, out: &mut dyn Write) -> Result<(), CliError> {
    if args.config.is_some() {
        return Err(CliError::Usage(
            "--largest plans the sizes of --family, not a --config file; drop one of them".into(),
        ));
    }
    let family = Family::parse(required("family", args.family.as_deref())?)?;
    let inp = inputs(args)?;
    let dtypes = &args.engine.dtypes;
    let r = largest_in_family(
        family,
        &inp,
        Catalog::builtin(),
        dtype(dtypes.weights_dtype.as_ref())?,
        dtype(dtypes.kv_dtype.as_ref())?,
        &super::eff::efficiencies(&args.serving.eff)?,
    )?;
    if args.json {
        return write_json(out, &largest_json(&r, &inp));
    }
    write_text(out, &render_largest(&r, &inp))
}

/// "Largest model that meets the target" as the CLI's JSON object.
pub fn largest_json(r: &LargestReport, inp: &PlanInputs) -> Value {
    json!({
        "family": r.family.id(),
        "largest": r.largest.and_then(|i| r.verdicts.get(i)).map(|v| v.model.clone()),
        "targets": {
            "ttft_ms": inp.targets.ttft.ms(),
            "tpot_ms": inp.targets.tpot.ms(),
        },
        "models": r.verdicts.iter().map(|v| json!({
            "model": v.model,
            "params_total": v.params_total,
            "params_active": v.params_active,
            "fits": v.fits,
            "meets_targets": v.meets_targets,
            "why_not": v.why_not,
            "best": v.best.as_ref().map(option_json),
        })).collect::<Vec<_>>(),
    })
}

fn render_largest(r: &LargestReport, inp: &PlanInputs) -> String {
    let mut s = format!(
        "{}: largest size meeting TTFT ≤ {} ms and TPOT ≤ {} ms at {} req/s ({} req/s peak)\n\n",
        r.family.name(),
        fmt_sig(inp.targets.ttft.ms()),
        fmt_sig(inp.targets.tpot.ms()),
        fmt_sig(inp.traffic.avg_rate_rps),
        fmt_sig(inp.traffic.peak_rate_rps())
    );
    s.push_str("model                      params(B)  fits  meets  best option          req/s/replica  $/M tokens\n");
    for (i, v) in r.verdicts.iter().enumerate() {
        let b = v.best.as_ref();
        s.push_str(&format!(
            "{:<26} {:>9} {:>5} {:>6}  {:<20} {:>13} {:>11}{}\n",
            v.model,
            fmt_sig(v.params_total as f64 / 1e9),
            if v.fits { "yes" } else { "no" },
            if v.meets_targets { "yes" } else { "no" },
            b.map_or("—".into(), |o| format!(
                "{} × TP {}{}",
                o.gpu,
                o.tp,
                if o.latency_lower_bound.is_some() {
                    " (≥)"
                } else {
                    ""
                }
            )),
            b.map_or("—".into(), |o| fmt_sig(o.requests_per_s_per_replica)),
            dollars(b.and_then(|o| o.usd_per_million_tokens_avg)),
            if r.largest == Some(i) {
                "  ← largest"
            } else {
                ""
            }
        ));
    }
    for v in &r.verdicts {
        if let Some(w) = &v.why_not {
            s.push_str(&format!("{}: {w}\n", v.model));
        }
        if let Some(o) = v.best.as_ref() {
            if let Some(lb) = o.latency_lower_bound {
                s.push_str(&format!("{}: (≥) {}\n", v.model, lb.phrase(&o.gpu_name)));
            }
        }
    }
    s
}

/// One option as the CLI's JSON object (times in ms, rates per second, US dollars).
pub fn option_json(o: &PlanOption) -> Value {
    json!({
        "gpu": o.gpu,
        "tp": o.tp,
        "batch": o.batch,
        "max_batch_memory": o.max_batch_memory,
        "batch_limited_by": o.batch_limited_by,
        "ttft_ms": num(o.ttft.ms()),
        "tpot_ms": num(o.tpot.ms()),
        "e2e_latency_ms": num(o.e2e.ms()),
        "requests_per_s_per_replica": o.requests_per_s_per_replica,
        "output_tokens_per_s_per_replica": o.output_tokens_per_s_per_replica,
        "concurrency_avg": o.concurrency_avg,
        "concurrency_peak": o.concurrency_peak,
        "replicas_avg": o.replicas_avg,
        "replicas_peak": o.replicas_peak,
        "gpus_avg": o.gpus_avg,
        "gpus_peak": o.gpus_peak,
        "gpus_per_node": o.gpus_per_node,
        "nodes_peak": o.nodes_peak,
        "usd_per_gpu_hour": o.price_usd_per_gpu_hour,
        "cost_per_hour_avg": o.cost_per_hour_avg,
        "cost_per_hour_peak": o.cost_per_hour_peak,
        "cost_per_month_avg": o.cost_per_month_avg,
        "cost_per_month_peak": o.cost_per_month_peak,
        "usd_per_million_tokens_avg": o.usd_per_million_tokens_avg,
        "headroom_avg": o.headroom_avg,
        "headroom_peak": o.headroom_peak,
        "cold_start_s": o.cold_start.map(|c| c.0),
        "meets_targets": o.meets_targets,
        "latency_lower_bound": o.latency_lower_bound,
        "reason": o.reason,
        "notes": o.notes,
    })
}

fn dollars(v: Option<f64>) -> String {
    v.map_or("—".to_string(), |c| format!("${}", fmt_sig(c)))
}

fn render(p: &Plan) -> String {
    let mut s = format!(
        "{}: {} req/s average, {} req/s peak, mean {} → {} tokens, targets TTFT ≤ {} ms, TPOT ≤ {} ms\n\n",
        p.model,
        fmt_sig(p.avg_rate_rps),
        fmt_sig(p.peak_rate_rps),
        fmt_sig(p.mean_input_len),
        fmt_sig(p.mean_output_len),
        fmt_sig(p.targets.ttft.ms()),
        fmt_sig(p.targets.tpot.ms())
    );
    s.push_str("gpu                   tp  batch  req/s/replica  replicas avg/peak  GPUs peak  $/h peak    $/month peak  reason\n");
    for o in &p.options {
        s.push_str(&format!(
            "{:<20} {:>3} {:>6} {:>14} {:>8}/{:<8} {:>10} {:>10} {:>14}  {}\n",
            o.gpu,
            o.tp,
            o.batch,
            if o.meets_targets {
                fmt_sig(o.requests_per_s_per_replica)
            } else {
                "—".into()
            },
            o.replicas_avg,
            o.replicas_peak,
            o.gpus_peak,
            dollars(o.cost_per_hour_peak),
            dollars(o.cost_per_month_peak),
            o.reason.map_or("best", |r| r.id())
        ));
    }
    if let Some(b) = p.best_option() {
        s.push_str(&format!(
            "\nbest: {} × TP {} at batch {} (limited by {}): {} req/s per replica; {} replicas ({} GPUs) for the average, {} ({} GPUs, {} nodes) for the peak; headroom at peak {}%\n",
            b.gpu_name,
            b.tp,
            b.batch,
            b.batch_limited_by,
            fmt_sig(b.requests_per_s_per_replica),
            b.replicas_avg,
            b.gpus_avg,
            b.replicas_peak,
            b.gpus_peak,
            b.nodes_peak,
            fmt_sig(b.headroom_peak * 100.0)
        ));
        if let Some(lb) = p.best_lower_bound() {
            s.push_str(&format!(
                "warning: the best option's latency is only a lower bound: {}\n",
                lb.phrase(&b.gpu_name)
            ));
        }
    }
    for n in &p.notes {
        s.push_str(&format!("note: {n}\n"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_parse_and_reject_garbage() {
        let b = parse_buckets("1024:256:0.7, 4096:512:0.3").unwrap_or_default();
        assert_eq!(b.len(), 2);
        assert_eq!((b[1].input_len, b[1].output_len), (4096, 512));
        assert!((b[0].share - 0.7).abs() < 1e-12);
        for bad in ["", "1:2", "a:b:c", "1:2:3:4"] {
            assert!(parse_buckets(bad).is_err(), "{bad}");
        }
    }
}
