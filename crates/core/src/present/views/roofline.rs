//! The interactive roofline: every compared GPU's slope and ceilings, the whole-model prefill
//! and decode points and the chosen phase's operators, each explained.

use super::common::{place, weight_format, ViewGpu};
use crate::base::derivation::Derivation;
use crate::base::dtype::Dtype;
use crate::base::error::{CalcError, Phrase};
use crate::base::i18n::{tr, Lang};
use crate::calc::kv;
use crate::calc::perf;
use crate::calc::roofline::{self as rl, OpCost, Precisions};
use crate::model::ModelDesc;
use crate::present::series::{self, RooflineData, RooflineGpu};
use crate::scenario::Scenario;
use serde::{Deserialize, Serialize};

/// Which operators are shown one by one on the roofline (the whole-model points always are).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub enum OpsShown {
    /// Only the whole-model prefill and decode points.
    None,
    /// The decode step's operators.
    #[default]
    Decode,
    /// The prefill pass's operators.
    Prefill,
}

impl OpsShown {
    /// Every choice.
    pub const ALL: &'static [OpsShown] = &[OpsShown::None, OpsShown::Decode, OpsShown::Prefill];

    /// Stable id (form values, test ids).
    pub const fn id(self) -> &'static str {
        match self {
            OpsShown::None => "none",
            OpsShown::Decode => "decode",
            OpsShown::Prefill => "prefill",
        }
    }

    /// Translation key of the label.
    pub const fn label_key(self) -> &'static str {
        match self {
            OpsShown::None => "view_roof_ops_none",
            OpsShown::Decode => "view_roof_ops_decode",
            OpsShown::Prefill => "view_roof_ops_prefill",
        }
    }

    /// From its id.
    pub fn from_id(s: &str) -> Option<OpsShown> {
        Self::ALL.iter().copied().find(|o| o.id() == s)
    }
}

/// A point's explanation: its name on the chart and its derivations (intensity, attainable).
#[derive(Debug, Clone, PartialEq)]
pub struct PointDetail {
    /// The point's name (as on the chart and in its hover region id).
    pub name: String,
    /// Intensity derivation, then attainable FLOP/s on the first GPU.
    pub derivations: Vec<Derivation>,
}

/// Everything the roofline view shows.
#[derive(Debug, Clone, PartialEq)]
pub struct RooflineView {
    /// The chart data (GPUs, points with batch-1 trails).
    pub data: RooflineData,
    /// Name of the GPU the points are placed against (the first with a published ceiling;
    /// empty when none has one).
    pub anchor_name: String,
    /// Intensity of the whole-model decode step, FLOP/B.
    pub decode_intensity: f64,
    /// Intensity of the whole-model prefill pass, FLOP/B.
    pub prefill_intensity: f64,
    /// Ridge point of the anchor GPU under the points' precision, FLOP/B.
    pub ridge: f64,
    /// Explanations, one per point.
    pub details: Vec<PointDetail>,
    /// The batch the points are placed at.
    pub batch: u64,
    /// The decode context, tokens.
    pub context: u64,
    /// The prompt length of the prefill point, tokens.
    pub prompt: u64,
}

fn precisions(m: &ModelDesc, s: &Scenario) -> (Precisions, Dtype) {
    let fmt = weight_format(m, s.weight_dtype);
    let kv = s.kv_dtype.unwrap_or_else(|| kv::default_kv_dtype(m));
    (Precisions::from_format(&fmt, Dtype::Bf16, kv), fmt.dtype)
}

