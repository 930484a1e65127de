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

use crate::core::base::csv;
use crate::core::base::dtype::Dtype;
use crate::core::base::error::{shorten, CalcError, Phrase};
use crate::core::base::i18n::{tr, Lang};
use crate::core::base::units::{Bytes, BytesPerSecond, FlopsPerSecond, GIB, MIB};
use crate::core::base::url::{pct_decode_strict, pct_encode};
use serde::{Deserialize, Serialize};
use std::sync::OnceLock;

/// The compiled-in catalog data: natively (the CLI prints sources; the tests) the full sourced
/// table; in the wasm app, which shows no datasheet source or note, [`APP_CSV`] (the price
/// sources stay: the cost derivation's "Show the math" names them).
#[cfg(not(target_arch = "wasm32"))]
const BUILTIN_CSV: &str = include_str!("../../../data/accelerators.csv");
#[cfg(target_arch = "wasm32")]
const BUILTIN_CSV: &str = APP_CSV;

/// `data/accelerators.app.csv`: `data/accelerators.csv` with every `source` text replaced by
/// [`SOURCES_IN`] and the `notes` emptied; tests check it is exactly that projection and parses
/// to the same catalog apart from those texts.
#[cfg(any(test, target_arch = "wasm32"))]
const APP_CSV: &str = include_str!("../../../data/accelerators.app.csv");

/// Where the app's catalog points for its sources.
pub const SOURCES_IN: &str = "data/accelerators.csv";

/// Across nodes, one 400 Gb/s NIC per GPU: 50 GB/s per GPU per direction (AWS p5: 3,200 Gb/s
/// for 8 GPUs; reference notes, "Inter-node ≈ 50 GB/s").
pub const INTER_NODE_PER_DIRECTION_GBPS: f64 = 50.0;

/// Share of unified memory that Metal lets the GPU wire by default
/// (`recommendedMaxWorkingSetSize`, ~75 % of RAM; reference notes, Apple rows).
pub const UNIFIED_MEMORY_GPU_SHARE: f64 = 0.75;

/// A dense peak for one precision.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "flops_per_s", rename_all = "snake_case")]
pub enum Peak {
    /// Dense peak (no 2:4 sparsity), tensor/matrix units, in FLOP/s (OP/s for INT8).
    Dense(FlopsPerSecond),
    /// The hardware does not support this precision.
    NotSupported,
    /// Supported (or unknown), but no dense figure is published.
    NotPublished,
}

impl Peak {
    /// The rate when a dense figure is known.
    pub fn flops(self) -> Option<FlopsPerSecond> {
        match self {
            Peak::Dense(f) => Some(f),
            _ => None,
        }
    }

    /// Stable status name: `dense`, `not_supported` or `not_published`.
    pub const fn status_id(self) -> &'static str {
        match self {
            Peak::Dense(_) => "dense",
            Peak::NotSupported => "not_supported",
            Peak::NotPublished => "not_published",
        }
    }
}

/// Dense peaks by precision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Peaks {
    /// Non-tensor FP32.
    pub fp32: Peak,
    /// TF32 tensor.
    pub tf32: Peak,
    /// BF16 tensor.
    pub bf16: Peak,
    /// FP16 tensor.
    pub fp16: Peak,
    /// FP8 tensor.
    pub fp8: Peak,
    /// INT8 tensor (OPS).
    pub int8: Peak,
    /// FP6 tensor.
    pub fp6: Peak,
    /// FP4 tensor.
    pub fp4: Peak,
}

