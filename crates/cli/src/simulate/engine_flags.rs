//! The engine flags (`vllm serve`'s, SGLang's, TensorRT-LLM's) as one engine's configuration,
//! speculative decoding included.

use crate::args::short;
use crate::core::base::Dtype;
use crate::core::calc::{DEFAULT_BLOCK_SIZE, DEFAULT_GPU_MEMORY_UTILIZATION};
use crate::core::sim::engine_frontend_overhead_ms;
use crate::core::sim::{EngineConfig, EngineKind, SglangStateFlags, StepModelKind};
use crate::core::sim::{SpecConfig, SpecMethod};
use crate::opts::Engine;
use crate::CliError;

/// The engine flags at `tp` GPUs per replica; `--eff` given selects the roofline unless
/// `--step-model` says otherwise.
pub(crate) fn engine(args: &Engine, tp: u64, eff_given: bool) -> Result<EngineConfig, CliError> {
    let kind = match args.engine.as_deref() {
        None => EngineKind::Vllm,
        Some(v) => EngineKind::from_id(v).ok_or_else(|| {
            CliError::Usage(format!(
                "--engine must be vllm, sglang or trtllm, not \"{}\"",
                short(v)
            ))
        })?,
    };
    let k = engine_knobs(args, kind)?;
    let other = kind != EngineKind::Vllm;
    let mut e = EngineConfig {
        tp,
        engine: kind,
        max_num_seqs: k.seqs,
        max_num_batched_tokens: k.tokens,
        page_size: k.page.filter(|_| other),
        memory_fraction: k.fraction.filter(|_| other),
        mixed_chunk: args.others.enable_mixed_chunk,
        max_prefill_tokens: args.others.max_prefill_tokens,
        chunked_prefill: args.others.enable_chunked_prefill,
        scheduler_recv_interval: args.others.scheduler_recv_interval,
        adp_balance_timeout_iters: args.others.attention_dp_timeout_iters,
        batch_wait: match (
            args.others.batch_wait_timeout_iters,
            args.others.batch_wait_max_tokens_ratio,
        ) {
            (None, None) => None,
            (i, r) => Some((i.unwrap_or(0), r.unwrap_or(0.0))),
        },
        max_model_len: args.vllm.max_model_len,
        weights_dtype: args
            .dtypes
            .weights_dtype
            .as_deref()
            .map(Dtype::parse)
            .transpose()?,
        kv_dtype: args
            .dtypes
            .kv_dtype
            .as_deref()
            .map(Dtype::parse)
            .transpose()?,
        block_size: args.vllm.block_size.unwrap_or(DEFAULT_BLOCK_SIZE),
        gpu_memory_utilization: args
            .vllm
            .gpu_memory_utilization
            .unwrap_or(DEFAULT_GPU_MEMORY_UTILIZATION),
        prefix_hit: args.prefix_hit,
        frontend_overhead_ms: args
            .frontend_overhead_ms
            .unwrap_or(engine_frontend_overhead_ms(kind)),
        frontend_per_token_us: args.frontend_per_token_us,
        async_scheduling: !args.no_async_scheduling,
        max_cudagraph_capture_size: crate::opts::capture_size(
            args.max_cudagraph_capture_size,
            args.enforce_eager,
        ),
        dp: args.parallel.dp.unwrap_or(1),
        ep: args.parallel.ep.unwrap_or(1),
        pp: args.parallel.pp.unwrap_or(1),
        nodes: args.parallel.nodes.unwrap_or(0),
        ..EngineConfig::default()
    }
    .with_expert_parallel(args.enable_expert_parallel);
    e.sglang_state = SglangStateFlags {
        disable_radix_cache: args.others.disable_radix_cache,
        max_mamba_cache_size: args.others.max_mamba_cache_size,
        mamba_full_memory_ratio: args.others.mamba_full_memory_ratio,
        mamba_ssm_dtype: match args.others.mamba_ssm_dtype.as_deref() {
            None => None,
            Some("float32") => Some(Dtype::Fp32),
            Some("bfloat16") => Some(Dtype::Bf16),
            Some("float16") => Some(Dtype::Fp16),
            Some(v) => {
                return Err(CliError::Usage(format!(
                    "--mamba-ssm-dtype must be float32, bfloat16 or float16, not \"{}\"",
                    short(v)
                )))
            }
        },
    };
    e.spec = spec_config(args)?;
    e.step_model = match args.step_model.as_deref() {
        None if eff_given => StepModelKind::Roofline,
        None => StepModelKind::Kernels,
        Some(v) if v.eq_ignore_ascii_case("kernels") => StepModelKind::Kernels,
        Some(v) if v.eq_ignore_ascii_case("roofline") => StepModelKind::Roofline,
        Some(v) => {
            return Err(CliError::Usage(format!(
                "--step-model must be \"kernels\" or \"roofline\", not \"{}\"",
                short(v)
            )))
        }
    };
    Ok(e)
}

