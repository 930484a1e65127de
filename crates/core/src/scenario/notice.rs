//! Reading one URL value, and the notice a value that cannot be read gives (the value falls
//! back to its default; the notice names the parameter).

use crate::base::error::shorten;
use crate::base::i18n::{fill, tr, Lang};
use serde::{Deserialize, Serialize};

/// What went wrong with one URL parameter (the value was replaced by its default).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NoticeKind {
    /// The value could not be read.
    Invalid,
    /// The value is outside the accepted range.
    OutOfRange,
    /// The parameter is not one this version knows (ignored).
    UnknownParam,
    /// The preset or GPU id is not known (outdated link?).
    UnknownId,
    /// More GPUs than can be compared; the extra ones were dropped.
    TooMany,
    /// The link was made by a newer version; parameters were read as far as possible.
    NewerVersion,
    /// The query is too long; the rest was ignored.
    QueryTooLong,
    /// The pasted config is too large for a link and was left out of it.
    ConfigNotInLink,
}

impl NoticeKind {
    /// Translation key of the message template (with a `{param}` placeholder).
    pub const fn key(self) -> &'static str {
        match self {
            NoticeKind::Invalid => "notice_invalid",
            NoticeKind::OutOfRange => "notice_out_of_range",
            NoticeKind::UnknownParam => "notice_unknown_param",
            NoticeKind::UnknownId => "notice_unknown_id",
            NoticeKind::TooMany => "notice_too_many",
            NoticeKind::NewerVersion => "notice_newer_version",
            NoticeKind::QueryTooLong => "notice_query_too_long",
            NoticeKind::ConfigNotInLink => "notice_config_not_in_link",
        }
    }
}

/// A message about one URL parameter.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Notice {
    /// The parameter's name (sanitised, at most 40 characters; untrusted text).
    pub param: String,
    /// What happened (the first occurrence's kind when the parameter came back several times).
    pub kind: NoticeKind,
    /// How many times the parameter gave a notice (a garbled link may repeat one 80 times).
    #[serde(default = "one")]
    pub count: u32,
}

const fn one() -> u32 {
    1
}

impl Notice {
    pub(super) fn new(param: &str, kind: NoticeKind) -> Notice {
        Notice {
            param: shorten(
                &param
                    .chars()
                    .filter(|c| !c.is_control())
                    .collect::<String>(),
            ),
            kind,
            count: 1,
        }
    }

    /// The one-sentence message in `lang`, with the count when the parameter came back more
    /// than once.
    pub fn message(&self, lang: Lang) -> String {
        let one = fill(tr(lang, self.kind.key()), &[("param", &self.param)]);
        if self.count > 1 {
            fill(
                tr(lang, "notice_repeated"),
                &[("message", &one), ("count", &self.count.to_string())],
            )
        } else {
            one
        }
    }
}

/// At most one notice per parameter name, in the order of first appearance, each with the
/// number of times its name came back (the kind is the first occurrence's).
pub fn coalesce(notices: Vec<Notice>) -> Vec<Notice> {
    let mut out: Vec<Notice> = Vec::with_capacity(notices.len().min(16));
    for n in notices {
        match out.iter_mut().find(|o| o.param == n.param) {
            Some(o) => o.count = o.count.saturating_add(n.count),
            None => out.push(n),
        }
    }
    out
}

pub(super) fn in_range(n: u64, r: (u64, u64)) -> bool {
    n >= r.0 && n <= r.1
}

pub(super) fn parse_u64_in(s: &str, r: (u64, u64)) -> Result<u64, NoticeKind> {
    match parse_count(s) {
        Some(n) if in_range(n, r) => Ok(n),
        Some(_) => Err(NoticeKind::OutOfRange),
        None => {
            // A number too large for u64, or negative: out of range rather than unreadable.
            let t = s.trim();
            let numeric = !t.is_empty()
                && t.chars()
                    .all(|c| c.is_ascii_digit() || matches!(c, '-' | '+' | '.' | 'e' | 'E'));
            Err(if numeric && t.chars().any(|c| c.is_ascii_digit()) {
                NoticeKind::OutOfRange
            } else {
                NoticeKind::Invalid
            })
        }
    }
}

/// Parses a non-negative whole count: `4096`, `4,096`, `7e9`, `7b`, `1.5k`, `70B`. `None` when
/// not a finite non-negative whole number that fits in `u64`.
pub fn parse_count(s: &str) -> Option<u64> {
    let t: String = s
        .trim()
        .chars()
        .filter(|c| *c != ',' && *c != '_' && *c != ' ')
        .collect();
    if t.is_empty() || t.len() > 40 {
        return None;
    }
    if t.bytes().all(|b| b.is_ascii_digit()) {
        return t.parse::<u64>().ok();
    }
    let lower = t.to_ascii_lowercase();
    let (num, mult) = match lower.chars().last() {
        Some('k') => (&lower[..lower.len() - 1], 1e3),
        Some('m') => (&lower[..lower.len() - 1], 1e6),
        Some('b') | Some('g') => (&lower[..lower.len() - 1], 1e9),
        Some('t') => (&lower[..lower.len() - 1], 1e12),
        _ => (lower.as_str(), 1.0),
    };
    if num.contains("inf") || num.contains("nan") {
        return None;
    }
    let x: f64 = num.parse().ok()?;
    let v = x * mult;
    // 2^64 as f64 is exactly representable; anything at or above it does not fit.
    if !(0.0..18_446_744_073_709_551_616.0).contains(&v) || v.fract() != 0.0 {
        return None;
    }
    Some(v as u64)
}

/// Parses a finite decimal number (used for the custom-GPU fields); `None` otherwise.
pub fn parse_f64_in(s: &str, r: (f64, f64)) -> Option<f64> {
    let t = s.trim();
    if t.len() > 40 {
        return None;
    }
    let x: f64 = t.parse().ok()?;
    (x.is_finite() && x >= r.0 && x <= r.1).then_some(x)
}
