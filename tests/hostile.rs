//! Hostile and broken input (issue 7): every parser and the CLI survive it.
//!
//! Each test runs a table of cases and collects every failure before asserting, so one run
//! shows all of them. The number of cases tried is written to `artifacts/hostile-count.txt`
//! (and printed to stderr when the last test finishes), so the test command can report it
//! whether or not the output is captured.
//!
//! What every case checks: no panic; an accepted input gives finite, exact, consistent
//! numbers (components add up to the total, no NaN or infinity anywhere in the report); a
//! rejected input gives one sentence (one line, ending in a full stop) that names the key,
//! field, parameter or flag, or the line and column of a JSON syntax error.

mod common;

use common::consistent;
use llm_serving_calculator::core::base::dtype::Dtype;
use llm_serving_calculator::core::base::error::CalcError;
use llm_serving_calculator::core::base::i18n::Lang;
use llm_serving_calculator::core::base::json;
use llm_serving_calculator::core::calc::memory::KvProfile;
use llm_serving_calculator::core::calc::tp::check_heads as check_tp;
use llm_serving_calculator::core::calc::weights;
use llm_serving_calculator::core::hardware::catalog::{
    Catalog, CustomAccelerator, CustomFigure, CUSTOM_KEYS, NAME_MAX_CHARS,
};
use llm_serving_calculator::core::hardware::Architecture;
use llm_serving_calculator::core::model::config::parse_model_text;
use llm_serving_calculator::core::model::ModelDesc;
use llm_serving_calculator::core::present::report::evaluate;
use llm_serving_calculator::core::scenario::{limits, ModelSource, NoticeKind, Scenario, MAX_GPUS};
use serde_json::{Map, Value};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

const LLAMA2_7B: &str = include_str!("../data/presets/meta-llama__Llama-2-7b-hf.json");
const GPT2: &str = include_str!("../data/presets/openai-community__gpt2.json");

/// Tests in this file that register a count (the summary is printed when all have).
const HOSTILE_TESTS: usize = 19;

/// (tests finished, cases tried, CLI cases skipped because the command does not exist yet).
static TALLY: Mutex<(usize, usize, usize)> = Mutex::new((0, 0, 0));

/// A table of cases run by one test.
struct Cases {
    name: &'static str,
    tried: usize,
    skipped: usize,
    failures: Vec<String>,
}

impl Cases {
    fn new(name: &'static str) -> Cases {
        Cases {
            name,
            tried: 0,
            skipped: 0,
            failures: Vec::new(),
        }
    }

    /// Records one case; `Err` is a failure description.
    fn case(&mut self, label: &str, r: Result<(), String>) {
        self.tried += 1;
        if let Err(e) = r {
            let label: String = label.chars().take(120).collect();
            self.failures.push(format!("[{label}] {e}"));
        }
    }

    /// Registers the count and fails with every failure listed.
    fn finish(self) {
        register(self.tried, self.skipped);
        assert!(
            self.failures.is_empty(),
            "{}: {} of {} hostile cases failed:\n{}",
            self.name,
            self.failures.len(),
            self.tried,
            self.failures.join("\n")
        );
    }
}

fn register(tried: usize, skipped: usize) {
    let mut t = TALLY.lock().unwrap_or_else(|p| p.into_inner());
    t.0 += 1;
    t.1 += tried;
    t.2 += skipped;
    let mut line = format!("hostile cases tried: {}", t.1);
    if t.2 > 0 {
        line.push_str(&format!(
            " ({} CLI cases skipped: command not implemented yet)",
            t.2
        ));
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("artifacts");
    let _ = std::fs::create_dir_all(&dir);
    let _ = std::fs::write(dir.join("hostile-count.txt"), format!("{line}\n"));
    if t.0 == HOSTILE_TESTS {
        // Written to the stream directly, so it shows even when test output is captured.
        let _ = writeln!(std::io::stderr(), "{line}");
    }
}

/// One sentence: non-empty, one line, ends with a full stop, not a debug dump, quotes
/// numbers compactly, and names one of `names` (case-insensitive). An empty `names` only
/// checks the shape.
fn sentence(msg: &str, names: &[&str]) -> Result<(), String> {
    let m = msg.trim_end_matches('\n');
    if !m.ends_with('.') {
        return Err(format!("message does not end with a full stop: {m:?}"));
    }
    one_line(msg, names)
}

/// A CLI error line (`llmcalc CMD: what was wrong`): as [`sentence`], but the conventional
/// CLI form without a final full stop is accepted.
fn one_line(msg: &str, names: &[&str]) -> Result<(), String> {
    let m = msg.trim_end_matches('\n');
    if m.trim().is_empty() {
        return Err("empty message".into());
    }
    if m.contains('\n') {
        return Err(format!("message spans several lines: {m:?}"));
    }
    if m.chars().count() > 400 {
        return Err(format!("message of {} characters", m.chars().count()));
    }
    let longest_digits = m
        .split(|c: char| !c.is_ascii_digit())
        .map(str::len)
        .max()
        .unwrap_or(0);
    if longest_digits > 30 {
        let shown: String = m.chars().take(120).collect();
        return Err(format!(
            "message quotes a {longest_digits}-digit number: {shown:?}…"
        ));
    }
    if m.chars().any(char::is_control) || m.contains("\\u0001") {
        return Err(format!(
            "message carries a control character or an internal marker: {m:?}"
        ));
    }
    for bad in [
        "panicked",
        "backtrace",
        "CalcError",
        "Some(",
        "unwrap",
        "RUST_BACKTRACE",
    ] {
        if m.contains(bad) {
            return Err(format!(
                "message looks like a crash or debug dump ({bad}): {m:?}"
            ));
        }
    }
    let lower = m.to_lowercase();
    if !names.is_empty() && !names.iter().any(|n| lower.contains(&n.to_lowercase())) {
        return Err(format!("message names none of {names:?}: {m:?}"));
    }
    Ok(())
}

/// A rejection's sentence in English (naming one of `names`) and in Korean (non-empty).
fn rejection(e: &CalcError, names: &[&str]) -> Result<(), String> {
    let names: Vec<&str> = if matches!(e, CalcError::InvalidJson { .. }) {
        // A syntax error is located by line and column, not by key.
        vec!["line"]
    } else {
        names.to_vec()
    };
    sentence(&e.message(Lang::En), &names)?;
    if e.message(Lang::Ko).trim().is_empty() {
        return Err(format!("empty Korean message for {e:?}"));
    }
    Ok(())
}

/// A rejection that names one of `names` (the sentence's shape is not checked: see
/// `custom_accelerator_errors_quote_numbers_compactly`).
fn named(e: &CalcError, names: &[&str]) -> Result<(), String> {
    let m = e.message(Lang::En).to_lowercase();
    if names.iter().any(|n| m.contains(&n.to_lowercase())) {
        Ok(())
    } else {
        Err(format!("message names none of {names:?}: {e}"))
    }
}

/// No NaN or infinity anywhere in a value's debug text (`NaN`, `inf`, `-inf` as tokens).
fn no_non_finite(what: &str, debug: &str) -> Result<(), String> {
    let b = debug.as_bytes();
    for tok in ["NaN", "inf"] {
        let mut from = 0;
        while let Some(i) = debug
            .get(from..)
            .and_then(|s| s.find(tok))
            .map(|i| i + from)
        {
            let before = i
                .checked_sub(1)
                .and_then(|j| b.get(j))
                .copied()
                .unwrap_or(b' ');
            let after = b.get(i + tok.len()).copied().unwrap_or(b' ');
            let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'"';
            if !word(before) && !word(after) {
                let s = i.saturating_sub(60);
                let ctx = debug.get(s..(i + 20).min(debug.len())).unwrap_or("");
                return Err(format!("{what} contains {tok}: …{ctx}…"));
            }
            from = i + tok.len();
        }
    }
    Ok(())
}

/// An accepted model: consistent counts, a KV profile, weight bytes, and a report without
/// NaN or infinity for the default scenario.
fn accepted(m: &ModelDesc, text: Option<&str>) -> Result<(), String> {
    consistent(&m.params)?;
    if let Err(e) = KvProfile::from_model(m, Dtype::Bf16, 1, Architecture::Unknown) {
        return Err(format!("accepted model has no KV profile at TP 1: {e}"));
    }
    match weights::checkpoint(m, 1) {
        Ok(_) => {}
        Err(e) => rejection(&e, &["overflow", "too large"])?,
    }
    if let Some(text) = text.filter(|t| t.len() < 1 << 20) {
        let s = Scenario {
            model: ModelSource::Pasted(text.to_string()),
            ..Scenario::default()
        };
        match evaluate(&s, Catalog::builtin()) {
            Ok(r) => no_non_finite("report", &format!("{r:?}"))?,
            Err(e) => rejection(&e, &[])?,
        }
    }
    Ok(())
}

/// Parses `text`; Ok must be `accepted`, Err must name one of `names`.
fn parse_ok_or_named(text: &str, names: &[&str]) -> Result<Option<ModelDesc>, String> {
    match parse_model_text(text) {
        Ok(m) => {
            accepted(&m, Some(text))?;
            Ok(Some(m))
        }
        Err(e) => {
            rejection(&e, names)?;
            Ok(None)
        }
    }
}

/// Parses `text` and requires a rejection that names one of `names`.
fn rejected(text: &str, names: &[&str]) -> Result<(), String> {
    match parse_model_text(text) {
        Ok(m) => Err(format!("accepted (total {} parameters)", m.params.total)),
        Err(e) => rejection(&e, names),
    }
}

fn base_object(text: &str) -> Map<String, Value> {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(m)) => m,
        _ => panic!("the preset is not a JSON object"),
    }
}

