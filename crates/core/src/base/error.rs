//! Typed errors, each with a one-sentence message that names what was wrong and where.
//!
//! The English sentence is the `Display` text; [`CalcError::message`] gives it in the
//! user's language. Layers may add variants; never use `String` errors or `unwrap()` on
//! anything a user can influence.

use crate::base::i18n::Lang;
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

/// Text a user gave, cut to its first 40 characters, as error sentences quote it (see
/// [`Phrase::quoted`] for the same text in quotes).
pub fn shorten(s: &str) -> String {
    s.chars().take(40).collect()
}

impl Phrase {
    /// The translated phrase `key` (placeholders added with [`Phrase::val`]).
    pub fn tr(key: &'static str) -> Phrase {
        // Tests (debug builds) check every phrase built on their paths names a real row.
        debug_assert!(crate::base::i18n::is_row(key), "no translation for {key}");
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
        Phrase::Verbatim(format!("\"{}\"", shorten(s)))
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
                crate::base::i18n::fill(crate::base::i18n::tr(lang, key), &pairs)
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

/// In the compact binary form of the presets' stored models (`model::presets_first`), a
/// phrase keeps its keys and values: a tag byte (0 a key and its values, 1 verbatim text, 2 a
/// list; an error's sentence is written as its English text). Read back, a key is leaked to be
/// `'static` as [`Phrase::Tr`] holds it (a few hundred bytes for a model's ledger, read once
/// per link by the first-answer module).
impl borsh::BorshSerialize for Phrase {
    fn serialize<W: std::io::Write>(&self, w: &mut W) -> std::io::Result<()> {
        match self {
            Phrase::Tr(key, vals) => {
                0u8.serialize(w)?;
                key.serialize(w)?;
                vals.serialize(w)
            }
            Phrase::Verbatim(t) => {
                1u8.serialize(w)?;
                t.serialize(w)
            }
            Phrase::List(ps) => {
                2u8.serialize(w)?;
                ps.serialize(w)
            }
            Phrase::Error(_) => {
                1u8.serialize(w)?;
                self.to_string().serialize(w)
            }
        }
    }
}

impl borsh::BorshDeserialize for Phrase {
    fn deserialize_reader<R: std::io::Read>(r: &mut R) -> std::io::Result<Phrase> {
        fn leak(s: String) -> &'static str {
            Box::leak(s.into_boxed_str())
        }
        Ok(match u8::deserialize_reader(r)? {
            0 => {
                let key = leak(String::deserialize_reader(r)?);
                let vals = Vec::<(String, Phrase)>::deserialize_reader(r)?;
                Phrase::Tr(key, vals.into_iter().map(|(n, v)| (leak(n), v)).collect())
            }
            1 => Phrase::Verbatim(String::deserialize_reader(r)?),
            2 => Phrase::List(Vec::deserialize_reader(r)?),
            t => {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!("phrase tag {t}"),
                ))
            }
        })
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
    /// `value` when it is a whole number in `lo ..= hi`, else `OutOfRange` naming `field` and
    /// that range ("a whole number from lo to hi"): the one refusal of a count out of bounds.
    pub fn whole_in(field: Phrase, value: u64, (lo, hi): (u64, u64)) -> Result<u64, CalcError> {
        if (lo..=hi).contains(&value) {
            return Ok(value);
        }
        Err(CalcError::range_error(
            field,
            value,
            Phrase::tr("rng_whole_from_to").val("lo", lo).val("hi", hi),
        ))
    }

    /// `OutOfRange` for a number, written with [`fmt_sig`](crate::base::units::fmt_sig).
    pub fn out_of_range(field: Phrase, v: f64, range: Phrase) -> CalcError {
        CalcError::range_error(field, crate::base::units::fmt_sig(v), range)
    }

    /// `OutOfRange`: `field` was `value` (as written), outside `range`. The one constructor of
    /// the refusal; [`whole_in`](CalcError::whole_in) checks a count and
    /// [`out_of_range`](CalcError::out_of_range) writes a number through it.
    pub fn range_error(field: Phrase, value: impl ToString, range: Phrase) -> CalcError {
        CalcError::OutOfRange {
            field,
            value: value.to_string(),
            range,
        }
    }

    /// The sentence in the given language (English is the `Display` text).
    pub fn message(&self, lang: Lang) -> String {
        match lang {
            Lang::En => self.to_string(),
            Lang::Ko => error_ko(self),
        }
    }
}

