//! Renders every chart natively to SVG from realistic prepared data (Llama-2-7b on A10G and
//! L40S; the L40S roofline with the textbook's 210 and 1,000 FLOP/B workloads), checks the
//! structure, and writes the files to `artifacts/charts/` for people to look at.

use llm_serving_calculator::charts::{render_svg, render_svg_via, Chart, HitMap, Labels, Theme};
use llm_serving_calculator::core::base::dtype::Dtype;
use llm_serving_calculator::core::base::i18n::tr;
use llm_serving_calculator::core::base::i18n::Lang;
use llm_serving_calculator::core::base::units::{fmt_sig, Bytes, Flops, Seconds, Tokens};
use llm_serving_calculator::core::calc::memory::{textbook_for, KvProfile, TextbookBudget};
use llm_serving_calculator::core::calc::roofline::Precisions;
use llm_serving_calculator::core::hardware::catalog::{Accelerator, Catalog};
use llm_serving_calculator::core::hardware::Architecture;
use llm_serving_calculator::core::model::config::parse_model_text;
use llm_serving_calculator::core::model::ModelDesc;
use llm_serving_calculator::core::present::series::{
    batch_series, context_grid, kv_series, lt_curve, model_roofline, roofline, CostBar, CostBars,
    CostMetric, GpuBudget, LatencyThroughput, MemoryBar, MemoryBars, PointKind, PointSpec,
    RooflineDetail, RooflineGpu, MATMUL_PRESETS,
};
use plotters::prelude::SVGBackend;
use std::path::PathBuf;

const CONTEXT: u64 = 4096;
const SIZE: (u32, u32) = (720, 420);

struct Setup {
    model: ModelDesc,
    weights: Bytes,
    profile: KvProfile,
    gpus: Vec<(Accelerator, GpuBudget, TextbookBudget)>,
}

#[track_caller]
fn setup() -> Setup {
    let model = parse_model_text(include_str!(
        "../data/presets/meta-llama__Llama-2-7b-hf.json"
    ))
    .unwrap_or_else(|e| panic!("config: {e}"));
    // bf16 weights: 2 bytes per parameter.
    let weights = Bytes(model.params.total * 2);
    let profile = KvProfile::from_model(&model, Dtype::Fp16, 1, Architecture::Unknown)
        .unwrap_or_else(|e| panic!("{e}"));
    let cat = Catalog::builtin();
    let gpus = ["a10g", "l40s"]
        .iter()
        .map(|id| {
            let acc = cat.get(id).unwrap_or_else(|e| panic!("{e}")).clone();
            let (inp, budget, _) = textbook_for(&model, &acc, weights, &profile, CONTEXT)
                .unwrap_or_else(|e| panic!("{e}"));
            let short = acc.name.trim_start_matches("NVIDIA ").to_string();
            (acc, GpuBudget::from_textbook(short, &inp), budget)
        })
        .collect();
    Setup {
        model,
        weights,
        profile,
        gpus,
    }
}

fn out_dir() -> PathBuf {
    let d = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("artifacts/charts");
    std::fs::create_dir_all(&d).unwrap_or_else(|e| panic!("{e}"));
    d
}

/// Renders in light/dark and English/Korean, writes the files, returns the light English SVG.
#[track_caller]
fn render_all<C: Chart>(name: &str, chart: &C) -> (String, HitMap) {
    let dir = out_dir();
    let mut first = None;
    for (lang, dark, size, suffix) in [
        (Lang::En, false, SIZE, ""),
        (Lang::En, true, SIZE, "-dark"),
        (Lang::Ko, false, SIZE, "-ko"),
        (
            Lang::En,
            false,
            (360, chart.height_for_width(360)),
            "-narrow",
        ),
    ] {
        let labels = Labels::new(lang);
        let size = if suffix.is_empty() || suffix == "-dark" || suffix == "-ko" {
            (size.0, chart.height_for_width(size.0))
        } else {
            size
        };
        let (svg, hits) = render_svg(chart, &Theme::for_dark(dark), &labels, size)
            .unwrap_or_else(|e| panic!("{name}{suffix}: {e}"));
        // Through the two-backend wrapper the app draws with: the same document and regions.
        let via = render_svg_via::<SVGBackend, _>(chart, &Theme::for_dark(dark), &labels, size)
            .unwrap_or_else(|e| panic!("{name}{suffix} via Either: {e}"));
        assert!(
            via == (svg.clone(), hits.clone()),
            "{name}{suffix}: Either changed the SVG"
        );
        assert!(
            svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"),
            "{name}"
        );
        assert!(!hits.is_empty(), "{name}{suffix}: no hover regions");
        std::fs::write(dir.join(format!("{name}{suffix}.svg")), &svg)
            .unwrap_or_else(|e| panic!("{e}"));
        if first.is_none() {
            first = Some((svg, hits));
        }
        let t = chart.table(&labels);
        assert!(
            !t.rows.is_empty() && t.rows.iter().all(|r| r.len() == t.headers.len()),
            "{name} table"
        );
    }
    first.unwrap_or_default()
}