/// The Llama-2-7B config with `key` replaced by the raw JSON token `token` (which may be
/// non-standard: `NaN`, `1e400`, …).
fn with_token(base: &str, key: &str, token: &str) -> String {
    let mut m = base_object(base);
    m.remove(key);
    let rest = serde_json::to_string(&Value::Object(m)).unwrap_or_default();
    let inner = rest.strip_prefix('{').unwrap_or(&rest);
    format!("{{\"{key}\": {token}, {inner}")
}

fn llama_total() -> u64 {
    match parse_model_text(LLAMA2_7B) {
        Ok(m) => m.params.total,
        Err(e) => panic!("the Llama-2-7B preset does not parse: {e}"),
    }
}

#[test]
fn empty_and_blank_input() {
    let mut c = Cases::new("empty_and_blank_input");
    for text in ["", " ", "\n\t\r ", "\u{feff}", "\u{feff} \n"] {
        c.case(
            &format!("{text:?}"),
            match parse_model_text(text) {
                Err(e @ CalcError::EmptyInput) => rejection(&e, &["empty"]),
                other => Err(format!("expected EmptyInput, got {other:?}")),
            },
        );
    }
    // An empty object or list is valid JSON but no config.
    c.case("{}", rejected("{}", &["hidden_size"]));
    c.case("[]", rejected("[]", &["object"]));
    c.case("null", rejected("null", &["object"]));
    c.case("\"text\"", rejected("\"config\"", &["object"]));
    c.case("0", rejected("0", &["object"]));
    c.finish();
}

#[test]
fn paste_of_20_megabytes() {
    let mut c = Cases::new("paste_of_20_megabytes");
    let mb20 = 20_000_000;
    let want = llama_total();
    // A real config carrying a 20 MB string: parsed, same model, name kept short.
    let mut m = base_object(LLAMA2_7B);
    m.insert("_name_or_path".into(), Value::String("x".repeat(mb20)));
    let big = serde_json::to_string(&Value::Object(m)).unwrap_or_default();
    c.case(
        "20 MB _name_or_path",
        match parse_model_text(&big) {
            Ok(m) if m.params.total == want && m.name.chars().count() <= 200 => Ok(()),
            Ok(m) => Err(format!(
                "total {} (want {want}), name of {} chars",
                m.params.total,
                m.name.len()
            )),
            Err(e) => Err(format!("rejected: {e}")),
        },
    );
    // 20 MB of whitespace before a real config.
    let padded = format!("{}{LLAMA2_7B}", " ".repeat(mb20));
    c.case(
        "20 MB of whitespace",
        match parse_model_text(&padded) {
            Ok(m) if m.params.total == want => Ok(()),
            other => Err(format!("{other:?}").chars().take(200).collect()),
        },
    );
    // A 20 MB array in an unused key.
    let mut m = base_object(LLAMA2_7B);
    m.insert("junk".into(), Value::Array(vec![Value::from(1); mb20 / 2]));
    let arr = serde_json::to_string(&Value::Object(m)).unwrap_or_default();
    c.case(
        "20 MB array in an unused key",
        match parse_model_text(&arr) {
            Ok(m) if m.params.total == want => Ok(()),
            other => Err(format!("{other:?}").chars().take(200).collect()),
        },
    );
    // 20 MB of garbage, of an unterminated string, of digits.
    c.case("20 MB of garbage", rejected(&"@".repeat(mb20), &[]));
    c.case(
        "20 MB unterminated string",
        rejected(&format!("{{\"a\": \"{}", "y".repeat(mb20)), &[]),
    );
    c.case(
        "20 MB number",
        parse_ok_or_named(&"9".repeat(mb20), &["object"]).map(|_| ()),
    );
    c.case(
        "20 MB of NaN tokens",
        rejected(&format!("[{}NaN]", "NaN,".repeat(mb20 / 4)), &["object"]),
    );
    // Over the 32 MiB limit: refused before parsing, naming the limit.
    let huge = format!("{LLAMA2_7B}{}", " ".repeat(json::MAX_INPUT_BYTES));
    c.case(
        "33 MiB",
        match parse_model_text(&huge) {
            Err(e @ CalcError::InputTooLarge { .. }) => rejection(&e, &["limit"]),
            other => Err(format!(
                "expected InputTooLarge, got {:?}",
                other.map(|m| m.params.total)
            )),
        },
    );
    // A 20 MB URL: cut, never a panic, the parameters before the cut are kept.
    let q = format!("ctx=2048&cfg={}", "A".repeat(mb20));
    let (s, notices) = Scenario::from_query(&q);
    c.case(
        "20 MB URL",
        if s.context_len == 2048 && notices.iter().any(|n| n.kind == NoticeKind::QueryTooLong) {
            Ok(())
        } else {
            Err(format!("ctx {} notices {notices:?}", s.context_len))
        },
    );
    let q = "ctx=7&".repeat(mb20 / 6);
    let (s, _) = Scenario::from_query(&q);
    c.case(
        "URL with 3 million parameters",
        if s.context_len == 7 {
            Ok(())
        } else {
            Err(format!("ctx {}", s.context_len))
        },
    );
    c.finish();
}

#[test]
fn json_nested_100000_levels() {
    let mut c = Cases::new("json_nested_100000_levels");
    let n = 100_000;
    let arrays = "[".repeat(n) + &"]".repeat(n);
    let objects = "{\"a\":".repeat(n) + "1" + &"}".repeat(n);
    let text_cfg = "{\"text_config\":".repeat(n) + "{}" + &"}".repeat(n);
    let in_key = format!("{{\"hidden_size\": {}}}", "[".repeat(n) + &"]".repeat(n));
    let unclosed = "[".repeat(n);
    let mixed = "[{\"a\":".repeat(n / 2);
    for (label, text) in [
        ("arrays", &arrays),
        ("objects", &objects),
        ("text_config", &text_cfg),
        ("in hidden_size", &in_key),
        ("unclosed", &unclosed),
        ("mixed unclosed", &mixed),
    ] {
        c.case(label, rejected(text, &[]));
        c.case(
            &format!("{label} (json::parse)"),
            match json::parse(text) {
                Ok(_) => Err("accepted".into()),
                Err(e) => rejection(&e, &[]),
            },
        );
    }
    // Nesting that serde_json accepts (100 levels) in an unused key leaves the model intact.
    let mut m = base_object(LLAMA2_7B);
    let mut v = Value::from(1);
    for _ in 0..100 {
        v = Value::Array(vec![v]);
    }
    m.insert("deep".into(), v);
    let ok = serde_json::to_string(&Value::Object(m)).unwrap_or_default();
    c.case(
        "100 levels in an unused key",
        match parse_ok_or_named(&ok, &[]) {
            Ok(Some(m)) if m.params.total == llama_total() => Ok(()),
            other => Err(format!("{:?}", other.map(|m| m.map(|m| m.params.total)))),
        },
    );
    // The same depth arriving through a URL: stored, then rejected when evaluated.
    let cfg = llm_serving_calculator::core::base::url::base64url_encode(arrays.as_bytes());
    let (s, _) = Scenario::from_query(&format!("cfg={cfg}"));
    c.case(
        "nested config in the URL",
        match evaluate(&s, Catalog::builtin()) {
            Ok(_) => Err("a 100,000-deep config was evaluated".into()),
            Err(e) => rejection(&e, &[]),
        },
    );
    c.finish();
}

