//! The split of the translations between the shell and the late module, checked against a built
//! shell: a row's folder (`data/i18n/shell` or `data/i18n/late`) says which wasm module ships it.
//!
//! A key the shell's code names is stored in its wasm as text (no key the shell uses is built at
//! run time), so the rows the shell needs are exactly the keys found in its linked wasm once its
//! own packed rows are blanked out. This test reads the shell's wasm and fails
//! - for a key of `data/i18n/late` the shell names (the shell would show the missing marker):
//!   move its row to `data/i18n/shell`;
//! - for a key of `data/i18n/shell` the shell does not name (it ships in the shell for
//!   nothing): move its row to `data/i18n/late`;
//!
//! and on failure it prints which keys to move, from which file.
//!
//! It needs a release build of the shell, so it is ignored by default:
//!
//! ```text
//! cargo build --release --target wasm32-unknown-unknown --bin app
//! cargo test --test late_keys -- --ignored
//! ```
//!
//! (`LLMCALC_SHELL_WASM=path` reads another file, such as a dist's `app-…_bg.wasm`.) The e2e
//! test "i18n split" checks the first half on every built dist.

mod common;

use llm_serving_calculator::core::base::i18n::{late_rows, shell_rows};
use std::path::PathBuf;

/// The shell's rows packed as `build.rs` packs them (`key NUL English NUL Korean NUL`).
fn shell_packed() -> Vec<u8> {
    let mut out = Vec::new();
    for (k, en, ko) in shell_rows() {
        for part in [k, en, ko] {
            out.extend_from_slice(part.as_bytes());
            out.push(0);
        }
    }
    out
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() || needle.len() > hay.len() {
        return None;
    }
    hay.windows(needle.len()).position(|w| w == needle)
}

#[test]
#[ignore = "needs a release build of the shell's wasm (see the module docs)"]
fn late_rows_are_the_keys_the_shell_does_not_name() {
    let path = std::env::var_os("LLMCALC_SHELL_WASM").map_or_else(
        || {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("target/wasm32-unknown-unknown/release/app.wasm")
        },
        PathBuf::from,
    );
    let mut wasm = std::fs::read(&path).unwrap_or_else(|e| {
        panic!(
            "cannot read {} ({e}): cargo build --release --target wasm32-unknown-unknown --bin app",
            path.display()
        )
    });
    // Blank out the shell's own packed rows: their keys are there whatever the code names.
    let packed = shell_packed();
    let at = find(&wasm, &packed).unwrap_or_else(|| {
        panic!(
            "the shell's packed rows are not in {}: was it built from this data/i18n? Rebuild it",
            path.display()
        )
    });
    wasm[at..at + packed.len()].fill(0);
    // The check can fail: keys the first answer shows are named by the shell.
    for k in ["app_title", "ui_section_fit", "late_loading"] {
        assert!(
            find(&wasm, k.as_bytes()).is_some(),
            "{k} not found in the shell's wasm: is the scan broken?"
        );
    }
    let named = |k: &&str| find(&wasm, k.as_bytes()).is_some();
    let to_shell: Vec<String> = late_rows()
        .iter()
        .map(|r| r.0)
        .filter(named)
        .map(|k| format!("{k} (in {})", common::i18n_file_of("late", k)))
        .collect();
    let to_late: Vec<String> = shell_rows()
        .iter()
        .map(|r| r.0)
        .filter(|k| !named(k))
        .map(|k| format!("{k} (in {})", common::i18n_file_of("shell", k)))
        .collect();
    assert!(
        to_shell.is_empty() && to_late.is_empty(),
        "the split of data/i18n differs from what {} names:\n\
         - named by the shell, move to data/i18n/shell ({}):\n    {}\n\
         - not named by the shell, move to data/i18n/late ({}):\n    {}",
        path.display(),
        to_shell.len(),
        to_shell.join("\n    "),
        to_late.len(),
        to_late.join("\n    ")
    );
}
