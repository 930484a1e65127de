//! Lenient, bounded JSON parsing for pasted files.
//!
//! * A UTF-8 byte-order mark is stripped; empty or whitespace-only text is rejected.
//! * Text longer than [`MAX_INPUT_BYTES`] (32 MiB) is rejected before parsing.
//! * The non-standard tokens `Infinity`, `-Infinity` and `NaN` (written by Python's `json`
//!   module into real config.json files) are accepted outside strings. They are rewritten to
//!   the marker strings [`POS_INF`], [`NEG_INF`] and [`NAN`] before `serde_json` parses the
//!   text, so a numeric read of such a key can say exactly what it found (see [`non_finite`]).
//! * Nesting deeper than `serde_json`'s recursion limit (128) is an error, not a crash.
//! * Duplicated keys: the last occurrence wins (the behaviour of `serde_json`'s map and of
//!   Python's `json.loads`).

use crate::base::error::{CalcError, Phrase};

/// Largest accepted input: 32 MiB (a config.json is a few KiB; an index a few MiB).
pub const MAX_INPUT_BYTES: usize = 32 << 20;

/// Marker string that stands for the bare token `Infinity`.
pub const POS_INF: &str = "\u{1}Infinity";
/// Marker string that stands for the bare token `-Infinity`.
pub const NEG_INF: &str = "\u{1}-Infinity";
/// Marker string that stands for the bare token `NaN`.
pub const NAN: &str = "\u{1}NaN";

/// A non-finite number that the input spelled as a bare token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NonFinite {
    /// `Infinity`.
    PosInf,
    /// `-Infinity`.
    NegInf,
    /// `NaN`.
    NaN,
}

impl NonFinite {
    /// How the input spelled it.
    pub const fn token(self) -> &'static str {
        match self {
            NonFinite::PosInf => "Infinity",
            NonFinite::NegInf => "-Infinity",
            NonFinite::NaN => "NaN",
        }
    }
}

/// Whether a parsed value is one of the rewritten non-finite tokens.
pub fn non_finite(v: &serde_json::Value) -> Option<NonFinite> {
    match v.as_str() {
        Some(POS_INF) => Some(NonFinite::PosInf),
        Some(NEG_INF) => Some(NonFinite::NegInf),
        Some(NAN) => Some(NonFinite::NaN),
        _ => None,
    }
}

/// Parses pasted JSON text into a value (see the module docs for what is accepted).
pub fn parse(text: &str) -> Result<serde_json::Value, CalcError> {
    let t = text.strip_prefix('\u{feff}').unwrap_or(text);
    if t.len() > MAX_INPUT_BYTES {
        return Err(CalcError::InputTooLarge {
            size_bytes: t.len(),
            limit_bytes: MAX_INPUT_BYTES,
        });
    }
    if t.trim().is_empty() {
        return Err(CalcError::EmptyInput);
    }
    let rewritten = rewrite_non_finite(t);
    let src = rewritten.as_deref().unwrap_or(t);
    serde_json::from_str(src).map_err(|e| CalcError::InvalidJson {
        detail: detail_phrase(strip_position(&e.to_string())),
        line: e.line(),
        column: e.column(),
    })
}

/// serde_json's syntax-error descriptions (its `ErrorCode` texts, fixed strings) and the
/// translation keys that say the same in either language. A description not listed (a new
/// serde_json wording) is shown as serde_json wrote it.
const SYNTAX_ERRORS: &[(&str, &str)] = &[
    ("EOF while parsing a list", "jsn_eof_list"),
    ("EOF while parsing an object", "jsn_eof_object"),
    ("EOF while parsing a string", "jsn_eof_string"),
    ("EOF while parsing a value", "jsn_eof_value"),
    ("expected `:`", "jsn_expected_colon"),
    ("expected `,` or `]`", "jsn_expected_list_sep"),
    ("expected `,` or `}`", "jsn_expected_object_sep"),
    ("expected ident", "jsn_expected_ident"),
    ("expected value", "jsn_expected_value"),
    ("expected `\"`", "jsn_expected_quote"),
    ("invalid escape", "jsn_invalid_escape"),
    ("invalid number", "jsn_invalid_number"),
    ("number out of range", "jsn_number_range"),
    ("invalid unicode code point", "jsn_invalid_unicode"),
    (
        "control character (\\u0000-\\u001F) found while parsing a string",
        "jsn_control_char",
    ),
    ("key must be a string", "jsn_key_string"),
    ("lone leading surrogate in hex escape", "jsn_lone_surrogate"),
    ("trailing comma", "jsn_trailing_comma"),
    ("trailing characters", "jsn_trailing_chars"),
    ("unexpected end of hex escape", "jsn_hex_escape_end"),
    ("recursion limit exceeded", "jsn_recursion"),
];