/// The keys every Llama-style config has, with the names an error may use for them.
const NUMERIC_KEYS: &[(&str, &[&str])] = &[
    ("hidden_size", &["hidden_size"]),
    ("num_hidden_layers", &["num_hidden_layers"]),
    (
        "num_attention_heads",
        &["num_attention_heads", "attention heads"],
    ),
    ("num_key_value_heads", &["num_key_value_heads"]),
    ("vocab_size", &["vocab_size"]),
    ("intermediate_size", &["intermediate_size"]),
    ("head_dim", &["head_dim"]),
    ("max_position_embeddings", &["max_position_embeddings"]),
];

#[test]
fn hostile_numbers_in_every_dimension() {
    let mut c = Cases::new("hostile_numbers_in_every_dimension");
    // Each value is invalid for every dimension: it must be refused, naming the key (or the
    // line and column for 1e400, which is not valid JSON for serde_json).
    let invalid = [
        "1e308",
        "-1",
        "0",
        "1.5",
        "18446744073709551616",
        "1e400",
        "-1e400",
        "Infinity",
        "-Infinity",
        "NaN",
        "4096.0001",
        "-0.5",
        "1099511627777",
        "\"4096\"",
        "[4096]",
        "{\"v\": 4096}",
        "true",
    ];
    for (key, names) in NUMERIC_KEYS {
        for tok in invalid {
            // max_position_embeddings may be Infinity (= no limit): see non_finite_tokens.
            if *key == "max_position_embeddings" && tok == "Infinity" {
                continue;
            }
            let text = with_token(LLAMA2_7B, key, tok);
            c.case(&format!("{key}: {tok}"), rejected(&text, names));
        }
        // null and whole floats: accepted (null = absent) or refused by name, never wrong.
        for tok in ["null", "4096.0", "1e3", "2"] {
            let text = with_token(LLAMA2_7B, key, tok);
            c.case(
                &format!("{key}: {tok}"),
                parse_ok_or_named(&text, names).map(|_| ()),
            );
        }
    }
    // 1.5 heads with a head_dim given (so the division does not reject it first).
    let text = with_token(
        &with_token(LLAMA2_7B, "head_dim", "128"),
        "num_attention_heads",
        "1.5",
    );
    c.case(
        "1.5 heads with head_dim",
        rejected(&text, &["num_attention_heads"]),
    );
    // Exact whole floats are read exactly.
    let text = with_token(LLAMA2_7B, "hidden_size", "4096.0");
    c.case(
        "hidden_size 4096.0 = 4096",
        match parse_model_text(&text) {
            Ok(m) if m.params.total == llama_total() => Ok(()),
            other => Err(format!("{:?}", other.map(|m| m.params.total))),
        },
    );
    c.finish();
}

#[test]
fn non_finite_tokens() {
    let mut c = Cases::new("non_finite_tokens");
    let want = llama_total();
    // Where real configs use them, they are accepted.
    for (key, tok) in [
        ("max_position_embeddings", "Infinity"),
        ("sliding_window", "Infinity"),
        ("sliding_window", "null"),
        (
            "rope_scaling",
            "{\"factor\": NaN, \"high\": Infinity, \"low\": -Infinity}",
        ),
        ("initializer_range", "NaN"),
        ("layer_norm_eps", "-Infinity"),
        ("_name_or_path", "\"NaN Infinity -Infinity\""),
        ("extra", "[NaN,Infinity,-Infinity,+Infinity]"),
    ] {
        let text = with_token(LLAMA2_7B, key, tok);
        c.case(
            &format!("{key}: {tok}"),
            match parse_ok_or_named(&text, &[key]) {
                Ok(Some(m)) if m.params.total == want => Ok(()),
                Ok(other) => Err(format!("{:?}", other.map(|m| m.params.total))),
                Err(e) => Err(e),
            },
        );
    }
    let text = with_token(LLAMA2_7B, "max_position_embeddings", "Infinity");
    c.case(
        "Infinity = no limit",
        match parse_model_text(&text) {
            Ok(m) if m.max_position_embeddings.is_none() => Ok(()),
            other => Err(format!("{:?}", other.map(|m| m.max_position_embeddings))),
        },
    );
    let text = with_token(LLAMA2_7B, "_name_or_path", "\"NaN Infinity\"");
    c.case(
        "tokens inside strings untouched",
        match parse_model_text(&text) {
            Ok(m) if m.name == "NaN Infinity" => Ok(()),
            other => Err(format!("{:?}", other.map(|m| m.name))),
        },
    );
    // As a whole document, or glued to other words: refused.
    for text in [
        "NaN",
        "Infinity",
        "[NaN]",
        "{\"hidden_size\": NaNa}",
        "{\"a\": xInfinity}",
        "{\"a\": Infinit}",
    ] {
        c.case(text, rejected(text, &["object"]));
    }
    c.finish();
}

#[test]
fn byte_order_marks() {
    let mut c = Cases::new("byte_order_marks");
    let want = llama_total();
    let text = format!("\u{feff}{LLAMA2_7B}");
    c.case(
        "BOM + config",
        match parse_model_text(&text) {
            Ok(m) if m.params.total == want => Ok(()),
            other => Err(format!("{:?}", other.map(|m| m.params.total))),
        },
    );
    for (label, text) in [
        ("two BOMs", format!("\u{feff}\u{feff}{LLAMA2_7B}")),
        ("BOM inside", "{\u{feff}\"hidden_size\": 1}".to_string()),
        ("BOM only, then garbage", "\u{feff}x".to_string()),
    ] {
        c.case(label, rejected(&text, &[]));
    }
    // A BOM in a URL config round-trips without it.
    let s = Scenario {
        model: ModelSource::Pasted(text.clone()),
        ..Scenario::default()
    };
    let (back, n) = Scenario::from_query(&s.to_query());
    c.case(
        "BOM config through the URL",
        match (&back.model, n.is_empty()) {
            (ModelSource::Pasted(t), true)
                if parse_model_text(t).map(|m| m.params.total).ok() == Some(want) =>
            {
                Ok(())
            }
            other => Err(format!("{:?}", other.1)),
        },
    );
    c.finish();
}

#[test]
fn safetensors_index_hostile_values() {
    let mut c = Cases::new("safetensors_index_hostile_values");
    let index = |tok: &str| {
        format!("{{\"metadata\": {{\"total_size\": {tok}}}, \"weight_map\": {{\"lm_head.weight\": \"model-00001-of-00002.safetensors\"}}}}")
    };
    // The published Llama-2-7B index: exact bytes, split evenly (rounded up) across TP.
    let total = 13_476_839_424u64;
    c.case(
        "real total_size",
        match parse_model_text(&index(&total.to_string())) {
            Ok(m) => match (m.exact_weight_bytes, weights::checkpoint(&m, 3)) {
                (Some(b), Ok(w)) if b.0 == total && w.per_gpu.0 == total.div_ceil(3) => {
                    consistent(&m.params)
                }
                (b, w) => Err(format!("{b:?} {:?}", w.map(|w| w.per_gpu))),
            },
            Err(e) => Err(e.to_string()),
        },
    );
    c.case(
        "u64::MAX bytes",
        match parse_model_text(&index(&u64::MAX.to_string())) {
            Ok(m) => accepted(&m, None),
            Err(e) => rejection(&e, &["total_size"]),
        },
    );
    for tok in [
        "0",
        "-1",
        "1.5",
        "1e308",
        "1e400",
        "18446744073709551616",
        "NaN",
        "Infinity",
        "-Infinity",
        "\"13476839424\"",
        "[1]",
        "{}",
        "true",
        "null",
    ] {
        c.case(
            &format!("total_size {tok}"),
            rejected(&index(tok), &["total_size"]),
        );
    }
    // Odd shapes: still an index, or a clear error.
    let big_map = format!(
        "{{\"metadata\": {{\"total_size\": 1000}}, \"weight_map\": {{{}}}}}",
        (0..100_000)
            .map(|i| format!("\"t{i}\": \"a.safetensors\""))
            .collect::<Vec<_>>()
            .join(",")
    );
    for (label, text) in [
        ("100,000 tensors", big_map.as_str()),
        (
            "weight_map is a number",
            "{\"metadata\": {\"total_size\": 1000}, \"weight_map\": 5}",
        ),
        ("weight_map only, empty", "{\"weight_map\": {}}"),
        (
            "metadata is a string",
            "{\"metadata\": \"x\", \"weight_map\": {}}",
        ),
        (
            "total_parameters -1",
            "{\"metadata\": {\"total_size\": 1000, \"total_parameters\": -1}}",
        ),
        (
            "total_parameters NaN",
            "{\"metadata\": {\"total_size\": 1000, \"total_parameters\": NaN}}",
        ),
    ] {
        c.case(
            label,
            parse_ok_or_named(text, &["total_size", "weight_map", "total_parameters"]).map(|_| ()),
        );
    }
    c.finish();
}

