//! Derives `i18n::LATE_KEYS` from a built shell instead of keeping it by hand (issue 18).
//!
//! A key the shell's code names is stored in its wasm as text (no key is built at run time), so
//! the rows the shell needs are exactly the keys found in its linked wasm once its own packed
//! table is blanked out. This test reads the shell's wasm, derives the list and compares it with
//! `LATE_KEYS`:
//! - a key of `LATE_KEYS` the shell names fails it (the shell would show the missing marker);
//! - a key the shell does not name but `LATE_KEYS` lacks fails it too (it ships in the shell
//!   for nothing);
//!
//! and on failure it prints the whole derived list, to paste into `LATE_KEYS`.
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

use llm_serving_calculator::core::base::i18n::{LATE_KEYS, TABLE};
use std::path::PathBuf;

/// The shell's rows of `TABLE` packed as `i18n` packs them (`key NUL English NUL Korean NUL`).
fn shell_packed() -> Vec<u8> {
    let mut out = Vec::new();
    for (k, en, ko) in TABLE {
        if LATE_KEYS.binary_search(k).is_ok() {
            continue;
        }
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
fn late_keys_are_the_keys_the_shell_does_not_name() {
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
    // Blank out the shell's own packed table: its keys are there whatever the code names.
    let packed = shell_packed();
    let at = find(&wasm, &packed).unwrap_or_else(|| {
        panic!(
            "the shell's packed table is not in {}: was it built from this LATE_KEYS? Rebuild it",
            path.display()
        )
    });
    wasm[at..at + packed.len()].fill(0);
    // The derived list, in TABLE's key order (sorted like LATE_KEYS).
    let mut derived: Vec<&str> = TABLE
        .iter()
        .map(|(k, _, _)| *k)
        .filter(|k| find(&wasm, k.as_bytes()).is_none())
        .collect();
    derived.sort_unstable();
    derived.dedup();
    // The check can fail: keys the first answer shows are named by the shell.
    for k in ["app_title", "ui_section_fit", "late_loading"] {
        assert!(
            find(&wasm, k.as_bytes()).is_some(),
            "{k} not found in the shell's wasm: is the scan broken?"
        );
    }
    let named: Vec<&str> = LATE_KEYS
        .iter()
        .copied()
        .filter(|k| derived.binary_search(k).is_err())
        .collect();
    let missing: Vec<&str> = derived
        .iter()
        .copied()
        .filter(|k| LATE_KEYS.binary_search(k).is_err())
        .collect();
    if !named.is_empty() || !missing.is_empty() {
        let list: String = derived.iter().map(|k| format!("    \"{k}\",\n")).collect();
        panic!(
            "LATE_KEYS differs from what {} names:\n- named by the shell (take out): {named:?}\n\
             - not named by the shell (add): {missing:?}\nThe derived list ({} keys):\n{list}",
            path.display(),
            derived.len()
        );
    }
}
