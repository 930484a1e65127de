//! The translations: every user-visible string, in English and Korean.
//!
//! The rows live in `data/i18n/<shell|late>/<area>.toml` (`[key]`, then `en = "…"` and
//! `ko = "…"`); `build.rs` checks them (keys snake_case and unique across all files, both
//! languages present and non-empty, no NUL) and packs each folder into one text this module
//! includes. A row's folder says which wasm module ships it: `shell` rows are in the page's
//! first module, `late` rows only in binaries that call [`link_late`] (the late sections and
//! the simulator worker); in wasm the shell rows too are linked by a call, [`link_shell`], so
//! the first-answer module can carry only the first screen's ([`link_first`]); natively (CLI,
//! tests) every row is always there. UI code calls [`tr`]; nothing user-visible is written
//! inline.

use serde::{Deserialize, Serialize};
use std::sync::OnceLock;

/// A UI language.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Lang {
    /// English.
    #[default]
    En,
    /// Korean.
    Ko,
}

impl Lang {
    /// Both languages.
    pub const ALL: &'static [Lang] = &[Lang::En, Lang::Ko];

    /// The BCP-47 code (`en`, `ko`).
    pub const fn code(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::Ko => "ko",
        }
    }

    /// From a code such as `ko`, `ko-KR`, `en-US`; anything else is `None`.
    pub fn from_code(s: &str) -> Option<Lang> {
        let s = s.trim().to_ascii_lowercase();
        if s == "ko" || s.starts_with("ko-") {
            Some(Lang::Ko)
        } else if s == "en" || s.starts_with("en-") {
            Some(Lang::En)
        } else {
            None
        }
    }

    /// The BCP-47 locale whose number conventions the UI follows (`en-US`, `ko-KR`).
    pub const fn locale(self) -> &'static str {
        match self {
            Lang::En => "en-US",
            Lang::Ko => "ko-KR",
        }
    }

    /// How numbers are written in this language (CLDR `en` and `ko` agree: "," and ".").
    pub const fn number_symbols(self) -> crate::base::units::NumberSymbols {
        match self {
            Lang::En | Lang::Ko => crate::base::units::NumberSymbols::COMMA_DOT,
        }
    }
}

/// The shell's rows (`data/i18n/shell/*.toml`), packed by `build.rs` as `key NUL English NUL
/// Korean NUL` per row, in file-name order then file order; in wasm, linked only by a binary
/// that calls [`link_shell`].
static SHELL_TEXT: &str = include_str!(concat!(env!("OUT_DIR"), "/i18n_shell.txt"));

/// The shell's rows that a scenario link's first screen looks up (the keys of
/// `data/i18n/first_keys.txt`), packed the same way: what the first-answer module links
/// ([`link_first`]) instead of every shell row.
#[cfg(target_arch = "wasm32")]
static FIRST_TEXT: &str = include_str!(concat!(env!("OUT_DIR"), "/i18n_first.txt"));

/// The shell's rows that an embedded widget's first answer looks up, its chart's labels
/// included (`data/i18n/embed_keys.txt`): what the embeds' first-answer module links
/// ([`link_embed`]).
#[cfg(target_arch = "wasm32")]
static EMBED_TEXT: &str = include_str!(concat!(env!("OUT_DIR"), "/i18n_embed.txt"));

/// The shell's rows once [`link_shell`], [`link_first`] or [`link_embed`] ran (wasm only: natively every row
/// is always there).
#[cfg(target_arch = "wasm32")]
static SHELL_LINKED: OnceLock<&'static str> = OnceLock::new();

/// Makes every shell row (`data/i18n/shell`) available to [`tr`] in this binary: each wasm
/// binary but the first-answer module calls it before anything is translated (the page's
/// shell in `ui::mount`, the late module, the simulator worker). Natively (CLI, tests) every
/// row is always available and this does nothing.
pub fn link_shell() {
    #[cfg(target_arch = "wasm32")]
    let _ = SHELL_LINKED.set(SHELL_TEXT);
}

/// Makes only the first screen's rows available (`data/i18n/first_keys.txt`): the
/// first-answer module (`crates/first/src/main.rs`) calls it, so its wasm carries those rows and not
/// the rest of the shell's. A key it lacks is a miss (`lookups::take_missed`), and the first
/// screen then declines the link rather than show a marker. Natively this does nothing.
pub fn link_first() {
    #[cfg(target_arch = "wasm32")]
    let _ = SHELL_LINKED.set(FIRST_TEXT);
}

