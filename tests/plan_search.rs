//! The planner's search (`core::sim::search`): the best configuration is one the simulator
//! ran and found meeting both P99 targets, and no cheaper simulated one does; the front is
//! what no other point dominates; every cost is GPUs × price over the tokens served; the
//! launch commands carry the chosen shape; impossible targets name the nearest
//! configurations; bad input gets a sentence; the search is deterministic. And the CLI's
//! `plan --search` in text and JSON.

mod common;

use common::{gpu, qwen8b, run_cli};
use llm_serving_calculator::core::base::Lang;
use llm_serving_calculator::core::calc::Efficiencies;
use llm_serving_calculator::core::model::{parse_model_text, preset};
use llm_serving_calculator::core::sim::{
    pareto_front, search_configurations, EngineConfig, EngineKind, Key, Layout, Progress,
    SearchGpu, SearchResult, SearchSpec, Slo, Statistic,
};

fn spec(rate: f64, ttft_ms: f64, tpot_ms: f64) -> SearchSpec {
    SearchSpec {
        rate_rps: rate,
        input_len: 1024,
        output_len: 128,
        targets: Slo { ttft_ms, tpot_ms },
        statistic: Statistic::P99,
        gpus: vec![
            SearchGpu {
                gpu: gpu("h100-sxm").clone(),
                usd_per_gpu_hour: 3.0,
            },
            SearchGpu {
                gpu: gpu("l40s").clone(),
                usd_per_gpu_hour: 1.0,
            },
        ],
        engines: vec![EngineKind::Vllm, EngineKind::Sglang],
        max_gpus: 8,
        aggregated: true,
        disaggregated: true,
        speculative: true,
        base: EngineConfig::default(),
        frontend_overhead_ms: None,
        eff: Efficiencies::default(),
        shortlist: 4,
        seed: 1,
    }
}

fn run(s: &SearchSpec) -> SearchResult {
    search_configurations(&qwen8b(), "Qwen/Qwen3-8B", s, &mut |_| {}).expect("search")
}

#[test]
fn the_best_is_simulated_meets_the_targets_and_no_cheaper_simulated_point_does() {
    let s = spec(20.0, 1000.0, 40.0);
    let mut seen: Vec<Progress> = Vec::new();
    let r = search_configurations(&qwen8b(), "Qwen/Qwen3-8B", &s, &mut |p| seen.push(p))
        .expect("search");
    let b = r.best.map(|i| r.points[i]).expect("a best configuration");
    let sim = b.simulated.expect("the best was simulated");
    assert!(sim.meets && !sim.partial && sim.completed > 0);
    assert!(
        sim.p99_ttft_ms <= 1000.0 && sim.p99_tpot_ms <= 40.0,
        "{sim:?}"
    );
    for &i in &r.shortlist {
        let p = r.points[i];
        if p.simulated.is_some_and(|c| c.meets) {
            assert!(p.usd_per_m_output >= b.usd_per_m_output, "{p:?} is cheaper");
        }
    }
    // Each screened GPU and engine, then each simulation, was reported.
    let screens = seen.iter().filter(|p| p.stage == "screen").count();
    assert_eq!(screens, s.gpus.len() * s.engines.len());
    assert_eq!(
        seen.iter().filter(|p| p.stage == "simulate").count(),
        r.shortlist.len()
    );
    assert!(r.considered >= r.screened && r.screened_points >= r.screened);
}

#[test]
fn costs_are_gpus_times_price_over_the_tokens_served() {
    let s = spec(20.0, 1000.0, 40.0);
    let r = run(&s);
    for p in &r.points {
        let c = &r.candidates[p.candidate];
        let price = s
            .gpus
            .iter()
            .find(|g| g.gpu.id == c.gpu)
            .expect("gpu")
            .usd_per_gpu_hour;
        assert_eq!(p.gpus, p.replicas * c.gpus);
        let per_hour = p.gpus as f64 * price;
        let per_m = per_hour / (s.rate_rps * s.output_len as f64 * 3600.0) * 1e6;
        assert!((p.usd_per_hour - per_hour).abs() <= 1e-9 * per_hour);
        assert!((p.usd_per_m_output - per_m).abs() <= 1e-9 * per_m, "{p:?}");
        // The deployments carry the rate at no more than the headroom of their capacity,
        // unless the simulation asked for more.
        if p.simulated.is_none() {
            let need = s.rate_rps / (0.8 * p.capacity_rps);
            assert!(p.replicas as f64 >= need - 1e-9 && (p.replicas as f64) < need + 1.0);
        }
        match &c.layout {
            Layout::Aggregated { par } => assert_eq!(c.gpus, par.gpus()),
            Layout::Disaggregated {
                prefill,
                decode,
                prefill_workers,
                decode_workers,
                ..
            } => assert_eq!(
                c.gpus,
                prefill_workers * prefill.gpus() + decode_workers * decode.gpus()
            ),
        }
    }
}

