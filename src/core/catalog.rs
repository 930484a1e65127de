//! The accelerator catalog: a data file compiled in (`data/accelerators.csv`), parsed by pure
//! code, every row sourced. Dense peaks only; "not supported" is distinct from "not published".

use crate::core::dtype::Dtype;
use crate::core::error::CalcError;
use crate::core::units::{Bytes, BytesPerSecond, FlopsPerSecond};
use serde::{Deserialize, Serialize};

/// A dense peak for one precision.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "flops_per_s", rename_all = "snake_case")]
pub enum Peak {
    /// Dense peak (no 2:4 sparsity), tensor/matrix units.
    Dense(FlopsPerSecond),
    /// The hardware does not support this precision.
    NotSupported,
    /// Supported (or unknown), but no dense figure is published.
    NotPublished,
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

/// Scale-up interconnect of a chip.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Interconnect {
    /// Kind, as text (`NVLink 4 + NVSwitch`, `PCIe only`, `xGMI full mesh`, `ICI`).
    pub kind: String,
    /// Per-GPU bandwidth, bidirectional (both directions summed, as vendors quote it).
    pub bidirectional: Option<BytesPerSecond>,
    /// GPUs in one scale-up domain (8 for HGX, 72 for NVL72, 2 for a bridge pair, 1 for none).
    pub domain_size: u32,
}

/// A public hourly price.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Price {
    /// US dollars per GPU (or chip) hour.
    pub usd_per_hour: f64,
    /// Where the price comes from (instance, region).
    pub source: String,
    /// When it was read.
    pub date: String,
}

/// One accelerator.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Accelerator {
    /// Stable lowercase id (`h100-sxm`, `a100-sxm-80gb`, `l40s`).
    pub id: String,
    /// Display name.
    pub name: String,
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
    /// Peak DRAM bandwidth.
    pub bandwidth: BytesPerSecond,
    /// Dense peaks.
    pub peaks: Peaks,
    /// Scale-up interconnect.
    pub interconnect: Interconnect,
    /// PCIe generation (3, 4, 5, 6) when it has a host PCIe link; `None` otherwise.
    pub pcie_gen: Option<u32>,
    /// Board/module power in watts, when published.
    pub tdp_w: Option<f64>,
    /// Launch year.
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
    /// marketed figure read as GiB for HBM parts (vendors' "80 GB" HBM is 80 GiB addressable)
    /// and as 10^9-byte GB for other memory.
    pub fn capacity(&self) -> Bytes {
        if let Some(b) = self.memory_reported {
            return b;
        }
        let gb = self.memory_marketed_gb.max(0.0);
        if self.memory_type.to_ascii_uppercase().starts_with("HBM") {
            Bytes((gb * (1u64 << 30) as f64) as u64)
        } else {
            Bytes((gb * 1e9) as u64)
        }
    }

    /// The dense peak for a precision.
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

    /// Ridge point (FLOP per byte) at a precision, when the peak is known.
    pub fn ridge(&self, d: Dtype) -> Option<f64> {
        match self.peak(d) {
            Peak::Dense(f) => Some(f / self.bandwidth),
            _ => None,
        }
    }

    /// Dense peak as a rate, when known.
    pub fn peak_flops(&self, d: Dtype) -> Option<FlopsPerSecond> {
        match self.peak(d) {
            Peak::Dense(f) => Some(f),
            _ => None,
        }
    }
}

/// The parsed catalog.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Catalog {
    /// All accelerators, in file order.
    pub accelerators: Vec<Accelerator>,
}

impl Catalog {
    /// Looks up by id, case-insensitively, resolving common aliases; otherwise an error with
    /// "did you mean" suggestions.
    pub fn get(&self, id: &str) -> Result<&Accelerator, CalcError> {
        let want = id.trim().to_ascii_lowercase();
        self.accelerators
            .iter()
            .find(|a| a.id == want)
            .ok_or_else(|| CalcError::UnknownGpu {
                given: id.chars().take(40).collect(),
                suggestions: Vec::new(),
            })
    }
}
