//! Core evaluation time, native: how long one `evaluate` of a scenario takes (what the app
//! recomputes on every input change, before drawing), per preset, plus the URL round trip.
//! Reports only, never asserts. Run: `cargo run --release --example bench_core`.

use llm_serving_calculator::core::hardware::catalog::Catalog;
use llm_serving_calculator::core::model::presets;
use llm_serving_calculator::core::present::report::evaluate;
use llm_serving_calculator::core::present::views;
use llm_serving_calculator::core::scenario::{ModelSource, Scenario};
use std::hint::black_box;
use std::time::{Duration, Instant};

/// Calls per timing sample, and samples per measured case.
const CALLS: u32 = 20;
const SAMPLES: usize = 25;

/// Median and 95th percentile of per-call time over `SAMPLES` samples, in microseconds.
fn time_per_call_us(mut f: impl FnMut()) -> (f64, f64) {
    f(); // warm-up: first-use parsing of compiled-in tables
    let mut per_call: Vec<f64> = (0..SAMPLES)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..CALLS {
                f();
            }
            duration_us(start.elapsed()) / f64::from(CALLS)
        })
        .collect();
    per_call.sort_by(f64::total_cmp);
    let at = |q: f64| {
        let i = ((q * per_call.len() as f64).ceil() as usize).saturating_sub(1);
        per_call.get(i).copied().unwrap_or(f64::NAN)
    };
    (at(0.5), at(0.95))
}

fn duration_us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn main() {
    let catalog = Catalog::builtin();
    println!("bench_core: per-call time, median and p95 of {SAMPLES} samples x {CALLS} calls (microseconds)");

    let default = Scenario::default();
    let (med, p95) = time_per_call_us(|| {
        let _ = black_box(evaluate(black_box(&default), catalog));
    });
    println!("evaluate(default scenario)            median {med:9.1} us  p95 {p95:9.1} us");

    // A link that carries a pasted config (the largest query the app reads).
    let shared = Scenario {
        model: presets::get("meta-llama__Llama-2-7b-hf")
            .map(|p| ModelSource::Pasted(p.json().to_string()))
            .unwrap_or(default.model.clone()),
        context_len: 8192,
        concurrency: 3,
        ..Scenario::default()
    };
    let query = shared.to_query();
    let (med, p95) = time_per_call_us(|| {
        let _ = black_box(Scenario::from_query(black_box(&query)));
    });
    println!(
        "Scenario::from_query({} bytes)        median {med:9.1} us  p95 {p95:9.1} us",
        query.len()
    );

    let mut worst = (0.0_f64, String::new());
    let mut total = 0.0;
    let mut count = 0_u32;
    for preset in presets::all() {
        let scenario = Scenario {
            model: ModelSource::Preset(preset.id.to_string()),
            ..Scenario::default()
        };
        let pasted = Scenario {
            model: ModelSource::Pasted(preset.json().to_string()),
            ..Scenario::default()
        };
        let (med, p95) = time_per_call_us(|| {
            let _ = black_box(evaluate(black_box(&scenario), catalog));
        });
        let (med_pasted, _) = time_per_call_us(|| {
            let _ = black_box(evaluate(black_box(&pasted), catalog));
        });
        let ok = if evaluate(&scenario, catalog).is_ok() {
            ""
        } else {
            "  (error)"
        };
        println!(
            "evaluate({:<40}) median {med:9.1} us  p95 {p95:9.1} us  pasted {med_pasted:9.1} us{ok}",
            preset.id
        );
        total += med;
        count += 1;
        if med > worst.0 {
            worst = (med, preset.id.to_string());
        }
    }
    if count > 0 {
        println!(
            "bench_core: {count} presets, mean of medians {:.1} us, slowest {} ({:.1} us)",
            total / f64::from(count),
            worst.1,
            worst.0
        );
    }

    // The views the app recomputes on an input change, on top of `evaluate`.
    if let Ok(report) = evaluate(&default, catalog) {
        let gpus = views::ViewGpu::from_report(&report);
        let m = &report.model;
        let lang = llm_serving_calculator::core::base::i18n::Lang::En;
        let mut llama3 = default.clone();
        llama3.views.plan.family = llm_serving_calculator::core::calc::capacity::Family::Llama3;
        let cases: [(&str, &dyn Fn()); 6] = [
            ("views::roofline_view", &|| {
                let _ = black_box(views::roofline_view(
                    m,
                    &default,
                    &gpus,
                    views::OpsShown::Decode,
                    lang,
                ));
            }),
            ("views::perf_rows", &|| {
                let _ = black_box(views::perf_rows(m, &default, &gpus));
            }),
            ("views::cost_rows", &|| {
                let _ = black_box(views::cost_rows(m, &default, &gpus));
            }),
            ("views::latency_curves", &|| {
                let _ = black_box(views::latency_curves(m, &default, &gpus));
            }),
            ("views::planner_view", &|| {
                let _ = black_box(views::planner_view(m, &default, catalog, lang));
            }),
            ("views::largest_view (llama3)", &|| {
                let _ = black_box(views::largest_view(&llama3, catalog, lang));
            }),
        ];
        for (name, f) in cases {
            let (med, p95) = time_per_call_us(f);
            println!("{name:<38} median {med:9.1} us  p95 {p95:9.1} us");
        }
    }
}
