//! `--eff` and `--frontend-overhead-ms` on the CLI: the numbers each command prints with them
//! are the core's for the same efficiencies and frontend path (computed here through the
//! core, not copied), the link parameters `calibrate --fit` prints are accepted as they are,
//! and bad values exit 2 with one sentence.

#![cfg(not(target_arch = "wasm32"))]

mod common;

use common::{h100, on, perf, qwen8b, run_cli, QWEN3_8B as Q8};
use llm_serving_calculator::core::calc::{evaluate, Efficiencies, Workload};
use llm_serving_calculator::core::sim::{
    simulate, Arrival, EngineConfig, Lengths, SimConfig, StepModelKind, WorkloadSpec,
};
use serde_json::Value;

fn json_of(args: &[&str]) -> Value {
    let (code, out, err) = run_cli(args);
    assert_eq!(code, 0, "{args:?}: {err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?}: {e}\n{out}"))
}

fn f(v: &Value, k: &str) -> f64 {
    v[k].as_f64().unwrap_or_else(|| panic!("{k} in {v}"))
}

/// 150 requests of 1,024 + 128 tokens at 3 per second (Poisson), as the commands below ask
/// with `--rate 3 --num-requests 150`.
fn poisson_3_per_s() -> WorkloadSpec {
    WorkloadSpec {
        arrival: Arrival::Poisson { rate: 3.0 },
        lengths: Lengths::Fixed {
            input: 1024,
            output: 128,
        },
        num_requests: 150,
        ..WorkloadSpec::default()
    }
}

#[test]
fn perf_uses_the_given_efficiencies() {
    let eff = Efficiencies {
        bandwidth: 0.6,
        compute_prefill: 0.4,
        step_overhead_s: 2.5e-3,
        ..Efficiencies::default()
    };
    let core = evaluate(
        &qwen8b(),
        h100(),
        &Workload::new(8, 1024, 256, 1),
        &eff,
        None,
    )
    .expect("core");
    let v = json_of(&perf(
        Q8,
        "h100-sxm",
        ["8", "1024", "256"],
        &["--eff", "e_bw=0.6,e_cp=0.4", "--eff", "e_so=2.5", "--json"],
    ));
    assert_eq!(f(&v, "ttft_ms"), core.ttft.ms());
    assert_eq!(f(&v, "tpot_ms"), core.tpot.ms());
    // And they differ from the defaults' (the flag is not ignored).
    let d = json_of(&perf(Q8, "h100-sxm", ["8", "1024", "256"], &["--json"]));
    assert!(f(&d, "tpot_ms") < f(&v, "tpot_ms"));
}

#[test]
fn simulate_uses_the_given_efficiencies_and_frontend_path() {
    let eff = Efficiencies {
        bandwidth: 0.5,
        prefill_overhead_s: 4e-3,
        ..Efficiencies::default()
    };
    let cfg = SimConfig {
        engine: EngineConfig {
            frontend_overhead_ms: 30.0,
            // `--eff` selects the roofline, whose efficiencies they are.
            step_model: StepModelKind::Roofline,
            ..EngineConfig::default()
        },
        workload: poisson_3_per_s(),
        efficiencies: eff,
        ..SimConfig::default()
    };
    let core = simulate(&qwen8b(), h100(), &cfg).expect("core");
    let v = json_of(&on(
        "simulate",
        Q8,
        "h100-sxm",
        &[
            "--rate",
            "3",
            "--num-requests",
            "150",
            "--eff",
            "?e_bw=0.5&e_po=4",
            "--frontend-overhead-ms",
            "30",
            "--json",
        ],
    ));
    assert_eq!(f(&v, "median_ttft_ms"), core.ttft_ms.median);
    assert_eq!(f(&v, "p99_tpot_ms"), core.tpot_ms.p99);
    assert_eq!(f(&v, "mean_e2el_ms"), core.e2el_ms.mean);
}

