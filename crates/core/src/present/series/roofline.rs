//! Roofline: each GPU's bandwidth slope and compute ceilings, and workloads placed under them.

use crate::base::dtype::Dtype;
use crate::base::units::{Bytes, BytesPerSecond, Flops, FlopsPerSecond};
use crate::calc::roofline::{attainable, intensity, ridge_point, Bound};
use crate::hardware::catalog::{Accelerator, Peak};
use serde::{Deserialize, Serialize};

/// A compute ceiling of one GPU at one precision.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Ceiling {
    /// Precision of the ceiling.
    pub dtype: Dtype,
    /// Dense peak.
    pub peak: FlopsPerSecond,
    /// Ridge point in FLOP per byte: peak / bandwidth.
    pub ridge_flop_per_byte: f64,
}

/// One GPU on the roofline: its bandwidth slope and one ceiling per supported precision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RooflineGpu {
    /// GPU display name.
    pub gpu: String,
    /// Peak DRAM bandwidth (the slope).
    pub bandwidth: BytesPerSecond,
    /// Ceilings, lowest peak first (bf16 before fp8 before fp4).
    pub ceilings: Vec<Ceiling>,
}

/// Precisions drawn as roofline ceilings (16-bit first; fp16 is drawn only when it differs
/// from bf16).
pub const CEILING_DTYPES: &[Dtype] = &[
    Dtype::Bf16,
    Dtype::Fp16,
    Dtype::Fp8,
    Dtype::Int8,
    Dtype::Fp4,
];

impl RooflineGpu {
    /// Bandwidth and the dense ceilings the catalog publishes for this accelerator.
    pub fn from_accelerator(a: &Accelerator) -> RooflineGpu {
        let mut ceilings: Vec<Ceiling> = Vec::new();
        for d in CEILING_DTYPES {
            if let Peak::Dense(p) = a.peak(*d) {
                if p.0 > 0.0 && a.bandwidth.0 > 0.0 && !ceilings.iter().any(|c| c.peak == p) {
                    ceilings.push(Ceiling {
                        dtype: *d,
                        peak: p,
                        ridge_flop_per_byte: ridge_point(p, a.bandwidth),
                    });
                }
            }
        }
        crate::base::order::sort_by(&mut ceilings, &|x, y| x.peak.0.total_cmp(&y.peak.0));
        RooflineGpu {
            gpu: a.name.clone(),
            bandwidth: a.bandwidth,
            ceilings,
        }
    }

    /// The ceiling for a precision, if published.
    pub fn ceiling(&self, d: Dtype) -> Option<&Ceiling> {
        self.ceilings.iter().find(|c| c.dtype == d).or_else(|| {
            // bf16 and fp16 share a ceiling when their peaks are equal (only one is kept).
            let twin = match d {
                Dtype::Fp16 => Dtype::Bf16,
                Dtype::Bf16 => Dtype::Fp16,
                _ => return None,
            };
            self.ceilings.iter().find(|c| c.dtype == twin)
        })
    }

    /// Attainable FLOP/s at `intensity_flop_per_byte` under the ceiling `peak`:
    /// min(peak, intensity × bandwidth).
    pub fn attainable(&self, intensity_flop_per_byte: f64, peak: FlopsPerSecond) -> FlopsPerSecond {
        attainable(peak, self.bandwidth, intensity_flop_per_byte).flops_per_s
    }
}

/// What a workload point stands for, for colour and legend.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PointKind {
    /// Prompt processing: many tokens at once.
    Prefill,
    /// One new token per request per step.
    Decode,
    /// A matmul from the explorer.
    Matmul,
    /// A reference workload given by its intensity only (the textbook's 210 and 1,000 FLOP/B).
    Reference,
}

impl PointKind {
    /// Translation key of the phase name.
    pub const fn label_key(self) -> &'static str {
        match self {
            PointKind::Prefill => "chart_phase_prefill",
            PointKind::Decode => "chart_phase_decode",
            PointKind::Matmul => "chart_phase_matmul",
            PointKind::Reference => "chart_phase_reference",
        }
    }
}

