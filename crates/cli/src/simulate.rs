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

use super::args::{read_file, required, short};
use super::opts::{Engine, Load, SimulateArgs};
use super::{write_json, write_text, CliError};
use crate::core::base::Dtype;
use crate::core::base::Lang;
use crate::core::base::{f64_any_text, f64_any_value};
use crate::core::calc::{DEFAULT_BLOCK_SIZE, DEFAULT_GPU_MEMORY_UTILIZATION};
use crate::core::hardware::Catalog;
use crate::core::model::parse_model_text;
use crate::core::sim::engine_frontend_overhead_ms;
use crate::core::sim::{
    simulate_disagg, DisaggConfig, DisaggSummary, KvLink, DEFAULT_KV_TRANSFER_LATENCY_MS,
};
use crate::core::sim::{
    sweep_rates, Arrival, Budget, EngineConfig, EngineKind, EngineUsed, Lengths, Replica, SimNote,
    SimResult, Slo, StepModelKind, SweepResult, WorkloadSpec,
};
use crate::core::sim::{SpecConfig, SpecMethod};
use serde_json::{json, Map, Value};
use std::io::Write;

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

/// The engine flags at `tp` GPUs per replica; `--eff` given selects the roofline unless
/// `--step-model` says otherwise.
pub(super) fn engine(args: &Engine, tp: u64, eff_given: bool) -> Result<EngineConfig, CliError> {
    let kind = match args.engine.as_deref() {
        None => EngineKind::Vllm,
        Some(v) => EngineKind::from_id(v).ok_or_else(|| {
            CliError::Usage(format!(
                "--engine must be vllm, sglang or trtllm, not \"{}\"",
                short(v)
            ))
        })?,
    };
    let k = engine_knobs(args, kind)?;
    let other = kind != EngineKind::Vllm;
    let mut e = EngineConfig {
        tp,
        engine: kind,
        max_num_seqs: k.seqs,
        max_num_batched_tokens: k.tokens,
        page_size: k.page.filter(|_| other),
        memory_fraction: k.fraction.filter(|_| other),
        mixed_chunk: args.others.enable_mixed_chunk,
        max_prefill_tokens: args.others.max_prefill_tokens,
        chunked_prefill: args.others.enable_chunked_prefill,
        scheduler_recv_interval: args.others.scheduler_recv_interval,
        adp_balance_timeout_iters: args.others.attention_dp_timeout_iters,
        max_model_len: args.max_model_len,
        weights_dtype: args
            .dtypes
            .weights_dtype
            .as_deref()
            .map(Dtype::parse)
            .transpose()?,
        kv_dtype: args
            .dtypes
            .kv_dtype
            .as_deref()
            .map(Dtype::parse)
            .transpose()?,
        block_size: args.block_size.unwrap_or(DEFAULT_BLOCK_SIZE),
        gpu_memory_utilization: args
            .gpu_memory_utilization
            .unwrap_or(DEFAULT_GPU_MEMORY_UTILIZATION),
        prefix_hit: args.prefix_hit,
        frontend_overhead_ms: args
            .frontend_overhead_ms
            .unwrap_or(engine_frontend_overhead_ms(kind)),
        frontend_per_token_us: args.frontend_per_token_us,
        async_scheduling: !args.no_async_scheduling,
        max_cudagraph_capture_size: super::opts::capture_size(
            args.max_cudagraph_capture_size,
            args.enforce_eager,
        ),
        dp: args.parallel.dp.unwrap_or(1),
        ep: args.parallel.ep.unwrap_or(1),
        pp: args.parallel.pp.unwrap_or(1),
        nodes: args.parallel.nodes.unwrap_or(0),
        ..EngineConfig::default()
    }
    .with_expert_parallel(args.enable_expert_parallel);
    e.spec = spec_config(args)?;
    e.step_model = match args.step_model.as_deref() {
        None if eff_given => StepModelKind::Roofline,
        None => StepModelKind::Kernels,
        Some(v) if v.eq_ignore_ascii_case("kernels") => StepModelKind::Kernels,
        Some(v) if v.eq_ignore_ascii_case("roofline") => StepModelKind::Roofline,
        Some(v) => {
            return Err(CliError::Usage(format!(
                "--step-model must be \"kernels\" or \"roofline\", not \"{}\"",
                short(v)
            )))
        }
    };
    Ok(e)
}

