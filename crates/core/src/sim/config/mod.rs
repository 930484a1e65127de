//! The engine's knobs, named as vLLM names them, and what they resolve to on one GPU.
//!
//! Defaults are vLLM's for `vllm serve` (V1): `max_num_seqs` 1,024 / 256 and
//! `max_num_batched_tokens` 8,192 / 2,048 on GPUs with at least / below 70 GiB
//! (`core::memory::default_max_num_seqs`, `default_max_num_batched_tokens`), and the small
//! figures on every A100 as vLLM's rule says (`core::memory::vllm_serve_defaults`), `block_size` 16,
//! `gpu_memory_utilization` 0.9, `max_model_len` the length vLLM derives from the config
//! (`ModelDesc::vllm_default_max_len`: `max_position_embeddings` unless vLLM's rules say
//! otherwise; 2,048 when it states none, as vLLM assumes: `core::memory::default_max_model_len`).
//! The number of KV blocks is vLLM's budget (`core::memory::vllm_budget`) on the inputs
//! `core::memory::vllm_start` finds (the same the report's memory section and `llmcalc vllm`
//! use): total memory × utilization − weights − the activation peak of a
//! `max_num_batched_tokens` chunk − non-torch memory, paged in blocks; `num_gpu_blocks_override` (vLLM's flag of that name)
//! replaces it, for a run whose log states the figure. The total is what vLLM sees
//! (`core::memory::vllm_total_memory`: 79.22 GiB on an H100 80 GB, as its logs print, not
//! nvidia-smi's 79.65) and the weights are laid out as vLLM's kernels need them
//! (`core::memory::mxfp4_moe_padding`: MXFP4 MoE experts padded for Marlin on NVIDIA GPUs
//! without native FP4, 65.9 GiB for gpt-oss-120b on one GPU against its checkpoint's 60.8).
//!
//! Beside the engine, the server's **frontend path** (`frontend_overhead_ms`): the time from
//! a client sending a request to the engine queueing it and from the engine's token to the
//! client (HTTP, the chat template, tokenization, detokenization, streaming), which the
//! performance model, timing GPU work only, does not contain. A request enters the engine's
//! queue that long after it is sent, so every TTFT and end-to-end latency holds it once;
//! TPOT and ITL do not. The default, [`DEFAULT_FRONTEND_OVERHEAD_MS`], is a measurement
//! (its source is on the constant).

use crate::base::dtype::Dtype;
use crate::base::error::{CalcError, Phrase};
use crate::base::units::Bytes;
use crate::calc::kv::auto_kv_dtype;
use crate::calc::memory::{
    default_max_model_len, vllm_budget, vllm_serve_defaults, vllm_start, KvProfile, VllmBudget,
    VllmEngine, VllmInputs, DEFAULT_BLOCK_SIZE, DEFAULT_GPU_MEMORY_UTILIZATION,
};
use crate::calc::perf::{Efficiencies, Workload};
use crate::calc::weights::format_for;
use crate::hardware::Accelerator;
use crate::model::{EngineMaxLen, ModelDesc};
use crate::sim::engines::{EngineKind, Policy, SglangStateFlags};
use crate::sim::parallel::Parallel;
use crate::sim::resolved::{block_groups, Resolved};
use crate::sim::spec::SpecConfig;
use serde::{Deserialize, Serialize};

/// Largest `max_num_seqs` / `max_num_batched_tokens` accepted (far above any deployment).
pub const MAX_ENGINE_KNOB: u64 = 1 << 20;