/// Text of every `<text>` element, in order.
fn texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|s| {
            let start = s.find('>')? + 1;
            let end = s.find("</text>")?;
            Some(s.get(start..end)?.trim().to_string())
        })
        .collect()
}

#[test]
fn memory_bars() {
    let s = setup();
    let bars = MemoryBars {
        bars: s
            .gpus
            .iter()
            .map(|(_, g, b)| {
                let kv = s.profile.per_batch(b.practical.max(1), CONTEXT);
                MemoryBar::new(
                    g.gpu.clone(),
                    g.capacity,
                    s.weights,
                    kv,
                    g.reserved,
                    Bytes::ZERO,
                )
            })
            .chain(std::iter::once(MemoryBar::new(
                "A10G (×8 requests)",
                s.gpus[0].1.capacity,
                s.weights,
                s.profile.per_batch(8, CONTEXT),
                s.gpus[0].1.reserved,
                Bytes::ZERO,
            )))
            .collect(),
    };
    let (svg, hits) = render_all("memory", &bars);
    let t = texts(&svg);
    for g in ["A10G", "L40S"] {
        assert!(t.iter().any(|x| x == g), "GPU name {g} missing");
        assert!(hits.get(&format!("{g}/kv")).is_some());
    }
    // The third bar does not fit and says so.
    assert!(t.iter().any(|x| x.starts_with("Does not fit")), "{t:?}");
    assert!(hits.get("A10G (×8 requests)/over").is_some());
}

#[test]
fn kv_chart() {
    let s = setup();
    let budgets: Vec<GpuBudget> = s.gpus.iter().map(|g| g.1.clone()).collect();
    let kv = kv_series(
        |t| s.profile.per_request(t),
        Tokens(8192),
        Tokens(CONTEXT),
        &[1, 4, 16, 64],
        &budgets,
    );
    let (svg, hits) = render_all("kv", &kv);
    let t = texts(&svg);
    // One budget line per GPU, labelled with its budget.
    for g in &budgets {
        let label = format!("{} KV budget: {}", g.gpu, g.practical().fmt_gib());
        assert!(t.contains(&label), "{label} not in {t:?}");
    }
    for b in [1, 4, 16, 64] {
        assert!(t.contains(&format!("Batch {b}")));
    }
    // Batch 16 at 4,096 tokens (32 GiB) overflows the A10G's budget: an OOM cross.
    assert!(hits.get("oom/A10G/16").is_some());
}

#[test]
fn batch_chart() {
    let s = setup();
    let budgets: Vec<GpuBudget> = s.gpus.iter().map(|g| g.1.clone()).collect();
    let grid = context_grid(Tokens(512), Tokens(32768), Tokens(CONTEXT));
    let bs = batch_series(
        |t| s.profile.per_request(t),
        &grid,
        Tokens(CONTEXT),
        &budgets,
    );
    assert_eq!(bs.lines.len(), s.gpus.len(), "one series per GPU");
    // The series agree with the memory module's textbook rule.
    for (line, (_, _, tb)) in bs.lines.iter().zip(&s.gpus) {
        assert_eq!(
            (line.current.theoretical, line.current.practical),
            (tb.theoretical, tb.practical)
        );
    }
    let (svg, hits) = render_all("batch", &bs);
    let t = texts(&svg);
    for (_, _, tb) in &s.gpus {
        let label = format!("{} → {}", tb.theoretical, tb.practical);
        assert!(t.contains(&label), "{label} not in {t:?}");
    }
    // Log₂ token axis with readable ticks.
    for tick in ["1k", "4k", "16k"] {
        assert!(
            t.iter().any(|x| x == tick),
            "tick {tick} missing from {t:?}"
        );
    }
    assert!(hits.get("current/L40S").is_some());
}