/// Speculative decoding from `--spec-method`, `--spec-k` and the acceptance (`None`: off);
/// the other spec flags without a method are refused.
fn spec_config(args: &Engine) -> Result<Option<SpecConfig>, CliError> {
    let Some(name) = args.spec_method.as_deref() else {
        if args.spec_k.is_some()
            || args.spec_acceptance.is_some()
            || args.spec_accepted_length.is_some()
            || !args.spec_acceptance_per_position.is_empty()
        {
            return Err(CliError::Usage(
                "--spec-k and the --spec-accept… flags need --spec-method (mtp, eagle3 or ngram)"
                    .into(),
            ));
        }
        return Ok(None);
    };
    let method = SpecMethod::parse(name).ok_or_else(|| {
        CliError::Usage(format!(
            "--spec-method must be mtp, eagle3 or ngram, not \"{}\" (a separate draft model is not modelled yet)",
            short(name)
        ))
    })?;
    let per_position = &args.spec_acceptance_per_position;
    if !per_position.is_empty() {
        let n = per_position.len() as u64;
        if args.spec_k.is_some_and(|k| k != n) {
            return Err(CliError::Usage(format!(
                "--spec-k is {} but --spec-acceptance-per-position gives {n} positions; give one rate per draft position",
                args.spec_k.unwrap_or(0)
            )));
        }
        return Ok(Some(SpecConfig::from_cumulative(method, per_position)?));
    }
    let k = args.spec_k.unwrap_or(DEFAULT_SPEC_K);
    let s = match (args.spec_acceptance, args.spec_accepted_length) {
        (_, Some(l)) => SpecConfig::from_accepted_length(method, k, l)?,
        (Some(a), None) => SpecConfig::uniform(method, k, a),
        (None, None) => SpecConfig::new(method, k),
    };
    s.validate()?;
    Ok(Some(s))
}

/// Draft tokens per step when `--spec-k` is not given.
const DEFAULT_SPEC_K: u64 = 3;

/// The generic knobs of one engine: most requests running, tokens per step, tokens per page,
/// memory share (`None`: the engine's default).
struct Knobs {
    seqs: Option<u64>,
    tokens: Option<u64>,
    page: Option<u64>,
    fraction: Option<f64>,
}

