//! A user-entered accelerator ([`CustomAccelerator`]): the few figures the calculator needs,
//! checked and turned into an [`Accelerator`], and carried in the URL as `key=value;…`.

use super::accelerator::{Accelerator, Architecture, Price, CUSTOM_PREFIX};
use super::interconnect::{Interconnect, Topology};
use super::peak::{Peak, Peaks};
use crate::core::base::error::{shorten, CalcError, Phrase};
use crate::core::base::units::{Bytes, BytesPerSecond, FlopsPerSecond};
use crate::core::base::url::{pct_decode_strict, pct_encode};
use serde::{Deserialize, Serialize};

/// A user-entered accelerator: the few figures the calculator needs. It becomes an
/// [`Accelerator`] with id `custom:<slug>` after [`CustomAccelerator::validate`], and travels in
/// the URL as a compact `key=value;…` string ([`CustomAccelerator::to_query`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CustomAccelerator {
    /// Display name (at most 60 characters; empty becomes "Custom accelerator").
    pub name: String,
    /// Usable memory in GiB (2^30 bytes), 0.1–10,000.
    pub memory_gib: f64,
    /// Memory bandwidth in decimal GB/s, 1–100,000.
    pub bandwidth_gbps: f64,
    /// Dense BF16 (16-bit) TFLOPS, 0.01–100,000.
    pub bf16_tflops: f64,
    /// Dense FP8 TFLOPS, 0.01–100,000, if the chip has FP8.
    pub fp8_tflops: Option<f64>,
    /// Price in US dollars per hour, 0.001–10,000.
    pub price_usd_per_hour: Option<f64>,
    /// Board power in watts, 1–100,000.
    pub tdp_w: Option<f64>,
}

/// Query keys of a custom accelerator, in order: the name, then its figures.
pub const CUSTOM_KEYS: [&str; 7] = [
    "name",
    "memory_gib",
    "bandwidth_gbps",
    "bf16_tflops",
    "fp8_tflops",
    "price_usd_per_hour",
    "tdp_w",
];

fn check_range(field: &str, v: f64, min: f64, max: f64, unit: Phrase) -> Result<f64, CalcError> {
    if v.is_finite() && v >= min && v <= max {
        Ok(v)
    } else {
        Err(range_error(field, v, min, max, unit))
    }
}

/// `OutOfRange` for `field` = `v`, which must be from `min` to `max` `unit`.
fn range_error(field: &str, v: f64, min: f64, max: f64, unit: Phrase) -> CalcError {
    CalcError::OutOfRange {
        field: Phrase::verbatim(field),
        value: compact_number(v),
        range: Phrase::tr("rng_number_from_to_unit")
            .val("lo", min)
            .val("hi", max)
            .sub("unit", unit),
    }
}

/// Accepted memory of a custom accelerator, GiB.
const MEMORY_GIB_RANGE: (f64, f64) = (0.1, 10_000.0);

