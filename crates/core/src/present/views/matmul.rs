//! The matmul explorer: one matmul's intensity and its place on the compared GPUs' roofline.

use super::common::{place, ViewGpu};
use crate::base::derivation::Derivation;
use crate::base::dtype::Dtype;
use crate::base::i18n::{tr, Lang};
use crate::calc::roofline as rl;
use crate::present::series::{self, Matmul, RooflineData, RooflineGpu};

/// The matmul explorer's result: intensity (with its derivation) and its place on the first
/// GPU's roofline next to the textbook's reference points.
#[derive(Debug, Clone, PartialEq)]
pub struct MatmulView {
    /// M·N·K / (M·K + K·N + M·N), FLOP/B (half precision).
    pub intensity: f64,
    /// The derivation (`core::roofline::matmul_derivation` at 16 bits).
    pub derivation: Derivation,
    /// The chart data.
    pub data: RooflineData,
    /// Name of the GPU the point is placed against (first with a published ceiling).
    pub anchor_name: String,
    /// That GPU's bf16 ridge point, FLOP/B (0 when no GPU has one).
    pub ridge: f64,
    /// Whether the matmul is compute-bound on the first GPU.
    pub compute_bound: bool,
}

/// Places a matmul on the roofline of the compared GPUs (half precision), with the
/// textbook's 210 and 1,000 FLOP/B reference workloads.
pub fn matmul_view(shape: Matmul, gpus: &[ViewGpu], lang: Lang) -> MatmulView {
    let (_, derivation) = rl::matmul_derivation(shape.m, shape.k, shape.n, Dtype::Bf16);
    let name = format!(
        "{} {}×{}×{}",
        tr(lang, "view_matmul_point"),
        shape.m,
        shape.n,
        shape.k
    );
    let workloads = vec![
        series::PointSpec::matmul(&shape, name),
        series::PointSpec::at_intensity("210 FLOP/B", 210.0),
        series::PointSpec::at_intensity("1,000 FLOP/B", 1000.0),
    ];
    let rgpus: Vec<RooflineGpu> = gpus
        .iter()
        .map(|g| RooflineGpu::from_accelerator(&g.accelerator))
        .collect();
    let (data, anchor) = place(rgpus, |_| Dtype::Bf16, &workloads);
    let anchor_name = anchor
        .and_then(|a| gpus.get(a))
        .map(|g| g.accelerator.name.clone())
        .unwrap_or_default();
    let ridge = anchor
        .and_then(|a| data.gpus.get(a))
        .and_then(|g| g.ceiling(Dtype::Bf16).or_else(|| g.ceilings.first()))
        .map_or(0.0, |c| c.ridge_flop_per_byte);
    let intensity = shape.intensity_flop_per_byte();
    MatmulView {
        anchor_name,
        intensity,
        derivation,
        data,
        ridge,
        compute_bound: ridge > 0.0 && rl::Bound::at(intensity, ridge) == rl::Bound::Compute,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::present::views::common::test_util::gpus;

    #[test]
    fn matmul_explorer_matches_the_textbook() {
        // M = N = K = n in half precision: n / 3 (WORKED_EXAMPLES §5).
        let g = gpus(&["l40s"]);
        let v = matmul_view(
            Matmul {
                m: 4096,
                n: 4096,
                k: 4096,
            },
            &g,
            Lang::En,
        );
        assert!((v.intensity - 4096.0 / 3.0).abs() < 1e-9);
        assert!(v.compute_bound);
        // Decode projection s = 1, h = 4096: 4096² / (4096 + 4096² + 4096) ≈ 1.
        let d = matmul_view(
            Matmul {
                m: 1,
                n: 4096,
                k: 4096,
            },
            &g,
            Lang::En,
        );
        let h = 4096.0f64;
        assert!((d.intensity - h * h / (h + h * h + h)).abs() < 1e-12);
        assert!(!d.compute_bound);
        assert_eq!(d.data.points.len(), 3);
    }
}
