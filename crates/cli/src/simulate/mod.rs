//! `llmcalc simulate --config F --gpu ID [--tp N] --rate R|inf [--max-concurrency C]
//! [--num-requests N] [--input-len I --output-len O | --lengths FILE | --dataset sharegpt]
//! [--max-num-seqs S] [--max-num-batched-tokens T] [--block-size 16]
//! [--gpu-memory-utilization 0.9] [--weights-dtype D] [--kv-dtype D] [--prefix-hit F]
//! [--frontend-overhead-ms MS] [--frontend-per-token-us US] [--enable-expert-parallel]
//! [--no-async-scheduling] [--step-model kernels|roofline] [--burstiness B] [--seed N]
//! [--sweep R1,R2,...] [--goodput ttft:MS,tpot:MS] [--eff e_bw=…,e_cp=…] [--json]
//! [--disagg --prefill-workers N --prefill-tp N --prefill-dp N --prefill-ep N --decode-workers N
//! --decode-tp N --decode-dp N --decode-ep N --kv-link nvlink|ib|roce --kv-transfer-latency-ms
//! MS]`: one engine replica under load, simulated (`core::sim`); with `--disagg`, a pool of
//! prefill workers and a pool of decode workers (`core::sim::disagg`; the JSON's `disagg`
//! object holds each pool's busy share and TTFT's stages).
//!
//! The server's path per request is `--frontend-overhead-ms` (its fixed part: HTTP, the
//! hand-off to the engine, streaming; default `core::sim::DEFAULT_FRONTEND_OVERHEAD_MS`, fitted
//! on measured runs) and `--frontend-per-token-us` per prompt token (tokenization, done by one
//! worker in arrival order; default `core::sim::DEFAULT_FRONTEND_PER_TOKEN_US`): TTFT = that
//! path + the wait for the engine + the prefill (`mean_frontend_ms`, `mean_queue_ms`,
//! `mean_prefill_ms` in the JSON). Step times come from vLLM's measured kernels where the GPU
//! (or its architecture) has tables (`--step-model roofline` for the fitted roofline);
//! `--eff` sets the roofline's efficiencies as `calibrate --fit` prints them (`url_params`;
//! `cli/eff.rs`) and so selects the roofline unless `--step-model` says otherwise.
//!
//! The flags are `vllm serve`'s and `vllm bench serve`'s: `--rate` is `--request-rate`
//! (`inf` sends every request at once), `--burstiness` is the gamma shape of the gaps (1 =
//! Poisson, below 1 burstier; coefficient of variation `1/√B`), `--goodput` the targets of
//! goodput. Without lengths the default is vLLM bench's `random` dataset, 1,024 in / 128 out.
//! `--lengths FILE` reads one `input output` pair per line (commas or spaces; `#` comments).
//!
//! Text output follows `vllm bench serve`'s summary, then the simulator's own figures. JSON
//! keys are those of vLLM's result file (`completed`, `request_throughput`,
//! `output_throughput`, `mean_ttft_ms`, `median_ttft_ms`, `p99_ttft_ms`, … for ttft, tpot,
//! itl and e2el) plus `preemptions`, `goodput`, `partial`, `notes` and, with `--sweep`,
//! `saturation_rate` and one object per rate in `points`. Bad input exits 2 with one
//! sentence.

mod engine_flags;
mod output;

use super::args::{read_file, required, short};
use super::opts::{Load, SimulateArgs};
use super::{write_json, write_text, CliError};
use crate::core::hardware::Catalog;
use crate::core::model::parse_model_text;
use crate::core::sim::{simulate_disagg, DisaggConfig, KvLink, DEFAULT_KV_TRANSFER_LATENCY_MS};
use crate::core::sim::{
    sweep_rates, Arrival, Budget, EngineConfig, Lengths, Replica, Slo, WorkloadSpec,
};
use std::io::Write;

pub(super) use engine_flags::engine;
pub(super) use output::num;
pub use output::{notes_text, result_json};
use output::{result_text, sweep_json, sweep_text};

/// Most rates one `--sweep` takes.
const MAX_SWEEP_RATES: usize = 64;
/// Most pairs a `--lengths` file may hold.
const MAX_LENGTH_PAIRS: usize = 1_000_000;

/// The request rate: a positive number or `inf`.
fn rate_value(s: &str, flag: &str) -> Result<f64, CliError> {
    let t = s.trim();
    if t.eq_ignore_ascii_case("inf") {
        return Ok(f64::INFINITY);
    }
    match t.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v <= 1.0e9 => Ok(v),
        _ => Err(CliError::Usage(format!(
            "--{flag} must be a number of requests per second above 0 (or inf), not \"{}\"",
            short(s)
        ))),
    }
}

