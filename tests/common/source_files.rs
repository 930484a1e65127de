//! The project's Rust sources, for the tests that read them (file sizes, layers, translation
//! keys). A module of its own, included with `#[path]`, so those tests do not compile the
//! simulation helpers of `common/mod.rs`.
// Every test crate uses only some of these.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The repository's root.
pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every `.rs` file under `dir`, recursively, sorted.
pub fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    collect(dir, &mut out);
    out.sort();
    out
}

/// Every `.rs` file under `src/` and each `crates/*/src/`, sorted.
pub fn source_files() -> Vec<PathBuf> {
    let mut out = rust_files(&root().join("src"));
    for krate in std::fs::read_dir(root().join("crates"))
        .into_iter()
        .flatten()
        .flatten()
    {
        out.extend(rust_files(&krate.path().join("src")));
    }
    out.sort();
    out
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            collect(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}