/// Makes only an embedded widget's rows available (`data/i18n/embed_keys.txt`), as
/// [`link_first`] does for a link: the embeds' first-answer module (`crates/first/src/embed.rs`)
/// calls it. Natively this does nothing.
pub fn link_embed() {
    #[cfg(target_arch = "wasm32")]
    let _ = SHELL_LINKED.set(EMBED_TEXT);
}

/// The shell's rows' text as this binary has it.
fn shell_text() -> &'static str {
    #[cfg(target_arch = "wasm32")]
    return SHELL_LINKED.get().copied().unwrap_or("");
    #[cfg(not(target_arch = "wasm32"))]
    SHELL_TEXT
}

/// The late rows (`data/i18n/late/*.toml`), packed the same way; in wasm, linked only by a
/// binary that calls [`link_late`].
static LATE_TEXT: &str = include_str!(concat!(env!("OUT_DIR"), "/i18n_late.txt"));

/// The late rows once [`link_late`] ran (wasm only: natively they are always there).
#[cfg(target_arch = "wasm32")]
static LATE_LINKED: OnceLock<&'static str> = OnceLock::new();

/// Makes the late rows (`data/i18n/late`) available to [`tr`] in this binary: the late module
/// and the simulator worker call it first thing. The shell never does, so its wasm does not
/// carry them. Natively (CLI, tests) every row is always available and this does nothing.
pub fn link_late() {
    #[cfg(target_arch = "wasm32")]
    let _ = LATE_LINKED.set(LATE_TEXT);
}

/// The late rows' text if available in this binary.
fn late_text() -> Option<&'static str> {
    #[cfg(target_arch = "wasm32")]
    return LATE_LINKED.get().copied();
    #[cfg(not(target_arch = "wasm32"))]
    Some(LATE_TEXT)
}

/// One part's rows, unpacked from its text, with the order of their keys.
struct Part {
    rows: Vec<(&'static str, &'static str, &'static str)>,
    sorted: Vec<usize>,
}

impl Part {
    /// The keys are sorted once (by position on ties, so the first row of a key wins, as a scan
    /// would): a page redraw looks up a few hundred keys, and a linear scan of the table for each
    /// was a measurable part of a change's cost.
    fn new(text: &'static str) -> Part {
        let mut parts = text.split('\0');
        let mut rows = Vec::new();
        while let (Some(k), Some(en), Some(ko)) = (parts.next(), parts.next(), parts.next()) {
            rows.push((k, en, ko));
        }
        let sorted = crate::base::order::order_by(rows.len(), &|a, b| rows[a].0.cmp(rows[b].0));
        Part { rows, sorted }
    }

    fn find(&self, key: &str) -> Option<(&'static str, &'static str, &'static str)> {
        let at = self.sorted.partition_point(|&i| self.rows[i].0 < key);
        let i = self.sorted.get(at).copied()?;
        self.rows.get(i).copied().filter(|r| r.0 == key)
    }
}

fn shell_part() -> &'static Part {
    static PART: OnceLock<Part> = OnceLock::new();
    PART.get_or_init(|| Part::new(shell_text()))
}

fn late_part() -> Option<&'static Part> {
    static PART: OnceLock<Part> = OnceLock::new();
    let text = late_text()?;
    Some(PART.get_or_init(|| Part::new(text)))
}

/// The rows available in this binary: the shell's, then the late ones when linked (natively,
/// every row of `data/i18n`).
pub fn entries() -> Vec<(&'static str, &'static str, &'static str)> {
    [shell_rows(), late_rows()].concat()
}

/// The shell's rows (`data/i18n/shell`), in the order they are packed.
pub fn shell_rows() -> &'static [(&'static str, &'static str, &'static str)] {
    &shell_part().rows
}

/// The late rows (`data/i18n/late`) when available in this binary (natively always; in wasm
/// once [`link_late`] ran, else none), in the order they are packed.
pub fn late_rows() -> &'static [(&'static str, &'static str, &'static str)] {
    late_part().map_or(&[], |p| &p.rows)
}

