//! Checked `u64` arithmetic: parameter counts and byte totals never wrap. A sum or product
//! that does not fit gives [`CalcError::Overflow`] naming the quantity (a translation key).
//!
//! Elements × bits → bytes has its home here too, in the three forms its callers need: checked
//! ([`bits_to_bytes`]), saturating ([`bits_to_bytes_saturating`]) and for real-valued element
//! counts ([`bits_to_bytes_real`]); each is `⌈elements × bits / 8⌉`.

use crate::base::error::{CalcError, Phrase};
use crate::base::units::Bytes;

/// Checked product; `Overflow` naming `what` (a translation key) when it does not fit in `u64`.
pub fn mul(what: &'static str, xs: &[u64]) -> Result<u64, CalcError> {
    // Every call names its quantity by a translation key; the tests (debug builds) check it
    // on every call, not only when a product overflows.
    debug_assert!(crate::base::i18n::is_row(what), "no translation for {what}");
    xs.iter()
        .try_fold(1u64, |a, &x| a.checked_mul(x))
        .ok_or_else(|| CalcError::Overflow {
            what: Phrase::tr(what),
        })
}

/// Checked sum; `Overflow` naming `what` (a translation key) when it does not fit in `u64`.
pub fn add(what: &'static str, xs: &[u64]) -> Result<u64, CalcError> {
    // Every call names its quantity by a translation key; the tests (debug builds) check it
    // on every call, not only when a product overflows.
    debug_assert!(crate::base::i18n::is_row(what), "no translation for {what}");
    xs.iter()
        .try_fold(0u64, |a, &x| a.checked_add(x))
        .ok_or_else(|| CalcError::Overflow {
            what: Phrase::tr(what),
        })
}

/// `⌈elems × bits / 8⌉` bytes; `Overflow` naming `what` (a translation key) when `elems × bits`
/// does not fit in `u64`.
pub fn bits_to_bytes(what: &'static str, elems: u64, bits: u64) -> Result<u64, CalcError> {
    Ok(mul(what, &[elems, bits])?.div_ceil(8))
}

/// `⌈elems × bits / 8⌉` bytes, exact, saturating at `u64::MAX`.
pub fn bits_to_bytes_saturating(elems: u64, bits: u64) -> Bytes {
    let total_bits = u128::from(elems) * u128::from(bits);
    Bytes(u64::try_from(total_bits.div_ceil(8)).unwrap_or(u64::MAX))
}

/// `⌈elems × bits / 8⌉` bytes of a real-valued element count (an expectation, say); 0 when the
/// result is not a positive finite number.
pub fn bits_to_bytes_real(elems: f64, bits: f64) -> Bytes {
    let b = (elems * bits / 8.0).ceil();
    if b.is_finite() && b > 0.0 {
        Bytes(b as u64)
    } else {
        Bytes::ZERO
    }
}
