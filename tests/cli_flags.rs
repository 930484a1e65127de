//! The command line's flags: a misspelled flag is refused with the nearest known one on every
//! command, `--num-prompts` is `--num-requests`, `<command> --help` lists every flag with its
//! default, and the shell completions name every command.

mod common;

use common::{on, run_cli, QWEN3_8B as Q8};
use llm_serving_calculator::cli::{opts, COMMANDS};
use llm_serving_calculator::core::calc::{DEFAULT_BLOCK_SIZE, DEFAULT_GPU_MEMORY_UTILIZATION};
use llm_serving_calculator::core::sim::engines::{
    SGLANG_MAX_PREFILL_TOKENS, TRTLLM_FREE_GPU_MEMORY_FRACTION, TRTLLM_MAX_BATCH_SIZE,
    TRTLLM_MAX_NUM_TOKENS, TRTLLM_TOKENS_PER_BLOCK,
};
use llm_serving_calculator::core::sim::{
    DEFAULT_FRONTEND_OVERHEAD_MS, SGLANG_FRONTEND_OVERHEAD_MS, TRTLLM_FRONTEND_OVERHEAD_MS,
};

#[test]
fn a_misspelled_flag_is_refused_with_the_nearest_on_every_command() {
    for (cmd, bad, good) in [
        ("model", "--contxt", "--context"),
        ("vllm", "--block-sise", "--block-size"),
        ("gpus", "--jsn", "--json"),
        ("perf", "--batchh", "--batch"),
        ("plan", "--ttft-m", "--ttft-ms"),
        ("load", "--storag", "--storage"),
        ("simulate", "--max-num-seq", "--max-num-seqs"),
        ("calibrate", "--bnch", "--bench"),
    ] {
        assert!(COMMANDS.iter().any(|(c, _)| *c == cmd), "{cmd}");
        let (code, out, err) = run_cli(&[cmd, "--json", bad, "8"]);
        assert_eq!(code, 2, "{cmd} {bad}: {out}");
        assert!(out.is_empty(), "{cmd}: {out}");
        assert_eq!(
            err,
            format!(
                "llmcalc {cmd}: unknown option {bad}; did you mean {good}? \
                 (llmcalc {cmd} --help lists every option)\n"
            )
        );
    }
    // The same sentence for `--flag=value`, and none of it for an unrelated word.
    let (code, _, err) = run_cli(&["simulate", "--max-num-seq=8"]);
    assert_eq!(code, 2);
    assert!(err.contains("did you mean --max-num-seqs?"), "{err}");
    let (code, _, err) = run_cli(&["gpus", "--frobnicate"]);
    assert_eq!(code, 2);
    assert_eq!(
        err,
        "llmcalc gpus: unknown option --frobnicate (llmcalc gpus --help lists every option)\n"
    );
}

#[test]
fn num_prompts_is_num_requests() {
    let run = |flag: &'static str| {
        let args = on(
            "simulate",
            Q8,
            "h100-sxm",
            &["--rate", "8", flag, "40", "--json"],
        );
        let (code, out, err) = run_cli(&args);
        assert_eq!(code, 0, "{flag}: {err}");
        out
    };
    let requests = run("--num-requests");
    assert!(requests.contains("\"num_prompts\": 40"), "{requests}");
    assert_eq!(run("--num-prompts"), requests);
}

/// What `help` says of `--long`: its line and, when clap puts the description below the flag,
/// the lines up to the next flag.
fn help_line(help: &str, long: &str) -> Option<String> {
    let bare = format!("--{long}");
    let mut lines = help.lines().skip_while(|l| {
        let t = l.trim_start();
        !(t.starts_with(&bare)
            && (t.len() == bare.len() || t[bare.len()..].starts_with([' ', '<'])))
    });
    let first = lines.next()?;
    let rest = lines.take_while(|l| !l.trim_start().starts_with('-') && !l.trim().is_empty());
    Some(
        std::iter::once(first)
            .chain(rest)
            .collect::<Vec<_>>()
            .join(" "),
    )
}