/// Reads `--lengths FILE`: one `input output` pair per line.
fn lengths_file(path: Option<&str>) -> Result<Lengths, CliError> {
    let text = read_file("lengths", path)?;
    let mut pairs = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let nums: Vec<&str> = line
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|s| !s.is_empty())
            .collect();
        let parsed: Vec<u64> = nums.iter().filter_map(|s| s.parse().ok()).collect();
        match parsed.as_slice() {
            [a, b] if nums.len() == 2 && *a > 0 && *b > 0 => pairs.push((*a, *b)),
            _ => {
                return Err(CliError::Usage(format!(
                    "--lengths line {} must be two whole numbers above 0 (input and output tokens), not \"{}\"",
                    i + 1,
                    short(line)
                )))
            }
        }
        if pairs.len() > MAX_LENGTH_PAIRS {
            return Err(CliError::Usage(format!(
                "--lengths holds more than {MAX_LENGTH_PAIRS} pairs"
            )));
        }
    }
    if pairs.is_empty() {
        return Err(CliError::Usage(
            "--lengths holds no input/output pair".into(),
        ));
    }
    Ok(Lengths::List { pairs })
}

/// The lengths: fixed, a file, or the ShareGPT-like distribution (one choice).
fn lengths(args: &Load) -> Result<Lengths, CliError> {
    let fixed = args.input_len.is_some() || args.output_len.is_some();
    let chosen = [fixed, args.lengths.is_some(), args.dataset.is_some()];
    if chosen.iter().filter(|c| **c).count() > 1 {
        return Err(CliError::Usage(
            "give one of --input-len/--output-len, --lengths or --dataset".into(),
        ));
    }
    if let Some(d) = &args.dataset {
        return if d.eq_ignore_ascii_case("sharegpt") {
            Ok(Lengths::ShareGpt)
        } else {
            Err(CliError::Usage(format!(
                "--dataset must be \"sharegpt\", not \"{}\"",
                short(d)
            )))
        };
    }
    if args.lengths.is_some() {
        return lengths_file(args.lengths.as_deref());
    }
    Ok(Lengths::Fixed {
        input: args.input_len.unwrap_or(1024),
        output: args.output_len.unwrap_or(128),
    })
}

/// `--goodput ttft:MS,tpot:MS` (vLLM's `--goodput` keys; spaces also separate).
fn goodput(given: Option<&str>) -> Result<Option<Slo>, CliError> {
    let Some(s) = given else {
        return Ok(None);
    };
    let bad = || {
        CliError::Usage(format!(
            "--goodput must be \"ttft:MS,tpot:MS\" with positive milliseconds, not \"{}\"",
            short(s)
        ))
    };
    let (mut ttft, mut tpot) = (f64::INFINITY, f64::INFINITY);
    for part in s.split([',', ' ']).filter(|p| !p.is_empty()) {
        let (k, v) = part.split_once(':').ok_or_else(bad)?;
        let v: f64 = v.trim().parse().map_err(|_| bad())?;
        if !(v.is_finite() && v > 0.0) {
            return Err(bad());
        }
        match k.trim() {
            "ttft" => ttft = v,
            "tpot" => tpot = v,
            _ => return Err(bad()),
        }
    }
    Ok(Some(Slo {
        ttft_ms: ttft,
        tpot_ms: tpot,
    }))
}

/// The offered load (the rate is set by the caller for sweeps).
pub(super) fn workload(args: &Load, rate: f64) -> Result<WorkloadSpec, CliError> {
    Ok(WorkloadSpec {
        arrival: Arrival::from_rate(rate, args.burstiness),
        max_concurrency: args.max_concurrency,
        lengths: lengths(args)?,
        num_requests: args.num_requests,
        warmup: 0,
        warmup_drained: false,
        seed: args.seed,
    })
}

