//! What the first-answer modules carry (`crates/first/src/main.rs`, `present::link_first`, and
//! for embedded widgets `crates/first/src/embed.rs`, `present::link_embed`, whose list
//! `data/i18n/embed_keys.txt` is made the same way from `EmbedScreen::json` over the widgets'
//! links, plus every chart label):
//! `data/i18n/first_keys.txt`, the translation keys the first screen looks up
//! (`core::present::FirstScreen::json`, whose lookups `base::lookups::record` records) over
//! every preset, every catalog GPU alone and the default three, both languages, and the
//! precisions, TP degrees, contexts and client counts a link sets. A key outside the list makes
//! the module decline the link (the shell answers it), so a missing one costs speed, never a
//! wrong text; the list is checked here so it stays what the first screen reads. The first
//! screen reads no config (the presets' models are stored, `model::presets_first`): checked
//! here too, as no configuration class looked up.

use llm_serving_calculator::charts::Labels;
use llm_serving_calculator::core::base::lookups::record;
use llm_serving_calculator::core::base::Lang;
use llm_serving_calculator::core::hardware::Catalog;
use llm_serving_calculator::core::model::presets;
use llm_serving_calculator::core::present::{EmbedScreen, FirstScreen};
use std::collections::BTreeSet;

const OUT: &str = "data/i18n/first_keys.txt";
const EMBED_OUT: &str = "data/i18n/embed_keys.txt";

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

/// The embedded widgets' links: each of [`links`] as each widget the module answers.
fn embed_links() -> Vec<String> {
    let mut out = Vec::new();
    for w in ["memory", "kv", "batch"] {
        for q in links() {
            out.push(format!("?embed={w}&{}", q.trim_start_matches('?')));
        }
    }
    out
}

/// Every translation key and every configuration class (`model_type`, of
/// `data/config_defaults.csv`) the first screen looks up over [`links`] in both languages.
fn recorded() -> (BTreeSet<String>, BTreeSet<String>) {
    recorded_by(&links(), FirstScreen::json)
}

/// The same for the embedded widgets, with every chart label (the module draws the chart).
fn recorded_embed() -> (BTreeSet<String>, BTreeSet<String>) {
    let (mut keys, types) =
        recorded_by(&embed_links(), |q, lang| EmbedScreen::json("/", q, lang).0);
    keys.extend(Labels::KEYS.iter().map(|k| (*k).to_string()));
    (keys, types)
}

fn recorded_by(
    links: &[String],
    json: impl Fn(&str, Lang) -> String,
) -> (BTreeSet<String>, BTreeSet<String>) {
    let (mut keys, mut types) = (BTreeSet::new(), BTreeSet::new());
    for q in links {
        for lang in [Lang::En, Lang::Ko] {
            let (_, asked) = record(|| json(q, lang));
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
    push_lines(&mut s, list);
    s
}

fn embed_text(list: &BTreeSet<String>) -> String {
    let mut s = String::from(
        "# The translation keys the embeds' first-answer module carries (crates/first/src/embed.rs),\n\
         # one per line: what an embedded widget's first answer looks up and its chart's labels, made\n\
         # by tests/first_keys.rs (cargo test --release --test first_keys -- --ignored regenerate).\n\
         # Do not edit by hand.\n",
    );
    push_lines(&mut s, list);
    s
}

fn push_lines(s: &mut String, list: &BTreeSet<String>) {
    for k in list {
        s.push_str(k);
        s.push('\n');
    }
}

const KEYS_WHAT: &str = "translation keys";

#[test]
#[ignore = "writes data/i18n/first_keys.txt"]
fn regenerate() {
    let (keys, _) = recorded();
    std::fs::write(OUT, text(KEYS_WHAT, &keys)).expect("writes the key list");
    let (keys, _) = recorded_embed();
    std::fs::write(EMBED_OUT, embed_text(&keys)).expect("writes the embeds' key list");
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

#[test]
fn the_embeds_list_is_what_an_embedded_widget_looks_up() {
    let (keys, types) = recorded_embed();
    let committed = std::fs::read_to_string(EMBED_OUT).expect("data/i18n/embed_keys.txt");
    assert!(
        committed == embed_text(&keys),
        "{EMBED_OUT} is not what an embedded widget looks up: run `cargo test --release --test first_keys -- --ignored regenerate`"
    );
    assert!(
        types.is_empty(),
        "an embedded widget read configs of {types:?}"
    );
    for k in &keys {
        assert!(llm_serving_calculator::core::base::i18n::has(k), "{k}");
    }
    // The module serves the widgets' default links.
    for w in ["memory", "kv", "batch"] {
        assert!(
            !EmbedScreen::json("/", &format!("?embed={w}"), Lang::Ko)
                .0
                .is_empty(),
            "{w}"
        );
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
