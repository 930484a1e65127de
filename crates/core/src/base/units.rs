//! Quantities with their units.
//!
//! Bytes are integers (`u64`, enough for 10^15 parameters at 4 bytes each with room to spare);
//! rates and FLOP counts are `f64`. Only meaningful arithmetic is implemented
//! (`Bytes / BytesPerSecond = Seconds`, `Flops / FlopsPerSecond = Seconds`).
//! GB means 10^9 bytes and GiB 2^30 bytes; both are offered and always labelled.

use serde::{Deserialize, Serialize};
use std::ops::{Add, Div, Mul, Sub};

/// 10^9 bytes.
pub const GB: u64 = 1_000_000_000;
/// 2^30 bytes.
pub const GIB: u64 = 1 << 30;
/// 2^20 bytes.
pub const MIB: u64 = 1 << 20;
/// 2^10 bytes.
pub const KIB: u64 = 1 << 10;

/// An exact number of bytes.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[serde(transparent)]
// The presets' stored models (`model::presets_first`).
#[derive(borsh::BorshSerialize, borsh::BorshDeserialize)]
pub struct Bytes(pub u64);

impl Bytes {
    /// Zero bytes.
    pub const ZERO: Bytes = Bytes(0);

    /// From a number of MiB (2^20 bytes), as drivers report memory.
    pub const fn from_mib(mib: u64) -> Bytes {
        Bytes(mib * MIB)
    }

    /// From a number of GiB (2^30 bytes).
    pub const fn from_gib(gib: u64) -> Bytes {
        Bytes(gib * GIB)
    }

    /// From a fractional number of GiB, rounded down; `None` if negative, not finite or too large.
    pub fn from_gib_f64(gib: f64) -> Option<Bytes> {
        let b = gib * GIB as f64;
        (b.is_finite() && b >= 0.0 && b < u64::MAX as f64).then_some(Bytes(b as u64))
    }

    /// From a computed (fractional) byte count, rounded down and saturating: negative and NaN
    /// give 0, anything beyond `u64::MAX` gives `u64::MAX` (Rust's float-to-int `as`). For
    /// figures a formula produced (a per-GPU share, a matmul's traffic), not for user input,
    /// which [`Bytes::from_gib_f64`] rejects instead.
    pub fn saturating_from_f64(b: f64) -> Bytes {
        Bytes(b as u64)
    }

    /// Value in decimal gigabytes (10^9 bytes).
    pub fn gb(self) -> f64 {
        self.0 as f64 / GB as f64
    }

    /// Value in binary gibibytes (2^30 bytes).
    pub fn gib(self) -> f64 {
        self.0 as f64 / GIB as f64
    }

    /// Value in binary mebibytes (2^20 bytes).
    pub fn mib(self) -> f64 {
        self.0 as f64 / MIB as f64
    }

    /// Value in binary kibibytes (2^10 bytes).
    pub fn kib(self) -> f64 {
        self.0 as f64 / KIB as f64
    }

    /// Checked addition (no silent overflow).
    pub fn checked_add(self, o: Bytes) -> Option<Bytes> {
        self.0.checked_add(o.0).map(Bytes)
    }

    /// Checked multiplication by a count.
    pub fn checked_mul(self, n: u64) -> Option<Bytes> {
        self.0.checked_mul(n).map(Bytes)
    }

    /// Saturating subtraction: never below zero.
    pub fn saturating_sub(self, o: Bytes) -> Bytes {
        Bytes(self.0.saturating_sub(o.0))
    }

    /// Human formatting in decimal units: "13.48 GB".
    pub fn fmt_gb(self) -> String {
        fmt_scaled(
            self.0 as f64,
            1000.0,
            &["B", "kB", "MB", "GB", "TB", "PB", "EB"],
        )
    }

    /// Human formatting in binary units: "12.55 GiB".
    pub fn fmt_gib(self) -> String {
        fmt_scaled(
            self.0 as f64,
            1024.0,
            &["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"],
        )
    }

    /// Human formatting in both units, the second in parentheses: "13.48 GB (12.55 GiB)", or
    /// binary first ("12.55 GiB (13.48 GB)") when `gib_first`.
    pub fn fmt_both(self, gib_first: bool) -> String {
        both_units(self.fmt_gb(), self.fmt_gib(), gib_first)
    }
}

/// A byte count's decimal and binary texts as one, the second in parentheses.
fn both_units(gb: String, gib: String, gib_first: bool) -> String {
    if gib_first {
        format!("{gib} ({gb})")
    } else {
        format!("{gb} ({gib})")
    }
}