/// Runs `llmcalc simulate`.
pub fn run(args: &SimulateArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let model = parse_model_text(&read_file("config", args.config.as_deref())?)?;
    let gpu = Catalog::builtin().get(required("gpu", args.gpu.as_deref())?)?;
    let serving = &args.serving;
    let engine = engine(&args.engine, args.tp, !serving.eff.eff.is_empty())?;
    let slo = goodput(serving.goodput.as_deref())?;
    let rates: Option<Vec<f64>> = serving
        .sweep
        .as_deref()
        .map(|s| {
            s.split(',')
                .filter(|p| !p.trim().is_empty())
                .map(|p| rate_value(p, "sweep"))
                .collect::<Result<Vec<f64>, CliError>>()
        })
        .transpose()?;
    let rate = match (serving.rate.as_deref(), &rates) {
        (Some(r), _) => rate_value(r, "rate")?,
        (None, Some(_)) => f64::INFINITY,
        (None, None) => {
            return Err(CliError::Usage(
                "--rate is required (a number or inf)".into(),
            ))
        }
    };
    let wl = workload(&args.load, rate)?;
    if let Some(d) = disagg_shapes(args, &engine)? {
        if rates.is_some() {
            return Err(CliError::Usage(
                "--sweep is not simulated with --disagg yet; give one --rate".into(),
            ));
        }
        let eff = super::eff::efficiencies(&serving.eff)?;
        let prefill = Replica::new(&model, gpu, &d.prefill, &eff)?;
        let decode = Replica::new(&model, gpu, &d.decode, &eff)?;
        let r = simulate_disagg(&prefill, &decode, gpu, &d.cfg, &wl, slo, Budget::default())?;
        return if args.json {
            write_json(out, &result_json(&r, rate, wl.max_concurrency))
        } else {
            write_text(out, &result_text(&r, rate))
        };
    }
    let mut rep = Replica::new(
        &model,
        gpu,
        &engine,
        &super::eff::efficiencies(&serving.eff)?,
    )?;
    if let Some(rates) = rates {
        if rates.is_empty() || rates.len() > MAX_SWEEP_RATES {
            return Err(CliError::Usage(format!(
                "--sweep takes 1 to {MAX_SWEEP_RATES} rates separated by commas"
            )));
        }
        let s = sweep_rates(&mut rep, &wl, &rates, slo, Budget::default())?;
        return if args.json {
            write_json(out, &sweep_json(&s))
        } else {
            write_text(out, &sweep_text(&s))
        };
    }
    let r = rep.run(&wl, slo, Budget::default())?;
    if args.json {
        write_json(out, &result_json(&r, rate, wl.max_concurrency))
    } else {
        write_text(out, &result_text(&r, rate))
    }
}

/// The two pools of `--disagg`: each one's engine and the link.
struct DisaggShapes {
    prefill: EngineConfig,
    decode: EngineConfig,
    cfg: DisaggConfig,
}

/// `--disagg` and its flags (`None` without it; its flags without it are refused): each
/// pool's shape defaults to the aggregated flags' (`--tp`, `--dp`, `--ep`).
fn disagg_shapes(
    args: &SimulateArgs,
    engine: &EngineConfig,
) -> Result<Option<DisaggShapes>, CliError> {
    let f = &args.disagg;
    let any = [
        f.prefill_workers,
        f.prefill_tp,
        f.prefill_dp,
        f.prefill_ep,
        f.decode_workers,
        f.decode_tp,
        f.decode_dp,
        f.decode_ep,
    ]
    .iter()
    .any(Option::is_some)
        || f.kv_link.is_some()
        || f.kv_transfer_latency_ms.is_some();
    if !f.disagg {
        return if any {
            Err(CliError::Usage(
                "--prefill-…, --decode-… and --kv-… flags need --disagg".into(),
            ))
        } else {
            Ok(None)
        };
    }
    let shape = |tp: Option<u64>, dp: Option<u64>, ep: Option<u64>| EngineConfig {
        tp: tp.unwrap_or(engine.tp),
        dp: dp.unwrap_or(engine.dp),
        ep: ep.unwrap_or(engine.ep),
        ..engine.clone()
    };
    let prefill = shape(f.prefill_tp, f.prefill_dp, f.prefill_ep);
    let decode = shape(f.decode_tp, f.decode_dp, f.decode_ep);
    let (pw, dw) = (
        f.prefill_workers.unwrap_or(1),
        f.decode_workers.unwrap_or(1),
    );
    let gpus = pw
        .saturating_mul(prefill.parallel().gpus())
        .saturating_add(dw.saturating_mul(decode.parallel().gpus()));
    let gpu = Catalog::builtin().get(required("gpu", args.gpu.as_deref())?)?;
    let link = match f.kv_link.as_deref() {
        Some(l) => KvLink::parse(l)?,
        None => KvLink::auto(gpus, gpu),
    };
    let cfg = DisaggConfig {
        prefill_workers: pw,
        decode_workers: dw,
        link,
        transfer_latency_ms: f
            .kv_transfer_latency_ms
            .unwrap_or(DEFAULT_KV_TRANSFER_LATENCY_MS),
    };
    cfg.validate()?;
    Ok(Some(DisaggShapes {
        prefill,
        decode,
        cfg,
    }))
}