/// A workload on the roofline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkPoint {
    /// Operator or workload name as shown (`q_proj`, `decode`, `210 FLOP/B`).
    pub name: String,
    /// PointKind, for colour.
    pub phase: PointKind,
    /// FLOPs of the operator, when known (reference points have none).
    pub flops: Option<Flops>,
    /// Bytes moved, when known.
    pub bytes: Option<Bytes>,
    /// FLOPs / bytes.
    pub intensity_flop_per_byte: f64,
    /// min(peak, intensity × bandwidth) on the point's GPU.
    pub attainable: FlopsPerSecond,
    /// Which roof limits it.
    pub bound: Bound,
    /// Index into [`RooflineData::gpus`] of the GPU the point is placed against.
    pub gpu: usize,
    /// Where the same operator was at batch 1 (intensity FLOP/B, attainable), for the trail.
    pub batch1: Option<(f64, FlopsPerSecond)>,
    /// Whether the chart names this point even among many (totals, reference points).
    pub named: bool,
}

/// Everything the roofline chart draws.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct RooflineData {
    /// GPUs, each with its slope and ceilings.
    pub gpus: Vec<RooflineGpu>,
    /// PointSpec points.
    pub points: Vec<WorkPoint>,
    /// Precision of the ceiling the points are placed under.
    pub compute_dtype: Option<Dtype>,
}

/// A workload before it is placed: name, phase, FLOPs and bytes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PointSpec {
    /// Name as shown.
    pub name: String,
    /// PointKind.
    pub phase: PointKind,
    /// FLOPs and bytes moved; `None` for a reference point given by intensity.
    pub cost: Option<(Flops, Bytes)>,
    /// Intensity in FLOP/B (FLOPs / bytes when `cost` is given).
    pub intensity_flop_per_byte: f64,
    /// FLOPs and bytes of the same operator at batch 1, for the trail.
    pub batch1: Option<(Flops, Bytes)>,
    /// Whether the chart names this point even among many (totals, reference points).
    pub named: bool,
}

impl PointSpec {
    /// From FLOPs and bytes; intensity = FLOPs / bytes (0 when bytes is 0).
    pub fn measured(
        name: impl Into<String>,
        phase: PointKind,
        flops: Flops,
        bytes: Bytes,
    ) -> PointSpec {
        PointSpec {
            name: name.into(),
            phase,
            cost: Some((flops, bytes)),
            intensity_flop_per_byte: intensity(flops, bytes),
            batch1: None,
            named: false,
        }
    }

    /// A reference workload known only by its intensity.
    pub fn at_intensity(name: impl Into<String>, intensity_flop_per_byte: f64) -> PointSpec {
        PointSpec {
            name: name.into(),
            phase: PointKind::Reference,
            cost: None,
            intensity_flop_per_byte,
            batch1: None,
            named: true,
        }
    }

    /// Marks the point to be named on the chart even among many.
    pub fn named(mut self) -> PointSpec {
        self.named = true;
        self
    }

    /// Adds the batch-1 position of the same operator (the trail's start).
    pub fn with_batch1(mut self, flops: Flops, bytes: Bytes) -> PointSpec {
        self.batch1 = Some((flops, bytes));
        self
    }
}

/// Places workloads on the roofline of `gpus[0]` under the `dtype` ceiling (falling back to
/// that GPU's lowest ceiling when `dtype` has none). Points with a non-finite or non-positive
/// intensity are left out (they cannot sit on a log axis).
pub fn roofline(gpus: Vec<RooflineGpu>, dtype: Dtype, workloads: &[PointSpec]) -> RooflineData {
    let mut points = Vec::new();
    if let Some(g) = gpus.first() {
        let ceiling = g.ceiling(dtype).or_else(|| g.ceilings.first());
        if let Some(c) = ceiling {
            for w in workloads {
                let i = w.intensity_flop_per_byte;
                if !(i.is_finite() && i > 0.0) {
                    continue;
                }
                let batch1 = w.batch1.and_then(|(f, b)| {
                    let i1 = intensity(f, b);
                    (i1.is_finite() && i1 > 0.0).then(|| (i1, g.attainable(i1, c.peak)))
                });
                points.push(WorkPoint {
                    name: w.name.clone(),
                    phase: w.phase,
                    flops: w.cost.map(|p| p.0),
                    bytes: w.cost.map(|p| p.1),
                    intensity_flop_per_byte: i,
                    attainable: g.attainable(i, c.peak),
                    bound: Bound::at(i, c.ridge_flop_per_byte),
                    gpu: 0,
                    batch1,
                    named: w.named,
                });
            }
        }
    }
    RooflineData {
        gpus,
        points,
        compute_dtype: Some(dtype),
    }
}