#[test]
fn the_front_is_what_no_point_dominates() {
    let r = run(&spec(20.0, 1000.0, 40.0));
    assert!(!r.front.is_empty());
    let key = |i: usize| Key {
        cost: r.points[i].usd_per_m_output,
        tps: r.points[i].tokens_per_s_user,
        gpus: r.points[i].gpus,
        meets: r.points[i].meets,
        miss: 0.0,
    };
    for &f in &r.front {
        for j in 0..r.points.len() {
            let (a, b) = (key(j), key(f));
            let dominates =
                a.cost <= b.cost && a.tps >= b.tps && (a.cost < b.cost || a.tps > b.tps);
            assert!(!dominates, "point {j} dominates front point {f}");
        }
    }
    // The front of the returned points is the returned front (the front of all points is
    // among them).
    let keys: Vec<Key> = (0..r.points.len()).map(key).collect();
    let mut again = pareto_front(&keys);
    let mut front = r.front.clone();
    again.sort_unstable();
    front.sort_unstable();
    assert_eq!(again, front);
}

#[test]
fn the_commands_carry_the_chosen_shape() {
    let r = run(&spec(20.0, 1000.0, 40.0));
    let b = r.points[r.best.expect("best")];
    let c = &r.candidates[b.candidate];
    assert!(!r.commands.is_empty());
    let all = r.commands.join("\n");
    assert!(all.contains("Qwen/Qwen3-8B"), "{all}");
    let (par, prog) = match &c.layout {
        Layout::Aggregated { par } => (*par, ""),
        Layout::Disaggregated { decode, .. } => (*decode, "decode"),
    };
    assert!(all.contains(prog));
    match c.engine {
        EngineKind::Vllm => {
            assert!(all.contains(&format!(
                "vllm serve Qwen/Qwen3-8B --tensor-parallel-size {}",
                par.tp
            )));
        }
        EngineKind::Sglang => {
            assert!(all.contains(&format!(
                "--model-path Qwen/Qwen3-8B --tp {}",
                par.moe_gpus()
            )));
        }
        EngineKind::Trtllm => assert!(all.contains("trtllm-serve")),
    }
}

#[test]
fn impossible_targets_give_no_best_and_the_nearest_configurations() {
    let r = run(&spec(20.0, 1.0, 0.5));
    assert!(r.best.is_none() && r.commands.is_empty());
    assert!(!r.nearest.is_empty() && r.nearest.len() <= 3);
    for &i in &r.nearest {
        assert!(!r.points[i].meets);
    }
}

#[test]
fn mean_targets_are_met_on_the_simulated_means() {
    let mut s = spec(20.0, 150.0, 25.0);
    s.statistic = Statistic::Mean;
    let r = run(&s);
    let b = r.points[r.best.expect("best")];
    let c = b.simulated.expect("simulated");
    assert!(
        c.meets && c.mean_ttft_ms <= 150.0 && c.mean_tpot_ms <= 25.0,
        "{c:?}"
    );
    // The same numbers as P99 targets are harder: no cheaper answer.
    s.statistic = Statistic::P99;
    let p = run(&s);
    if let Some(i) = p.best {
        assert!(p.points[i].usd_per_m_output >= b.usd_per_m_output);
    }
}

#[test]
fn the_search_is_deterministic() {
    let s = spec(20.0, 1000.0, 40.0);
    assert_eq!(run(&s), run(&s));
}