fn l40s_roofline(
    s: &Setup,
    batch: u64,
) -> llm_serving_calculator::core::present::series::RooflineData {
    let cat = Catalog::builtin();
    let l40s = cat.get("l40s").unwrap_or_else(|e| panic!("{e}"));
    let p = s.model.params.total as f64;
    // Decode step: 2·P·b FLOPs; reads the weights and the batch's KV cache.
    let decode = |b: u64| {
        (
            Flops(2.0 * p * b as f64),
            s.weights + s.profile.per_batch(b, CONTEXT),
        )
    };
    let (df, db) = decode(batch);
    let (d1f, d1b) = decode(1);
    // Prefill of 1,024 tokens: 2·P·s FLOPs; reads the weights once.
    let prefill = PointSpec::measured(
        "prefill",
        PointKind::Prefill,
        Flops(2.0 * p * 1024.0),
        s.weights,
    );
    let mut w = vec![
        PointSpec::at_intensity("210 FLOP/B", 210.0),
        PointSpec::at_intensity("1,000 FLOP/B", 1000.0),
        PointSpec::measured("decode", PointKind::Decode, df, db).with_batch1(d1f, d1b),
        prefill,
    ];
    if let Some(m) = MATMUL_PRESETS.get(1) {
        w.push(
            llm_serving_calculator::core::present::series::PointSpec::matmul(&m.matmul, "4096³"),
        );
    }
    roofline(vec![RooflineGpu::from_accelerator(l40s)], Dtype::Bf16, &w)
}

#[test]
fn roofline_chart() {
    let s = setup();
    let data = l40s_roofline(&s, 16);
    let (svg, hits) = render_all("roofline", &data);
    let t = texts(&svg);
    let Some(ridge) = data.gpus.first().and_then(|g| g.ceilings.first()) else {
        panic!("no ceiling")
    };
    // 362.05 TFLOP/s / 864 GB/s ≈ 419 FLOP/B, computed, and labelled.
    assert!((ridge.ridge_flop_per_byte - 362.05e12 / 864e9).abs() < 1e-6);
    let label = format!("Ridge {} FLOP/B (bf16)", fmt_sig(ridge.ridge_flop_per_byte));
    assert!(t.contains(&label), "{label} not in {t:?}");
    assert!(label.contains("419"));
    // Log axes show every decade.
    for tick in ["0.1", "1", "10", "100", "1,000", "10,000"] {
        assert!(
            t.iter().any(|x| x == tick),
            "x tick {tick} missing from {t:?}"
        );
    }
    for tick in ["1 T", "10 T", "100 T"] {
        assert!(
            t.iter().any(|x| x == tick),
            "y tick {tick} missing from {t:?}"
        );
    }
    // Hover: the decode point with its bound, and its batch-1 trail.
    let Some(d) = hits.get("decode") else {
        panic!("decode point not in the hit map")
    };
    assert!(
        d.lines.iter().any(|l| l == "Bandwidth-bound"),
        "{:?}",
        d.lines
    );
    assert!(hits.get("decode/batch1").is_some());
    let Some(r) = hits.get("1,000 FLOP/B") else {
        panic!("1,000 FLOP/B point missing")
    };
    assert!(r.lines.iter().any(|l| l == "Compute-bound"));
    // Batch moves the decode point right.
    let b64 = l40s_roofline(&s, 64);
    let i = |d: &llm_serving_calculator::core::present::series::RooflineData| {
        d.points
            .iter()
            .find(|p| p.name == "decode")
            .map(|p| p.intensity_flop_per_byte)
    };
    assert!(i(&b64) > i(&data));
}

