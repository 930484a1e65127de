//! Prepared data for the analysis views: the interactive roofline, the matmul explorer, the
//! performance model per GPU (latency, throughput, cost, energy), "How accurate is this?" and
//! the capacity planner. Everything here is pure and tested natively; the UI only renders it.
//!
//! The inputs these views add to the scenario (editable efficiencies, price overrides, the
//! matmul shape, the planner's traffic and targets) live in [`ViewInputs`], which reads and
//! writes its own URL parameters so every view is shareable by link.
//!
//! Formulas are those of `core::roofline` (intensity = FLOPs / bytes; attainable =
//! min(peak, intensity × bandwidth)), `core::perf` (each operator costs max(FLOPs / (peak ×
//! e_c), bytes / (bandwidth × e_bw))), `core::calibration` (ranges from the training
//! residuals) and `core::capacity` (Little's law, replicas = ⌈rate / per-replica rate⌉).

use crate::core::base::derivation::Derivation;
use crate::core::base::dtype::Dtype;
use crate::core::base::error::{CalcError, Phrase};
use crate::core::base::i18n::{tr, Lang};
use crate::core::base::units::{fmt_sig, Seconds};
use crate::core::calc::calibration::{self, AccuracyReport, ErrorStats, Metric};
use crate::core::calc::capacity::{
    self, Candidate, Family, LargestReport, PerfTiming, Plan, PlanInputs, Targets, Traffic,
};
use crate::core::calc::kv;
use crate::core::calc::loading::{self, LoadInputs, LoadReport, OffloadInputs, OffloadReport};
use crate::core::calc::perf::{self, PerfReport};
use crate::core::calc::roofline::{self as rl, OpCost, Precisions};
use crate::core::calc::weights;
use crate::core::hardware::catalog::{Accelerator, Catalog};
use crate::core::model::{ModelDesc, WeightFormat};
use crate::core::present::report::Report;
use crate::core::present::series::{
    self, CostBar, CostBars, CostMetric, LatencyThroughput, Matmul, RooflineData, RooflineGpu,
};
use crate::core::scenario::Scenario;
use serde::{Deserialize, Serialize};

// ---------------------------------------------------------------------------------------------
// Shared helpers
// ---------------------------------------------------------------------------------------------

/// One compared GPU as the views need it: its stable key and the accelerator.
#[derive(Debug, Clone, PartialEq)]
pub struct ViewGpu {
    /// Stable key (`a10g`, `custom-1`), used in test ids.
    pub key: String,
    /// The accelerator (custom ones already validated).
    pub accelerator: Accelerator,
    /// Concurrent requests one replica serves: what memory allows at the scenario's context
    /// under the chosen budget rule, at most the requested concurrency (0 = none fits).
    pub concurrent_requests: u64,
}

impl ViewGpu {
    /// The compared GPUs of a report.
    pub fn from_report(r: &Report) -> Vec<ViewGpu> {
        r.gpus
            .iter()
            .map(|g| ViewGpu {
                key: g.key.clone(),
                accelerator: g.accelerator.clone(),
                concurrent_requests: g.requests.min(r.concurrency),
            })
            .collect()
    }
}

/// The weight format the scenario asks for: the checkpoint's, or `weight_dtype` applied.
pub fn weight_format(m: &ModelDesc, weight_dtype: Option<Dtype>) -> WeightFormat {
    match weight_dtype {
        Some(d) if d != m.weights.dtype => weights::format_for(d, m.weights.base),
        _ => m.weights.clone(),
    }
}

fn perf_workload(s: &Scenario, batch: u64) -> perf::Workload {
    let mut wl = perf::Workload::new(
        batch,
        s.perf.input_len,
        s.perf.output_len,
        u64::from(s.tp.max(1)),
    );
    wl.weights_dtype = s.weight_dtype;
    wl.kv_dtype = s.kv_dtype;
    wl
}

// ---------------------------------------------------------------------------------------------
// Roofline
// ---------------------------------------------------------------------------------------------

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

