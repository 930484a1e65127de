//! `llmcalc vllm`: vLLM's KV-cache budget for a config.json on one GPU (per GPU under TP),
//! with the lines vLLM logs.
//!
//! ```text
//! llmcalc vllm --config FILE (--gpu-memory-gib G | --gpu ID) [--gpu-memory-utilization 0.9]
//!     [--max-model-len L] [--tp N] [--block-size 16] [--kv-dtype D] [--weights-gib W]
//!     [--activation-gib A] [--non-torch-gib T] [--available-kv-gib K]
//!     [--max-num-batched-tokens N] [--max-num-seqs N] [--include-mtp] [--vllm-version X.Y[.Z]]
//!     [--json]
//! ```
//! `--vllm-version`: the vLLM release whose start-up lines and figures to print
//! (`core::calc::VllmVersion`, its rules and their boundaries); default the newest release the
//! project has a start-up log of. The text output names the release the lines follow first
//! (after vLLM's warning when it assumes `max_model_len`).
//! `--include-mtp`: speculative decoding with the checkpoint's MTP modules, so vLLM loads their
//! weights and caches their attention layers too (`ModelDesc::kv_layers`).
//! JSON fields: `kv_cache_gib` (available KV memory, GiB), `kv_cache_bytes`,
//! `kv_cache_tokens`, `num_gpu_blocks`, `max_concurrency`, `bytes_per_block`, (with `--dp --ep
//! --pp --nodes`: the weights per GPU under that shape, and `parallel`),
//! `fits_max_model_len`, `paging`, `vllm_version` (the release the figures follow), `max_model_len`, `max_model_len_assumed` (the config states
//! no maximum length and no `--max-model-len` was given, so 2,048 as vLLM assumes, and the
//! text output starts with vLLM's warning), `inputs` (every term with its value in GiB and its source:
//! `user`, `catalog`, `vllm_log` (a figure vLLM logged for that GPU), `estimate` or `config`), `log_lines`, `derivations`, `notes`.
//! Without `--gpu-memory-gib`, `--weights-gib`, `--activation-gib` and `--non-torch-gib` the
//! terms are the ones the serving simulator and the app use (`core::calc::memory::vllm_start`):
//! the total memory as vLLM sees the `--gpu` (its logged `total_gpu_memory` where one is
//! known, e.g. 79.22 GiB on an H100 80 GB, else the catalog's capacity), the weights as vLLM
//! loads them (the config's sharded by TP, plus MXFP4 MoE experts padded for Marlin on that
//! GPU), the activation peak of one `--max-num-batched-tokens` chunk sampling `--max-num-seqs`
//! rows (both defaulting as vLLM does by that total), and the non-torch estimate.
//! `--available-kv-gib` skips the subtraction. `--engine sglang|trtllm` (with `--gpu`, and none
//! of vLLM's own flags) prints that engine's pool instead, by its rule (`core::sim::engines`):
//! JSON `engine`, `kv_cache_bytes`, `kv_cache_tokens`, `num_gpu_blocks` (pages),
//! `block_size` (the page), `bytes_per_token`, `formula`, `substituted` and `inputs`.

use super::args::{read_file, short, stdout_error};
use super::opts::{VllmArgs, MAX_GIB};
use super::{write_json, CliError};
use crate::core::base::Bytes;
use crate::core::base::Dtype;
use crate::core::base::{group, Derivation, Lang, Source};
use crate::core::calc::default_kv_dtype;
use crate::core::calc::{
    default_max_model_len, default_max_num_batched_tokens, default_max_num_seqs,
    max_model_len_warning, non_torch_estimate, vllm_activation, vllm_budget, vllm_loaded_weights,
    vllm_serve_defaults, vllm_total, KvProfile, Paging, VllmBudget, VllmEngine, VllmInputs,
    VllmVersion, VLLM_TOTAL_LOGGED,
};
use crate::core::calc::{DEFAULT_BLOCK_SIZE, DEFAULT_GPU_MEMORY_UTILIZATION};
use crate::core::hardware::{Accelerator, Architecture, Catalog};
use crate::core::model::parse_model_text;
use crate::core::model::ModelDesc;
use crate::core::sim::{EngineConfig, EngineKind, Parallel};
use serde_json::{json, Value};
use std::io::Write;

/// A memory figure of `--k` (GiB, already within 0 to [`MAX_GIB`]) in bytes.
fn gib_opt(v: Option<f64>, k: &str) -> Result<Option<Bytes>, CliError> {
    match v {
        None => Ok(None),
        Some(v) => Bytes::from_gib_f64(v)
            .map(Some)
            .ok_or_else(|| CliError::Usage(format!("--{k} must be a number from 0 to {MAX_GIB}"))),
    }
}