/// The knobs from the flags of `kind`; another engine's flag is refused with the one to use.
fn engine_knobs(args: &Engine, kind: EngineKind) -> Result<Knobs, CliError> {
    // Each engine's flags given, in the order of `EngineKind::flag_names` and then its others.
    let given: [(EngineKind, Vec<bool>, &[&str]); 3] = [
        (
            EngineKind::Vllm,
            vec![
                args.max_num_seqs.is_some(),
                args.max_num_batched_tokens.is_some(),
                args.block_size.is_some(),
                args.gpu_memory_utilization.is_some(),
            ],
            &[],
        ),
        (
            EngineKind::Sglang,
            vec![
                args.others.max_running_requests.is_some(),
                args.others.chunked_prefill_size.is_some(),
                args.others.page_size.is_some(),
                args.others.mem_fraction_static.is_some(),
                args.others.enable_mixed_chunk,
                args.others.max_prefill_tokens.is_some(),
                args.others.scheduler_recv_interval.is_some(),
            ],
            &[
                "--enable-mixed-chunk",
                "--max-prefill-tokens",
                "--scheduler-recv-interval",
            ],
        ),
        (
            EngineKind::Trtllm,
            vec![
                args.others.max_batch_size.is_some(),
                args.others.max_num_tokens.is_some(),
                args.others.tokens_per_block.is_some(),
                args.others.free_gpu_memory_fraction.is_some(),
                args.others.enable_chunked_prefill,
                args.others.attention_dp_timeout_iters.is_some(),
            ],
            &["--enable-chunked-prefill", "--attention-dp-timeout-iters"],
        ),
    ];
    for (owner, flags, others) in &given {
        let Some(i) = flags.iter().position(|g| *g).filter(|_| *owner != kind) else {
            continue;
        };
        // The command line spells every flag with dashes (TensorRT-LLM's own names in the note).
        let flag = match owner.flag_names().get(i) {
            Some(f) => format!("--{}", f.trim_start_matches('-').replace('_', "-")),
            None => others
                .get(i - 4)
                .map_or_else(String::new, |f| (*f).to_string()),
        };
        let instead = kind
            .flag_names()
            .get(i)
            .map(|f| {
                let cli = format!("--{}", f.trim_start_matches('-').replace('_', "-"));
                if cli == *f {
                    format!("; {}'s is {cli}", kind.name())
                } else {
                    format!("; {}'s is {cli} ({f})", kind.name())
                }
            })
            .unwrap_or_default();
        return Err(CliError::Usage(format!(
            "{flag} is {}'s flag, and the engine is {} (--engine {}){instead}",
            owner.name(),
            kind.name(),
            kind.id()
        )));
    }
    Ok(match kind {
        EngineKind::Vllm => Knobs {
            seqs: args.max_num_seqs,
            tokens: args.max_num_batched_tokens,
            page: args.block_size,
            fraction: args.gpu_memory_utilization,
        },
        EngineKind::Sglang => Knobs {
            seqs: args.others.max_running_requests,
            tokens: args.others.chunked_prefill_size,
            page: args.others.page_size,
            fraction: args.others.mem_fraction_static,
        },
        EngineKind::Trtllm => Knobs {
            seqs: args.others.max_batch_size,
            tokens: args.others.max_num_tokens,
            page: args.others.tokens_per_block,
            fraction: args.others.free_gpu_memory_fraction,
        },
    })
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

/// A finite number as a JSON number, anything else as `null` (the CLI's JSON where a missing
/// figure is unknown rather than infinite; compare [`f64_any_value`]).
pub(super) fn num(v: f64) -> Value {
    serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number)
}

/// One run as a JSON object with vLLM's keys.
pub fn result_json(r: &SimResult, rate: f64, max_concurrency: Option<u64>) -> Value {
    let mut m = Map::new();
    m.insert("request_rate".into(), f64_any_value(rate));
    m.insert("max_concurrency".into(), json!(max_concurrency));
    m.insert("num_prompts".into(), json!(r.num_prompts));
    for (k, v) in r.vllm_fields() {
        let value = match k.as_str() {
            "completed" | "total_input_tokens" | "total_output_tokens" | "preemptions" => {
                json!(v as u64)
            }
            _ => num(v),
        };
        m.insert(k, value);
    }
    m.insert("goodput".into(), r.goodput.map_or(Value::Null, num));
    m.insert("partial".into(), json!(r.partial));
    m.insert("mean_batch".into(), num(r.mean_batch));
    m.insert("max_batch".into(), json!(r.max_batch));
    m.insert("peak_kv_occupancy".into(), num(r.peak_kv_occupancy));
    m.insert("engine".into(), json!(r.engine));
    if let Some(d) = &r.disagg {
        m.insert("disagg".into(), disagg_json(d));
    }
    m.insert(
        "notes".into(),
        json!(r
            .notes
            .iter()
            .map(|n| n.message(Lang::En))
            .collect::<Vec<_>>()),
    );
    Value::Object(m)
}

/// The two pools' figures and the stages of TTFT (means and P99s, ms).
fn disagg_json(d: &DisaggSummary) -> Value {
    let stage = |x: &crate::core::sim::Dist| json!({"mean": num(x.mean), "p99": num(x.p99)});
    json!({
        "prefill_workers": d.prefill_workers,
        "prefill_gpus_per_worker": d.prefill_gpus,
        "decode_workers": d.decode_workers,
        "decode_gpus_per_worker": d.decode_gpus,
        "kv_link": d.link.id(),
        "kv_transfer_latency_ms": num(d.transfer_latency_ms),
        "kv_bytes_per_gpu": num(d.kv_bytes_per_gpu),
        "prefill_busy": num(d.prefill_busy),
        "decode_busy": num(d.decode_busy),
        "decode_mean_batch": num(d.decode_mean_batch),
        "prefill_stage_ms": stage(&d.prefill_stage_ms),
        "transfer_ms": stage(&d.transfer_ms),
        "decode_first_token_ms": stage(&d.decode_first_ms),
    })
}

