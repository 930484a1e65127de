//! Snapshots that prove a refactor changed nothing a user sees: the CLI's JSON for every preset
//! under each command, and the app's report and view data for a handful of scenarios.
//!
//! `cargo insta review` (or `INSTA_UPDATE=always cargo test --test snapshots`) accepts a
//! deliberate change; every accepted diff is named in its commit.

#![cfg(not(target_arch = "wasm32"))]

mod common;

use llm_serving_calculator::core::hardware::catalog::Catalog;
use llm_serving_calculator::core::present::report;
use llm_serving_calculator::core::present::views;
use llm_serving_calculator::core::scenario::Scenario;
use std::path::{Path, PathBuf};

/// Every preset `config.json`, sorted by file name.
fn presets() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/presets");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    let known = llm_serving_calculator::core::model::presets::all().len();
    assert_eq!(files.len(), known, "every preset has a config file here");
    files
}

/// Runs the CLI and renders what a user sees: the exit status, stdout and stderr.
fn run_cli(args: &[&str]) -> String {
    let (code, out, err) = common::run_cli(args);
    format!("exit: {code}\n--- stdout\n{out}--- stderr\n{err}")
}

/// One snapshot per preset for the command built by `args(config_path)`.
fn each_preset(command: &str, args: impl Fn(&str) -> Vec<String>) {
    for p in presets() {
        let stem = p
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("?")
            .to_string();
        let path = p.to_string_lossy().to_string();
        let mut full = vec![command.to_string()];
        full.extend(args(&path));
        let shown: Vec<String> = full
            .iter()
            .map(|a| {
                if *a == path {
                    "<preset>".to_string()
                } else {
                    a.clone()
                }
            })
            .collect();
        let refs: Vec<&str> = full.iter().map(String::as_str).collect();
        insta::with_settings!({ description => shown.join(" "), omit_expression => true }, {
            insta::assert_snapshot!(format!("{command}__{stem}"), run_cli(&refs));
        });
    }
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[test]
fn cli_model_every_preset() {
    each_preset("model", |c| {
        strings(&["--config", c, "--context", "4096", "--json"])
    });
}

#[test]
fn cli_vllm_every_preset() {
    each_preset("vllm", |c| {
        strings(&[
            "--config",
            c,
            "--gpu",
            "h100-sxm",
            "--tp",
            "8",
            "--max-model-len",
            "4096",
            "--json",
        ])
    });
}

#[test]
fn cli_perf_every_preset() {
    each_preset("perf", |c| {
        strings(&[
            "--config",
            c,
            "--gpu",
            "h100-sxm",
            "--tp",
            "2",
            "--batch",
            "8",
            "--input-len",
            "1024",
            "--output-len",
            "256",
            "--tp-sweep",
            "--json",
        ])
    });
}

/// The planner's traffic and targets, shared by `plan` for every preset and `plan --largest`.
fn traffic() -> Vec<&'static str> {
    common::traffic("5", "50")
}

#[test]
fn cli_plan_every_preset() {
    each_preset("plan", |c| {
        let gpus = [
            "--config", c, "--gpu", "a10g", "--gpu", "l40s", "--gpu", "h100-sxm",
        ];
        strings(&[&gpus[..], &traffic(), &["--json"]].concat())
    });
}

#[test]
fn cli_load_every_preset() {
    each_preset("load", |c| {
        strings(&[
            "--config",
            c,
            "--gpu",
            "h100-sxm",
            "--tp",
            "8",
            "--storage-gbps",
            "2",
            "--json",
        ])
    });
}

#[test]
fn cli_single_commands() {
    let q8 = common::QWEN3_8B;
    let calibrate = |bench: &'static str| {
        vec![
            "calibrate",
            "--bench",
            bench,
            "--config",
            q8,
            "--gpu",
            "h100-sxm",
        ]
    };
    let cases: Vec<(&str, Vec<&str>)> = vec![
        ("gpus", vec!["gpus", "--json"]),
        ("gpus_text", vec!["gpus", "--gpu", "l40s"]),
        ("perf_accuracy", vec!["perf", "--accuracy", "--json"]),
        (
            "model_params_7b",
            vec![
                "model",
                "--params",
                "7B",
                "--weights-dtype",
                "int4",
                "--json",
            ],
        ),
        (
            "plan_largest_qwen3",
            [
                &[
                    "plan",
                    "--largest",
                    "--family",
                    "qwen3",
                    "--gpu",
                    "h100-sxm",
                ][..],
                &traffic(),
                &["--gpus-per-node", "8", "--json"][..],
            ]
            .concat(),
        ),
        (
            "simulate_qwen3_8b_sharegpt",
            common::on(
                "simulate",
                q8,
                "h100-sxm",
                &[
                    "--rate",
                    "6",
                    "--num-requests",
                    "300",
                    "--dataset",
                    "sharegpt",
                    "--goodput",
                    "ttft:200,tpot:20",
                    "--json",
                ],
            ),
        ),
        (
            "simulate_sweep_text",
            common::on(
                "simulate",
                q8,
                "a100-sxm-80gb",
                &[
                    "--input-len",
                    "1024",
                    "--output-len",
                    "256",
                    "--num-requests",
                    "300",
                    "--sweep",
                    "1,4,16,inf",
                ],
            ),
        ),
        (
            "simulate_bad_rate",
            common::on("simulate", q8, "h100-sxm", &["--rate", "-1"]),
        ),
        (
            "calibrate_vllm_summary",
            calibrate("tests/fixtures/bench/vllm_bench_summary.txt"),
        ),
        (
            "calibrate_unknown_format",
            calibrate("tests/fixtures/SOURCES.md"),
        ),
        ("bad_command", vec!["nonsense"]),
        ("help", vec!["--help"]),
    ];
    snap_cli(&cases);
}