/// The fixed part of the server's path of one request, milliseconds: what `vllm serve`'s
/// OpenAI server adds to a request's TTFT beyond the engine's steps and its serial work per
/// prompt token (HTTP, parsing, the hand-off to the engine process, detokenizing and
/// streaming the first token): 15 ms.
///
/// **A fit on the development rows** (`tests/fixtures/measured_serving_e2e.csv`): the value
/// that minimises the median |error| of the mean TTFT of the SemiAnalysis InferenceX runs at
/// 8 or fewer clients (vLLM's OpenAI server, `/v1/completions`, streaming; where queueing is
/// small, so the server's path is what the engine does not explain), every other term fixed.
/// `tests/serving_e2e_validation.rs` re-derives it and reports it left out one model at a
/// time (32 ms before the simulator modelled asynchronous scheduling's one-step admission
/// delay, which now explains part of what this term held; 22 ms before the MXFP4 and INT4
/// experts on Hopper were timed as Marlin's kernel; 20 ms before a step larger than vLLM's
/// largest CUDA graph paid its CPU time per layer, `sim::kernel_step::FIT_EAGER_LAYER_S`).
/// It replaces 48 ms, which came from one GPUStack row (line 2 of
/// `tests/fixtures/serving_observations.csv`) and was larger than the whole measured TTFT of
/// many development runs (`docs/SERVING_SIMULATOR.md`, "Method and accuracy"). Other stacks differ:
/// behind NVIDIA Dynamo's frontend it is [`DYNAMO_FRONTEND_OVERHEAD_MS`].
pub const DEFAULT_FRONTEND_OVERHEAD_MS: f64 = 15.0;

/// The fixed part of the server's path behind NVIDIA Dynamo's frontend, milliseconds: 0 ms,
/// fitted on AIConfigurator's own runs at 8 or fewer clients by re-simulating them at each
/// trial value (`dynamo_path_scan` in `tests/serving_e2e_validation.rs`: their fixed-length
/// clients' phases do not move additively with it).
pub const DYNAMO_FRONTEND_OVERHEAD_MS: f64 = 0.0;

/// The fixed part of SGLang's server path, milliseconds, as [`DEFAULT_FRONTEND_OVERHEAD_MS`]
/// is vLLM's: 140 ms, **a fit** on the development rows of SGLang at 8 or fewer clients
/// (`tests/engines_e2e_validation.rs`: the value minimising the median |error| of their mean
/// TTFT: AIConfigurator's Qwen3-235B runs behind Dynamo and InferenceX's DeepSeek runs behind
/// SGLang's own server, 100 to 300 ms above the simulated engine at 2 to 8 clients). Large beside vLLM's 15 ms: it also holds whatever of the prompt's time the
/// simulator, timing SGLang's steps with vLLM's kernels, misses (`docs/SERVING_SIMULATOR.md`).
pub const SGLANG_FRONTEND_OVERHEAD_MS: f64 = 140.0;

/// The fixed part of `trtllm-serve`'s path, milliseconds: 28 ms, fitted the same way on the
/// TensorRT-LLM rows at 8 or fewer clients without speculative decoding (within half a point of
/// the fit's median |error|, whose flat minimum lies at 20.25 ms).
pub const TRTLLM_FRONTEND_OVERHEAD_MS: f64 = 28.0;

/// The server path `engine`'s runs default to, milliseconds: each engine's fitted value.
pub fn engine_frontend_overhead_ms(engine: EngineKind) -> f64 {
    match engine {
        EngineKind::Vllm => DEFAULT_FRONTEND_OVERHEAD_MS,
        EngineKind::Sglang => SGLANG_FRONTEND_OVERHEAD_MS,
        EngineKind::Trtllm => TRTLLM_FRONTEND_OVERHEAD_MS,
    }
}

/// Largest frontend overhead accepted, milliseconds.
pub const MAX_FRONTEND_OVERHEAD_MS: f64 = 10_000.0;

/// Largest serial work per prompt token accepted, microseconds.
pub const MAX_FRONTEND_PER_TOKEN_US: f64 = 10_000.0;

fn default_frontend_overhead_ms() -> f64 {
    DEFAULT_FRONTEND_OVERHEAD_MS
}

