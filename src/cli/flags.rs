//! What each command accepts: its flags, their meaning, default and unit, checked by `clap`
//! before a command runs, so that an unknown or misspelled flag is refused with the nearest
//! known one (`llmcalc simulate --max-num-seq 8` no longer runs with vLLM's default) and
//! `llmcalc <command> --help` lists every flag. The commands still read their values through
//! [`super::Args`], whose range checks give the one-sentence errors the tests pin.

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{Arg, ArgAction, Command};

/// One flag: its name (without `--`), its value's name (`None` for a switch) and its help.
#[derive(Debug, Clone, Copy)]
pub(super) struct Flag(&'static str, Option<&'static str>, &'static str);

const fn v(name: &'static str, value: &'static str, help: &'static str) -> Flag {
    Flag(name, Some(value), help)
}

const fn s(name: &'static str, help: &'static str) -> Flag {
    Flag(name, None, help)
}

const JSON: Flag = s("json", "print JSON (stable keys) instead of text");
const CONFIG: Flag = v(
    "config",
    "FILE",
    "the model's config.json (or model.safetensors.index.json)",
);
const GPU: Flag = v(
    "gpu",
    "ID",
    "a GPU id of the catalog (llmcalc gpus lists them)",
);
const TP: Flag = v("tp", "N", "tensor-parallel GPUs per replica; default 1");
const WEIGHTS_DTYPE: Flag = v(
    "weights-dtype",
    "D",
    "the weights' precision (bf16, fp8, int4, …); default the checkpoint's",
);
const KV_DTYPE: Flag = v(
    "kv-dtype",
    "D",
    "the KV cache's precision (auto, fp8, …); default as vLLM picks it",
);
const INCLUDE_MTP: Flag = s(
    "include-mtp",
    "count the checkpoint's MTP (speculative-decoding) modules as vLLM loads them",
);
const BATCH: Flag = v("batch", "B", "requests decoded together (static batch)");
const INPUT_LEN: Flag = v("input-len", "I", "prompt tokens per request");
const OUTPUT_LEN: Flag = v("output-len", "O", "output tokens per request");
const EFF: Flag = v(
    "eff",
    "KEYS",
    "the performance model's efficiencies as calibrate --fit prints them (its url_params), \
     e.g. --eff e_bw=0.6,e_cp=0.4; keys e_cp, e_cd, e_bw, e_ic (fractions), e_so, e_po, e_ar \
     (ms); keys not given keep the calibrated defaults; selects the roofline step model",
);
const PRICE: Flag = v(
    "price",
    "USD",
    "GPU price, $ per GPU-hour (or ID=USD, repeatable); default the catalog's",
);

/// The engine (`vllm serve`) flags of `simulate`, `plan --simulate` and `calibrate`.
const ENGINE: &[Flag] = &[
    TP,
    WEIGHTS_DTYPE,
    KV_DTYPE,
    v(
        "max-num-seqs",
        "S",
        "vLLM's --max-num-seqs; default vLLM's (256 below 70 GiB and on A100, else 1,024)",
    ),
    v(
        "max-num-batched-tokens",
        "T",
        "vLLM's --max-num-batched-tokens; default vLLM's (2,048 below 70 GiB and on A100, \
         else 8,192)",
    ),
    v(
        "max-model-len",
        "L",
        "vLLM's --max-model-len, tokens; default the config's as vLLM derives it",
    ),
    v("block-size", "N", "KV block size, tokens; default 16"),
    v(
        "gpu-memory-utilization",
        "F",
        "share of GPU memory vLLM may use, above 0 and at most 1; default 0.9",
    ),
    v(
        "prefix-hit",
        "F",
        "share of prompt tokens found in the prefix cache, 0 up to 1; default 0",
    ),
    v(
        "frontend-overhead-ms",
        "MS",
        "the fixed part of the server's path per request beyond the engine (HTTP, hand-off, \
         streaming), added once to TTFT and E2EL, 0 to 10,000 ms; default 32 (fitted on \
         vLLM's OpenAI server, SemiAnalysis InferenceX runs), 0 for the engine alone",
    ),
    v(
        "frontend-per-token-us",
        "US",
        "the server's serial work per prompt token (tokenization, one worker in arrival \
         order), µs; default 2",
    ),
    s(
        "enable-expert-parallel",
        "split the routed experts by expert across the TP ranks (vLLM's flag)",
    ),
    s(
        "no-async-scheduling",
        "vLLM without asynchronous scheduling (before 0.14): 2.0 ms of engine time per step \
         instead of 1.25",
    ),
    v(
        "step-model",
        "kernels|roofline",
        "step times from vLLM's measured kernels (default, where the GPU or its architecture \
         has tables) or the fitted roofline (implied by --eff)",
    ),
];

/// The offered load (`vllm bench serve`) flags of `simulate`, `plan --simulate` and
/// `calibrate`.
const WORKLOAD: &[Flag] = &[
    INPUT_LEN,
    OUTPUT_LEN,
    v(
        "lengths",
        "FILE",
        "one `input output` pair per line (commas or spaces, # comments)",
    ),
    v(
        "dataset",
        "NAME",
        "sharegpt (vLLM bench's ShareGPT sampler) or random; default random, 1,024 in, 128 out",
    ),
    v(
        "max-concurrency",
        "C",
        "at most C requests in flight (vLLM bench's --max-concurrency)",
    ),
    v(
        "num-requests",
        "N",
        "requests simulated per rate; default 1,000",
    ),
    v(
        "burstiness",
        "B",
        "gamma shape of the gaps between arrivals (1 = Poisson, below 1 burstier); default 1",
    ),
    v("seed", "N", "the random seed; default 0"),
];

/// The serving-load flags of `simulate` and `plan`.
const SERVING: &[Flag] = &[
    v(
        "rate",
        "R",
        "requests per second (inf: all at once), vLLM bench's --request-rate",
    ),
    v(
        "sweep",
        "R1,R2,…",
        "simulate each rate and find where the replica saturates",
    ),
    v(
        "goodput",
        "ttft:MS,tpot:MS",
        "targets of goodput (the share of requests meeting them)",
    ),
    EFF,
];

/// `model`'s flags.
const MODEL: &[Flag] = &[
    CONFIG,
    v(
        "hf",
        "ORG/NAME",
        "fetch the config from the Hugging Face Hub",
    ),
    v("hf-timeout", "SECONDS", "the Hub fetch's time limit"),
    v(
        "params",
        "COUNT",
        "a bare parameter count (7B, 1.5e9, …), quick mode",
    ),
    v(
        "context",
        "L",
        "tokens of the one sequence whose KV cache is counted; default 4,096",
    ),
    TP,
    WEIGHTS_DTYPE,
    KV_DTYPE,
    INCLUDE_MTP,
];

/// `vllm`'s flags.
const VLLM: &[Flag] = &[
    CONFIG,
    GPU,
    v(
        "gpu-memory-gib",
        "G",
        "GPU memory as vLLM sees it, GiB (instead of --gpu)",
    ),
    v(
        "weights-gib",
        "W",
        "weights per GPU, GiB (as vLLM logs them)",
    ),
    v(
        "activation-gib",
        "A",
        "activation peak, GiB (as vLLM logs it)",
    ),
    v(
        "non-torch-gib",
        "T",
        "non-torch memory, GiB (as vLLM logs it)",
    ),
    v(
        "available-kv-gib",
        "K",
        "KV-cache memory, GiB (skips the subtraction)",
    ),
    TP,
    WEIGHTS_DTYPE,
    KV_DTYPE,
    INCLUDE_MTP,
    ENGINE[3],
    ENGINE[4],
    ENGINE[5],
    ENGINE[6],
    ENGINE[7],
];

/// A model on a GPU at a static batch: the first flags of `perf` and `load`.
const STATIC_BATCH: &[Flag] = &[
    CONFIG,
    GPU,
    TP,
    WEIGHTS_DTYPE,
    KV_DTYPE,
    BATCH,
    INPUT_LEN,
    OUTPUT_LEN,
];

/// `perf`'s own flags.
const PERF: &[Flag] = &[
    v(
        "context",
        "mean|end",
        "the KV context of the decode step; default mean",
    ),
    PRICE,
    EFF,
    v("compute-eff", "F", "the compute efficiency, a fraction"),
    v(
        "bandwidth-eff",
        "F",
        "the memory-bandwidth efficiency, a fraction",
    ),
    s("tp-sweep", "one row per tensor-parallel degree"),
    s("accuracy", "the calibration report instead"),
];

/// `load`'s own flags.
const LOAD: &[Flag] = &[
    v(
        "storage",
        "KIND",
        "nvme, network, network-baseline or object",
    ),
    v(
        "storage-gbps",
        "S",
        "the storage's read bandwidth, GB/s (instead of --storage)",
    ),
    v("readers", "N", "parallel readers"),
    v(
        "sequential",
        "true|false",
        "the stages one after the other; default false",
    ),
    v("startup-s", "S", "the engine's start-up time, s"),
    v("link-gbps", "L", "host-to-GPU link bandwidth, GB/s"),
    v("link-eff", "F", "the link's efficiency, a fraction"),
];

/// `plan`'s own flags (it also takes the serving, engine and load flags).
const PLAN: &[Flag] = &[
    CONFIG,
    GPU,
    v("gpus-per-node", "N", "GPUs per node; default 8"),
    PRICE,
    v(
        "peak-multiplier",
        "M",
        "the peak rate as a multiple of --rate",
    ),
    v(
        "buckets",
        "I:O:SHARE,…",
        "a traffic mix instead of one length pair",
    ),
    v("ttft-ms", "T", "the TTFT target, ms"),
    v("tpot-ms", "P", "the time-per-output-token target, ms"),
    v(
        "curve",
        "N",
        "the cost-against-load series at N rates instead",
    ),
    BATCH,
    s(
        "simulate",
        "re-size the best option's replicas on simulated P99s",
    ),
    v(
        "router",
        "round-robin|least-loaded",
        "the fleet's router; default round-robin",
    ),
    s(
        "largest",
        "the largest model of --family that meets the targets",
    ),
    v(
        "family",
        "F",
        "qwen3, llama3, qwen2.5, llama2, qwen3-moe, mixtral, gpt-oss",
    ),
];

/// `calibrate`'s own flags (it also takes the engine and load flags).
const CALIBRATE: &[Flag] = &[
    CONFIG,
    GPU,
    v(
        "bench",
        "FILE",
        "a vllm bench serve result (its JSON or its text summary)",
    ),
    s(
        "fit",
        "also fit the efficiencies to it and print the link parameters",
    ),
    EFF,
];

/// The flags of `command` (as [`super::COMMANDS`] names it), `--json` last, each once.
fn flags(command: &str) -> Vec<Flag> {
    let parts: &[&[Flag]] = match command {
        "model" => &[MODEL],
        "vllm" => &[VLLM],
        "gpus" => &[&[GPU]],
        "perf" => &[STATIC_BATCH, PERF],
        "plan" => &[PLAN, SERVING, ENGINE, WORKLOAD],
        "load" => &[STATIC_BATCH, LOAD],
        "simulate" => &[&[CONFIG, GPU], SERVING, ENGINE, WORKLOAD],
        "calibrate" => &[CALIBRATE, ENGINE, WORKLOAD],
        _ => &[],
    };
    let mut seen = std::collections::BTreeSet::new();
    parts
        .iter()
        .flat_map(|p| p.iter().copied())
        .chain([JSON])
        .filter(|f| seen.insert(f.0))
        .collect()
}

/// `command` as clap checks it.
fn command(name: &'static str, about: &'static str) -> Command {
    let mut c = Command::new(name)
        .bin_name(format!("llmcalc {name}"))
        .about(about)
        .disable_help_flag(true)
        .disable_version_flag(true)
        .arg(
            Arg::new("help")
                .long("help")
                .action(ArgAction::Help)
                .help("this list"),
        );
    for Flag(flag, value, help) in flags(name) {
        let a = Arg::new(flag)
            .long(flag)
            .help(help)
            .action(ArgAction::Append);
        c = c.arg(match value {
            // A switch; `--json=true` stays accepted as before.
            None => a
                .num_args(0..=1)
                .require_equals(true)
                .default_missing_value("true"),
            Some(value) => a.value_name(value).num_args(1).allow_hyphen_values(true),
        });
    }
    c
}

/// The command's entry in `super::COMMANDS`.
fn about(cmd: &str) -> Option<(&'static str, &'static str)> {
    super::COMMANDS.iter().copied().find(|(c, _)| *c == cmd)
}

/// `llmcalc <cmd> --help`: every flag with its value, default and unit (`None` for an unknown
/// command).
pub(super) fn help(cmd: &str) -> Option<String> {
    let (name, about) = about(cmd)?;
    Some(command(name, about).render_help().to_string())
}

/// Panics (debug builds) when `cmd` read a flag it does not declare: such a flag would be
/// refused before the command could read it.
pub(super) fn check_declared(cmd: &str, read: &[String]) {
    if about(cmd).is_none() {
        return;
    }
    let known = flags(cmd);
    for k in read {
        assert!(
            k == "help" || known.iter().any(|f| f.0 == k),
            "llmcalc {cmd} reads --{k}, which src/cli/flags.rs does not declare for it"
        );
    }
}

/// Refuses a flag `cmd` does not know, in one sentence with the nearest known one (`Ok` for
/// an unknown command: the dispatcher says that).
pub(super) fn check(cmd: &str, args: &[String]) -> Result<(), String> {
    let Some((name, about)) = about(cmd) else {
        return Ok(());
    };
    let argv = std::iter::once(format!("llmcalc {name}")).chain(args.iter().cloned());
    match command(name, about).try_get_matches_from(argv) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == ErrorKind::DisplayHelp => Ok(()),
        Err(e) => Err(sentence(name, &e)),
    }
}

