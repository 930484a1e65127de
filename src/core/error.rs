//! Typed errors, each with a one-sentence message that names what was wrong and where.
//!
//! The English sentence is the `Display` text; [`CalcError::message`] gives it in the
//! user's language. Layers may add variants; never use `String` errors or `unwrap()` on
//! anything a user can influence.

use crate::core::i18n::Lang;
use std::fmt;
use thiserror::Error;

/// A phrase inside an error sentence (which quantity, why a key is needed, what a value must
/// be, which figure is missing), in either UI language: a row of the translation table with
/// the values of its `{name}` placeholders, or a name shown as it is (a config key, a GPU).
/// Its `Display` is the English text, so the English sentence reads as before.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Phrase {
    /// A translation key (`rng_…`, `exp_…`, `why_…`, `fld_…`, …) and its placeholder values.
    Tr(&'static str, Vec<(&'static str, Phrase)>),
    /// Text shown as it is in every language.
    Verbatim(String),
    /// Phrases joined by ", ".
    List(Vec<Phrase>),
    /// An error's sentence (why a planner option was skipped, say).
    Error(Box<CalcError>),
}

impl Phrase {
    /// The translated phrase `key` (placeholders added with [`Phrase::val`]).
    pub fn tr(key: &'static str) -> Phrase {
        // Tests (debug builds) check every phrase built on their paths names a real row.
        debug_assert!(crate::core::i18n::has(key), "no translation for {key}");
        Phrase::Tr(key, Vec::new())
    }

    /// A name or identifier shown as it is.
    pub fn verbatim(s: impl Into<String>) -> Phrase {
        Phrase::Verbatim(s.into())
    }

    /// The sentence of `e`, in the language the phrase is shown in.
    pub fn error(e: CalcError) -> Phrase {
        Phrase::Error(Box::new(e))
    }

    /// Text a user gave, in quotes, cut to its first 40 characters (`"7Q"`).
    pub fn quoted(s: &str) -> Phrase {
        Phrase::Verbatim(format!("\"{}\"", s.chars().take(40).collect::<String>()))
    }

    /// The phrase with placeholder `{name}` set to `v`, shown as it is.
    #[must_use]
    pub fn val(self, name: &'static str, v: impl ToString) -> Phrase {
        self.sub(name, Phrase::Verbatim(v.to_string()))
    }

    /// The phrase with placeholder `{name}` set to another phrase (a unit, say).
    #[must_use]
    pub fn sub(mut self, name: &'static str, p: Phrase) -> Phrase {
        if let Phrase::Tr(_, vals) = &mut self {
            vals.push((name, p));
        }
        self
    }

    /// The phrase in `lang`.
    pub fn text(&self, lang: Lang) -> String {
        match self {
            Phrase::Tr(key, vals) => {
                let texts: Vec<(&str, String)> =
                    vals.iter().map(|(n, p)| (*n, p.text(lang))).collect();
                let pairs: Vec<(&str, &str)> =
                    texts.iter().map(|(n, t)| (*n, t.as_str())).collect();
                crate::core::explain::fill(crate::core::i18n::tr(lang, key), &pairs)
            }
            Phrase::Verbatim(s) => s.clone(),
            Phrase::List(items) => items
                .iter()
                .map(|p| p.text(lang))
                .collect::<Vec<_>>()
                .join(", "),
            Phrase::Error(e) => e.message(lang),
        }
    }
}

/// Serialized as its English text (the CLI's JSON stays plain sentences); read back as that
/// text, shown as it is.
impl serde::Serialize for Phrase {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> serde::Deserialize<'de> for Phrase {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Phrase, D::Error> {
        String::deserialize(d).map(Phrase::Verbatim)
    }
}

impl fmt::Display for Phrase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text(Lang::En))
    }
}