fn source_kind(s: &Source) -> &'static str {
    use crate::core::calc::VLLM_TOTAL_FROM_KV_LOGS;
    match s {
        Source::User(_) => "user",
        Source::Catalog(_) => "catalog",
        Source::Derived(d) if d == VLLM_TOTAL_LOGGED || d == VLLM_TOTAL_FROM_KV_LOGS => "vllm_log",
        Source::ConfigKey(_) => "config",
        Source::Default(_) | Source::Derived(_) => "estimate",
    }
}

/// Options read straight from the command line (or the config when not given).
struct Options {
    /// Tensor-parallel size.
    tp: u64,
    /// Tokens per KV block.
    block_size: u64,
    /// vLLM's `--gpu-memory-utilization`.
    util: f64,
    /// Longest request, in tokens.
    max_model_len: u64,
    /// `max_model_len` is vLLM's assumption for a config that states no maximum length.
    max_model_len_assumed: bool,
    /// KV-cache precision.
    kv_dtype: Dtype,
}

/// Reads TP, block size, memory utilisation, max model length and KV dtype.
fn options(args: &VllmArgs, model: &ModelDesc) -> Result<Options, CliError> {
    let (tp, block_size, util) = (
        args.tp,
        args.vllm.block_size.unwrap_or(DEFAULT_BLOCK_SIZE),
        args.vllm
            .gpu_memory_utilization
            .unwrap_or(DEFAULT_GPU_MEMORY_UTILIZATION),
    );
    let (max_model_len, max_model_len_assumed) = match args.vllm.max_model_len {
        Some(l) => (l, false),
        None => default_max_model_len(model.vllm_default_max_len()),
    };
    let kv_dtype = match args.dtypes.kv_dtype.as_deref() {
        Some(s) => Dtype::parse(s)?,
        None => default_kv_dtype(model),
    };
    Ok(Options {
        tp,
        block_size,
        util,
        max_model_len,
        max_model_len_assumed,
        kv_dtype,
    })
}

/// Total memory: given, or as vLLM sees the catalog GPU (`core::calc::vllm_total`, its
/// derivation pushed); above 0.
fn total_memory(
    args: &VllmArgs,
    gpu: Option<&Accelerator>,
    derivations: &mut Vec<Derivation>,
) -> Result<(Bytes, Source), CliError> {
    let (total, total_source) = match (gib_opt(args.gpu_memory_gib, "gpu-memory-gib")?, gpu) {
        (Some(g), _) => (g, Source::User("gpu_memory_gib".into())),
        (None, Some(acc)) => {
            let t = vllm_total(acc);
            derivations.push(t.derivation);
            (t.bytes, t.source)
        }
        (None, None) => {
            return Err(CliError::Usage(
                "give the GPU memory with --gpu-memory-gib G or a catalog GPU with --gpu ID".into(),
            ))
        }
    };
    if total.0 == 0 {
        return Err(CliError::Usage("--gpu-memory-gib must be above 0".into()));
    }
    Ok((total, total_source))
}

/// Weights per GPU: given, or as vLLM loads them (`core::calc::vllm_loaded_weights`: the
/// checkpoint's sharded by TP, plus the MXFP4 MoE padding of the named GPU's kernel;
/// derivations pushed).
fn weights_term(
    args: &VllmArgs,
    model: &ModelDesc,
    tp: u64,
    gpu: Option<&Accelerator>,
    derivations: &mut Vec<Derivation>,
) -> Result<(Bytes, Source), CliError> {
    Ok(match gib_opt(args.weights_gib, "weights-gib")? {
        Some(w) => (w, Source::User("weights_gib".into())),
        None => {
            let w = vllm_loaded_weights(model, None, tp, gpu)?;
            derivations.push(w.checkpoint.derivation);
            derivations.push(w.checkpoint.per_gpu_derivation);
            derivations.extend(w.derivation);
            (w.bytes, w.source)
        }
    })
}

/// Activation peak: given, or vLLM's profiling run under `e` (`core::calc::vllm_activation`,
/// derivation pushed).
fn activation_term(
    args: &VllmArgs,
    model: &ModelDesc,
    e: &VllmEngine,
    derivations: &mut Vec<Derivation>,
) -> Result<(Bytes, Source), CliError> {
    Ok(match gib_opt(args.activation_gib, "activation-gib")? {
        Some(a) => (a, Source::User("activation_gib".into())),
        None => {
            let (a, d) = vllm_activation(model, e)?;
            derivations.push(d);
            (a, Source::Derived("vllm_activation_peak".into()))
        }
    })
}

