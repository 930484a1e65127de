//! `llmcalc plan --search --config FILE --gpu ID [--gpu ID …] --rate R --input-len I
//! --output-len O --targets ttft_p99:MS,tpot_p99:MS [--engines vllm,sglang,trtllm]
//! [--max-gpus N] [--layouts agg|disagg|both] [--no-spec] [--shortlist N] [--price …]
//! [--weights-dtype D] [--kv-dtype D] [--seed N] [--json]`: every engine, parallel shape,
//! aggregated or disaggregated layout with its prefill:decode ratio, with and without
//! speculative decoding, on the GPUs given (`core::sim::search`): the Pareto front of cost per
//! million output tokens against tokens per second per user, the short list simulated, the
//! cheapest configuration meeting both P99 targets and its launch commands.
//!
//! JSON: `core::sim::SearchResult` as serde writes it (`candidates`, `points` and the indices
//! `front`, `shortlist`, `best`, `nearest` into `points`; `commands`; `refused` with each
//! rule's sentence and count). When no simulated configuration meets the targets the text
//! output ends with the nearest ones and the command exits 2 with one sentence naming the
//! targets; the JSON then has `best: null` and the nearest points.

use super::args::{read_file, short};
use super::opts::PlanArgs;
use super::{write_serialized, write_text, CliError};
use crate::core::base::fmt_sig;
use crate::core::base::{Dtype, Lang};
use crate::core::hardware::Catalog;
use crate::core::model::parse_model_text;
use crate::core::present::describe_candidate;
use crate::core::sim::{
    search_configurations, Candidate, EngineConfig, EngineKind, PlanPoint, SearchGpu, SearchResult,
    SearchSpec, Slo, Statistic, DEFAULT_MAX_GPUS, DEFAULT_SHORTLIST,
};
use std::io::Write;

/// `ttft_p99:MS,tpot_p99:MS` (or `ttft_mean:MS,tpot_mean:MS`) → targets and their statistic.
fn targets(s: &str) -> Result<(Slo, Statistic), CliError> {
    let bad = || {
        CliError::Usage(format!(
            "--targets must look like ttft_p99:1000,tpot_p99:50 or ttft_mean:500,tpot_mean:30 (milliseconds, one statistic), not \"{}\"",
            short(s)
        ))
    };
    let (mut ttft, mut tpot, mut stat) = (None, None, None);
    for part in s.split(',') {
        let (k, v) = part.trim().split_once(':').ok_or_else(bad)?;
        let v: f64 = v.trim().parse().map_err(|_| bad())?;
        let (metric, st) = k.trim().split_once('_').ok_or_else(bad)?;
        let st = match st {
            "p99" => Statistic::P99,
            "mean" => Statistic::Mean,
            _ => return Err(bad()),
        };
        if stat.is_some_and(|x| x != st) {
            return Err(bad());
        }
        stat = Some(st);
        match metric {
            "ttft" => ttft = Some(v),
            "tpot" => tpot = Some(v),
            _ => return Err(bad()),
        }
    }
    match (ttft, tpot, stat) {
        (Some(ttft_ms), Some(tpot_ms), Some(st)) => Ok((Slo { ttft_ms, tpot_ms }, st)),
        _ => Err(bad()),
    }
}

fn engines(args: &PlanArgs) -> Result<Vec<EngineKind>, CliError> {
    let list = match (&args.engines, &args.engine.engine) {
        (Some(l), _) => l.clone(),
        (None, Some(e)) => e.clone(),
        (None, None) => {
            return Ok(vec![
                EngineKind::Vllm,
                EngineKind::Sglang,
                EngineKind::Trtllm,
            ])
        }
    };
    let mut out = Vec::new();
    for id in list.split(',') {
        let e = EngineKind::from_id(id.trim()).ok_or_else(|| {
            CliError::Usage(format!(
                "--engines must list vllm, sglang or trtllm, not \"{}\"",
                short(id)
            ))
        })?;
        if !out.contains(&e) {
            out.push(e);
        }
    }
    Ok(out)
}