/// Everything that can go wrong between user input and a report.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum CalcError {
    /// The input text is empty.
    #[error("The input is empty: paste a config.json, a model.safetensors.index.json, or use a parameter count.")]
    EmptyInput,
    /// The input is larger than the parser accepts.
    #[error("The input is {size_bytes} bytes, more than the {limit_bytes}-byte limit; paste only config.json.")]
    InputTooLarge {
        /// Size of the input.
        size_bytes: usize,
        /// Largest size accepted.
        limit_bytes: usize,
    },
    /// The text is not valid JSON.
    #[error("The text is not valid JSON: {detail} (line {line}, column {column}).")]
    InvalidJson {
        /// The parser's description (translated where serde_json's wording is known).
        detail: Phrase,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
    },
    /// Valid JSON, but not an object at the top.
    #[error("The JSON is not an object; a config.json starts with '{{'.")]
    NotAnObject,
    /// A required key is missing.
    #[error("The config has no \"{key}\" (or any of its spellings), which is needed to {why}.")]
    MissingKey {
        /// The key (first spelling).
        key: String,
        /// What it is needed for (a verb phrase: "size the embeddings").
        why: Phrase,
    },
    /// A key has a value of the wrong type or range.
    #[error("\"{key}\" is {found}, but it must be {expected}.")]
    BadValue {
        /// The key, field or parameter.
        key: String,
        /// What was found (shortened).
        found: Phrase,
        /// What is expected.
        expected: Phrase,
    },
    /// Heads do not divide the hidden size (and no head_dim is given).
    #[error("{heads} attention heads do not divide hidden_size {hidden}, and the config gives no head_dim.")]
    HeadsDoNotDivide {
        /// Attention heads.
        heads: u64,
        /// Hidden size.
        hidden: u64,
    },
    /// Tensor parallel degree does not divide the attention heads.
    #[error("Tensor parallelism {tp} does not divide the {heads} attention heads; choose a TP degree that divides them.")]
    TpDoesNotDivide {
        /// TP degree.
        tp: u64,
        /// Attention heads.
        heads: u64,
    },
    /// A precision name not understood.
    #[error("\"{given}\" is not a precision this calculator knows (fp32, bf16, fp16, fp8, int8, fp6, int4, fp4).")]
    UnknownDtype {
        /// What was given.
        given: String,
    },
    /// A GPU id not in the catalog.
    #[error("No accelerator \"{given}\" in the catalog{}.", did_you_mean(.suggestions))]
    UnknownGpu {
        /// What was given.
        given: String,
        /// Close matches.
        suggestions: Vec<String>,
    },
    /// A number out of the accepted range.
    #[error("{field} = {value} is out of range; it must be {range}.")]
    OutOfRange {
        /// The field or parameter.
        field: Phrase,
        /// The value given.
        value: String,
        /// The accepted range, in words.
        range: Phrase,
    },
    /// A result would overflow 64-bit integers.
    #[error(
        "The numbers are too large to compute exactly ({what} overflows 2^64); check the inputs."
    )]
    Overflow {
        /// Which quantity.
        what: Phrase,
    },
    /// A compiled-in or user-supplied data table has a bad row.
    #[error("Row {row}, column \"{column}\" of the data table: {detail}.")]
    BadData {
        /// 1-based line of the row in the file.
        row: usize,
        /// The column name.
        column: String,
        /// What is wrong.
        detail: String,
    },
    /// The accelerator lacks a figure this calculation needs.
    #[error("{gpu} has no published {what}; enter it as a custom accelerator to compute this.")]
    MissingSpec {
        /// Accelerator name.
        gpu: String,
        /// The missing figure.
        what: Phrase,
    },
    /// A latency target below what any candidate reaches even at batch 1 (capacity planner).
    #[error("A {metric} target of {target_ms} ms is below the fastest option's {best_ms} ms at batch 1 ({option}); raise the target or add faster hardware.")]
    TargetTooTight {
        /// `TTFT` or `TPOT`.
        metric: String,
        /// The target, ms.
        target_ms: String,
        /// The fastest option's value at batch 1, ms.
        best_ms: String,
        /// That option (`H100 SXM × TP 8`).
        option: String,
    },
    /// The model fits inside one node of no candidate (capacity planner).
    #[error("{model} does not fit inside one node on any candidate ({detail}); add larger GPUs or quantize the weights.")]
    NoOptionFits {
        /// Model name.
        model: String,
        /// What it would need.
        detail: Phrase,
    },
    /// Each target is reachable, but no single option meets both (capacity planner).
    #[error("No candidate meets TTFT ≤ {ttft_ms} ms and TPOT ≤ {tpot_ms} ms together; relax one target or add faster hardware.")]
    NoOptionMeetsTargets {
        /// TTFT target, ms.
        ttft_ms: String,
        /// TPOT target, ms.
        tpot_ms: String,
    },
}

fn did_you_mean(s: &[String]) -> String {
    if s.is_empty() {
        String::new()
    } else {
        format!("; did you mean {}", s.join(", "))
    }
}

impl CalcError {
    /// `OutOfRange` for a number, written with [`fmt_sig`](crate::core::units::fmt_sig).
    pub fn out_of_range(field: Phrase, v: f64, range: Phrase) -> CalcError {
        CalcError::OutOfRange {
            field,
            value: crate::core::units::fmt_sig(v),
            range,
        }
    }