/// `--eff` (the link parameters `calibrate --fit` prints) on `perf`, `simulate` and `plan`,
/// `--frontend-overhead-ms` on `simulate`, and a bad value of each.
#[test]
fn cli_efficiencies_and_frontend() {
    let q8 = common::QWEN3_8B;
    let h100 = |cmd, rest: &[&'static str]| common::on(cmd, q8, "h100-sxm", rest);
    let cases: Vec<(&str, Vec<&str>)> = vec![
        (
            "perf_eff_json",
            common::perf(
                q8,
                "h100-sxm",
                ["8", "1024", "256"],
                &["--eff", "e_bw=0.6,e_cp=0.4", "--json"],
            ),
        ),
        (
            "simulate_eff_frontend_json",
            h100(
                "simulate",
                &[
                    "--rate",
                    "4",
                    "--num-requests",
                    "200",
                    "--eff",
                    "e_bw=0.6&e_po=2.5",
                    "--frontend-overhead-ms",
                    "20",
                    "--json",
                ],
            ),
        ),
        (
            "plan_eff_text",
            h100("plan", &[&traffic()[..], &["--eff", "e_bw=0.5"]].concat()),
        ),
        (
            "eff_bad_value",
            h100("simulate", &["--rate", "4", "--eff", "e_bw=1.5"]),
        ),
        (
            "eff_unknown_key",
            common::perf(
                q8,
                "h100-sxm",
                ["1", "10", "10"],
                &["--eff", "bandwidth=0.5"],
            ),
        ),
        (
            "frontend_bad_value",
            h100("simulate", &["--rate", "4", "--frontend-overhead-ms", "-5"]),
        ),
    ];
    snap_cli(&cases);
}

fn snap_cli(cases: &[(&str, Vec<&str>)]) {
    for (name, args) in cases {
        insta::with_settings!({ description => args.join(" "), omit_expression => true }, {
            insta::assert_snapshot!(format!("cli__{name}"), run_cli(args));
        });
    }
}

/// `calibrate --fit`: the fitted efficiencies, the errors before and after, the link.
#[test]
fn cli_calibrate_fit() {
    let fit = |rest| {
        let bench = "tests/fixtures/bench/vllm_bench_summary.txt";
        common::calibrate(bench, common::QWEN3_8B, "h100-sxm", rest)
    };
    for (name, args) in [
        ("calibrate_fit_text", fit(&["--fit"])),
        ("calibrate_fit_json", fit(&["--fit", "--json"])),
    ] {
        insta::with_settings!({ description => args.join(" "), omit_expression => true }, {
            insta::assert_snapshot!(format!("cli__{name}"), run_cli(&args));
        });
    }
}

/// `plan --simulate`: the best option re-sized on simulated P99s (text with least-loaded,
/// JSON with round-robin), and a bad router.
#[test]
fn cli_plan_simulated() {
    let q8 = common::QWEN3_8B;
    let cases: Vec<(&str, Vec<&str>)> = vec![
        (
            "plan_simulated_least_loaded",
            [
                &common::on("plan", q8, "h100-sxm", &[])[..],
                &[
                    "--rate",
                    "40",
                    "--peak-multiplier",
                    "3",
                    "--input-len",
                    "1024",
                    "--output-len",
                    "256",
                    "--ttft-ms",
                    "500",
                    "--tpot-ms",
                    "30",
                    "--simulate",
                    "--router",
                    "least-loaded",
                    "--num-requests",
                    "400",
                ][..],
            ]
            .concat(),
        ),
        (
            "plan_simulated_json",
            [
                &common::on("plan", q8, "h100-sxm", &["--gpu", "l40s"])[..],
                &traffic(),
                &["--simulate", "--num-requests", "300", "--json"][..],
            ]
            .concat(),
        ),
        (
            "plan_simulated_bad_router",
            [
                &common::on("plan", q8, "h100-sxm", &[])[..],
                &traffic(),
                &["--simulate", "--router", "random"][..],
            ]
            .concat(),
        ),
    ];
    snap_cli(&cases);
}

/// App scenarios as links would give them.
const SCENARIOS: &[(&str, &str)] = &[
    ("default", ""),
    ("chapter_a10g_l40s", "gpu=a10g&gpu=l40s&ctx=4096"),
    (
        "vllm_rule",
        "gpu=a10g&gpu=l40s&ctx=4096&rule=vllm&gmu=0.9&bs=16",
    ),
    (
        "llama70b_tp4_fp8",
        "model=meta-llama__Meta-Llama-3.1-70B&gpu=h100-sxm&tp=4&wd=fp8&kvd=fp8&ctx=8192&n=16",
    ),
    (
        "mixtral_two_gpus",
        "model=mistralai__Mixtral-8x7B-v0.1&gpu=a100-80gb&gpu=h100-sxm&tp=2&ctx=2048&n=32",
    ),
    (
        "deepseek_v3",
        "model=deepseek-ai__DeepSeek-V3&gpu=h200&tp=8&ctx=16384&n=4",
    ),
];

#[test]
fn app_reports_and_views() {
    let catalog = Catalog::builtin();
    for (name, query) in SCENARIOS {
        let (s, notices) = Scenario::from_query(query);
        let mut text = format!("notices: {notices:?}\n");
        match report::evaluate(&s, catalog) {
            Ok(r) => {
                let json = serde_json::to_string_pretty(&r).unwrap_or_else(|e| e.to_string());
                text.push_str(&format!("report:\n{json}\n"));
                text.push_str(&views_text(&r, &s, catalog));
            }
            Err(e) => text.push_str(&format!("error: {e}\n")),
        }
        // Phrases and translation keys are shown in English (`common::english`).
        let text = common::english::english(&text);
        insta::with_settings!({ description => format!("?{query}"), omit_expression => true }, {
            insta::assert_snapshot!(format!("app__{name}"), text);
        });
    }
}

/// The English rendering of the snapshots reads a phrase's `Debug` form back into the text
/// `Phrase::text` gives, and follows a bare key by its English row.
#[test]
fn snapshot_text_renders_phrases_in_english() {
    use llm_serving_calculator::core::base::{tr, Lang, Phrase};
    let p = Phrase::tr("wrn_nested_disagree")
        .val("part", "text_config \"quoted\" é")
        .sub(
            "pairs",
            Phrase::List(vec![
                Phrase::verbatim("a = 1 ≠ b = 2"),
                Phrase::tr("fnd_bool").val("b", true),
            ]),
        );
    let text = format!("notes: [\n{p:#?},\n]\ntitle_key: \"perf_ttft\",\n");
    let out = common::english::english(&text);
    let want = format!("{:?} (wrn_nested_disagree)", p.text(Lang::En));
    assert!(out.contains(&want), "{out}\nwants {want}");
    assert!(!out.contains("Verbatim"), "{out}");
    let key = format!("\"perf_ttft\" = {:?}", tr(Lang::En, "perf_ttft"));
    assert!(out.contains(&key), "{out}");
}

/// The analysis views' data for one scenario, in their Debug form.
fn views_text(r: &report::Report, s: &Scenario, catalog: &Catalog) -> String {
    use llm_serving_calculator::core::base::i18n::Lang;
    let gpus = views::ViewGpu::from_report(r);
    let m = &r.model;
    let mut t = String::new();
    let mut put = |name: &str, v: &dyn std::fmt::Debug| t.push_str(&format!("{name}: {v:#?}\n"));
    put(
        "matmul",
        &views::matmul_view(s.views.matmul, &gpus, Lang::En),
    );
    put("perf_rows", &views::perf_rows(m, s, &gpus));
    put("cost_rows", &views::cost_rows(m, s, &gpus));
    put("tp_tables", &views::tp_tables(m, s, &gpus));
    put("latency", &views::latency_curves(m, s, &gpus));
    put("planner", &views::planner_view(m, s, catalog, Lang::En));
    for ops in [
        views::OpsShown::None,
        views::OpsShown::Decode,
        views::OpsShown::Prefill,
    ] {
        let v = views::roofline_view(m, s, &gpus, ops, Lang::En);
        put(&format!("roofline {ops:?}"), &v);
    }
    put("largest", &views::largest_view(s, catalog, Lang::En));
    put("planner_ko", &views::planner_view(m, s, catalog, Lang::Ko));
    t
}
