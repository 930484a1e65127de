//! The results as files: CSV (one row per compared GPU) and JSON (stable keys), from a
//! [`Report`].
//!
//! CSV follows RFC 4180: comma-separated, CRLF line ends, a field is quoted when it holds a
//! comma, a quote, CR or LF, and quotes inside are doubled. Every column header names its unit.
//! Spreadsheets run a cell that starts with `=`, `+`, `-` or `@` (or a tab / CR) as a formula,
//! and model and GPU names are untrusted text, so such cells get a leading `'` (OWASP's CSV
//! injection advice). Numbers written here are never negative, so no number is altered.

use crate::present::report::{GpuReport, Report, Verdict};
use serde::Serialize;

/// Version tag written into the JSON export (`format`), bumped if a key changes meaning.
pub const JSON_FORMAT: &str = "llm-serving-calculator/results-v1";

/// Column headers of the CSV export, in order, each with its unit.
pub const CSV_HEADERS: &[&str] = &[
    "model",
    "gpu_id",
    "gpu",
    "gpus_per_replica",
    "weight_dtype",
    "kv_dtype",
    "params_total",
    "params_active",
    "context_len (tokens)",
    "concurrency (requests)",
    "weights_total (B)",
    "kv_per_token (B)",
    "kv_per_request (B)",
    "kv_total (B)",
    "capacity_per_gpu (B)",
    "weights_per_gpu (B)",
    "kv_per_gpu (B)",
    "activations_per_gpu (B)",
    "overhead_per_gpu (B)",
    "free_per_gpu (B)",
    "over_per_gpu (B)",
    "verdict",
    "requests_theoretical (requests)",
    "requests_practical (requests)",
    "requests_rule (requests)",
    "vllm_max_concurrency (x)",
    "price_per_replica (USD/h)",
    "cost_per_request (USD/request-hour)",
];

/// Makes a cell safe for spreadsheets: a leading `'` when it starts with a formula trigger
/// (`=`, `+`, `-`, `@`, tab or CR).
pub fn defuse(cell: &str) -> String {
    match cell.chars().next() {
        Some('=' | '+' | '-' | '@' | '\t' | '\r') => format!("'{cell}"),
        _ => cell.to_string(),
    }
}

/// One CSV field: defused, then quoted per RFC 4180 when needed.
pub fn csv_field(cell: &str) -> String {
    let c = defuse(cell);
    if c.contains([',', '"', '\r', '\n']) {
        format!("\"{}\"", c.replace('"', "\"\""))
    } else {
        c
    }
}

fn verdict_id(v: Verdict) -> &'static str {
    match v {
        Verdict::Fits => "fits",
        Verdict::Partial => "partial",
        Verdict::DoesNotFit => "does_not_fit",
    }
}

/// A float for a file: plain decimal, empty when absent or not finite.
fn float_cell(v: Option<f64>) -> String {
    match v {
        Some(x) if x.is_finite() => format!("{x}"),
        _ => String::new(),
    }
}

fn row(r: &Report, g: &GpuReport) -> Vec<String> {
    let b = &g.bar;
    vec![
        r.model.name.clone(),
        g.key.clone(),
        g.accelerator.name.clone(),
        r.tp.to_string(),
        r.weight_dtype.id().to_string(),
        r.kv_dtype.id().to_string(),
        r.model.params.total.to_string(),
        r.model.params.active.to_string(),
        r.context_len.to_string(),
        r.concurrency.to_string(),
        r.weights.0.to_string(),
        r.kv_per_token.0.to_string(),
        r.kv_per_request.0.to_string(),
        r.kv_total.0.to_string(),
        b.capacity.0.to_string(),
        b.weights.0.to_string(),
        b.kv.0.to_string(),
        b.activations.0.to_string(),
        b.overhead.0.to_string(),
        b.free.0.to_string(),
        b.over.0.to_string(),
        verdict_id(g.verdict).to_string(),
        g.requests_theoretical.to_string(),
        g.requests_practical.to_string(),
        g.requests.to_string(),
        float_cell(Some(g.vllm_concurrency)),
        float_cell(g.usd_per_hour),
        float_cell(g.usd_per_request_hour),
    ]
}

