//! Numeric precisions for weights, KV cache and compute.

use crate::base::error::{shorten, CalcError};
use serde::{Deserialize, Serialize};

/// A storage or compute precision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
// The presets' stored models (`model::presets_first`).
#[derive(borsh::BorshSerialize, borsh::BorshDeserialize)]
pub enum Dtype {
    /// IEEE float32, 4 bytes.
    Fp32,
    /// bfloat16, 2 bytes.
    Bf16,
    /// IEEE float16, 2 bytes.
    Fp16,
    /// 8-bit float (e4m3 / e5m2), 1 byte.
    Fp8,
    /// 8-bit integer, 1 byte.
    Int8,
    /// 6-bit float (MX FP6), 0.75 byte.
    Fp6,
    /// 4-bit integer (AWQ/GPTQ style), 0.5 byte plus group scales.
    Int4,
    /// 4-bit float (FP4 / MXFP4 / NVFP4), 0.5 byte plus block scales.
    Fp4,
}

impl Dtype {
    /// Every precision, in display order.
    pub const ALL: &'static [Dtype] = &[
        Dtype::Fp32,
        Dtype::Bf16,
        Dtype::Fp16,
        Dtype::Fp8,
        Dtype::Int8,
        Dtype::Fp6,
        Dtype::Int4,
        Dtype::Fp4,
    ];

    /// Bytes per element, without any scale overhead (`bits / 8`: 0.5 for the 4-bit types).
    pub fn bytes(self) -> f64 {
        self.bits() as f64 / 8.0
    }

    /// Bits per element, without any scale overhead.
    pub const fn bits(self) -> u64 {
        match self {
            Dtype::Fp32 => 32,
            Dtype::Bf16 | Dtype::Fp16 => 16,
            Dtype::Fp8 | Dtype::Int8 => 8,
            Dtype::Fp6 => 6,
            Dtype::Int4 | Dtype::Fp4 => 4,
        }
    }

    /// Stable lowercase name used in URLs, the CLI and JSON.
    pub const fn id(self) -> &'static str {
        match self {
            Dtype::Fp32 => "fp32",
            Dtype::Bf16 => "bf16",
            Dtype::Fp16 => "fp16",
            Dtype::Fp8 => "fp8",
            Dtype::Int8 => "int8",
            Dtype::Fp6 => "fp6",
            Dtype::Int4 => "int4",
            Dtype::Fp4 => "fp4",
        }
    }

    /// Parses the names people and configs use: `fp32`, `float32`, `bfloat16`, `half`, `e4m3`,
    /// `float8_e4m3fn`, `mxfp4`, `nvfp4`, `q4`, … (case-insensitive).
    pub fn parse(s: &str) -> Result<Dtype, CalcError> {
        let t = s.trim().to_ascii_lowercase().replace(['-', ' '], "_");
        let t = t.strip_prefix("torch.").unwrap_or(&t);
        Ok(match t {
            "fp32" | "float32" | "f32" | "float" | "single" => Dtype::Fp32,
            "bf16" | "bfloat16" => Dtype::Bf16,
            "fp16" | "float16" | "f16" | "half" => Dtype::Fp16,
            "fp8" | "float8" | "e4m3" | "e5m2" | "fp8_e4m3" | "fp8_e5m2" | "float8_e4m3fn"
            | "float8_e5m2" | "f8" | "f8_e4m3" => Dtype::Fp8,
            "int8" | "i8" | "q8" | "w8" | "8bit" => Dtype::Int8,
            "fp6" | "mxfp6" | "f6" => Dtype::Fp6,
            "int4" | "i4" | "q4" | "w4" | "4bit" | "nf4" => Dtype::Int4,
            "fp4" | "mxfp4" | "nvfp4" | "f4" | "float4" | "e2m1" => Dtype::Fp4,
            _ => return Err(CalcError::UnknownDtype { given: shorten(s) }),
        })
    }
}

impl std::fmt::Display for Dtype {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.id())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_config_spellings() {
        for (s, d) in [
            ("bfloat16", Dtype::Bf16),
            ("float16", Dtype::Fp16),
            ("torch.float32", Dtype::Fp32),
            ("e4m3", Dtype::Fp8),
            ("float8_e4m3fn", Dtype::Fp8),
            ("MXFP4", Dtype::Fp4),
            ("int4", Dtype::Int4),
        ] {
            assert_eq!(Dtype::parse(s).ok(), Some(d), "{s}");
        }
        assert!(Dtype::parse("fp7").is_err());
        for d in Dtype::ALL {
            assert_eq!(Dtype::parse(d.id()).ok(), Some(*d));
        }
    }
}
