//! `--eff e_bw=0.6,e_cp=0.4`: the performance model's efficiencies, given as the link
//! parameters `llmcalc calibrate --fit` prints (`url_params`) and the app writes
//! (`core::scenario::EffField`: `e_cp`, `e_cd`, `e_bw`, `e_ic` fractions; `e_so`, `e_po`,
//! `e_ar` milliseconds). Pairs are separated by commas, `&` or spaces, and the flag may be
//! repeated; a key not given keeps its calibrated default. Read by `perf`, `plan`,
//! `simulate` and `calibrate`.

use super::args::short;
use super::CliError;
use crate::core::calc::Efficiencies;
use crate::core::scenario::{parse_f64_range, EffField, NoticeKind};

/// The keys `--eff` accepts, for messages.
fn known_keys() -> String {
    EffField::ALL
        .iter()
        .map(|f| f.query_key())
        .collect::<Vec<_>>()
        .join(", ")
}

/// What one key accepts, for messages.
fn range_text(f: EffField) -> String {
    let (lo, hi) = f.range();
    if f.unit_key() == "view_unit_ms" {
        format!("a number of milliseconds from {lo} to {hi}")
    } else {
        format!("a fraction from {lo} to {hi}")
    }
}

/// Applies the `key=value` pairs of one `--eff` value to `eff`; `seen` holds the keys
/// already given (a key twice is refused).
fn apply(text: &str, eff: &mut Efficiencies, seen: &mut Vec<EffField>) -> Result<(), CliError> {
    let pairs = text
        .trim()
        .trim_start_matches('?')
        .split([',', '&', ' ', '\t', '\n'])
        .filter(|p| !p.trim().is_empty());
    for pair in pairs {
        let (k, v) = pair.split_once('=').ok_or_else(|| {
            CliError::Usage(format!(
                "--eff takes key=value pairs (such as e_bw=0.6,e_cp=0.4), not \"{}\"",
                short(pair)
            ))
        })?;
        let key = k.trim();
        let f = EffField::ALL
            .iter()
            .copied()
            .find(|f| f.query_key() == key)
            .ok_or_else(|| {
                CliError::Usage(format!(
                    "--eff does not know \"{}\"; its keys are {}",
                    short(key),
                    known_keys()
                ))
            })?;
        if seen.contains(&f) {
            return Err(CliError::Usage(format!(
                "--eff gives {} twice; give each efficiency once",
                f.query_key()
            )));
        }
        let value = parse_f64_range(v, f.range()).map_err(|kind| {
            let what = match kind {
                NoticeKind::OutOfRange => "is out of range",
                _ => "is not a number",
            };
            CliError::Usage(format!(
                "--eff {}=\"{}\" {what}: it must be {}",
                f.query_key(),
                short(v),
                range_text(f)
            ))
        })?;
        f.set(eff, value);
        seen.push(f);
    }
    Ok(())
}

/// The efficiencies of `--eff` (every occurrence), else the calibrated defaults.
pub(super) fn efficiencies(given: &super::opts::Eff) -> Result<Efficiencies, CliError> {
    let mut eff = Efficiencies::default();
    let mut seen = Vec::new();
    for text in &given.eff {
        apply(text, &mut eff, &mut seen)?;
    }
    Ok(eff)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(v: &[&str]) -> Result<Efficiencies, CliError> {
        efficiencies(&crate::opts::Eff {
            eff: v.iter().map(|x| (*x).to_string()).collect(),
        })
    }

    #[test]
    fn the_fit_link_parameters_round_trip_through_eff() {
        // Every field at a value away from its default, written as the app's link writes it
        // (`core::scenario::ViewInputs::query_parts`), read back by `--eff`.
        let mut want = Efficiencies::default();
        for (i, f) in EffField::ALL.iter().enumerate() {
            let (lo, hi) = f.range();
            let v = lo + (hi - lo) * (0.1 + 0.1 * i as f64);
            f.set(&mut want, v);
        }
        let link: Vec<String> = EffField::ALL
            .iter()
            .map(|f| format!("{}={}", f.query_key(), f.get(&want)))
            .collect();
        for joined in [
            link.join("&"),
            link.join(","),
            format!("?{}", link.join("&")),
        ] {
            let got = parse(&[&joined]).expect("accepted");
            for f in EffField::ALL {
                assert_eq!(f.get(&got).to_bits(), f.get(&want).to_bits(), "{f:?}");
            }
        }
        // Split over two flags, the same.
        let (a, b) = link.split_at(3);
        let got = parse(&[&a.join(","), &b.join(",")]).expect("accepted");
        assert_eq!(got, want);
    }

    #[test]
    fn keys_not_given_keep_their_defaults() {
        let d = Efficiencies::default();
        let got = parse(&["e_bw=0.5"]).expect("accepted");
        assert_eq!(got.bandwidth, 0.5);
        for f in EffField::ALL.iter().filter(|f| f.query_key() != "e_bw") {
            assert_eq!(f.get(&got).to_bits(), f.get(&d).to_bits(), "{f:?}");
        }
        assert_eq!(parse(&[]).expect("none"), d);
    }

    #[test]
    fn bad_values_say_what_is_wrong() {
        for (arg, needle) in [
            (
                "e_bw=1.5",
                "e_bw=\"1.5\" is out of range: it must be a fraction from 0.01 to 1",
            ),
            ("e_bw=0", "out of range"),
            ("e_cp=NaN", "e_cp=\"NaN\" is not a number"),
            ("e_cp=abc", "is not a number"),
            ("e_so=-1", "a number of milliseconds from 0 to 10000"),
            (
                "e_xx=0.5",
                "does not know \"e_xx\"; its keys are e_cp, e_cd, e_bw",
            ),
            ("e_bw", "key=value pairs"),
            ("e_bw=0.5,e_bw=0.6", "gives e_bw twice"),
        ] {
            let e = parse(&[arg]).expect_err(arg).to_string();
            assert!(e.contains(needle), "{arg}: {e}");
        }
    }
}