impl Peaks {
    /// Column names, in the order of [`Peaks::all`] (used by JSON output and the data file).
    pub const NAMES: [&'static str; 8] =
        ["fp32", "tf32", "bf16", "fp16", "fp8", "int8", "fp6", "fp4"];

    /// Every peak, in the order of [`Peaks::NAMES`].
    pub fn all(&self) -> [Peak; 8] {
        [
            self.fp32, self.tf32, self.bf16, self.fp16, self.fp8, self.int8, self.fp6, self.fp4,
        ]
    }
}

/// How a chip's GPUs are wired to each other.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Topology {
    /// PCIe only, through the host (no scale-up fabric).
    Pcie,
    /// A bridge joining a few cards (NVLink bridge, Infinity Fabric Link).
    Bridge,
    /// Every GPU reaches a switch (NVSwitch, NVLink Switch): any pair gets the full bandwidth.
    Switch,
    /// Direct point-to-point links without a switch (xGMI full mesh, Gaudi RoCE all-to-all):
    /// the per-GPU bandwidth is split over the peers.
    Mesh,
    /// A torus of chip-to-chip links (TPU ICI, NeuronLink-v3).
    Torus,
    /// A ring of chip-to-chip links (NeuronLink-v2).
    Ring,
    /// A single device (Apple SoC): no GPU-to-GPU link.
    Standalone,
}

impl Topology {
    /// Every topology.
    pub const ALL: &'static [Topology] = &[
        Topology::Pcie,
        Topology::Bridge,
        Topology::Switch,
        Topology::Mesh,
        Topology::Torus,
        Topology::Ring,
        Topology::Standalone,
    ];

    /// Stable id used in the data file and JSON.
    pub const fn id(self) -> &'static str {
        match self {
            Topology::Pcie => "pcie",
            Topology::Bridge => "bridge",
            Topology::Switch => "switch",
            Topology::Mesh => "mesh",
            Topology::Torus => "torus",
            Topology::Ring => "ring",
            Topology::Standalone => "none",
        }
    }

    /// From its id.
    pub fn parse(s: &str) -> Option<Topology> {
        Topology::ALL.iter().copied().find(|t| t.id() == s.trim())
    }
}

/// Scale-up interconnect of a chip.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Interconnect {
    /// Kind, as text (`NVLink 4 + NVSwitch`, `PCIe only`, `xGMI full mesh`, `ICI`).
    pub kind: String,
    /// How the GPUs are wired.
    pub topology: Topology,
    /// Per-GPU bandwidth, bidirectional (both directions summed, as vendors quote it).
    /// For PCIe-only cards it is the x16 host link.
    pub bidirectional: Option<BytesPerSecond>,
    /// GPUs in one scale-up domain (8 for HGX, 72 for NVL72, 2 for a bridge pair; for PCIe-only
    /// cards the GPUs of a typical server node, 8, or 4 for GeForce; 1 for a standalone chip).
    /// Beyond it, a bridge falls back to PCIe and other links leave the node.
    pub domain_size: u32,
}

impl Interconnect {
    /// Per-GPU bandwidth in one direction: the bidirectional figure / 2.
    pub fn per_direction(&self) -> Option<BytesPerSecond> {
        self.bidirectional.map(|b| BytesPerSecond(b.0 / 2.0))
    }
}

/// The textbook's interconnect presets for multi-GPU scenarios (chapter "GPU reading";
/// `WORKED_EXAMPLES.md` §4). Figures are per GPU; vendors quote bidirectional bandwidth, the
/// transfer time of one message uses one direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InterconnectPreset {
    /// PCIe Gen4 x16: 32 GB/s per direction (64 bidirectional), through the host.
    PcieGen4,
    /// PCIe Gen5 x16: 64 GB/s per direction (128 bidirectional).
    PcieGen5,
    /// NVLink bridge joining 2 cards: 600 GB/s bidirectional, 300 each way (A100/H100 PCIe).
    NvlinkBridge,
    /// NVLink + NVSwitch, 8 GPUs at 900 GB/s bidirectional each, 450 each way (HGX H100/H200).
    NvlinkSwitch,
    /// 8 GPUs wired directly without a switch: 7 links × 128 GB/s bidirectional
    /// (≈128 GB/s per link, 64 each way per peer; AMD MI300X xGMI).
    SwitchlessMesh8,
    /// Across nodes: ≈50 GB/s per GPU each way (one 400 Gb/s NIC per GPU).
    InterNode,
}

