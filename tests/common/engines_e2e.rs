//! The measured end-to-end SGLang and TensorRT-LLM runs (`fixtures/measured_serving_e2e.csv`,
//! their aggregated rows with tensor parallelism only) and how each was run
//! (`fixtures/e2e_setups_engines.csv`: the client, its counts, the length spread and the
//! engine's flags as the launch scripts set them; provenance in `fixtures/SOURCES.md`),
//! simulated as the benchmark ran them. Used by `tests/engines_e2e_validation.rs`.

pub use super::e2e::Row;
use super::e2e::{
    aggregated, config_text, field, gpu, load, modelopt_fp8_kv, num, records, requested_weights,
    source_kind, Fields, Setup,
};
use llm_serving_calculator::core::base::Dtype;
use llm_serving_calculator::core::calc::Efficiencies;
use llm_serving_calculator::core::model::{parse_model_text, ModelDesc};
use llm_serving_calculator::core::sim::{Budget, EngineConfig, Replica, SimResult, WorkloadSpec};
use std::sync::OnceLock;

const SETUPS: &str = include_str!("../fixtures/e2e_setups_engines.csv");

fn setups() -> &'static [(usize, Fields)] {
    static S: OnceLock<Vec<(usize, Fields)>> = OnceLock::new();
    S.get_or_init(|| records(SETUPS))
}

/// The aggregated SGLang and TensorRT-LLM rows with neither attention DP nor expert
/// parallelism recorded.
pub fn rows() -> Vec<Row> {
    let one = |f: &Fields, k: &str| num(f, k).is_nan() || num(f, k) <= 1.0;
    aggregated(&|f| {
        matches!(field(f, "backend"), "sglang" | "trtllm")
            && one(f, "attention_dp_size")
            && one(f, "moe_ep_size")
    })
}

/// The setup of `r`'s group: same engine, model, GPU, precision, version, source and TP.
pub fn setup(r: &Row) -> Option<Setup> {
    let f = r.fields();
    let int = |v: &str| v.parse::<f64>().map(|x| x as u64).ok();
    setups().iter().map(|(_, s)| Setup::of(s)).find(|s| {
        s.get("backend") == r.engine.id()
            && s.get("model_path") == r.model
            && s.get("system") == r.system
            && s.get("precision") == r.precision
            && s.get("backend_version") == r.version
            && s.get("source") == source_kind(f)
            && int(s.get("csv_tp")) == int(field(f, "tp_size"))
    })
}

/// Why `r` is not simulated, if it is not (its setup's `skip_when`: `all: reason` here).
pub fn skip_reason(s: &Setup) -> Option<String> {
    let (cond, reason) = s.get("skip_when").split_once(": ")?;
    (cond == "all").then(|| reason.to_string())
}

/// A setup's knob: a number, or a sum of `c`, `isl`, `osl` and numbers, or `ceil32(…)`,
/// `ceil64(…)`, `max(a;b)` of those; `None` for `default` or what this reader does not know.
pub fn knob(text: &str, c: u64, isl: u64, osl: u64) -> Option<u64> {
    let t = text.trim();
    if let Some(inner) = t.strip_prefix("ceil32(").and_then(|x| x.strip_suffix(')')) {
        return knob(inner, c, isl, osl).map(|v| v.div_ceil(32) * 32);
    }
    if let Some(inner) = t.strip_prefix("ceil64(").and_then(|x| x.strip_suffix(')')) {
        return knob(inner, c, isl, osl).map(|v| v.div_ceil(64) * 64);
    }
    if let Some(inner) = t.strip_prefix("max(").and_then(|x| x.strip_suffix(')')) {
        let (a, b) = inner.split_once(';')?;
        return Some(knob(a, c, isl, osl)?.max(knob(b, c, isl, osl)?));
    }
    t.split('+')
        .map(|term| match term.trim() {
            "c" => Some(c),
            "isl" => Some(isl),
            "osl" => Some(osl),
            n => n.parse().ok(),
        })
        .sum()
}

/// The value a cell gives for a run of `isl` + `osl` tokens at `c` clients: the cell itself,
/// or one branch of the three conditional forms the setups file uses (`A for 1k1k else B`,
/// `A (B when isl=8192)`, `A (B for 1k8k conc>=256)`).
pub fn branch(text: &str, c: u64, isl: u64, osl: u64) -> &str {
    let t = text.trim();
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
    let engine = EngineConfig {
        engine: r.engine,
        tp: r.tp,
        max_num_seqs: read("max_batch_size")?,
        max_num_batched_tokens: read("max_num_tokens")?,
        page_size: read("page_size")?,
        memory_fraction: fraction,
        max_model_len: Some(isl + osl + 256),
        weights_dtype: requested_weights(s.get("checkpoint"), &r.precision),
        kv_dtype: (s.get("kv_cache_dtype").starts_with("fp8")
            || modelopt_fp8_kv(s.get("checkpoint")))
        .then_some(Dtype::Fp8),
        chunked_prefill: s.get("chunked_prefill") == "on",
        mixed_chunk: flags.contains("--enable-mixed-chunk"),
        max_prefill_tokens: match flags.split_once("--max-prefill-tokens ") {
            Some((_, rest)) => {
                let v = rest.split(';').next().unwrap_or("");
                Some(
                    knob(v, c, isl, osl)
                        .ok_or_else(|| format!("--max-prefill-tokens {v:?} not read"))?,
                )
            }
            None => None,
        },
        frontend_overhead_ms: 0.0,
        ..EngineConfig::default()
    };
    Ok((engine, load(r, s)))
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
    if let Some(why) = skip_reason(&s) {
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