/// The flags the search chooses itself, refused when given.
fn refuse_chosen(args: &PlanArgs) -> Result<(), CliError> {
    let e = &args.engine;
    let o = &e.others;
    let p = &e.parallel;
    let given = [
        ("simulate", args.simulate),
        ("curve", args.curve.is_some()),
        ("largest", args.largest),
        ("buckets", args.buckets.is_some()),
        ("tp", args.tp.is_some()),
        ("dp", p.dp.is_some()),
        ("ep", p.ep.is_some()),
        ("pp", p.pp.is_some()),
        ("nodes", p.nodes.is_some()),
        ("enable-expert-parallel", e.enable_expert_parallel),
        ("max-num-seqs", e.vllm.max_num_seqs.is_some()),
        (
            "max-num-batched-tokens",
            e.vllm.max_num_batched_tokens.is_some(),
        ),
        ("block-size", e.vllm.block_size.is_some()),
        (
            "gpu-memory-utilization",
            e.vllm.gpu_memory_utilization.is_some(),
        ),
        ("max-running-requests", o.max_running_requests.is_some()),
        ("chunked-prefill-size", o.chunked_prefill_size.is_some()),
        ("page-size", o.page_size.is_some()),
        ("mem-fraction-static", o.mem_fraction_static.is_some()),
        ("max-batch-size", o.max_batch_size.is_some()),
        ("max-num-tokens", o.max_num_tokens.is_some()),
        ("sweep", args.serving.sweep.is_some()),
        ("max-concurrency", args.load.max_concurrency.is_some()),
        ("lengths", args.load.lengths.is_some()),
        ("dataset", args.load.dataset.is_some()),
    ];
    if let Some((k, _)) = given.iter().find(|(_, g)| *g) {
        return Err(CliError::Usage(format!(
            "plan --search chooses the shape, the engine's batch and the layout itself, and takes one --input-len/--output-len pair; drop --{k}"
        )));
    }
    Ok(())
}

fn spec_of(args: &PlanArgs) -> Result<SearchSpec, CliError> {
    refuse_chosen(args)?;
    let rate_s = args
        .serving
        .rate
        .as_deref()
        .ok_or_else(|| CliError::Usage("--rate is required".into()))?;
    let rate_rps: f64 = rate_s.trim().parse().map_err(|_| {
        CliError::Usage(format!(
            "--rate must be a number of requests per second, not \"{}\"",
            short(rate_s)
        ))
    })?;
    let (targets, statistic) = match (&args.targets, args.ttft_ms, args.tpot_ms) {
        (Some(t), None, None) => targets(t)?,
        (None, Some(ttft_ms), Some(tpot_ms)) => (Slo { ttft_ms, tpot_ms }, Statistic::P99),
        (Some(_), _, _) => {
            return Err(CliError::Usage(
                "give the P99 targets once: --targets ttft_p99:MS,tpot_p99:MS (or --ttft-ms and --tpot-ms)".into(),
            ))
        }
        _ => {
            return Err(CliError::Usage(
                "--targets ttft_p99:MS,tpot_p99:MS is required".into(),
            ))
        }
    };
    let input_len = args
        .load
        .input_len
        .ok_or_else(|| CliError::Usage("--input-len is required".into()))?;
    let output_len = args
        .load
        .output_len
        .ok_or_else(|| CliError::Usage("--output-len is required".into()))?;
    let (aggregated, disaggregated) = match args.layouts.as_deref().map(str::trim) {
        None | Some("both") => (true, true),
        Some("agg") => (true, false),
        Some("disagg") => (false, true),
        Some(o) => {
            return Err(CliError::Usage(format!(
                "--layouts must be agg, disagg or both, not \"{}\"",
                short(o)
            )))
        }
    };
    let cands = super::plan_cmd::candidates(args)?;
    let cat = Catalog::builtin();
    let mut gpus = Vec::new();
    for c in &cands {
        let g = cat.get(&c.gpu)?;
        let price = match c.price_usd_per_gpu_hour {
            Some(p) => p,
            None => g.price.as_ref().map(|p| p.usd_per_hour).ok_or_else(|| {
                CliError::Usage(format!(
                    "{} has no public price in the catalog; give one with --price {}=USD",
                    g.name, g.id
                ))
            })?,
        };
        gpus.push(SearchGpu {
            gpu: g.clone(),
            usd_per_gpu_hour: price,
        });
    }
    let d = &args.engine.dtypes;
    let dtype = |v: Option<&String>| v.map(|s| Dtype::parse(s)).transpose();
    let base = EngineConfig {
        weights_dtype: dtype(d.weights_dtype.as_ref())?,
        kv_dtype: dtype(d.kv_dtype.as_ref())?,
        max_model_len: args.engine.vllm.max_model_len,
        prefix_hit: args.engine.prefix_hit,
        frontend_per_token_us: args.engine.frontend_per_token_us,
        async_scheduling: !args.engine.no_async_scheduling,
        max_cudagraph_capture_size: super::opts::capture_size(
            args.engine.max_cudagraph_capture_size,
            args.engine.enforce_eager,
        ),
        ..EngineConfig::default()
    };
    Ok(SearchSpec {
        rate_rps,
        input_len,
        output_len,
        targets,
        statistic,
        gpus,
        engines: engines(args)?,
        max_gpus: args.max_gpus.unwrap_or(DEFAULT_MAX_GPUS),
        aggregated,
        disaggregated,
        speculative: !args.no_spec,
        base,
        frontend_overhead_ms: args.engine.frontend_overhead_ms,
        eff: super::eff::efficiencies(&args.serving.eff)?,
        shortlist: usize::try_from(args.shortlist.unwrap_or(DEFAULT_SHORTLIST as u64))
            .unwrap_or(usize::MAX),
        seed: args.load.seed,
    })
}

