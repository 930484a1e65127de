//! Every translation key the web UI names literally is a row of `data/i18n`, in both languages.
//!
//! The UI (`src/ui/`) is wasm-only, so this native test reads its source: string literals
//! passed to `tr(…)`, `t(…)`, `state.tr(…)`, or given as `…_key=`/`("…", "…_…")` tables.

use llm_serving_calculator::core::base::i18n::{has, tr, Lang};
use std::fs;

/// Quoted snake_case literals that look like translation keys in `text`.
fn keys_in(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, _) in text.match_indices('"') {
        let rest = text.get(i + 1..).unwrap_or("");
        let Some(end) = rest.find('"') else { continue };
        let lit = rest.get(..end).unwrap_or("");
        let before = text.get(i.saturating_sub(12)..i).unwrap_or("");
        let is_call =
            before.ends_with("tr(") || before.ends_with("t(") || before.ends_with("_key=");
        let looks_like_key = lit.len() > 2
            && lit.contains('_')
            && lit
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
        let known_prefix = [
            "ui_", "model_", "gpu_", "wl_", "card_", "math_", "fit_", "verdict_", "suggest_",
            "notice_", "unit_", "err_", "ledger_", "src_",
        ]
        .iter()
        .any(|p| lit.starts_with(p));
        if looks_like_key && (is_call || known_prefix) {
            out.push(lit.to_string());
        }
    }
    out
}

#[test]
fn every_ui_key_is_translated() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src/ui");
    let mut checked = 0;
    let mut missing = Vec::new();
    for entry in fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.extension().and_then(|e| e.to_str()) != Some("rs") {
            continue;
        }
        let text = fs::read_to_string(&path).unwrap_or_default();
        for k in keys_in(&text) {
            checked += 1;
            if !has(&k) {
                missing.push(format!("{}: {k}", path.display()));
            }
            for l in Lang::ALL {
                assert!(!tr(*l, &k).trim().is_empty());
            }
        }
    }
    assert!(
        checked > 100,
        "only {checked} keys found: is the scan broken?"
    );
    assert!(missing.is_empty(), "missing translations: {missing:#?}");
}