/// vLLM's engine flags that shape scheduling (`None` = vLLM's default for the GPU).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EngineConfig {
    /// Tensor-parallel size.
    pub tp: u64,
    /// `--max-num-seqs`: most requests running at once.
    pub max_num_seqs: Option<u64>,
    /// `--max-num-batched-tokens`: the per-step token budget.
    pub max_num_batched_tokens: Option<u64>,
    /// `--block-size`: tokens per KV block.
    pub block_size: u64,
    /// `--gpu-memory-utilization`, in (0, 1].
    pub gpu_memory_utilization: f64,
    /// `--max-model-len` (`None` = the length vLLM derives from the config,
    /// [`ModelDesc::vllm_default_max_len`], or vLLM's 2,048 when it states none).
    pub max_model_len: Option<u64>,
    /// `--num-gpu-blocks-override`.
    pub num_gpu_blocks_override: Option<u64>,
    /// Weight precision (`None` = the checkpoint's).
    pub weights_dtype: Option<Dtype>,
    /// `--kv-cache-dtype` (`None` = auto: the model's 16-bit precision).
    pub kv_dtype: Option<Dtype>,
    /// Share of each prompt found in the prefix cache, in [0, 1): that share (whole blocks)
    /// skips its prefill.
    pub prefix_hit: f64,
    /// The server's frontend path per request, milliseconds, in [0, 10,000]: a request
    /// enters the engine's queue this long after it is sent (module docs).
    #[serde(default = "default_frontend_overhead_ms")]
    pub frontend_overhead_ms: f64,
    /// The server's serial work per prompt token, microseconds (tokenization and the
    /// request's preparation, done by one worker in arrival order, so a burst of requests
    /// reaches the engine spread out rather than at one instant).
    #[serde(default = "default_frontend_per_token_us")]
    pub frontend_per_token_us: f64,
    /// vLLM's asynchronous scheduling (on by default from vLLM 0.14): the engine's CPU work
    /// per step overlaps the GPU's, so its time per step beyond the kernels is the smaller
    /// fitted figure (`sim::kernel_step::FIT_STEP_ASYNC_S`, else `FIT_STEP_SYNC_S`).
    #[serde(default = "yes")]
    pub async_scheduling: bool,
    /// vLLM's largest CUDA-graph step in tokens (`--compilation-config
    /// '{"max_cudagraph_capture_size": N}'`; 0 for `--enforce-eager`); `None`: vLLM's default,
    /// `min(2 × max_num_seqs, 512)`. A larger step runs without a graph and costs
    /// `sim::kernel_step::FIT_EAGER_LAYER_S` per layer more (measured-kernel step model, vLLM).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_cudagraph_capture_size: Option<u64>,
    /// Which step-time model to use: vLLM's measured kernels (the default, where the GPU or
    /// its architecture has tables) or the fitted roofline (`core::perf`'s efficiencies).
    #[serde(default)]
    pub step_model: StepModelKind,
    /// The engine (`sim::engines`). Under SGLang and TensorRT-LLM, `max_num_seqs` is
    /// `--max-running-requests` / `max_batch_size`, `max_num_batched_tokens`
    /// `--chunked-prefill-size` / `max_num_tokens` (`None`: the engine's default), and
    /// [`EngineConfig::memory_fraction`] and [`EngineConfig::page_size`] replace
    /// `gpu_memory_utilization` and `block_size`.
    #[serde(default)]
    pub engine: EngineKind,
    /// SGLang's `--mem-fraction-static` or TensorRT-LLM's `free_gpu_memory_fraction`, in (0,
    /// 1] (`None`: the engine's default).
    #[serde(default)]
    pub memory_fraction: Option<f64>,
    /// SGLang's `--page-size` or TensorRT-LLM's `tokens_per_block` (`None`: the engine's
    /// default).
    #[serde(default)]
    pub page_size: Option<u64>,
    /// TensorRT-LLM's `enable_chunked_prefill` (off by default).
    #[serde(default)]
    pub chunked_prefill: bool,
    /// SGLang's `--enable-mixed-chunk` (off by default).
    #[serde(default)]
    pub mixed_chunk: bool,
    /// SGLang's `--max-prefill-tokens` (`None`: 16,384).
    #[serde(default)]
    pub max_prefill_tokens: Option<u64>,
    /// SGLang's `--scheduler-recv-interval` (`None`: 1, every step).
    #[serde(default)]
    pub scheduler_recv_interval: Option<u64>,
    /// TensorRT-LLM's attention-DP balancing, `attention_dp_config` with `enable_balance`
    /// and this `timeout_iters` (`None`: off, TensorRT-LLM's default; only under attention
    /// DP).
    #[serde(default)]
    pub adp_balance_timeout_iters: Option<u64>,
    /// TensorRT-LLM's batch waiting without attention DP: `batch_wait_timeout_iters` and
    /// `batch_wait_max_tokens_ratio` (`None`: 0 and 0, off, its defaults).
    #[serde(default)]
    pub batch_wait: Option<(u64, f64)>,
    /// Attention data-parallel ranks of `tp` GPUs each (`sim::parallel`).
    #[serde(default = "one")]
    pub dp: u64,
    /// The MoE layers' expert-parallel size (1: none; vLLM's `--enable-expert-parallel` is
    /// `tp × dp`: [`EngineConfig::with_expert_parallel`]).
    #[serde(default = "one")]
    pub ep: u64,
    /// Pipeline stages.
    #[serde(default = "one")]
    pub pp: u64,
    /// Nodes the GPUs are spread over (0: the fewest that hold them).
    #[serde(default)]
    pub nodes: u64,
    /// Speculative decoding (`sim::spec`; `None`: off).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<SpecConfig>,
    /// SGLang's flags that size a hybrid model's recurrent-state pool (`sim::engines`;
    /// read only under SGLang, for a model with recurrent layers).
    #[serde(default, skip_serializing_if = "SglangStateFlags::is_default")]
    pub sglang_state: SglangStateFlags,
}