#[test]
fn help_lists_every_flag_with_its_default() {
    let command = opts::command();
    for sub in command.get_subcommands() {
        let name = sub.get_name();
        let (code, help, err) = run_cli(&[name, "--help"]);
        assert_eq!(code, 0, "{name}: {err}");
        assert!(help.contains(&format!("Usage: llmcalc {name}")), "{help}");
        for arg in sub.get_arguments().filter(|a| !a.is_hide_set()) {
            let Some(long) = arg.get_long() else {
                continue;
            };
            let line = help_line(&help, long)
                .unwrap_or_else(|| panic!("{name} --help does not list --{long}:\n{help}"));
            for d in arg.get_default_values() {
                let want = format!("[default: {}]", d.to_string_lossy());
                assert!(line.contains(&want), "{name} --{long}: {line}");
            }
        }
    }
    // The defaults are typed figures, shown as clap shows them.
    let (_, help, _) = run_cli(&["simulate", "--help"]);
    let (util, block) = (
        DEFAULT_GPU_MEMORY_UTILIZATION.to_string(),
        DEFAULT_BLOCK_SIZE.to_string(),
    );
    let (batch, tokens, per_block, fraction) = (
        TRTLLM_MAX_BATCH_SIZE.to_string(),
        TRTLLM_MAX_NUM_TOKENS.to_string(),
        TRTLLM_TOKENS_PER_BLOCK.to_string(),
        TRTLLM_FREE_GPU_MEMORY_FRACTION.to_string(),
    );
    let prefill = SGLANG_MAX_PREFILL_TOKENS.to_string();
    for (flag, default) in [
        ("num-requests", "1000"),
        ("gpu-memory-utilization", util.as_str()),
        ("block-size", block.as_str()),
        ("max-batch-size", batch.as_str()),
        ("max-num-tokens", tokens.as_str()),
        ("tokens-per-block", per_block.as_str()),
        ("free-gpu-memory-fraction", fraction.as_str()),
        ("max-prefill-tokens", prefill.as_str()),
        ("seed", "0"),
    ] {
        let line = help_line(&help, flag).unwrap_or_default();
        assert!(line.contains(&format!("[default: {default}]")), "{line}");
    }
    // The server path's default is each engine's fitted constant.
    let line = help_line(&help, "frontend-overhead-ms").unwrap_or_default();
    for (engine, ms) in [
        ("vLLM", DEFAULT_FRONTEND_OVERHEAD_MS),
        ("SGLang", SGLANG_FRONTEND_OVERHEAD_MS),
        ("TensorRT-LLM", TRTLLM_FRONTEND_OVERHEAD_MS),
    ] {
        assert!(line.contains(&format!("{engine} {ms}")), "{line}");
    }
    assert!(help.contains("[alias: --num-prompts]"), "{help}");
}

