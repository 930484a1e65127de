//! The measured end-to-end vLLM runs (`fixtures/measured_serving_e2e.csv`, the aggregated
//! vLLM rows) and how each was run (`fixtures/e2e_setups.csv`), simulated as the benchmark ran
//! them. Used by `tests/serving_e2e_validation.rs`.

use llm_serving_calculator::core::base::csv;
use llm_serving_calculator::core::base::Dtype;
use llm_serving_calculator::core::calc::Efficiencies;
use llm_serving_calculator::core::hardware::{Accelerator, Catalog};
use llm_serving_calculator::core::model::{parse_model_text, preset, ModelDesc};
use llm_serving_calculator::core::sim::{
    Arrival, Budget, EngineConfig, EngineKind, Lengths, Replica, SimResult, WorkloadSpec,
    DEFAULT_FRONTEND_OVERHEAD_MS, DYNAMO_FRONTEND_OVERHEAD_MS,
};
use std::collections::BTreeMap;
use std::sync::OnceLock;

pub const ROWS: &str = include_str!("../fixtures/measured_serving_e2e.csv");
const SETUPS: &str = include_str!("../fixtures/e2e_setups.csv");

pub type Fields = BTreeMap<String, String>;

/// One CSV's records as maps from header to field, with their line numbers.
pub fn records(text: &str) -> Vec<(usize, Fields)> {
    let recs = csv::parse(text).expect("csv parses");
    let header = recs[0].fields.clone();
    recs.iter()
        .skip(1)
        .map(|r| {
            (
                r.line,
                header
                    .iter()
                    .cloned()
                    .zip(r.fields.iter().cloned())
                    .collect(),
            )
        })
        .collect()
}

fn setups() -> &'static [(usize, Fields)] {
    static S: OnceLock<Vec<(usize, Fields)>> = OnceLock::new();
    S.get_or_init(|| records(SETUPS))
}

/// A measured run.
#[derive(Debug, Clone)]
pub struct Row {
    /// Line in the fixture.
    pub line: usize,
    /// The engine that ran it.
    pub engine: EngineKind,
    pub model: String,
    pub system: String,
    pub precision: String,
    pub version: String,
    pub isl: u64,
    pub osl: u64,
    /// The benchmark's concurrency (`silicon_concurrency` of the source where it differs from
    /// `batch_size`: the source records `batch_size` per attention-DP rank).
    pub c: u64,
    pub tp: u64,
    pub ttft_ms: f64,
    pub tpot_ms: f64,
    fields: Fields,
}

/// How a group of runs was launched and benchmarked (`fixtures/e2e_setups.csv`,
/// `fixtures/e2e_setups_engines.csv`).
#[derive(Debug, Clone, Copy)]
pub struct Setup {
    f: &'static Fields,
}

impl Setup {
    /// The setup of a row of a setups file.
    pub fn of(f: &'static Fields) -> Setup {
        Setup { f }
    }

    pub fn get(&self, k: &str) -> &'static str {
        self.f.get(k).map_or("", String::as_str)
    }
}

pub fn num(f: &Fields, k: &str) -> f64 {
    f.get(k).and_then(|v| v.parse().ok()).unwrap_or(f64::NAN)
}

pub fn field<'a>(f: &'a Fields, k: &str) -> &'a str {
    f.get(k).map_or("", String::as_str)
}

/// `aic` for AIConfigurator's own runs, `inferencex` for SemiAnalysis InferenceX's.
pub fn source_kind(f: &Fields) -> &'static str {
    let s = field(f, "silicon_data_source");
    if s.contains("source_file=/") || s.contains("gap-analysis") {
        "aic"
    } else {
        "inferencex"
    }
}

/// The aggregated vLLM rows.
pub fn rows() -> Vec<Row> {
    aggregated(&|f| field(f, "backend") == "vllm")
}

/// The aggregated rows of a known engine that `keep` keeps.
pub fn aggregated(keep: &dyn Fn(&Fields) -> bool) -> Vec<Row> {
    rows_of("agg", keep)
}