impl InterconnectPreset {
    /// Every preset, in display order.
    pub const ALL: &'static [InterconnectPreset] = &[
        InterconnectPreset::PcieGen4,
        InterconnectPreset::PcieGen5,
        InterconnectPreset::NvlinkBridge,
        InterconnectPreset::NvlinkSwitch,
        InterconnectPreset::SwitchlessMesh8,
        InterconnectPreset::InterNode,
    ];

    /// Stable id used in URLs, the CLI and JSON.
    pub const fn id(self) -> &'static str {
        match self {
            InterconnectPreset::PcieGen4 => "pcie4",
            InterconnectPreset::PcieGen5 => "pcie5",
            InterconnectPreset::NvlinkBridge => "nvlink-bridge",
            InterconnectPreset::NvlinkSwitch => "nvswitch",
            InterconnectPreset::SwitchlessMesh8 => "mesh8",
            InterconnectPreset::InterNode => "inter-node",
        }
    }

    /// From its id (case-insensitive).
    pub fn parse(s: &str) -> Option<InterconnectPreset> {
        let s = s.trim().to_ascii_lowercase();
        InterconnectPreset::ALL
            .iter()
            .copied()
            .find(|p| p.id() == s)
    }

    /// Per-GPU bandwidth, both directions summed, in decimal GB/s.
    pub const fn bidirectional_gbps(self) -> f64 {
        match self {
            InterconnectPreset::PcieGen4 => 64.0,
            InterconnectPreset::PcieGen5 => 128.0,
            InterconnectPreset::NvlinkBridge => 600.0,
            InterconnectPreset::NvlinkSwitch => 900.0,
            InterconnectPreset::SwitchlessMesh8 => 7.0 * 128.0,
            InterconnectPreset::InterNode => 2.0 * INTER_NODE_PER_DIRECTION_GBPS,
        }
    }

    /// Per-GPU bandwidth, both directions summed.
    pub fn bidirectional(self) -> BytesPerSecond {
        BytesPerSecond::from_gbps(self.bidirectional_gbps())
    }

    /// Per-GPU bandwidth in one direction (bidirectional / 2).
    pub fn per_direction(self) -> BytesPerSecond {
        BytesPerSecond::from_gbps(self.bidirectional_gbps() / 2.0)
    }

    /// How the GPUs are wired.
    pub const fn topology(self) -> Topology {
        match self {
            InterconnectPreset::PcieGen4 | InterconnectPreset::PcieGen5 => Topology::Pcie,
            InterconnectPreset::NvlinkBridge => Topology::Bridge,
            InterconnectPreset::NvlinkSwitch | InterconnectPreset::InterNode => Topology::Switch,
            InterconnectPreset::SwitchlessMesh8 => Topology::Mesh,
        }
    }

    /// GPUs in one domain (2 for a bridge, 8 for a node; across nodes is unbounded, given as
    /// `u32::MAX`).
    pub const fn domain_size(self) -> u32 {
        match self {
            InterconnectPreset::NvlinkBridge => 2,
            InterconnectPreset::InterNode => u32::MAX,
            _ => 8,
        }
    }

    /// The i18n key of a one-line description.
    pub const fn description_key(self) -> &'static str {
        match self {
            InterconnectPreset::PcieGen4 => "ic_pcie4",
            InterconnectPreset::PcieGen5 => "ic_pcie5",
            InterconnectPreset::NvlinkBridge => "ic_nvlink_bridge",
            InterconnectPreset::NvlinkSwitch => "ic_nvswitch",
            InterconnectPreset::SwitchlessMesh8 => "ic_mesh8",
            InterconnectPreset::InterNode => "ic_inter_node",
        }
    }

    /// As an [`Interconnect`] value.
    pub fn interconnect(self) -> Interconnect {
        Interconnect {
            kind: self.id().to_string(),
            topology: self.topology(),
            bidirectional: Some(self.bidirectional()),
            domain_size: self.domain_size(),
        }
    }
}

/// Which link a multi-GPU scenario uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Link {
    /// The chip's own scale-up link from the catalog.
    Own,
    /// A textbook preset.
    Preset(InterconnectPreset),
}

/// A public hourly price.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Price {
    /// US dollars per GPU (or chip) hour.
    pub usd_per_hour: f64,
    /// Where the price comes from (instance, region).
    pub source: String,
    /// When it was read (`2026-09-20`, `2026-10`, `2025`, or `undated`).
    pub date: String,
}

