//! Derivations as data: the formula, the values substituted, and the result with its unit,
//! so the UI can "show the math" in any language and the CLI can print it.
//!
//! A derivation holds no words of a language, only keys (the page shows it in English and
//! Korean from one value; `tests/derivation_words.rs` checks every derivation the app shows):
//!
//! - `formula` and `substituted` are symbols, numbers, operators and function names (`min`,
//!   `max`, `⌈ ⌉`, `⌊ ⌋`): `⌈λ × k_peak / r⌉`, `price × tp / 3600 / TPS × 10^6`, `∧` for
//!   "and". A symbol that is a word (`price`) is a [`Term`], whose `name_key` says what it is
//!   in the reader's language; a subscripted symbol (`KV_req`, `t_step`, vLLM's `block_size`)
//!   is a term or the quantity the title names. Acronyms both languages write (`TTFT`,
//!   `TPOT`, `TDP`, `HBM`) stand as they are.
//! - `result` is a number with a unit symbol both languages write the same way (`B`, `GB`,
//!   `GiB`, `ms`, `s`, `tok/s`, `tok/J`, `TFLOP/s`, `FLOP/B`, `$`), or a bare number when the
//!   quantity's unit is a word: then `result_key` names a row whose `{n}` takes the number
//!   (`drv_n_requests`: "{n} requests" / "요청 {n}개"), and [`Derivation::result_text`] renders
//!   it in a language (the math panel in the page's, the CLI's text in English; JSON keeps the
//!   two fields).
//! - A term's `unit` is such a symbol, or the key of a unit row (`unit_tokens`), which the
//!   math panel shows in the page's language.

use crate::base::expr::Expr;
use crate::base::i18n::{fill, has, tr, Lang};
use crate::base::units::{fmt_sig, Bytes, GIB, MIB};
use serde::{Deserialize, Serialize};

/// One input of a formula: a symbol, its value, its unit and where it came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Term {
    /// The symbol as it appears in the formula (`L`, `H_kv`, `d_head`, `b`).
    pub symbol: String,
    /// Translation key naming the quantity (`term_layers`, …), rendered by the UI.
    pub name_key: String,
    /// The value as shown (already formatted, unit excluded).
    pub value: String,
    /// Unit: a symbol (`B`, `GB/s`, `FLOP/B`, `tok/s`), the key of a unit row when the unit is
    /// a word (`unit_tokens`, `view_unit_rps`), empty for counts.
    pub unit: String,
    /// Where the value came from: a config key, a catalog field, a user input, or a default.
    pub source: Source,
}

impl Term {
    /// A term whose value is already formatted.
    pub fn new(symbol: &str, name_key: &str, value: String, unit: &str, source: Source) -> Term {
        Term {
            symbol: symbol.into(),
            name_key: name_key.into(),
            value,
            unit: unit.into(),
            source,
        }
    }

    /// A numeric term, formatted to about four significant digits ([`fmt_sig`]).
    pub fn num(symbol: &str, name_key: &str, value: f64, unit: &str, source: Source) -> Term {
        Term::new(symbol, name_key, fmt_sig(value), unit, source)
    }
}

/// Provenance of a value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "detail", rename_all = "snake_case")]
pub enum Source {
    /// Read from this config key.
    ConfigKey(String),
    /// A default applied because the config did not say (the reason's translation key).
    Default(String),
    /// Computed from other values (describe how).
    Derived(String),
    /// From the accelerator catalog (field name).
    Catalog(String),
    /// Entered by the user (field name).
    User(String),
}

/// A headline number with its derivation.
#[derive(Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Derivation {
    /// Translation key of the quantity's title (`kv_per_token`, `weights_bytes`, …).
    pub title_key: String,
    /// The symbolic formula, e.g. `2 × L × H_kv × d_head × b`.
    pub formula: String,
    /// The formula with values substituted, e.g. `2 × 32 × 32 × 128 × 2`.
    pub substituted: String,
    /// The result with its unit, e.g. `524,288 B = 0.5 MiB`; a bare number when
    /// `result_key` puts it into words.
    pub result: String,
    /// Translation key of the words around a result whose unit is a word (`{n}` takes
    /// `result`: `drv_n_requests`); empty when `result` reads as it is.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub result_key: String,
    /// The inputs, with provenance.
    pub terms: Vec<Term>,
    /// Translation keys of notes (assumptions, textbook rounding next to exact values).
    pub notes: Vec<String>,
}

