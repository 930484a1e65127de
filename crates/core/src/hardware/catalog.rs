//! The accelerator catalog: a data file compiled in (`data/accelerators.csv`), parsed by pure
//! code, every row sourced. Dense peaks only; "not supported" is distinct from "not published".
//!
//! Figures come from `shared/reference/accelerators.csv` and its notes (vendor datasheets read
//! through public copies, driver dumps for usable memory); each row names its source. The
//! textbook's interconnect presets (PCIe, NVLink bridge, NVLink + NVSwitch, a switchless
//! 8-GPU mesh, across nodes) are [`InterconnectPreset`]; a chip's own link is
//! [`Accelerator::own_interconnect`].
//!
//! # Data file columns (`data/accelerators.csv`, RFC 4180, found by header name)
//! - `id` (lowercase, digits, dashes; unique), `name`, `aliases` (`;`-separated), `vendor`,
//!   `form_factor`, `mem_type`, `source` (required on every row), `notes`.
//! - `mem_marketed_gb`: the vendor's "GB" (for HBM this is GiB). `mem_reported_mib`:
//!   `memory.total` from nvidia-smi / rocm-smi / hl-smi dumps, blank where none was found.
//! - `bw_gbps`: peak DRAM bandwidth, decimal GB/s.
//! - `fp32_tflops` (non-tensor), `tf32_tflops`, `bf16_tflops`, `fp16_tflops`, `fp8_tflops`,
//!   `int8_tops`, `fp6_tflops`, `fp4_tflops`: dense peaks (2:4-sparse datasheet figures are
//!   halved); `n/s` = not supported in hardware, blank = not published.
//! - `interconnect_kind` (text), `interconnect_topology` (`pcie`, `bridge`, `switch`, `mesh`,
//!   `torus`, `ring`, `none`), `interconnect_bidir_gbps` (per GPU, both directions summed; the
//!   x16 host link for PCIe-only cards), `interconnect_domain_gpus` (GPUs that share the link
//!   inside one node: the NVLink/xGMI/ICI domain; for PCIe-only cards a typical server, 8, or
//!   4 for GeForce; 1 for a standalone chip).
//! - `pcie_gen`, `tdp_w` (board/module power; driver caps in `notes`), `year`.
//! - `price_usd_per_hour` (per GPU or chip), `price_source`, `price_date` (both required when
//!   a price is given).

use crate::base::csv;
use crate::base::error::{shorten, CalcError};
use crate::base::units::{Bytes, BytesPerSecond, FlopsPerSecond, MIB};
use serde::{Deserialize, Serialize};
use std::sync::OnceLock;

pub use super::accelerator::{
    Accelerator, Architecture, CapacityBasis, PrecisionNote, PrecisionReason, Price, CUSTOM_PREFIX,
    UNIFIED_MEMORY_GPU_SHARE,
};
pub use super::custom::{CustomAccelerator, CustomFigure, CUSTOM_KEYS, NAME_MAX_CHARS};
pub use super::interconnect::{
    Interconnect, InterconnectPreset, Link, Topology, INTER_NODE_PER_DIRECTION_GBPS,
};
pub use super::peak::{ridge_point, Peak, Peaks};

/// The compiled-in catalog data: natively (the CLI prints sources; the tests) the full sourced
/// table; in the wasm app, which shows no datasheet source or note, [`APP_CSV`] (the price
/// sources stay: the cost derivation's "Show the math" names them).
#[cfg(not(target_arch = "wasm32"))]
const BUILTIN_CSV: &str = include_str!("../../../../data/accelerators.csv");
#[cfg(target_arch = "wasm32")]
const BUILTIN_CSV: &str = APP_CSV;

/// `data/accelerators.app.csv`: `data/accelerators.csv` with every `source` text replaced by
/// [`SOURCES_IN`] and the `notes` emptied; tests check it is exactly that projection and parses
/// to the same catalog apart from those texts.
#[cfg(any(test, target_arch = "wasm32"))]
const APP_CSV: &str = include_str!("../../../../data/accelerators.app.csv");

