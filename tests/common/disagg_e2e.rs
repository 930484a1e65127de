//! The measured disaggregated runs (`fixtures/measured_serving_e2e.csv`, `mode=disagg`, the
//! rows that give both pools' worker counts) and how each was launched
//! (`fixtures/e2e_setups_disagg.csv`: each pool's workers, shape and engine flags, the link,
//! the client; provenance in `fixtures/SOURCES.md`), simulated as the benchmark ran them.
//! Used by `tests/disagg_e2e_validation.rs`.

use super::e2e::{
    config_text, field, gpu, knob, load, modelopt_fp8_kv, records, requested_weights, rows_of,
    Fields, Row, Setup,
};
use llm_serving_calculator::core::base::Dtype;
use llm_serving_calculator::core::calc::Efficiencies;
use llm_serving_calculator::core::model::{parse_model_text, ModelDesc};
use llm_serving_calculator::core::sim::{
    simulate_disagg, Budget, DisaggConfig, EngineConfig, KvLink, Replica, SimResult, WorkloadSpec,
    DEFAULT_KV_TRANSFER_LATENCY_MS, DYNAMO_FRONTEND_OVERHEAD_MS,
};
use std::sync::OnceLock;

const SETUPS: &str = include_str!("../fixtures/e2e_setups_disagg.csv");

fn setups() -> &'static [(usize, Fields)] {
    static S: OnceLock<Vec<(usize, Fields)>> = OnceLock::new();
    S.get_or_init(|| records(SETUPS))
}

/// The disaggregated rows that give both pools' worker counts.
pub fn rows() -> Vec<Row> {
    rows_of("disagg", &|f| {
        !field(f, "prefill_num_workers").is_empty() && !field(f, "decode_num_workers").is_empty()
    })
}

/// The config id a row's source names (`config_id=N`).
fn config_id(r: &Row) -> Option<&str> {
    field(r.fields(), "silicon_data_source")
        .split(';')
        .find_map(|p| p.trim().strip_prefix("config_id="))
}

/// Whether a setup's `points` (`isl/osl:cA|B|…`, several separated by `;`) holds `r`'s.
fn covers(points: &str, r: &Row) -> bool {
    points.split([';', ' ']).any(|p| {
        let Some((lens, cs)) = p.trim().split_once(":c") else {
            return false;
        };
        lens == format!("{}/{}", r.isl, r.osl)
            && cs.split('|').any(|c| c.parse::<u64>().ok() == Some(r.c))
    })
}

/// The setup line of `r`: same engine, model, GPU, precision and version, its config id among
/// the line's, its lengths and concurrency among the line's points.
pub fn setup(r: &Row) -> Option<Setup> {
    let id = config_id(r)?;
    setups().iter().map(|(_, s)| Setup::of(s)).find(|s| {
        s.get("backend") == r.engine.id()
            && s.get("model_path") == r.model
            && s.get("system") == r.system
            && s.get("precision") == r.precision
            && s.get("backend_version") == r.version
            && s.get("config_ids").split(['|', ',', ' ']).any(|x| x == id)
            && covers(s.get("points"), r)
    })
}

/// The served checkpoint's name as the e2e fixtures know it (the setup's note removed).
fn checkpoint(s: &Setup) -> String {
    let c = s.get("checkpoint").split(" (").next().unwrap_or("").trim();
    match c {
        "nvidia/DeepSeek-R1-0528-NVFP4-v2" => "nvidia/DeepSeek-R1-0528-FP4-V2".into(),
        other => other.into(),
    }
}

/// The model a setup serves.
pub fn model(s: &Setup) -> Option<ModelDesc> {
    parse_model_text(&config_text(&checkpoint(s))?).ok()
}

/// A number of the setup for `r` (`None`: empty, `default…`, or not above 0).
fn value(s: &Setup, k: &str, r: &Row) -> Option<u64> {
    let v = s.get(k).trim();
    if v.is_empty() || v.starts_with("default") {
        return None;
    }
    knob(v, r.c, r.isl, r.osl).filter(|&x| x > 0)
}