fn detail_phrase(detail: String) -> Phrase {
    match SYNTAX_ERRORS.iter().find(|(text, _)| *text == detail) {
        Some((_, key)) => Phrase::tr(key),
        None => Phrase::verbatim(detail),
    }
}

/// serde_json appends " at line L column C"; the error sentence carries them separately.
fn strip_position(s: &str) -> String {
    match s.find(" at line ") {
        Some(i) => s.get(..i).unwrap_or(s).to_string(),
        None => s.to_string(),
    }
}

/// Rewrites bare `Infinity`, `-Infinity` and `NaN` outside strings to marker strings.
/// Returns `None` when there is nothing to rewrite (the common case: no copy).
///
/// Scans with string/escape state, so the same words inside strings are untouched. Column
/// numbers of later errors on the same line shift by a few characters; line numbers do not.
fn rewrite_non_finite(t: &str) -> Option<String> {
    let bytes = t.as_bytes();
    let mut out: Option<String> = None;
    let mut copied = 0usize; // bytes of `t` already copied into `out`
    let mut in_str = false;
    let mut escaped = false;
    let mut i = 0usize;
    while i < bytes.len() {
        let b = bytes.get(i).copied().unwrap_or(b' ');
        if in_str {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_str = false;
            }
            i += 1;
            continue;
        }
        if b == b'"' {
            in_str = true;
            i += 1;
            continue;
        }
        let rest = t.get(i..).unwrap_or("");
        let hit = if rest.starts_with("-Infinity") {
            Some(("-Infinity", NEG_INF))
        } else if rest.starts_with("+Infinity") {
            Some(("+Infinity", POS_INF))
        } else if rest.starts_with("Infinity") {
            Some(("Infinity", POS_INF))
        } else if rest.starts_with("NaN") {
            Some(("NaN", NAN))
        } else {
            None
        };
        // A token must stand alone: not preceded by an identifier character.
        let prev_ok = i == 0
            || !bytes
                .get(i - 1)
                .is_some_and(|p| p.is_ascii_alphanumeric() || *p == b'_');
        match hit {
            Some((tok, marker)) if prev_ok => {
                let next = bytes.get(i + tok.len());
                if next.is_some_and(|n| n.is_ascii_alphanumeric() || *n == b'_') {
                    i += 1;
                    continue;
                }
                let o = out.get_or_insert_with(|| String::with_capacity(t.len() + 64));
                o.push_str(t.get(copied..i).unwrap_or(""));
                o.push('"');
                o.push_str(&marker.replace('\u{1}', "\\u0001"));
                o.push('"');
                i += tok.len();
                copied = i;
            }
            _ => i += 1,
        }
    }
    if let Some(o) = out.as_mut() {
        o.push_str(t.get(copied..).unwrap_or(""));
    }
    out
}

/// Serde for an `f64` that may be infinite or NaN (`#[serde(with = "...::json::f64_any")]`):
/// JSON has no such numbers and `serde_json` writes them as `null`, which then cannot be read
/// back as an `f64`. Finite values stay numbers; the others are the strings `"inf"`, `"-inf"`
/// and `"NaN"`; reading also takes `null` as NaN.
pub mod f64_any {
    use serde::{Deserialize, Deserializer, Serializer};

    /// Writes `x` as a number, or as `"inf"`, `"-inf"`, `"NaN"`.
    pub fn serialize<S: Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
        match as_text(*x) {
            Some(t) => s.serialize_str(t),
            None => s.serialize_f64(*x),
        }
    }

    /// Reads a number, one of the three strings, or `null` (NaN).
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        Any::deserialize(d)?
            .value()
            .map_err(serde::de::Error::custom)
    }

    /// The text of a non-finite value (`None` for a finite one).
    pub(super) fn as_text(x: f64) -> Option<&'static str> {
        if x.is_nan() {
            Some("NaN")
        } else if x == f64::INFINITY {
            Some("inf")
        } else if x == f64::NEG_INFINITY {
            Some("-inf")
        } else {
            None
        }
    }

    /// What may stand where an `f64` is written.
    #[derive(Deserialize)]
    #[serde(untagged)]
    pub(super) enum Any {
        Num(f64),
        Text(String),
        Null(()),
    }

    impl Any {
        pub(super) fn value(self) -> Result<f64, String> {
            match self {
                Any::Num(x) => Ok(x),
                Any::Null(()) => Ok(f64::NAN),
                Any::Text(t) => match t.as_str() {
                    "inf" => Ok(f64::INFINITY),
                    "-inf" => Ok(f64::NEG_INFINITY),
                    "NaN" => Ok(f64::NAN),
                    _ => Err(format!("not a number: {t:?}")),
                },
            }
        }
    }
}