fn sweep_json(s: &SweepResult) -> Value {
    json!({
        "saturation_rate": num(s.saturation_rate),
        "max_rate_meeting_targets": s.max_rate_meeting_targets,
        "partial": s.partial,
        "points": s.points.iter().map(|p| {
            let mut v = result_json(&p.result, p.rate, None);
            if let Value::Object(m) = &mut v {
                m.insert("saturated".into(), json!(p.saturated));
                m.insert("meets_targets".into(), json!(p.meets_targets));
            }
            v
        }).collect::<Vec<_>>(),
    })
}

fn line(s: &mut String, label: &str, v: impl std::fmt::Display) {
    s.push_str(&format!("{label:<40} {v}\n"));
}

fn section(s: &mut String, title: &str) {
    s.push_str(&format!("{title:-^50}\n"));
}

/// `vllm bench serve`'s summary of one run, then the simulator's own figures.
fn result_text(r: &SimResult, rate: f64) -> String {
    let mut s = String::new();
    s.push_str(&format!("{:=^50}\n", " Serving Benchmark Result "));
    line(&mut s, "Successful requests:", r.completed);
    line(
        &mut s,
        "Request rate configured (RPS):",
        f64_any_text(rate).map_or_else(|| format!("{rate:.2}"), String::from),
    );
    line(
        &mut s,
        "Benchmark duration (s):",
        format!("{:.2}", r.duration_s),
    );
    line(&mut s, "Total input tokens:", r.total_input_tokens);
    line(&mut s, "Total generated tokens:", r.total_output_tokens);
    line(
        &mut s,
        "Request throughput (req/s):",
        format!("{:.2}", r.request_throughput),
    );
    if let Some(g) = r.request_goodput {
        line(&mut s, "Request goodput (req/s):", format!("{g:.2}"));
    }
    line(
        &mut s,
        "Output token throughput (tok/s):",
        format!("{:.2}", r.output_throughput),
    );
    line(
        &mut s,
        "Total Token throughput (tok/s):",
        format!("{:.2}", r.total_token_throughput),
    );
    for (title, short, d) in [
        ("Time to First Token", "TTFT", &r.ttft_ms),
        (
            "Time per Output Token (excl. 1st token)",
            "TPOT",
            &r.tpot_ms,
        ),
        ("Inter-token Latency", "ITL", &r.itl_ms),
        ("End-to-end Latency", "E2EL", &r.e2el_ms),
    ] {
        section(&mut s, title);
        for (stat, v) in [
            ("Mean", d.mean),
            ("Median", d.median),
            ("P90", d.p90),
            ("P99", d.p99),
        ] {
            line(&mut s, &format!("{stat} {short} (ms):"), format!("{v:.2}"));
        }
    }
    section(&mut s, "Simulator");
    line(&mut s, "Preemptions:", r.preemptions);
    // TTFT's three parts, in the order a request meets them (they add up per request), then
    // the queueing's tail.
    for (label, v) in [
        ("Mean server path (ms):", r.frontend_ms.mean),
        ("Mean queueing delay (ms):", r.queue_ms.mean),
        ("Mean prefill to 1st token (ms):", r.prefill_ms.mean),
        ("P99 queueing delay (ms):", r.queue_ms.p99),
    ] {
        line(&mut s, label, format!("{v:.2}"));
    }
    line(
        &mut s,
        "Mean batch (running requests):",
        format!("{:.1}", r.mean_batch),
    );
    line(
        &mut s,
        "Peak KV-block occupancy:",
        format!("{:.1}%", r.peak_kv_occupancy * 100.0),
    );
    if let Some(g) = r.goodput {
        line(
            &mut s,
            "Goodput (share meeting targets):",
            format!("{:.1}%", g * 100.0),
        );
    }
    engine_lines(&mut s, &r.engine);
    if let Some(d) = &r.disagg {
        disagg_lines(&mut s, d);
    }
    s.push_str(&format!("{:=^50}\n", ""));
    s.push_str(&notes_text(&r.notes));
    s
}