/// Places workloads under the first GPU that publishes a ceiling (the A10G publishes no dense
/// 16-bit peak, so it has none) at `dtype_for(index)`, keeping the GPUs' order, and so their
/// colours. Returns the data and the anchor's index (`None` when no GPU has a ceiling: no
/// points then).
fn place(
    mut rgpus: Vec<RooflineGpu>,
    dtype_for: impl Fn(usize) -> Dtype,
    workloads: &[series::Workload],
) -> (RooflineData, Option<usize>) {
    let Some(a) = rgpus.iter().position(|g| !g.ceilings.is_empty()) else {
        return (series::roofline(rgpus, Dtype::Bf16, workloads), None);
    };
    let g = rgpus.remove(a);
    rgpus.insert(0, g);
    let mut data = series::roofline(rgpus, dtype_for(a), workloads);
    if !data.gpus.is_empty() {
        let g = data.gpus.remove(0);
        data.gpus.insert(a.min(data.gpus.len()), g);
    }
    for p in &mut data.points {
        p.gpu = a;
    }
    (data, Some(a))
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
    let tp = u64::from(s.tp.max(1));
    let batch = s.perf.batch.max(1);
    let context = s.context_len.max(1);
    let prompt = s.perf.input_len.max(1);
    let (p, wdtype) = precisions(m, s);
    let run = |phase: rl::Phase, b: u64| -> Result<Vec<OpCost>, CalcError> {
        let seq = match phase {
            rl::Phase::Prefill => prompt,
            rl::Phase::Decode => context,
        };
        rl::model_ops(
            m,
            &rl::Workload {
                phase,
                batch: b,
                seq,
            },
            &p,
            tp,
        )
    };
    let dec = run(rl::Phase::Decode, batch)?;
    let pre = run(rl::Phase::Prefill, batch)?;
    let (dec1, pre1) = if batch > 1 {
        (
            Some(run(rl::Phase::Decode, 1)?),
            Some(run(rl::Phase::Prefill, 1)?),
        )
    } else {
        (None, None)
    };
    let dec_t = rl::total(&dec, rl::Phase::Decode);
    let pre_t = rl::total(&pre, rl::Phase::Prefill);
    let mut placed: Vec<(OpCost, Option<OpCost>, series::Phase)> = vec![
        (
            pre_t.clone(),
            pre1.as_ref().map(|v| rl::total(v, rl::Phase::Prefill)),
            series::Phase::Prefill,
        ),
        (
            dec_t.clone(),
            dec1.as_ref().map(|v| rl::total(v, rl::Phase::Decode)),
            series::Phase::Decode,
        ),
    ];
    let (chosen, chosen1, ph) = match ops {
        OpsShown::None => (Vec::new(), None, series::Phase::Decode),
        OpsShown::Decode => (dec.clone(), dec1.as_ref(), series::Phase::Decode),
        OpsShown::Prefill => (pre.clone(), pre1.as_ref(), series::Phase::Prefill),
    };
    for (i, o) in chosen.into_iter().enumerate() {
        let b1 = chosen1
            .and_then(|v| v.get(i))
            .filter(|b| b.name_key == o.name_key)
            .cloned();
        placed.push((o, b1, ph));
    }
    let name_of = |o: &OpCost| -> String {
        let base = tr(lang, &o.name_key).to_string();
        match o.window {
            Some(w) => format!("{base} (w {w})"),
            None => base,
        }
    };
    let mut workloads = Vec::with_capacity(placed.len());
    let mut names: Vec<String> = Vec::with_capacity(placed.len());
    for (o, b1, phase) in &placed {
        let mut name = name_of(o);
        // Hover regions are keyed by name: keep names unique.
        let mut n = 2;
        while names.contains(&name) {
            name = format!("{} #{n}", name_of(o));
            n += 1;
        }
        names.push(name.clone());
        let mut w = series::Workload::measured(name, *phase, o.flops, o.bytes);
        if let Some(b) = b1 {
            w = w.with_batch1(b.flops, b.bytes);
        }
        workloads.push(w);
    }
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
        (Some(g), Some(rg)) => {
            let c = rg.ceiling(cdtype).or_else(|| rg.ceilings.first());
            let peak = c.map(|c| c.peak).unwrap_or_default();
            let ridge = c.map_or(0.0, |c| c.ridge_flop_per_byte);
            let details = placed
                .iter()
                .zip(&names)
                .map(|((o, _, _), name)| {
                    let mut d = o.derivation();
                    d.title_key = name.clone();
                    let (_, a) =
                        rl::attainable_derivation(peak, g.accelerator.bandwidth, o.intensity);
                    PointDetail {
                        name: name.clone(),
                        derivations: vec![d, a],
                    }
                })
                .collect();
            (ridge, details)
        }
        _ => (0.0, Vec::new()),
    };
    Ok(RooflineView {
        data,
        anchor_name,
        decode_intensity: dec_t.intensity,
        prefill_intensity: pre_t.intensity,
        ridge,
        details,
        batch,
        context,
        prompt,
    })
}

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
        series::Workload::matmul(&shape, name),
        series::Workload::at_intensity("210 FLOP/B", 210.0),
        series::Workload::at_intensity("1,000 FLOP/B", 1000.0),
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
        compute_bound: ridge > 0.0 && intensity >= ridge,
    }
}

// ---------------------------------------------------------------------------------------------
// Performance
// ---------------------------------------------------------------------------------------------

/// The performance model for one compared GPU at the scenario's TP degree.
#[derive(Debug, Clone, PartialEq)]
pub struct PerfRow {
    /// Stable GPU key.
    pub key: String,
    /// Display name.
    pub name: String,
    /// GPUs per replica.
    pub tp: u64,
    /// Sequences served together (0 = none fits; the model then runs at 1 and the cost is
    /// not shown).
    pub batch: u64,
    /// Price per GPU-hour used (override, else catalog), US dollars.
    pub price_usd_per_gpu_hour: Option<f64>,
    /// Whether the price is the user's override.
    pub price_overridden: bool,
    /// The report, or why it could not be computed.
    pub result: Result<PerfReport, CalcError>,
    /// TTFT range from the calibration residuals (p10–p90), ms.
    pub ttft_range_ms: (f64, f64),
    /// TPOT range, ms.
    pub tpot_range_ms: (f64, f64),
    /// End-to-end latency range, ms.
    pub e2e_range_ms: (f64, f64),
}

/// The performance model for every compared GPU at the scenario's batch (the operating point).
pub fn perf_rows(m: &ModelDesc, s: &Scenario, gpus: &[ViewGpu]) -> Vec<PerfRow> {
    rows_at(m, s, gpus, |_| s.perf.batch)
}

/// The performance model for every compared GPU serving as many requests at once as its
/// memory allows ([`ViewGpu::concurrent_requests`], at least 1): the batch the cost of a
/// token depends on (the chapter: memory budget and compute bottleneck are one loop).
pub fn cost_rows(m: &ModelDesc, s: &Scenario, gpus: &[ViewGpu]) -> Vec<PerfRow> {
    rows_at(m, s, gpus, |g| g.concurrent_requests)
}