/// The string for `key` in `lang`; a marker if missing (a test forbids that; the miss is
/// noted: `lookups::take_missed`).
pub fn tr(lang: Lang, key: &str) -> &'static str {
    match find(key) {
        Some((_, en, ko)) => match lang {
            Lang::En => en,
            Lang::Ko => ko,
        },
        None => {
            crate::base::lookups::missed();
            "⟨missing translation⟩"
        }
    }
}

/// The row of `key`, as a lookup ([`tr`]).
fn find(key: &str) -> Option<(&'static str, &'static str, &'static str)> {
    #[cfg(not(target_arch = "wasm32"))]
    crate::base::lookups::asked("i18n", key);
    row(key)
}

/// The row of `key`: the shell's part first, then the late part when linked.
fn row(key: &str) -> Option<(&'static str, &'static str, &'static str)> {
    shell_part()
        .find(key)
        .or_else(|| late_part().and_then(|p| p.find(key)))
}

/// Whether `key` exists in the table (a lookup: it counts in `lookups::record`).
pub fn has(key: &str) -> bool {
    #[cfg(not(target_arch = "wasm32"))]
    crate::base::lookups::asked("i18n", key);
    row(key).is_some()
}

/// Whether `key` is a row, for assertions: unlike [`has`] it is not a lookup (the debug
/// builds' checks would otherwise count as what a computation reads).
pub fn is_row(key: &str) -> bool {
    row(key).is_some()
}

/// Replaces every `{name}` in `template` by its value. Placeholders without a value are left
/// as they are (a test checks that none remain); values are inserted verbatim, never
/// re-scanned, so a value containing `{x}` cannot inject another placeholder.
pub fn fill(template: &str, vals: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(template.len() + 32);
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match after.find('}') {
            Some(close) => {
                let name = &after[..close];
                match vals.iter().find(|(n, _)| *n == name) {
                    Some((_, v)) => out.push_str(v),
                    None => {
                        out.push('{');
                        out.push_str(name);
                        out.push('}');
                    }
                }
                rest = &after[close + 1..];
            }
            None => {
                out.push_str(&rest[open..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// The `{name}` placeholders of a template, in order of appearance.
pub fn placeholders(template: &str) -> Vec<&str> {
    let mut names = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        match after.find('}') {
            Some(close) => {
                names.push(&after[..close]);
                rest = &after[close + 1..];
            }
            None => break,
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn every_row_is_complete_and_unique() {
        let mut seen = HashSet::new();
        for (k, en, ko) in entries() {
            assert!(seen.insert(k), "duplicate key {k}");
            assert!(!en.trim().is_empty(), "{k}: English missing");
            assert!(!ko.trim().is_empty(), "{k}: Korean missing");
        }
        assert!(seen.len() > 1000, "only {} rows unpacked", seen.len());
    }

    #[test]
    fn both_parts_unpack_and_are_found() {
        let (shell, late) = (shell_rows(), late_rows());
        assert!(shell.len() > 500 && late.len() > 400);
        assert_eq!(entries(), [shell, late].concat());
        for (k, en, ko) in entries() {
            assert_eq!((tr(Lang::En, k), tr(Lang::Ko, k)), (en, ko), "{k}");
        }
        let late_keys: HashSet<&str> = late.iter().map(|r| r.0).collect();
        assert!(shell.iter().any(|r| r.0 == "app_title"));
        assert!(!late_keys.contains("app_title"));
        assert!(!has("zz_not_a_key"));
    }

    #[test]
    fn lang_codes() {
        assert_eq!(Lang::from_code("ko-KR"), Some(Lang::Ko));
        assert_eq!(Lang::from_code("en"), Some(Lang::En));
        assert_eq!(Lang::from_code("fr"), None);
    }

    #[test]
    fn fill_inserts_values_verbatim_in_one_pass() {
        // A value that looks like a placeholder (a custom GPU named `{b}`) is kept as typed,
        // whichever placeholder comes first: chained `.replace` calls would substitute it.
        let vals = [("a", "{b}"), ("b", "x")];
        assert_eq!(fill("{a} vs {b}", &vals), "{b} vs x");
        assert_eq!(fill("{b} vs {a}", &vals), "x vs {b}");
        assert_eq!(fill("{a}", &[("a", "{a}")]), "{a}");
        // A placeholder without a value, and a brace without its pair, stay as they are.
        assert_eq!(fill("{a} {c} {", &vals), "{b} {c} {");
        assert_eq!(fill("no placeholder", &vals), "no placeholder");
    }
}
