//! Quick mode, as the textbook does: a parameter count ("7B", "70.6e9") and a precision, no
//! config. Weights are `P × bytes`; the KV cache needs a config.

use crate::base::dtype::Dtype;
use crate::base::error::{shorten, CalcError, Phrase};
use crate::model::desc::{
    LedgerEntry, LedgerSource, ModelDesc, ModelOrigin, ParamBreakdown, WeightFormat,
};

/// Largest count accepted: 10^15 parameters.
pub const MAX_PARAMS: u64 = 1_000_000_000_000_000;

fn bad(s: &str) -> CalcError {
    CalcError::BadValue {
        key: "params".into(),
        found: Phrase::quoted(s),
        expected: Phrase::tr("exp_param_count"),
    }
}

/// Parses a parameter count: an integer ("6738415616", "6_738_415_616", "6,738,415,616"), a
/// decimal with an exponent ("70.6e9") or a suffix K/M/B/T (thousand, million, billion,
/// trillion; case-insensitive, "G" = billion). Decimal digits are handled exactly (no float
/// rounding): "1.5T" = 1,500,000,000,000. The result must be a whole number from 1 to 10^15.
pub fn parse_param_count(s: &str) -> Result<u64, CalcError> {
    let t: String = s
        .trim()
        .chars()
        .filter(|c| !matches!(c, '_' | ',' | ' '))
        .collect();
    if t.is_empty() {
        return Err(bad(s));
    }
    let lower = t.to_ascii_lowercase();
    let (num, mut exp10): (&str, i64) = match lower.chars().last() {
        Some('k') => (&lower[..lower.len() - 1], 3),
        Some('m') => (&lower[..lower.len() - 1], 6),
        Some('b') | Some('g') => (&lower[..lower.len() - 1], 9),
        Some('t') => (&lower[..lower.len() - 1], 12),
        _ => (lower.as_str(), 0),
    };
    let (mant, e) = match num.split_once('e') {
        Some((m, e)) => (m, e.parse::<i64>().map_err(|_| bad(s))?),
        None => (num, 0),
    };
    exp10 = exp10.checked_add(e).ok_or_else(|| bad(s))?;
    let (int_part, frac_part) = mant.split_once('.').unwrap_or((mant, ""));
    if int_part.is_empty() && frac_part.is_empty() {
        return Err(bad(s));
    }
    if !int_part
        .chars()
        .chain(frac_part.chars())
        .all(|c| c.is_ascii_digit())
    {
        return Err(bad(s));
    }
    let digits: String = format!("{int_part}{frac_part}");
    let digits = digits.trim_start_matches('0');
    exp10 -= frac_part.len() as i64;
    let too_big = || {
        CalcError::range_error(
            Phrase::verbatim("params"),
            shorten(s),
            Phrase::tr("rng_from_to").val("lo", 1).val("hi", "10^15"),
        )
    };
    if digits.is_empty() {
        return Err(too_big());
    }
    // value = digits × 10^exp10, exactly.
    let mut v: u128 = 0;
    for c in digits.chars() {
        v = v
            .checked_mul(10)
            .and_then(|x| x.checked_add(u128::from(c as u8 - b'0')))
            .ok_or_else(too_big)?;
        if v > u128::from(MAX_PARAMS) * 10u128.pow(20) {
            return Err(too_big());
        }
    }
    while exp10 > 0 {
        v = v.checked_mul(10).ok_or_else(too_big)?;
        exp10 -= 1;
        if v > u128::from(MAX_PARAMS) {
            return Err(too_big());
        }
    }
    while exp10 < 0 {
        if !v.is_multiple_of(10) {
            return Err(CalcError::BadValue {
                key: "params".into(),
                found: Phrase::quoted(s),
                expected: Phrase::tr("exp_whole_params"),
            });
        }
        v /= 10;
        exp10 += 1;
    }
    if v == 0 || v > u128::from(MAX_PARAMS) {
        return Err(too_big());
    }
    u64::try_from(v).map_err(|_| too_big())
}

/// A model known only by its parameter count and precision: every parameter is stored in
/// `dtype` (so `weights::with_dtype` gives `P × bytes`), no layers (KV needs a config).
pub fn quick_model(params: u64, dtype: Dtype) -> ModelDesc {
    let ledger = vec![
        LedgerEntry {
            field: "params_total".into(),
            value: params.to_string(),
            source: LedgerSource::Key("params".into()),
        },
        LedgerEntry {
            field: "dtype".into(),
            value: dtype.to_string(),
            source: LedgerSource::Key("dtype".into()),
        },
        LedgerEntry {
            field: "layers".into(),
            value: "unknown".into(),
            source: LedgerSource::Default(Phrase::tr(
                "ldg_quick_mode_has_no_architecture_paste_config",
            )),
        },
        LedgerEntry {
            field: "linear".into(),
            value: params.to_string(),
            source: LedgerSource::Default(Phrase::tr(
                "ldg_quick_mode_every_parameter_is_treated_as",
            )),
        },
    ];
    ModelDesc {
        // A name in symbols, the same in both UI languages (P: parameters, as in the math).
        name: format!("P = {}", crate::base::derivation::group(params)),
        model_type: "quick".into(),
        origin: ModelOrigin::Quick,
        hidden_size: 0,
        vocab_size: 0,
        layers: Vec::new(),
        tie_word_embeddings: false,
        max_position_embeddings: None,
        engine_max_len: None,
        params: ParamBreakdown {
            total: params,
            active: params,
            other: params,
            linear: params,
            language_model: params,
            ..ParamBreakdown::default()
        },
        weights: WeightFormat {
            dtype,
            group_size: None,
            scale_bits: 0,
            zero_point: false,
            method: "none".into(),
            experts_only: false,
            base: if dtype.bits() >= 16 {
                dtype
            } else {
                Dtype::Bf16
            },
        },
        exact_weight_bytes: None,
        ledger,
        warnings: Vec::new(),
        load_mtp: false,
        mtp_layers: Vec::new(),
        kv_shared: Vec::new(),
        ssm_state_dtype: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calc::weights;

    #[test]
    fn parses_counts() {
        for (s, want) in [
            ("7B", 7 * 10u64.pow(9)),
            ("7b", 7 * 10u64.pow(9)),
            ("70.6e9", 706 * 10u64.pow(8)),
            ("1.5T", 15 * 10u64.pow(11)),
            ("124M", 124 * 10u64.pow(6)),
            ("6738415616", 6_738_415_616),
            ("6,738,415,616", 6_738_415_616),
            ("0.5B", 5 * 10u64.pow(8)),
            ("1e15", 10u64.pow(15)),
        ] {
            assert_eq!(parse_param_count(s).ok(), Some(want), "{s}");
        }
        for s in [
            "",
            "B",
            "-7B",
            "7X",
            "1.5",
            "0",
            "2e15",
            "1e400",
            "abc",
            "1.2.3B",
            "99999999999999999999999999999999999",
        ] {
            assert!(parse_param_count(s).is_err(), "{s}");
        }
    }

    #[test]
    fn textbook_quick_weights() {
        // 7 × 10^9 × 2 B = 14 × 10^9 B.
        let m = quick_model(7 * 10u64.pow(9), Dtype::Bf16);
        let w = weights::checkpoint(&m, 1).map(|w| w.total.0).ok();
        assert_eq!(w, Some(7 * 10u64.pow(9) * 2));
        assert_eq!(
            weights::with_dtype(&m, Dtype::Fp32, 1)
                .map(|w| w.total.0)
                .ok(),
            Some(28 * 10u64.pow(9))
        );
        assert!(m.layers.is_empty());
    }
}