#[test]
fn bad_input_gets_a_sentence() {
    let cases: Vec<(SearchSpec, &str)> = vec![
        (spec(0.0, 1000.0, 40.0), "rate"),
        (spec(f64::NAN, 1000.0, 40.0), "rate"),
        (spec(20.0, -1.0, 40.0), "ttft_p99"),
        (spec(20.0, 1000.0, f64::INFINITY), "tpot_p99"),
        (
            SearchSpec {
                engines: vec![],
                ..spec(20.0, 1000.0, 40.0)
            },
            "engine",
        ),
        (
            SearchSpec {
                max_gpus: 0,
                ..spec(20.0, 1000.0, 40.0)
            },
            "max_gpus",
        ),
        (
            SearchSpec {
                aggregated: false,
                disaggregated: false,
                ..spec(20.0, 1000.0, 40.0)
            },
            "layout",
        ),
    ];
    for (s, word) in cases {
        let e = search_configurations(&qwen8b(), "m", &s, &mut |_| {}).expect_err(word);
        let m = e.message(Lang::En);
        assert!(m.contains(word), "{word}: {m}");
        assert!(!e.message(Lang::Ko).is_empty());
    }
}

#[test]
fn a_model_that_fits_nowhere_says_why() {
    // Llama-3.1-405B in 16 bits on at most two L40S: every shape refused.
    let mut s = spec(1.0, 1000.0, 40.0);
    s.gpus = vec![SearchGpu {
        gpu: gpu("l40s").clone(),
        usd_per_gpu_hour: 1.0,
    }];
    s.max_gpus = 2;
    let m = parse_model_text(
        preset("meta-llama__Meta-Llama-3.1-405B")
            .expect("preset")
            .json(),
    )
    .expect("model");
    let e = search_configurations(&m, "m", &s, &mut |_| {}).expect_err("fits nowhere");
    assert!(
        e.message(Lang::En).contains("KV"),
        "{}",
        e.message(Lang::En)
    );
}

#[test]
fn the_cli_prints_the_best_its_commands_and_the_front() {
    let config = format!(
        "{}/data/presets/Qwen__Qwen3-8B.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let args = [
        "plan",
        "--search",
        "--config",
        &config,
        "--gpu",
        "h100-sxm",
        "--price",
        "3",
        "--rate",
        "20",
        "--input-len",
        "1024",
        "--output-len",
        "128",
        "--targets",
        "ttft_p99:1000,tpot_p99:40",
        "--engines",
        "vllm",
        "--max-gpus",
        "4",
        "--shortlist",
        "3",
    ];
    let (code, out, err) = run_cli(&args);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("best: ") && out.contains("vllm serve Qwen/Qwen3-8B"),
        "{out}"
    );
    assert!(out.contains("Pareto front"), "{out}");
    let mut json_args = args.to_vec();
    json_args.push("--json");
    let (code, out, err) = run_cli(&json_args);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    let best = v["best"].as_u64().expect("best index") as usize;
    assert!(v["points"][best]["simulated"]["meets"].as_bool() == Some(true));
    assert!(v["commands"][0]
        .as_str()
        .is_some_and(|c| c.starts_with("vllm serve")));

    // Impossible targets: exit 2 with a sentence naming them.
    let mut tight = args.to_vec();
    let i = tight
        .iter()
        .position(|a| *a == "ttft_p99:1000,tpot_p99:40")
        .expect("arg");
    tight[i] = "ttft_p99:1,tpot_p99:0.5";
    let (code, out, err) = run_cli(&tight);
    assert_eq!(code, 2);
    assert!(
        err.contains("P99 TTFT ≤ 1 ms") && err.contains("nearest"),
        "{err}"
    );
    assert!(out.contains("nearest:"), "{out}");

    // Flags the search chooses itself, and a malformed target.
    for (extra, word) in [
        (vec!["--tp", "2"], "--tp"),
        (vec!["--max-num-seqs", "8"], "--max-num-seqs"),
        (vec!["--layouts", "sideways"], "--layouts"),
        (vec!["--engines", "tgi"], "--engines"),
    ] {
        let mut a = args.to_vec();
        a.extend(extra);
        let (code, _, err) = run_cli(&a);
        assert_eq!(code, 2, "{word}");
        assert!(err.contains(word), "{word}: {err}");
    }
    let mut mixed = args.to_vec();
    mixed[i] = "ttft_mean:200,tpot_p99:40";
    let (code, _, err) = run_cli(&mixed);
    assert_eq!(code, 2);
    assert!(err.contains("one statistic"), "{err}");
    let mut mean = args.to_vec();
    mean[i] = "ttft_mean:300,tpot_mean:30";
    let (code, out, err) = run_cli(&mean);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("mean targets TTFT ≤ 300 ms"), "{out}");
    let mut bad = args.to_vec();
    bad[i] = "ttft:fast";
    let (code, _, err) = run_cli(&bad);
    assert_eq!(code, 2);
    assert!(err.contains("--targets"), "{err}");
}