#[test]
fn duplicated_keys_last_wins() {
    let mut c = Cases::new("duplicated_keys_last_wins");
    let want = llama_total();
    // The last occurrence wins, as in Python's json.loads.
    let text = with_token(LLAMA2_7B, "hidden_size", "1, \"hidden_size\": 4096");
    c.case(
        "hidden_size 1 then 4096",
        match parse_model_text(&text) {
            Ok(m) if m.params.total == want => Ok(()),
            other => Err(format!("{:?}", other.map(|m| m.params.total))),
        },
    );
    let text = with_token(LLAMA2_7B, "hidden_size", "4096, \"hidden_size\": \"big\"");
    c.case(
        "hidden_size 4096 then a string",
        rejected(&text, &["hidden_size"]),
    );
    let dup_all = format!("{{{}}}", ["\"a\": 1"; 10_000].join(","));
    c.case("10,000 duplicates", rejected(&dup_all, &["hidden_size"]));
    c.finish();
}

#[test]
fn keys_of_the_wrong_type() {
    let mut c = Cases::new("keys_of_the_wrong_type");
    for (key, tok, names) in [
        ("hidden_size", "\"4096\"", &["hidden_size"][..]),
        ("vocab_size", "[32000]", &["vocab_size"]),
        ("num_hidden_layers", "{\"n\": 32}", &["num_hidden_layers"]),
        ("num_attention_heads", "true", &["num_attention_heads"]),
        ("intermediate_size", "\"11008\"", &["intermediate_size"]),
        ("tie_word_embeddings", "\"false\"", &["tie_word_embeddings"]),
        ("tie_word_embeddings", "0", &["tie_word_embeddings"]),
        ("attention_bias", "\"yes\"", &["attention_bias"]),
        ("num_key_value_heads", "[8]", &["num_key_value_heads"]),
        ("layer_types", "5", &["layer_types"]),
        ("layer_types", "[1, 2]", &["layer_types"]),
    ] {
        let text = with_token(LLAMA2_7B, key, tok);
        c.case(&format!("{key}: {tok}"), rejected(&text, names));
    }
    // Keys whose wrong type is ignored (they only label the model): accepted, model intact.
    for (key, tok) in [
        ("model_type", "7"),
        ("torch_dtype", "16"),
        ("_name_or_path", "[\"<img src=x onerror=alert(1)>\"]"),
        ("architectures", "\"LlamaForCausalLM\""),
        ("quantization_config", "\"fp8\""),
        ("text_config", "\"none\""),
    ] {
        let text = with_token(LLAMA2_7B, key, tok);
        c.case(
            &format!("{key}: {tok}"),
            parse_ok_or_named(&text, &[key]).map(|_| ()),
        );
    }
    // An unknown precision name: bf16 is assumed, with a warning naming the key.
    let text = with_token(LLAMA2_7B, "torch_dtype", "\"float7\"");
    c.case(
        "torch_dtype: \"float7\"",
        match parse_model_text(&text) {
            Ok(m)
                if m.warnings
                    .iter()
                    .any(|w| w.to_string().contains("torch_dtype")) =>
            {
                accepted(&m, Some(&text))
            }
            Ok(m) => Err(format!(
                "accepted without a warning naming torch_dtype: {:?}",
                m.warnings
            )),
            Err(e) => rejection(&e, &["torch_dtype"]),
        },
    );
    // gpt2 keys, wrong types.
    for (key, tok) in [
        ("n_embd", "\"768\""),
        ("n_layer", "-12"),
        ("n_head", "12.5"),
        ("n_positions", "0"),
    ] {
        let text = with_token(GPT2, key, tok);
        c.case(&format!("gpt2 {key}: {tok}"), rejected(&text, &[key]));
    }
    c.finish();
}

/// The hand formula for a Llama-style model without biases (MHA, untied, gated MLP):
/// `L·(4h² + 3hI + 2h) + h + 2Vh`, in u128 so the check itself cannot overflow.
fn llama_formula(h: u128, layers: u128, inter: u128, vocab: u128) -> u128 {
    layers * (4 * h * h + 3 * h * inter + 2 * h) + h + 2 * vocab * h
}

fn llama_like(h: u64, layers: u64, heads: u64, inter: u64, vocab: u64) -> String {
    format!(
        "{{\"model_type\": \"llama\", \"hidden_size\": {h}, \"num_hidden_layers\": {layers}, \
         \"num_attention_heads\": {heads}, \"intermediate_size\": {inter}, \"vocab_size\": {vocab}, \
         \"tie_word_embeddings\": false, \"torch_dtype\": \"bfloat16\"}}"
    )
}

#[test]
fn model_with_10_to_the_15_parameters() {
    let mut c = Cases::new("model_with_10_to_the_15_parameters");
    // h = 2^17, 2^16 layers... chosen so the total is about 1.2e15.
    let (h, layers, heads, inter, vocab) = (131_072u64, 4_096u64, 1_024u64, 524_288u64, 262_144u64);
    let want = llama_formula(h.into(), layers.into(), inter.into(), vocab.into());
    c.case(
        "formula is about 1e15",
        if (1_000_000_000_000_000..10_000_000_000_000_000).contains(&want) {
            Ok(())
        } else {
            Err(format!("{want}"))
        },
    );
    let text = llama_like(h, layers, heads, inter, vocab);
    match parse_model_text(&text) {
        Ok(m) => {
            c.case(
                "exact total",
                if u128::from(m.params.total) == want {
                    Ok(())
                } else {
                    Err(format!("{} ≠ {want}", m.params.total))
                },
            );
            c.case("consistent", accepted(&m, Some(&text)));
            // bf16 weights: exactly 2 bytes per parameter.
            c.case(
                "exact weight bytes",
                match weights::checkpoint(&m, 1) {
                    Ok(w) if u128::from(w.total.0) == 2 * want => Ok(()),
                    Ok(w) => Err(format!("{} ≠ {}", w.total.0, 2 * want)),
                    Err(e) => Err(format!("{e}")),
                },
            );
            // KV per token: 2 (K,V) × layers × h × 2 bytes; per request of 10^7 tokens.
            let per_token = 2 * u128::from(layers) * u128::from(h) * 2;
            c.case(
                "exact KV bytes",
                match KvProfile::from_model(&m, Dtype::Bf16, 1, Architecture::Unknown) {
                    Ok(kv)
                        if u128::from(kv.per_request(10_000_000).0) == per_token * 10_000_000 =>
                    {
                        Ok(())
                    }
                    Ok(kv) => Err(format!(
                        "{} ≠ {}",
                        kv.per_request(10_000_000).0,
                        per_token * 10_000_000
                    )),
                    Err(e) => Err(format!("{e}")),
                },
            );
        }
        Err(e) => c.case(
            "parse",
            Err(format!("a 1e15-parameter config was refused: {e}")),
        ),
    }
    // The URL's quick mode at its 1e15 limit, evaluated: no NaN or infinity.
    let (s, n) = Scenario::from_query(
        "params=1000000000000000&dtype=fp32&ctx=10000000&n=1000000&gpu=h100-sxm&tp=1024",
    );
    c.case(
        "quick 1e15 from the URL",
        match (n.is_empty(), evaluate(&s, Catalog::builtin())) {
            (true, Ok(r)) => no_non_finite("report", &format!("{r:?}")),
            (true, Err(e)) => rejection(&e, &[]),
            (false, _) => Err(format!("notices {n:?}")),
        },
    );
    // Beyond u64: a clear Overflow error, never a wrapped number.
    for (label, text) in [
        ("h = vocab = 2^40", llama_like(1 << 40, 1, 1, 1, 1 << 40)),
        ("h = inter = 2^40", llama_like(1 << 40, 1, 1, 1 << 40, 1)),
        (
            "65536 layers of 2^32",
            llama_like(1 << 32, 65_536, 1, 1 << 32, 1),
        ),
        ("heads 2^40", llama_like(1 << 40, 1, 1 << 40, 1, 1)),
    ] {
        c.case(
            label,
            match parse_model_text(&text) {
                Err(e @ CalcError::Overflow { .. }) => rejection(&e, &["overflow"]),
                Err(e) => Err(format!("expected Overflow, got: {e}")),
                Ok(m) => {
                    let (h, l, i, v) = serde_json::from_str::<Value>(&text)
                        .map(|v| {
                            let g =
                                |k: &str| u128::from(v.get(k).and_then(Value::as_u64).unwrap_or(0));
                            (
                                g("hidden_size"),
                                g("num_hidden_layers"),
                                g("intermediate_size"),
                                g("vocab_size"),
                            )
                        })
                        .unwrap_or((0, 0, 0, 0));
                    let exact = llama_formula(h, l, i, v);
                    if u128::from(m.params.total) == exact {
                        Ok(())
                    } else {
                        Err(format!("wrapped: {} ≠ {exact}", m.params.total))
                    }
                }
            },
        );
    }
    // More layers than accepted: out of range, naming the key.
    c.case(
        "2^20 layers",
        rejected(&llama_like(64, 1 << 20, 1, 64, 64), &["num_hidden_layers"]),
    );
    c.finish();
}

