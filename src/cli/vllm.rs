//! `llmcalc vllm`: vLLM's KV-cache budget for a config.json on one GPU (per GPU under TP),
//! with the lines vLLM logs.
//!
//! ```text
//! llmcalc vllm --config FILE (--gpu-memory-gib G | --gpu ID) [--gpu-memory-utilization 0.9]
//!     [--max-model-len L] [--tp N] [--block-size 16] [--kv-dtype D] [--weights-gib W]
//!     [--activation-gib A] [--non-torch-gib T] [--available-kv-gib K]
//!     [--max-num-batched-tokens N] [--max-num-seqs N] [--json]
//! ```
//! JSON fields: `kv_cache_gib` (available KV memory, GiB), `kv_cache_bytes`,
//! `kv_cache_tokens`, `num_gpu_blocks`, `max_concurrency`, `bytes_per_block`,
//! `fits_max_model_len`, `paging`, `inputs` (every term with its value in GiB and its source:
//! `user`, `catalog`, `estimate` or `config`), `log_lines`, `derivations`, `notes`.
//! Without `--weights-gib`, `--activation-gib` and `--non-torch-gib` the weights come from the
//! config (sharded by TP), the activation peak and non-torch memory from the documented
//! estimates in `core::memory`. `--available-kv-gib` skips the subtraction.

use super::{write_json, Args, CliError};
use crate::core::base::derivation::Source;
use crate::core::base::dtype::Dtype;
use crate::core::base::units::Bytes;
use crate::core::calc::memory::{
    activation_estimate, default_max_num_batched_tokens, non_torch_estimate, vllm_budget,
    weights_per_gpu, ActivationParams, KvProfile, Paging, VllmInputs, DEFAULT_BLOCK_SIZE,
    DEFAULT_GPU_MEMORY_UTILIZATION, DEFAULT_MAX_NUM_SEQS,
};
use crate::core::calc::{kv, weights};
use crate::core::hardware::catalog::Catalog;
use crate::core::model::config::parse_model_text;
use serde_json::json;
use std::io::Write;

/// Largest memory figure accepted, in GiB (a petabyte-class accelerator).
const MAX_GIB: f64 = 1.0e6;

fn io(e: std::io::Error) -> CliError {
    CliError::Io {
        path: "stdout".into(),
        reason: e.to_string(),
    }
}

fn gib_opt(args: &Args, k: &str) -> Result<Option<Bytes>, CliError> {
    match args.f64_opt(k, 0.0, MAX_GIB)? {
        None => Ok(None),
        Some(v) => Bytes::from_gib_f64(v)
            .map(Some)
            .ok_or_else(|| CliError::Usage(format!("--{k} must be a number from 0 to {MAX_GIB}"))),
    }
}

fn source_kind(s: &Source) -> &'static str {
    match s {
        Source::User(_) => "user",
        Source::Catalog(_) => "catalog",
        Source::ConfigKey(_) => "config",
        Source::Default(_) | Source::Derived(_) => "estimate",
    }
}

