//! Checked `u64` arithmetic: parameter counts and byte totals never wrap. A sum or product
//! that does not fit gives [`CalcError::Overflow`] naming the quantity (a translation key).

use crate::base::error::{CalcError, Phrase};

/// Checked product; `Overflow` naming `what` (a translation key) when it does not fit in `u64`.
pub fn mul(what: &'static str, xs: &[u64]) -> Result<u64, CalcError> {
    // Every call names its quantity by a translation key; the tests (debug builds) check it
    // on every call, not only when a product overflows.
    debug_assert!(crate::base::i18n::has(what), "no translation for {what}");
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
    debug_assert!(crate::base::i18n::has(what), "no translation for {what}");
    xs.iter()
        .try_fold(0u64, |a, &x| a.checked_add(x))
        .ok_or_else(|| CalcError::Overflow {
            what: Phrase::tr(what),
        })
}
