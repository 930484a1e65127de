//! Packs the translation rows (`data/i18n/<shell|late>/<area>.toml`) into the texts
//! `crates/core/src/base/i18n.rs` includes: `$OUT_DIR/i18n_shell.txt` and `$OUT_DIR/i18n_late.txt`,
//! each `key NUL English NUL Korean NUL` per row, in file-name order then file order, and
//! `$OUT_DIR/i18n_first.txt` and `$OUT_DIR/i18n_embed.txt`, the shell rows whose keys
//! `data/i18n/first_keys.txt` and `embed_keys.txt` list (what the first-answer modules carry).
//!
//! A row's folder says which wasm module ships it: `shell` (the page's first module) or `late`
//! (the late sections and the simulator worker, after `i18n::link_late`). The build stops on a
//! key that is not snake_case or appears twice (in any file of either folder), a language
//! missing or empty, a field other than `en`/`ko`, or a NUL character.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The two folders, in the order their texts are named.
const MODULES: [&str; 2] = ["shell", "late"];

fn main() {
    let root = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"))
        .join("../../data/i18n");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed={}", root.display());
    let mut seen = HashMap::new();
    let mut errors = Vec::new();
    // The first screens' keys (one per line; made by `tests/first_keys.rs`): a link's, an
    // embedded widget's.
    let mut subsets: Vec<(&str, std::collections::HashSet<String>, String)> = ["first", "embed"]
        .into_iter()
        .map(|name| {
            let list = root.join(format!("{name}_keys.txt"));
            println!("cargo:rerun-if-changed={}", list.display());
            let keys = std::fs::read_to_string(&list)
                .unwrap_or_default()
                .lines()
                .map(str::trim)
                .filter(|k| !k.is_empty())
                .map(String::from)
                .collect();
            (name, keys, String::new())
        })
        .collect();
    for module in MODULES {
        let dir = root.join(module);
        println!("cargo:rerun-if-changed={}", dir.display());
        let mut text = String::new();
        for file in toml_files(&dir) {
            println!("cargo:rerun-if-changed={}", file.display());
            let name = file
                .strip_prefix(&root)
                .unwrap_or(&file)
                .display()
                .to_string();
            for (key, en, ko) in rows(&file, &name, &mut seen, &mut errors) {
                for part in [&key, &en, &ko] {
                    text.push_str(part);
                    text.push('\0');
                }
                for (_, keys, subset) in &mut subsets {
                    if module == "shell" && keys.contains(&key) {
                        for part in [&key, &en, &ko] {
                            subset.push_str(part);
                            subset.push('\0');
                        }
                    }
                }
            }
        }
        std::fs::write(out.join(format!("i18n_{module}.txt")), text)
            .expect("cannot write into OUT_DIR");
    }
    for (name, _, subset) in subsets {
        std::fs::write(out.join(format!("i18n_{name}.txt")), subset)
            .expect("cannot write into OUT_DIR");
    }
    if seen.is_empty() {
        errors.push(format!("no translation rows under {}", root.display()));
    }
    if !errors.is_empty() {
        let mut msg = String::from("the translation data (data/i18n) is invalid:\n");
        for e in &errors {
            let _ = writeln!(msg, "  {e}");
        }
        panic!("{msg}");
    }
}

/// The `.toml` files of `dir`, sorted by name (so the packed text does not depend on the file
/// system's order).
fn toml_files(dir: &Path) -> Vec<PathBuf> {
    let entries = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read the folder {}: {e}", dir.display()));
    let mut files: Vec<PathBuf> = entries
        .map(|e| e.expect("a folder entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    files
}

/// The valid rows of one file, in its order; each problem is added to `errors`. `seen` maps
/// every key read so far to its file.
fn rows(
    file: &Path,
    name: &str,
    seen: &mut HashMap<String, String>,
    errors: &mut Vec<String>,
) -> Vec<(String, String, String)> {
    let src = std::fs::read_to_string(file)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", file.display()));
    let table: toml::Table = match src.parse() {
        Ok(t) => t,
        Err(e) => {
            errors.push(format!("{name}: not TOML: {e}"));
            return Vec::new();
        }
    };
    let mut out = Vec::new();
    for (key, row) in table {
        if let Some(first) = seen.insert(key.clone(), name.to_string()) {
            errors.push(format!("{name}: [{key}] is already a row of {first}"));
        }
        if !is_snake_case(&key) {
            errors.push(format!(
                "{name}: [{key}]: a key is snake_case (a-z, 0-9, _)"
            ));
        }
        let Some(row) = row.as_table() else {
            errors.push(format!(
                "{name}: {key}: a row is a table [{key}] with en and ko"
            ));
            continue;
        };
        for field in row.keys().filter(|f| *f != "en" && *f != "ko") {
            errors.push(format!("{name}: [{key}]: unknown field {field}"));
        }
        let mut text = |lang: &str| match row.get(lang).and_then(toml::Value::as_str) {
            Some(s) if s.contains('\0') => {
                errors.push(format!("{name}: [{key}]: a NUL character in {lang}"));
                None
            }
            Some(s) if !s.trim().is_empty() => Some(s.to_string()),
            _ => {
                errors.push(format!("{name}: [{key}]: {lang} missing or empty"));
                None
            }
        };
        if let (Some(en), Some(ko)) = (text("en"), text("ko")) {
            out.push((key, en, ko));
        }
    }
    out
}

fn is_snake_case(key: &str) -> bool {
    key.starts_with(|c: char| c.is_ascii_lowercase())
        && !key.ends_with('_')
        && !key.contains("__")
        && key
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}