fn rows_at(
    m: &ModelDesc,
    s: &Scenario,
    gpus: &[ViewGpu],
    batch: impl Fn(&ViewGpu) -> u64,
) -> Vec<PerfRow> {
    gpus.iter()
        .map(|g| {
            let requested = batch(g);
            let wl = perf_workload(s, requested.max(1));
            let over = s.views.price(&g.key);
            let price = over.or(g.accelerator.price.as_ref().map(|p| p.usd_per_hour));
            let result = perf::evaluate(m, &g.accelerator, &wl, &s.views.eff, price);
            let range = |metric: Metric, v: Option<f64>| {
                v.map_or((f64::NAN, f64::NAN), |v| calibration::range_for(metric, v))
            };
            let ok = result.as_ref().ok();
            PerfRow {
                key: g.key.clone(),
                name: g.accelerator.name.clone(),
                tp: wl.tp,
                batch: requested,
                price_usd_per_gpu_hour: price,
                price_overridden: over.is_some(),
                ttft_range_ms: range(Metric::Ttft, ok.map(|r| r.ttft.ms())),
                tpot_range_ms: range(Metric::Tpot, ok.map(|r| r.tpot.ms())),
                e2e_range_ms: range(Metric::E2e, ok.map(|r| r.e2e.ms())),
                result,
            }
        })
        .collect()
}

/// The tensor-parallel sweep of one compared GPU ([`perf::tp_sweep`] at the scenario's batch,
/// lengths and precisions; the scenario's TP is the chosen row).
#[derive(Debug, Clone, PartialEq)]
pub struct TpTable {
    /// Stable GPU key.
    pub key: String,
    /// Display name.
    pub name: String,
    /// One row per TP degree, ascending.
    pub rows: Vec<perf::TpRow>,
    /// The rows' notes, each once, in order of first appearance, without the per-row "batch
    /// does not fit" (the table marks it in the row).
    pub notes: Vec<perf::PerfNote>,
}

/// The tensor-parallel sweep for every compared GPU.
pub fn tp_tables(m: &ModelDesc, s: &Scenario, gpus: &[ViewGpu]) -> Vec<TpTable> {
    let wl = perf_workload(s, s.perf.batch.max(1));
    gpus.iter()
        .map(|g| {
            let price =
                s.views
                    .price(&g.key)
                    .or(g.accelerator.price.as_ref().map(|p| p.usd_per_hour));
            let rows = perf::tp_sweep(m, &g.accelerator, &wl, &s.views.eff, price);
            let mut notes: Vec<perf::PerfNote> = Vec::new();
            for n in rows
                .iter()
                .filter_map(|r| r.result.as_ref().ok())
                .flat_map(|r| &r.notes)
            {
                if !matches!(n, perf::PerfNote::BatchDoesNotFit { .. }) && !notes.contains(n) {
                    notes.push(n.clone());
                }
            }
            TpTable {
                key: g.key.clone(),
                name: g.accelerator.name.clone(),
                rows,
                notes,
            }
        })
        .collect()
}

/// Cost bars ($ per million output tokens) from the performance rows.
pub fn cost_bars(rows: &[PerfRow]) -> CostBars {
    CostBars {
        bars: rows
            .iter()
            .filter_map(|r| {
                let rep = r.result.as_ref().ok()?;
                let price = r.price_usd_per_gpu_hour.unwrap_or(f64::NAN) * r.tp as f64;
                let serves = rep.fits && r.batch > 0;
                Some(CostBar::new(
                    format!("{} × {}", r.name, r.tp),
                    price,
                    if serves { rep.batch } else { 0 },
                    serves.then_some(rep.output_tokens_per_s),
                ))
            })
            .collect(),
        metric: CostMetric::PerMillionTokens,
    }
}

/// Largest batch the latency–throughput curve is sampled to.
pub const CURVE_MAX_BATCH: u64 = 4096;

/// The latency–throughput curves: per GPU, tokens/s per user (1 / TPOT) against total
/// tokens/s (batch / TPOT) for batch 1 … the largest batch memory allows (at most
/// [`CURVE_MAX_BATCH`]), with the scenario's batch as the operating point.
pub fn latency_curves(m: &ModelDesc, s: &Scenario, gpus: &[ViewGpu]) -> LatencyThroughput {
    let base = perf_workload(s, 1);
    let curves = gpus
        .iter()
        .map(|g| {
            let max_b = perf::max_batch_for(m, &g.accelerator, &base).min(CURVE_MAX_BATCH);
            series::lt_curve(
                format!("{} × {}", g.accelerator.name, base.tp),
                max_b,
                s.perf.batch,
                |b| {
                    perf::evaluate(m, &g.accelerator, &perf_workload(s, b), &s.views.eff, None)
                        .ok()
                        .map(|r| r.tpot)
                        .filter(|t: &Seconds| t.0.is_finite() && t.0 > 0.0)
                },
            )
        })
        .collect();
    LatencyThroughput { curves }
}

// ---------------------------------------------------------------------------------------------
// Accuracy
// ---------------------------------------------------------------------------------------------

/// One calibration row on the accuracy scatter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AccPoint {
    /// Measured value (ms, or tokens/s for throughput).
    pub measured: f64,
    /// Predicted value, same unit.
    pub predicted: f64,
    /// Held out of the fit.
    pub test: bool,
    /// Hover text: model, GPU, TP, batch, lengths, engine.
    pub label: String,
}

/// The accuracy scatter of one metric, with its translated strings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AccuracyScatter {
    /// The metric.
    pub metric: Metric,
    /// Points.
    pub points: Vec<AccPoint>,
    /// X axis title ("Measured (ms)").
    pub x_title: String,
    /// Y axis title ("Predicted (ms)").
    pub y_title: String,
    /// Legend: training rows.
    pub train_label: String,
    /// Legend: held-out rows.
    pub test_label: String,
    /// Legend: the y = x line.
    pub exact_label: String,
    /// Legend: the ±25 % band.
    pub band_label: String,
    /// "No data".
    pub empty_label: String,
}

/// Translation key of a metric's name.
pub const fn metric_key(m: Metric) -> &'static str {
    match m {
        Metric::Ttft => "perf_ttft",
        Metric::Tpot => "perf_tpot",
        Metric::E2e => "perf_e2e_latency",
        Metric::Throughput => "perf_output_tokens_per_s",
    }
}

/// Unit of a metric.
pub const fn metric_unit(m: Metric) -> &'static str {
    match m {
        Metric::Throughput => "tokens/s",
        _ => "ms",
    }
}