/// The rows of `mode` (`agg` or `disagg`) of a known engine that `keep` keeps.
pub fn rows_of(mode: &str, keep: &dyn Fn(&Fields) -> bool) -> Vec<Row> {
    records(ROWS)
        .into_iter()
        .filter(|(_, f)| field(f, "mode") == mode && keep(f))
        .filter_map(|(line, f)| {
            let engine = EngineKind::from_id(field(&f, "backend"))?;
            let sc = field(&f, "silicon_data_source")
                .split(';')
                .find_map(|p| p.trim().strip_prefix("silicon_concurrency="))
                .and_then(|v| v.parse::<u64>().ok());
            Some(Row {
                line,
                engine,
                model: field(&f, "model_path").to_string(),
                system: field(&f, "system").to_string(),
                precision: field(&f, "precision").to_string(),
                version: field(&f, "backend_version").to_string(),
                isl: num(&f, "isl") as u64,
                osl: num(&f, "osl") as u64,
                c: sc.unwrap_or(num(&f, "batch_size") as u64),
                tp: num(&f, "tp_size") as u64,
                ttft_ms: num(&f, "silicon_ttft_ms"),
                tpot_ms: num(&f, "silicon_tpot_ms"),
                fields: f,
            })
        })
        .collect()
}

impl Row {
    /// The run's fields in the fixture.
    pub fn fields(&self) -> &Fields {
        &self.fields
    }
}

/// The setup of `r`'s group: same model, GPU, precision, version, source and recorded
/// parallelism.
pub fn setup(r: &Row) -> Option<Setup> {
    let f = &r.fields;
    let int = |v: &str| v.parse::<f64>().map(|x| x as u64).ok();
    setups().iter().map(|(_, s)| Setup { f: s }).find(|s| {
        s.get("model_path") == r.model
            && s.get("system") == r.system
            && s.get("precision") == r.precision
            && s.get("backend_version") == r.version
            && s.get("source") == source_kind(f)
            && int(s.get("csv_tp")) == int(field(f, "tp_size"))
            && int(s.get("csv_dp")) == int(field(f, "attention_dp_size"))
            && int(s.get("csv_ep")) == int(field(f, "moe_ep_size"))
    })
}

/// Why `r` is not simulated, if it is not (its setup's `skip_when`).
pub fn skip_reason(r: &Row, s: &Setup) -> Option<String> {
    let (cond, reason) = s.get("skip_when").split_once(": ")?;
    applies(r, cond).then(|| reason.to_string())
}

/// The launch's (TP, attention DP) where its setup's `shape_when` (`config_id=N: tp A dp B`)
/// applies to `r`, else the recorded TP alone.
pub fn launched_shape(r: &Row, s: &Setup) -> (u64, u64) {
    let shape = s.get("shape_when").split_once(": ").and_then(|(cond, v)| {
        let w: Vec<&str> = v.split_whitespace().collect();
        match w.as_slice() {
            ["tp", tp, "dp", dp] if applies(r, cond) => Some((tp.parse().ok()?, dp.parse().ok()?)),
            _ => None,
        }
    });
    shape.unwrap_or((r.tp, 1))
}

/// Whether a setup's condition (`all`, `config_id=N`, `column=value`) holds for `r`.
fn applies(r: &Row, cond: &str) -> bool {
    match cond.split_once('=') {
        None => cond == "all",
        Some(("config_id", id)) => {
            field(&r.fields, "silicon_data_source").contains(&format!("config_id={id};"))
        }
        Some((col, v)) => {
            r.fields.get(col).and_then(|x| x.parse::<f64>().ok()) == v.parse::<f64>().ok()
        }
    }
}

pub fn config_text(checkpoint: &str) -> Option<String> {
    let file = |name: &str| {
        std::fs::read_to_string(format!("tests/fixtures/e2e_configs/{name}.json")).ok()
    };
    let preset_json = |id: &str| preset(id).map(|p| p.json().to_string());
    match checkpoint {
        "Qwen/Qwen3-32B" => preset_json("Qwen__Qwen3-32B"),
        "nvidia/Llama-3.1-8B-Instruct-FP8" => preset_json("meta-llama__Meta-Llama-3.1-8B"),
        "nvidia/Llama-3.3-70B-Instruct-FP4" | "nvidia/Llama-3.3-70B-Instruct-FP8" => {
            preset_json("meta-llama__Meta-Llama-3.1-70B")
        }
        "openai/gpt-oss-120b" => preset_json("openai__gpt-oss-120b"),
        "meta-llama/Llama-3.1-8B-Instruct" => preset_json("meta-llama__Meta-Llama-3.1-8B"),
        "nvidia/Qwen3-32B-NVFP4" => preset_json("Qwen__Qwen3-32B"),
        "deepseek-ai/DeepSeek-R1-0528" | "nvidia/DeepSeek-R1-0528-FP4-V2" => {
            preset_json("deepseek-ai__DeepSeek-R1")
        }
        // Not in AIConfigurator's configs: the base config with the `quantization_config` of
        // Qwen's FP8 releases (128×128 block-scaled e4m3). Read from the config, it is FP8-block;
        // requested as FP8 (`requested_weights`), the step model would take per-tensor FP8.
        "Qwen/Qwen3.5-397B-A17B-FP8" => file("Qwen--Qwen3.5-397B-A17B").map(|t| {
            let mut v: serde_json::Value = serde_json::from_str(&t).expect("config JSON");
            v["quantization_config"] = serde_json::json!({
                "activation_scheme": "dynamic",
                "fmt": "e4m3",
                "quant_method": "fp8",
                "weight_block_size": [128, 128]
            });
            v.to_string()
        }),
        other => file(&other.replace('/', "--")),
    }
}