#[test]
fn heads_that_do_not_divide() {
    let mut c = Cases::new("heads_that_do_not_divide");
    for (label, key, tok, names) in [
        (
            "33 heads into 4096",
            "num_attention_heads",
            "33",
            &["heads", "hidden_size"][..],
        ),
        (
            "4097 heads into 4096",
            "num_attention_heads",
            "4097",
            &["heads", "hidden_size"],
        ),
        (
            "hidden 4095",
            "hidden_size",
            "4095",
            &["heads", "hidden_size"],
        ),
        (
            "kv heads 5 of 32",
            "num_key_value_heads",
            "5",
            &["num_key_value_heads"],
        ),
        (
            "kv heads 64 of 32",
            "num_key_value_heads",
            "64",
            &["num_key_value_heads"],
        ),
    ] {
        c.case(label, rejected(&with_token(LLAMA2_7B, key, tok), names));
    }
    // With an explicit head_dim the heads need not divide the hidden size (Qwen3, Gemma).
    let text = with_token(
        &with_token(LLAMA2_7B, "num_attention_heads", "33"),
        "head_dim",
        "128",
    );
    c.case(
        "33 heads with head_dim",
        parse_ok_or_named(&text, &[]).map(|_| ()),
    );
    c.finish();
}

#[test]
fn tp_larger_than_heads() {
    let mut c = Cases::new("tp_larger_than_heads");
    let m = match parse_model_text(LLAMA2_7B) {
        Ok(m) => m,
        Err(e) => panic!("{e}"),
    };
    // Llama-2-7B has 32 heads.
    for tp in [0u64, 3, 64, 1024, u64::MAX] {
        c.case(
            &format!("KvProfile tp {tp}"),
            match KvProfile::from_model(&m, Dtype::Bf16, tp, Architecture::Unknown) {
                Ok(_) => Err("accepted".into()),
                Err(e) => rejection(&e, &["tp", "tensor parallel"]),
            },
        );
        c.case(
            &format!("check_tp tp {tp}"),
            match check_tp(32, 32, tp) {
                Ok(()) => Err("accepted".into()),
                Err(e) => rejection(&e, &["tp", "tensor parallel"]),
            },
        );
    }
    for tp in [0u64, 3, 64] {
        c.case(
            &format!("weights tp {tp}"),
            match weights::checkpoint(&m, tp) {
                Ok(w) if tp > 0 && w.per_gpu <= w.total => Ok(()),
                Ok(_) => Err("tp 0 accepted".into()),
                Err(e) => rejection(&e, &["tp"]),
            },
        );
    }
    // Through the scenario: TP 64 over 32 heads refuses the whole report, naming TP.
    for q in ["tp=64", "tp=3", "tp=1024&gpu=h100-sxm"] {
        let (s, n) = Scenario::from_query(q);
        c.case(
            q,
            match (n.is_empty(), evaluate(&s, Catalog::builtin())) {
                (true, Err(e)) => rejection(&e, &["tp", "tensor parallel"]),
                (true, Ok(r)) => {
                    // Accepted only if each GPU carries the error instead.
                    let d = format!("{r:?}");
                    if d.contains("TpDoesNotDivide") || d.contains("gpu_errors: [(") {
                        Ok(())
                    } else {
                        Err("TP 64 over 32 heads was evaluated".into())
                    }
                }
                (false, _) => Err(format!("notices {n:?}")),
            },
        );
    }
    // Out of the URL's range: a notice naming tp, and the default kept.
    for q in ["tp=2048", "tp=4294967296", "tp=-8", "tp=1e400"] {
        let (s, n) = Scenario::from_query(q);
        c.case(
            q,
            if s.tp == 1 && n.len() == 1 && n.iter().all(|x| x.param == "tp") {
                Ok(())
            } else {
                Err(format!("tp {} {n:?}", s.tp))
            },
        );
    }
    c.finish();
}

/// Every URL parameter the scenario reads.
const URL_PARAMS: &[&str] = &[
    "v", "model", "cfg", "params", "dtype", "gpu", "tp", "ic", "ctx", "n", "wd", "kvd", "rule",
    "gmu", "bs", "in", "out", "batch", "lang", "embed",
];

/// Parameters whose value is a number with a range.
const NUMERIC_PARAMS: &[&str] = &[
    "params", "tp", "ctx", "n", "gmu", "bs", "in", "out", "batch",
];

fn scenario_in_limits(s: &Scenario) -> Result<(), String> {
    let r = |n: u64, (lo, hi): (u64, u64), what: &str| {
        if n >= lo && n <= hi {
            Ok(())
        } else {
            Err(format!("{what} = {n}"))
        }
    };
    if s.gpus.is_empty() || s.gpus.len() > MAX_GPUS {
        return Err(format!("{} GPUs", s.gpus.len()));
    }
    r(u64::from(s.tp), limits::TP, "tp")?;
    r(s.context_len, limits::CONTEXT_LEN, "ctx")?;
    r(s.concurrency, limits::CONCURRENCY, "n")?;
    r(s.perf.input_len, limits::PERF_LEN, "in")?;
    r(s.perf.output_len, limits::PERF_LEN, "out")?;
    r(s.perf.batch, limits::BATCH, "batch")?;
    no_non_finite("scenario", &format!("{s:?}"))
}