/// The scatter for one metric from the accuracy report.
pub fn accuracy_scatter(r: &AccuracyReport, metric: Metric, lang: Lang) -> AccuracyScatter {
    let unit = metric_unit(metric);
    let points = r
        .rows
        .iter()
        .filter(|a| a.row.metric == metric)
        .filter(|a| a.row.measured.is_finite() && a.predicted.is_finite())
        .filter(|a| a.row.measured > 0.0 && a.predicted > 0.0)
        .map(|a| AccPoint {
            measured: a.row.measured,
            predicted: a.predicted,
            test: a.row.test,
            label: format!(
                "{} · {} × {} · B {} · {}/{} · {} · {} {} → {} {} ({:+.0}%)",
                a.row.model,
                a.row.gpu,
                a.row.tp,
                a.row.batch,
                a.row.input_len,
                a.row.output_len,
                a.row.engine,
                fmt_sig(a.row.measured),
                unit,
                fmt_sig(a.predicted),
                unit,
                a.rel_error * 100.0
            ),
        })
        .collect();
    AccuracyScatter {
        metric,
        points,
        x_title: format!("{} ({unit})", tr(lang, "view_acc_measured")),
        y_title: format!("{} ({unit})", tr(lang, "view_acc_predicted")),
        train_label: tr(lang, "view_acc_train").to_string(),
        test_label: tr(lang, "view_acc_test").to_string(),
        exact_label: tr(lang, "view_acc_exact").to_string(),
        band_label: tr(lang, "view_acc_band").to_string(),
        empty_label: tr(lang, "chart_no_data").to_string(),
    }
}

/// One row of the error table: a metric with its training and held-out statistics.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AccStatRow {
    /// The metric.
    pub metric: Metric,
    /// Training rows.
    pub train: ErrorStats,
    /// Held-out rows.
    pub test: ErrorStats,
    /// Issue 5's target for the held-out median, when there is one (fraction).
    pub target: Option<f64>,
    /// Whether the held-out median meets the target (`None` without a target or rows).
    pub meets: Option<bool>,
}

/// The error table.
pub fn accuracy_stats(r: &AccuracyReport) -> Vec<AccStatRow> {
    r.stats
        .iter()
        .map(|(m, tr, te)| AccStatRow {
            metric: *m,
            train: *tr,
            test: *te,
            target: m.target(),
            meets: m
                .target()
                .filter(|_| te.n > 0 && te.median.is_finite())
                .map(|t| te.median <= t),
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Planner
// ---------------------------------------------------------------------------------------------

/// Most options drawn on the cost-against-load chart (the cheapest at the peak; the table
/// lists them all).
pub const PLAN_CHART_MAX_SERIES: usize = 4;

/// One option's cost against the load, for the chart.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanCostSeries {
    /// "H100 SXM × TP 1".
    pub name: String,
    /// (rate req/s, US dollars per hour).
    pub points: Vec<(f64, f64)>,
    /// Whether this is the best option.
    pub best: bool,
}

/// The planner's cost-against-load chart with its translated strings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanCostChart {
    /// One series per viable priced option.
    pub series: Vec<PlanCostSeries>,
    /// Average rate, req/s (a marker).
    pub avg_rate: f64,
    /// Peak rate, req/s (a marker).
    pub peak_rate: f64,
    /// X axis title.
    pub x_title: String,
    /// Y axis title.
    pub y_title: String,
    /// Marker label: average.
    pub avg_label: String,
    /// Marker label: peak.
    pub peak_label: String,
    /// "No data".
    pub empty_label: String,
}

/// Load time and offloading figures of one candidate.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanLoad {
    /// GPU display name and TP ("H100 SXM × 2").
    pub name: String,
    /// Load and cold start, or why not.
    pub load: Result<LoadReport, CalcError>,
    /// Decode with weights or KV in host memory, or why not.
    pub offload: Result<OffloadReport, CalcError>,
}

/// Everything the planner view shows.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannerView {
    /// The ranked options (also when no option meets the targets).
    pub plan: Option<Plan>,
    /// Why no option is chosen, or why the inputs are refused.
    pub error: Option<CalcError>,
    /// Cost against load.
    pub chart: PlanCostChart,
    /// Load and offload per candidate GPU (at the TP of its first option).
    pub loads: Vec<PlanLoad>,
    /// Compared GPUs left out of the plan (custom accelerators are not in the catalog).
    pub left_out: Vec<String>,
}

/// The planner inputs from the scenario: traffic (rate, peak, the scenario's prompt and
/// output lengths), targets, the compared catalog GPUs with any price overrides.
pub fn plan_inputs(s: &Scenario) -> (PlanInputs, Vec<String>) {
    let p = &s.views.plan;
    let mut left_out = Vec::new();
    let mut candidates = Vec::new();
    for (i, g) in s.gpus.iter().enumerate() {
        match g {
            crate::core::scenario::GpuChoice::Catalog(id) => {
                let mut c = Candidate::new(id);
                c.price_usd_per_gpu_hour = s.views.price(&g.key(i));
                c.gpus_per_node = p.gpus_per_node;
                candidates.push(c);
            }
            crate::core::scenario::GpuChoice::Custom(c) => left_out.push(c.name.clone()),
        }
    }
    (
        PlanInputs {
            traffic: Traffic::mean(
                p.rate_rps,
                p.peak_multiplier,
                s.perf.input_len,
                s.perf.output_len,
            ),
            targets: Targets::from_ms(p.ttft_ms, p.tpot_ms),
            candidates,
        },
        left_out,
    )
}

