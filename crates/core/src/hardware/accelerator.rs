//! One accelerator ([`Accelerator`]): its memory and the capacity calculations use
//! ([`CapacityBasis`]), its public price ([`Price`]), the precision a workload actually computes
//! at ([`PrecisionNote`]) and its multi-GPU bandwidths.

use super::interconnect::{Interconnect, Link, Topology, INTER_NODE_PER_DIRECTION_GBPS};
use super::peak::{ridge_point, Peak, Peaks};
use crate::base::dtype::Dtype;
use crate::base::i18n::{fill, tr, Lang};
use crate::base::units::{Bytes, BytesPerSecond, FlopsPerSecond, GIB};
use serde::{Deserialize, Serialize};

/// Share of unified memory that Metal lets the GPU wire by default
/// (`recommendedMaxWorkingSetSize`, ~75 % of RAM; reference notes, Apple rows).
pub const UNIFIED_MEMORY_GPU_SHARE: f64 = 0.75;

/// A public hourly price.
#[derive(
    Debug, Clone, PartialEq, Serialize, Deserialize, borsh::BorshSerialize, borsh::BorshDeserialize,
)]
pub struct Price {
    /// US dollars per GPU (or chip) hour.
    pub usd_per_hour: f64,
    /// Where the price comes from (instance, region).
    pub source: String,
    /// When it was read (`2026-09-20`, `2026-10`, `2025`, or `undated`).
    pub date: String,
}

/// The chip's architecture, from the catalog's `architecture` column (each row names its
/// source in `architecture_source`: NVIDIA's compute-capability table, ROCm's hardware table,
/// the vendors' pages). What depends on the generation of the chip (vLLM's kernel for MXFP4
/// experts on Hopper, for one) reads it here, never from the name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[derive(borsh::BorshSerialize, borsh::BorshDeserialize)]
pub enum Architecture {
    /// NVIDIA Volta (compute capability 7.0).
    Volta,
    /// NVIDIA Turing (7.5).
    Turing,
    /// NVIDIA Ampere (8.0, 8.6).
    Ampere,
    /// NVIDIA Ada Lovelace (8.9).
    Ada,
    /// NVIDIA Hopper (9.0).
    Hopper,
    /// NVIDIA Blackwell (10.0, 10.3, 12.0).
    Blackwell,
    /// AMD CDNA 2 (gfx90a).
    Cdna2,
    /// AMD CDNA 3 (gfx942).
    Cdna3,
    /// AMD CDNA 4 (gfx950).
    Cdna4,
    /// Intel Gaudi.
    Gaudi,
    /// Google TPU.
    Tpu,
    /// AWS Neuron (Inferentia, Trainium).
    Neuron,
    /// Apple silicon GPU.
    Apple,
    /// Not known: a custom accelerator. Nothing generation-specific applies to it (no
    /// Hopper-only kernel factor, for one).
    Unknown,
}

impl Architecture {
    /// Every architecture with its identifier in the catalog's `architecture` column.
    pub const ALL: &'static [(Architecture, &'static str)] = &[
        (Architecture::Volta, "volta"),
        (Architecture::Turing, "turing"),
        (Architecture::Ampere, "ampere"),
        (Architecture::Ada, "ada"),
        (Architecture::Hopper, "hopper"),
        (Architecture::Blackwell, "blackwell"),
        (Architecture::Cdna2, "cdna2"),
        (Architecture::Cdna3, "cdna3"),
        (Architecture::Cdna4, "cdna4"),
        (Architecture::Gaudi, "gaudi"),
        (Architecture::Tpu, "tpu"),
        (Architecture::Neuron, "neuron"),
        (Architecture::Apple, "apple"),
        (Architecture::Unknown, "unknown"),
    ];

    /// The architecture a column value names (case-insensitive), if any.
    pub fn parse(s: &str) -> Option<Architecture> {
        let t = s.trim();
        Architecture::ALL
            .iter()
            .find(|(_, id)| id.eq_ignore_ascii_case(t))
            .map(|(a, _)| *a)
    }

    /// Its identifier in the catalog's `architecture` column.
    pub fn id(self) -> &'static str {
        Architecture::ALL
            .iter()
            .find(|(a, _)| *a == self)
            .map_or("unknown", |(_, id)| id)
    }
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
        fill(
            tr(lang, self.key()),
            &[("requested", self.requested.id()), ("used", self.used.id())],
        )
    }
}

/// One accelerator.
#[derive(
    Debug, Clone, PartialEq, Serialize, Deserialize, borsh::BorshSerialize, borsh::BorshDeserialize,
)]
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
    /// Architecture ([`Architecture::Unknown`] for a custom accelerator).
    pub architecture: Architecture,
    /// Where the architecture comes from (empty for a custom accelerator).
    pub architecture_source: String,
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

    /// Watts per dense 16-bit TFLOPS at the chip's own 16-bit precision, with that precision:
    /// TDP ÷ BF16 TFLOPS, or ÷ FP16 TFLOPS on a chip without a dense BF16 peak (T4, V100 have
    /// no BF16). The figure is always per a precision the chip has a dense peak for, never
    /// named after one it lacks. `None` without a TDP or a dense 16-bit peak.
    pub fn watts_per_16bit_tflops(&self) -> Option<(Dtype, f64)> {
        let (d, t) = [Dtype::Bf16, Dtype::Fp16].into_iter().find_map(|d| {
            self.peak_flops(d)
                .map(|f| (d, f.tflops()))
                .filter(|(_, t)| t.is_finite() && *t > 0.0)
        })?;
        self.tdp_w.map(|w| (d, w / t))
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