fn one() -> u64 {
    1
}

fn yes() -> bool {
    true
}

/// The step-time model a simulation uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepModelKind {
    /// vLLM's measured kernels (`core::hardware::kernels`) where the GPU or its
    /// architecture's sibling has tables; the roofline elsewhere.
    #[default]
    Kernels,
    /// The fitted roofline with `Efficiencies` (what `calibrate --fit` adjusts).
    Roofline,
}

fn default_frontend_per_token_us() -> f64 {
    DEFAULT_FRONTEND_PER_TOKEN_US
}

/// The server's serial work per prompt token, microseconds: 2 µs. Source: the request-path
/// coefficients inference-sim (BLIS) trained for vLLM 0.10.1.1 on H100 (`defaults.yaml`,
/// `alpha_coeffs[1]`, microseconds per input token: gpt-oss-120b at TP 1, 2, 4, 8: 1.80,
/// 2.04, 1.67, 1.92; gpt-oss-20b: 1.69, 1.58, 2.00, 1.65), the vLLM version nearest to the
/// development rows; not fitted here.
pub const DEFAULT_FRONTEND_PER_TOKEN_US: f64 = 2.0;

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            tp: 1,
            max_num_seqs: None,
            max_num_batched_tokens: None,
            block_size: DEFAULT_BLOCK_SIZE,
            gpu_memory_utilization: DEFAULT_GPU_MEMORY_UTILIZATION,
            max_model_len: None,
            num_gpu_blocks_override: None,
            weights_dtype: None,
            kv_dtype: None,
            prefix_hit: 0.0,
            frontend_overhead_ms: DEFAULT_FRONTEND_OVERHEAD_MS,
            frontend_per_token_us: DEFAULT_FRONTEND_PER_TOKEN_US,
            async_scheduling: true,
            max_cudagraph_capture_size: None,
            step_model: StepModelKind::Kernels,
            engine: EngineKind::Vllm,
            memory_fraction: None,
            page_size: None,
            chunked_prefill: false,
            mixed_chunk: false,
            max_prefill_tokens: None,
            scheduler_recv_interval: None,
            adp_balance_timeout_iters: None,
            batch_wait: None,
            dp: 1,
            ep: 1,
            pp: 1,
            nodes: 0,
            spec: None,
            sglang_state: SglangStateFlags::default(),
        }
    }
}

/// `v` when it is finite and `ok` (the caller's range test), else the field's `range` (an
/// i18n key) in a sentence.
fn within(field: &str, v: f64, ok: bool, range: &'static str) -> Result<f64, CalcError> {
    if v.is_finite() && ok {
        Ok(v)
    } else {
        Err(CalcError::out_of_range(
            Phrase::verbatim(field),
            v,
            Phrase::tr(range),
        ))
    }
}

fn whole(field: &str, v: u64, lo: u64, hi: u64) -> Result<u64, CalcError> {
    CalcError::whole_in(Phrase::verbatim(field), v, (lo, hi))
}

impl EngineConfig {
    /// The instance's parallelism in the one spelling of `sim::parallel`.
    pub fn parallel(&self) -> Parallel {
        Parallel {
            tp: self.tp,
            dp: self.dp,
            ep: self.ep,
            pp: self.pp,
            nodes: self.nodes,
        }
    }

