//! Typed errors, each with a one-sentence message that names what was wrong and where.
//!
//! The English sentence is the `Display` text; [`CalcError::message`] gives it in the
//! user's language. Layers may add variants; never use `String` errors or `unwrap()` on
//! anything a user can influence.

use crate::core::i18n::Lang;
use thiserror::Error;

/// Everything that can go wrong between user input and a report.
#[derive(Debug, Clone, PartialEq, Error)]
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
        /// The parser's description.
        detail: String,
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
        /// What it is needed for.
        why: String,
    },
    /// A key has a value of the wrong type or range.
    #[error("\"{key}\" is {found}, but it must be {expected}.")]
    BadValue {
        /// The key, field or parameter.
        key: String,
        /// What was found (shortened).
        found: String,
        /// What is expected.
        expected: String,
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
        field: String,
        /// The value given.
        value: String,
        /// The accepted range, in words.
        range: String,
    },
    /// A result would overflow 64-bit integers.
    #[error(
        "The numbers are too large to compute exactly ({what} overflows 2^64); check the inputs."
    )]
    Overflow {
        /// Which quantity.
        what: String,
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
        what: String,
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
        detail: String,
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
    /// The sentence in the given language (English is the `Display` text).
    pub fn message(&self, lang: Lang) -> String {
        match lang {
            Lang::En => self.to_string(),
            Lang::Ko => crate::core::i18n::error_ko(self),
        }
    }
}