/// Which points a model roofline shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RooflineDetail {
    /// Prefill and decode as a whole (two points).
    Totals,
    /// The totals plus every operator (q/k/v/o, attention, MLP or experts, lm_head, …).
    Operators,
}

/// Roofline data for a model step on the selected GPUs: prefill (`prompt` tokens per
/// sequence) and decode (`context` tokens of context) at `batch` sequences, each point with its
/// trail from batch 1. FLOPs and bytes come from `core::roofline::model_ops` (per GPU under
/// tensor parallelism `tp`); points are placed under `compute`'s ceiling of the first GPU.
/// `name(key)` turns an operator key (`op_attn_q`, `op_decode_total`, …) into the shown name.
#[allow(clippy::too_many_arguments)] // reason: one step of a scenario needs all of these
pub fn model_roofline(
    model: &crate::model::ModelDesc,
    gpus: &[&Accelerator],
    precisions: &crate::calc::roofline::Precisions,
    (batch, prompt, context): (u64, u64, u64),
    tp: u64,
    compute: Dtype,
    detail: RooflineDetail,
    name: impl Fn(&str) -> String,
) -> Result<RooflineData, crate::base::error::CalcError> {
    use crate::calc::roofline::{model_ops, total, Pass, Phase as RPhase};
    let mut workloads = Vec::new();
    for (phase, seq) in [(RPhase::Prefill, prompt), (RPhase::Decode, context)] {
        let at = |b: u64| {
            model_ops(
                model,
                &Pass {
                    phase,
                    batch: b,
                    seq,
                },
                precisions,
                tp,
            )
        };
        let (ops, ops1) = (at(batch)?, at(1)?);
        let ph = match phase {
            RPhase::Prefill => PointKind::Prefill,
            RPhase::Decode => PointKind::Decode,
        };
        let (t, t1) = (total(&ops, phase), total(&ops1, phase));
        workloads.push(
            PointSpec::measured(name(&t.name_key), ph, t.flops, t.bytes)
                .with_batch1(t1.flops, t1.bytes)
                .named(),
        );
        if detail == RooflineDetail::Operators {
            for o in &ops {
                let shown = match o.window {
                    Some(w) => format!("{} ({} {w})", name(&o.name_key), name(&t.name_key)),
                    None => name(&o.name_key),
                };
                let mut wl = PointSpec::measured(shown, ph, o.flops, o.bytes);
                if let Some(o1) = ops1.iter().find(|x| {
                    x.name_key == o.name_key && x.window == o.window && x.layers == o.layers
                }) {
                    wl = wl.with_batch1(o1.flops, o1.bytes);
                }
                workloads.push(wl);
            }
        }
    }
    let rgpus = gpus
        .iter()
        .map(|a| RooflineGpu::from_accelerator(a))
        .collect();
    Ok(roofline(rgpus, compute, &workloads))
}

impl RooflineData {
    /// X range in FLOP/B as whole decades (10^a, 10^b) covering every ridge and point, at
    /// least 0.1 … 10,000.
    pub fn x_decades(&self) -> (i32, i32) {
        let mut lo: f64 = 0.1;
        let mut hi: f64 = 1e4;
        let xs = self
            .gpus
            .iter()
            .flat_map(|g| g.ceilings.iter().map(|c| c.ridge_flop_per_byte))
            .chain(self.points.iter().map(|p| p.intensity_flop_per_byte))
            .chain(self.points.iter().filter_map(|p| p.batch1.map(|b| b.0)));
        for x in xs.filter(|x| x.is_finite() && *x > 0.0) {
            lo = lo.min(x / 2.0);
            hi = hi.max(x * 4.0);
        }
        (decade_floor(lo), decade_ceil(hi))
    }

    /// Y range in FLOP/s as whole decades covering all ceilings and the slope at the left edge.
    pub fn y_decades(&self) -> (i32, i32) {
        let (xlo, _) = self.x_decades();
        let mut lo = f64::INFINITY;
        let mut hi: f64 = 1e12;
        for g in &self.gpus {
            lo = lo.min(10f64.powi(xlo) * g.bandwidth.0);
            for c in &g.ceilings {
                hi = hi.max(c.peak.0 * 2.0);
            }
        }
        for p in &self.points {
            lo = lo.min(p.attainable.0);
        }
        if !lo.is_finite() || lo <= 0.0 {
            lo = 1e9;
        }
        (decade_floor(lo), decade_ceil(hi))
    }
}