/// Runs the planner for the scenario: options ranked by cost at the peak, the reason each
/// loses, cost against load, and load/offload figures per candidate.
pub fn planner_view(m: &ModelDesc, s: &Scenario, catalog: &Catalog, lang: Lang) -> PlannerView {
    let (inp, left_out) = plan_inputs(s);
    let timing = PerfTiming {
        model: m,
        eff: s.views.eff,
        weights_dtype: s.weight_dtype,
        kv_dtype: s.kv_dtype,
    };
    let (plan, error) = match capacity::options(&inp, catalog, &timing) {
        Ok(p) => {
            let e = capacity::feasibility_error(&p);
            (Some(p), e)
        }
        Err(e) => (None, Some(e)),
    };
    let mut chart = PlanCostChart {
        series: Vec::new(),
        avg_rate: inp.traffic.avg_rate_rps,
        peak_rate: inp.traffic.peak_rate_rps(),
        x_title: tr(lang, "view_plan_load_axis").to_string(),
        y_title: tr(lang, "view_plan_cost_axis").to_string(),
        avg_label: tr(lang, "view_plan_avg").to_string(),
        peak_label: tr(lang, "view_plan_peak_marker").to_string(),
        empty_label: tr(lang, "chart_no_data").to_string(),
    };
    let mut loads = Vec::new();
    if let Some(p) = &plan {
        let curve = capacity::cost_curve(p, 61);
        let best = p.best_option().map(|o| (o.gpu.clone(), o.tp));
        chart.series = curve
            .series
            .iter()
            .map(|cs| {
                let name = p
                    .options
                    .iter()
                    .find(|o| o.gpu == cs.gpu && o.tp == cs.tp)
                    .map_or(cs.gpu.clone(), |o| format!("{} × {}", o.gpu_name, o.tp));
                PlanCostSeries {
                    name,
                    points: curve
                        .rates_rps
                        .iter()
                        .copied()
                        .zip(cs.cost_per_hour.iter().copied())
                        .collect(),
                    best: best.as_ref() == Some(&(cs.gpu.clone(), cs.tp)),
                }
            })
            .take(PLAN_CHART_MAX_SERIES)
            .collect();
        let mut seen: Vec<String> = Vec::new();
        for o in &p.options {
            if seen.contains(&o.gpu) || o.max_batch_memory == 0 {
                continue;
            }
            seen.push(o.gpu.clone());
            let Ok(gpu) = catalog.get(&o.gpu) else {
                continue;
            };
            let load = loading::load_time(
                m,
                gpu,
                &LoadInputs {
                    tp: o.tp,
                    weights_dtype: s.weight_dtype,
                    ..LoadInputs::default()
                },
            );
            let offload = loading::offload(
                m,
                gpu,
                &OffloadInputs {
                    batch: 1,
                    input_len: s.perf.input_len,
                    output_len: s.perf.output_len,
                    tp: o.tp,
                    weights_dtype: s.weight_dtype,
                    kv_dtype: s.kv_dtype,
                    ..OffloadInputs::default()
                },
                &s.views.eff,
            );
            loads.push(PlanLoad {
                name: format!("{} × {}", o.gpu_name, o.tp),
                load,
                offload,
            });
        }
    }
    PlannerView {
        plan,
        error,
        chart,
        loads,
        left_out,
    }
}

/// GPUs per node the planner's field shows: the override, else the catalog default of the
/// first compared catalog GPU (8, the chapter's node, when none), within the accepted range.
pub fn planner_gpus_per_node(s: &Scenario, catalog: &Catalog) -> u32 {
    let (lo, hi) = capacity::GPUS_PER_NODE_RANGE;
    s.views
        .plan
        .gpus_per_node
        .or_else(|| {
            s.gpus.iter().find_map(|g| match g {
                crate::core::scenario::GpuChoice::Catalog(id) => {
                    catalog.get(id).ok().map(capacity::default_gpus_per_node)
                }
                crate::core::scenario::GpuChoice::Custom(_) => None,
            })
        })
        .unwrap_or(8)
        .clamp(lo, hi)
}

/// One size in "largest model that meets the target".
#[derive(Debug, Clone, PartialEq)]
pub struct LargestRow {
    /// Model name.
    pub name: String,
    /// Total parameters.
    pub params_total: u64,
    /// Active parameters per token.
    pub params_active: u64,
    /// Whether it fits inside one node of some candidate.
    pub fits: bool,
    /// Whether some option meets both targets.
    pub meets: bool,
    /// Whether this is the largest size that meets the targets.
    pub largest: bool,
    /// The best option, when one meets the targets.
    pub best: Option<capacity::PlanOption>,
    /// Why not, in the display language.
    pub why_not: Option<String>,
}

/// The "largest model that meets the target" section.
#[derive(Debug, Clone, PartialEq)]
pub struct LargestView {
    /// The family shown.
    pub family: Family,
    /// One row per size, largest first.
    pub rows: Vec<LargestRow>,
    /// One sentence from the live numbers (the chapter's point), when the inputs are valid.
    pub conclusion: Option<String>,
    /// Why the inputs are refused.
    pub error: Option<CalcError>,
}

/// "Largest model that meets the target" for the planner's family, candidates, traffic and
/// targets (`capacity::largest_in_family`), with a one-sentence conclusion in `lang`.
pub fn largest_view(s: &Scenario, catalog: &Catalog, lang: Lang) -> LargestView {
    let (inp, _) = plan_inputs(s);
    let family = s.views.plan.family;
    let r = capacity::largest_in_family(
        family,
        &inp,
        catalog,
        s.weight_dtype,
        s.kv_dtype,
        &s.views.eff,
    );
    match r {
        Ok(r) => LargestView {
            family,
            conclusion: Some(largest_conclusion(&r, &inp, lang)),
            rows: r
                .verdicts
                .iter()
                .enumerate()
                .map(|(i, v)| LargestRow {
                    name: v.model.clone(),
                    params_total: v.params_total,
                    params_active: v.params_active,
                    fits: v.fits,
                    meets: v.meets_targets,
                    largest: r.largest == Some(i),
                    best: v.best.clone(),
                    why_not: v.error.as_ref().map(|e| e.message(lang)),
                })
                .collect(),
            error: None,
        },
        Err(e) => LargestView {
            family,
            rows: Vec::new(),
            conclusion: None,
            error: Some(e),
        },
    }
}