fn fmt_scaled(mut v: f64, base: f64, units: &[&str]) -> String {
    let mut i = 0;
    while v >= base && i + 1 < units.len() {
        v /= base;
        i += 1;
    }
    if i == 0 {
        format!("{} {}", v as u64, units[0])
    } else {
        format!("{} {}", fmt_sig(v), units[i])
    }
}

/// Dollars per million tokens when `usd` dollars buy `tokens` tokens, both over the same span
/// (a second, an hour): `usd / tokens × 10^6`. Callers convert to that span first, each in its
/// own order, so the figures stay exactly those they print.
pub fn usd_per_million_tokens(usd: f64, tokens: f64) -> f64 {
    usd / tokens * 1e6
}

/// Formats with about four significant digits and no trailing zeros: 13.48, 0.5, 341.3, 1365.
pub fn fmt_sig(v: f64) -> String {
    if !v.is_finite() {
        return "—".to_string();
    }
    if v == 0.0 {
        // Not "0.000e0": a zero (a model without attention has no KV per token) is written as such.
        return "0".to_string();
    }
    let a = v.abs();
    let decimals = if a >= 1000.0 {
        0
    } else if a >= 100.0 {
        1
    } else if a >= 1.0 {
        2
    } else if a >= 0.01 {
        3
    } else {
        return format!("{v:.3e}");
    };
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// How a language writes numbers: its grouping and decimal separators (Unicode CLDR's
/// `symbols-numberSystem-latn`). English and Korean both group thousands with "," and mark
/// decimals with "." (CLDR `en` and `ko`: group ",", decimal "."; minimum grouping digits 1),
/// which is what `Intl.NumberFormat("en-US" | "ko-KR")` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NumberSymbols {
    /// Between groups of three integer digits.
    pub group: char,
    /// Between the integer and the fraction.
    pub decimal: char,
}

impl NumberSymbols {
    /// "," and "." (CLDR `en`, `ko`).
    pub const COMMA_DOT: NumberSymbols = NumberSymbols {
        group: ',',
        decimal: '.',
    };

    /// Rewrites a plain number as Rust prints it ("-1234567.25", "1.5e-3") in these symbols:
    /// integer digits grouped by three, the decimal point replaced. Exponent forms and text
    /// that is not a number (such as "—") are returned unchanged.
    pub fn localize(self, plain: &str) -> String {
        let (sign, body) = match plain.strip_prefix('-') {
            Some(rest) => ("-", rest),
            None => ("", plain),
        };
        let (int, frac) = match body.split_once('.') {
            Some((i, f)) => (i, Some(f)),
            None => (body, None),
        };
        let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
        if !digits(int) || frac.is_some_and(|f| !digits(f)) {
            return plain.to_string();
        }
        let mut out = String::with_capacity(plain.len() + int.len() / 3 + 1);
        out.push_str(sign);
        for (i, c) in int.chars().enumerate() {
            if i > 0 && (int.len() - i).is_multiple_of(3) {
                out.push(self.group);
            }
            out.push(c);
        }
        if let Some(f) = frac {
            out.push(self.decimal);
            out.push_str(f);
        }
        out
    }

    /// A whole number with grouping: 6738415616 → "6,738,415,616".
    pub fn group(self, n: u64) -> String {
        self.localize(&n.to_string())
    }

    /// [`fmt_sig`] in these symbols: 1365.2 → "1,365", 13.48 → "13.48".
    pub fn sig(self, v: f64) -> String {
        self.localize(&fmt_sig(v))
    }

    /// [`Bytes::fmt_gb`] in these symbols.
    pub fn gb(self, b: Bytes) -> String {
        self.scaled(&b.fmt_gb())
    }

    /// [`Bytes::fmt_gib`] in these symbols.
    pub fn gib(self, b: Bytes) -> String {
        self.scaled(&b.fmt_gib())
    }

    /// [`Bytes::fmt_both`] in these symbols.
    pub fn bytes_both(self, b: Bytes, gib_first: bool) -> String {
        both_units(self.gb(b), self.gib(b), gib_first)
    }

    /// Localizes the number of "13.48 GB"-style text (number, space, unit).
    fn scaled(self, s: &str) -> String {
        match s.split_once(' ') {
            Some((n, unit)) => format!("{} {unit}", self.localize(n)),
            None => self.localize(s),
        }
    }
}