/// The two pools and the stages of TTFT, as lines of the text output (the engine lines above
/// are the decode pool's).
fn disagg_lines(s: &mut String, d: &DisaggSummary) {
    section(s, "Disaggregated prefill / decode");
    line(
        s,
        "Prefill workers x GPUs / decode workers x GPUs:",
        format!(
            "{} x {} / {} x {}",
            d.prefill_workers, d.prefill_gpus, d.decode_workers, d.decode_gpus
        ),
    );
    line(
        s,
        "KV link / bytes per GPU per request:",
        format!("{} / {:.1} MB", d.link.id(), d.kv_bytes_per_gpu / 1e6),
    );
    for (label, v) in [
        ("Mean send to prefill done (ms):", d.prefill_stage_ms.mean),
        ("Mean KV transfer (ms):", d.transfer_ms.mean),
        ("Mean landing to 1st token (ms):", d.decode_first_ms.mean),
    ] {
        line(s, label, format!("{v:.2}"));
    }
    line(
        s,
        "Busy share prefill / decode:",
        format!(
            "{:.1}% / {:.1}%",
            d.prefill_busy * 100.0,
            d.decode_busy * 100.0
        ),
    );
    line(
        s,
        "Mean decode batch:",
        format!("{:.1}", d.decode_mean_batch),
    );
}

/// The engine's figures and the instance's parallelism, as lines of the text output.
fn engine_lines(s: &mut String, e: &EngineUsed) {
    let [seqs, tokens, page, _] = e.engine.flag_names();
    let name = |f: &str| f.trim_start_matches('-').replace('-', "_");
    line(
        s,
        &format!("KV blocks / {} / {}:", name(seqs), name(tokens)),
        format!(
            "{} / {} / {}",
            e.num_gpu_blocks, e.max_num_seqs, e.max_num_batched_tokens
        ),
    );
    if e.engine != EngineKind::Vllm {
        line(
            s,
            &format!("Engine / {}:", name(page)),
            format!(
                "{} {} / {}",
                e.engine.name(),
                e.engine.version(),
                e.block_size
            ),
        );
    }
    if let Some(p) = e.parallel {
        line(
            s,
            "Parallelism (tp × dp × pp, ep):",
            format!(
                "{} × {} × {} = {} GPUs on {} node(s), ep {}",
                p.tp,
                p.dp,
                p.pp,
                p.gpus(),
                p.nodes.max(1),
                p.ep
            ),
        );
        line(s, "Engine flags:", p.engine_flags(e.engine));
    }
}

/// A run's notes in English, one `note:` line each (the text outputs of `simulate` and
/// `calibrate`).
pub fn notes_text(notes: &[SimNote]) -> String {
    notes
        .iter()
        .map(|n| format!("note: {}\n", n.message(Lang::En)))
        .collect()
}

fn sweep_text(sw: &SweepResult) -> String {
    let mut s = format!(
        "saturation rate {:.2} req/s (the throughput with the queue never empty)\n",
        sw.saturation_rate
    );
    if let Some(r) = sw.max_rate_meeting_targets {
        s.push_str(&format!(
            "highest swept rate meeting the targets at P99: {r} req/s\n"
        ));
    }
    s.push_str(&format!(
        "{:>9} {:>9} {:>10} {:>10} {:>9} {:>9} {:>8}  {}\n",
        "rate", "req/s", "p50 TTFT", "p99 TTFT", "p50 TPOT", "p99 TPOT", "preempt", ""
    ));
    for p in &sw.points {
        let r = &p.result;
        s.push_str(&format!(
            "{:>9.2} {:>9.2} {:>10.1} {:>10.1} {:>9.2} {:>9.2} {:>8}  {}\n",
            p.rate,
            r.request_throughput,
            r.ttft_ms.median,
            r.ttft_ms.p99,
            r.tpot_ms.median,
            r.tpot_ms.p99,
            r.preemptions,
            if p.saturated { "saturated" } else { "" }
        ));
    }
    if sw.partial {
        s.push_str("note: a run stopped at its step budget; its figures are partial\n");
    }
    s
}