#[test]
fn url_with_every_parameter_garbled() {
    let mut c = Cases::new("url_with_every_parameter_garbled");
    let enormous = "9".repeat(100_000);
    let garbage: Vec<String> = vec![
        String::new(),
        "%".into(),
        "%G1".into(),
        "%FF%FE%00".into(),
        "%00".into(),
        "<script>alert(1)</script>".into(),
        "\"><img src=x onerror=alert(1)>".into(),
        "1e308".into(),
        "-1".into(),
        "NaN".into(),
        "Infinity".into(),
        "18446744073709551616".into(),
        "0x10".into(),
        "🙂".repeat(1000),
        enormous,
        "a".repeat(100_000),
    ];
    let d = Scenario::default();
    for p in URL_PARAMS {
        for g in &garbage {
            let q = format!("{p}={g}");
            let (s, n) = Scenario::from_query(&q);
            let label = format!("{p}={}", g.chars().take(30).collect::<String>());
            let mut r = scenario_in_limits(&s);
            // Every notice names this parameter, in one sentence, in both languages.
            for x in &n {
                if x.param != *p {
                    r = Err(format!("notice names {:?}", x.param));
                }
                for lang in Lang::ALL {
                    if let Err(e) = sentence(&x.message(*lang), &[p]) {
                        r = Err(format!("{lang:?}: {e}"));
                    }
                }
            }
            // A garbled number keeps its default and says so.
            let numeric_garbage = g
                .parse::<f64>()
                .map_or(true, |x| !(0.0..=1e16).contains(&x));
            if NUMERIC_PARAMS.contains(p) && numeric_garbage {
                if n.is_empty() {
                    r = Err("garbage accepted without a notice".into());
                }
                if s != d {
                    r = Err("garbage changed the scenario".into());
                }
            }
            c.case(&label, r);
        }
    }
    // Every parameter garbled at once: each gets its own notice, the scenario is the default.
    let q = URL_PARAMS
        .iter()
        .map(|p| format!("{p}=%FF%ZZ<>"))
        .collect::<Vec<_>>()
        .join("&");
    let (s, n) = Scenario::from_query(&q);
    c.case(
        "all garbled at once",
        if s == d && n.len() >= URL_PARAMS.len() - 1 {
            Ok(())
        } else {
            Err(format!("{} notices", n.len()))
        },
    );
    // Garbled keys, separators and encodings.
    for q in [
        "%ZZ=1",
        "=&=&=",
        "&&&&",
        "?",
        "??ctx=5",
        "ctx==5",
        "ctx=5=6",
        "c%74x=9",
        "%E2%82=1",
        "ctx=%E2%82%AC",
        "gpu=custom:",
        "gpu=custom:name=%ZZ;memory_gib=1;bandwidth_gbps=1;bf16_tflops=1",
        "cfg=====",
        "cfg=",
    ] {
        let (s, n) = Scenario::from_query(q);
        let mut r = scenario_in_limits(&s);
        for x in &n {
            if let Err(e) = sentence(&x.message(Lang::En), &[&x.param]) {
                r = Err(e);
            }
        }
        c.case(q, r);
    }
    // Every truncation of a full link: never a panic, always within limits.
    let full = "model=Qwen__Qwen3-8B&gpu=h100-sxm&gpu=custom%3Aname%3DMy%2520chip%3Bmemory_gib%3D23.5%3Bbandwidth_gbps%3D1.3%3Bbf16_tflops%3D0.02&tp=8&ic=nvswitch&ctx=131072&n=1&wd=int4&kvd=fp8&rule=vllm&gmu=0.85&bs=32&in=1&out=10000000&batch=64&lang=ko&embed=roofline";
    let mut r = Ok(());
    for end in 0..=full.len() {
        if let Some(prefix) = full.get(..end) {
            let (s, _) = Scenario::from_query(prefix);
            if let Err(e) = scenario_in_limits(&s) {
                r = Err(format!("prefix {end}: {e}"));
            }
        }
    }
    c.case("every truncation", r);
    // What the app writes, it reads back unchanged.
    let (s, n) = Scenario::from_query(full);
    let (back, n2) = Scenario::from_query(&s.to_query());
    c.case(
        "round trip of the full link",
        if n.is_empty() && n2.is_empty() && back == s {
            Ok(())
        } else {
            Err(format!("{n:?} {n2:?}"))
        },
    );
    c.finish();
}

/// The custom GPU name that exercises the URL length limit: accepted when typed into a link
/// unescaped, then written back percent-encoded (3 bytes per byte).
fn long_unicode_name_query() -> String {
    format!(
        "gpu=custom:name={};memory_gib=24;bandwidth_gbps=600;bf16_tflops=125",
        "é".repeat(200)
    )
}

#[test]
fn url_round_trip_of_an_accepted_custom_gpu() {
    let mut c = Cases::new("url_round_trip_of_an_accepted_custom_gpu");
    let q = long_unicode_name_query();
    let (s, n) = Scenario::from_query(&q);
    c.case(
        "the long name is accepted",
        if n.is_empty() {
            Ok(())
        } else {
            Err(format!("{n:?}"))
        },
    );
    let (back, n2) = Scenario::from_query(&s.to_query());
    c.case(
        "and survives to_query/from_query",
        if n2.is_empty() && back == s {
            Ok(())
        } else {
            Err(format!(
                "to_query wrote a link that from_query rejects: {n2:?}"
            ))
        },
    );
    c.finish();
}

#[test]
fn custom_accelerator_fields() {
    let mut c = Cases::new("custom_accelerator_fields");
    let base = base_accelerator();
    c.case(
        "the base is valid",
        base.validate().map(|_| ()).map_err(|e| e.to_string()),
    );
    bad_accelerator_numbers(&mut c, &base);
    hostile_accelerator_names(&mut c, &base);
    // Unknown and missing keys name the key.
    c.case(
        "unknown key",
        match CustomAccelerator::from_query("memory_gib=1;bandwidth_gbps=1;bf16_tflops=1;hbm=5") {
            Err(e) => rejection(&e, &["hbm"]),
            Ok(_) => Err("accepted".into()),
        },
    );
    c.case(
        "missing key",
        match CustomAccelerator::from_query("memory_gib=1;bf16_tflops=1") {
            Err(e) => rejection(&e, &["bandwidth_gbps"]),
            Ok(_) => Err("accepted".into()),
        },
    );
    c.finish();
}

/// A valid custom accelerator (H100-like) that the cases spoil one field at a time.
fn base_accelerator() -> CustomAccelerator {
    CustomAccelerator {
        name: "Test".into(),
        memory_gib: 80.0,
        bandwidth_gbps: 3350.0,
        bf16_tflops: 989.0,
        fp8_tflops: Some(1979.0),
        price_usd_per_hour: Some(2.5),
        tdp_w: Some(700.0),
    }
}