/// A clap error as one sentence.
fn sentence(cmd: &str, e: &clap::Error) -> String {
    let text = |k: ContextKind| match e.get(k) {
        Some(ContextValue::String(s)) => Some(s.clone()),
        Some(ContextValue::Strings(v)) => v.first().cloned(),
        _ => None,
    };
    match (e.kind(), text(ContextKind::InvalidArg)) {
        (ErrorKind::UnknownArgument, Some(arg)) => {
            let flag = arg.split('=').next().unwrap_or(&arg).to_string();
            let hint = text(ContextKind::SuggestedArg)
                .map(|s| format!("; did you mean {s}?"))
                .unwrap_or_default();
            format!(
                "unknown option {}{hint} (llmcalc {cmd} --help lists every option)",
                super::args::short(&flag)
            )
        }
        _ => {
            let first = e.render().to_string();
            let line = first.lines().next().unwrap_or("").trim();
            line.strip_prefix("error: ").unwrap_or(line).to_string()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{check, check_declared, flags, help};
    use crate::cli::COMMANDS;

    #[test]
    fn every_command_has_flags_and_help() {
        for (c, _) in COMMANDS {
            assert!(flags(c).len() >= 2, "{c}");
            let h = help(c).expect("help");
            assert!(h.contains("--json"), "{c}: {h}");
        }
        assert!(help("frobnicate").is_none());
    }

    #[test]
    fn a_misspelled_flag_is_refused_with_the_nearest() {
        let args: Vec<String> = ["--config", "x.json", "--max-num-seq", "8"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let e = check("simulate", &args).expect_err("refused");
        assert!(
            e.contains("--max-num-seq") && e.contains("--max-num-seqs"),
            "{e}"
        );
        assert_eq!(e.lines().count(), 1, "{e}");
        let ok: Vec<String> = ["--json=true", "--rate", "-1", "--enable-expert-parallel"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(check("simulate", &ok), Ok(()));
    }

    #[test]
    #[should_panic(expected = "does not declare")]
    fn a_flag_read_but_not_declared_fails_in_tests() {
        check_declared("gpus", &["rate".to_string()]);
    }
}
