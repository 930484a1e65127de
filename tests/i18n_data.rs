//! The translation rows (`data/i18n/<shell|late>/<area>.toml`) are complete and all used.
//!
//! - Every row has both languages (`build.rs` already refuses a row without one; this states it).
//! - Every key is named by some source: a string literal `"key"` in `src/`, or a member of a
//!   family of keys built at compile or run time ([`families`]). A key nothing names is dead
//!   text shipped to every user: delete its row.

mod common;

use common::source_files;
use llm_serving_calculator::core::base::i18n::{entries, late_rows, shell_rows};
use std::collections::BTreeSet;
use std::path::Path;

/// Keys no source names as a literal, because they are built from parts: (the keys, where and
/// why). Each family is listed by the code that builds it, so a key outside it still fails.
fn families() -> Vec<(Vec<String>, &'static str)> {
    vec![(
        llm_serving_calculator::charts::Labels::KEYS
            .iter()
            .map(|k| k.to_string())
            .collect(),
        "chart labels: crates/charts/src/lib.rs's labels! translates concat!(\"chart_\", field)",
    )]
}

/// Every snake_case string literal (`"a_b"`) of the Rust files under `src/` and the crates'
/// `crates/*/src/`, except the translation module itself (its own tests name a few keys).
fn literals_in_src() -> BTreeSet<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let files = source_files::source_files();
    let own = root.join("crates/core/src/base/i18n.rs");
    let mut out = BTreeSet::new();
    for f in files.iter().filter(|f| **f != own) {
        let text = std::fs::read_to_string(f).unwrap_or_default();
        out.extend(literals(&text));
    }
    out
}

/// The snake_case string literals of `text`.
fn literals(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split('"')
        .filter(|s| {
            !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        })
        .map(str::to_string)
}

/// The keys of `keys` that neither a literal nor a family names.
fn unused<'a>(
    keys: impl Iterator<Item = &'a str>,
    literals: &BTreeSet<String>,
    families: &[(Vec<String>, &str)],
) -> Vec<&'a str> {
    keys.filter(|k| !literals.contains(*k))
        .filter(|k| !families.iter().any(|(f, _)| f.iter().any(|m| m == k)))
        .collect()
}

/// The data file holding the row `key` (for messages).
fn file_of(key: &str) -> String {
    let module = if shell_rows().iter().any(|r| r.0 == key) {
        "shell"
    } else {
        "late"
    };
    common::i18n_file_of(module, key)
}

#[test]
fn every_row_has_both_languages() {
    let rows = entries();
    assert!(rows.len() > 1000, "only {} rows", rows.len());
    assert_eq!(rows.len(), shell_rows().len() + late_rows().len());
    let missing: Vec<String> = rows
        .iter()
        .filter(|(_, en, ko)| en.trim().is_empty() || ko.trim().is_empty())
        .map(|(k, _, _)| format!("{k} ({})", file_of(k)))
        .collect();
    assert!(
        missing.is_empty(),
        "rows without English or Korean: {missing:?}"
    );
}

#[test]
fn every_key_is_named_by_a_source() {
    let literals = literals_in_src();
    assert!(literals.len() > 1000, "only {} literals", literals.len());
    let families = families();
    for (members, why) in &families {
        assert!(!members.is_empty(), "an empty family: {why}");
    }
    let rows = entries();
    let dead: Vec<String> = unused(rows.iter().map(|r| r.0), &literals, &families)
        .into_iter()
        .map(|k| format!("{k} ({})", file_of(k)))
        .collect();
    assert!(
        dead.is_empty(),
        "keys nothing in src/ or crates/*/src/ names (delete their rows, or list the code that builds them in \
         families()):\n  {}",
        dead.join("\n  ")
    );
}

#[test]
fn the_unused_check_can_fail() {
    let src = r#"tr(lang, "app_title"); Labels { a: "not key" }; t("zz_named")"#;
    let lits: BTreeSet<String> = literals(src).collect();
    let fam = vec![(vec!["chart_zz".to_string()], "a test family")];
    let keys = [
        "app_title",
        "zz_named",
        "chart_zz",
        "zz_dummy_nothing_names",
    ];
    assert_eq!(
        unused(keys.into_iter(), &lits, &fam),
        vec!["zz_dummy_nothing_names"]
    );
}