/// A number as a short text: scientific notation when very large or very small, so an error
/// never quotes hundreds of digits.
fn compact_number(v: f64) -> String {
    let a = v.abs();
    if a.is_finite() && (a >= 1e6 || (a > 0.0 && a < 1e-3)) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

impl CustomAccelerator {
    /// Checks every figure (finite, positive, plausible; the error names the field) and
    /// builds the catalog entry. FP16 is taken equal to BF16 (true of every datasheet in the
    /// catalog); other precisions are "not published".
    pub fn validate(&self) -> Result<Accelerator, CalcError> {
        let memory_gib = check_range(
            "memory_gib",
            self.memory_gib,
            MEMORY_GIB_RANGE.0,
            MEMORY_GIB_RANGE.1,
            Phrase::verbatim("GiB"),
        )?;
        let bw = check_range(
            "bandwidth_gbps",
            self.bandwidth_gbps,
            1.0,
            100_000.0,
            Phrase::verbatim("GB/s"),
        )?;
        let bf16 = check_range(
            "bf16_tflops",
            self.bf16_tflops,
            0.01,
            100_000.0,
            Phrase::verbatim("TFLOPS"),
        )?;
        let fp8 = self
            .fp8_tflops
            .map(|v| check_range("fp8_tflops", v, 0.01, 100_000.0, Phrase::verbatim("TFLOPS")))
            .transpose()?;
        let price = self
            .price_usd_per_hour
            .map(|v| {
                check_range(
                    "price_usd_per_hour",
                    v,
                    0.001,
                    10_000.0,
                    Phrase::tr("phr_usd_per_hour"),
                )
            })
            .transpose()?;
        let tdp_w = self
            .tdp_w
            .map(|v| check_range("tdp_w", v, 1.0, 100_000.0, Phrase::verbatim("W")))
            .transpose()?;
        let name: String = self.name.trim().chars().take(60).collect();
        let name = if name.is_empty() {
            String::from("Custom accelerator")
        } else {
            name
        };
        let mut slug = String::new();
        for c in name.chars() {
            if c.is_ascii_alphanumeric() {
                slug.push(c.to_ascii_lowercase());
            } else if !slug.ends_with('-') && !slug.is_empty() {
                slug.push('-');
            }
        }
        let slug = slug.trim_end_matches('-');
        let slug = if slug.is_empty() { "gpu" } else { slug };
        let memory = Bytes::from_gib_f64(memory_gib).ok_or_else(|| {
            let (lo, hi) = MEMORY_GIB_RANGE;
            range_error("memory_gib", memory_gib, lo, hi, Phrase::verbatim("GiB"))
        })?;
        let bf16_peak = Peak::Dense(FlopsPerSecond::from_tflops(bf16));
        Ok(Accelerator {
            id: format!("{CUSTOM_PREFIX}{slug}"),
            name,
            aliases: Vec::new(),
            vendor: String::from("custom"),
            form_factor: String::from("custom"),
            architecture: Architecture::Unknown,
            architecture_source: String::new(),
            memory_marketed_gb: memory_gib,
            memory_reported: Some(memory),
            memory_type: String::from("custom"),
            bandwidth: BytesPerSecond::from_gbps(bw),
            peaks: Peaks {
                fp32: Peak::NotPublished,
                tf32: Peak::NotPublished,
                bf16: bf16_peak,
                fp16: bf16_peak,
                fp8: fp8.map_or(Peak::NotPublished, |t| {
                    Peak::Dense(FlopsPerSecond::from_tflops(t))
                }),
                int8: Peak::NotPublished,
                fp6: Peak::NotPublished,
                fp4: Peak::NotPublished,
            },
            interconnect: Interconnect {
                kind: String::from("custom (PCIe assumed)"),
                topology: Topology::Pcie,
                bidirectional: None,
                domain_size: 1,
            },
            pcie_gen: None,
            tdp_w,
            year: 0,
            price: price.map(|usd_per_hour| Price {
                usd_per_hour,
                source: String::from("entered by the user"),
                date: String::from("undated"),
            }),
            source: String::from("entered by the user"),
            notes: String::new(),
        })
    }

    /// A compact URL-safe string: `name=My%20GPU;memory_gib=80;bandwidth_gbps=3350;…`
    /// (optional fields omitted). [`CustomAccelerator::from_query`] reads it back exactly.
    pub fn to_query(&self) -> String {
        let mut parts = vec![
            format!("name={}", pct_encode(&self.name)),
            format!("memory_gib={}", self.memory_gib),
            format!("bandwidth_gbps={}", self.bandwidth_gbps),
            format!("bf16_tflops={}", self.bf16_tflops),
        ];
        if let Some(v) = self.fp8_tflops {
            parts.push(format!("fp8_tflops={v}"));
        }
        if let Some(v) = self.price_usd_per_hour {
            parts.push(format!("price_usd_per_hour={v}"));
        }
        if let Some(v) = self.tdp_w {
            parts.push(format!("tdp_w={v}"));
        }
        parts.join(";")
    }

    /// Parses [`CustomAccelerator::to_query`] output (unknown keys and unparsable numbers are
    /// errors naming the key; ranges are checked by [`CustomAccelerator::validate`]).
    pub fn from_query(q: &str) -> Result<CustomAccelerator, CalcError> {
        // (key, value) pairs; a repeated key's last value counts.
        let mut pairs: Vec<(&str, &str)> = Vec::new();
        for part in q.split(';').map(str::trim).filter(|p| !p.is_empty()) {
            let (k, v) = part.split_once('=').unwrap_or((part, ""));
            if !CUSTOM_KEYS.contains(&k) {
                return Err(CalcError::BadValue {
                    key: shorten(k),
                    found: Phrase::tr("fnd_unknown_key"),
                    expected: Phrase::tr("exp_one_of").val("list", CUSTOM_KEYS.join(", ")),
                });
            }
            pairs.push((k, v));
        }
        let get = |k: &str| pairs.iter().rev().find(|(p, _)| *p == k).map(|(_, v)| v);
        let num = |k: &str| -> Result<Option<f64>, CalcError> {
            match get(k) {
                None => Ok(None),
                Some(v) => v.parse::<f64>().map(Some).map_err(|_| CalcError::BadValue {
                    key: k.to_string(),
                    found: Phrase::quoted(v),
                    expected: Phrase::tr("exp_a_number"),
                }),
            }
        };
        let req = |k: &str| -> Result<f64, CalcError> {
            num(k)?.ok_or_else(|| CalcError::MissingKey {
                key: k.to_string(),
                why: Phrase::tr("why_custom_accel"),
            })
        };
        let name = match get("name") {
            Some(v) => pct_decode_strict(v).ok_or_else(|| CalcError::BadValue {
                key: "name".into(),
                found: Phrase::quoted(v),
                expected: Phrase::tr("exp_pct_text"),
            })?,
            None => String::new(),
        };
        Ok(CustomAccelerator {
            name,
            memory_gib: req("memory_gib")?,
            bandwidth_gbps: req("bandwidth_gbps")?,
            bf16_tflops: req("bf16_tflops")?,
            fp8_tflops: num("fp8_tflops")?,
            price_usd_per_hour: num("price_usd_per_hour")?,
            tdp_w: num("tdp_w")?,
        })
    }
}
