//! Small helpers shared by the parts: byte formatting, rounding divisions, range errors.

use crate::base::error::{shorten, CalcError, Phrase};
use crate::base::expr::Expr;
use crate::base::units::Bytes;

pub(super) fn gib_str(b: Bytes) -> String {
    format!("{:.3}", b.gib())
}

/// A byte count as a formula's symbol, its value shown in GiB ([`gib_str`]: `12.553 GiB`).
pub(super) fn gib_sym(symbol: &str, b: Bytes) -> Expr {
    Expr::sym(symbol, format!("{} GiB", gib_str(b)), b.0)
}

pub(super) fn ceil_div(a: u64, b: u64) -> u64 {
    if b == 0 {
        0
    } else {
        a.div_ceil(b)
    }
}

/// `⌊a / b⌋` for byte counts, 0 when `b` is 0.
pub(super) fn floor_div(a: Bytes, b: Bytes) -> u64 {
    a.0.checked_div(b.0).unwrap_or(0)
}

pub(super) fn out_of_range(field: &str, value: impl ToString, range: Phrase) -> CalcError {
    CalcError::range_error(Phrase::verbatim(field), shorten(&value.to_string()), range)
}