    /// With vLLM's `--enable-expert-parallel`: expert parallelism over every GPU of a stage
    /// (`ep = tp × dp`: each GPU holds `experts / (tp × dp)` whole experts instead of a slice
    /// of every expert's intermediate size), unless an expert-parallel size is set already.
    pub fn with_expert_parallel(mut self, on: bool) -> Self {
        if on && self.ep <= 1 {
            self.ep = self.tp.saturating_mul(self.dp);
        }
        self
    }

    /// The workload of the performance model: TP and precisions.
    pub fn perf_workload(&self) -> Workload {
        let mut wl = Workload::new(1, 1, 1, self.tp);
        wl.weights_dtype = self.weights_dtype;
        wl.kv_dtype = self.kv_dtype;
        wl
    }

    /// Resolves the defaults and the KV blocks for `model` on `gpu`.
    pub fn resolve(&self, model: &ModelDesc, gpu: &Accelerator) -> Result<Resolved, CalcError> {
        if self.engine != EngineKind::Vllm {
            return self.resolve_other(model, gpu);
        }
        let (tp, mml, max_model_len_assumed, max_model_len_derived) =
            self.common_checks(model, gpu)?;
        let (default_seqs, default_mnbt) = vllm_serve_defaults(gpu);
        let seqs = whole(
            "max_num_seqs",
            self.max_num_seqs.unwrap_or(default_seqs),
            1,
            MAX_ENGINE_KNOB,
        )?;
        let mnbt = whole(
            "max_num_batched_tokens",
            self.max_num_batched_tokens.unwrap_or(default_mnbt),
            1,
            MAX_ENGINE_KNOB,
        )?;
        let block_size = whole("block_size", self.block_size, 1, 4096)?;
        let (budget, profile) = self.budget(model, gpu, (tp, mnbt, seqs, block_size, mml))?;
        let groups = block_groups(&profile, &budget);
        let blocks = match self.num_gpu_blocks_override {
            // Two at least: vLLM keeps one as its null block.
            Some(b) => whole("num_gpu_blocks_override", b, 2, u64::MAX)?,
            None => budget.num_gpu_blocks,
        };
        Ok(Resolved {
            max_num_seqs: seqs,
            max_num_batched_tokens: mnbt,
            // vLLM raises the attention block beside recurrent layers (`Paging::Mamba`).
            block_size: budget.block_size.max(block_size),
            max_model_len: mml,
            max_model_len_assumed,
            max_model_len_derived,
            num_gpu_blocks: blocks,
            groups,
            prefix_hit: self.prefix_hit,
            frontend_overhead_s: self.frontend_overhead_ms / 1e3,
            frontend_per_token_s: self.frontend_per_token_us / 1e6,
            budget,
            policy: Policy::Vllm,
            pool: None,
            spec: self.spec,
        })
    }

    /// The checks every engine shares: TP, the prefix share, the server's path; then
    /// `max_model_len` as the config gives it (with where it came from).
    fn common_checks(
        &self,
        model: &ModelDesc,
        gpu: &Accelerator,
    ) -> Result<(u64, u64, bool, Option<EngineMaxLen>), CalcError> {
        let tp = whole("tp", self.tp, 1, 1024)?;
        self.parallel().check(model, gpu, self.engine)?;
        let p = self.prefix_hit;
        within(
            "prefix_hit",
            p,
            (0.0..1.0).contains(&p),
            "rng_sim_prefix_hit",
        )?;
        let fo = self.frontend_overhead_ms;
        within(
            "frontend_overhead_ms",
            fo,
            (0.0..=MAX_FRONTEND_OVERHEAD_MS).contains(&fo),
            "rng_sim_frontend_overhead",
        )?;
        let pt = self.frontend_per_token_us;
        within(
            "frontend_per_token_us",
            pt,
            (0.0..=MAX_FRONTEND_PER_TOKEN_US).contains(&pt),
            "rng_sim_frontend_per_token",
        )?;
        let (mml, assumed) = match self.max_model_len {
            Some(l) => (l, false),
            None => default_max_model_len(model.vllm_default_max_len()),
        };
        let derived = match self.max_model_len {
            Some(_) => None,
            None => model.engine_max_len.clone(),
        };
        if let Some(sp) = self.spec {
            sp.validate()?;
        }
        let mml = whole("max_model_len", mml, 1, u64::MAX)?;
        Ok((tp, mml, assumed, derived))
    }