/// Where [`Accelerator::capacity`] takes its figure from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CapacityBasis {
    /// `memory.total` as the driver reports it (nvidia-smi, rocm-smi, hl-smi), in MiB.
    DriverReported,
    /// No driver reading: the marketed "GB" read as GiB. HBM stacks and LPDDR packages come in
    /// binary sizes, so vendors' "80 GB" is 80 GiB; where both are known drivers report
    /// 0–0.5 % less (H100 "80 GB" = 81,920 MiB, driver 81,559). Exception noted in the data:
    /// GH200 144 GB was measured at 141 GiB usable (ml-engineering), ~2 % less.
    MarketedGib,
    /// Unified memory (Apple): the marketed GiB × 0.75, Metal's default GPU working set
    /// (raise it with `sysctl iogpu.wired_limit_mb`).
    UnifiedDefaultShare,
    /// Other memory without a driver reading: decimal GB (10^9 bytes), the conservative reading.
    MarketedGb,
}

/// Why a workload computes at another precision than requested.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PrecisionReason {
    /// The hardware lacks the precision (A100 FP8, T4 BF16): weights are up-converted.
    NotSupported,
    /// No dense peak published for it, but the other 16-bit type has one (same speed).
    SameWidthSubstitute,
    /// No dense peak published and no substitute: compute-bound estimates need a figure.
    NoPublishedPeak,
}

/// A visible note on the precision a workload actually runs at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PrecisionNote {
    /// The precision the weights and activations ask for.
    pub requested: Dtype,
    /// The precision the compute uses.
    pub used: Dtype,
    /// Why they differ (or why no peak is known).
    pub reason: PrecisionReason,
}

impl PrecisionNote {
    /// The i18n key of the sentence (placeholders `{requested}`, `{used}`).
    pub const fn key(self) -> &'static str {
        match self.reason {
            PrecisionReason::NotSupported => "precision_not_supported",
            PrecisionReason::SameWidthSubstitute => "precision_same_width",
            PrecisionReason::NoPublishedPeak => "precision_no_peak",
        }
    }

    /// The sentence in a language, placeholders filled.
    pub fn message(self, lang: Lang) -> String {
        tr(lang, self.key())
            .replace("{requested}", self.requested.id())
            .replace("{used}", self.used.id())
    }
}

/// One accelerator.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Accelerator {
    /// Stable lowercase id (`h100-sxm`, `a100-sxm-80gb`, `l40s`; `custom:…` for user entries).
    pub id: String,
    /// Display name.
    pub name: String,
    /// Other names that resolve to this chip (`h100`, `a100-80gb`).
    pub aliases: Vec<String>,
    /// Vendor.
    pub vendor: String,
    /// Form factor.
    pub form_factor: String,
    /// Memory as marketed, in the vendor's "GB" (often really GiB for HBM).
    pub memory_marketed_gb: f64,
    /// Memory as the driver reports it, when known (MiB × 2^20).
    pub memory_reported: Option<Bytes>,
    /// Memory type (HBM3, GDDR6, …).
    pub memory_type: String,
    /// Peak DRAM bandwidth (decimal: 1 GB/s = 10^9 B/s).
    pub bandwidth: BytesPerSecond,
    /// Dense peaks.
    pub peaks: Peaks,
    /// Scale-up interconnect.
    pub interconnect: Interconnect,
    /// PCIe generation (3, 4, 5, 6) when it has a host PCIe link; `None` otherwise.
    pub pcie_gen: Option<u32>,
    /// Board/module power in watts, when published.
    pub tdp_w: Option<f64>,
    /// Launch year (0 for a custom entry).
    pub year: u32,
    /// A public price, when one was found.
    pub price: Option<Price>,
    /// Spec source.
    pub source: String,
    /// Caveats.
    pub notes: String,
}