/// The roofline of the scenario: every GPU's slope and ceilings; the whole-model prefill
/// (batch × prompt) and decode (batch sequences at `context_len` tokens) points; the chosen
/// phase's operators (`core::roofline::model_ops`), each with a trail from batch 1. Points are
/// placed under the first GPU's roof at the precision the matmuls run at.
pub fn roofline_view(
    m: &ModelDesc,
    s: &Scenario,
    gpus: &[ViewGpu],
    ops: OpsShown,
    lang: Lang,
) -> Result<RooflineView, CalcError> {
    if m.layers.is_empty() {
        return Err(CalcError::MissingKey {
            key: "num_hidden_layers".into(),
            why: Phrase::tr("why_roofline_ops"),
        });
    }
    let lens = Lengths {
        tp: u64::from(s.tp.max(1)),
        batch: s.perf.batch.max(1),
        context: s.context_len.max(1),
        prompt: s.perf.input_len.max(1),
    };
    let (p, wdtype) = precisions(m, s);
    let phases = phase_ops(m, &p, lens)?;
    let dec_t = rl::total(&phases.dec, rl::Phase::Decode);
    let pre_t = rl::total(&phases.pre, rl::Phase::Prefill);
    let (decode_intensity, prefill_intensity) = (dec_t.intensity, pre_t.intensity);
    let placed = placed_points(&phases, pre_t, dec_t, ops);
    let (workloads, names) = named_workloads(&placed, lang);
    let rgpus: Vec<RooflineGpu> = gpus
        .iter()
        .map(|g| RooflineGpu::from_accelerator(&g.accelerator))
        .collect();
    let dtype_for = |i: usize| {
        gpus.get(i).map_or(Dtype::Bf16, |g| {
            perf::compute_dtype(wdtype, &g.accelerator).0
        })
    };
    let (data, anchor) = place(rgpus, dtype_for, &workloads);
    let cdtype = anchor.map_or(Dtype::Bf16, dtype_for);
    let anchor_name = anchor
        .and_then(|a| gpus.get(a))
        .map(|g| g.accelerator.name.clone())
        .unwrap_or_default();
    let (ridge, details) = match (
        anchor.and_then(|a| gpus.get(a)),
        anchor.and_then(|a| data.gpus.get(a)),
    ) {
        (Some(g), Some(rg)) => point_details(&placed, &names, g, rg, cdtype),
        _ => (0.0, Vec::new()),
    };
    Ok(RooflineView {
        data,
        anchor_name,
        decode_intensity,
        prefill_intensity,
        ridge,
        details,
        batch: lens.batch,
        context: lens.context,
        prompt: lens.prompt,
    })
}

/// The sizes the points are placed at: TP degree, batch, decode context and prompt length.
#[derive(Debug, Clone, Copy)]
struct Lengths {
    tp: u64,
    batch: u64,
    context: u64,
    prompt: u64,
}

/// The model's operators in both phases at the batch, and at batch 1 (for the trails) when
/// the batch is larger.
struct PhaseOps {
    dec: Vec<OpCost>,
    pre: Vec<OpCost>,
    dec1: Option<Vec<OpCost>>,
    pre1: Option<Vec<OpCost>>,
}

/// One point on the chart: the operator (or total), its batch-1 twin and its phase.
type Placed = (OpCost, Option<OpCost>, series::PointKind);

/// Runs `core::roofline::model_ops` for decode (at the context) and prefill (at the prompt),
/// at the batch and, when it is larger than 1, at batch 1.
fn phase_ops(m: &ModelDesc, p: &Precisions, lens: Lengths) -> Result<PhaseOps, CalcError> {
    let run = |phase: rl::Phase, b: u64| -> Result<Vec<OpCost>, CalcError> {
        let seq = match phase {
            rl::Phase::Prefill => lens.prompt,
            rl::Phase::Decode => lens.context,
        };
        rl::model_ops(
            m,
            &rl::Pass {
                phase,
                batch: b,
                seq,
            },
            p,
            lens.tp,
        )
    };
    let dec = run(rl::Phase::Decode, lens.batch)?;
    let pre = run(rl::Phase::Prefill, lens.batch)?;
    let (dec1, pre1) = if lens.batch > 1 {
        (
            Some(run(rl::Phase::Decode, 1)?),
            Some(run(rl::Phase::Prefill, 1)?),
        )
    } else {
        (None, None)
    };
    Ok(PhaseOps {
        dec,
        pre,
        dec1,
        pre1,
    })
}

/// The points: the whole-model prefill and decode totals, then the chosen phase's operators,
/// each with its batch-1 twin when there is one.
fn placed_points(ops: &PhaseOps, pre_t: OpCost, dec_t: OpCost, shown: OpsShown) -> Vec<Placed> {
    let mut placed: Vec<Placed> = vec![
        (
            pre_t,
            ops.pre1.as_ref().map(|v| rl::total(v, rl::Phase::Prefill)),
            series::PointKind::Prefill,
        ),
        (
            dec_t,
            ops.dec1.as_ref().map(|v| rl::total(v, rl::Phase::Decode)),
            series::PointKind::Decode,
        ),
    ];
    let (chosen, chosen1, ph) = match shown {
        OpsShown::None => (Vec::new(), None, series::PointKind::Decode),
        OpsShown::Decode => (
            ops.dec.clone(),
            ops.dec1.as_ref(),
            series::PointKind::Decode,
        ),
        OpsShown::Prefill => (
            ops.pre.clone(),
            ops.pre1.as_ref(),
            series::PointKind::Prefill,
        ),
    };
    for (i, o) in chosen.into_iter().enumerate() {
        let b1 = chosen1
            .and_then(|v| v.get(i))
            .filter(|b| b.name_key == o.name_key)
            .cloned();
        placed.push((o, b1, ph));
    }
    placed
}

