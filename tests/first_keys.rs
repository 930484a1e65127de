//! What the first-answer module carries (`crates/first/src/main.rs`, `present::link_first`):
//! `data/i18n/first_keys.txt`, the translation keys the first screen looks up
//! (`core::present::FirstScreen::json`, whose lookups `base::lookups::record` records) over
//! every preset, every catalog GPU alone and the default three, both languages, and the
//! precisions, TP degrees, contexts and client counts a link sets. A key outside the list makes
//! the module decline the link (the shell answers it), so a missing one costs speed, never a
//! wrong text; the list is checked here so it stays what the first screen reads. The first
//! screen reads no config (the presets' models are stored, `model::presets_first`): checked
//! here too, as no configuration class looked up.

use llm_serving_calculator::core::base::lookups::record;
use llm_serving_calculator::core::base::Lang;
use llm_serving_calculator::core::hardware::Catalog;
use llm_serving_calculator::core::model::presets;
use llm_serving_calculator::core::present::FirstScreen;
use std::collections::BTreeSet;

const OUT: &str = "data/i18n/first_keys.txt";

/// The links recorded: each preset with the default GPUs and the variations a link sets, and
/// each catalog GPU alone.
fn links() -> Vec<String> {
    let mut out = vec![String::new()];
    let variations = [
        "",
        "&ctx=8192&n=8&gpu=h100-sxm&gpu=l40s&gpu=a10g",
        "&tp=2&wd=fp8&kvd=fp8",
        "&tp=4&wd=int4&ctx=32768&n=64",
        "&tp=8&ctx=131072&n=1",
        "&n=1024&ctx=4096",
    ];
    for p in presets::all() {
        for v in variations {
            out.push(format!("?model={}{v}", p.id));
        }
    }
    for g in &Catalog::builtin().accelerators {
        out.push(format!("?gpu={}", g.id));
        out.push(format!("?model=llama-3.1-70b&tp=2&gpu={}", g.id));
    }
    out
}

/// Every translation key and every configuration class (`model_type`, of
/// `data/config_defaults.csv`) the first screen looks up over [`links`] in both languages.
fn recorded() -> (BTreeSet<String>, BTreeSet<String>) {
    let (mut keys, mut types) = (BTreeSet::new(), BTreeSet::new());
    for q in links() {
        for lang in [Lang::En, Lang::Ko] {
            let (_, asked) = record(|| FirstScreen::json(&q, lang));
            for (table, name) in asked {
                match table {
                    "i18n" => keys.insert(name),
                    _ => types.insert(name),
                };
            }
        }
    }
    (keys, types)
}

fn text(what: &str, list: &BTreeSet<String>) -> String {
    let mut s = format!(
        "# The {what} the first-answer module carries (crates/first/src/main.rs), one per line:\n\
         # what the first screen looks up, made by tests/first_keys.rs\n\
         # (cargo test --release --test first_keys -- --ignored regenerate). Do not edit by hand.\n",
    );
    for k in list {
        s.push_str(k);
        s.push('\n');
    }
    s
}

const KEYS_WHAT: &str = "translation keys";

#[test]
#[ignore = "writes data/i18n/first_keys.txt"]
fn regenerate() {
    let (keys, _) = recorded();
    std::fs::write(OUT, text(KEYS_WHAT, &keys)).expect("writes the key list");
}

#[test]
fn the_list_is_what_the_first_screen_looks_up() {
    let (keys, types) = recorded();
    let committed = std::fs::read_to_string(OUT).expect("data/i18n/first_keys.txt");
    let made = text(KEYS_WHAT, &keys);
    assert!(
        committed == made,
        "{OUT} is not what the first screen looks up: run `cargo test --release --test first_keys -- --ignored regenerate`"
    );
    // No config is read: a preset's model comes stored, so the module links no reader.
    assert!(
        types.is_empty(),
        "the first screen read configs of {types:?}"
    );

    // Every key listed exists (a key that is not a row is a miss in the module too).
    for k in made.lines().filter(|l| !l.starts_with('#')) {
        assert!(llm_serving_calculator::core::base::i18n::has(k), "{k}");
    }
}

/// The first screen serves the links it served before the list existed: a shell key it
/// looks up outside the list would make it decline here too (natively every row is there,
/// so this checks the decline rule itself: `json` is "" exactly when `of` is `None`).
#[test]
fn a_served_link_is_served_with_every_row() {
    for q in links() {
        let json = FirstScreen::json(&q, Lang::En);
        assert_eq!(
            json.is_empty(),
            FirstScreen::of(&q, Lang::En).is_none(),
            "{q}"
        );
    }
}
