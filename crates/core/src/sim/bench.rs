//! "Bring your own benchmark": reading what `vllm bench serve` (or `benchmark_serving.py`)
//! reports, so a run can be simulated on the same setup and compared.
//!
//! Two formats: the text summary it prints (`============ Serving Benchmark Result
//! ============`, one `Label: value` line per figure, preceded in recent versions by `Traffic
//! request rate:`, `Burstiness factor:` and `Maximum request concurrency:`, or with `Request
//! rate configured (RPS):` inside), and the JSON result file of `--save-result` (keys
//! `request_rate`, `max_concurrency`, `burstiness`, `num_prompts`, `completed`,
//! `request_throughput`, `mean_ttft_ms`, …, and with `--save-detailed` the per-request
//! `input_lens` and `output_lens`). The setup read: rate, concurrency cap, burstiness, request
//! count and lengths (the per-request lengths when the file has them, else fixed lengths at the
//! stated means: total tokens / successful requests). The model, the GPU and the engine flags
//! are not in either format; the caller gives them.

use crate::base::error::{CalcError, Phrase};
use crate::base::json;
use crate::sim::result::SimResult;
use crate::sim::workload::{Arrival, Lengths, WorkloadSpec};
use serde::{Deserialize, Serialize};

/// A measured benchmark: its setup and its statistics under vLLM's keys.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchRun {
    /// `request_rate` (infinite: all at once).
    pub request_rate: f64,
    /// `max_concurrency`.
    pub max_concurrency: Option<u64>,
    /// `burstiness` (1 = Poisson).
    pub burstiness: f64,
    /// Requests sent.
    pub num_prompts: u64,
    /// Lengths as stated (per request, or fixed at the means).
    pub lengths: Lengths,
    /// `model_id` when the file names it.
    pub model: Option<String>,
    /// Statistics under vLLM's result-file keys, in the order read.
    pub measured: Vec<(String, f64)>,
}

/// One statistic measured against predicted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// vLLM's key (`median_ttft_ms`, …).
    pub key: String,
    /// Measured value.
    pub measured: f64,
    /// Simulated value.
    pub predicted: f64,
    /// `(predicted − measured) / measured`.
    pub relative_error: f64,
}

fn unknown(text: &str) -> CalcError {
    CalcError::BadValue {
        key: "benchmark".into(),
        found: Phrase::quoted(text.trim()),
        expected: Phrase::tr("exp_sim_bench_format"),
    }
}

/// The vLLM key of a text summary label (`Median TTFT (ms):` → `median_ttft_ms`).
fn key_of(label: &str) -> Option<String> {
    let fixed = match label {
        "Successful requests" => Some("completed"),
        "Benchmark duration (s)" => Some("duration"),
        "Total input tokens" => Some("total_input_tokens"),
        "Total generated tokens" => Some("total_output_tokens"),
        "Request throughput (req/s)" => Some("request_throughput"),
        "Request goodput (req/s)" => Some("request_goodput"),
        "Output token throughput (tok/s)" => Some("output_throughput"),
        "Total Token throughput (tok/s)" | "Total token throughput (tok/s)" => {
            Some("total_token_throughput")
        }
        _ => None,
    };
    if let Some(k) = fixed {
        return Some(k.to_string());
    }
    let rest = label.strip_suffix(" (ms)")?;
    let (stat, metric) = rest.split_once(' ')?;
    let stat = match stat {
        "Mean" => "mean".to_string(),
        "Median" => "median".to_string(),
        "Std" => "std".to_string(),
        p if p.starts_with('P') && p[1..].chars().all(|c| c.is_ascii_digit() || c == '.') => {
            p.to_ascii_lowercase()
        }
        _ => return None,
    };
    let metric = match metric {
        "TTFT" | "TPOT" | "ITL" | "E2EL" => metric.to_ascii_lowercase(),
        _ => return None,
    };
    Some(format!("{stat}_{metric}_ms"))
}