/// Runs `llmcalc vllm`.
pub fn run(args: &Args, out: &mut dyn Write) -> Result<(), CliError> {
    let model = parse_model_text(&args.read_file("config")?)?;
    let tp = args.u64_opt("tp")?.unwrap_or(1);
    let block_size = args.u64_opt("block-size")?.unwrap_or(DEFAULT_BLOCK_SIZE);
    let util = args
        .f64_opt("gpu-memory-utilization", 0.0, 1.0)?
        .unwrap_or(DEFAULT_GPU_MEMORY_UTILIZATION);
    if util <= 0.0 {
        return Err(CliError::Usage(
            "--gpu-memory-utilization must be above 0 and at most 1".into(),
        ));
    }
    let max_model_len = match args.u64_opt("max-model-len")? {
        Some(l) => l,
        None => model.max_position_embeddings.ok_or_else(|| {
            CliError::Usage(
                "--max-model-len is required: the config states no max_position_embeddings".into(),
            )
        })?,
    };
    let kv_dtype = match args.get("kv-dtype") {
        Some(s) => Dtype::parse(s)?,
        None => kv::default_kv_dtype(&model),
    };

    // Total memory: given, or from the catalog.
    let (total, total_source) = match (gib_opt(args, "gpu-memory-gib")?, args.get("gpu")) {
        (Some(g), _) => (g, Source::User("gpu_memory_gib".into())),
        (None, Some(id)) => {
            let acc = Catalog::builtin().get(id)?;
            (
                acc.capacity(),
                Source::Catalog(format!("{} memory", acc.id)),
            )
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

    let profile = KvProfile::from_model(&model, kv_dtype, tp)?;
    let mut derivations = Vec::new();

    let (w, w_src) = match gib_opt(args, "weights-gib")? {
        Some(w) => (w, Source::User("weights_gib".into())),
        None => {
            let whole = weights::checkpoint(&model, 1)?;
            let (w, d) = weights_per_gpu(&model, whole.total, tp)?;
            derivations.push(whole.derivation);
            derivations.push(d);
            (w, Source::Derived("weights_per_gpu".into()))
        }
    };
    let mnbt = args
        .u64_opt("max-num-batched-tokens")?
        .unwrap_or_else(|| default_max_num_batched_tokens(total));
    let (act, act_src) = match gib_opt(args, "activation-gib")? {
        Some(a) => (a, Source::User("activation_gib".into())),
        None => {
            let ap = ActivationParams {
                chunk_tokens: mnbt,
                logit_rows: args
                    .u64_opt("max-num-seqs")?
                    .unwrap_or(DEFAULT_MAX_NUM_SEQS),
                act: if model.weights.base.bits() >= 16 && model.weights.base != Dtype::Fp32 {
                    model.weights.base
                } else {
                    Dtype::Bf16
                },
                tp,
            };
            let (a, d) = activation_estimate(&model, &ap)?;
            derivations.push(d);
            (a, Source::Derived("mem_activation_estimate".into()))
        }
    };
    let (nt, nt_src) = match gib_opt(args, "non-torch-gib")? {
        Some(n) => (n, Source::User("non_torch_gib".into())),
        None => (
            non_torch_estimate(tp),
            Source::Default("non_torch_estimate".into()),
        ),
    };
    let inp = VllmInputs {
        total_memory: total,
        total_source,
        gpu_memory_utilization: util,
        weights: w,
        weights_source: w_src,
        activation_peak: act,
        activation_source: act_src,
        non_torch: nt,
        non_torch_source: nt_src,
        available_kv_override: gib_opt(args, "available-kv-gib")?,
        block_size,
        max_model_len,
        max_num_batched_tokens: mnbt,
    };
    let b = vllm_budget(&inp, &profile)?;
    derivations.extend(b.derivations.iter().cloned());

    if args.flag("json") {
        let term = |v: Bytes, s: &Source| json!({ "gib": v.gib(), "bytes": v.0, "source": source_kind(s) });
        let v = json!({
            "model": model.name,
            "kv_cache_gib": b.available_kv.gib(),
            "kv_cache_bytes": b.available_kv.0,
            "kv_cache_tokens": b.kv_cache_tokens,
            "num_gpu_blocks": b.num_gpu_blocks,
            "max_concurrency": b.max_concurrency,
            "bytes_per_block": b.bytes_per_block.0,
            "fits_max_model_len": b.fits_max_model_len,
            "paging": match b.paging { Paging::Uniform => "uniform", Paging::Hybrid => "hybrid", Paging::None => "none" },
            "block_size": block_size,
            "max_model_len": max_model_len,
            "tp": tp,
            "kv_dtype": kv_dtype.id(),
            "inputs": {
                "total_memory": term(inp.total_memory, &inp.total_source),
                "gpu_memory_utilization": util,
                "requested_memory": { "gib": b.requested_memory.gib(), "bytes": b.requested_memory.0 },
                "weights": term(inp.weights, &inp.weights_source),
                "activation_peak": term(inp.activation_peak, &inp.activation_source),
                "non_torch": term(inp.non_torch, &inp.non_torch_source),
                "available_kv_override": inp.available_kv_override.map(|k| k.gib()),
                "max_num_batched_tokens": mnbt,
            },
            "log_lines": b.log_lines,
            "derivations": derivations,
            "notes": b.notes,
        });
        write_json(out, &v)
    } else {
        for l in &b.log_lines {
            writeln!(out, "{l}").map_err(io)?;
        }
        writeln!(out).map_err(io)?;
        for d in &derivations {
            writeln!(
                out,
                "{}: {} = {} = {}",
                d.title_key, d.formula, d.substituted, d.result
            )
            .map_err(io)?;
        }
        Ok(())
    }
}