/// Runs `llmcalc vllm`.
pub fn run(args: &VllmArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let mut model = parse_model_text(&read_file("config", args.config.as_deref())?)?;
    model.load_mtp = args.include_mtp;
    if let Some(e) = args.engine.as_deref() {
        return other_engine(args, &model, e, out);
    }
    let o = options(args, &model)?;
    let gpu = match args.gpu.as_deref() {
        Some(id) => Some(Catalog::builtin().get(id)?),
        None => None,
    };
    let mut derivations = Vec::new();
    let (total, total_source) = total_memory(args, gpu, &mut derivations)?;
    // The cache layout is the GPU's (`fp8_ds_mla` on Hopper); without one, the model's plain
    // latent (`core::calc::kv::uses_fp8_ds_mla`).
    let arch = gpu.map_or(Architecture::Unknown, |g| g.architecture);
    let profile = KvProfile::from_model(&model, o.kv_dtype, o.tp, arch)?;
    // vLLM's defaults: the GPU's rule when one is named (every A100 keeps the small figures),
    // else the memory rule on the total given.
    let (default_seqs, default_mnbt) = match gpu {
        Some(g) => vllm_serve_defaults(g),
        None => (
            default_max_num_seqs(total),
            default_max_num_batched_tokens(total),
        ),
    };
    let engine = VllmEngine {
        tp: o.tp,
        weights_dtype: None,
        gpu_memory_utilization: o.util,
        block_size: o.block_size,
        max_model_len: o.max_model_len,
        max_num_batched_tokens: args.vllm.max_num_batched_tokens.unwrap_or(default_mnbt),
        max_num_seqs: args.vllm.max_num_seqs.unwrap_or(default_seqs),
    };
    let (mut w, mut w_src) = weights_term(args, &model, o.tp, gpu, &mut derivations)?;
    let par = shape(args, o.tp);
    if let Some(p) = par {
        let g = gpu.ok_or_else(|| {
            CliError::Usage("--dp, --ep, --pp and --nodes need a catalog GPU: --gpu ID".into())
        })?;
        p.check(&model, g, EngineKind::Vllm)?;
        if args.weights_gib.is_none() {
            w = p.weights_per_gpu(&model, &model.weights, w);
            w_src = Source::Derived("parallel_weights".into());
        }
    }
    let (act, act_src) = activation_term(args, &model, &engine, &mut derivations)?;
    let (nt, nt_src) = match gib_opt(args.non_torch_gib, "non-torch-gib")? {
        Some(n) => (n, Source::User("non_torch_gib".into())),
        None => (
            non_torch_estimate(o.tp),
            Source::Default("non_torch_estimate".into()),
        ),
    };
    let inp = VllmInputs {
        total_memory: total,
        total_source,
        gpu_memory_utilization: o.util,
        weights: w,
        weights_source: w_src,
        activation_peak: act,
        activation_source: act_src,
        non_torch: nt,
        non_torch_source: nt_src,
        available_kv_override: gib_opt(args.available_kv_gib, "available-kv-gib")?,
        block_size: o.block_size,
        max_model_len: o.max_model_len,
        max_num_batched_tokens: engine.max_num_batched_tokens,
        vllm_version: args.vllm_version.unwrap_or_default(),
    };
    let b = vllm_budget(&inp, &profile)?;
    derivations.extend(b.derivations.iter().cloned());
    if args.json {
        let mut v = budget_json(&model.name, &o, &inp, &b, &derivations);
        if let (Some(p), Some(m)) = (par, v.as_object_mut()) {
            m.insert("parallel".into(), json!(p));
        }
        write_json(out, &v)
    } else {
        if let Some(p) = par {
            writeln!(
                out,
                "Parallelism: TP {} × DP {} × PP {}, EP {} ({}): weights per GPU {:.2} GiB, the routed experts over tp × dp GPUs and the layers over pp stages; the budget below is one GPU's",
                p.tp,
                p.dp,
                p.pp,
                p.ep,
                p.engine_flags(EngineKind::Vllm),
                w.gib()
            )
            .map_err(stdout_error)?;
        }
        if o.max_model_len_assumed {
            writeln!(out, "WARNING {}", max_model_len_warning()).map_err(stdout_error)?;
        }
        writeln!(out, "{}", version_line(inp.vllm_version, &b)).map_err(stdout_error)?;
        write_budget_text(out, &b, &derivations)
    }
}

