//! The measured end-to-end SGLang and TensorRT-LLM runs (`fixtures/measured_serving_e2e.csv`,
//! their aggregated rows with tensor parallelism only) and how each was run
//! (`fixtures/e2e_setups_engines.csv`: the client, its counts, the length spread and the
//! engine's flags as the launch scripts set them, MTP speculative decoding included;
//! provenance in `fixtures/SOURCES.md`),
//! simulated as the benchmark ran them. Used by `tests/engines_e2e_validation.rs`.

pub use super::e2e::knob;
pub use super::e2e::Row;
use super::e2e::{
    aggregated, config_text, field, gpu, load, modelopt_fp8_kv, num, records, requested_weights,
    source_kind, Fields, Setup,
};
use llm_serving_calculator::core::base::Dtype;
use llm_serving_calculator::core::calc::Efficiencies;
use llm_serving_calculator::core::model::{parse_model_text, ModelDesc};
use llm_serving_calculator::core::sim::{
    Budget, EngineConfig, Replica, SglangStateFlags, SimResult, SpecConfig, SpecMethod,
    WorkloadSpec,
};
use std::sync::OnceLock;

const SETUPS: &str = include_str!("../fixtures/e2e_setups_engines.csv");
const PARALLEL_SETUPS: &str = include_str!("../fixtures/e2e_setups_parallel.csv");

fn setups() -> &'static [(usize, Fields)] {
    static S: OnceLock<Vec<(usize, Fields)>> = OnceLock::new();
    S.get_or_init(|| records(SETUPS))
}

fn parallel_setups() -> &'static [(usize, Fields)] {
    static S: OnceLock<Vec<(usize, Fields)>> = OnceLock::new();
    S.get_or_init(|| records(PARALLEL_SETUPS))
}

/// The aggregated SGLang and TensorRT-LLM rows.
pub fn rows() -> Vec<Row> {
    aggregated(&|f| matches!(field(f, "backend"), "sglang" | "trtllm"))
}

/// Whether `r` recorded attention DP or expert parallelism above 1.
pub fn recorded_parallel(r: &Row) -> bool {
    let above = |k: &str| num(r.fields(), k) > 1.0;
    above("attention_dp_size") || above("moe_ep_size")
}

/// Whether `r`'s launch ran attention DP or expert parallelism above 1 (its setup's shape).
pub fn launched_parallel(r: &Row, s: &Setup) -> bool {
    let v = |k: &str| knob(s.get(k), r.c, r.isl, r.osl).unwrap_or(1);
    !s.get("gpus").is_empty() && (v("attn_dp") > 1 || v("moe_ep") > 1)
}

/// The setup of `r`'s group: same engine, model, GPU, precision, version, source and
/// recorded TP, attention DP and EP; the groups whose launch set attention DP or expert
/// parallelism (`e2e_setups_parallel.csv`, which also holds the true shape of groups
/// recorded TP-only) before the TP-only ones.
pub fn setup(r: &Row) -> Option<Setup> {
    let f = r.fields();
    let int = |v: &str| v.parse::<f64>().map(|x| x as u64).ok();
    let same = |s: &Setup| {
        s.get("backend") == r.engine.id()
            && s.get("model_path") == r.model
            && s.get("system") == r.system
            && s.get("precision") == r.precision
            && s.get("backend_version") == r.version
            && s.get("source") == source_kind(f)
            && int(s.get("csv_tp")) == int(field(f, "tp_size"))
    };
    let dp_ep = |s: &Setup| {
        let rec = |k: &str| int(field(f, k)).unwrap_or(1).max(1);
        int(s.get("csv_dp")).unwrap_or(1).max(1) == rec("attention_dp_size")
            && int(s.get("csv_ep")).unwrap_or(1).max(1) == rec("moe_ep_size")
    };
    parallel_setups()
        .iter()
        .map(|(_, s)| Setup::of(s))
        .find(|s| same(s) && dp_ep(s))
        .or_else(|| {
            (!recorded_parallel(r))
                .then(|| setups().iter().map(|(_, s)| Setup::of(s)).find(same))
                .flatten()
        })
}