fn decade_floor(v: f64) -> i32 {
    v.log10().floor().clamp(-300.0, 300.0) as i32
}

fn decade_ceil(v: f64) -> i32 {
    v.log10().ceil().clamp(-300.0, 300.0) as i32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn l40s() -> RooflineGpu {
        RooflineGpu {
            gpu: "L40S".into(),
            bandwidth: BytesPerSecond::from_gbps(864.0),
            ceilings: vec![
                Ceiling {
                    dtype: Dtype::Bf16,
                    peak: FlopsPerSecond::from_tflops(362.05),
                    ridge_flop_per_byte: 362.05e12 / 864e9,
                },
                Ceiling {
                    dtype: Dtype::Fp8,
                    peak: FlopsPerSecond::from_tflops(733.0),
                    ridge_flop_per_byte: 733e12 / 864e9,
                },
            ],
        }
    }

    #[test]
    fn roofline_points_are_bounded_by_the_right_roof() {
        let w = [
            PointSpec::at_intensity("210", 210.0),
            PointSpec::at_intensity("1000", 1000.0),
            PointSpec::at_intensity("bad", f64::NAN),
        ];
        let r = roofline(vec![l40s()], Dtype::Bf16, &w);
        assert_eq!(r.points.len(), 2);
        // 210 FLOP/B × 864 GB/s = 181.44 TFLOP/s, below the ridge (419 FLOP/B).
        assert_eq!(r.points[0].bound, Bound::Memory);
        assert!((r.points[0].attainable.0 - 210.0 * 864e9).abs() < 1.0);
        assert_eq!(r.points[1].bound, Bound::Compute);
        assert_eq!(r.points[1].attainable, FlopsPerSecond::from_tflops(362.05));
        let (a, b) = r.x_decades();
        assert!(a <= -1 && b >= 4);
        let (ylo, yhi) = r.y_decades();
        assert!(10f64.powi(yhi) >= 733e12 && 10f64.powi(ylo) <= 0.1 * 864e9);
    }

    #[test]
    fn model_roofline_moves_decode_right_with_batch() {
        let model = crate::model::config::parse_model_text(include_str!(
            "../../../../../data/presets/meta-llama__Llama-2-7b-hf.json"
        ))
        .unwrap_or_else(|e| panic!("{e}"));
        let Ok(l40s) = crate::hardware::catalog::Catalog::builtin().get("l40s") else {
            panic!("no l40s")
        };
        let p = crate::calc::roofline::Precisions::uniform(Dtype::Bf16, Dtype::Bf16, Dtype::Bf16);
        let run = |b: u64, d: RooflineDetail| {
            model_roofline(
                &model,
                &[l40s],
                &p,
                (b, 1024, 4096),
                1,
                Dtype::Bf16,
                d,
                |k| k.to_string(),
            )
            .unwrap_or_else(|e| panic!("{e}"))
        };
        let decode = |r: &RooflineData| {
            r.points
                .iter()
                .find(|x| x.name == "op_decode_total")
                .map(|x| (x.intensity_flop_per_byte, x.bound, x.batch1.map(|b| b.0)))
        };
        let (Some((i16, b16, trail)), Some((i64, _, _))) = (
            decode(&run(16, RooflineDetail::Totals)),
            decode(&run(64, RooflineDetail::Totals)),
        ) else {
            panic!("no decode point")
        };
        // Decode stays bandwidth-bound on L40S and climbs towards the ridge with the batch.
        assert_eq!(b16, Bound::Memory);
        assert!(i64 > i16, "{i64} vs {i16}");
        let Some(i1) = trail else {
            panic!("no batch-1 trail")
        };
        assert!(
            i1 < i16 && i1 > 0.5 && i1 < 2.0,
            "batch-1 decode ≈ 1 FLOP/B, got {i1}"
        );
        // Prefill of 1,024 tokens is compute-bound.
        let t = run(16, RooflineDetail::Totals);
        let pre = t
            .points
            .iter()
            .find(|x| x.name == "op_prefill_total")
            .map(|x| x.bound);
        assert_eq!(pre, Some(Bound::Compute));
        assert_eq!(t.points.len(), 2);
        // Operators: more points, each with its trail.
        let ops = run(16, RooflineDetail::Operators);
        assert!(ops.points.len() > 6);
        assert!(ops.points.iter().all(|x| x.batch1.is_some()));
    }
}
