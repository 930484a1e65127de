//! Value parsers: the handlers' former checks, with their messages.

use crate::args::short;
use crate::core::calc::{DecodeContext, VllmVersion};

/// Largest memory figure accepted, in GiB (a petabyte-class accelerator).
pub(crate) const MAX_GIB: f64 = 1.0e6;

/// `--max-cudagraph-capture-size` / `--enforce-eager` as the engine's capture size (0: no
/// graphs; `None`: vLLM's default).
pub fn capture_size(size: Option<u64>, enforce_eager: bool) -> Option<u64> {
    if enforce_eager {
        Some(0)
    } else {
        size
    }
}

/// A whole number of at least 1 (`_` separators allowed).
pub(crate) fn whole(s: &str) -> Result<u64, String> {
    match s.trim().replace('_', "").parse::<u64>() {
        Ok(v) if v >= 1 => Ok(v),
        _ => Err(format!(
            "must be a whole number of at least 1, not \"{}\"",
            short(s)
        )),
    }
}

/// Any whole number (0 included).
pub(crate) fn any_whole(s: &str) -> Result<u64, String> {
    s.trim()
        .parse::<u64>()
        .map_err(|_| format!("must be a whole number, not \"{}\"", short(s)))
}

/// A finite number within `[min, max]`.
fn number(s: &str, min: f64, max: f64) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= min && v <= max => Ok(v),
        _ => Err(format!(
            "must be a number from {min} to {max}, not \"{}\"",
            short(s)
        )),
    }
}

/// A parser of finite numbers within `[min, max]`.
pub(super) fn range(
    min: f64,
    max: f64,
) -> impl Fn(&str) -> Result<f64, String> + Clone + Send + Sync + 'static {
    move |s| number(s, min, max)
}

/// A share of GPU memory: above 0, at most 1.
pub(crate) fn utilization(s: &str) -> Result<f64, String> {
    match number(s, 0.0, 1.0)? {
        u if u > 0.0 => Ok(u),
        _ => Err("must be above 0 and at most 1".into()),
    }
}

/// A share from 0 to 1, both included.
pub(crate) fn share(s: &str) -> Result<f64, String> {
    number(s, 0.0, 1.0)
}

/// A prefix-cache hit share: from 0 up to (not including) 1.
pub(super) fn prefix_share(s: &str) -> Result<f64, String> {
    match number(s, 0.0, 1.0)? {
        p if p < 1.0 => Ok(p),
        _ => Err("must be a share from 0 up to (not including) 1".into()),
    }
}

/// A gamma shape: above 0.
pub(super) fn burstiness(s: &str) -> Result<f64, String> {
    match number(s, 0.0, 1.0e6)? {
        b if b > 0.0 => Ok(b),
        _ => Err("must be above 0".into()),
    }
}

/// `true` or `false` (also `1`/`0`, `yes`/`no`).
pub(super) fn yes_no(s: &str) -> Result<bool, String> {
    match s {
        "true" | "1" | "yes" => Ok(true),
        "false" | "0" | "no" => Ok(false),
        o => Err(format!("takes true or false, not \"{}\"", short(o))),
    }
}

/// `mean` or `end`.
pub(super) fn decode_context(s: &str) -> Result<DecodeContext, String> {
    match s {
        "mean" => Ok(DecodeContext::Mean),
        "end" => Ok(DecodeContext::End),
        o => Err(format!("must be \"mean\" or \"end\", not \"{}\"", short(o))),
    }
}

/// A vLLM release as `X.Y` or `X.Y.Z`, no newer than the newest release line whose start-up
/// lines the core knows (older ones follow the oldest rules, with a note).
pub(crate) fn vllm_version(s: &str) -> Result<VllmVersion, String> {
    let v = VllmVersion::parse(s).ok_or_else(|| {
        format!(
            "must be a vLLM release as X.Y or X.Y.Z (e.g. 0.19.2), not \"{}\"",
            short(s)
        )
    })?;
    let newest = VllmVersion::NEWEST_LOGGED;
    if !v.is_known() {
        return Err(format!(
            "must be a vLLM release up to {}.{}.x, whose start-up lines are known; {v} is newer",
            newest.major, newest.minor
        ));
    }
    Ok(v)
}