/// Why `r` is not simulated, if it is not (its setup's `skip_when`, `condition: reason`, the
/// condition as [`holds`] reads it; other than `all` where a group mixes runs of two launches
/// that the lengths and the concurrency tell apart).
pub fn skip_reason(r: &Row, s: &Setup) -> Option<String> {
    let (cond, reason) = s.get("skip_when").split_once(": ")?;
    holds(cond, r.c, r.isl, r.osl).then(|| reason.to_string())
}

/// Whether a run of `isl` + `osl` tokens at `c` clients meets `cond`: `all`, or alternatives
/// joined by ` or `, each a conjunction joined by `,` of `isl=N`, `osl=N`, `c>=N` and `c<N`.
fn holds(cond: &str, c: u64, isl: u64, osl: u64) -> bool {
    let atom = |a: &str| -> bool {
        let a = a.trim();
        let n = |v: &str| v.trim().parse::<u64>().ok();
        if let Some(v) = a.strip_prefix("c>=") {
            return n(v).is_some_and(|v| c >= v);
        }
        if let Some(v) = a.strip_prefix("c<") {
            return n(v).is_some_and(|v| c < v);
        }
        if let Some(v) = a.strip_prefix("isl=") {
            return n(v) == Some(isl);
        }
        if let Some(v) = a.strip_prefix("osl=") {
            return n(v) == Some(osl);
        }
        a == "all"
    };
    cond.split(" or ").any(|alt| alt.split(',').all(atom))
}

/// The speculative decoding of `r`'s launch (`spec_method`, `spec_k` of its setup; either may
/// take the conditional forms of [`branch`]): MTP with `k` drafts a step (SGLang's
/// `--speculative-num-steps` for a chain of `--speculative-eagle-topk 1`, TensorRT-LLM's
/// `num_nextn_predict_layers`), `None` when blank or `none`. The acceptance rates are the
/// method's defaults (`SpecMethod::default_rates`): the measured file records no acceptance
/// rate or accepted length for these runs, and their prompts are random tokens (InferenceX's
/// `--dataset-name random`) wrapped in the chat template, whose acceptance no source measures.
pub fn spec(r: &Row, s: &Setup) -> Result<Option<SpecConfig>, String> {
    let (c, isl, osl) = (r.c, r.isl, r.osl);
    match branch(s.get("spec_method"), c, isl, osl) {
        "" | "none" => Ok(None),
        m => {
            let method =
                SpecMethod::parse(m).ok_or_else(|| format!("spec_method = {m:?} not read"))?;
            let k = branch(s.get("spec_k"), c, isl, osl);
            let k = knob(k, c, isl, osl).ok_or_else(|| format!("spec_k = {k:?} not read"))?;
            let sc = SpecConfig::new(method, k);
            sc.validate()
                .map_err(|e| format!("spec {m} k {k}: {e:?}"))?;
            Ok(Some(sc))
        }
    }
}

/// The value a cell gives for a run of `isl` + `osl` tokens at `c` clients: the cell itself,
/// or one branch of the four conditional forms the setups file uses (`A for 1k1k else B`,
/// `A (B when isl=8192)`, `A (B for 1k8k conc>=256)`, and `A if COND else B` with a condition
/// of `skip_when`'s grammar, [`holds`]).
pub fn branch(text: &str, c: u64, isl: u64, osl: u64) -> &str {
    let t = text.trim();
    if let Some((a, rest)) = t.split_once(" if ") {
        if let Some((cond, b)) = rest.split_once(" else ") {
            return if holds(cond, c, isl, osl) { a } else { b };
        }
    }
    if let Some((a, b)) = t.split_once(" for 1k1k else ") {
        return if (isl, osl) == (1024, 1024) { a } else { b };
    }
    if let Some((a, rest)) = t.split_once(" (") {
        let rest = rest.trim_end_matches(')');
        if let Some(b) = rest.strip_suffix(" when isl=8192") {
            return if isl == 8192 { b } else { a };
        }
        if let Some(b) = rest.strip_suffix(" for 1k8k conc>=256") {
            return if (isl, osl) == (1024, 8192) && c >= 256 {
                b
            } else {
                a
            };
        }
    }
    t
}

/// The model a setup serves.
pub fn model(s: &Setup) -> Option<ModelDesc> {
    parse_model_text(&config_text(s.get("checkpoint"))?).ok()
}

