//! A user-entered accelerator ([`CustomAccelerator`]): the few figures the calculator needs,
//! checked and turned into an [`Accelerator`], and carried in the URL as `key=value;…`.

use super::accelerator::{Accelerator, Architecture, Price, CUSTOM_PREFIX};
use super::interconnect::{Interconnect, Topology};
use super::peak::{Peak, Peaks};
use crate::base::error::{shorten, CalcError, Phrase};
use crate::base::units::{Bytes, BytesPerSecond, FlopsPerSecond};
use crate::base::url::{pct_decode_strict, pct_encode};
use serde::{Deserialize, Serialize};

/// A user-entered accelerator: the few figures the calculator needs. It becomes an
/// [`Accelerator`] with id `custom:<slug>` after [`CustomAccelerator::validate`], and travels in
/// the URL as a compact `key=value;…` string ([`CustomAccelerator::to_query`]).
///
/// Each figure is accepted within its [`CustomFigure::range`] (the one statement of those bounds).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CustomAccelerator {
    /// Display name (at most [`NAME_MAX_CHARS`] characters; empty becomes "Custom
    /// accelerator").
    pub name: String,
    /// Usable memory in GiB (2^30 bytes).
    pub memory_gib: f64,
    /// Memory bandwidth in decimal GB/s.
    pub bandwidth_gbps: f64,
    /// Dense BF16 (16-bit) TFLOPS.
    pub bf16_tflops: f64,
    /// Dense FP8 TFLOPS, if the chip has FP8.
    pub fp8_tflops: Option<f64>,
    /// Price in US dollars per hour.
    pub price_usd_per_hour: Option<f64>,
    /// Board power in watts.
    pub tdp_w: Option<f64>,
}

/// The longest name kept, in characters (the form's `maxlength`, the URL reader's cut).
pub const NAME_MAX_CHARS: usize = 60;

/// A checked figure of a [`CustomAccelerator`]: its query key, its accepted range and its unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CustomFigure {
    /// [`CustomAccelerator::memory_gib`].
    MemoryGib,
    /// [`CustomAccelerator::bandwidth_gbps`].
    BandwidthGbps,
    /// [`CustomAccelerator::bf16_tflops`].
    Bf16Tflops,
    /// [`CustomAccelerator::fp8_tflops`].
    Fp8Tflops,
    /// [`CustomAccelerator::price_usd_per_hour`].
    PriceUsdPerHour,
    /// [`CustomAccelerator::tdp_w`].
    TdpW,
}

impl CustomFigure {
    /// Every figure, in the order of the URL form and of the checks.
    pub const ALL: [CustomFigure; 6] = [
        CustomFigure::MemoryGib,
        CustomFigure::BandwidthGbps,
        CustomFigure::Bf16Tflops,
        CustomFigure::Fp8Tflops,
        CustomFigure::PriceUsdPerHour,
        CustomFigure::TdpW,
    ];

    /// The query key, also the field an error names.
    pub const fn key(self) -> &'static str {
        match self {
            CustomFigure::MemoryGib => "memory_gib",
            CustomFigure::BandwidthGbps => "bandwidth_gbps",
            CustomFigure::Bf16Tflops => "bf16_tflops",
            CustomFigure::Fp8Tflops => "fp8_tflops",
            CustomFigure::PriceUsdPerHour => "price_usd_per_hour",
            CustomFigure::TdpW => "tdp_w",
        }
    }

    /// The accepted values `(min, max)`, both included: plausible for any accelerator, so a
    /// typo (a unit off by 1000, a stray zero) is refused rather than computed with.
    pub const fn range(self) -> (f64, f64) {
        match self {
            CustomFigure::MemoryGib => (0.1, 10_000.0),
            CustomFigure::BandwidthGbps | CustomFigure::TdpW => (1.0, 100_000.0),
            CustomFigure::Bf16Tflops | CustomFigure::Fp8Tflops => (0.01, 100_000.0),
            CustomFigure::PriceUsdPerHour => (0.001, 10_000.0),
        }
    }

    fn unit(self) -> Phrase {
        match self {
            CustomFigure::MemoryGib => Phrase::verbatim("GiB"),
            CustomFigure::BandwidthGbps => Phrase::verbatim("GB/s"),
            CustomFigure::Bf16Tflops | CustomFigure::Fp8Tflops => Phrase::verbatim("TFLOPS"),
            CustomFigure::PriceUsdPerHour => Phrase::tr("phr_usd_per_hour"),
            CustomFigure::TdpW => Phrase::verbatim("W"),
        }
    }

    /// `v` when it is finite and within [`CustomFigure::range`], else [`CalcError::OutOfRange`]
    /// naming the key.
    pub fn check(self, v: f64) -> Result<f64, CalcError> {
        let (min, max) = self.range();
        if v.is_finite() && v >= min && v <= max {
            Ok(v)
        } else {
            Err(self.out_of_range(v))
        }
    }

    /// `OutOfRange` for this figure = `v`.
    fn out_of_range(self, v: f64) -> CalcError {
        let (min, max) = self.range();
        CalcError::range_error(
            Phrase::verbatim(self.key()),
            compact_number(v),
            Phrase::tr("rng_number_from_to_unit")
                .val("lo", min)
                .val("hi", max)
                .sub("unit", self.unit()),
        )
    }
}

