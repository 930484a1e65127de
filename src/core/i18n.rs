//! The one translation table: every user-visible string, in English and Korean.
//!
//! Keys are stable snake_case identifiers. A test fails if any key is missing a language,
//! is empty, or is duplicated. UI code calls [`tr`]; nothing user-visible is written inline.

use crate::core::error::CalcError;
use serde::{Deserialize, Serialize};

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
}

/// (key, English, Korean). Keep sorted by area; keys unique.
pub static TABLE: &[(&str, &str, &str)] = &[
    ("app_title", "LLM Serving Calculator", "LLM 서빙 계산기"),
    ("app_tagline", "Will it fit, how many requests, how fast, at what cost — computed in your browser.", "들어갈까, 몇 개의 요청을, 얼마나 빠르게, 얼마의 비용으로 — 브라우저 안에서 계산합니다."),
];

/// The string for `key` in `lang`; the key itself if missing (a test forbids that).
pub fn tr(lang: Lang, key: &str) -> &'static str {
    for (k, en, ko) in TABLE {
        if *k == key {
            return match lang {
                Lang::En => en,
                Lang::Ko => ko,
            };
        }
    }
    "⟨missing translation⟩"
}

/// Whether `key` exists in the table.
pub fn has(key: &str) -> bool {
    TABLE.iter().any(|(k, _, _)| *k == key)
}

/// The Korean sentence for an error (falls back to English where no template exists yet).
pub fn error_ko(e: &CalcError) -> String {
    match e {
        CalcError::EmptyInput => "입력이 비어 있습니다: config.json이나 model.safetensors.index.json을 붙여 넣거나 파라미터 수를 입력하세요.".to_string(),
        CalcError::InvalidJson { detail, line, column } => {
            format!("올바른 JSON이 아닙니다: {detail} ({line}행 {column}열).")
        }
        CalcError::NotAnObject => "JSON이 객체가 아닙니다. config.json은 '{'로 시작합니다.".to_string(),
        CalcError::MissingKey { key, .. } => format!("config에 \"{key}\" 키(또는 같은 뜻의 다른 이름)가 없습니다."),
        CalcError::BadValue { key, found, expected } => {
            format!("\"{key}\" 값이 {found}인데, {expected}이어야 합니다.")
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
        CalcError::OutOfRange { field, value, range } => format!("{field} = {value}은 범위를 벗어났습니다. {range}이어야 합니다."),
        CalcError::Overflow { what } => format!("수가 너무 커서 정확히 계산할 수 없습니다 ({what}이 2^64를 넘습니다). 입력을 확인하세요."),
        CalcError::InputTooLarge { size_bytes, limit_bytes } => {
            format!("입력이 {size_bytes}바이트로 한도 {limit_bytes}바이트를 넘습니다. config.json만 붙여 넣으세요.")
        }
        CalcError::MissingSpec { gpu, what } => format!("{gpu}에는 공개된 {what} 값이 없습니다. 사용자 정의 가속기로 입력하면 계산할 수 있습니다."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn table_is_complete_and_unique() {
        let mut seen = HashSet::new();
        for (k, en, ko) in TABLE {
            assert!(seen.insert(*k), "duplicate key {k}");
            assert!(!en.trim().is_empty(), "{k}: English missing");
            assert!(!ko.trim().is_empty(), "{k}: Korean missing");
        }
    }

    #[test]
    fn lang_codes() {
        assert_eq!(Lang::from_code("ko-KR"), Some(Lang::Ko));
        assert_eq!(Lang::from_code("en"), Some(Lang::En));
        assert_eq!(Lang::from_code("fr"), None);
    }
}