#[test]
fn roofline_per_operator() {
    let s = setup();
    let cat = Catalog::builtin();
    let gpus: Vec<&Accelerator> = ["l40s", "m4-max"]
        .iter()
        .filter_map(|id| cat.get(id).ok())
        .collect();
    let p = Precisions::uniform(Dtype::Bf16, Dtype::Bf16, Dtype::Fp16);
    let lang = Lang::En;
    let data = model_roofline(
        &s.model,
        &gpus,
        &p,
        (16, 1024, CONTEXT),
        1,
        Dtype::Bf16,
        RooflineDetail::Operators,
        |k| tr(lang, k).to_string(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(data.gpus.len(), 2, "one roof per GPU");
    // Apple publishes no GPU TFLOPS for the M4 Max: a slope without ceilings.
    assert!(data.gpus[1].ceilings.is_empty());
    let (_, hits) = render_all("roofline-operators", &data);
    // Every operator point can be hovered, with its trail start.
    for p in &data.points {
        assert!(hits.get(&p.name).is_some(), "{} not hoverable", p.name);
    }
}

#[test]
fn latency_throughput_chart() {
    let s = setup();
    // A bandwidth-bound decode model: each step reads the weights and the batch's KV cache at
    // 80 % of peak bandwidth, plus 2 ms of fixed overhead.
    let curves = s
        .gpus
        .iter()
        .map(|(acc, _, tb)| {
            let bw = acc.bandwidth.0 * 0.8;
            let tpot = |b: u64| {
                let bytes = s.weights + s.profile.per_batch(b, CONTEXT);
                Some(Seconds(bytes.0 as f64 / bw + 0.002))
            };
            lt_curve(
                acc.name.trim_start_matches("NVIDIA "),
                tb.practical,
                tb.practical.min(4),
                tpot,
            )
        })
        .collect();
    let lt = LatencyThroughput { curves };
    let (svg, hits) = render_all("latency", &lt);
    assert!(texts(&svg).iter().any(|x| x == "Operating point"));
    assert!(hits.get("operating/L40S").is_some());
}

#[test]
fn cost_chart() {
    let s = setup();
    let bars = s
        .gpus
        .iter()
        .map(|(acc, g, tb)| {
            let price = acc.price.as_ref().map(|p| p.usd_per_hour).unwrap_or(0.0);
            CostBar::new(g.gpu.clone(), price, tb.practical, None)
        })
        .collect();
    let c = CostBars {
        bars,
        metric: CostMetric::PerRequestHour,
    };
    let (svg, hits) = render_all("cost", &c);
    // The chapter: the L40S costs more per hour but less per request.
    let (a, l) = (&c.bars[0], &c.bars[1]);
    assert!(l.usd_per_hour > a.usd_per_hour);
    assert!(l.usd_per_request_hour < a.usd_per_request_hour);
    assert!(texts(&svg).iter().any(|x| x.starts_with("$")));
    assert!(hits.get("L40S").is_some());
}

#[test]
fn empty_data_draws_a_message_not_an_error() {
    let labels = Labels::new(Lang::En);
    let (svg, hits) = render_svg(&MemoryBars::default(), &Theme::light(), &labels, SIZE)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(texts(&svg).iter().any(|x| x == labels.no_data));
    assert!(hits.is_empty());
    // A tiny area is an error value, not a panic.
    assert!(render_svg(&MemoryBars::default(), &Theme::light(), &labels, (40, 20)).is_err());
    let tiny =
        render_svg_via::<SVGBackend, _>(&MemoryBars::default(), &Theme::light(), &labels, (40, 20));
    assert!(tiny.is_err());
}

/// The planner's search (Qwen3-8B on an H100 and an L40S at 20 req/s, the CLI's example): the
/// points on log axes, the front as a line, the best highlighted with its tooltip.
#[test]
fn pareto_chart() {
    use llm_serving_calculator::core::hardware::Catalog;
    use llm_serving_calculator::core::present::run_search_job;
    use llm_serving_calculator::core::scenario::{GpuChoice, ModelSource, Scenario};
    let mut s = Scenario {
        model: ModelSource::Preset("qwen3-8b".into()),
        gpus: vec![
            GpuChoice::Catalog("h100-sxm".into()),
            GpuChoice::Catalog("l40s".into()),
        ],
        ..Scenario::default()
    };
    s.perf.input_len = 1024;
    s.perf.output_len = 128;
    s.views.plan.rate_rps = 20.0;
    s.views.plan.ttft_ms = 1000.0;
    s.views.plan.tpot_ms = 40.0;
    let v = run_search_job(&s.to_query(), Lang::En, Catalog::builtin(), &mut |_| {})
        .unwrap_or_else(|e| panic!("{e}"));
    let chart = v.chart(Lang::En);
    let (svg, hits) = render_all("pareto", &chart);
    let t = texts(&svg);
    for want in [
        &chart.x_title,
        &chart.y_title,
        &chart.front_label,
        &chart.best_label,
    ] {
        assert!(t.iter().any(|x| x == want), "{want} missing from {t:?}");
    }
    assert!(
        t.iter().any(|x| x.starts_with('$')),
        "no dollar tick: {t:?}"
    );
    let best = hits.get("best").unwrap_or_else(|| panic!("no best region"));
    let (row, desc) = v.best_row().unwrap_or_else(|| panic!("no best"));
    assert_eq!(best.lines[0], desc);
    assert!(best.lines[2].contains(&fmt_sig(row.usd_per_m_output)));
    assert_eq!(hits.len(), chart.points.len());
    // Nothing to draw: the chart's own sentence.
    let empty = llm_serving_calculator::core::present::ParetoChart {
        points: Vec::new(),
        ..chart
    };
    let (svg, hits) = render_svg(&empty, &Theme::light(), &Labels::new(Lang::En), SIZE)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(texts(&svg).iter().any(|x| x == &empty.empty_label) && hits.is_empty());
}