/// One pool's engine: its shape and flags from the setup's `{pool}_…` columns.
fn pool_engine(r: &Row, s: &Setup, pool: &str) -> Option<EngineConfig> {
    let col = |k: &str| format!("{pool}_{k}");
    let shape = |k: &str| value(s, &col(k), r).unwrap_or(1);
    let fraction = s.get(&col("mem_fraction")).trim().parse::<f64>().ok();
    let ckpt = checkpoint(s);
    Some(EngineConfig {
        engine: r.engine,
        tp: shape("tp"),
        dp: shape("dp"),
        ep: shape("ep"),
        max_num_seqs: value(s, &col("max_batch_size"), r),
        max_num_batched_tokens: value(s, &col("max_num_tokens"), r),
        page_size: value(s, "page_size", r),
        memory_fraction: fraction.filter(|f| *f > 0.0 && *f <= 1.0),
        max_model_len: Some(r.isl + r.osl + 256),
        weights_dtype: requested_weights(&ckpt, &r.precision),
        kv_dtype: (s.get("kv_cache_dtype").starts_with("fp8") || modelopt_fp8_kv(&ckpt))
            .then_some(Dtype::Fp8),
        frontend_overhead_ms: DYNAMO_FRONTEND_OVERHEAD_MS,
        ..EngineConfig::default()
    })
}

/// The link the setup names.
fn link(s: &Setup) -> KvLink {
    if s.get("kv_transfer").contains("NVLink") {
        KvLink::Nvlink
    } else {
        KvLink::Ib
    }
}

/// The two pools, the link and the benchmark of `r` under `s`.
pub fn engines_and_load(
    r: &Row,
    s: &Setup,
) -> Option<(EngineConfig, EngineConfig, DisaggConfig, WorkloadSpec)> {
    let p = pool_engine(r, s, "prefill")?;
    let d = pool_engine(r, s, "decode")?;
    let cfg = DisaggConfig {
        prefill_workers: value(s, "prefill_workers", r)?,
        decode_workers: value(s, "decode_workers", r)?,
        link: link(s),
        transfer_latency_ms: DEFAULT_KV_TRANSFER_LATENCY_MS,
    };
    // The coordinator sends the warm-up as the stream's first requests (not drained).
    let wl = WorkloadSpec {
        warmup_drained: false,
        ..load(r, s)
    };
    Some((p, d, cfg, wl))
}

/// A simulated row: its result, or why it was not simulated.
pub enum Outcome {
    Simulated(Box<SimResult>),
    Skipped(String),
}

/// Simulates `r` as its benchmark ran, the link's latency `latency_ms`.
pub fn simulate(r: &Row, latency_ms: f64) -> Outcome {
    let Some(s) = setup(r) else {
        return Outcome::Skipped("no setup line (the launch was not resolved)".into());
    };
    if let Some((_, why)) = s.get("skip_when").split_once(": ") {
        return Outcome::Skipped(why.to_string());
    }
    let Some(g) = gpu(&r.system) else {
        return Outcome::Skipped(format!("GPU {} not in the catalog", r.system));
    };
    let Some(m) = model(&s) else {
        return Outcome::Skipped(format!("no config for {}", s.get("checkpoint")));
    };
    let Some((p, d, mut cfg, wl)) = engines_and_load(r, &s) else {
        return Outcome::Skipped("a pool's shape or count not read".into());
    };
    cfg.transfer_latency_ms = latency_ms;
    let eff = Efficiencies::default();
    let run = Replica::new(&m, g, &p, &eff).and_then(|prefill| {
        let decode = Replica::new(&m, g, &d, &eff)?;
        simulate_disagg(&prefill, &decode, g, &cfg, &wl, None, Budget::default())
    });
    match run {
        Ok(res) if res.completed > 0 => Outcome::Simulated(Box::new(res)),
        Ok(_) => Outcome::Skipped("the simulated deployment completed no request".into()),
        Err(e) => Outcome::Skipped(format!("the simulator refuses it: {e:?}")),
    }
}