impl Accelerator {
    /// The capacity calculations use: the driver-reported memory when known, otherwise the
    /// marketed figure read as GiB for HBM/LPDDR parts (vendors' "80 GB" HBM is 80 GiB
    /// addressable), × 0.75 for unified memory (Metal's default GPU share), and as 10^9-byte
    /// GB for other memory. See [`CapacityBasis`].
    pub fn capacity(&self) -> Bytes {
        let gb = if self.memory_marketed_gb.is_finite() {
            self.memory_marketed_gb.max(0.0)
        } else {
            0.0
        };
        match self.capacity_basis() {
            CapacityBasis::DriverReported => self.memory_reported.unwrap_or(Bytes::ZERO),
            CapacityBasis::MarketedGib => Bytes((gb * GIB as f64) as u64),
            CapacityBasis::UnifiedDefaultShare => {
                Bytes((gb * UNIFIED_MEMORY_GPU_SHARE * GIB as f64) as u64)
            }
            CapacityBasis::MarketedGb => Bytes((gb * 1e9) as u64),
        }
    }

    /// Which rule [`Accelerator::capacity`] applies to this chip.
    pub fn capacity_basis(&self) -> CapacityBasis {
        let t = self.memory_type.to_ascii_uppercase();
        if self.memory_reported.is_some() {
            CapacityBasis::DriverReported
        } else if t.contains("UNIFIED") {
            CapacityBasis::UnifiedDefaultShare
        } else if t.starts_with("HBM") || t.starts_with("LPDDR") {
            CapacityBasis::MarketedGib
        } else {
            CapacityBasis::MarketedGb
        }
    }

    /// The dense peak for a precision (INT4 reads the FP4 column).
    pub fn peak(&self, d: Dtype) -> Peak {
        let p = &self.peaks;
        match d {
            Dtype::Fp32 => p.fp32,
            Dtype::Bf16 => p.bf16,
            Dtype::Fp16 => p.fp16,
            Dtype::Fp8 => p.fp8,
            Dtype::Int8 => p.int8,
            Dtype::Fp6 => p.fp6,
            Dtype::Int4 | Dtype::Fp4 => p.fp4,
        }
    }

    /// Ridge point (FLOP per byte) at a precision, when the peak is known:
    /// peak FLOP/s ÷ bandwidth B/s (L40S fp16: 362.05e12 / 864e9 = 419.0).
    pub fn ridge(&self, d: Dtype) -> Option<f64> {
        match self.peak(d) {
            Peak::Dense(f) if self.bandwidth.0 > 0.0 => Some(ridge_point(f, self.bandwidth)),
            _ => None,
        }
    }

    /// Dense peak as a rate, when known.
    pub fn peak_flops(&self, d: Dtype) -> Option<FlopsPerSecond> {
        self.peak(d).flops()
    }

    /// The precision a workload with these weight and activation (KV) precisions computes at
    /// on this chip, and a note when that differs from what was asked or has no peak.
    ///
    /// Requested precision: the wider of the two (weight-only quantization such as W4A16 or
    /// W8A16 computes at 16 bits after dequantizing); on a tie, the activations' type.
    /// If the chip lacks it (A100 FP8, T4/V100 BF16), it falls back to 16-bit: BF16, or FP16
    /// where BF16 is unsupported. If no dense figure is published but the other 16-bit type
    /// has one (TPU FP16), that one is used. Otherwise the requested type is kept with a note.
    pub fn compute_precision(
        &self,
        weights: Dtype,
        activations: Dtype,
    ) -> (Dtype, Option<PrecisionNote>) {
        let requested = if weights.bits() > activations.bits() {
            weights
        } else {
            activations
        };
        let note = |used, reason| {
            Some(PrecisionNote {
                requested,
                used,
                reason,
            })
        };
        match self.peak(requested) {
            Peak::Dense(_) => (requested, None),
            Peak::NotSupported => {
                let chain: &[Dtype] = match requested {
                    Dtype::Fp16 => &[Dtype::Bf16, Dtype::Fp32],
                    Dtype::Bf16 => &[Dtype::Fp16, Dtype::Fp32],
                    Dtype::Fp32 => &[],
                    _ => &[Dtype::Bf16, Dtype::Fp16, Dtype::Fp32],
                };
                let pick = chain
                    .iter()
                    .copied()
                    .find(|d| matches!(self.peak(*d), Peak::Dense(_)))
                    .or_else(|| {
                        chain
                            .iter()
                            .copied()
                            .find(|d| self.peak(*d) != Peak::NotSupported)
                    });
                match pick {
                    Some(used) => (used, note(used, PrecisionReason::NotSupported)),
                    None => (requested, note(requested, PrecisionReason::NoPublishedPeak)),
                }
            }
            Peak::NotPublished => {
                let twin = match requested {
                    Dtype::Fp16 => Some(Dtype::Bf16),
                    Dtype::Bf16 => Some(Dtype::Fp16),
                    _ => None,
                };
                match twin.filter(|t| matches!(self.peak(*t), Peak::Dense(_))) {
                    Some(used) => (used, note(used, PrecisionReason::SameWidthSubstitute)),
                    None => (requested, note(requested, PrecisionReason::NoPublishedPeak)),
                }
            }
        }
    }