/// The weight precision to request for a checkpoint whose config does not state it (the
/// Llama checkpoints are read from the base config).
pub fn requested_weights(checkpoint: &str, precision: &str) -> Option<Dtype> {
    match checkpoint {
        "nvidia/Llama-3.3-70B-Instruct-FP4" => Some(Dtype::Fp4),
        "nvidia/Llama-3.3-70B-Instruct-FP8" | "nvidia/Llama-3.1-8B-Instruct-FP8" => {
            Some(Dtype::Fp8)
        }
        "Qwen/Qwen3-32B" | "meta-llama/Llama-3.1-8B-Instruct" if precision == "fp8" => {
            Some(Dtype::Fp8)
        }
        "nvidia/Qwen3-32B-NVFP4" | "nvidia/DeepSeek-R1-0528-FP4-V2" => Some(Dtype::Fp4),
        _ => None,
    }
}

/// Whether the checkpoint names an FP8 KV cache, which vLLM then allocates with
/// `--kv-cache-dtype auto`: a ModelOpt `hf_quant_config.json` with `kv_cache_quant_algo: FP8`,
/// or a `quantization_config.kv_cache_scheme` of 8-bit floats in `config.json`. (The model
/// reader does not carry this yet: `docs/SERVING_SIMULATOR.md`, open points.)
pub fn modelopt_fp8_kv(checkpoint: &str) -> bool {
    let name = checkpoint.replace('/', "--");
    let hf = std::fs::read_to_string(format!(
        "tests/fixtures/e2e_configs/{name}.hf_quant_config.json"
    ))
    .is_ok_and(|t| t.contains("\"kv_cache_quant_algo\": \"FP8\""));
    let scheme = config_text(checkpoint)
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .and_then(|v| {
            v.get("quantization_config")?
                .get("kv_cache_scheme")
                .cloned()
        })
        .is_some_and(|k| {
            k.get("num_bits").and_then(|b| b.as_u64()) == Some(8)
                && k.get("type").and_then(|t| t.as_str()) == Some("float")
        });
    hf || scheme
}

/// Whether the runs of `s` went through NVIDIA Dynamo's frontend and aiperf (AIConfigurator's
/// own runs, on the chat endpoint) rather than vLLM's OpenAI server and its benchmark client
/// (SemiAnalysis InferenceX, and the Kimi-K2.5 rows AIConfigurator copied from it).
pub fn behind_dynamo(s: &Setup) -> bool {
    s.get("endpoint") == "chat"
}

/// Whether a vLLM version predates asynchronous scheduling by default (0.14.0): its CPU work
/// per step (scheduling, input preparation, output processing) then runs between the GPU's
/// steps instead of beside them. A blank version is a 2025 image (0.10.2).
pub fn before_async_scheduling(version: &str) -> bool {
    let mut it = version.split('.').map(|p| p.parse::<u64>().ok());
    match (it.next().flatten(), it.next().flatten()) {
        (Some(major), Some(minor)) => major == 0 && minor < 14,
        _ => version.is_empty(),
    }
}

/// The catalog GPU of a `system`.
pub fn gpu(system: &str) -> Option<&'static Accelerator> {
    let id = match system {
        "h100_sxm" => "h100-sxm",
        "h200_sxm" => "h200-sxm",
        "b200_sxm" => "b200",
        "b300_sxm" => "b300",
        "gb200" => "gb200",
        "gb300" => "gb300",
        _ => return None,
    };
    Catalog::builtin().get(id).ok()
}