/// A count in Korean myriad units as the course writes parameter counts ("70억 파라미터"):
/// counts of at least 10^8 in 억 (10^8) with up to two decimals, e.g. 6,738,415,616 →
/// "67.38억"; smaller counts `None`. Thousands of 억 are grouped ("6,710억"), as the course
/// does not use 조 (10^12).
pub fn fmt_eok(n: u64, sym: NumberSymbols) -> Option<String> {
    const EOK: u64 = 100_000_000;
    if n < EOK {
        return None;
    }
    let v = n as f64 / EOK as f64;
    let s = format!("{v:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    Some(format!("{}억", sym.localize(s)))
}

impl Add for Bytes {
    type Output = Bytes;
    /// Saturating: a byte count never wraps around.
    fn add(self, o: Bytes) -> Bytes {
        Bytes(self.0.saturating_add(o.0))
    }
}

impl Sub for Bytes {
    type Output = Bytes;
    /// Saturating at zero.
    fn sub(self, o: Bytes) -> Bytes {
        Bytes(self.0.saturating_sub(o.0))
    }
}

impl Mul<u64> for Bytes {
    type Output = Bytes;
    /// Saturating multiplication by a count.
    fn mul(self, n: u64) -> Bytes {
        Bytes(self.0.saturating_mul(n))
    }
}

impl Div<BytesPerSecond> for Bytes {
    type Output = Seconds;
    fn div(self, bw: BytesPerSecond) -> Seconds {
        Seconds(self.0 as f64 / bw.0)
    }
}

/// A bandwidth in bytes per second (decimal: 1 GB/s = 10^9 B/s).
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Default, Serialize, Deserialize)]
#[serde(transparent)]
#[derive(borsh::BorshSerialize, borsh::BorshDeserialize)]
pub struct BytesPerSecond(pub f64);

impl BytesPerSecond {
    /// From decimal GB/s.
    pub fn from_gbps(gbps: f64) -> Self {
        BytesPerSecond(gbps * 1e9)
    }
    /// In decimal GB/s.
    pub fn gbps(self) -> f64 {
        self.0 / 1e9
    }
}

/// A number of floating-point operations (a multiply-add counts as 2).
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Flops(pub f64);

impl Add for Flops {
    type Output = Flops;
    fn add(self, o: Flops) -> Flops {
        Flops(self.0 + o.0)
    }
}

impl Div<FlopsPerSecond> for Flops {
    type Output = Seconds;
    fn div(self, r: FlopsPerSecond) -> Seconds {
        Seconds(self.0 / r.0)
    }
}

/// A compute rate in FLOP per second.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Default, Serialize, Deserialize)]
#[serde(transparent)]
#[derive(borsh::BorshSerialize, borsh::BorshDeserialize)]
pub struct FlopsPerSecond(pub f64);

impl FlopsPerSecond {
    /// From TFLOPS (10^12 FLOP/s).
    pub fn from_tflops(t: f64) -> Self {
        FlopsPerSecond(t * 1e12)
    }
    /// In TFLOPS (10^12 FLOP/s).
    pub fn tflops(self) -> f64 {
        self.0 / 1e12
    }
}

impl Div<BytesPerSecond> for FlopsPerSecond {
    type Output = f64;
    /// The ridge point, in FLOP per byte.
    fn div(self, bw: BytesPerSecond) -> f64 {
        self.0 / bw.0
    }
}

/// A duration in seconds.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Seconds(pub f64);

impl Seconds {
    /// In milliseconds.
    pub fn ms(self) -> f64 {
        self.0 * 1e3
    }
    /// From milliseconds.
    pub fn from_ms(ms: f64) -> Self {
        Seconds(ms / 1e3)
    }
}

impl Add for Seconds {
    type Output = Seconds;
    fn add(self, o: Seconds) -> Seconds {
        Seconds(self.0 + o.0)
    }
}