/// Where the app's catalog points for its sources.
pub const SOURCES_IN: &str = "data/accelerators.csv";

/// The parsed catalog.
#[derive(
    Debug, Clone, PartialEq, Serialize, Deserialize, borsh::BorshSerialize, borsh::BorshDeserialize,
)]
pub struct Catalog {
    /// All accelerators, in file order.
    pub accelerators: Vec<Accelerator>,
}

/// Lowercase letters and digits only: "NVIDIA H100 SXM" → "nvidiah100sxm", "A100-80GB" → "a10080gb".
fn norm(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// Levenshtein distance over chars.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = Vec::with_capacity(b.len() + 1);
        cur.push(i + 1);
        for (j, cb) in b.iter().enumerate() {
            let sub = prev.get(j).copied().unwrap_or(usize::MAX - 1) + usize::from(ca != *cb);
            let del = prev.get(j + 1).copied().unwrap_or(usize::MAX - 1) + 1;
            let ins = cur.get(j).copied().unwrap_or(usize::MAX - 1) + 1;
            cur.push(sub.min(del).min(ins));
        }
        prev = cur;
    }
    prev.last().copied().unwrap_or(0)
}

impl Catalog {
    /// The compiled-in catalog, parsed once. A test guarantees the file parses; were it not
    /// to, this is an empty catalog rather than a panic.
    pub fn builtin() -> &'static Catalog {
        static BUILTIN: OnceLock<Catalog> = OnceLock::new();
        BUILTIN.get_or_init(|| {
            Catalog::parse(BUILTIN_CSV).unwrap_or(Catalog {
                accelerators: Vec::new(),
            })
        })
    }

    /// The compiled-in data file's text.
    pub fn builtin_csv() -> &'static str {
        BUILTIN_CSV
    }

    /// Parses catalog CSV text (the layout of `data/accelerators.csv`; columns found by
    /// header name). Errors name the row (1-based line) and column.
    pub fn parse(text: &str) -> Result<Catalog, CalcError> {
        let records = csv::parse(text)?;
        let mut it = records.into_iter();
        let Some(header) = it.next() else {
            return Err(bad(1, "id", "the file is empty"));
        };
        // Small tables: vectors searched in order rather than hash maps (less wasm); where a
        // name repeats, the last one counts, as a map's insert would.
        let index: Vec<&str> = header.fields.iter().map(|h| h.trim()).collect();
        for c in REQUIRED_COLUMNS {
            if !index.contains(c) {
                return Err(bad(
                    header.line,
                    c,
                    "this column is missing from the header",
                ));
            }
        }
        // (normalised name, id) of every id, alias and name so far.
        let mut keys: Vec<(String, String)> = Vec::new();
        let mut accelerators = Vec::new();
        for rec in it {
            if rec.fields.len() != header.fields.len() {
                return Err(bad(
                    rec.line,
                    "(row)",
                    &format!(
                        "has {} fields but the header has {}",
                        rec.fields.len(),
                        header.fields.len()
                    ),
                ));
            }
            let row = Row {
                rec: &rec,
                index: &index,
            };
            let a = row.accelerator()?;
            if accelerators.iter().any(|b: &Accelerator| b.id == a.id) {
                return Err(bad(rec.line, "id", &format!("\"{}\" appears twice", a.id)));
            }
            for k in std::iter::once(&a.id)
                .chain(a.aliases.iter())
                .chain(std::iter::once(&a.name))
            {
                let n = norm(k);
                let last = keys.iter().rev().find(|(m, _)| *m == n).map(|(_, id)| id);
                if let Some(other) = last.filter(|o| **o != a.id) {
                    return Err(bad(
                        rec.line,
                        "aliases",
                        &format!("\"{k}\" already names {other}"),
                    ));
                }
                keys.push((n, a.id.clone()));
            }
            accelerators.push(a);
        }
        Ok(Catalog { accelerators })
    }

    /// Looks up by id, case-insensitively, resolving aliases ("H100" → h100-sxm, "a100-80gb" →
    /// a100-sxm-80gb, "4090" → rtx-4090) and display names; spaces, dashes and underscores are
    /// ignored. Otherwise [`CalcError::UnknownGpu`] with up to 3 "did you mean" ids.
    pub fn get(&self, id: &str) -> Result<&Accelerator, CalcError> {
        let want = id.trim().to_ascii_lowercase();
        if let Some(a) = self.accelerators.iter().find(|a| a.id == want) {
            return Ok(a);
        }
        let n = norm(&want);
        let found = (!n.is_empty())
            .then(|| {
                self.accelerators.iter().find(|a| {
                    norm(&a.id) == n
                        || norm(&a.name) == n
                        || a.aliases.iter().any(|al| norm(al) == n)
                })
            })
            .flatten();
        found.ok_or_else(|| CalcError::UnknownGpu {
            given: shorten(id),
            suggestions: self.suggestions(id),
        })
    }

    /// Up to 3 ids close to `given`: names containing it (or contained in it) first, then by
    /// edit distance (at most max(2, length / 3) edits).
    pub fn suggestions(&self, given: &str) -> Vec<String> {
        let q = shorten(&norm(given));
        if q.is_empty() {
            return Vec::new();
        }
        let limit = (q.chars().count() / 3).max(2);
        let mut scored: Vec<((u8, usize), usize, &str)> = Vec::new();
        for (i, a) in self.accelerators.iter().enumerate() {
            let mut best: Option<(u8, usize)> = None;
            for k in std::iter::once(&a.id)
                .chain(a.aliases.iter())
                .chain(std::iter::once(&a.name))
            {
                let c = norm(k);
                let score = if q.len() >= 3 && (c.contains(&q) || q.contains(&c)) {
                    Some((0u8, c.len().abs_diff(q.len())))
                } else {
                    let d = edit_distance(&q, &c);
                    (d <= limit).then_some((1u8, d))
                };
                if let Some(s) = score {
                    best = Some(best.map_or(s, |b| b.min(s)));
                }
            }
            if let Some(s) = best {
                scored.push((s, i, a.id.as_str()));
            }
        }
        crate::base::order::sort_by(&mut scored, &|a, b| a.cmp(b));
        scored
            .into_iter()
            .take(3)
            .map(|(_, _, id)| id.to_string())
            .collect()
    }
}