/// The model a setup serves.
pub fn model(s: &Setup) -> Option<ModelDesc> {
    parse_model_text(&config_text(s.get("checkpoint"))?).ok()
}

/// The engine and the benchmark of `r` under setup `s`.
pub fn engine_and_load(r: &Row, s: &Setup) -> (EngineConfig, WorkloadSpec) {
    let (isl, osl, c) = (r.isl, r.osl, r.c);
    let seqs = match s.get("max_num_seqs") {
        "c" => Some(c),
        "default" => None,
        n => n.parse().ok(),
    };
    let mnbt = match s.get("max_num_batched_tokens") {
        "2isl" => Some(2 * isl),
        "aic" => Some(seqs.unwrap_or(512) + isl + 1500),
        "default" => None,
        n => n.parse().ok(),
    };
    let one_k = isl + osl <= 2048;
    let mml = match s.get("max_model_len_extra") {
        "20/200" => isl + osl + if one_k { 20 } else { 200 },
        "workflow" => {
            if one_k {
                2048
            } else {
                9216
            }
        }
        n => isl + osl + n.parse::<u64>().unwrap_or(256),
    };
    let (tp, dp) = launched_shape(r, s);
    let engine = EngineConfig {
        tp,
        dp,
        max_num_seqs: seqs,
        max_num_batched_tokens: mnbt,
        block_size: s.get("block_size").parse().unwrap_or(16),
        gpu_memory_utilization: s.get("gpu_memory_utilization").parse().unwrap_or(0.9),
        max_model_len: Some(mml),
        weights_dtype: requested_weights(s.get("checkpoint"), &r.precision),
        kv_dtype: (s.get("kv_cache_dtype") == "fp8" || modelopt_fp8_kv(s.get("checkpoint")))
            .then_some(Dtype::Fp8),
        // The server's fixed path of the stack the runs went through (both fitted: module
        // docs of `tests/serving_e2e_validation.rs`).
        frontend_overhead_ms: if behind_dynamo(s) {
            DYNAMO_FRONTEND_OVERHEAD_MS
        } else {
            DEFAULT_FRONTEND_OVERHEAD_MS
        },
        async_scheduling: !before_async_scheduling(&r.version),
        // `--compilation-config '{"max_cudagraph_capture_size": N}'` where the launch sets it.
        max_cudagraph_capture_size: s.get("cudagraph_capture").parse().ok(),
        ..EngineConfig::default()
    }
    .with_expert_parallel(s.get("expert_parallel") == "on");
    (engine, load(r, s))
}

/// The benchmark of `r` under setup `s`: its clients (`max_concurrency` C, all sending at
/// once), their prompts and drained warm-ups, and the lengths' spread (`range_ratio`).
pub fn load(r: &Row, s: &Setup) -> WorkloadSpec {
    let (isl, osl, c) = (r.isl, r.osl, r.c);
    let ratio: f64 = s.get("range_ratio").parse().unwrap_or(1.0);
    let lo = |x: u64| ((x as f64 * ratio).floor() as u64).max(1);
    let lengths = if ratio < 1.0 {
        Lengths::Uniform {
            input: (lo(isl), isl),
            output: (lo(osl), osl),
        }
    } else {
        Lengths::Fixed {
            input: isl,
            output: osl,
        }
    };
    let per = |k: &str| knob(s.get(k), c, isl, osl).unwrap_or(0);
    let warmup = per("warmups_per_client") * c;
    WorkloadSpec {
        arrival: Arrival::AllAtOnce,
        max_concurrency: Some(c),
        lengths,
        num_requests: per("prompts_per_client").max(1) * c + warmup,
        warmup,
        warmup_drained: true,
        seed: r.line as u64,
    }
}