/// A number of tokens.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Tokens(pub u64);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gb_and_gib_are_distinct() {
        // Llama-2-7b bf16 weights: 6,738,415,616 × 2 B = 13,476,831,232 B = 13.48 GB = 12.55 GiB.
        let b = Bytes(6_738_415_616 * 2);
        assert_eq!(b.fmt_gb(), "13.48 GB");
        assert_eq!(b.fmt_gib(), "12.55 GiB");
        assert_eq!(b.fmt_both(false), "13.48 GB (12.55 GiB)");
        assert_eq!(b.fmt_both(true), "12.55 GiB (13.48 GB)");
        // 0.5 MiB per token: 2 × 32 × 32 × 128 × 2 = 524,288 B.
        assert_eq!(Bytes(2 * 32 * 32 * 128 * 2).fmt_gib(), "512 KiB");
        assert_eq!(Bytes(2 * 32 * 32 * 128 * 2).mib(), 0.5);
    }

    #[test]
    fn significant_digits_write_zero_as_zero() {
        // A model of recurrent layers only has 0 KV bytes per token: "0 MiB (0 B)".
        assert_eq!(fmt_sig(0.0), "0");
        assert_eq!(fmt_sig(-0.0), "0");
        assert_eq!(fmt_sig(0.004), "4.000e-3");
        assert_eq!(fmt_sig(12.5), "12.5");
    }

    #[test]
    fn saturating_bytes_clamp_at_both_ends() {
        assert_eq!(Bytes::saturating_from_f64(1536.9), Bytes(1536));
        assert_eq!(Bytes::saturating_from_f64(-3.0), Bytes::ZERO);
        assert_eq!(Bytes::saturating_from_f64(f64::NAN), Bytes::ZERO);
        assert_eq!(Bytes::saturating_from_f64(1e30), Bytes(u64::MAX));
        assert_eq!(Bytes::saturating_from_f64(f64::INFINITY), Bytes(u64::MAX));
    }

    #[test]
    fn ridge_point_is_flops_over_bandwidth() {
        // L40S: 362.05 TFLOPS / 864 GB/s ≈ 419 FLOP/B.
        let r = FlopsPerSecond::from_tflops(362.05) / BytesPerSecond::from_gbps(864.0);
        assert!((r - 419.04).abs() < 0.01, "{r}");
    }

    #[test]
    fn localize_groups_integers_and_keeps_decimals() {
        let s = NumberSymbols::COMMA_DOT;
        assert_eq!(s.group(6_738_415_616), "6,738,415,616");
        assert_eq!(s.group(999), "999");
        assert_eq!(s.group(1000), "1,000");
        assert_eq!(s.group(0), "0");
        assert_eq!(s.localize("-1234567.25"), "-1,234,567.25");
        // Exponent forms and non-numbers pass through.
        assert_eq!(s.localize("1.500e-3"), "1.500e-3");
        assert_eq!(s.localize("—"), "—");
        assert_eq!(s.localize(""), "");
        // fmt_sig keeps four significant digits; only the grouping is added.
        assert_eq!(s.sig(1365.2), "1,365");
        assert_eq!(s.sig(13.48), "13.48");
        // Another convention (CLDR `de`: "." groups, "," decimals) shows both symbols are used.
        let de = NumberSymbols {
            group: '.',
            decimal: ',',
        };
        assert_eq!(de.localize("1234.5"), "1.234,5");
        assert_eq!(de.gb(Bytes(6_738_415_616 * 2)), "13,48 GB");
        // Binary units scale at 1024, so 1000 GiB stays in GiB and shows a group.
        assert_eq!(s.gib(Bytes::from_gib(1000)), "1,000 GiB");
    }

    #[test]
    fn eok_units_as_the_course_writes_them() {
        let s = NumberSymbols::COMMA_DOT;
        // The course: "Llama-2-7b는 약 70억 개", "140억 바이트": 7e9 / 1e8 = 70.
        assert_eq!(fmt_eok(7_000_000_000, s).as_deref(), Some("70억"));
        assert_eq!(fmt_eok(14_000_000_000, s).as_deref(), Some("140억"));
        // 6,738,415,616 / 1e8 = 67.384… → 67.38.
        assert_eq!(fmt_eok(6_738_415_616, s).as_deref(), Some("67.38억"));
        // 671e9 / 1e8 = 6710, grouped.
        assert_eq!(fmt_eok(671_000_000_000, s).as_deref(), Some("6,710억"));
        assert_eq!(fmt_eok(99_999_999, s), None);
    }

    #[test]
    fn byte_arithmetic_saturates() {
        assert_eq!(Bytes(u64::MAX) + Bytes(1), Bytes(u64::MAX));
        assert_eq!(Bytes(1) - Bytes(2), Bytes(0));
        assert_eq!(Bytes(1).checked_mul(u64::MAX).map(|b| b.0), Some(u64::MAX));
        assert_eq!(Bytes(2).checked_mul(u64::MAX), None);
    }
}