#[test]
fn bash_completions_name_every_command() {
    let (code, out, err) = run_cli(&["completions", "bash"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("llmcalc"), "{out}");
    for (cmd, _) in COMMANDS {
        assert!(out.contains(&format!("llmcalc,{cmd})")), "{cmd} missing");
    }
    assert!(out.contains("--num-prompts") && out.contains("--max-num-seqs"));
    for shell in ["zsh", "fish", "powershell", "elvish"] {
        let (code, out, err) = run_cli(&["completions", shell]);
        assert_eq!(code, 0, "{shell}: {err}");
        assert!(out.contains("simulate"), "{shell}");
    }
    let (code, out, err) = run_cli(&["completions", "tcsh"]);
    assert_eq!((code, out.as_str()), (2, ""));
    assert_eq!(
        err,
        "llmcalc completions: SHELL must be one of bash, elvish, fish, powershell, zsh, not \"tcsh\"\n"
    );
}

#[test]
fn help_and_version_exit_0_on_stdout() {
    for args in [
        vec!["--version"],
        vec!["-V"],
        vec!["gpus", "--help"],
        vec!["gpus", "-h"],
    ] {
        let (code, out, err) = run_cli(&args);
        assert_eq!((code, err.as_str()), (0, ""), "{args:?}");
        assert!(!out.is_empty(), "{args:?}");
    }
    let (_, out, _) = run_cli(&["--version"]);
    assert_eq!(out, format!("llmcalc {}\n", env!("CARGO_PKG_VERSION")));
}

#[test]
fn a_missing_value_or_a_stray_word_is_one_sentence() {
    for (args, want) in [
        (vec!["gpus", "--gpu"], "llmcalc gpus: --gpu needs a value\n"),
        (
            vec!["model", "seven"],
            "llmcalc model: unexpected argument \"seven\"; options start with --\n",
        ),
        (
            vec!["completions"],
            "llmcalc completions: SHELL is required\n",
        ),
    ] {
        let (code, out, err) = run_cli(&args);
        assert_eq!(
            (code, out.as_str(), err.as_str()),
            (2, "", want),
            "{args:?}"
        );
    }
}

/// `--engine` picks the engine; each takes its own flags, and another engine's flag is refused
/// with the one to use (exit 2, one sentence). The text result names the engine's knobs.
#[test]
fn each_engine_takes_its_own_flags() {
    let base = [
        "simulate",
        "--config",
        Q8,
        "--gpu",
        "h100-sxm",
        "--rate",
        "inf",
        "--num-requests",
        "20",
    ];
    let with = |extra: &[&str]| {
        let mut a: Vec<&str> = base.to_vec();
        a.extend_from_slice(extra);
        run_cli(&a)
    };
    for (engine, ok, foreign, instead) in [
        (
            "sglang",
            "--max-running-requests",
            "--max-num-seqs",
            "--max-running-requests",
        ),
        (
            "trtllm",
            "--max-batch-size",
            "--max-running-requests",
            "max_batch_size",
        ),
        (
            "vllm",
            "--max-num-seqs",
            "--max-batch-size",
            "--max-num-seqs",
        ),
    ] {
        let (code, out, err) = with(&["--engine", engine, ok, "8"]);
        assert_eq!(code, 0, "{engine}: {err}");
        if engine != "vllm" {
            assert!(out.contains("Engine / "), "{out}");
        }
        let (code, out, err) = with(&["--engine", engine, foreign, "8"]);
        assert_eq!(code, 2, "{engine} {foreign}: {out}");
        assert!(
            err.contains(&format!("{foreign} is")) && err.contains(instead),
            "{engine} {foreign}: {err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    let (code, _, err) = with(&["--engine", "tgi"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("--engine must be vllm, sglang or trtllm"),
        "{err}"
    );
    let (code, _, err) = with(&["--engine", "sglang", "--mem-fraction-static", "1.5"]);
    assert_eq!(code, 2, "{err}");
    // TensorRT-LLM's batch waiting and SGLang's state-pool flags belong to their engines.
    for (engine, flag, value) in [
        ("trtllm", "--batch-wait-timeout-iters", "20"),
        ("trtllm", "--batch-wait-max-tokens-ratio", "0.9"),
        ("sglang", "--max-mamba-cache-size", "64"),
        ("sglang", "--mamba-full-memory-ratio", "0.5"),
    ] {
        let (code, _, err) = with(&["--engine", engine, flag, value]);
        assert_eq!(code, 0, "{engine} {flag}: {err}");
        let (code, _, err) = with(&["--engine", "vllm", flag, value]);
        assert_eq!(code, 2, "vllm {flag}: {err}");
        assert!(err.contains(&format!("{flag} is")), "{err}");
    }
    let (code, _, err) = with(&["--engine", "trtllm", "--batch-wait-max-tokens-ratio", "2"]);
    assert_eq!(code, 2, "{err}");
}

/// `llmcalc vllm --engine sglang|trtllm` prints that engine's KV pool by its own rule, whose
/// terms its JSON gives: the pool is the rule applied to them, and the tokens are whole pages
/// of it. vLLM's own flags are refused beside it, and a GPU from the catalog is needed.
#[test]
fn vllm_engine_prints_the_other_engines_pool_by_its_rule() {
    for engine in ["sglang", "trtllm"] {
        let (code, out, err) = run_cli(&[
            "vllm", "--config", Q8, "--gpu", "h100-sxm", "--engine", engine, "--json",
        ]);
        assert_eq!(code, 0, "{err}");
        let v: serde_json::Value = serde_json::from_str(&out).expect("json");
        let b = |k: &str| v["inputs"][k]["bytes"].as_f64().expect(k);
        let f = v["inputs"]["fraction"].as_f64().expect("fraction");
        let pool = if engine == "sglang" {
            f * (b("total_memory") - b("non_torch")) - b("weights")
        } else {
            f * (b("total_memory") - b("weights") - b("activation_peak") - b("non_torch"))
        };
        let bytes = v["kv_cache_bytes"].as_f64().expect("bytes");
        assert!(
            (bytes - pool).abs() <= 1.0,
            "{engine}: {bytes} against {pool}"
        );
        let (per_token, page) = (
            v["bytes_per_token"].as_u64().expect("per token"),
            v["block_size"].as_u64().expect("page"),
        );
        let pages = (bytes as u64) / (per_token * page);
        assert_eq!(v["num_gpu_blocks"].as_u64(), Some(pages), "{engine}");
        assert_eq!(
            v["kv_cache_tokens"].as_u64(),
            Some(pages * page),
            "{engine}"
        );
        let (code, _, text) = run_cli(&[
            "vllm", "--config", Q8, "--gpu", "h100-sxm", "--engine", engine,
        ]);
        assert_eq!(code, 0);
        assert!(text.is_empty(), "{text}");
    }
    let (code, _, err) = run_cli(&[
        "vllm",
        "--config",
        Q8,
        "--gpu",
        "h100-sxm",
        "--engine",
        "sglang",
        "--block-size",
        "16",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("--block-size is vLLM's"), "{err}");
    let (code, _, err) = run_cli(&["vllm", "--config", Q8, "--engine", "trtllm"]);
    assert_eq!(code, 2);
    assert!(err.contains("--gpu"), "{err}");
    let (code, _, err) = run_cli(&[
        "vllm", "--config", Q8, "--gpu", "h100-sxm", "--engine", "vllm",
    ]);
    assert_eq!(code, 2, "{err}");
}

/// `--tp --dp --ep --pp --nodes` in one spelling for every engine: a DeepSeek-R1 deployment
/// over two 8-GPU nodes prints its shape and each engine's own flags, its JSON carries the
/// shape, and a shape that breaks a rule is refused in one sentence naming it (exit 2).
#[test]
fn parallelism_flags_take_one_spelling_and_name_each_engines_flags() {
    let r1 = "data/presets/deepseek-ai__DeepSeek-R1.json";
    let run = |extra: &[&str]| {
        let mut a = vec![
            "simulate",
            "--config",
            r1,
            "--gpu",
            "h200-sxm",
            "--rate",
            "inf",
            "--max-concurrency",
            "16",
            "--num-requests",
            "32",
        ];
        a.extend_from_slice(extra);
        run_cli(&a)
    };
    for (engine, flags) in [
        (
            "sglang",
            "--tp 16 --dp 2 --enable-dp-attention --ep-size 16",
        ),
        (
            "vllm",
            "--tensor-parallel-size 8 --data-parallel-size 2 --enable-expert-parallel",
        ),
    ] {
        let (code, out, err) = run(&["--engine", engine, "--tp", "8", "--dp", "2", "--ep", "16"]);
        assert_eq!(code, 0, "{engine}: {err}");
        assert!(
            out.contains("8 × 2 × 1 = 16 GPUs on 2 node(s), ep 16"),
            "{out}"
        );
        assert!(out.contains(flags), "{engine}: {out}");
        assert!(out.contains("2 attention-DP ranks"), "{out}");
    }
    let (code, out, err) = run(&["--tp", "8", "--dp", "2", "--ep", "16", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    let p = &v["engine"]["parallel"];
    assert_eq!(
        (
            p["tp"].as_u64(),
            p["dp"].as_u64(),
            p["ep"].as_u64(),
            p["nodes"].as_u64()
        ),
        (Some(8), Some(2), Some(16), Some(2)),
        "{v}"
    );
    for (extra, names) in [
        (&["--tp", "8", "--dp", "2", "--nodes", "1"][..], "nodes"),
        (
            &["--tp", "8", "--ep", "3", "--engine", "sglang"][..],
            "ep = 3",
        ),
        (
            &["--tp", "8", "--ep", "4"][..],
            "vLLM's --enable-expert-parallel",
        ),
        (
            &["--tp", "2", "--dp", "4", "--engine", "trtllm"][..],
            "enable_attention_dp",
        ),
        (&["--tp", "8", "--pp", "62"][..], "61 layers"),
        (&["--tp", "8", "--dp", "0"][..], "--dp"),
    ] {
        let (code, _, err) = run(extra);
        assert_eq!(code, 2, "{extra:?}: {err}");
        assert!(err.contains(names), "{extra:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    // The memory budget: attention DP spreads the experts, so each GPU keeps more for the
    // cache; the JSON carries the shape.
    let tokens = |extra: &[&str]| {
        let mut a = vec![
            "vllm", "--config", r1, "--gpu", "h200-sxm", "--tp", "8", "--json",
        ];
        a.extend_from_slice(extra);
        let (code, out, err) = run_cli(&a);
        assert_eq!(code, 0, "{extra:?}: {err}");
        let v: serde_json::Value = serde_json::from_str(&out).expect("json");
        (
            v["kv_cache_tokens"].as_u64().expect("tokens"),
            v["parallel"]["dp"].as_u64(),
        )
    };
    let (tp_only, none) = tokens(&[]);
    let (dp2, dp) = tokens(&["--dp", "2", "--ep", "16"]);
    assert!(
        dp2 > tp_only && none.is_none() && dp == Some(2),
        "{tp_only} {dp2}"
    );
}
