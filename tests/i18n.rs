//! Every user-visible string of the browser app comes from the translations (`data/i18n`).
//!
//! Scans the UI and chart sources (`src/ui/**/*.rs`, `crates/charts/src/**/*.rs`) as text:
//! - every key passed to a translation call (`tr(lang, "key")`, `state.tr("key")`, and the
//!   local shorthands `t("key")` / `title("key")`) must be a row of `data/i18n`;
//! - no `view!` block may hold literal text with letters between tags (`<p>Hello</p>` or
//!   `<p>"Hello"</p>`): such text would show in one language only. Symbols, numbers and a few
//!   units that read the same in both languages are allowed.

use llm_serving_calculator::core::base::i18n::{entries, has, tr, Lang};
use std::fs;
use std::path::Path;

#[path = "common/source_files.rs"]
mod source_files;

fn sources() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = source_files::rust_files(&root.join("src/ui"));
    files.extend(source_files::rust_files(&root.join("crates/charts/src")));
    files.sort();
    files
        .into_iter()
        .filter_map(|p| {
            let text = fs::read_to_string(&p).ok()?;
            let name = p.strip_prefix(root).unwrap_or(&p).display().to_string();
            Some((name, text))
        })
        .collect()
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The identifier that ends right before byte `end` of `s` (`foo` in `x.foo(`).
fn ident_before(s: &str, end: usize) -> &str {
    let head = &s[..end];
    let start = head
        .char_indices()
        .rev()
        .find(|(_, c)| !is_ident_char(*c))
        .map(|(i, c)| i + c.len_utf8())
        .unwrap_or(0);
    &head[start..]
}

/// The string literal starting at byte `i` (which must be `"`), without escapes handling
/// beyond `\"`; returns its content and the byte after the closing quote.
fn literal_at(s: &str, i: usize) -> Option<(&str, usize)> {
    let rest = s.get(i + 1..)?;
    let mut prev = ' ';
    for (j, c) in rest.char_indices() {
        if c == '"' && prev != '\\' {
            return Some((&rest[..j], i + 1 + j + 1));
        }
        prev = c;
    }
    None
}

/// Keys passed to translation calls: `NAME("key")` for the translation helpers, and
/// `tr(<expr>, "key")`.
fn translation_keys(src: &str) -> Vec<(usize, String)> {
    const CALLS: &[&str] = &["tr", "t", "title", "tr_or"];
    let mut keys = Vec::new();
    for (i, _) in src.match_indices("(\"") {
        let name = ident_before(src, i);
        if CALLS.contains(&name) {
            if let Some((k, _)) = literal_at(src, i + 1) {
                keys.push((i, k.to_string()));
            }
        }
    }
    for (i, _) in src.match_indices("tr(") {
        if i > 0 && src[..i].chars().next_back().is_some_and(is_ident_char) {
            continue;
        }
        let args = &src[i + 3..];
        let Some(close) = args.find(')') else {
            continue;
        };
        let call = &args[..close];
        if call.starts_with('"') {
            continue; // handled above
        }
        if let Some(comma) = call.find(", \"") {
            if let Some((k, _)) = literal_at(call, comma + 2) {
                keys.push((i, k.to_string()));
            }
        }
    }
    keys
}

fn line_of(src: &str, byte: usize) -> usize {
    src[..byte.min(src.len())].matches('\n').count() + 1
}

/// The byte ranges of every `view! { … }` body (brace-matched, skipping string literals).
fn view_blocks(src: &str) -> Vec<(usize, usize)> {
    let mut blocks = Vec::new();
    for (i, _) in src.match_indices("view!") {
        let Some(open_rel) = src[i..].find('{') else {
            continue;
        };
        let open = i + open_rel;
        let mut depth = 0usize;
        let mut j = open;
        let bytes = src.as_bytes();
        while j < bytes.len() {
            match bytes[j] {
                b'"' => {
                    if let Some((_, next)) = literal_at(src, j) {
                        j = next;
                        continue;
                    }
                }
                b'{' => depth += 1,
                b'}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        blocks.push((open + 1, j));
                        break;
                    }
                }
                _ => {}
            }
            j += 1;
        }
    }
    blocks
}

/// Text that reads the same in both languages: units and symbols.
const ALLOWED_TEXT: &[&str] = &[
    "B", "KiB", "MiB", "GiB", "TiB", "kB", "MB", "GB", "TB", "GB/s", "TB/s", "TFLOP/s", "FLOP/B",
    "ms", "s", "h", "x", "×", "%", "$", "vLLM", "TP", "KV", "GPU", "FLOP", "FLOPs", "M", "N", "K",
    "e.g.",
];

fn has_letters(s: &str) -> bool {
    s.chars().any(|c| c.is_alphabetic())
}

fn allowed(text: &str) -> bool {
    let t = text.trim();
    !has_letters(t)
        || t.split(|c: char| c.is_whitespace() || c == ',' || c == '(' || c == ')')
            .filter(|w| has_letters(w))
            .all(|w| ALLOWED_TEXT.contains(&w))
}