fn option_name(o: &capacity::PlanOption) -> String {
    format!("{} × {}", o.gpu_name, o.tp)
}

/// The conclusion: the largest size that meets the targets against the next smaller one that
/// does.
fn largest_conclusion(r: &LargestReport, inp: &PlanInputs, lang: Lang) -> String {
    let usd = |v: Option<f64>| v.map_or("—".to_string(), |c| format!("${}", fmt_sig(c)));
    let fill = |key: &str| {
        tr(lang, key)
            .replace("{family}", r.family.name())
            .replace("{ttft}", &fmt_sig(inp.targets.ttft.ms()))
            .replace("{tpot}", &fmt_sig(inp.targets.tpot.ms()))
    };
    let big = r.largest.and_then(|i| r.verdicts.get(i));
    let small = r.next_smaller.and_then(|i| r.verdicts.get(i));
    match (big, small) {
        (Some(b), Some(sm)) => {
            let (Some(bo), Some(so)) = (&b.best, &sm.best) else {
                return fill("plan_largest_none");
            };
            fill("plan_largest_bigger")
                .replace("{big}", &b.model)
                .replace("{small}", &sm.model)
                .replace(
                    "{ratio}",
                    &fmt_sig(b.params_total as f64 / sm.params_total.max(1) as f64),
                )
                .replace("{big_opt}", &option_name(bo))
                .replace("{small_opt}", &option_name(so))
                .replace("{big_rps}", &fmt_sig(bo.requests_per_s_per_replica))
                .replace("{small_rps}", &fmt_sig(so.requests_per_s_per_replica))
                .replace("{big_cost}", &usd(bo.usd_per_million_tokens_avg))
                .replace("{small_cost}", &usd(so.usd_per_million_tokens_avg))
                .replace("{big_gpus}", &bo.gpus_peak.to_string())
                .replace("{small_gpus}", &so.gpus_peak.to_string())
        }
        (Some(b), _) => fill("plan_largest_only")
            .replace("{big}", &b.model)
            .replace(
                "{big_opt}",
                &b.best.as_ref().map(option_name).unwrap_or_default(),
            ),
        _ => fill("plan_largest_none"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::calc::perf::Efficiencies;
    use crate::core::present::report::model_of;
    use crate::core::scenario::{
        parse_gpus_per_node, view_inputs_from_query, NoticeKind, PlannerInputs, ViewInputs,
    };
    use crate::core::scenario::{GpuChoice, ModelSource};

    #[track_caller]
    fn model(s: &Scenario) -> ModelDesc {
        match model_of(&s.model) {
            Ok(m) => m,
            Err(e) => panic!("{e}"),
        }
    }

    fn gpus(ids: &[&str]) -> Vec<ViewGpu> {
        ids.iter()
            .filter_map(|id| Catalog::builtin().get(id).ok())
            .map(|a| ViewGpu {
                key: a.id.clone(),
                accelerator: a.clone(),
                concurrent_requests: 1,
            })
            .collect()
    }

    #[test]
    fn view_inputs_round_trip_through_the_scenario_query() {
        let mut s = Scenario::default();
        s.views.eff.compute_decode = 0.61;
        s.views.eff.step_overhead_s = 0.0025;
        s.views.matmul = Matmul {
            m: 1,
            n: 4096,
            k: 4096,
        };
        s.views.plan.rate_rps = 2.5;
        s.views.plan.tpot_ms = 30.0;
        s.views.set_price("l40s", Some(1.25));
        let q = s.to_query();
        let (back, notices) = Scenario::from_query(&q);
        assert!(notices.is_empty(), "{q}: {notices:?}");
        assert_eq!(back.views, s.views, "{q}");
        assert_eq!(view_inputs_from_query(&q), s.views);
        // Defaults add nothing to the link.
        assert_eq!(ViewInputs::default().query_parts(), Vec::<String>::new());
    }

    #[test]
    fn bad_view_parameters_fall_back_with_a_notice() {
        let (s, notices) =
            Scenario::from_query("e_bw=2&e_cd=abc&mm_m=0&pl_rate=-1&price=zz&pl_peak=4");
        assert_eq!(s.views.eff, Efficiencies::default());
        assert_eq!(s.views.matmul, Matmul::default());
        assert_eq!(s.views.plan, PlannerInputs::default());
        assert!(s.views.prices.is_empty());
        let kinds: Vec<(&str, NoticeKind)> =
            notices.iter().map(|n| (n.param.as_str(), n.kind)).collect();
        assert_eq!(
            kinds,
            vec![
                ("e_bw", NoticeKind::OutOfRange),
                ("e_cd", NoticeKind::Invalid),
                ("mm_m", NoticeKind::OutOfRange),
                ("pl_rate", NoticeKind::OutOfRange),
                ("price", NoticeKind::Invalid),
            ]
        );
    }

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
        // The A10G publishes no 16-bit peak: with it first, points sit under the L40S.
        let ga = gpus(&["a10g", "l40s"]);
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

    #[test]
    fn perf_rows_cost_and_curves() {
        let mut s = Scenario::default();
        s.perf.batch = 4;
        let m = model(&s);
        let g = gpus(&["a10g", "l40s"]);
        let rows = perf_rows(&m, &s, &g);
        assert_eq!(rows.len(), 2);
        for r in &rows {
            let rep = r.result.as_ref().unwrap_or_else(|e| panic!("{e}"));
            assert!(r.tpot_range_ms.0 <= rep.tpot.ms() && rep.tpot.ms() <= r.tpot_range_ms.1);
            // $/M tokens = price × tp / 3600 / tokens/s × 10^6.
            if let (Some(p), Some(c)) = (r.price_usd_per_gpu_hour, rep.usd_per_million_tokens) {
                let want = p / 3600.0 / rep.output_tokens_per_s * 1e6;
                assert!((c - want).abs() < 1e-9 * want.max(1.0));
            }
        }
        // The chapter's conclusion (WORKED_EXAMPLES §3): the L40S costs more per hour but holds
        // 16 requests to the A10G's 4, so each token is cheaper on it.
        let r = crate::core::present::report::evaluate(&s, Catalog::builtin())
            .unwrap_or_else(|e| panic!("{e}"));
        let vg = ViewGpu::from_report(&r);
        assert_eq!(
            vg.iter().map(|g| g.concurrent_requests).collect::<Vec<_>>(),
            vec![4, 16]
        );
        let cr = cost_rows(&m, &s, &vg);
        let mtok = |i: usize| {
            cr[i]
                .result
                .as_ref()
                .ok()
                .and_then(|r| r.usd_per_million_tokens)
                .unwrap_or(f64::NAN)
        };
        assert!(mtok(1) < mtok(0), "L40S {} vs A10G {}", mtok(1), mtok(0));
        // A price override flows into the cost.
        s.views.set_price("l40s", Some(10.0));
        let over = perf_rows(&m, &s, &g);
        assert_eq!(over[1].price_usd_per_gpu_hour, Some(10.0));
        assert!(over[1].price_overridden);
        let bars = cost_bars(&over);
        assert_eq!(bars.bars.len(), 2);
        // Curves: throughput rises with batch, per-user speed falls.
        let lt = latency_curves(&m, &s, &g);
        assert_eq!(lt.curves.len(), 2);
        for c in &lt.curves {
            assert!(c.points.len() > 1);
            for w in c.points.windows(2) {
                assert!(w[1].total_tokens_per_s >= w[0].total_tokens_per_s);
                assert!(w[1].per_user_tokens_per_s <= w[0].per_user_tokens_per_s);
            }
            assert_eq!(c.operating.map(|o| o.batch), Some(4));
        }
    }

    #[test]
    fn tp_tables_per_gpu_with_notes() {
        // Default scenario (its TP), on the A10G and the L40S: one table each, the scenario's
        // degree marked once, and the A10G's "no published peak" note under its table only.
        let mut s = Scenario::default();
        s.perf.batch = 2;
        let m = model(&s);
        let g = gpus(&["a10g", "l40s"]);
        let t = tp_tables(&m, &s, &g);
        assert_eq!(
            t.iter().map(|x| x.key.as_str()).collect::<Vec<_>>(),
            ["a10g", "l40s"]
        );
        for tb in &t {
            let chosen: Vec<u64> = tb.rows.iter().filter(|r| r.chosen).map(|r| r.tp).collect();
            assert_eq!(chosen, [u64::from(s.tp.max(1))], "{}", tb.key);
            assert!(tb.rows.windows(2).all(|w| w[0].tp < w[1].tp));
            assert!(tb.rows.len() > 1, "{}", tb.key);
            assert!(!tb
                .notes
                .iter()
                .any(|n| matches!(n, perf::PerfNote::BatchDoesNotFit { .. })));
        }
        let no_peak = |tb: &TpTable| {
            tb.notes
                .iter()
                .any(|n| matches!(n, perf::PerfNote::NoPeak { .. }))
        };
        assert!(no_peak(&t[0]));
        assert!(!no_peak(&t[1]));
        // The per-GPU rows carry the same note, in both languages.
        let rows = perf_rows(&m, &s, &g);
        let rep = rows[0].result.as_ref().unwrap_or_else(|e| panic!("{e}"));
        assert!(rep.compute_untimed());
        for n in &rep.notes {
            assert_ne!(n.message(Lang::En), n.message(Lang::Ko));
        }
    }

    #[test]
    fn accuracy_scatter_and_stats() {
        let r = calibration::accuracy_table();
        let stats = accuracy_stats(&r);
        assert!(!stats.is_empty());
        for m in Metric::ALL {
            let sc = accuracy_scatter(&r, *m, Lang::Ko);
            let n = r.rows.iter().filter(|a| a.row.metric == *m).count();
            assert!(sc.points.len() <= n);
            assert!(sc
                .points
                .iter()
                .all(|p| p.measured > 0.0 && p.predicted > 0.0));
        }
    }

    #[test]
    fn planner_ranks_options_and_explains_impossible_targets() {
        let mut s = Scenario {
            gpus: vec![
                GpuChoice::Catalog("l40s".into()),
                GpuChoice::Catalog("h100-sxm".into()),
            ],
            ..Scenario::default()
        };
        let m = model(&s);
        let v = planner_view(&m, &s, Catalog::builtin(), Lang::En);
        let p = v.plan.as_ref().unwrap_or_else(|| panic!("{:?}", v.error));
        assert!(v.error.is_none(), "{:?}", v.error);
        assert!(p.best.is_some());
        assert!(!v.chart.series.is_empty() && v.chart.series.len() <= PLAN_CHART_MAX_SERIES);
        assert!(v.chart.series.iter().filter(|c| c.best).count() == 1);
        assert!(!v.loads.is_empty());
        // Every non-best row says why it loses.
        for (i, o) in p.options.iter().enumerate() {
            assert_eq!(o.reason.is_none(), Some(i) == p.best, "{o:?}");
        }
        // A TPOT target no option can meet is an error with the rows still shown.
        s.views.plan.tpot_ms = 0.01;
        let v = planner_view(&m, &s, Catalog::builtin(), Lang::En);
        assert!(v.error.is_some());
        assert!(v.plan.is_some_and(|p| !p.options.is_empty()));
        // Quick mode and custom GPUs do not panic.
        s.model = ModelSource::Quick {
            params: 7_000_000_000,
            dtype: Dtype::Bf16,
        };
        s.gpus
            .push(GpuChoice::Custom(crate::core::scenario::default_custom()));
        let m2 = model(&s);
        let v = planner_view(&m2, &s, Catalog::builtin(), Lang::Ko);
        assert_eq!(v.left_out.len(), 1);
        assert!(roofline_view(&m2, &s, &gpus(&["l40s"]), OpsShown::Decode, Lang::En).is_err());
    }

    #[test]
    fn planner_node_and_family_round_trip_and_refuse_nonsense() {
        let mut s = Scenario::default();
        s.views.plan.gpus_per_node = Some(4);
        s.views.plan.family = Family::Llama3;
        let q = s.to_query();
        assert!(
            q.contains("pl_node=4") && q.contains("pl_fam=llama3"),
            "{q}"
        );
        let (back, notices) = Scenario::from_query(&q);
        assert!(notices.is_empty(), "{q}: {notices:?}");
        assert_eq!(back.views.plan, s.views.plan);
        // Zero, too many, not a number, an unknown family: a notice each, defaults kept.
        let (lo, hi) = capacity::GPUS_PER_NODE_RANGE;
        let bad = format!(
            "pl_node=0&pl_node={}&pl_node=two&pl_fam=gemma&pl_node=-1",
            hi + 1
        );
        let (s2, notices) = Scenario::from_query(&bad);
        assert_eq!(s2.views.plan, PlannerInputs::default());
        let kinds: Vec<(&str, NoticeKind)> =
            notices.iter().map(|n| (n.param.as_str(), n.kind)).collect();
        assert_eq!(
            kinds,
            vec![
                ("pl_node", NoticeKind::OutOfRange),
                ("pl_node", NoticeKind::OutOfRange),
                ("pl_node", NoticeKind::Invalid),
                ("pl_fam", NoticeKind::Invalid),
                ("pl_node", NoticeKind::Invalid),
            ]
        );
        assert_eq!(parse_gpus_per_node(&lo.to_string()), Ok(lo));
        assert_eq!(parse_gpus_per_node(&hi.to_string()), Ok(hi));
        // The field shows the override, else the first catalog GPU's node.
        let mut s3 = Scenario {
            gpus: vec![GpuChoice::Catalog("rtx-4090".into())],
            ..Scenario::default()
        };
        let c = Catalog::builtin();
        let want = c
            .get("rtx-4090")
            .map(capacity::default_gpus_per_node)
            .unwrap_or(0);
        assert_eq!(planner_gpus_per_node(&s3, c), want);
        s3.views.plan.gpus_per_node = Some(2);
        assert_eq!(planner_gpus_per_node(&s3, c), 2);
        // …and the plan uses it: no in-node option has a TP above 2.
        let m = model(&s3);
        let v = planner_view(&m, &s3, c, Lang::En);
        let p = v.plan.unwrap_or_else(|| panic!("{:?}", v.error));
        assert!(p.options.iter().all(|o| o.gpus_per_node == 2
            && (o.tp <= 2 || o.reason == Some(capacity::Reason::CrossesNodes))));
    }

    #[test]
    fn largest_view_names_the_largest_size_in_both_languages() {
        let mut s = Scenario {
            gpus: vec![GpuChoice::Catalog("h100-sxm".into())],
            ..Scenario::default()
        };
        s.views.plan.family = Family::Llama3;
        s.views.plan.ttft_ms = 3000.0;
        s.views.plan.tpot_ms = 60.0;
        for lang in [Lang::En, Lang::Ko] {
            let v = largest_view(&s, Catalog::builtin(), lang);
            assert!(v.error.is_none(), "{:?}", v.error);
            assert_eq!(v.rows.len(), Family::Llama3.preset_ids().len());
            let picks: Vec<&LargestRow> = v.rows.iter().filter(|r| r.largest).collect();
            assert_eq!(picks.len(), 1, "{:?}", v.rows);
            let pick = picks[0];
            // The pick is the first (largest) row that meets; every row above it misses.
            let i = v.rows.iter().position(|r| r.largest).unwrap_or(usize::MAX);
            assert!(v
                .rows
                .iter()
                .take(i)
                .all(|r| !r.meets && r.why_not.is_some()));
            assert!(pick.meets);
            // Compared with the next smaller size that meets (Llama 3.1 8B below 70B).
            let c = v.conclusion.clone().unwrap_or_default();
            assert!(c.contains(&pick.name), "{c}");
            let next = v.rows.iter().skip(i + 1).find(|r| r.meets);
            let n = next.unwrap_or_else(|| panic!("{:?}", v.rows));
            assert!(
                c.contains(&n.name) && n.params_total < pick.params_total,
                "{c}"
            );
            let o = pick.best.as_ref().unwrap_or_else(|| panic!("{pick:?}"));
            assert!(c.contains(&fmt_sig(o.requests_per_s_per_replica)), "{c}");
            assert!(!c.contains('{'), "unfilled placeholder: {c}");
        }
        // Targets no size meets: the "none" sentence, rows still shown.
        s.views.plan.tpot_ms = 0.5;
        let v = largest_view(&s, Catalog::builtin(), Lang::Ko);
        assert!(v.rows.iter().all(|r| !r.meets && !r.largest));
        assert_eq!(
            v.conclusion.as_deref(),
            Some(
                tr(Lang::Ko, "plan_largest_none")
                    .replace("{family}", Family::Llama3.name())
                    .replace("{ttft}", "3000")
                    .replace("{tpot}", "0.5")
                    .as_str()
            )
        );
        // GPUs per node 0 (not reachable from the URL, but from code): a sentence, no panic.
        s.views.plan.gpus_per_node = Some(0);
        let v = largest_view(&s, Catalog::builtin(), Lang::En);
        assert!(
            matches!(v.error, Some(CalcError::OutOfRange { .. })),
            "{v:?}"
        );
    }
}