/// Speculative decoding from `--spec-method`, `--spec-k` and the acceptance (`None`: off);
/// the other spec flags without a method are refused.
fn spec_config(args: &Engine) -> Result<Option<SpecConfig>, CliError> {
    let Some(name) = args.spec_method.as_deref() else {
        if args.spec_k.is_some()
            || args.spec_acceptance.is_some()
            || args.spec_accepted_length.is_some()
            || !args.spec_acceptance_per_position.is_empty()
        {
            return Err(CliError::Usage(
                "--spec-k and the --spec-accept… flags need --spec-method (mtp, eagle3 or ngram)"
                    .into(),
            ));
        }
        return Ok(None);
    };
    let method = SpecMethod::parse(name).ok_or_else(|| {
        CliError::Usage(format!(
            "--spec-method must be mtp, eagle3 or ngram, not \"{}\" (a separate draft model is not modelled yet)",
            short(name)
        ))
    })?;
    let per_position = &args.spec_acceptance_per_position;
    if !per_position.is_empty() {
        let n = per_position.len() as u64;
        if args.spec_k.is_some_and(|k| k != n) {
            return Err(CliError::Usage(format!(
                "--spec-k is {} but --spec-acceptance-per-position gives {n} positions; give one rate per draft position",
                args.spec_k.unwrap_or(0)
            )));
        }
        return Ok(Some(SpecConfig::from_cumulative(method, per_position)?));
    }
    let k = args.spec_k.unwrap_or(DEFAULT_SPEC_K);
    let s = match (args.spec_acceptance, args.spec_accepted_length) {
        (_, Some(l)) => SpecConfig::from_accepted_length(method, k, l)?,
        (Some(a), None) => SpecConfig::uniform(method, k, a),
        (None, None) => SpecConfig::new(method, k),
    };
    s.validate()?;
    Ok(Some(s))
}

/// Draft tokens per step when `--spec-k` is not given.
const DEFAULT_SPEC_K: u64 = 3;

/// The generic knobs of one engine: most requests running, tokens per step, tokens per page,
/// memory share (`None`: the engine's default).
struct Knobs {
    seqs: Option<u64>,
    tokens: Option<u64>,
    page: Option<u64>,
    fraction: Option<f64>,
}

/// The knobs from the flags of `kind`; another engine's flag is refused with the one to use.
fn engine_knobs(args: &Engine, kind: EngineKind) -> Result<Knobs, CliError> {
    // Each engine's flags given, in the order of `EngineKind::flag_names` and then its others.
    let given: [(EngineKind, Vec<bool>, &[&str]); 3] = [
        (
            EngineKind::Vllm,
            vec![
                args.vllm.max_num_seqs.is_some(),
                args.vllm.max_num_batched_tokens.is_some(),
                args.vllm.block_size.is_some(),
                args.vllm.gpu_memory_utilization.is_some(),
            ],
            &[],
        ),
        (
            EngineKind::Sglang,
            vec![
                args.others.max_running_requests.is_some(),
                args.others.chunked_prefill_size.is_some(),
                args.others.page_size.is_some(),
                args.others.mem_fraction_static.is_some(),
                args.others.enable_mixed_chunk,
                args.others.max_prefill_tokens.is_some(),
                args.others.scheduler_recv_interval.is_some(),
                args.others.disable_radix_cache,
                args.others.max_mamba_cache_size.is_some(),
                args.others.mamba_full_memory_ratio.is_some(),
                args.others.mamba_ssm_dtype.is_some(),
            ],
            &[
                "--enable-mixed-chunk",
                "--max-prefill-tokens",
                "--scheduler-recv-interval",
                "--disable-radix-cache",
                "--max-mamba-cache-size",
                "--mamba-full-memory-ratio",
                "--mamba-ssm-dtype",
            ],
        ),
        (
            EngineKind::Trtllm,
            vec![
                args.others.max_batch_size.is_some(),
                args.others.max_num_tokens.is_some(),
                args.others.tokens_per_block.is_some(),
                args.others.free_gpu_memory_fraction.is_some(),
                args.others.enable_chunked_prefill,
                args.others.attention_dp_timeout_iters.is_some(),
                args.others.batch_wait_timeout_iters.is_some(),
                args.others.batch_wait_max_tokens_ratio.is_some(),
            ],
            &[
                "--enable-chunked-prefill",
                "--attention-dp-timeout-iters",
                "--batch-wait-timeout-iters",
                "--batch-wait-max-tokens-ratio",
            ],
        ),
    ];
    for (owner, flags, others) in &given {
        let Some(i) = flags.iter().position(|g| *g).filter(|_| *owner != kind) else {
            continue;
        };
        // The command line spells every flag with dashes (TensorRT-LLM's own names in the note).
        let flag = match owner.flag_names().get(i) {
            Some(f) => format!("--{}", f.trim_start_matches('-').replace('_', "-")),
            None => others
                .get(i - 4)
                .map_or_else(String::new, |f| (*f).to_string()),
        };
        let instead = kind
            .flag_names()
            .get(i)
            .map(|f| {
                let cli = format!("--{}", f.trim_start_matches('-').replace('_', "-"));
                if cli == *f {
                    format!("; {}'s is {cli}", kind.name())
                } else {
                    format!("; {}'s is {cli} ({f})", kind.name())
                }
            })
            .unwrap_or_default();
        return Err(CliError::Usage(format!(
            "{flag} is {}'s flag, and the engine is {} (--engine {}){instead}",
            owner.name(),
            kind.name(),
            kind.id()
        )));
    }
    Ok(match kind {
        EngineKind::Vllm => Knobs {
            seqs: args.vllm.max_num_seqs,
            tokens: args.vllm.max_num_batched_tokens,
            page: args.vllm.block_size,
            fraction: args.vllm.gpu_memory_utilization,
        },
        EngineKind::Sglang => Knobs {
            seqs: args.others.max_running_requests,
            tokens: args.others.chunked_prefill_size,
            page: args.others.page_size,
            fraction: args.others.mem_fraction_static,
        },
        EngineKind::Trtllm => Knobs {
            seqs: args.others.max_batch_size,
            tokens: args.others.max_num_tokens,
            page: args.others.tokens_per_block,
            fraction: args.others.free_gpu_memory_fraction,
        },
    })
}