/// A configuration in one line: GPU, engine, layout, speculation (the app's words,
/// `core::present::describe_candidate`, in English).
fn describe(c: &Candidate) -> String {
    describe_candidate(c, Lang::En)
}

fn line(r: &SearchResult, p: &PlanPoint) -> String {
    let c = &r.candidates[p.candidate];
    let sim = match p.simulated {
        Some(s) => format!(
            "simulated P99 TTFT {} ms, P99 TPOT {} ms{}",
            fmt_sig(s.p99_ttft_ms),
            fmt_sig(s.p99_tpot_ms),
            if s.meets { "" } else { " (misses)" }
        ),
        None => format!(
            "mean TTFT {} ms, TPOT {} ms (closed form){}",
            fmt_sig(p.ttft_ms),
            fmt_sig(p.tpot_ms),
            if p.meets { "" } else { " (misses)" }
        ),
    };
    format!(
        "{:>8} tok/s/user  ${:>8}/M  {:>4} GPUs ({} × {}, batch {})  {}  — {}",
        fmt_sig(p.tokens_per_s_user),
        fmt_sig(p.usd_per_m_output),
        p.gpus,
        p.replicas,
        c.gpus,
        p.batch,
        describe(c),
        sim
    )
}

fn stat_word(s: Statistic) -> &'static str {
    match s {
        Statistic::P99 => "P99",
        Statistic::Mean => "mean",
    }
}

fn render(r: &SearchResult) -> String {
    let mut t = format!(
        "search: {} req/s of {} → {} tokens, {} targets TTFT ≤ {} ms, TPOT ≤ {} ms\n\
         {} configurations considered ({} timed in closed form, {} refused), {} points screened, {} simulations\n",
        fmt_sig(r.rate_rps),
        r.input_len,
        r.output_len,
        stat_word(r.statistic),
        fmt_sig(r.targets.ttft_ms),
        fmt_sig(r.targets.tpot_ms),
        r.considered,
        r.screened,
        r.refused.iter().map(|x| x.count).sum::<u64>(),
        r.screened_points,
        r.simulations
    );
    if let Some(b) = r.best.and_then(|i| r.points.get(i)) {
        t += &format!(
            "\nbest: {}\n  {} deployment(s), {} GPUs on {} node(s), ${}/hour, ${} per million output tokens\n",
            describe(&r.candidates[b.candidate]),
            b.replicas,
            b.gpus,
            b.nodes,
            fmt_sig(b.usd_per_hour),
            fmt_sig(b.usd_per_m_output)
        );
        t += &format!("  {}\nlaunch:\n", line(r, b));
        for c in &r.commands {
            t += &format!("  {c}\n");
        }
    }
    t += "\nPareto front (cost per million output tokens against tokens/s per user):\n";
    for &i in &r.front {
        t += &format!("  {}\n", line(r, &r.points[i]));
    }
    t += "\nshort list (simulated):\n";
    for &i in &r.shortlist {
        t += &format!("  {}\n", line(r, &r.points[i]));
    }
    if !r.refused.is_empty() {
        t += "\nrefused:\n";
        for x in &r.refused {
            t += &format!("  {} × {}\n", x.count, x.en);
        }
    }
    if r.best.is_none() {
        t += "\nnearest:\n";
        for &i in &r.nearest {
            t += &format!("  {}\n", line(r, &r.points[i]));
        }
    }
    t
}

/// The model's name in the launch commands: a config saved as `org__name.json` (as the
/// presets and Hugging Face's cache name them) is `org/name`; any other, its folder (where
/// its weights are expected beside it).
fn served_name(path: &str) -> String {
    let p = std::path::Path::new(path);
    let stem = p.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    if let Some((org, name)) = stem.split_once("__") {
        return format!("{org}/{name}");
    }
    match p.parent().and_then(|d| d.to_str()) {
        Some(d) if !d.is_empty() => d.to_string(),
        _ => ".".to_string(),
    }
}

/// Runs `plan --search`.
pub fn run(args: &PlanArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let path = args.config.as_deref();
    let model = parse_model_text(&read_file("config", path)?)?;
    let spec = spec_of(args)?;
    let served = served_name(path.unwrap_or(""));
    let r = search_configurations(&model, &served, &spec, &mut |_| {})?;
    if args.json {
        write_serialized(out, &r)?;
    } else {
        write_text(out, &render(&r))?;
    }
    if r.best.is_none() {
        let near = r
            .nearest
            .first()
            .and_then(|&i| r.points.get(i))
            .map(|p| format!("; the nearest is {}", line(&r, p)))
            .unwrap_or_default();
        return Err(CliError::Usage(format!(
            "no configuration searched meets {0} TTFT ≤ {1} ms and {0} TPOT ≤ {2} ms in simulation{near}",
            stat_word(r.statistic),
            fmt_sig(r.targets.ttft_ms),
            fmt_sig(r.targets.tpot_ms)
        )));
    }
    Ok(())
}
