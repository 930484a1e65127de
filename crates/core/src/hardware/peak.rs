//! Dense peaks by precision ([`Peak`], [`Peaks`]) and the roofline's ridge point
//! ([`ridge_point`]). A leaf of the hardware layer: imports only [`crate::base`].

use crate::base::units::{BytesPerSecond, FlopsPerSecond};
use serde::{Deserialize, Serialize};

/// A dense peak for one precision.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "flops_per_s", rename_all = "snake_case")]
#[derive(borsh::BorshSerialize, borsh::BorshDeserialize)]
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
#[derive(
    Debug, Clone, PartialEq, Serialize, Deserialize, borsh::BorshSerialize, borsh::BorshDeserialize,
)]
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

/// The ridge point in FLOP/B: `peak / bandwidth`, where the roofline's two roofs meet (0 when
/// the bandwidth is not positive or a figure is not finite). The one definition: the catalog's
/// [`Accelerator::ridge`](super::accelerator::Accelerator::ridge), `calc::roofline` and the
/// chart series use it.
pub fn ridge_point(peak: FlopsPerSecond, bw: BytesPerSecond) -> f64 {
    if bw.0 > 0.0 && bw.0.is_finite() && peak.0.is_finite() {
        (peak.0 / bw.0).max(0.0)
    } else {
        0.0
    }
}