    /// Watts per dense 16-bit TFLOPS: TDP ÷ BF16 TFLOPS (FP16 where BF16 is unsupported,
    /// as on T4 and V100). `None` without a TDP or a 16-bit peak.
    pub fn watts_per_bf16_tflops(&self) -> Option<f64> {
        let (d, _) = self.compute_precision(Dtype::Bf16, Dtype::Bf16);
        let t = self.peak_flops(d)?.tflops();
        self.tdp_w.filter(|_| t > 0.0).map(|w| w / t)
    }

    /// Watts per GB/s of memory bandwidth: TDP ÷ decimal GB/s. `None` without a TDP.
    pub fn watts_per_gbps(&self) -> Option<f64> {
        let g = self.bandwidth.gbps();
        self.tdp_w.filter(|_| g > 0.0).map(|w| w / g)
    }

    /// The chip's own scale-up link (H200 NVL bridge 900 GB/s, MI300X xGMI mesh, TPU ICI, …).
    pub fn own_interconnect(&self) -> &Interconnect {
        &self.interconnect
    }

    /// The host PCIe x16 link, per direction: 2^(gen+1) GB/s (Gen3 ≈ 16, Gen4 32, Gen5 64,
    /// Gen6 128; nominal). `None` without a PCIe generation.
    pub fn pcie_per_direction(&self) -> Option<BytesPerSecond> {
        let g = self.pcie_gen?.clamp(1, 8);
        Some(BytesPerSecond::from_gbps(f64::from(1u32 << (g + 1))))
    }

    /// Effective one-direction bandwidth per GPU for an all-reduce among `tp` GPUs of this chip
    /// over `link`; `None` for `tp` ≤ 1 (no communication), a standalone chip, or a link whose
    /// bandwidth is not published.
    ///
    /// Rules (per GPU, one direction; bus bandwidth of a ring all-reduce):
    /// - PCIe: the x16 link, capped at the chip's own PCIe generation; beyond the domain (a
    ///   node, 8 GPUs for a preset) the traffic leaves the node and the inter-node 50 GB/s also
    ///   caps it.
    /// - Switch (NVSwitch), torus, ring: the per-GPU figure (bidirectional / 2) within the
    ///   domain; beyond the domain, the inter-node 50 GB/s caps it.
    /// - Bridge: within the bridged group (2, or 4 for H200 NVL) the bridge; beyond it the
    ///   ring crosses PCIe, so the chip's PCIe link governs.
    /// - Switchless mesh: each peer has its own link of (per-GPU / (domain − 1)); an
    ///   all-reduce among `tp` GPUs can use `tp − 1` of them: 64 GB/s × (tp − 1) on MI300X,
    ///   so 2 GPUs see only 64 GB/s, 8 see 448.
    pub fn allreduce_bandwidth(&self, link: Link, tp: u32) -> Option<BytesPerSecond> {
        if tp <= 1 {
            return None;
        }
        let inter_node = INTER_NODE_PER_DIRECTION_GBPS * 1e9;
        let ic = match link {
            Link::Own => self.interconnect.clone(),
            Link::Preset(p) => p.interconnect(),
        };
        let per_dir = ic.per_direction()?.0;
        let pcie = self.pcie_per_direction().map_or(32e9, |b| b.0);
        let bw = match ic.topology {
            Topology::Standalone => return None,
            Topology::Pcie => {
                let capped = match link {
                    Link::Preset(_) => per_dir.min(pcie),
                    Link::Own => per_dir,
                };
                if tp > ic.domain_size {
                    capped.min(inter_node)
                } else {
                    capped
                }
            }
            Topology::Bridge => {
                if tp <= ic.domain_size {
                    per_dir
                } else {
                    pcie
                }
            }
            Topology::Switch | Topology::Torus | Topology::Ring => {
                if tp <= ic.domain_size {
                    per_dir
                } else {
                    per_dir.min(inter_node)
                }
            }
            Topology::Mesh => {
                let peers = ic.domain_size.saturating_sub(1).max(1);
                let per_peer = per_dir / f64::from(peers);
                if tp <= ic.domain_size {
                    per_peer * f64::from(tp - 1)
                } else {
                    (per_peer * f64::from(peers)).min(inter_node)
                }
            }
        };
        Some(BytesPerSecond(bw))
    }