/// The text output's first line: the release the lines follow, and why when it is not the one
/// asked for (older than the oldest the rules know).
fn version_line(asked: VllmVersion, b: &VllmBudget) -> String {
    let followed = b.vllm_version;
    if asked == followed {
        format!("vLLM {followed}'s start-up lines (--vllm-version)")
    } else {
        format!(
            "vLLM {followed}'s start-up lines: {asked} is older than the oldest release whose lines are known, so its figures follow {followed}"
        )
    }
}

/// The budget as the CLI's JSON object.
fn budget_json(
    model: &str,
    o: &Options,
    inp: &VllmInputs,
    b: &VllmBudget,
    derivations: &[Derivation],
) -> Value {
    let term =
        |v: Bytes, s: &Source| json!({ "gib": v.gib(), "bytes": v.0, "source": source_kind(s) });
    json!({
        "model": model,
        "kv_cache_gib": b.available_kv.gib(),
        "kv_cache_bytes": b.available_kv.0,
        "kv_cache_tokens": b.kv_cache_tokens,
        "num_gpu_blocks": b.num_gpu_blocks,
        "max_concurrency": b.max_concurrency,
        "bytes_per_block": b.bytes_per_block.0,
        "fits_max_model_len": b.fits_max_model_len,
        "paging": match b.paging { Paging::Uniform => "uniform", Paging::Hybrid => "hybrid", Paging::Mamba => "mamba", Paging::None => "none" },
        "vllm_version": b.vllm_version.to_string(),
        "block_size": b.block_size,
        "max_model_len": o.max_model_len,
        "max_model_len_assumed": o.max_model_len_assumed,
        "tp": o.tp,
        "kv_dtype": o.kv_dtype.id(),
        "inputs": {
            "total_memory": term(inp.total_memory, &inp.total_source),
            "gpu_memory_utilization": o.util,
            "requested_memory": { "gib": b.requested_memory.gib(), "bytes": b.requested_memory.0 },
            "weights": term(inp.weights, &inp.weights_source),
            "activation_peak": term(inp.activation_peak, &inp.activation_source),
            "non_torch": term(inp.non_torch, &inp.non_torch_source),
            "available_kv_override": inp.available_kv_override.map(|k| k.gib()),
            "max_num_batched_tokens": inp.max_num_batched_tokens,
        },
        "log_lines": b.log_lines,
        "derivations": derivations,
        "notes": b.notes,
    })
}

/// The budget as text: vLLM's log lines, a blank line, then every derivation.
fn write_budget_text(
    out: &mut dyn Write,
    b: &VllmBudget,
    derivations: &[Derivation],
) -> Result<(), CliError> {
    for l in &b.log_lines {
        writeln!(out, "{l}").map_err(stdout_error)?;
    }
    writeln!(out).map_err(stdout_error)?;
    for d in derivations {
        writeln!(
            out,
            "{}: {} = {} = {}",
            d.title_key,
            d.formula,
            d.substituted,
            d.result_text(Lang::En)
        )
        .map_err(stdout_error)?;
    }
    Ok(())
}

/// The shape `--dp --ep --pp --nodes` give beside `--tp` (`None` without any of them).
fn shape(args: &VllmArgs, tp: u64) -> Option<Parallel> {
    let f = &args.parallel;
    let any = f.dp.is_some() || f.ep.is_some() || f.pp.is_some() || f.nodes.is_some();
    any.then(|| Parallel {
        tp,
        dp: f.dp.unwrap_or(1),
        ep: f.ep.unwrap_or(1),
        pp: f.pp.unwrap_or(1),
        nodes: f.nodes.unwrap_or(0),
    })
}