/// Query keys of a custom accelerator, in order: the name, then its figures ([`CustomFigure::ALL`]).
pub const CUSTOM_KEYS: [&str; 7] = {
    let mut keys = ["name"; 7];
    let mut i = 0;
    while i < CustomFigure::ALL.len() {
        keys[i + 1] = CustomFigure::ALL[i].key();
        i += 1;
    }
    keys
};

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
        let memory_gib = CustomFigure::MemoryGib.check(self.memory_gib)?;
        let bw = CustomFigure::BandwidthGbps.check(self.bandwidth_gbps)?;
        let bf16 = CustomFigure::Bf16Tflops.check(self.bf16_tflops)?;
        let optional = |f: CustomFigure, v: Option<f64>| v.map(|v| f.check(v)).transpose();
        let fp8 = optional(CustomFigure::Fp8Tflops, self.fp8_tflops)?;
        let price = optional(CustomFigure::PriceUsdPerHour, self.price_usd_per_hour)?;
        let tdp_w = optional(CustomFigure::TdpW, self.tdp_w)?;
        let name: String = self.name.trim().chars().take(NAME_MAX_CHARS).collect();
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
        let memory = Bytes::from_gib_f64(memory_gib)
            .ok_or_else(|| CustomFigure::MemoryGib.out_of_range(memory_gib))?;
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

    /// An accelerator with only a name, its figures to be set ([`CustomAccelerator::set_figure`]):
    /// the required ones are NaN until then, which [`CustomAccelerator::validate`] refuses
    /// naming the figure; the optional ones are absent.
    pub fn named(name: String) -> CustomAccelerator {
        CustomAccelerator {
            name,
            memory_gib: f64::NAN,
            bandwidth_gbps: f64::NAN,
            bf16_tflops: f64::NAN,
            fp8_tflops: None,
            price_usd_per_hour: None,
            tdp_w: None,
        }
    }

    /// The value of figure `f` (`None`: an optional figure not given).
    pub fn figure(&self, f: CustomFigure) -> Option<f64> {
        match f {
            CustomFigure::MemoryGib => Some(self.memory_gib),
            CustomFigure::BandwidthGbps => Some(self.bandwidth_gbps),
            CustomFigure::Bf16Tflops => Some(self.bf16_tflops),
            CustomFigure::Fp8Tflops => self.fp8_tflops,
            CustomFigure::PriceUsdPerHour => self.price_usd_per_hour,
            CustomFigure::TdpW => self.tdp_w,
        }
    }

    /// Sets figure `f` to `v` (unchecked: [`CustomAccelerator::validate`] checks).
    pub fn set_figure(&mut self, f: CustomFigure, v: f64) {
        match f {
            CustomFigure::MemoryGib => self.memory_gib = v,
            CustomFigure::BandwidthGbps => self.bandwidth_gbps = v,
            CustomFigure::Bf16Tflops => self.bf16_tflops = v,
            CustomFigure::Fp8Tflops => self.fp8_tflops = Some(v),
            CustomFigure::PriceUsdPerHour => self.price_usd_per_hour = Some(v),
            CustomFigure::TdpW => self.tdp_w = Some(v),
        }
    }

    /// A compact URL-safe string: `name=My%20GPU;memory_gib=80;bandwidth_gbps=3350;…`
    /// (optional fields omitted). [`CustomAccelerator::from_query`] reads it back exactly.
    pub fn to_query(&self) -> String {
        let mut parts = vec![format!("name={}", pct_encode(&self.name))];
        for f in CustomFigure::ALL {
            if let Some(v) = self.figure(f) {
                parts.push(format!("{}={v}", f.key()));
            }
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
            memory_gib: req(CustomFigure::MemoryGib.key())?,
            bandwidth_gbps: req(CustomFigure::BandwidthGbps.key())?,
            bf16_tflops: req(CustomFigure::Bf16Tflops.key())?,
            fp8_tflops: num(CustomFigure::Fp8Tflops.key())?,
            price_usd_per_hour: num(CustomFigure::PriceUsdPerHour.key())?,
            tdp_w: num(CustomFigure::TdpW.key())?,
        })
    }
}