/// The results as CSV: a header row, then one row per compared GPU; CRLF line ends.
pub fn to_csv(r: &Report) -> String {
    let mut out = String::new();
    let line = |cells: &[String], out: &mut String| {
        let fields: Vec<String> = cells.iter().map(|c| csv_field(c)).collect();
        out.push_str(&fields.join(","));
        out.push_str("\r\n");
    };
    let headers: Vec<String> = CSV_HEADERS.iter().map(|h| h.to_string()).collect();
    line(&headers, &mut out);
    for g in &r.gpus {
        line(&row(r, g), &mut out);
    }
    out
}

/// One GPU in the JSON export (field order = key order in the file).
#[derive(Debug, Serialize)]
struct JsonGpu<'a> {
    id: &'a str,
    name: &'a str,
    verdict: &'static str,
    capacity_bytes: u64,
    weights_bytes: u64,
    kv_bytes: u64,
    activations_bytes: u64,
    overhead_bytes: u64,
    free_bytes: u64,
    over_bytes: u64,
    requests_theoretical: u64,
    requests_practical: u64,
    requests: u64,
    vllm_max_concurrency: Option<f64>,
    vllm_log: &'a [String],
    usd_per_hour: Option<f64>,
    usd_per_request_hour: Option<f64>,
}

/// The JSON export document (field order = key order in the file).
#[derive(Debug, Serialize)]
struct JsonDoc<'a> {
    format: &'static str,
    model: &'a str,
    model_type: &'a str,
    params_total: u64,
    params_active: u64,
    weight_dtype: &'static str,
    kv_dtype: &'static str,
    gpus_per_replica: u64,
    context_len_tokens: u64,
    concurrency_requests: u64,
    weights_bytes: u64,
    kv_per_token_bytes: u64,
    kv_per_request_bytes: u64,
    kv_total_bytes: u64,
    cheapest_gpu: Option<&'a str>,
    gpus: Vec<JsonGpu<'a>>,
}

fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