/// `llmcalc vllm --engine sglang|trtllm`: that engine's KV pool on the `--gpu` under its
/// defaults (`core::sim::engines`), from the terms vLLM's budget uses for the same GPU.
fn other_engine(
    args: &VllmArgs,
    model: &ModelDesc,
    engine: &str,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let kind = EngineKind::from_id(engine)
        .filter(|k| *k != EngineKind::Vllm)
        .ok_or_else(|| {
            CliError::Usage(format!(
                "--engine must be sglang or trtllm (vLLM's budget is this command without it), not \"{}\"",
                short(engine)
            ))
        })?;
    refuse_vllm_flags(args, kind)?;
    let gpu = Catalog::builtin().get(
        args.gpu
            .as_deref()
            .ok_or_else(|| CliError::Usage("--engine needs a catalog GPU: --gpu ID".into()))?,
    )?;
    let kv_dtype = args
        .dtypes
        .kv_dtype
        .as_deref()
        .map(Dtype::parse)
        .transpose()?;
    let par = shape(args, args.tp).unwrap_or_default();
    let cfg = EngineConfig {
        engine: kind,
        tp: args.tp,
        dp: par.dp,
        ep: par.ep,
        pp: par.pp,
        nodes: par.nodes,
        max_model_len: args.vllm.max_model_len,
        kv_dtype,
        ..EngineConfig::default()
    };
    let r = cfg.resolve(model, gpu)?;
    let pool = r
        .pool
        .ok_or_else(|| CliError::Usage("no pool for this engine".into()))?;
    let tokens = r.num_gpu_blocks * r.block_size;
    let concurrency = tokens as f64 / r.max_model_len.max(1) as f64;
    let (formula, substituted) = pool.formula();
    let [seqs, step_tokens, page, fraction] = kind.flag_names();
    if args.json {
        let g = |b: Bytes| json!({ "gib": b.gib(), "bytes": b.0 });
        return write_json(
            out,
            &json!({
                "model": model.name,
                "engine": kind.id(),
                "engine_version": kind.version(),
                "kv_cache_gib": pool.pool.gib(),
                "kv_cache_bytes": pool.pool.0,
                "kv_cache_tokens": tokens,
                "num_gpu_blocks": r.num_gpu_blocks,
                "block_size": r.block_size,
                "max_concurrency": concurrency,
                "max_model_len": r.max_model_len,
                "max_num_seqs": r.max_num_seqs,
                "max_num_batched_tokens": r.max_num_batched_tokens,
                "bytes_per_token": pool.per_token.0,
                "state_slots": pool.state_slots,
                "state_bytes_per_request": pool.state_per_seq.0,
                "tp": args.tp,
                "formula": formula,
                "substituted": substituted,
                "inputs": {
                    "fraction": pool.fraction,
                    "total_memory": g(pool.total),
                    "non_torch": g(pool.non_torch),
                    "weights": g(pool.weights),
                    "activation_peak": g(pool.activation),
                },
                "flag_names": [seqs, step_tokens, page, fraction],
            }),
        );
    }
    let lines = [
        format!(
            "{} {}: {formula} = {substituted} = {:.2} GiB",
            kind.name(),
            kind.version(),
            pool.pool.gib()
        ),
        format!(
            "KV cache: {} tokens ({} pages of {} tokens, {} B per token)",
            group(tokens),
            group(r.num_gpu_blocks),
            r.block_size,
            group(pool.per_token.0)
        ),
        format!(
            "Maximum concurrency for {} tokens per request: {concurrency:.2}x",
            group(r.max_model_len)
        ),
        format!(
            "{seqs} {}, {step_tokens} {}, {page} {}, {fraction} {}",
            group(r.max_num_seqs),
            group(r.max_num_batched_tokens),
            r.block_size,
            pool.fraction
        ),
    ];
    for l in lines {
        writeln!(out, "{l}").map_err(stdout_error)?;
    }
    if pool.state_slots > 0 {
        writeln!(
            out,
            "Recurrent states: {} slots of {} B ({:.2} GiB)",
            group(pool.state_slots),
            group(pool.state_per_seq.0),
            pool.state.gib()
        )
        .map_err(stdout_error)?;
    }
    Ok(())
}

/// vLLM's own flags of `llmcalc vllm` are refused beside `--engine` (one sentence).
fn refuse_vllm_flags(args: &VllmArgs, kind: EngineKind) -> Result<(), CliError> {
    let vllm_only = [
        ("--gpu-memory-gib", args.gpu_memory_gib.is_some()),
        ("--weights-gib", args.weights_gib.is_some()),
        ("--activation-gib", args.activation_gib.is_some()),
        ("--non-torch-gib", args.non_torch_gib.is_some()),
        ("--available-kv-gib", args.available_kv_gib.is_some()),
        ("--max-num-seqs", args.vllm.max_num_seqs.is_some()),
        (
            "--max-num-batched-tokens",
            args.vllm.max_num_batched_tokens.is_some(),
        ),
        ("--block-size", args.vllm.block_size.is_some()),
        ("--vllm-version", args.vllm_version.is_some()),
        (
            "--gpu-memory-utilization",
            args.vllm.gpu_memory_utilization.is_some(),
        ),
    ];
    if let Some((flag, _)) = vllm_only.iter().find(|(_, given)| *given) {
        return Err(CliError::Usage(format!(
            "{flag} is vLLM's; --engine {} computes {}'s pool under its own defaults (llmcalc simulate --engine {} takes its flags)",
            kind.id(),
            kind.name(),
            kind.id()
        )));
    }
    Ok(())
}