fn rate_of(v: &str) -> Option<f64> {
    let t = v.trim();
    if t.eq_ignore_ascii_case("inf") {
        return Some(f64::INFINITY);
    }
    t.parse::<f64>().ok().filter(|r| *r > 0.0)
}

fn measured(m: &[(String, f64)], k: &str) -> Option<f64> {
    m.iter().find(|(key, _)| key == k).map(|(_, v)| *v)
}

/// Fixed lengths at the stated means (total tokens / successful requests).
fn mean_lengths(m: &[(String, f64)]) -> Option<Lengths> {
    let n = measured(m, "completed").filter(|n| *n > 0.0)?;
    let i = measured(m, "total_input_tokens")? / n;
    let o = measured(m, "total_output_tokens")? / n;
    (i >= 0.5 && o >= 0.5).then(|| Lengths::Fixed {
        input: i.round() as u64,
        output: o.round() as u64,
    })
}

fn parse_text(text: &str) -> Result<BenchRun, CalcError> {
    let mut m: Vec<(String, f64)> = Vec::new();
    let (mut rate, mut conc, mut burst) = (None, None, 1.0);
    for line in text.lines() {
        let line = line.trim().trim_start_matches('#').trim();
        let Some((label, value)) = line.split_once(':') else {
            continue;
        };
        let (label, value) = (label.trim(), value.trim());
        match label {
            "Traffic request rate" | "Request rate configured (RPS)" => rate = rate_of(value),
            "Maximum request concurrency" => conc = value.parse::<u64>().ok(),
            "Burstiness factor" => {
                burst = value
                    .split_whitespace()
                    .next()
                    .and_then(|v| v.parse::<f64>().ok())
                    .filter(|b| *b > 0.0)
                    .unwrap_or(1.0);
            }
            _ => {
                if let (Some(k), Ok(v)) = (key_of(label), value.parse::<f64>()) {
                    m.push((k, v));
                }
            }
        }
    }
    if measured(&m, "completed").is_none() || measured(&m, "mean_ttft_ms").is_none() {
        return Err(unknown(text));
    }
    let lengths = mean_lengths(&m).ok_or_else(|| unknown(text))?;
    Ok(BenchRun {
        request_rate: rate.unwrap_or(f64::INFINITY),
        max_concurrency: conc,
        burstiness: burst,
        num_prompts: measured(&m, "completed").unwrap_or(0.0) as u64,
        lengths,
        model: None,
        measured: m,
    })
}

fn parse_json(text: &str) -> Result<BenchRun, CalcError> {
    let v = json::parse(text)?;
    let obj = v.as_object().ok_or_else(|| unknown(text))?;
    let mut m: Vec<(String, f64)> = Vec::new();
    for (k, val) in obj {
        let numeric = k == "completed"
            || k == "duration"
            || k.starts_with("total_")
            || k.ends_with("_throughput")
            || k == "request_goodput"
            || (k.ends_with("_ms") && !k.starts_with("percentiles"));
        if let (true, Some(x)) = (numeric, val.as_f64()) {
            m.push((k.clone(), x));
        }
    }
    if measured(&m, "completed").is_none() || measured(&m, "mean_ttft_ms").is_none() {
        return Err(unknown(text));
    }
    let rate = match obj.get("request_rate") {
        Some(r) if r.is_string() => rate_of(r.as_str().unwrap_or("inf")),
        Some(r) if json::non_finite(r).is_some() => Some(f64::INFINITY),
        Some(r) => r.as_f64().filter(|x| *x > 0.0),
        None => None,
    };
    let lens = |k: &str| -> Vec<u64> {
        obj.get(k)
            .and_then(|a| a.as_array())
            .map(|a| a.iter().filter_map(|x| x.as_u64()).collect())
            .unwrap_or_default()
    };
    let (ins, outs) = (lens("input_lens"), lens("output_lens"));
    let lengths = if !ins.is_empty() && ins.len() == outs.len() {
        Lengths::List {
            pairs: ins
                .into_iter()
                .zip(outs)
                .map(|(i, o)| (i.max(1), o.max(1)))
                .collect(),
        }
    } else {
        mean_lengths(&m).ok_or_else(|| unknown(text))?
    };
    let completed = measured(&m, "completed").unwrap_or(0.0) as u64;
    Ok(BenchRun {
        request_rate: rate.unwrap_or(f64::INFINITY),
        max_concurrency: obj.get("max_concurrency").and_then(|c| c.as_u64()),
        burstiness: obj
            .get("burstiness")
            .and_then(|b| b.as_f64())
            .filter(|b| *b > 0.0)
            .unwrap_or(1.0),
        num_prompts: obj
            .get("num_prompts")
            .and_then(|n| n.as_u64())
            .unwrap_or(completed)
            .max(1),
        lengths,
        model: obj
            .get("model_id")
            .and_then(|s| s.as_str())
            .map(str::to_string),
        measured: m,
    })
}

