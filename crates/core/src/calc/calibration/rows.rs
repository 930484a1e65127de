//! The measured benchmark rows: the compiled projection of `data/perf_calibration.csv`
//! ([`CALIBRATION_CSV`], [`APP_COLUMNS`]), each row mapped to (model, accelerator, TP, batch,
//! lengths, precisions, metric, value) or skipped with a reason, and the split into the TRAINING
//! and TEST sets (every third mappable T1/T2 row held out, T3 rows always in the test set).

use super::models::{dense_model, map_model};
use crate::base::dtype::Dtype;
use crate::calc::perf::{max_batch_for, Workload};
use crate::hardware::catalog::Catalog;
use serde::{Deserialize, Serialize};

/// The compiled-in calibration table: `data/perf_calibration.csv` projected on [`APP_COLUMNS`]
/// (same rows on the same lines; sources and quotes stay in the full file).
pub const CALIBRATION_CSV: &str = include_str!("../../../../../data/perf_calibration.app.csv");

/// The columns of [`CALIBRATION_CSV`], in order: the full file's columns of the same name, and
/// `tier`, the first four characters of its `quote_or_table_ref` (`[T1]`, `[T2]` or `[T3]`).
pub const APP_COLUMNS: [&str; 13] = [
    "model",
    "gpu",
    "num_gpus",
    "tp",
    "engine",
    "precision_weights",
    "precision_kv",
    "batch_or_concurrency",
    "input_len",
    "output_len",
    "metric",
    "value",
    "tier",
];

/// Batch assumed for "max load" rows (engine-chosen in-flight batch): the memory limit, capped
/// here (the engine's scheduler limit; trtllm-bench tunes its own).
pub const MAX_LOAD_BATCH_CAP: u64 = 2048;

/// A static batch up to this factor above the model's memory limit is still taken as served
/// at once (engines size the KV pool a little differently from `DEFAULT_GPU_MEMORY_UTILIZATION`).
pub const MEMORY_TOLERANCE: f64 = 1.2;

/// A measured quantity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// Time to first token, ms.
    Ttft,
    /// Time per output token, ms.
    Tpot,
    /// End-to-end request latency, ms.
    E2e,
    /// Output tokens per second, all GPUs of the replica.
    Throughput,
}

impl Metric {
    /// All metrics, in report order.
    pub const ALL: &'static [Metric] =
        &[Metric::Ttft, Metric::Tpot, Metric::E2e, Metric::Throughput];

    /// Stable id.
    pub fn id(self) -> &'static str {
        match self {
            Metric::Ttft => "ttft_ms",
            Metric::Tpot => "tpot_ms",
            Metric::E2e => "e2e_latency_ms",
            Metric::Throughput => "output_tokens_per_s",
        }
    }

    /// The target for the held-out median absolute error, when there is one.
    pub fn target(self) -> Option<f64> {
        match self {
            Metric::Ttft => Some(0.25),
            Metric::Tpot => Some(0.15),
            Metric::E2e => Some(0.20),
            Metric::Throughput => None,
        }
    }
}

/// Trust tier of a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Tier {
    /// Full setup stated.
    T1,
    /// Some setup missing.
    T2,
    /// Anecdotal.
    T3,
}

/// One mapped calibration row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CalRow {
    /// 1-based line in the CSV.
    pub line: usize,
    /// Model name (canonical).
    pub model: String,
    /// Accelerator id.
    pub gpu: String,
    /// TP degree.
    pub tp: u64,
    /// Batch (static, or assumed for max-load rows).
    pub batch: u64,
    /// Prompt tokens.
    pub input_len: u64,
    /// Generated tokens.
    pub output_len: u64,
    /// Weight precision.
    pub weights: Dtype,
    /// KV precision.
    pub kv: Dtype,
    /// Metric.
    pub metric: Metric,
    /// Measured value (ms for times; tokens/s over the replica for throughput).
    pub measured: f64,
    /// Trust tier.
    pub tier: Tier,
    /// Engine.
    pub engine: String,
    /// Assumptions made to map the row (empty when none).
    pub assumptions: Vec<String>,
    /// Derived from another row (e2e implied by a static-batch throughput); never fitted.
    pub derived: bool,
    /// Held out of the fit.
    pub test: bool,
}

/// A row that could not be mapped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skipped {
    /// 1-based line in the CSV.
    pub line: usize,
    /// Model as written.
    pub model: String,
    /// Metric as written.
    pub metric: String,
    /// Why.
    pub reason: String,
}

/// The calibration set: mapped rows and skipped rows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CalSet {
    /// Mapped rows (timing rows and derived e2e rows).
    pub rows: Vec<CalRow>,
    /// Skipped rows with reasons.
    pub skipped: Vec<Skipped>,
    /// Data rows in the file.
    pub total_rows: usize,
}

fn lead_u64(s: &str) -> Option<u64> {
    let d: String = s
        .trim()
        .chars()
        .take_while(|c| c.is_ascii_digit())
        .collect();
    d.parse().ok()
}