    /// The sentence in the given language (English is the `Display` text).
    pub fn message(&self, lang: Lang) -> String {
        match lang {
            Lang::En => self.to_string(),
            Lang::Ko => crate::core::i18n::error_ko(self),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::i18n::{has, tr};

    /// String literals of `src/core` that name a phrase key (`rng_…`, `exp_…`, `why_…`,
    /// `fld_…`, `ovf_…`, `what_…`, `phr_…`, `fnd_…`, `jsn_…`, `wrn_…`, `ldg_…`): every phrase
    /// built anywhere in the core
    /// is one of them (`Phrase::tr("…")`, the `mul`/`add` overflow names, `Reader::req`'s why).
    fn phrase_keys_in_sources() -> Vec<(String, String)> {
        const PREFIXES: &[&str] = &[
            "rng_", "exp_", "why_", "fld_", "ovf_", "what_", "phr_", "fnd_", "jsn_", "wrn_", "ldg_",
        ];
        fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
            for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
                let p = e.path();
                if p.is_dir() {
                    walk(&p, out);
                } else if p.extension().is_some_and(|x| x == "rs") {
                    out.push(p);
                }
            }
        }
        let mut files = Vec::new();
        walk(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/core"),
            &mut files,
        );
        let mut keys = Vec::new();
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap_or_default();
            for (i, _) in text.match_indices('"') {
                let rest = &text[i + 1..];
                let Some(end) = rest.find('"') else { continue };
                let lit = &rest[..end];
                let ident = lit
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
                if ident
                    && PREFIXES
                        .iter()
                        .any(|p| lit.starts_with(p) && lit.len() > p.len())
                {
                    keys.push((f.display().to_string(), lit.to_string()));
                }
            }
        }
        keys
    }

    #[test]
    fn every_phrase_key_in_the_core_is_translated() {
        let keys = phrase_keys_in_sources();
        // The scanner finds the phrases of this change (about 90 keys): if it finds few, it is
        // broken, and the check below would pass vacuously.
        assert!(keys.len() > 80, "only {} phrase keys found", keys.len());
        let missing: Vec<String> = keys
            .iter()
            .filter(|(_, k)| !has(k))
            .map(|(f, k)| format!("{f}: {k}"))
            .collect();
        assert!(
            missing.is_empty(),
            "not in i18n::TABLE:\n{}",
            missing.join("\n")
        );
    }

    #[test]
    fn a_phrase_reads_in_either_language_with_its_values() {
        let p = Phrase::tr("rng_whole_from_to").val("lo", 1).val("hi", 1024);
        assert_eq!(p.to_string(), "a whole number from 1 to 1024");
        assert_eq!(p.text(Lang::Ko), "1 이상 1024 이하의 정수");
        let unit = Phrase::tr("rng_number_from_to_unit")
            .val("lo", 0.001)
            .val("hi", 10000)
            .sub("unit", Phrase::tr("phr_usd_per_hour"));
        assert_eq!(
            unit.to_string(),
            "a number from 0.001 to 10000 USD per hour"
        );
        assert_eq!(
            unit.text(Lang::Ko),
            "0.001 이상 10000 이하의 수 (시간당 USD)"
        );
        let list = Phrase::List(vec![
            Phrase::tr("phr_needs_tp").val("gpu", "A10G").val("tp", 16),
            Phrase::verbatim("L4"),
        ]);
        assert_eq!(list.to_string(), "A10G needs TP 16, L4");
        assert_eq!(list.text(Lang::Ko), "A10G는 TP 16 필요, L4");
    }

    #[test]
    fn korean_error_sentences_carry_no_english_phrase() {
        // Every phrase key's Korean differs from its English (a copy would be an
        // untranslated phrase), and a Korean sentence built from real errors holds the
        // Korean phrase, never the English one.
        // (Ledger notes that are only a formula, "BLOOM: 4 × hidden_size", read the same.)
        for (_, k) in phrase_keys_in_sources() {
            if !k.starts_with("ldg_") {
                assert_ne!(tr(Lang::En, &k), tr(Lang::Ko, &k), "{k} is not translated");
            }
        }
        let errs = [
            crate::core::kv::state_bytes(
                &crate::core::config::parse_model_text(include_str!(
                    "../../data/presets/meta-llama__Llama-2-7b-hf.json"
                ))
                .expect("Llama-2-7b parses"),
                crate::core::dtype::Dtype::Bf16,
                0,
            )
            .expect_err("tp 0 is refused"),
            crate::core::config::parse_model_text(r#"{"model_type":"llama","hidden_size":4096,"num_hidden_layers":2,"num_attention_heads":32,"intermediate_size":11008}"#)
                .expect_err("no vocab_size"),
        ];
        let text_width = crate::core::config::parse_model_text(
            r#"{"model_type":"llama","hidden_size":"wide","num_hidden_layers":2,"num_attention_heads":32,"intermediate_size":11008,"vocab_size":32000}"#,
        )
        .expect_err("a text hidden_size");
        for e in errs.into_iter().chain([text_width]) {
            let ko = e.message(Lang::Ko);
            let phrases = match &e {
                CalcError::OutOfRange { range, .. } => vec![range.clone()],
                CalcError::MissingKey { why, .. } => vec![why.clone()],
                CalcError::BadValue {
                    found, expected, ..
                } => vec![found.clone(), expected.clone()],
                other => panic!("unexpected error {other:?}"),
            };
            for phrase in phrases {
                assert!(ko.contains(&phrase.text(Lang::Ko)), "{ko}");
                assert!(!ko.contains(&phrase.to_string()), "{ko}");
            }
        }
    }
}