/// The chart's workloads and their names in `lang`, made unique (hover regions are keyed by
/// name).
fn named_workloads(placed: &[Placed], lang: Lang) -> (Vec<series::PointSpec>, Vec<String>) {
    let name_of = |o: &OpCost| -> String {
        let base = tr(lang, &o.name_key).to_string();
        match o.window {
            Some(w) => format!("{base} (w {w})"),
            None => base,
        }
    };
    let mut workloads = Vec::with_capacity(placed.len());
    let mut names: Vec<String> = Vec::with_capacity(placed.len());
    for (o, b1, phase) in placed {
        let mut name = name_of(o);
        // Hover regions are keyed by name: keep names unique.
        let mut n = 2;
        while names.contains(&name) {
            name = format!("{} #{n}", name_of(o));
            n += 1;
        }
        names.push(name.clone());
        let mut w = series::PointSpec::measured(name, *phase, o.flops, o.bytes);
        if let Some(b) = b1 {
            w = w.with_batch1(b.flops, b.bytes);
        }
        workloads.push(w);
    }
    (workloads, names)
}

/// The anchor GPU's ridge point at `cdtype` (else its first ceiling) and each point's
/// explanation: its intensity derivation, then attainable FLOP/s under that roof.
fn point_details(
    placed: &[Placed],
    names: &[String],
    g: &ViewGpu,
    rg: &RooflineGpu,
    cdtype: Dtype,
) -> (f64, Vec<PointDetail>) {
    let c = rg.ceiling(cdtype).or_else(|| rg.ceilings.first());
    let peak = c.map(|c| c.peak).unwrap_or_default();
    let ridge = c.map_or(0.0, |c| c.ridge_flop_per_byte);
    let details = placed
        .iter()
        .zip(names)
        .map(|((o, _, _), name)| {
            let mut d = o.derivation();
            d.title_key = name.clone();
            let (_, a) = rl::attainable_derivation(peak, g.accelerator.bandwidth, o.intensity);
            PointDetail {
                name: name.clone(),
                derivations: vec![d, a],
            }
        })
        .collect();
    (ridge, details)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::present::views::common::test_util::{gpus, model};

    #[test]
    fn decode_intensity_rises_with_batch_and_prefill_is_compute_heavy() {
        // Llama-2-7b fp16 decode at batch 1: 2 FLOPs per weight of 2 bytes → about 1 FLOP/B
        // (attention over the KV cache also does ~1 FLOP per byte read). Larger batches reuse
        // each weight B times.
        let mut s = Scenario::default();
        let m = model(&s);
        let g = gpus(&["l40s", "a10g"]);
        let v1 =
            roofline_view(&m, &s, &g, OpsShown::Decode, Lang::En).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            v1.decode_intensity > 0.9 && v1.decode_intensity < 1.1,
            "{}",
            v1.decode_intensity
        );
        assert!(v1.prefill_intensity > 100.0 * v1.decode_intensity);
        // At a short context the weights dominate the bytes, so intensity grows ~×B; at long
        // contexts the KV cache (read per sequence) caps it: the chapter's MHA lesson.
        s.context_len = 256;
        s.perf.batch = 32;
        let v32 =
            roofline_view(&m, &s, &g, OpsShown::Decode, Lang::En).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            v32.decode_intensity > 10.0 * v1.decode_intensity,
            "{}",
            v32.decode_intensity
        );
        // Two GPUs' roofs; the L40S ridge = 362 TFLOP/s / 864 GB/s.
        assert_eq!(v32.data.gpus.len(), 2);
        assert!((v32.ridge - 362e12 / 864e9).abs() < 1.0, "{}", v32.ridge);
        // Every point explained, names unique, trails at batch > 1 only.
        assert_eq!(v32.details.len(), v32.data.points.len());
        let mut names: Vec<&str> = v32.data.points.iter().map(|p| p.name.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), v32.data.points.len());
        assert!(v32.data.points.iter().all(|p| p.batch1.is_some()));
        assert!(v1.data.points.iter().all(|p| p.batch1.is_none()));
        // Decode ops shown: the decode total plus its operators, all decode-coloured.
        // A GPU without a 16-bit peak (an A10G with it taken away): with it first, points sit
        // under the L40S.
        let ga =
            crate::present::views::common::test_util::without_16bit_peak(gpus(&["a10g", "l40s"]));
        let va = roofline_view(&m, &s, &ga, OpsShown::Decode, Lang::En)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(va.data.points.len(), v32.data.points.len());
        assert!(va.data.points.iter().all(|p| p.gpu == 1));
        assert_eq!(va.data.gpus[0].gpu, "NVIDIA A10G");
        assert!((va.ridge - v32.ridge).abs() < 1e-9);
        assert_eq!(va.anchor_name, "NVIDIA L40S");
        let none =
            roofline_view(&m, &s, &g, OpsShown::None, Lang::Ko).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(none.data.points.len(), 2);
    }
}