/// Maps a GPU description of the CSV to a catalog id.
pub fn map_gpu(s: &str) -> Option<&'static str> {
    let t = s.to_ascii_lowercase();
    let id = if t.starts_with("h100") {
        if t.contains("pcie") {
            "h100-pcie"
        } else {
            "h100-sxm"
        }
    } else if t.starts_with("h200") {
        "h200-sxm"
    } else if t.starts_with("gh200") {
        "gh200-96gb"
    } else if t.starts_with("b200") {
        "b200"
    } else if t.starts_with("a100") {
        if t.contains("variant not stated") {
            return None;
        }
        match (t.contains("pcie"), t.contains("40gb")) {
            (true, true) => "a100-pcie-40gb",
            (true, false) => "a100-pcie-80gb",
            (false, true) => "a100-sxm-40gb",
            (false, false) => "a100-sxm-80gb",
        }
    } else if t.starts_with("l40s") {
        "l40s"
    } else if t.starts_with("a10g") {
        "a10g"
    } else if t.starts_with("a10-") {
        "a10"
    } else if t.starts_with("mi300x") {
        "mi300x"
    } else {
        return None;
    };
    Some(id)
}

fn map_dtype(s: &str, what: &str) -> Result<(Dtype, Option<String>), String> {
    let t = s.to_ascii_lowercase();
    if t.contains("fp8") {
        Ok((Dtype::Fp8, None))
    } else if t.contains("fp4") {
        Ok((Dtype::Fp4, None))
    } else if t.contains("gptq") || t.contains("4-bit") || t.contains("awq") {
        Ok((Dtype::Int4, None))
    } else if t.contains("fp16")
        || t.contains("bf16")
        || t.contains("mixed")
        || t.starts_with("none")
    {
        Ok((Dtype::Fp16, None))
    } else if t.contains("not stated") {
        Ok((
            Dtype::Bf16,
            Some(format!("{what} precision not stated: 16-bit assumed")),
        ))
    } else {
        Err(format!("{what} precision \"{s}\" not understood"))
    }
}

/// Reads and maps the compiled-in table against a catalog.
pub fn load(catalog: &Catalog) -> CalSet {
    let recs = crate::base::csv::parse(CALIBRATION_CSV).unwrap_or_default();
    let mut rows = Vec::new();
    let mut skipped = Vec::new();
    let Some((header, data)) = recs.split_first() else {
        return CalSet {
            rows,
            skipped,
            total_rows: 0,
        };
    };
    let col = |name: &str| header.fields.iter().position(|h| h == name);
    let cols = APP_COLUMNS.map(col);
    let mut mappable = 0usize;
    for crate::base::csv::Record { line, fields: f } in data {
        let get = |i: usize| {
            cols.get(i)
                .copied()
                .flatten()
                .and_then(|c| f.get(c))
                .map_or("", |s| s.as_str())
        };
        let (model_s, metric_s) = (get(0), get(10));
        let skip = |reason: &str| Skipped {
            line: *line,
            model: model_s.into(),
            metric: metric_s.into(),
            reason: reason.into(),
        };
        match map_row(catalog, &get) {
            Ok(mut r) => {
                r.line = *line;
                // T3 (anecdotal) rows are never fitted: they are evaluated with the test rows.
                if r.tier == Tier::T3 {
                    r.test = true;
                } else {
                    r.test = mappable % 3 == 2;
                    mappable += 1;
                }
                rows.push(r);
            }
            Err(why) => skipped.push(skip(&why)),
        }
    }
    // e2e implied by static-batch throughput: e2e = B × O / (tokens/s), evaluated, never fitted.
    let implied: Vec<CalRow> = rows
        .iter()
        .filter(|r| {
            r.metric == Metric::Throughput
                && !r.assumptions.iter().any(|a| a.starts_with("max load"))
        })
        .map(|r| CalRow {
            metric: Metric::E2e,
            measured: r.batch as f64 * r.output_len as f64 / r.measured * 1e3,
            derived: true,
            assumptions: {
                let mut a = r.assumptions.clone();
                a.push("e2e implied by the static-batch throughput (B × O / tokens/s)".into());
                a
            },
            ..r.clone()
        })
        .collect();
    rows.extend(implied);
    CalSet {
        rows,
        skipped,
        total_rows: data.len(),
    }
}

