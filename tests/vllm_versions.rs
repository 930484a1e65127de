//! `llmcalc vllm --vllm-version`: one setup's start-up figures under the rules of different
//! vLLM releases (`core::calc::memory::VllmVersion`, whose docs cite each boundary). Every
//! figure is derived here from the config's layers and the budget's blocks, groups and block
//! size, or from its concurrency × `max_model_len`; none is a hard-coded answer.

mod common;

use common::run_cli;
use common::text::commas;
use llm_serving_calculator::core::base::units::Bytes;
use llm_serving_calculator::core::calc::memory::{vllm_budget, KvProfile, VllmInputs, VllmVersion};
use serde_json::Value;

/// vLLM's default block size, tokens (the smallest block of every layout below).
const BLOCK_SIZE: u64 = 16;

fn fixture(path: &str) -> (String, Value) {
    let full = format!("{}/{path}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&full).expect("config");
    let v: Value = serde_json::from_str(&text).expect("json");
    (full, v)
}

/// `llmcalc vllm --config <path> <rest> --json`, which must succeed.
#[track_caller]
fn vllm_json(path: &str, rest: &[&str]) -> Value {
    let args = [&["vllm", "--config", path][..], rest, &["--json"]].concat();
    let (code, out, err) = run_cli(&args);
    assert_eq!(code, 0, "{args:?}: {err}");
    serde_json::from_str(&out).expect("json")
}

fn num(v: &Value, k: &str) -> u64 {
    v[k].as_u64().unwrap_or_else(|| panic!("{k}"))
}

fn lines(v: &Value) -> Vec<String> {
    v["log_lines"]
        .as_array()
        .expect("log_lines")
        .iter()
        .map(|l| l.as_str().expect("line").to_string())
        .collect()
}

/// The layers of each kind in `layer_types` (those with a cache of their own: Gemma 4's last
/// `num_kv_shared_layers` reuse earlier caches), in order of first appearance.
fn layer_kinds(cfg: &Value) -> Vec<u64> {
    let tc = cfg.get("text_config").unwrap_or(cfg);
    let types = tc["layer_types"].as_array().expect("layer_types");
    let shared = tc["num_kv_shared_layers"].as_u64().unwrap_or(0) as usize;
    let mut kinds: Vec<(&str, u64)> = Vec::new();
    for t in &types[..types.len() - shared] {
        let t = t.as_str().expect("type");
        match kinds.iter_mut().find(|(k, _)| *k == t) {
            Some((_, n)) => *n += 1,
            None => kinds.push((t, 1)),
        }
    }
    kinds.into_iter().map(|(_, n)| n).collect()
}

/// vLLM's layers per group for kinds of `counts` layers (the larger count when under `ratio`
/// times the smaller, else the smaller) and the groups they form, `Σ ⌈n / size⌉`.
fn groups(counts: &[u64], ratio: f64) -> (u64, u64) {
    let (lo, hi) = (
        *counts.iter().min().expect("kinds"),
        *counts.iter().max().expect("kinds"),
    );
    let size = if (hi as f64) < ratio * lo as f64 {
        hi
    } else {
        lo
    };
    (size, counts.iter().map(|n| n.div_ceil(size)).sum())
}

/// The same hybrid setup (sliding and full layers: gpt-oss-20b's equal pages, Gemma 4
/// 26B-A4B's unified ones) printed under vLLM 0.20 and 0.21: the same blocks and concurrency,
/// and the cache tokens `⌊blocks / groups⌋ × block_size` before, `⌊X × L⌋` after; from 0.27
/// the tokens and the concurrency share one line.
#[test]
fn a_hybrid_setup_prints_the_old_and_the_new_token_figures() {
    for (path, len) in [
        ("tests/fixtures/openai__gpt-oss-20b.json", 8_192u64),
        (
            "tests/fixtures/research/configs/google__gemma-4-26B-A4B.json",
            32_768,
        ),
    ] {
        let (full, cfg) = fixture(path);
        let l = len.to_string();
        let run = |version: &str| {
            let rest = [
                "--gpu",
                "h100-sxm",
                "--available-kv-gib",
                "20",
                "--max-model-len",
                &l,
                "--vllm-version",
                version,
            ];
            vllm_json(&full, &rest)
        };
        let (old, new, one_line) = (run("0.20.2"), run("0.21.0"), run("0.27.0"));
        assert_eq!(old["paging"], "hybrid", "{path}");
        assert_eq!(old["vllm_version"], "0.20.2");
        assert_eq!(new["vllm_version"], "0.21.0");
        let blocks = num(&old, "num_gpu_blocks");
        let x = old["max_concurrency"].as_f64().expect("concurrency");
        for v in [&new, &one_line] {
            assert_eq!(num(v, "num_gpu_blocks"), blocks, "{path}");
            assert_eq!(v["max_concurrency"].as_f64(), Some(x), "{path}");
        }
        let (_, g) = groups(&layer_kinds(&cfg), 1.5);
        let old_tokens = blocks / g * BLOCK_SIZE;
        let new_tokens = (x * len as f64).floor() as u64;
        println!("{path}: {blocks} blocks, {g} groups, X {x}: {old_tokens} vs {new_tokens}");
        assert_ne!(
            old_tokens, new_tokens,
            "{path}: the rules should differ here"
        );
        assert_eq!(num(&old, "kv_cache_tokens"), old_tokens, "{path}");
        assert_eq!(num(&new, "kv_cache_tokens"), new_tokens, "{path}");
        let size = |t: u64| format!("GPU KV cache size: {} tokens", commas(t));
        let conc = format!(
            "Maximum concurrency for {} tokens per request: {x:.2}x",
            commas(len)
        );
        assert!(lines(&old).contains(&size(old_tokens)), "{:?}", lines(&old));
        assert!(lines(&new).contains(&size(new_tokens)), "{:?}", lines(&new));
        assert!(lines(&new).contains(&conc), "{:?}", lines(&new));
        let joined = format!("{}, {conc}", size(new_tokens));
        assert!(lines(&one_line).contains(&joined), "{:?}", lines(&one_line));
        assert!(!lines(&one_line).contains(&conc));
    }
}

/// A model of recurrent layers beside attention (Qwen3.5-0.8B: 6 full-attention layers and 18
/// linear-attention ones): a request holds `⌈L / block⌉` blocks in each attention group and
/// one block in each recurrent group before vLLM 0.28, two from 0.28 (prefix caching on by
/// default, "align" mode).
#[test]
fn recurrent_groups_hold_two_blocks_per_request_from_0_28() {
    let (full, cfg) = fixture("tests/fixtures/corpus/Qwen__Qwen3.5-0.8B.json");
    let len = 262_144u64;
    let l = len.to_string();
    let run = |version: &str| {
        let rest = [
            "--gpu-memory-gib",
            "80",
            "--available-kv-gib",
            "67.08",
            "--max-model-len",
            &l,
            "--vllm-version",
            version,
        ];
        vllm_json(&full, &rest)
    };
    let kinds = layer_kinds(&cfg);
    let (size, _) = groups(&kinds, 1.25);
    let tc = cfg.get("text_config").unwrap_or(&cfg);
    let types = tc["layer_types"].as_array().expect("layer_types");
    let n_full = types.iter().filter(|t| *t == "full_attention").count() as u64;
    let (ga, gs) = (
        n_full.div_ceil(size),
        (types.len() as u64 - n_full).div_ceil(size),
    );
    for (version, state_blocks) in [("0.27.1", 1u64), ("0.28.0", 2)] {
        let v = run(version);
        assert_eq!(v["paging"], "mamba");
        let (blocks, block) = (num(&v, "num_gpu_blocks"), num(&v, "block_size"));
        let per_request = ga * len.div_ceil(block) + gs * state_blocks;
        let x = blocks as f64 / per_request as f64;
        assert_eq!(v["max_concurrency"].as_f64(), Some(x), "{version}");
        assert_eq!(
            num(&v, "kv_cache_tokens"),
            (x * len as f64) as u64,
            "{version}"
        );
    }
}

/// One group of full-attention layers (Llama-3.1-8B, 2 MiB blocks) at a `max_model_len` that
/// 16 does not divide (row 2 of `vllm_observations.csv`: 1,478 blocks, 29,000 tokens): the
/// concurrency is `blocks × 16 / L` to vLLM 0.9.0 and `blocks / ⌈L / 16⌉` from 0.9.1; the
/// tokens `blocks × 16` to 0.20 and `⌊X × L⌋` from 0.21.
#[test]
fn one_group_concurrency_counts_whole_requests_from_0_9_1() {
    let (blocks, len) = (1_478u64, 29_000u64);
    let kv = KvProfile::uniform(32, Bytes(8 * 256 * 2));
    let budget = |v: VllmVersion| {
        let inp = VllmInputs {
            vllm_version: v,
            ..VllmInputs::with_available_kv(Bytes(blocks * BLOCK_SIZE * 32 * 8 * 256 * 2), len)
        };
        vllm_budget(&inp, &kv).expect("budget")
    };
    let per_request = len.div_ceil(BLOCK_SIZE);
    let whole = blocks as f64 / per_request as f64;
    for (v, x, tokens) in [
        (
            VllmVersion::new(0, 9, 0),
            (blocks * BLOCK_SIZE) as f64 / len as f64,
            blocks * BLOCK_SIZE,
        ),
        (VllmVersion::new(0, 9, 1), whole, blocks * BLOCK_SIZE),
        (
            VllmVersion::new(0, 21, 0),
            whole,
            (whole * len as f64) as u64,
        ),
    ] {
        let b = budget(v);
        assert_eq!(b.num_gpu_blocks, blocks);
        assert_eq!(b.max_concurrency, x, "{v}");
        assert_eq!(b.kv_cache_tokens, tokens, "{v}");
    }
    assert_ne!(
        budget(VllmVersion::new(0, 9, 0)).max_concurrency,
        budget(VllmVersion::new(0, 9, 1)).max_concurrency
    );
}

/// A malformed release, or one newer than the newest line the rules know, is refused with one
/// sentence and exit status 2, as any bad flag; so is `--vllm-version` beside `--engine`.
#[test]
fn bad_versions_are_refused_with_one_sentence() {
    let (full, _) = fixture("tests/fixtures/meta-llama__Meta-Llama-3.1-8B.json");
    let newer = format!(
        "{}.{}",
        VllmVersion::NEWEST_LOGGED.major,
        VllmVersion::NEWEST_LOGGED.minor + 1
    );
    for v in ["0.x", "0", "0.19.2.1", "v0.19", "", "1.0", newer.as_str()] {
        let args = [
            "vllm",
            "--config",
            &full,
            "--gpu",
            "l40s",
            "--vllm-version",
            v,
        ];
        let (code, out, err) = run_cli(&args);
        assert_eq!(code, 2, "{v}: {out}");
        assert!(out.is_empty(), "{v}");
        assert_eq!(err.trim().lines().count(), 1, "{v}: {err}");
        assert!(err.contains("--vllm-version"), "{v}: {err}");
    }
    let args = [
        "vllm",
        "--config",
        &full,
        "--gpu",
        "l40s",
        "--engine",
        "sglang",
        "--vllm-version",
        "0.19",
    ];
    let (code, _, err) = run_cli(&args);
    assert_eq!(code, 2);
    assert!(err.contains("--vllm-version"), "{err}");
}

/// A release older than the oldest the rules know follows the oldest, and says so in the JSON
/// (the release followed, a note) and on the text output's release line.
#[test]
fn older_releases_follow_the_oldest_with_a_note() {
    let (full, _) = fixture("tests/fixtures/meta-llama__Meta-Llama-3.1-8B.json");
    let rest = ["--gpu", "l40s", "--vllm-version", "0.5.4"];
    let v = vllm_json(&full, &rest);
    let oldest = VllmVersion::OLDEST.to_string();
    assert_eq!(v["vllm_version"], oldest.as_str());
    let notes = v["notes"].as_array().expect("notes");
    assert!(notes.iter().any(|n| n == "note_vllm_version_oldest"));
    let args = [&["vllm", "--config", full.as_str()][..], &rest].concat();
    let (code, out, err) = run_cli(&args);
    assert_eq!(code, 0, "{err}");
    let line = out
        .lines()
        .find(|l| l.starts_with("vLLM "))
        .expect("the release line");
    assert!(line.contains("0.5.4") && line.contains(&oldest), "{line}");
}

/// Without the flag the figures follow the newest release the project has a log of, which the
/// help names.
#[test]
fn the_default_is_the_newest_logged_release_and_the_help_says_so() {
    let (full, _) = fixture("tests/fixtures/meta-llama__Meta-Llama-3.1-8B.json");
    let v = vllm_json(&full, &["--gpu", "l40s"]);
    let default = VllmVersion::DEFAULT.to_string();
    assert_eq!(VllmVersion::DEFAULT, VllmVersion::NEWEST_LOGGED);
    assert_eq!(v["vllm_version"], default.as_str());
    assert!(v["notes"]
        .as_array()
        .expect("notes")
        .iter()
        .all(|n| n != "note_vllm_version_oldest"));
    let (code, out, _) = run_cli(&["vllm", "--help"]);
    assert_eq!(code, 0);
    let help: String = out.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        help.contains(&format!("[default: {default}, the newest release")),
        "{help}"
    );
    assert!(help.contains(&VllmVersion::OLDEST.to_string()), "{help}");
    // The boundaries it names are the rules' own.
    for v in [
        VllmVersion::TOKENS_FROM_CONCURRENCY,
        VllmVersion::ONE_LINE,
        VllmVersion::ALIGN_STATE_BLOCKS,
    ] {
        let from = format!("from {}.{}", v.major, v.minor);
        assert!(help.contains(&from), "{from}: {help}");
    }
}