/// Literal text children inside `view!` blocks: `>Text<` and `>"Text"` / `}"Text"{` forms.
fn literal_texts(src: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (start, end) in view_blocks(src) {
        let body = &src[start..end];
        // Quoted children: a string literal right after `>` or `}` (ignoring spaces).
        let mut i = 0;
        while let Some(rel) = body[i..].find('"') {
            let q = i + rel;
            let Some((content, next)) = literal_at(body, q) else {
                break;
            };
            let before = body[..q].trim_end().chars().next_back();
            let prev_is_child = matches!(before, Some('>') | Some('}'));
            let after = body[next..].trim_start().chars().next();
            let next_is_child = matches!(after, Some('<') | Some('{'));
            if prev_is_child && next_is_child && !allowed(content) {
                found.push((start + q, content.to_string()));
            }
            i = next;
        }
        // Unquoted text between tags.
        for (gt, _) in body.match_indices('>') {
            let rest = &body[gt + 1..];
            let Some(lt) = rest.find('<') else {
                continue;
            };
            let text = rest[..lt].trim();
            let code_like = text.chars().any(|c| "{}()=|;\"'.:&".contains(c));
            if !text.is_empty() && !code_like && !allowed(text) {
                found.push((start + gt, text.to_string()));
            }
        }
    }
    found
}

#[test]
fn every_translation_key_used_by_the_ui_exists() {
    let mut missing = Vec::new();
    let mut checked = 0;
    for (file, src) in sources() {
        for (at, key) in translation_keys(&src) {
            checked += 1;
            if !has(&key) {
                missing.push(format!("{file}:{}: \"{key}\"", line_of(&src, at)));
            }
        }
    }
    assert!(
        checked > 50,
        "only {checked} translation calls found: the scanner is broken"
    );
    assert!(
        missing.is_empty(),
        "keys not in the translations (add a row to data/i18n/<shell|late>/<area>.toml):\n{}",
        missing.join("\n")
    );
}

#[test]
fn no_literal_text_inside_view_blocks() {
    let mut found = Vec::new();
    for (file, src) in sources() {
        for (at, text) in literal_texts(&src) {
            found.push(format!("{file}:{}: {text:?}", line_of(&src, at)));
        }
    }
    assert!(
        found.is_empty(),
        "user-visible text outside the translations (data/i18n):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_scanner_catches_what_it_should() {
    let src = r#"
        fn a() { let x = tr(lang, "no_such_key_zz"); state.tr("app_title"); }
        fn b() -> impl IntoView {
            view! { <p class="x">Hello world</p> <span>"Bonjour"</span> <b>"GB"</b> {n}" × "{m} }
        }
    "#;
    let keys: Vec<String> = translation_keys(src).into_iter().map(|(_, k)| k).collect();
    assert_eq!(
        keys,
        vec!["app_title".to_string(), "no_such_key_zz".to_string()]
    );
    let texts: Vec<String> = literal_texts(src).into_iter().map(|(_, t)| t).collect();
    assert!(texts.contains(&"Hello world".to_string()), "{texts:?}");
    assert!(texts.contains(&"Bonjour".to_string()), "{texts:?}");
    assert!(
        !texts.iter().any(|t| t == "GB" || t.contains('×')),
        "{texts:?}"
    );
}

#[test]
fn missing_keys_show_the_marker_the_browser_tests_look_for() {
    // e2e/i18n.test.mjs searches the page for this marker in both languages.
    assert_eq!(tr(Lang::Ko, "no_such_key_zz"), "⟨missing translation⟩");
    assert_eq!(tr(Lang::En, "no_such_key_zz"), "⟨missing translation⟩");
    for (k, en, ko) in entries() {
        assert!(!en.contains('⟨') && !ko.contains('⟨'), "{k}");
    }
}

#[test]
fn every_derivation_the_report_shows_is_translated() {
    use llm_serving_calculator::core::base::derivation::Derivation;
    use llm_serving_calculator::core::hardware::catalog::Catalog;
    use llm_serving_calculator::core::model::presets;
    use llm_serving_calculator::core::present::report::evaluate;
    use llm_serving_calculator::core::scenario::{GpuChoice, ModelSource, Scenario};
    let mut missing = std::collections::BTreeSet::new();
    let mut check = |d: &Derivation| {
        let keys = std::iter::once(d.title_key.as_str())
            .chain(d.terms.iter().map(|t| t.name_key.as_str()))
            .chain(d.notes.iter().map(String::as_str));
        for k in keys {
            if !has(k) {
                missing.insert(k.to_string());
            }
        }
    };
    for p in presets::all() {
        let s = Scenario {
            model: ModelSource::Preset(p.id.to_string()),
            gpus: vec![
                GpuChoice::Catalog("a10g".into()),
                GpuChoice::Catalog("h100-sxm".into()),
            ],
            ..Scenario::default()
        };
        let Ok(r) = evaluate(&s, Catalog::builtin()) else {
            continue;
        };
        r.derivations.iter().for_each(&mut check);
        for g in &r.gpus {
            g.derivations.iter().for_each(&mut check);
        }
    }
    assert!(
        missing.is_empty(),
        "derivation keys the \"Show the math\" panels show untranslated: {missing:?}"
    );
}