/// `base`'s URL form with `field` set to `text`.
fn query_with(base: &CustomAccelerator, field: &str, text: &str) -> String {
    base.to_query()
        .split(';')
        .map(|kv| {
            if kv.starts_with(field) {
                format!("{field}={text}")
            } else {
                kv.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(";")
}

/// Refused, naming `field`.
fn refused_naming<T>(r: Result<T, CalcError>, field: &str) -> Result<(), String> {
    match r {
        Ok(_) => Err("accepted".into()),
        Err(e) => named(&e, &[field]),
    }
}

/// Every numeric field set to zero, negative, non-finite or extreme values, directly and
/// typed into the URL form, and to text that is not a number: refused, naming the field.
fn bad_accelerator_numbers(c: &mut Cases, base: &CustomAccelerator) {
    let bad = [
        0.0,
        -0.0,
        -1.0,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        1e308,
        f64::MAX,
        5e-324,
        -1e308,
    ];
    for figure in CustomFigure::ALL {
        let field = figure.key();
        for v in bad {
            let mut a = base.clone();
            a.set_figure(figure, v);
            c.case(
                &format!("{field} = {v}"),
                refused_naming(a.validate(), field),
            );
            // The same value typed into the URL form: refused, naming the field.
            let q = query_with(base, field, &v.to_string());
            c.case(
                &format!("from_query {field}={v}"),
                refused_naming(
                    CustomAccelerator::from_query(&q).and_then(|a| a.validate()),
                    field,
                ),
            );
        }
        for text in ["abc", "", "1,5", "0x10", "1e400", "--1"] {
            let q = query_with(base, field, text);
            c.case(
                &format!("from_query {field}={text}"),
                refused_naming(
                    CustomAccelerator::from_query(&q).and_then(|a| a.validate()),
                    field,
                ),
            );
        }
    }
}

/// Hostile names are kept as text, trimmed to `NAME_MAX_CHARS` characters.
fn hostile_accelerator_names(c: &mut Cases, base: &CustomAccelerator) {
    for name in [
        "<img src=x onerror=alert(1)>",
        "\u{0}\u{7}\u{1b}[31m",
        &"名".repeat(10_000),
        "",
        "   ",
    ] {
        let mut a = base.clone();
        a.name = name.to_string();
        c.case(
            &format!("name {:?}", name.chars().take(20).collect::<String>()),
            match a.validate() {
                Ok(acc) if acc.name.chars().count() <= NAME_MAX_CHARS && !acc.name.is_empty() => {
                    Ok(())
                }
                Ok(acc) => Err(format!("name of {} chars", acc.name.chars().count())),
                Err(e) => Err(e.to_string()),
            },
        );
    }
}

#[test]
fn custom_accelerator_errors_quote_numbers_compactly() {
    // A value such as 1e308 or 5e-324 typed into the form must not come back as a
    // 309-digit (or 324-digit) number in the error sentence.
    let mut c = Cases::new("custom_accelerator_errors_quote_numbers_compactly");
    for field in CUSTOM_KEYS.into_iter().filter(|k| *k != "name") {
        for v in ["1e308", "-1e308", "5e-324", "1e-300"] {
            let q = format!("memory_gib=80;bandwidth_gbps=3350;bf16_tflops=989;{field}={v}");
            c.case(
                &format!("{field}={v}"),
                match CustomAccelerator::from_query(&q).and_then(|a| a.validate()) {
                    Ok(_) => Err("accepted".into()),
                    Err(e) => rejection(&e, &[field]),
                },
            );
        }
    }
    c.finish();
}

// ---------------------------------------------------------------------------------------------
// The CLI
// ---------------------------------------------------------------------------------------------

/// Files the CLI cases read, in a fresh temporary directory.
struct Files {
    dir: PathBuf,
}

impl Files {
    fn new() -> Files {
        let dir = std::env::temp_dir().join(format!("llmcalc-hostile-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        let f = Files { dir };
        f.write("good.json", LLAMA2_7B.as_bytes());
        f.write("invalid.json", b"{\"hidden_size\": 4096,");
        f.write("empty.json", b"");
        f.write("binary.json", &[0xff, 0xfe, 0x00, 0x7b, 0x80]);
        f.write(
            "deep.json",
            ("[".repeat(100_000) + &"]".repeat(100_000)).as_bytes(),
        );
        f.write(
            "heads.json",
            with_token(LLAMA2_7B, "num_attention_heads", "33").as_bytes(),
        );
        f.write(
            "overflow.json",
            llama_like(1 << 40, 1, 1, 1, 1 << 40).as_bytes(),
        );
        f.write(
            "zero.json",
            with_token(LLAMA2_7B, "hidden_size", "0").as_bytes(),
        );
        f
    }

    fn write(&self, name: &str, data: &[u8]) {
        let _ = std::fs::write(self.dir.join(name), data);
    }

    fn path(&self, name: &str) -> String {
        self.dir.join(name).to_string_lossy().into_owned()
    }
}

use common::run_cli;

/// Exit 2, nothing on stdout, and one sentence on stderr naming one of `names`.
fn bad_input(code: i32, out: &str, err: &str, names: &[&str]) -> Result<(), String> {
    if code != 2 {
        return Err(format!("exit {code}, stderr {err:?}"));
    }
    if !out.trim().is_empty() {
        return Err(format!(
            "stdout not empty: {:?}",
            out.chars().take(100).collect::<String>()
        ));
    }
    one_line(err, names)
}

#[test]
fn cli_bad_input_exits_2_with_one_sentence() {
    let mut c = Cases::new("cli_bad_input_exits_2_with_one_sentence");
    let f = Files::new();
    let mut cases = file_cases(&f);
    cases.extend(flag_cases(&f.path("good.json")));
    run_bad_input(&mut c, &f, &cases);
    no_arguments_and_good_input(&mut c, &f.path("good.json"));
    oversized_files(&mut c, &f);
    model_with_10_to_the_15_parameters_cli(&mut c, &f);
    let _ = std::fs::remove_dir_all(&f.dir);
    c.finish();
}

/// A CLI case: the arguments and the names one of which the error must mention.
type CliCase = (Vec<String>, Vec<&'static str>);

/// The arguments as owned strings.
fn owned(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

/// Sets `--flag value` in `args`: replaces the value when the flag is there, else appends.
fn set_flag(args: &mut Vec<String>, flag: &str, value: &str) {
    match args.iter().position(|a| a == flag) {
        Some(i) => {
            if let Some(slot) = args.get_mut(i + 1) {
                *slot = value.to_string();
            }
        }
        None => {
            args.push(flag.to_string());
            args.push(value.to_string());
        }
    }
}

/// A valid `vllm` command on `good` with the `--flag value` pairs of `extra` set.
fn vllm_args(good: &str, extra: &[&str]) -> Vec<String> {
    let mut v = owned(&[
        "vllm",
        "--config",
        good,
        "--gpu-memory-gib",
        "80",
        "--gpu-memory-utilization",
        "0.9",
        "--max-model-len",
        "4096",
    ]);
    for pair in extra.chunks(2) {
        if let [k, val] = pair {
            set_flag(&mut v, k, val);
        }
    }
    v
}

/// A valid `perf` command on `good`.
fn perf_args(good: &str) -> Vec<String> {
    owned(&[
        "perf",
        "--config",
        good,
        "--gpu",
        "a10g",
        "--batch",
        "1",
        "--input-len",
        "128",
        "--output-len",
        "128",
    ])
}

/// Bad commands and bad `--config` files: missing, a folder, invalid, empty, binary, deep,
/// inconsistent, overflowing.
fn file_cases(f: &Files) -> Vec<CliCase> {
    let model = |name: &str| owned(&["model", "--config", &f.path(name)]);
    vec![
        (vec!["frobnicate".into()], vec!["frobnicate"]),
        (vec!["model".into()], vec!["config"]),
        (vec!["model".into(), "--config".into()], vec!["config"]),
        (model("no-such-file.json"), vec!["no-such-file"]),
        (
            owned(&["model", "--config", &f.dir.to_string_lossy()]),
            vec!["llmcalc-hostile"],
        ),
        (model("invalid.json"), vec!["json"]),
        (model("empty.json"), vec!["empty"]),
        (model("binary.json"), vec!["utf-8", "binary.json"]),
        (model("deep.json"), vec!["json"]),
        (model("heads.json"), vec!["heads"]),
        (model("overflow.json"), vec!["overflow", "too large"]),
        (model("zero.json"), vec!["hidden_size"]),
        (vec!["model".into(), "stray".into()], vec!["stray"]),
    ]
}

/// Bad option values for `model`, `vllm`, `perf`, `load`, `plan` and `gpus` on `good`.
fn flag_cases(good: &str) -> Vec<CliCase> {
    let mut cases: Vec<CliCase> = Vec::new();
    for v in ["0", "-1", "1e400", "18446744073709551616", "abc", ""] {
        cases.push((
            owned(&["model", "--config", good, "--context", v]),
            vec!["context"],
        ));
    }
    for (flag, v) in [("--kv-dtype", "fp7"), ("--weights-dtype", "int3")] {
        cases.push((owned(&["model", "--config", good, flag, v]), vec![v, flag]));
    }
    for (flag, v) in [
        ("--gpu-memory-gib", "0"),
        ("--gpu-memory-gib", "-80"),
        ("--gpu-memory-gib", "NaN"),
        ("--gpu-memory-gib", "1e400"),
        ("--gpu-memory-utilization", "0"),
        ("--gpu-memory-utilization", "NaN"),
        ("--gpu-memory-utilization", "1.5"),
        ("--max-model-len", "0"),
        ("--block-size", "0"),
    ] {
        cases.push((
            vllm_args(good, &[flag, v]),
            vec![flag.trim_start_matches('-')],
        ));
    }
    cases.push((
        vllm_args(good, &["--tp", "64"]),
        vec!["tp", "tensor parallel"],
    ));
    cases.push((vllm_args(good, &["--tp", "0"]), vec!["tp"]));
    let mut a = perf_args(good);
    a.extend(owned(&["--gpu", "no-such-gpu"]));
    cases.push((a, vec!["no-such-gpu"]));
    for (flag, v) in [
        ("--batch", "0"),
        ("--input-len", "0"),
        ("--output-len", "-5"),
        ("--tp", "3"),
    ] {
        let mut a = perf_args(good);
        set_flag(&mut a, flag, v);
        cases.push((a, vec![flag.trim_start_matches('-'), "tensor parallel"]));
    }
    cases.push((
        owned(&[
            "load",
            "--config",
            good,
            "--gpu",
            "a10g",
            "--storage-gbps",
            "0",
        ]),
        vec!["storage-gbps"],
    ));
    cases.push((
        owned(&[
            "plan",
            "--config",
            good,
            "--gpu",
            "a10g",
            "--rate",
            "-1",
            "--peak-multiplier",
            "2",
            "--input-len",
            "128",
            "--output-len",
            "128",
            "--ttft-ms",
            "1000",
            "--tpot-ms",
            "100",
        ]),
        vec!["rate"],
    ));
    cases.push((vec!["gpus".into(), "--gpu".into()], vec!["gpu"]));
    cases
}

/// Runs every bad-input case: exit 2 and one sentence naming the culprit (commands not
/// implemented yet are skipped).
fn run_bad_input(c: &mut Cases, f: &Files, cases: &[CliCase]) {
    for (args, names) in cases {
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, out, err) = run_cli(&argv);
        let label = argv
            .iter()
            .map(|a| a.replace(&f.dir.to_string_lossy().into_owned(), "$TMP"))
            .collect::<Vec<_>>()
            .join(" ");
        let cmd = argv.first().copied().unwrap_or("");
        if cmd != "frobnicate" && err.contains("unknown command") {
            c.skipped += 1;
            continue;
        }
        c.case(&label, bad_input(code, &out, &err, names));
    }
}

/// `params_total` of `model --json` output.
fn params_total(out: &str) -> Option<u64> {
    serde_json::from_str::<Value>(out)
        .ok()
        .and_then(|v| v.get("params_total").and_then(Value::as_u64))
}

/// No arguments: status 2 and the usage on stderr (several lines by design), no panic.
/// Good input: status 0 with results.
fn no_arguments_and_good_input(c: &mut Cases, good: &str) {
    let (code, out, err) = run_cli(&[]);
    c.case(
        "no arguments",
        if code == 2 && out.is_empty() && err.contains("usage") {
            Ok(())
        } else {
            Err(format!("exit {code} {err:?}"))
        },
    );
    let (code, out, err) = run_cli(&["gpus", "--json"]);
    c.case(
        "gpus --json",
        if code == 0 && serde_json::from_str::<Value>(&out).is_ok() {
            Ok(())
        } else {
            Err(format!("exit {code} {err:?}"))
        },
    );
    let (code, out, err) = run_cli(&["model", "--config", good, "--json"]);
    if err.contains("unknown command") {
        c.skipped += 1;
    } else {
        let total = params_total(&out);
        c.case(
            "model --json",
            if code == 0 && total == Some(llama_total()) {
                Ok(())
            } else {
                Err(format!("exit {code}, params_total {total:?}, {err:?}"))
            },
        );
    }
}

/// Oversized files (sparse, so nothing is written to disk): over the 32 MiB parse limit,
/// and over the CLI's 64 MiB read limit.
fn oversized_files(c: &mut Cases, f: &Files) {
    for (name, bytes, names) in [
        ("33mib.json", 33u64 << 20, &["limit", "bytes", "large"][..]),
        ("65mib.json", 65u64 << 20, &["65mib.json", "large"][..]),
    ] {
        let path = f.dir.join(name);
        let made = std::fs::File::create(&path).and_then(|file| file.set_len(bytes));
        let (code, out, err) = run_cli(&["model", "--config", &f.path(name)]);
        if err.contains("unknown command") {
            c.skipped += 1;
        } else {
            c.case(
                &format!("model --config {name}"),
                made.map_err(|e| e.to_string())
                    .and_then(|()| bad_input(code, &out, &err, names)),
            );
        }
    }
}

/// A 10^15-parameter config: status 0 and the exact integer (see llama_formula).
fn model_with_10_to_the_15_parameters_cli(c: &mut Cases, f: &Files) {
    let (h, layers, heads, inter, vocab) = (131_072u64, 4_096u64, 1_024u64, 524_288u64, 262_144u64);
    f.write(
        "huge.json",
        llama_like(h, layers, heads, inter, vocab).as_bytes(),
    );
    let want = llama_formula(h.into(), layers.into(), inter.into(), vocab.into());
    let (code, out, err) = run_cli(&["model", "--config", &f.path("huge.json"), "--json"]);
    if err.contains("unknown command") {
        c.skipped += 1;
    } else {
        let total = params_total(&out);
        c.case(
            "model --json, 10^15 parameters",
            if code == 0 && total.map(u128::from) == Some(want) {
                Ok(())
            } else {
                Err(format!(
                    "exit {code}, params_total {total:?} (want {want}), {err:?}"
                ))
            },
        );
    }
}

#[test]
fn cli_binary_never_prints_a_backtrace() {
    let mut c = Cases::new("cli_binary_never_prints_a_backtrace");
    let bin = env!("CARGO_BIN_EXE_llmcalc");
    let missing = std::env::temp_dir()
        .join("llmcalc-hostile-missing")
        .join("config.json");
    let missing = missing.to_string_lossy().into_owned();
    for (args, names) in [
        (
            vec!["model", "--config", missing.as_str()],
            vec!["config.json", "config"],
        ),
        (vec!["frobnicate", "--json"], vec!["frobnicate"]),
        (vec!["gpus", "--gpu"], vec!["gpu"]),
    ] {
        let out = Command::new(bin)
            .args(&args)
            .env("RUST_BACKTRACE", "full")
            .output();
        let label = format!("llmcalc {}", args.join(" "));
        c.case(
            &label,
            match out {
                Ok(o) => {
                    let err = String::from_utf8_lossy(&o.stderr);
                    let stdout = String::from_utf8_lossy(&o.stdout);
                    bad_input(o.status.code().unwrap_or(-1), &stdout, &err, &names)
                }
                Err(e) => Err(format!("could not run {bin}: {e}")),
            },
        );
    }
    let out = Command::new(bin).env("RUST_BACKTRACE", "1").output();
    c.case(
        "llmcalc (no arguments)",
        match out {
            Ok(o)
                if o.status.code() == Some(2)
                    && !String::from_utf8_lossy(&o.stderr).contains("panicked") =>
            {
                Ok(())
            }
            Ok(o) => Err(format!("exit {:?}", o.status.code())),
            Err(e) => Err(e.to_string()),
        },
    );
    let out = Command::new(bin).args(["gpus", "--json"]).output();
    c.case(
        "llmcalc gpus --json",
        match out {
            Ok(o)
                if o.status.code() == Some(0)
                    && serde_json::from_slice::<Value>(&o.stdout).is_ok() =>
            {
                Ok(())
            }
            Ok(o) => Err(format!(
                "exit {:?}: {}",
                o.status.code(),
                String::from_utf8_lossy(&o.stderr)
            )),
            Err(e) => Err(e.to_string()),
        },
    );
    c.finish();
}

#[test]
fn every_preset_survives_every_precision_and_tp() {
    let mut c = Cases::new("every_preset_survives_every_precision_and_tp");
    for p in llm_serving_calculator::core::model::presets::all() {
        let m = match p.parse() {
            Ok(m) => m,
            Err(e) => {
                c.case(&p.id, Err(e.to_string()));
                continue;
            }
        };
        c.case(&p.id, consistent(&m.params));
        for d in Dtype::ALL {
            for tp in [1u64, 2, 8, 3] {
                let label = format!("{} {d:?} tp {tp}", p.id);
                let r = match (
                    weights::with_dtype(&m, *d, tp),
                    KvProfile::from_model(&m, *d, tp, Architecture::Unknown),
                ) {
                    (Ok(w), Ok(kv)) => {
                        if w.per_gpu > w.total {
                            Err("per-GPU weights exceed the total".into())
                        } else if kv.per_request(1) > kv.per_request(1 << 20) {
                            Err("KV shrinks with context".into())
                        } else {
                            Ok(())
                        }
                    }
                    (Err(e), _) | (_, Err(e)) => {
                        rejection(&e, &["tp", "tensor parallel", "overflow"])
                    }
                };
                c.case(&label, r);
            }
        }
    }
    c.finish();
}