/// Columns every catalog file must have.
const REQUIRED_COLUMNS: &[&str] = &[
    "id",
    "name",
    "aliases",
    "vendor",
    "form_factor",
    "mem_marketed_gb",
    "mem_reported_mib",
    "mem_type",
    "bw_gbps",
    "fp32_tflops",
    "tf32_tflops",
    "bf16_tflops",
    "fp16_tflops",
    "fp8_tflops",
    "int8_tops",
    "fp6_tflops",
    "fp4_tflops",
    "interconnect_kind",
    "interconnect_topology",
    "interconnect_bidir_gbps",
    "interconnect_domain_gpus",
    "pcie_gen",
    "tdp_w",
    "year",
    "price_usd_per_hour",
    "price_source",
    "price_date",
    "source",
    "notes",
];

fn bad(row: usize, column: &str, detail: &str) -> CalcError {
    CalcError::BadData {
        row,
        column: column.to_string(),
        detail: detail.to_string(),
    }
}

/// One data row with its header index.
struct Row<'a> {
    rec: &'a csv::Record,
    index: &'a [&'a str],
}

impl Row<'_> {
    fn text(&self, col: &str) -> &str {
        self.index
            .iter()
            .rposition(|h| *h == col)
            .and_then(|i| self.rec.fields.get(i))
            .map_or("", |s| s.trim())
    }

    fn err(&self, col: &str, detail: &str) -> CalcError {
        bad(self.rec.line, col, detail)
    }

    fn required_text(&self, col: &str) -> Result<String, CalcError> {
        let t = self.text(col);
        if t.is_empty() {
            Err(self.err(col, "is empty but required"))
        } else {
            Ok(t.to_string())
        }
    }

    /// A finite, positive number, or `None` when blank.
    fn number(&self, col: &str) -> Result<Option<f64>, CalcError> {
        let t = self.text(col);
        if t.is_empty() {
            return Ok(None);
        }
        match t.parse::<f64>() {
            Ok(v) if v.is_finite() && v > 0.0 && v < 1e9 => Ok(Some(v)),
            _ => Err(self.err(
                col,
                &format!("\"{}\" is not a finite positive number", shorten(t)),
            )),
        }
    }

    fn required_number(&self, col: &str) -> Result<f64, CalcError> {
        self.number(col)?
            .ok_or_else(|| self.err(col, "is empty but required"))
    }

    /// A whole number within a range, or `None` when blank.
    fn integer(&self, col: &str, min: u64, max: u64) -> Result<Option<u64>, CalcError> {
        let t = self.text(col);
        if t.is_empty() {
            return Ok(None);
        }
        match t.parse::<u64>() {
            Ok(v) if (min..=max).contains(&v) => Ok(Some(v)),
            _ => Err(self.err(
                col,
                &format!(
                    "\"{}\" is not a whole number from {min} to {max}",
                    shorten(t)
                ),
            )),
        }
    }

    /// `n/s` → not supported; blank → not published; a number in TFLOPS → dense.
    fn peak(&self, col: &str) -> Result<Peak, CalcError> {
        if self.text(col).eq_ignore_ascii_case("n/s") {
            return Ok(Peak::NotSupported);
        }
        Ok(match self.number(col)? {
            Some(t) => Peak::Dense(FlopsPerSecond::from_tflops(t)),
            None => Peak::NotPublished,
        })
    }

    fn accelerator(&self) -> Result<Accelerator, CalcError> {
        let id = self.required_text("id")?;
        if !id
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        {
            return Err(self.err(
                "id",
                &format!(
                    "\"{}\" must be lowercase letters, digits and dashes",
                    shorten(&id)
                ),
            ));
        }
        let aliases = self
            .text("aliases")
            .split(';')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect();
        let mib = self.integer("mem_reported_mib", 1, 1 << 30)?;
        let topology_text = self.required_text("interconnect_topology")?;
        let topology = Topology::parse(&topology_text).ok_or_else(|| {
            self.err(
                "interconnect_topology",
                "must be pcie, bridge, switch, mesh, torus, ring or none",
            )
        })?;
        let price = match self.number("price_usd_per_hour")? {
            None => None,
            Some(usd_per_hour) => Some(Price {
                usd_per_hour,
                source: self.required_text("price_source")?,
                date: self.required_text("price_date")?,
            }),
        };
        let year = self
            .integer("year", 1990, 2100)?
            .ok_or_else(|| self.err("year", "is empty but required"))?;
        let domain = self
            .integer("interconnect_domain_gpus", 1, 1_000_000)?
            .ok_or_else(|| self.err("interconnect_domain_gpus", "is empty but required"))?;
        Ok(Accelerator {
            id,
            name: self.required_text("name")?,
            aliases,
            vendor: self.required_text("vendor")?,
            form_factor: self.required_text("form_factor")?,
            architecture: {
                let t = self.required_text("architecture")?;
                Architecture::parse(&t).ok_or_else(|| {
                    self.err(
                        "architecture",
                        &format!(
                            "\"{}\" is not one of {}",
                            shorten(&t),
                            Architecture::ALL
                                .iter()
                                .map(|(_, id)| *id)
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    )
                })?
            },
            architecture_source: self.required_text("architecture_source")?,
            memory_marketed_gb: self.required_number("mem_marketed_gb")?,
            memory_reported: mib.map(|m| Bytes(m * MIB)),
            memory_type: self.required_text("mem_type")?,
            bandwidth: BytesPerSecond::from_gbps(self.required_number("bw_gbps")?),
            peaks: Peaks {
                fp32: self.peak("fp32_tflops")?,
                tf32: self.peak("tf32_tflops")?,
                bf16: self.peak("bf16_tflops")?,
                fp16: self.peak("fp16_tflops")?,
                fp8: self.peak("fp8_tflops")?,
                int8: self.peak("int8_tops")?,
                fp6: self.peak("fp6_tflops")?,
                fp4: self.peak("fp4_tflops")?,
            },
            interconnect: Interconnect {
                kind: self.required_text("interconnect_kind")?,
                topology,
                bidirectional: self
                    .number("interconnect_bidir_gbps")?
                    .map(BytesPerSecond::from_gbps),
                domain_size: u32::try_from(domain).unwrap_or(u32::MAX),
            },
            pcie_gen: self.integer("pcie_gen", 1, 8)?.map(|g| g as u32),
            tdp_w: self.number("tdp_w")?,
            year: year as u32,
            price,
            source: self.required_text("source")?,
            notes: self.text("notes").to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::dtype::Dtype;
    use crate::base::i18n::Lang;
    use crate::base::units::GIB;

    fn cat() -> &'static Catalog {
        Catalog::builtin()
    }

    fn gpu(id: &str) -> &'static Accelerator {
        match cat().get(id) {
            Ok(a) => a,
            Err(e) => panic!("{e}"),
        }
    }

    /// The source texts the app's projection drops (`source`, `notes`); price sources stay.
    fn without_sources(mut c: Catalog) -> Catalog {
        for a in &mut c.accelerators {
            a.source.clear();
            a.architecture_source.clear();
            a.notes.clear();
        }
        c
    }

    #[test]
    fn the_compiled_app_csv_is_the_projection_of_the_sourced_file() {
        let full = include_str!("../../../../data/accelerators.csv");
        let header = csv::parse(full)
            .unwrap_or_else(|e| panic!("{e}"))
            .into_iter()
            .next()
            .map(|r| r.fields)
            .unwrap_or_default();
        let same: fn(&str) -> &str = |s| s;
        let pointer: fn(&str) -> &str = |s| if s.is_empty() { "" } else { SOURCES_IN };
        let empty: fn(&str) -> &str = |_| "";
        let cols: Vec<csv::Column> = header
            .iter()
            .map(|h| match h.as_str() {
                "source" | "architecture_source" => (h.as_str(), h.as_str(), pointer),
                "notes" => (h.as_str(), h.as_str(), empty),
                _ => (h.as_str(), h.as_str(), same),
            })
            .collect();
        let want = csv::project(full, &cols);
        csv::check_projection(APP_CSV, &want, "data/accelerators.app.csv");
        // The app's catalog is the full one apart from the dropped texts, and still has a
        // source on every row.
        let app = Catalog::parse(APP_CSV).unwrap_or_else(|e| panic!("{e}"));
        assert!(app.accelerators.iter().all(|a| a.source == SOURCES_IN));
        let full = Catalog::parse(full).unwrap_or_else(|e| panic!("{e}"));
        assert!(full.accelerators.iter().all(|a| a.source != SOURCES_IN));
        assert_eq!(without_sources(app), without_sources(full));
    }

    #[test]
    fn builtin_parses() {
        let parsed = Catalog::parse(Catalog::builtin_csv());
        assert!(parsed.is_ok(), "{parsed:?}");
        assert!(cat().accelerators.len() >= 44);
    }

    #[test]
    fn capacity_rules() {
        // Driver reading: H100 nvidia-smi 81,559 MiB × 2^20.
        let h = gpu("h100-sxm");
        assert_eq!(h.capacity_basis(), CapacityBasis::DriverReported);
        assert_eq!(h.capacity(), Bytes(81_559 * MIB));
        // No reading, HBM: MI325X "256 GB" HBM3e read as 256 GiB (ROCm gpu-specs: 256 GiB).
        let m = gpu("mi325x");
        assert_eq!(m.capacity_basis(), CapacityBasis::MarketedGib);
        assert_eq!(m.capacity(), Bytes(256 * GIB));
        // Unified: M4 Max 128 GB × 0.75 = 96 GiB.
        let a = gpu("m4-max");
        assert_eq!(a.capacity_basis(), CapacityBasis::UnifiedDefaultShare);
        assert_eq!(a.capacity(), Bytes(96 * GIB));
        // GDDR without a reading would be decimal.
        let mut g = gpu("l40s").clone();
        g.memory_reported = None;
        assert_eq!(g.capacity_basis(), CapacityBasis::MarketedGb);
        assert_eq!(g.capacity(), Bytes(48_000_000_000));
    }

    #[test]
    fn compute_precision_falls_back() {
        // A100: FP8 not supported → BF16 with a note.
        let (d, n) = gpu("a100-sxm-80gb").compute_precision(Dtype::Fp8, Dtype::Fp8);
        assert_eq!(d, Dtype::Bf16);
        assert_eq!(n.map(|n| n.reason), Some(PrecisionReason::NotSupported));
        // T4: FP8 → FP16 (no BF16 either); BF16 → FP16.
        assert_eq!(
            gpu("t4").compute_precision(Dtype::Fp8, Dtype::Fp8).0,
            Dtype::Fp16
        );
        assert_eq!(
            gpu("t4").compute_precision(Dtype::Bf16, Dtype::Bf16).0,
            Dtype::Fp16
        );
        // H100: FP8 weights + FP8 activations run at FP8; W4A16 at 16 bits, no note.
        assert_eq!(
            gpu("h100").compute_precision(Dtype::Fp8, Dtype::Fp8),
            (Dtype::Fp8, None)
        );
        assert_eq!(
            gpu("h100").compute_precision(Dtype::Int4, Dtype::Bf16),
            (Dtype::Bf16, None)
        );
        // FP8 weights with BF16 activations compute at BF16.
        assert_eq!(
            gpu("h100").compute_precision(Dtype::Fp8, Dtype::Bf16).0,
            Dtype::Bf16
        );
        // TPU v5e: FP16 not published → BF16 (same width).
        let (d, n) = gpu("tpu-v5e").compute_precision(Dtype::Fp16, Dtype::Fp16);
        assert_eq!(d, Dtype::Bf16);
        assert_eq!(
            n.map(|n| n.reason),
            Some(PrecisionReason::SameWidthSubstitute)
        );
        // Apple M4 Max: nothing published → kept, with a note that says so.
        let (d, n) = gpu("m4-max").compute_precision(Dtype::Bf16, Dtype::Bf16);
        assert_eq!(d, Dtype::Bf16);
        assert_eq!(n.map(|n| n.reason), Some(PrecisionReason::NoPublishedPeak));
        let msg = n.map(|n| n.message(Lang::En)).unwrap_or_default();
        assert!(msg.contains("bf16") && !msg.contains('{'), "{msg}");
    }

    #[test]
    fn watts_per_figures() {
        // H100 SXM: 700 W / 989.5 TFLOPS = 0.7074 W/TFLOPS; 700 W / 3,350 GB/s = 0.2090 W per GB/s.
        let h = gpu("h100-sxm");
        let w = h.watts_per_16bit_tflops();
        assert!(
            w.is_some_and(|(d, w)| d == Dtype::Bf16 && (w - 700.0 / 989.5).abs() < 1e-9),
            "{w:?}"
        );
        let g = h.watts_per_gbps().unwrap_or(0.0);
        assert!((g - 700.0 / 3350.0).abs() < 1e-9, "{g}");
        // V100 and T4 have no BF16: the figure is per FP16 (V100: 300 W / 125 = 2.4; T4:
        // 70 W / 65), named so.
        assert_eq!(
            gpu("v100").watts_per_16bit_tflops(),
            Some((Dtype::Fp16, 300.0 / 125.0))
        );
        assert_eq!(
            gpu("t4").watts_per_16bit_tflops(),
            Some((Dtype::Fp16, 70.0 / 65.0))
        );
        // TPU v5e publishes no power.
        assert_eq!(gpu("tpu-v5e").watts_per_gbps(), None);
    }

    /// No accelerator reports a per-precision figure for a precision it lacks: the watts per
    /// TFLOPS and every ridge point are only given at a precision with a dense peak, and a
    /// chip that lacks BF16 (its peak `not_supported`) reports no BF16 figure of any kind.
    #[test]
    fn per_precision_figures_only_for_precisions_the_chip_has() {
        for a in &Catalog::builtin().accelerators {
            if let Some((d, w)) = a.watts_per_16bit_tflops() {
                assert!(
                    matches!(a.peak(d), Peak::Dense(_)),
                    "{}: W per {d} TFLOPS without a dense {d} peak",
                    a.id
                );
                assert!(w.is_finite() && w > 0.0, "{}: {w}", a.id);
                if a.peak(Dtype::Bf16) == Peak::NotSupported {
                    assert_ne!(d, Dtype::Bf16, "{}", a.id);
                }
            }
            for d in Dtype::ALL {
                if a.ridge(*d).is_some() {
                    assert!(
                        matches!(a.peak(*d), Peak::Dense(_)),
                        "{}: a {d} ridge without a dense {d} peak",
                        a.id
                    );
                }
            }
        }
    }

    #[test]
    fn allreduce_rules() {
        let gbps = |b: Option<BytesPerSecond>| b.map(|b| b.gbps());
        let h100 = gpu("h100-sxm");
        // NVSwitch: 900 / 2 = 450 within 8; across nodes 50.
        assert_eq!(gbps(h100.allreduce_bandwidth(Link::Own, 8)), Some(450.0));
        assert_eq!(gbps(h100.allreduce_bandwidth(Link::Own, 16)), Some(50.0));
        assert_eq!(h100.allreduce_bandwidth(Link::Own, 1), None);
        // MI300X mesh: 896 / 2 / 7 = 64 per peer; tp 2 → 64, tp 8 → 448.
        let mi = gpu("mi300x");
        assert_eq!(gbps(mi.allreduce_bandwidth(Link::Own, 2)), Some(64.0));
        assert_eq!(gbps(mi.allreduce_bandwidth(Link::Own, 8)), Some(448.0));
        let mesh = Link::Preset(InterconnectPreset::SwitchlessMesh8);
        assert_eq!(gbps(h100.allreduce_bandwidth(mesh, 2)), Some(64.0));
        // H200 NVL 4-way bridge: 450 each way up to 4 GPUs, then PCIe Gen5 64.
        let nvl = gpu("h200-nvl");
        assert_eq!(gbps(nvl.allreduce_bandwidth(Link::Own, 4)), Some(450.0));
        assert_eq!(gbps(nvl.allreduce_bandwidth(Link::Own, 8)), Some(64.0));
        // A PCIe Gen5 preset on a Gen4 card runs at Gen4: 32 GB/s.
        let p5 = Link::Preset(InterconnectPreset::PcieGen5);
        assert_eq!(gbps(gpu("l40s").allreduce_bandwidth(p5, 4)), Some(32.0));
        // L40S own link: PCIe Gen4 x16, 32 each way within its 8-card node.
        assert_eq!(
            gbps(gpu("l40s").allreduce_bandwidth(Link::Own, 4)),
            Some(32.0)
        );
        assert_eq!(gpu("l40s").interconnect.domain_size, 8);
        // Inter-node preset: 50.
        let inn = Link::Preset(InterconnectPreset::InterNode);
        assert_eq!(gbps(h100.allreduce_bandwidth(inn, 16)), Some(50.0));
        // Apple: standalone.
        assert_eq!(gpu("m4-max").allreduce_bandwidth(Link::Own, 2), None);
    }

    #[test]
    fn presets_are_the_textbook_figures() {
        // Textbook: bridge 600, NVSwitch 900 per GPU, mesh ≈128 per link, across nodes ≈50.
        let bi = |p: InterconnectPreset| p.bidirectional().gbps();
        assert_eq!(bi(InterconnectPreset::NvlinkBridge), 600.0);
        assert_eq!(bi(InterconnectPreset::NvlinkSwitch), 900.0);
        let mesh = InterconnectPreset::SwitchlessMesh8;
        assert_eq!(bi(mesh) / f64::from(mesh.domain_size() - 1), 128.0);
        assert_eq!(InterconnectPreset::InterNode.per_direction().gbps(), 50.0);
        for p in InterconnectPreset::ALL {
            assert_eq!(InterconnectPreset::parse(p.id()), Some(*p));
            assert!(crate::base::i18n::has(p.description_key()), "{}", p.id());
            assert_eq!(p.per_direction().0 * 2.0, p.bidirectional().0);
        }
    }

    #[test]
    fn edit_distance_basics() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("h100", "h100"), 0);
    }

    #[test]
    fn parse_errors_name_row_and_column() {
        let csv = Catalog::builtin_csv();
        let mut lines: Vec<String> = csv.lines().map(str::to_string).collect();
        // Break the H100 SXM bandwidth (3,350 GB/s) to -5 and expect its line and column named.
        let idx = lines
            .iter()
            .position(|l| l.starts_with("h100-sxm,"))
            .unwrap_or(0);
        assert_eq!(lines[idx].matches(",3350,").count(), 1);
        lines[idx] = lines[idx].replace(",3350,", ",-5,");
        let e = Catalog::parse(&lines.join("\n")).err();
        assert!(
            matches!(&e, Some(CalcError::BadData { row, column, .. }) if *row == idx + 1 && column == "bw_gbps"),
            "{e:?}"
        );
        // A missing column is named at the header row.
        let e = Catalog::parse("id,name\nx,y\n").err();
        assert!(
            matches!(e, Some(CalcError::BadData { row: 1, .. })),
            "{e:?}"
        );
        // A duplicate id.
        let first = lines.get(1).cloned().unwrap_or_default();
        let dup = format!("{}\n{first}\n{first}\n", lines[0]);
        let e = Catalog::parse(&dup).err();
        assert!(
            matches!(&e, Some(CalcError::BadData { row: 3, column, .. }) if column == "id"),
            "{e:?}"
        );
    }

    #[test]
    fn repeated_names_alias_clashes_and_repeated_keys() {
        let text = Catalog::builtin_csv();
        let lines: Vec<&str> = text.lines().collect();
        let (header, h100) = (
            lines[0],
            lines[1..].iter().find(|l| l.starts_with("h100-sxm,")),
        );
        let h100 = h100.copied().unwrap_or_default();
        let t4 = lines[1..].iter().find(|l| l.starts_with("t4,")).copied();
        let t4 = t4.unwrap_or_default();
        // A second chip whose alias is the first chip's id: named at its row, column aliases.
        let aliases = header.split(',').position(|h| h == "aliases").unwrap_or(0);
        let mut f: Vec<&str> = t4.split(',').collect();
        f[aliases] = "H100-SXM";
        let clash = format!("{header}\n{h100}\n{}\n", f.join(","));
        let e = Catalog::parse(&clash).err();
        assert!(
            matches!(&e, Some(CalcError::BadData { row: 3, column, detail })
                if column == "aliases" && detail.contains("already names h100-sxm")),
            "{e:?}"
        );
        // A column named twice: the last one is read.
        let twice = format!("{header},vendor\n{h100},Somebody\n");
        let c = Catalog::parse(&twice).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(c.accelerators[0].vendor, "Somebody");
        // A custom accelerator's key given twice: the last value counts.
        let q = "name=A;memory_gib=24;bandwidth_gbps=1000;bf16_tflops=100;memory_gib=48;name=B";
        let c = CustomAccelerator::from_query(q).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((c.name.as_str(), c.memory_gib), ("B", 48.0));
    }
}