/// The engine and the benchmark of `r` under setup `s`, or why a value cannot be read.
pub fn engine_and_load(r: &Row, s: &Setup) -> Result<(EngineConfig, WorkloadSpec), String> {
    let (isl, osl, c) = (r.isl, r.osl, r.c);
    let read = |k: &str| -> Result<Option<u64>, String> {
        match branch(s.get(k), c, isl, osl) {
            "default" | "" => Ok(None),
            v => knob(v, c, isl, osl)
                .map(Some)
                .ok_or_else(|| format!("{k} = {v:?} not read")),
        }
    };
    let fraction = match branch(s.get("mem_fraction"), c, isl, osl) {
        "default" | "" => None,
        v => Some(
            v.parse::<f64>()
                .map_err(|_| format!("mem_fraction = {v:?} not read"))?,
        ),
    };
    let flags = s.get("other_flags");
    // The launch's shape where the setup gives it, else the recorded TP alone.
    let shape = |k: &str| -> Result<u64, String> {
        knob(s.get(k), c, isl, osl).ok_or_else(|| format!("{k} = {:?} not read", s.get(k)))
    };
    let (tp, dp, ep) = if s.get("gpus").is_empty() {
        (r.tp, 1, 1)
    } else {
        (shape("attn_tp")?, shape("attn_dp")?, shape("moe_ep")?)
    };
    let engine = EngineConfig {
        engine: r.engine,
        tp,
        dp,
        ep,
        max_num_seqs: read("max_batch_size")?,
        max_num_batched_tokens: read("max_num_tokens")?,
        // `--attention-backend trtllm_mha` pages by 64 (`server_args.py`): SGLang's default
        // for a hybrid model is another backend, paging by 1.
        page_size: match read("page_size")? {
            None if flags.contains("--attention-backend trtllm_mha") => Some(64),
            p => p,
        },
        memory_fraction: fraction,
        max_model_len: Some(isl + osl + 256),
        weights_dtype: requested_weights(s.get("checkpoint"), &r.precision),
        kv_dtype: (s.get("kv_cache_dtype").starts_with("fp8")
            || modelopt_fp8_kv(s.get("checkpoint")))
        .then_some(Dtype::Fp8),
        chunked_prefill: s.get("chunked_prefill") == "on",
        mixed_chunk: flags.contains("--enable-mixed-chunk"),
        max_prefill_tokens: match flags.split_once("--max-prefill-tokens ") {
            Some((_, rest)) if rest.starts_with("default") => None,
            Some((_, rest)) => {
                let v = rest.split(';').next().unwrap_or("");
                Some(
                    knob(v, c, isl, osl)
                        .ok_or_else(|| format!("--max-prefill-tokens {v:?} not read"))?,
                )
            }
            None => None,
        },
        scheduler_recv_interval: recv_interval(flags, c),
        adp_balance_timeout_iters: adp_balance(flags),
        batch_wait: batch_wait(flags, (isl, osl, c, tp)),
        frontend_overhead_ms: 0.0,
        spec: spec(r, s)?,
        sglang_state: SglangStateFlags {
            // Prefix caching off is `--disable-radix-cache`; `trtllm_mha` attention turns the
            // radix cache off for a hybrid model (`_handle_mamba_radix_cache`).
            disable_radix_cache: s.get("prefix_caching") == "off"
                || flags.contains("--disable-radix-cache")
                || flags.contains("--attention-backend trtllm_mha"),
            mamba_ssm_dtype: flags
                .split_once("--mamba-ssm-dtype ")
                .and_then(|(_, rest)| rest.split(';').next())
                .and_then(|v| match v.trim() {
                    "bfloat16" => Some(Dtype::Bf16),
                    "float16" => Some(Dtype::Fp16),
                    "float32" => Some(Dtype::Fp32),
                    _ => None,
                }),
            ..SglangStateFlags::default()
        },
        ..EngineConfig::default()
    };
    Ok((engine, load(r, s)))
}