/// The results as pretty-printed JSON with stable keys (see [`JSON_FORMAT`]); bytes as
/// integers, prices in US dollars, non-finite numbers as `null`.
pub fn to_json(r: &Report) -> String {
    let gpus = r
        .gpus
        .iter()
        .map(|g| JsonGpu {
            id: &g.key,
            name: &g.accelerator.name,
            verdict: verdict_id(g.verdict),
            capacity_bytes: g.bar.capacity.0,
            weights_bytes: g.bar.weights.0,
            kv_bytes: g.bar.kv.0,
            activations_bytes: g.bar.activations.0,
            overhead_bytes: g.bar.overhead.0,
            free_bytes: g.bar.free.0,
            over_bytes: g.bar.over.0,
            requests_theoretical: g.requests_theoretical,
            requests_practical: g.requests_practical,
            requests: g.requests,
            vllm_max_concurrency: finite(g.vllm_concurrency),
            vllm_log: &g.vllm_log,
            usd_per_hour: g.usd_per_hour.and_then(finite),
            usd_per_request_hour: g.usd_per_request_hour.and_then(finite),
        })
        .collect();
    let doc = JsonDoc {
        format: JSON_FORMAT,
        model: &r.model.name,
        model_type: &r.model.model_type,
        params_total: r.model.params.total,
        params_active: r.model.params.active,
        weight_dtype: r.weight_dtype.id(),
        kv_dtype: r.kv_dtype.id(),
        gpus_per_replica: r.tp,
        context_len_tokens: r.context_len,
        concurrency_requests: r.concurrency,
        weights_bytes: r.weights.0,
        kv_per_token_bytes: r.kv_per_token.0,
        kv_per_request_bytes: r.kv_per_request.0,
        kv_total_bytes: r.kv_total.0,
        cheapest_gpu: r
            .cheapest
            .and_then(|i| r.gpus.get(i))
            .map(|g| g.key.as_str()),
        gpus,
    };
    // Serializing plain strings, integers and finite floats cannot fail; keep a valid
    // document anyway rather than panic.
    serde_json::to_string_pretty(&doc).unwrap_or_else(|_| "{}".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::present::report::report_for_test as report;
    use crate::scenario::{ModelSource, Scenario};

    /// A small RFC 4180 reader (quoted fields, doubled quotes, CRLF), to check the writer.
    fn parse_csv(text: &str) -> Vec<Vec<String>> {
        let mut rows = Vec::new();
        let mut row = Vec::new();
        let mut field = String::new();
        let mut quoted = false;
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            if quoted {
                match c {
                    '"' if chars.peek() == Some(&'"') => {
                        field.push('"');
                        chars.next();
                    }
                    '"' => quoted = false,
                    _ => field.push(c),
                }
            } else {
                match c {
                    '"' => quoted = true,
                    ',' => row.push(std::mem::take(&mut field)),
                    '\r' if chars.peek() == Some(&'\n') => {}
                    '\n' => {
                        row.push(std::mem::take(&mut field));
                        rows.push(std::mem::take(&mut row));
                    }
                    _ => field.push(c),
                }
            }
        }
        rows
    }

    #[test]
    fn csv_has_one_row_per_gpu_with_the_reports_numbers() {
        let r = report(&Scenario::default());
        let text = to_csv(&r);
        assert!(text.ends_with("\r\n"));
        let rows = parse_csv(&text);
        assert_eq!(rows.len(), 1 + r.gpus.len());
        assert!(rows.iter().all(|x| x.len() == CSV_HEADERS.len()));
        let col = |name: &str| {
            CSV_HEADERS
                .iter()
                .position(|h| *h == name)
                .unwrap_or(usize::MAX)
        };
        for (g, row) in r.gpus.iter().zip(&rows[1..]) {
            assert_eq!(row[col("gpu_id")], g.key);
            assert_eq!(
                row[col("requests_practical (requests)")],
                g.requests_practical.to_string()
            );
            assert_eq!(row[col("weights_per_gpu (B)")], g.bar.weights.0.to_string());
        }
        // Every header but names and ids carries a unit in parentheses.
        for h in CSV_HEADERS.iter().filter(|h| h.contains("(")) {
            assert!(h.ends_with(')'), "{h}");
        }
    }

    #[test]
    fn csv_quotes_and_defuses_untrusted_text() {
        assert_eq!(csv_field("plain"), "plain");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_field("line\nbreak"), "\"line\nbreak\"");
        assert_eq!(csv_field("=HYPERLINK(\"x\")"), "\"'=HYPERLINK(\"\"x\"\")\"");
        for trigger in ["+1", "-1+2", "@SUM(A1)", "\tx"] {
            assert!(
                csv_field(trigger).trim_start_matches('"').starts_with('\''),
                "{trigger}"
            );
        }
        // A pasted config with a hostile name round-trips as text, defused.
        let s = Scenario {
            model: ModelSource::Pasted(
                r#"{"_name_or_path": "=cmd|'/c calc'!A0, \"x\"", "model_type": "llama",
                "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
                "intermediate_size": 11008, "vocab_size": 32000}"#
                    .into(),
            ),
            ..Scenario::default()
        };
        let r = report(&s);
        let rows = parse_csv(&to_csv(&r));
        assert_eq!(rows[1][0], format!("'{}", r.model.name));
        assert!(r.model.name.starts_with('='));
    }

    #[test]
    fn json_is_valid_with_stable_keys() {
        let r = report(&Scenario::default());
        let text = to_json(&r);
        let v: serde_json::Value = match serde_json::from_str(&text) {
            Ok(v) => v,
            Err(e) => panic!("{e}: {text}"),
        };
        assert_eq!(v["format"], JSON_FORMAT);
        assert_eq!(v["params_total"], r.model.params.total);
        assert_eq!(v["kv_per_token_bytes"], r.kv_per_token.0);
        assert_eq!(v["gpus"][0]["id"], "a10g");
        assert_eq!(
            v["gpus"][0]["requests_practical"],
            r.gpus[0].requests_practical
        );
        // Key order is the struct's order: the same report gives the same bytes.
        assert_eq!(text, to_json(&r));
        let first_keys: Vec<&str> = text
            .lines()
            .skip(1)
            .take(3)
            .filter_map(|l| l.trim().split('"').nth(1))
            .collect();
        assert_eq!(first_keys, vec!["format", "model", "model_type"]);
    }
}
