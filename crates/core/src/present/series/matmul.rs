//! Matmul explorer: a matmul as a roofline point, and the textbook's one-click examples.

use super::roofline::{PointKind, PointSpec};
use crate::calc::roofline::Matmul;

impl PointSpec {
    /// A matmul as a roofline point (half precision, as [`Matmul::bytes`] counts).
    pub fn matmul(mm: &Matmul, name: impl Into<String>) -> PointSpec {
        PointSpec {
            name: name.into(),
            phase: PointKind::Matmul,
            cost: Some((mm.flops(), mm.bytes())),
            intensity_flop_per_byte: mm.intensity_flop_per_byte(),
            batch1: None,
            named: true,
        }
    }
}

/// A one-click example of the matmul explorer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MatmulPreset {
    /// Translation key of the preset's name.
    pub label_key: &'static str,
    /// The matmul.
    pub matmul: Matmul,
}

/// The textbook's examples (§5): M = N = K = 1,024 and 4,096; one projection s × h × h at
/// h = 4,096 for prefill (s = 1,024) and decode (s = 1).
pub const MATMUL_PRESETS: &[MatmulPreset] = &[
    MatmulPreset {
        label_key: "matmul_square_1024",
        matmul: Matmul {
            m: 1024,
            n: 1024,
            k: 1024,
        },
    },
    MatmulPreset {
        label_key: "matmul_square_4096",
        matmul: Matmul {
            m: 4096,
            n: 4096,
            k: 4096,
        },
    },
    MatmulPreset {
        label_key: "matmul_prefill_projection",
        matmul: Matmul {
            m: 1024,
            n: 4096,
            k: 4096,
        },
    },
    MatmulPreset {
        label_key: "matmul_decode_projection",
        matmul: Matmul {
            m: 1,
            n: 4096,
            k: 4096,
        },
    },
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calc::roofline::intensity;

    #[test]
    fn matmul_intensity_matches_textbook() {
        // n³ / 3n² = n / 3.
        for n in [1024u64, 4096] {
            let m = Matmul { m: n, n, k: n };
            assert!((m.intensity_flop_per_byte() - n as f64 / 3.0).abs() < 1e-9);
            assert!((intensity(m.flops(), m.bytes()) - n as f64 / 3.0).abs() < 1e-9);
        }
        let h = 4096.0;
        let prefill = MATMUL_PRESETS[2].matmul.intensity_flop_per_byte();
        assert!((prefill - 1024.0 * h * h / (2.0 * 1024.0 * h + h * h)).abs() < 1e-9);
        let decode = MATMUL_PRESETS[3].matmul.intensity_flop_per_byte();
        assert!((decode - h * h / (2.0 * h + h * h)).abs() < 1e-12 && decode < 1.0);
        assert_eq!(Matmul { m: 0, n: 0, k: 0 }.intensity_flop_per_byte(), 0.0);
    }
}