    /// Whether this is a user-entered accelerator (`custom:` id).
    pub fn is_custom(&self) -> bool {
        self.id.starts_with(CUSTOM_PREFIX)
    }
}

/// Prefix of custom accelerator ids.
pub const CUSTOM_PREFIX: &str = "custom:";

/// The parsed catalog.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
        crate::core::base::order::sort_by(&mut scored, &|a, b| a.cmp(b));
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

/// Query keys of a custom accelerator, in order.
const CUSTOM_KEYS: [&str; 7] = [
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

/// The ridge point in FLOP/B: `peak / bandwidth`, where the roofline's two roofs meet (0 when
/// the bandwidth is not positive or a figure is not finite). The one definition: the catalog's
/// [`Accelerator::ridge`], `calc::roofline` and the chart series use it.
pub fn ridge_point(peak: FlopsPerSecond, bw: BytesPerSecond) -> f64 {
    if bw.0 > 0.0 && bw.0.is_finite() && peak.0.is_finite() {
        (peak.0 / bw.0).max(0.0)
    } else {
        0.0
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

#[cfg(test)]
mod tests {
    use super::*;

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
            a.notes.clear();
        }
        c
    }

    #[test]
    fn the_compiled_app_csv_is_the_projection_of_the_sourced_file() {
        let full = include_str!("../../../data/accelerators.csv");
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
                "source" => (h.as_str(), h.as_str(), pointer),
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
        // A10G: nothing published → kept, with a note that says so.
        let (d, n) = gpu("a10g").compute_precision(Dtype::Bf16, Dtype::Bf16);
        assert_eq!(d, Dtype::Bf16);
        assert_eq!(n.map(|n| n.reason), Some(PrecisionReason::NoPublishedPeak));
        let msg = n.map(|n| n.message(Lang::En)).unwrap_or_default();
        assert!(msg.contains("bf16") && !msg.contains('{'), "{msg}");
    }

    #[test]
    fn watts_per_figures() {
        // H100 SXM: 700 W / 989.5 TFLOPS = 0.7074 W/TFLOPS; 700 W / 3,350 GB/s = 0.2090 W per GB/s.
        let h = gpu("h100-sxm");
        let w = h.watts_per_bf16_tflops().unwrap_or(0.0);
        assert!((w - 700.0 / 989.5).abs() < 1e-9, "{w}");
        let g = h.watts_per_gbps().unwrap_or(0.0);
        assert!((g - 700.0 / 3350.0).abs() < 1e-9, "{g}");
        // V100 has no BF16: FP16 125 TFLOPS, 300 W → 2.4.
        assert_eq!(gpu("v100").watts_per_bf16_tflops(), Some(300.0 / 125.0));
        // TPU v5e publishes no power.
        assert_eq!(gpu("tpu-v5e").watts_per_gbps(), None);
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
            assert!(
                crate::core::base::i18n::has(p.description_key()),
                "{}",
                p.id()
            );
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