/// How [`f64_any`] spells a non-finite value (`"inf"`, `"-inf"`, `"NaN"`); `None` for a
/// finite one. Text reports that print a rate or a limit use it so they spell it the same way.
pub fn f64_any_text(x: f64) -> Option<&'static str> {
    f64_any::as_text(x)
}

/// `x` as the JSON value [`f64_any`] writes: a number, or `"inf"`, `"-inf"`, `"NaN"` (for code
/// that builds a `serde_json::Value` by hand rather than deriving `Serialize`).
pub fn f64_any_value(x: f64) -> serde_json::Value {
    match f64_any::as_text(x) {
        Some(t) => serde_json::Value::String(t.to_owned()),
        None => serde_json::Number::from_f64(x).map_or(serde_json::Value::Null, Into::into),
    }
}

/// [`f64_any`] for a list of named values (`Vec<(String, f64)>`).
pub mod pairs_f64_any {
    use crate::base::json::f64_any::{as_text, Any};
    use serde::ser::SerializeSeq;
    use serde::{Deserialize, Deserializer, Serializer};

    /// Writes each pair as `[name, value]`, the value as [`super::f64_any`] writes it.
    pub fn serialize<S: Serializer>(v: &[(String, f64)], s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(v.len()))?;
        for (k, x) in v {
            match as_text(*x) {
                Some(t) => seq.serialize_element(&(k, t))?,
                None => seq.serialize_element(&(k, x))?,
            }
        }
        seq.end()
    }

    /// Reads what [`serialize`] writes (and `null` values as NaN).
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<(String, f64)>, D::Error> {
        Vec::<(String, Any)>::deserialize(d)?
            .into_iter()
            .map(|(k, a)| a.value().map(|x| (k, x)))
            .collect::<Result<_, _>>()
            .map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::i18n::Lang;
    use serde_json::Value;

    #[test]
    fn strips_bom_and_rejects_empty() {
        assert_eq!(
            parse("\u{feff}{\"a\": 1}").ok(),
            Some(serde_json::json!({"a": 1}))
        );
        assert_eq!(parse(""), Err(CalcError::EmptyInput));
        assert_eq!(parse(" \n\t "), Err(CalcError::EmptyInput));
        assert_eq!(parse("\u{feff}"), Err(CalcError::EmptyInput));
    }

    #[test]
    fn non_finite_tokens_become_markers() {
        let v = parse("{\"a\": Infinity, \"b\": -Infinity, \"c\": NaN, \"d\": [NaN,Infinity]}")
            .unwrap_or(Value::Null);
        assert_eq!(v.get("a").and_then(non_finite), Some(NonFinite::PosInf));
        assert_eq!(v.get("b").and_then(non_finite), Some(NonFinite::NegInf));
        assert_eq!(v.get("c").and_then(non_finite), Some(NonFinite::NaN));
        assert_eq!(
            v.get("d").and_then(|d| d.get(1)).and_then(non_finite),
            Some(NonFinite::PosInf)
        );
    }

    #[test]
    fn tokens_inside_strings_are_untouched() {
        let v = parse(r#"{"s": "NaN and Infinity \" NaN", "t": "\\", "u": NaN}"#)
            .unwrap_or(Value::Null);
        assert_eq!(
            v.get("s").and_then(Value::as_str),
            Some("NaN and Infinity \" NaN")
        );
        assert_eq!(v.get("t").and_then(Value::as_str), Some("\\"));
        assert_eq!(v.get("u").and_then(non_finite), Some(NonFinite::NaN));
    }

    #[test]
    fn identifiers_that_contain_the_words_stay_invalid() {
        assert!(matches!(
            parse("{\"a\": NaNx}"),
            Err(CalcError::InvalidJson { .. })
        ));
        assert!(matches!(
            parse("{\"a\": xNaN}"),
            Err(CalcError::InvalidJson { .. })
        ));
    }

    #[test]
    fn invalid_json_reports_line_and_column() {
        match parse("{\n  \"a\": 1,\n  \"b\": }") {
            Err(CalcError::InvalidJson {
                line,
                column,
                detail,
            }) => {
                assert_eq!(line, 3);
                assert!(column > 0);
                assert_eq!(detail, Phrase::tr("jsn_expected_value"));
                assert_eq!(detail.to_string(), "expected value");
            }
            other => panic!("expected InvalidJson, got {other:?}"),
        }
    }

    #[test]
    fn serde_json_syntax_errors_read_in_either_language() {
        // Inputs that produce most of serde_json's syntax errors: each description must be
        // one of SYNTAX_ERRORS (so a changed serde_json wording fails here), and every listed
        // key must be translated, the English equal to serde_json's own text.
        for bad in [
            "[1, 2",
            "{\"a\": 1",
            "{\"a\": \"x",
            "{\"a\":",
            "{\"a\" 1}",
            "[1 2]",
            "{\"a\": 1 \"b\": 2}",
            "{\"a\": tru}",
            "{\"a\": }",
            "{\"a\": \"\\q\"}",
            "{\"a\": -}",
            "{\"a\": \"\u{1}\"}",
            "{1: 2}",
            "[1, 2,]",
            "{\"a\": 1} x",
            "{\"a\": \"\\u12\"}",
        ] {
            match parse(bad) {
                Err(CalcError::InvalidJson {
                    detail: Phrase::Tr(..),
                    ..
                }) => {}
                other => panic!("{bad}: {other:?}"),
            }
        }
        for (text, key) in SYNTAX_ERRORS {
            assert_eq!(crate::base::i18n::tr(Lang::En, key), *text);
            assert_ne!(crate::base::i18n::tr(Lang::Ko, key), *text, "{key}");
        }
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let deep = "[".repeat(100_000) + &"]".repeat(100_000);
        assert!(matches!(parse(&deep), Err(CalcError::InvalidJson { .. })));
        let deep_obj = "{\"a\":".repeat(100_000) + "1" + &"}".repeat(100_000);
        assert!(matches!(
            parse(&deep_obj),
            Err(CalcError::InvalidJson { .. })
        ));
    }

    #[test]
    fn size_limit() {
        // A 20 MB string value is accepted (below the 32 MiB limit) ...
        let big = format!("{{\"s\": \"{}\"}}", "x".repeat(20_000_000));
        assert!(parse(&big).is_ok());
        // ... and anything above 32 MiB is refused before parsing.
        let huge = " ".repeat(MAX_INPUT_BYTES + 1);
        assert_eq!(
            parse(&huge),
            Err(CalcError::InputTooLarge {
                size_bytes: MAX_INPUT_BYTES + 1,
                limit_bytes: MAX_INPUT_BYTES
            })
        );
    }

    #[test]
    fn duplicated_keys_last_wins() {
        let v = parse("{\"a\": 1, \"a\": 2}").unwrap_or(Value::Null);
        assert_eq!(v.get("a").and_then(Value::as_u64), Some(2));
    }

    #[test]
    fn big_numbers_parse_as_floats() {
        let v = parse("{\"a\": 1e308, \"b\": 18446744073709551616}").unwrap_or(Value::Null);
        assert_eq!(v.get("a").and_then(Value::as_u64), None);
        assert_eq!(v.get("b").and_then(Value::as_u64), None);
        assert!(v.get("b").and_then(Value::as_f64).is_some());
        // 1e999 overflows f64: serde_json reports it as invalid.
        assert!(parse("{\"a\": 1e999}").is_err());
    }

    #[derive(serde::Serialize, serde::Deserialize, Debug)]
    struct Holder {
        #[serde(with = "super::f64_any")]
        x: f64,
        #[serde(with = "super::pairs_f64_any")]
        v: Vec<(String, f64)>,
    }

    #[test]
    fn non_finite_numbers_survive_a_round_trip() {
        for x in [
            1.5,
            -0.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            f64::MAX,
        ] {
            let h = Holder {
                x,
                v: vec![("a".into(), x), ("b".into(), 2.0)],
            };
            let text = serde_json::to_string(&h).unwrap_or_default();
            let back: Holder =
                serde_json::from_str(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
            for y in [back.x, back.v[0].1] {
                assert!(y == x || (x.is_nan() && y.is_nan()), "{x} -> {text} -> {y}");
            }
            assert_eq!(back.v[1], ("b".to_string(), 2.0));
        }
        // What serde_json writes for a plain f64 infinity reads as NaN, not as an error.
        let back: Holder = serde_json::from_str(r#"{"x":null,"v":[["a",null]]}"#)
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(back.x.is_nan() && back.v[0].1.is_nan());
        assert!(serde_json::from_str::<Holder>(r#"{"x":"lots","v":[]}"#).is_err());
    }

    #[test]
    fn hand_built_values_match_the_serde_helper() {
        for x in [1.5, -0.0, 3e-9, f64::INFINITY, f64::NEG_INFINITY, f64::NAN] {
            let h = Holder { x, v: Vec::new() };
            let derived = serde_json::to_value(&h).unwrap_or_default();
            assert_eq!(derived.get("x"), Some(&f64_any_value(x)), "{x}");
            let text = f64_any_text(x);
            assert_eq!(text.is_some(), !x.is_finite(), "{x}");
            if let Some(t) = text {
                assert_eq!(derived.get("x").and_then(Value::as_str), Some(t));
            }
        }
    }
}