impl Derivation {
    /// A derivation titled `title_key` whose formula and substituted values are `e`'s two
    /// renderings ([`Expr::formula`], [`Expr::values`]); the builder adds the result, terms
    /// and notes: `Derivation { result, terms, ..Derivation::of("kv_per_token", &e) }`.
    pub fn of(title_key: &str, e: &Expr) -> Derivation {
        Derivation {
            title_key: title_key.into(),
            formula: e.formula(),
            substituted: e.values(),
            ..Default::default()
        }
    }

    /// Both lines of the formula from `e`, the rest kept (a derivation reshown for another
    /// rule).
    pub fn show(&mut self, e: &Expr) {
        self.formula = e.formula();
        self.substituted = e.values();
    }

    /// The result as a reader sees it in `lang`: `result` put into the words of `result_key`,
    /// or `result` as it is (also when the key has no row).
    pub fn result_text(&self, lang: Lang) -> String {
        if self.result_key.is_empty() || !has(&self.result_key) {
            return self.result.clone();
        }
        fill(tr(lang, &self.result_key), &[("n", &self.result)])
    }
}

/// `Debug` as derived, without `result_key` while it is empty: the snapshots of the views
/// print derivations in this form, and most derivations' results need no words.
impl std::fmt::Debug for Derivation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut s = f.debug_struct("Derivation");
        s.field("title_key", &self.title_key)
            .field("formula", &self.formula)
            .field("substituted", &self.substituted)
            .field("result", &self.result);
        if !self.result_key.is_empty() {
            s.field("result_key", &self.result_key);
        }
        s.field("terms", &self.terms)
            .field("notes", &self.notes)
            .finish()
    }
}

/// Formats an integer with thousands separators: 6738415616 → "6,738,415,616".
pub fn group(n: u64) -> String {
    crate::base::units::NumberSymbols::COMMA_DOT.group(n)
}

/// A byte count as a derivation's result: exact, then in both units, decimal first
/// ("16,060,522,496 B = 16.06 GB = 14.96 GiB"), or binary first where the engine being
/// reproduced speaks GiB (vLLM's memory log: the memory budget's steps).
pub fn bytes_text(b: Bytes, gib_first: bool) -> String {
    let (first, second) = if gib_first {
        (b.fmt_gib(), b.fmt_gb())
    } else {
        (b.fmt_gb(), b.fmt_gib())
    };
    format!("{} B = {first} = {second}", group(b.0))
}

/// A byte count as a derivation's result in binary units, as the KV cache's are: exact, then
/// MiB and GiB side by side from 1% of a GiB up, MiB alone from half a MiB (the textbook's
/// "0.5 MiB per token"), smaller values in the nearest binary unit.
pub fn binary_bytes_text(b: Bytes) -> String {
    let (mib, gib) = (b.0 as f64 / MIB as f64, b.0 as f64 / GIB as f64);
    if b.0 >= GIB / 100 {
        format!(
            "{} B = {} MiB = {} GiB",
            group(b.0),
            fmt_sig(mib),
            fmt_sig(gib)
        )
    } else if b.0 >= MIB / 2 {
        format!("{} B = {} MiB", group(b.0), fmt_sig(mib))
    } else if b.0 > 0 {
        format!("{} B = {}", group(b.0), b.fmt_gib())
    } else {
        "0 B".to_string()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn grouping() {
        assert_eq!(super::group(6_738_415_616), "6,738,415,616");
        assert_eq!(super::group(0), "0");
        assert_eq!(super::group(999), "999");
        assert_eq!(super::group(1000), "1,000");
    }
}