fn map_row<'a>(catalog: &Catalog, get: &dyn Fn(usize) -> &'a str) -> Result<CalRow, String> {
    let metric = match get(10) {
        "ttft_ms" => Metric::Ttft,
        "tpot_ms" => Metric::Tpot,
        "e2e_latency_ms" => Metric::E2e,
        "output_tok_s_total" | "output_tok_s_per_gpu" => Metric::Throughput,
        m => {
            return Err(format!(
                "metric \"{m}\" is not a latency or throughput the model predicts"
            ))
        }
    };
    let spec = map_model(get(0))
        .ok_or_else(|| format!("model \"{}\" has no configuration here", get(0)))?;
    let gpu_id = map_gpu(get(1)).ok_or_else(|| {
        format!(
            "accelerator \"{}\" is not identifiable in the catalog",
            get(1)
        )
    })?;
    let gpu = catalog.get(gpu_id).map_err(|e| e.to_string())?;
    let tp = lead_u64(get(3))
        .filter(|t| *t >= 1)
        .ok_or("TP degree not stated")?;
    let num_gpus = lead_u64(get(2)).unwrap_or(tp);
    let input_len = lead_u64(get(8))
        .filter(|v| *v >= 1)
        .ok_or("prompt length not stated or variable")?;
    let output_len = lead_u64(get(9))
        .filter(|v| *v >= 1)
        .ok_or("output length not stated or variable")?;
    let mut assumptions = Vec::new();
    let (weights, a) = map_dtype(get(5), "weight")?;
    assumptions.extend(a);
    let (kv, a) = map_dtype(get(6), "KV")?;
    assumptions.extend(a);
    let kv = if kv == Dtype::Int4 { Dtype::Fp16 } else { kv };
    let value: f64 = get(11)
        .trim()
        .parse()
        .map_err(|_| "value is not a number".to_string())?;
    if !(value.is_finite() && value > 0.0) {
        return Err("value is not a positive number".into());
    }
    let measured = if get(10) == "output_tok_s_per_gpu" {
        value * num_gpus as f64
    } else {
        value
    };
    let tier = match get(12).get(..4) {
        Some("[T1]") => Tier::T1,
        Some("[T2]") => Tier::T2,
        _ => Tier::T3,
    };
    let model = dense_model(spec);
    let mut wl = Workload::new(1, input_len, output_len, tp);
    wl.weights_dtype = Some(weights);
    wl.kv_dtype = Some(kv);
    let max_b = max_batch_for(&model, gpu, &wl);
    let batch_s = get(7).to_ascii_lowercase();
    let batch = if batch_s.starts_with("max load") {
        assumptions.push(format!(
            "max load (engine-chosen in-flight batch): batch = min(memory limit {max_b}, {MAX_LOAD_BATCH_CAP}) as a static batch"
        ));
        max_b.min(MAX_LOAD_BATCH_CAP)
    } else {
        lead_u64(&batch_s)
            .filter(|b| *b >= 1)
            .ok_or("batch not stated")?
    };
    // Engines size the KV pool a little differently; only a batch well beyond the limit means
    // requests queued (LMDeploy 64 × 4096 tokens on one A100: limit 29).
    if batch == 0 || batch as f64 > max_b as f64 * MEMORY_TOLERANCE {
        return Err(format!(
            "batch {batch} does not fit in memory by this model (limit {max_b}): the engine queued requests, so the figure includes queueing"
        ));
    }
    Ok(CalRow {
        line: 0,
        model: spec.name.into(),
        gpu: gpu_id.into(),
        tp,
        batch,
        input_len,
        output_len,
        weights,
        kv,
        metric,
        measured,
        tier,
        engine: get(4).into(),
        assumptions,
        derived: false,
        test: false,
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_compiled_app_csv_is_the_projection_of_the_sourced_file() {
        // Each app column is the full file's column of the same name, except the tier: the
        // quote's first four characters (all that `map_row` reads of it).
        let same: fn(&str) -> &str = |s| s;
        let tier: fn(&str) -> &str = |q| q.get(..4).unwrap_or("");
        let cols: Vec<crate::base::csv::Column> = super::APP_COLUMNS
            .iter()
            .map(|c| match *c {
                "tier" => (*c, "quote_or_table_ref", tier),
                _ => (*c, *c, same),
            })
            .collect();
        let full = include_str!("../../../../../data/perf_calibration.csv");
        let want = crate::base::csv::project(full, &cols);
        crate::base::csv::check_projection(
            super::CALIBRATION_CSV,
            &want,
            "data/perf_calibration.app.csv",
        );
        // Same rows on the same lines (line numbers point into the sourced file).
        let lines = |t: &str| {
            crate::base::csv::parse(t)
                .unwrap_or_else(|e| panic!("{e}"))
                .iter()
                .map(|r| r.line)
                .collect::<Vec<_>>()
        };
        assert_eq!(lines(super::CALIBRATION_CSV), lines(full));
    }

    use super::*;
    use crate::hardware::catalog::Catalog;

    fn cat() -> &'static Catalog {
        Catalog::builtin()
    }

    #[test]
    fn every_row_is_mapped_or_skipped_with_a_reason() {
        let set = load(cat());
        assert_eq!(set.total_rows, 128);
        let mapped = set.rows.iter().filter(|r| !r.derived).count();
        assert_eq!(mapped + set.skipped.len(), set.total_rows);
        assert!(set.skipped.iter().all(|s| !s.reason.is_empty()));
        assert!(mapped >= 60, "{mapped}");
        // Lines are unique among mapped rows, and T3 rows are never in the training set.
        assert!(set
            .rows
            .iter()
            .filter(|r| r.tier == Tier::T3)
            .all(|r| r.test));
        let train = set.rows.iter().filter(|r| !r.test && !r.derived).count();
        let test = set.rows.iter().filter(|r| r.test && !r.derived).count();
        assert!(train > 2 * test - 10 && test > 15, "{train} / {test}");
    }
}