    /// vLLM's budget from the inputs `memory::vllm_start` finds (the one home of what vLLM
    /// has for the KV cache: the total memory vLLM sees, the weights as its kernels lay them
    /// out, the activation peak of one chunk, the non-torch estimate).
    fn budget(
        &self,
        model: &ModelDesc,
        gpu: &Accelerator,
        (tp, mnbt, seqs, block_size, mml): (u64, u64, u64, u64, u64),
    ) -> Result<(VllmBudget, KvProfile), CalcError> {
        let inp = self.start_inputs(
            model,
            gpu,
            (tp, mnbt, seqs, block_size, mml),
            self.gpu_memory_utilization,
        )?;
        let profile = self.kv_profile(model, tp, gpu)?;
        Ok((vllm_budget(&inp, &profile)?, profile))
    }

    /// What one GPU's KV cache holds per token and sequence at `tp`: the user's KV dtype, or
    /// the one the weights' format implies (vLLM's `auto`), for every engine.
    fn kv_profile(
        &self,
        model: &ModelDesc,
        tp: u64,
        gpu: &Accelerator,
    ) -> Result<KvProfile, CalcError> {
        let base = model.weights.base;
        let fmt_base = match self.weights_dtype {
            Some(d) => format_for(d, base).base,
            None => base,
        };
        let kv = self.kv_dtype.unwrap_or(auto_kv_dtype(fmt_base));
        KvProfile::from_model(model, kv, tp, gpu.architecture)
    }

    /// vLLM's start-up inputs on `gpu` at `(tp, tokens per step, sequences, block size,
    /// max_model_len)` and the memory share `memory_share` (`memory::vllm_start`: the total
    /// memory, the weights as its kernels lay them out, the activation peak, the non-torch
    /// estimate), the weights those one GPU holds under the instance's parallelism.
    fn start_inputs(
        &self,
        model: &ModelDesc,
        gpu: &Accelerator,
        (tp, mnbt, seqs, block_size, mml): (u64, u64, u64, u64, u64),
        memory_share: f64,
    ) -> Result<VllmInputs, CalcError> {
        let engine = VllmEngine {
            tp,
            weights_dtype: self.weights_dtype,
            gpu_memory_utilization: memory_share,
            block_size,
            max_model_len: mml,
            max_num_batched_tokens: mnbt,
            max_num_seqs: seqs,
        };
        let mut inp = vllm_start(model, gpu, &engine)?.inputs;
        inp.weights = self.parallel_weights(model, inp.weights);
        Ok(inp)
    }

    /// The weights one GPU holds under the instance's parallelism, from those at TP alone
    /// (`Parallel::weights_per_gpu`; unchanged without attention DP or pipeline stages).
    fn parallel_weights(&self, model: &ModelDesc, at_tp: Bytes) -> Bytes {
        let p = self.parallel();
        if p.dp <= 1 && p.pp <= 1 {
            return at_tp;
        }
        let fmt = match self.weights_dtype {
            Some(d) => format_for(d, model.weights.base),
            None => model.weights.clone(),
        };
        p.weights_per_gpu(model, &fmt, at_tp)
    }
}

/// Stops a run that would take too long: it ends with the statistics so far, marked partial.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Budget {
    /// Most engine steps simulated.
    pub max_steps: u64,
}

/// The default budget: 2,000,000 steps (about a second natively; the speed benchmark
/// `examples/bench_sim.rs` measures it).
pub const DEFAULT_MAX_STEPS: u64 = 2_000_000;

impl Default for Budget {
    fn default() -> Self {
        Budget {
            max_steps: DEFAULT_MAX_STEPS,
        }
    }
}

/// Latency targets of goodput (vLLM bench `--goodput ttft:MS tpot:MS`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Slo {
    /// Time-to-first-token target, milliseconds.
    pub ttft_ms: f64,
    /// Time-per-output-token target, milliseconds.
    pub tpot_ms: f64,
}

/// Everything one simulation reads besides the model and the GPU.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct SimConfig {
    /// The engine's flags.
    pub engine: EngineConfig,
    /// The offered load.
    pub workload: crate::sim::workload::WorkloadSpec,
    /// The performance model's efficiencies (default: the fitted ones).
    pub efficiencies: Efficiencies,
    /// Goodput targets.
    pub slo: Option<Slo>,
    /// When to stop early.
    pub budget: Budget,
}

mod other;

#[cfg(test)]
mod tests;