/// SGLang's `--scheduler-recv-interval` among a setup's flags at `c` clients: `N`, `A if
/// conc>=K else B` or `A (conc>=K)` (1 below K).
fn recv_interval(flags: &str, c: u64) -> Option<u64> {
    let (_, rest) = flags.split_once("--scheduler-recv-interval ")?;
    let v = rest.split(';').next()?.trim();
    let cond = |k: &str| k.trim().parse::<u64>().ok().map(|k| c >= k);
    if let Some((a, rest)) = v.split_once(" if conc>=") {
        let (k, b) = rest.split_once(" else ")?;
        return if cond(k)? {
            a.parse().ok()
        } else {
            b.trim().parse().ok()
        };
    }
    if let Some((a, rest)) = v.split_once(" (conc>=") {
        return if cond(rest.trim_end_matches(')'))? {
            a.parse().ok()
        } else {
            Some(1)
        };
    }
    v.parse().ok()
}

/// TensorRT-LLM's attention-DP balancing among a setup's flags: `timeout_iters N` of an
/// `attention_dp_config` with `enable_balance true`, or its default 50 when none is given.
fn adp_balance(flags: &str) -> Option<u64> {
    if !flags.contains("enable_balance true") && !flags.contains("enable_balance=true") {
        return None;
    }
    let n = flags
        .split([';', '(', ')'])
        .map(str::trim)
        .find_map(|p| p.strip_prefix("timeout_iters "))
        .and_then(|v| v.trim().parse().ok());
    Some(n.unwrap_or(50))
}

/// TensorRT-LLM's batch waiting among a setup's flags for a run of `isl`/`osl` tokens, `c`
/// clients and TP `tp`: `batch_wait_timeout_iters=T` and `batch_wait_max_tokens_ratio=R`,
/// with the launch scripts' conditions as the setups record them (`only when isl=osl=1024 and
/// tp<8`, `for 1k1k conc>=64`); `None` when the flags do not set it or the run is outside
/// the condition.
fn batch_wait(flags: &str, (isl, osl, c, tp): (u64, u64, u64, u64)) -> Option<(u64, f64)> {
    let part = flags
        .split(';')
        .find(|p| p.contains("batch_wait_timeout_iters="))?;
    let value = |k: &str| -> Option<&str> {
        let (_, rest) = part.split_once(k)?;
        rest.split([' ', '+']).next()
    };
    let iters = value("batch_wait_timeout_iters=")?.parse().ok()?;
    let ratio = value("batch_wait_max_tokens_ratio=")?.parse().ok()?;
    let one_k = (isl, osl) == (1024, 1024);
    let applies = if part.contains("only when isl=osl=1024 and tp<8") {
        one_k && tp < 8
    } else if part.contains("for 1k1k conc>=64") {
        one_k && c >= 64
    } else {
        !part.contains(" when ") && !part.contains(" for ")
    };
    applies.then_some((iters, ratio))
}

/// A simulated row: its result, or why it was not simulated.
pub enum Outcome {
    Simulated(Box<SimResult>),
    Skipped(String),
}

/// Simulates `r` as its benchmark ran, with the engine changed by `tune`.
pub fn simulate(r: &Row, tune: &dyn Fn(&mut EngineConfig)) -> Outcome {
    let Some(s) = setup(r) else {
        return Outcome::Skipped("no setup row (the launch was not resolved)".into());
    };
    if let Some(why) = skip_reason(r, &s) {
        return Outcome::Skipped(why);
    }
    let Some(g) = gpu(&r.system) else {
        return Outcome::Skipped(format!("GPU {} not in the catalog", r.system));
    };
    let Some(m) = model(&s) else {
        return Outcome::Skipped(format!("no config for {}", s.get("checkpoint")));
    };
    let (mut engine, load) = match engine_and_load(r, &s) {
        Ok(x) => x,
        Err(why) => return Outcome::Skipped(why),
    };
    tune(&mut engine);
    match Replica::new(&m, g, &engine, &Efficiencies::default())
        .and_then(|mut rep| rep.run(&load, None, Budget::default()))
    {
        Ok(res) if res.completed > 0 => Outcome::Simulated(Box::new(res)),
        Ok(_) => Outcome::Skipped("the simulated engine completed no request".into()),
        Err(e) => Outcome::Skipped(format!("the simulator refuses it: {e:?}")),
    }
}