/// `--no-async-scheduling` and `--enable-expert-parallel` are switches: they take no value,
/// stand anywhere (also last) and give what the core gives with the same engine settings.
#[test]
fn engine_switches_take_no_value() {
    let cfg = SimConfig {
        engine: EngineConfig {
            async_scheduling: false,
            ..EngineConfig::default()
        }
        .with_expert_parallel(true),
        workload: poisson_3_per_s(),
        ..SimConfig::default()
    };
    let core = simulate(&qwen8b(), h100(), &cfg).expect("core");
    let base = ["--rate", "3", "--num-requests", "150"];
    for switches in [
        [
            "--json",
            "--no-async-scheduling",
            "--enable-expert-parallel",
        ],
        [
            "--enable-expert-parallel",
            "--no-async-scheduling",
            "--json",
        ],
    ] {
        let v = json_of(&on(
            "simulate",
            Q8,
            "h100-sxm",
            &[&base[..], &switches[..]].concat(),
        ));
        assert_eq!(f(&v, "mean_tpot_ms"), core.tpot_ms.mean, "{switches:?}");
        assert_eq!(f(&v, "mean_ttft_ms"), core.ttft_ms.mean, "{switches:?}");
    }
}

/// What `calibrate --fit` prints as `url_params` is accepted by `--eff` unchanged, and a
/// simulation with it reproduces the fitted run's statistics.
#[test]
fn the_fit_link_parameters_feed_back_into_the_commands() {
    let bench = "tests/fixtures/bench/vllm_bench_summary.txt";
    let calibrate = |rest: &[&str]| {
        let head = [
            "calibrate",
            "--bench",
            bench,
            "--config",
            Q8,
            "--gpu",
            "h100-sxm",
        ];
        json_of(&[&head[..], rest].concat())
    };
    let fit = calibrate(&["--fit", "--json"]);
    let params = fit["fitted"]["url_params"]
        .as_str()
        .expect("url_params")
        .to_string();
    assert!(params.contains("e_"), "{params}");
    let again = calibrate(&["--eff", &params, "--json"]);
    // Each compared statistic now has the error the fit reached.
    let after: Vec<(String, f64)> = fit["fitted"]["errors"]
        .as_array()
        .expect("errors")
        .iter()
        .map(|e| {
            (
                e["key"].as_str().unwrap_or("").to_string(),
                f(e, "relative_error_after"),
            )
        })
        .collect();
    let now = again["comparisons"].as_array().expect("comparisons");
    for (key, err) in &after {
        let c = now
            .iter()
            .find(|c| c["key"].as_str() == Some(key))
            .unwrap_or_else(|| panic!("{key}"));
        assert!(
            (f(c, "relative_error") - err).abs() < 1e-9,
            "{key}: {} vs {err}",
            f(c, "relative_error")
        );
    }
    let link = ["--eff", params.as_str(), "--json"];
    json_of(&perf(Q8, "h100-sxm", ["4", "500", "50"], &link));
    json_of(&on(
        "simulate",
        Q8,
        "h100-sxm",
        &[&["--rate", "2", "--num-requests", "50"][..], &link].concat(),
    ));
}

#[test]
fn bad_values_exit_2_with_one_sentence() {
    for (cmd, extra, needle) in [
        (
            "simulate",
            vec!["--rate", "2", "--eff", "e_bw=2"],
            "e_bw=\"2\" is out of range",
        ),
        (
            "perf",
            vec![
                "--batch",
                "1",
                "--input-len",
                "8",
                "--output-len",
                "8",
                "--eff",
                "e_cd=x",
            ],
            "e_cd=\"x\" is not a number",
        ),
        (
            "plan",
            vec![
                "--rate",
                "2",
                "--input-len",
                "512",
                "--output-len",
                "64",
                "--ttft-ms",
                "1000",
                "--tpot-ms",
                "50",
                "--eff",
                "e_zz=1",
            ],
            "its keys are",
        ),
        (
            "simulate",
            vec!["--rate", "2", "--frontend-overhead-ms", "NaN"],
            "--frontend-overhead-ms must be a number from 0 to 10000",
        ),
    ] {
        let args = on(cmd, Q8, "h100-sxm", &extra);
        let (code, out, err) = run_cli(&args);
        assert_eq!(code, 2, "{args:?}");
        assert!(out.is_empty(), "{out}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    }
}

#[test]
fn help_names_the_shared_options() {
    for args in [vec!["--help"], vec!["simulate", "--help"]] {
        let (code, out, _) = run_cli(&args);
        assert_eq!(code, 0);
        for needle in ["--eff e_bw=", "--frontend-overhead-ms", "url_params"] {
            assert!(out.contains(needle), "{needle}: {out}");
        }
    }
}