/// The Korean sentence for an error (falls back to English where no template exists yet).
fn error_ko(e: &CalcError) -> String {
    match e {
        CalcError::EmptyInput => "입력이 비어 있습니다: config.json이나 model.safetensors.index.json을 붙여 넣거나 파라미터 수를 입력하세요.".to_string(),
        CalcError::InvalidJson { detail, line, column } => {
            format!("올바른 JSON이 아닙니다: {} ({line}행 {column}열).", detail.text(Lang::Ko))
        }
        CalcError::NotAnObject => "JSON이 객체가 아닙니다. config.json은 '{'로 시작합니다.".to_string(),
        CalcError::MissingKey { key, why } => {
            format!("config에 \"{key}\" 키(또는 같은 뜻의 다른 이름)가 없습니다. 이 키는 {} 데 필요합니다.", why.text(Lang::Ko))
        }
        CalcError::BadValue { key, found, expected } => {
            format!(
                "\"{key}\" 값이 {}인데, 허용되는 값은 {}입니다.",
                found.text(Lang::Ko),
                expected.text(Lang::Ko)
            )
        }
        CalcError::HeadsDoNotDivide { heads, hidden } => {
            format!("어텐션 헤드 {heads}개가 hidden_size {hidden}을 나누어떨어지게 하지 않고, config에 head_dim도 없습니다.")
        }
        CalcError::TpDoesNotDivide { tp, heads } => {
            format!("텐서 병렬 {tp}이 어텐션 헤드 {heads}개를 나누어떨어지게 하지 않습니다. 헤드 수의 약수를 고르세요.")
        }
        CalcError::UnknownDtype { given } => format!("\"{given}\"은 알 수 없는 정밀도입니다 (fp32, bf16, fp16, fp8, int8, fp6, int4, fp4)."),
        CalcError::UnknownGpu { given, suggestions } => {
            if suggestions.is_empty() {
                format!("카탈로그에 \"{given}\" 가속기가 없습니다.")
            } else {
                format!("카탈로그에 \"{given}\" 가속기가 없습니다. 혹시 {}인가요?", suggestions.join(", "))
            }
        }
        CalcError::OutOfRange { field, value, range } => format!(
            "{} = {value}: 범위를 벗어났습니다. 허용 범위는 {}입니다.",
            field.text(Lang::Ko),
            range.text(Lang::Ko)
        ),
        CalcError::Overflow { what } => format!("수가 너무 커서 정확히 계산할 수 없습니다 ({}: 2^64 초과). 입력을 확인하세요.", what.text(Lang::Ko)),
        CalcError::InputTooLarge { size_bytes, limit_bytes } => {
            format!("입력이 {size_bytes}바이트로 한도 {limit_bytes}바이트를 넘습니다. config.json만 붙여 넣으세요.")
        }
        CalcError::BadData { row, column, detail } => format!("데이터 표 {row}행 \"{column}\" 열: {detail}."),
        CalcError::MissingSpec { gpu, what } => format!("{gpu}에는 공개된 {} 값이 없습니다. 사용자 정의 가속기로 입력하면 계산할 수 있습니다.", what.text(Lang::Ko)),
        CalcError::TargetTooTight { metric, target_ms, best_ms, option } => format!(
            "{metric} 목표 {target_ms} ms는 배치 1에서 가장 빠른 구성({option})의 {best_ms} ms보다 짧습니다. 목표를 늘리거나 더 빠른 하드웨어를 추가하세요."
        ),
        CalcError::NoOptionFits { model, detail } => {
            format!("{model}은 어떤 후보에서도 한 노드 안에 들어가지 않습니다 ({}). 더 큰 GPU를 추가하거나 가중치를 양자화하세요.", detail.text(Lang::Ko))
        }
        CalcError::NoOptionMeetsTargets { ttft_ms, tpot_ms } => format!(
            "TTFT ≤ {ttft_ms} ms와 TPOT ≤ {tpot_ms} ms를 함께 만족하는 후보가 없습니다. 목표 하나를 완화하거나 더 빠른 하드웨어를 추가하세요."
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::i18n::{has, tr};

    /// String literals of the core (`crates/core/src`) that name a phrase key (`rng_…`, `exp_…`, `why_…`,
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
            &std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
                .join("crates/core/src"),
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
            "not in the translations (data/i18n):\n{}",
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
            crate::calc::kv::state_bytes(
                &crate::model::config::parse_model_text(include_str!(
                    "../../../../data/presets/meta-llama__Llama-2-7b-hf.json"
                ))
                .expect("Llama-2-7b parses"),
                crate::base::dtype::Dtype::Bf16,
                0,
            )
            .expect_err("tp 0 is refused"),
            // An unknown model_type has no class default to fill the vocabulary.
            crate::model::config::parse_model_text(r#"{"model_type":"brand_new","hidden_size":4096,"num_hidden_layers":2,"num_attention_heads":32,"intermediate_size":11008}"#)
                .expect_err("no vocab_size"),
        ];
        let text_width = crate::model::config::parse_model_text(
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