/// Reads a `vllm bench serve` text summary or JSON result file.
pub fn parse_bench(text: &str) -> Result<BenchRun, CalcError> {
    let t = text.trim_start_matches('\u{feff}').trim();
    if t.is_empty() {
        return Err(CalcError::EmptyInput);
    }
    if t.starts_with('{') {
        parse_json(t)
    } else {
        parse_text(t)
    }
}

impl BenchRun {
    /// The same load for the simulator.
    pub fn workload(&self, seed: u64) -> WorkloadSpec {
        WorkloadSpec {
            arrival: Arrival::from_rate(self.request_rate, self.burstiness),
            max_concurrency: self.max_concurrency,
            lengths: self.lengths.clone(),
            num_requests: self.num_prompts,
            warmup: 0,
            warmup_drained: false,
            seed,
        }
    }

    /// Every measured statistic the simulation also reports, measured against predicted.
    pub fn compare(&self, r: &SimResult) -> Vec<Comparison> {
        let predicted = r.vllm_fields();
        self.measured
            .iter()
            .filter_map(|(k, meas)| {
                let (_, pred) = predicted.iter().find(|(pk, _)| pk == k)?;
                Some(Comparison {
                    key: k.clone(),
                    measured: *meas,
                    predicted: *pred,
                    relative_error: if *meas != 0.0 {
                        (pred - meas) / meas
                    } else {
                        f64::NAN
                    },
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = include_str!("../../../../tests/fixtures/bench/vllm_bench_summary.txt");
    const JSON: &str = include_str!("../../../../tests/fixtures/bench/vllm_bench_result.json");

    #[test]
    fn reads_the_text_summary() {
        let b = parse_bench(TEXT).unwrap();
        assert_eq!(b.request_rate, f64::INFINITY);
        assert_eq!(b.max_concurrency, Some(32));
        assert_eq!(b.num_prompts, 32);
        // 65,536 input and 65,536 generated tokens over 32 requests.
        assert_eq!(
            b.lengths,
            Lengths::Fixed {
                input: 2048,
                output: 2048
            }
        );
        assert_eq!(measured(&b.measured, "median_tpot_ms"), Some(70.23));
        assert_eq!(measured(&b.measured, "p99_ttft_ms"), Some(10999.46));
        assert_eq!(measured(&b.measured, "request_throughput"), Some(0.21));
    }

    #[test]
    fn reads_the_json_result_file() {
        let b = parse_bench(JSON).unwrap();
        assert_eq!(b.request_rate, 4.0);
        assert_eq!(b.max_concurrency, None);
        assert_eq!(b.num_prompts, 5);
        assert_eq!(
            b.lengths,
            Lengths::List {
                pairs: vec![(512, 128), (300, 64), (1024, 200), (128, 32), (700, 90)]
            }
        );
        assert_eq!(b.model.as_deref(), Some("Qwen/Qwen3-8B"));
        assert_eq!(measured(&b.measured, "mean_itl_ms"), Some(7.9));
    }

    #[test]
    fn unknown_text_is_refused_with_a_sentence() {
        for t in ["hello", "{\"a\": 1}", "Successful requests: 3", ""] {
            let e = parse_bench(t).unwrap_err();
            assert!(!e.to_string().is_empty());
        }
    }
}
