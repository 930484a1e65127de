//! One concern per file (issue 45): no `.rs` file under `src/` or `crates/*/src/` is longer
//! than [`MAX_LINES`] lines, except the data tables of [`DATA_TABLES`]. A file that grows past
//! it is split by concern: its tests into a `tests.rs` beside its code (`#[cfg(test)] mod
//! tests;`), its code into submodules (`foo.rs` becomes `foo/mod.rs` and `foo/<concern>.rs`).

#![cfg(not(target_arch = "wasm32"))]

use std::path::Path;

#[path = "common/source_files.rs"]
mod source_files;
use source_files::source_files;

/// The most lines a source file may have.
const MAX_LINES: usize = 800;

/// Files exempt from [`MAX_LINES`], from the repository's root: only a file that is mostly
/// literal data (rows of numbers compiled in), where a split would cut a table in two rather
/// than separate concerns, each with the reason. None today: the project's data lives in
/// `data/` and is read with `include_str!`.
const DATA_TABLES: &[(&str, &str)] = &[];

/// A file's path from the repository's root, `/`-separated.
fn relative(file: &Path) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let rel = file.strip_prefix(root).unwrap_or(file);
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// Each source file longer than `limit` lines and not a listed data table, with its length.
fn too_long(limit: usize) -> Vec<(String, usize)> {
    source_files()
        .iter()
        .filter_map(|f| {
            let lines = std::fs::read_to_string(f).ok()?.lines().count();
            let rel = relative(f);
            (lines > limit && !DATA_TABLES.iter().any(|(t, _)| *t == rel)).then_some((rel, lines))
        })
        .collect()
}

#[test]
fn no_source_file_is_over_the_limit() {
    let long = too_long(MAX_LINES);
    assert!(
        long.is_empty(),
        "over {MAX_LINES} lines (split each by concern, see the module docs):\n{}",
        long.iter()
            .map(|(f, n)| format!("  {f}: {n}"))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// A listed data table exists and is still over the limit (else its entry goes).
#[test]
fn every_listed_data_table_is_still_needed() {
    for (table, why) in DATA_TABLES {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(table);
        let lines = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{table} ({why}): {e}"))
            .lines()
            .count();
        assert!(
            lines > MAX_LINES,
            "{table} has {lines} lines: it no longer needs its exemption"
        );
    }
}

/// The checker itself: it reads the sources and finds the files over a lower limit.
#[test]
fn the_checker_sees_long_files() {
    let files = source_files();
    assert!(files.len() > 100, "read only {} files", files.len());
    assert!(!too_long(100).is_empty());
}

/// A `tests.rs` holds test code only: its module is declared `#[cfg(test)] mod tests;` in the
/// `mod.rs` beside it (`tests/layers.rs` reads such files as test code).
#[test]
fn every_tests_file_is_a_test_module() {
    for f in source_files()
        .iter()
        .filter(|f| f.file_name().is_some_and(|n| n == "tests.rs"))
    {
        let parent = f.with_file_name("mod.rs");
        let text = std::fs::read_to_string(&parent).unwrap_or_default();
        assert!(
            text.contains("#[cfg(test)]\nmod tests;"),
            "{} is not declared `#[cfg(test)] mod tests;` in {}",
            relative(f),
            relative(&parent)
        );
    }
}

/// The most lines a derivation builder may have (issue 45: a derivation is written once, from
/// terms built by small functions, not by one long function).
const MAX_BUILDER_LINES: usize = 60;

/// Each non-test function of the core (`crates/core/src`) longer than `limit` lines that
/// builds a derivation (its body writes `Derivation {` or pushes a `Term::`), with its file
/// and length. A function is read from its `fn` line to the closing brace at the same indent.
fn long_builders(limit: usize) -> Vec<(String, String, usize)> {
    let mut out = Vec::new();
    for f in source_files()
        .iter()
        .filter(|f| relative(f).starts_with("crates/core/src/"))
        .filter(|f| f.file_name().is_some_and(|n| n != "tests.rs"))
    {
        let text = std::fs::read_to_string(f).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        let tests_from = lines
            .iter()
            .position(|l| l.trim() == "#[cfg(test)]")
            .unwrap_or(lines.len());
        for (i, l) in lines.iter().enumerate().take(tests_from) {
            let t = l.trim_start();
            let indent = &l[..l.len() - t.len()];
            let name = ["fn ", "pub fn ", "pub(crate) fn ", "pub(super) fn "]
                .iter()
                .find_map(|p| t.strip_prefix(p))
                .and_then(|r| r.split(['(', '<']).next());
            let Some(name) = name else { continue };
            let close = format!("{indent}}}");
            let Some(end) = (i + 1..lines.len()).find(|&j| lines[j] == close) else {
                continue;
            };
            let body = lines[i..=end].join("\n");
            let n = end - i + 1;
            if n > limit && (body.contains("Derivation {") || body.contains("Term::")) {
                out.push((relative(f), name.to_string(), n));
            }
        }
    }
    out
}

#[test]
fn no_derivation_builder_is_over_the_limit() {
    let long = long_builders(MAX_BUILDER_LINES);
    assert!(
        long.is_empty(),
        "derivation builders over {MAX_BUILDER_LINES} lines (build their terms in small functions):\n{}",
        long.iter()
            .map(|(f, name, n)| format!("  {f} {name}: {n}"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    // The checker itself finds the builders under a lower limit.
    assert!(!long_builders(20).is_empty());
}