/// A setup's knob: a number, or a sum of `c`, `isl`, `osl` and numbers, or `ceil32(…)`,
/// `ceil64(…)`, `max(a;b)`, `if(X>=N;a;b)` (X one of `c`, `isl`, `osl`) of those; a term of
/// the sum may be a product or an integer quotient of those (`4*c`, `c/4`, `2*if(…)`,
/// `2*(c/4)`, left to right, as the launch scripts' shell arithmetic does); `None` for
/// `default` or what this reader does not know.
pub fn knob(text: &str, c: u64, isl: u64, osl: u64) -> Option<u64> {
    let t = text.trim();
    if let Some(inner) = t.strip_prefix('(').and_then(|x| x.strip_suffix(')')) {
        if balanced(inner) {
            return knob(inner, c, isl, osl);
        }
    }
    let sum = split_on(t, '+');
    if sum.len() > 1 {
        return sum.iter().map(|term| knob(term, c, isl, osl)).sum();
    }
    let product = split_on(t, '*');
    if product.len() > 1 {
        return product
            .iter()
            .try_fold(1u64, |acc, f| acc.checked_mul(knob(f, c, isl, osl)?));
    }
    let quotient = split_on(t, '/');
    if quotient.len() > 1 {
        let mut it = quotient.iter();
        let first = knob(it.next()?, c, isl, osl)?;
        return it.try_fold(first, |acc, d| acc.checked_div(knob(d, c, isl, osl)?));
    }
    let call = |name: &str| t.strip_prefix(name).and_then(|x| x.strip_suffix(')'));
    if let Some(inner) = call("ceil32(") {
        return knob(inner, c, isl, osl).map(|v| v.div_ceil(32) * 32);
    }
    if let Some(inner) = call("ceil64(") {
        return knob(inner, c, isl, osl).map(|v| v.div_ceil(64) * 64);
    }
    if let Some(inner) = call("max(") {
        let [a, b] = args(inner)?;
        return Some(knob(a, c, isl, osl)?.max(knob(b, c, isl, osl)?));
    }
    if let Some(inner) = call("if(") {
        let parts: Vec<&str> = split_top(inner);
        let [cond, a, b] = parts.as_slice() else {
            return None;
        };
        let (var, n) = cond.split_once(">=")?;
        let v = match var.trim() {
            "c" => c,
            "isl" => isl,
            "osl" => osl,
            _ => return None,
        };
        let pick = if v >= n.trim().parse::<u64>().ok()? {
            a
        } else {
            b
        };
        return knob(pick, c, isl, osl);
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

/// `a;b` split at its top-level semicolon.
fn args(inner: &str) -> Option<[&str; 2]> {
    match split_top(inner).as_slice() {
        [a, b] => Some([a, b]),
        _ => None,
    }
}

/// Whether the parentheses of `t` pair up from left to right (so that `(t)` is one group).
fn balanced(t: &str) -> bool {
    let mut depth = 0i32;
    for ch in t.chars() {
        match ch {
            '(' => depth += 1,
            ')' => depth -= 1,
            _ => {}
        }
        if depth < 0 {
            return false;
        }
    }
    depth == 0
}

/// `inner` split at the semicolons outside parentheses.
fn split_top(inner: &str) -> Vec<&str> {
    split_on(inner, ';')
}

/// `inner` split at the `sep` characters outside parentheses.
fn split_on(inner: &str, sep: char) -> Vec<&str> {
    let (mut out, mut depth, mut start) = (Vec::new(), 0i32, 0usize);
    for (i, ch) in inner.char_indices() {
        match ch {
            '(' => depth += 1,
            ')' => depth -= 1,
            c if c == sep && depth == 0 => {
                out.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&inner[start..]);
    out
}

/// A simulated row: its result, or why it was not simulated.
pub enum Outcome {
    /// The simulator's result.
    Simulated(Box<SimResult>),
    /// Not simulated, and why.
    Skipped(String),
}

/// Simulates `r` as its benchmark ran, with the engine changed by `tune` (the global terms
/// under study).
pub fn simulate(r: &Row, tune: &dyn Fn(&mut EngineConfig)) -> Outcome {
    simulate_replica(r, tune, &|rep| rep)
}

/// [`simulate`] with the replica changed by `map` once built (terms that live in its step
/// model, such as the CPU time per layer of a step without a CUDA graph).
pub fn simulate_replica(
    r: &Row,
    tune: &dyn Fn(&mut EngineConfig),
    map: &dyn Fn(Replica) -> Replica,
) -> Outcome {
    let Some(s) = setup(r) else {
        return Outcome::Skipped("no setup row".into());
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
    let (mut engine, load) = engine_and_load(r, &s);
    tune(&mut engine);
    match Replica::new(&m, g, &engine, &Efficiencies::default())
        .map(map)
        .and_then(|mut rep| rep.run(&load, None, Budget::default()))
    {
        Ok(res) => Outcome::Simulated(Box::new(res)),
        Err(e) => Outcome::Skipped(format!("the simulator refuses it: {e:?}")),
    }
}
