//! The three serving engines the simulator stands for, each with its knobs under its own
//! names and defaults, its rule for the KV pool, and the scheduling policy its scheduler runs
//! ([`Policy`], read by `sim::scheduler`).
//!
//! The figures refer to **vLLM 0.19** (V1 engine; `sim::config`), **SGLang 0.5.9**
//! (`python -m sglang.launch_server`, defaults of v0.5.3 to v0.5.9) and **TensorRT-LLM 1.2**
//! (`trtllm-serve`, PyTorch backend, the defaults of 1.0 to 1.3). Sources, read from each
//! project's released code (SGLang's PyPI wheels, TensorRT-LLM's tagged sources) and quoted
//! file by file in `docs/SERVING_SIMULATOR.md` ("Engines"):
//!
//! **SGLang.** The pool is `mem_fraction_static × free − weights` (`profile_max_num_token`:
//! the free memory before the weights load, less `1 − fraction` of it, less what the weights
//! took), in tokens of `layers × kv heads per GPU × head dim × 2 × bytes` (MLA: the latent
//! and rope parts, not split by TP). `--mem-fraction-static` defaults to
//! `(M − reserved) / M` with `M` nvidia-smi's MiB and `reserved = max(512 + 1.5 ×
//! max(chunk, 2048) + 2 × cuda_graph_max_bs + 1024 × TP / 8, 10,240 on GPUs above 60 GiB)`
//! MiB (`server_args.py` `_handle_gpu_memory_settings`); `--chunked-prefill-size` 8,192 below
//! 160 GiB and 16,384 above; `--page-size` 1, 64 on Blackwell (its default `trtllm_mha`
//! attention); `--max-running-requests` `min(pool / 2, max(pool × 512 / context, 2048)
//! capped at 4096)`. Its scheduler runs a prompt batch or a decode batch per step, never both
//! (`--enable-mixed-chunk` is off), the prompt batch first whenever one can be formed;
//! admission reserves each new request's output (`min(max_new_tokens, 4096)`) and the running
//! ones' remaining output times the new-token ratio (0.7, falling by 0.001 per decode step to
//! 0.098, back to 0.7 when idle); when a decode step runs out of pages it retracts the request
//! with the fewest generated tokens (ties: the longest prompt) to the back of the queue.
//!
//! **SGLang, hybrid models** (recurrent or linear-attention layers beside attention:
//! Qwen3-Next and Qwen3.5's Gated DeltaNet, the Mamba-2 hybrids; [`sglang_hybrid_split`]).
//! The same `mem_fraction_static × free − weights` is shared between a KV pool for the
//! attention layers only (`profile_max_num_token` counts `full_attention_layer_ids`) and a
//! pool of recurrent-state slots, one slot a request's conv and SSM states in every recurrent
//! layer (`mamba_cache_per_req`, `configs/mamba_utils.py`: conv in bfloat16, SSM in
//! `--mamba-ssm-dtype`, else the config's `mamba_ssm_dtype`, else float32). The slots
//! (`handle_max_mamba_cache`, `model_runner_kv_cache_mixin.py`): `--max-mamba-cache-size`
//! when given; with `--disable-radix-cache` and `--max-running-requests` given, that many;
//! otherwise the share `r / (1 + r)` of the pool, `r` = `--mamba-full-memory-ratio` (0.9).
//! Speculative decoding first reserves each running request's intermediate states per draft
//! token. The running requests are at most the slots, a third of them while the radix cache
//! keeps finished requests' states (`init_memory_pool`:
//! `MAMBA_CACHE_SIZE_MAX_RUNNING_REQUESTS_RATIO` 3, 1 with `--disable-radix-cache`). With the
//! radix cache on, SGLang 0.5.9 turns the overlap scheduler off for these models (its default
//! `--mamba-scheduler-strategy no_buffer`, `server_args.py` `_handle_mamba_radix_cache`), and
//! on Blackwell their attention defaults to `triton` or `flashinfer`, pages of 1 token
//! (`_handle_model_specific_adjustments`).
//!
//! **TensorRT-LLM.** The pool is `free_gpu_memory_fraction × (M − peak)`, the peak measured
//! after a warm-up prefill of `max_num_tokens` tokens (weights, activations, memory outside
//! PyTorch), in blocks of `tokens_per_block` 32; `max_batch_size` 2,048, `max_num_tokens`
//! 8,192, chunked prefill off (a prompt runs whole in one step). The capacity scheduler's
//! default, `GUARANTEED_NO_EVICT`, admits a request in arrival order only when blocks for
//! its whole prompt and output are free beside what the running requests still need (the
//! queue stops at the first that does not fit); nothing is ever evicted. Each step takes
//! the decodes first, then prompts while the token budget lasts.
//!
//! Both overlap the CPU's scheduling with the GPU's step by default (SGLang's overlap
//! scheduler, TensorRT-LLM's `disable_overlap_scheduler = False`), as vLLM's asynchronous
//! scheduling does: a request arriving during a step is first scheduled in the one after
//! the next. The step times come from vLLM's measured kernels for all three (the engines'
//! own tables are not in `data/kernels.csv` yet): stated in every result as a note.

use crate::base::dtype::Dtype;
use crate::base::expr::Expr;
use crate::base::units::Bytes;
use crate::hardware::{Accelerator, Architecture};
use serde::{Deserialize, Serialize};

/// The serving engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EngineKind {
    /// vLLM (V1 engine), `vllm serve`.
    #[default]
    Vllm,
    /// SGLang, `python -m sglang.launch_server`.
    Sglang,
    /// TensorRT-LLM's PyTorch backend, `trtllm-serve`.
    Trtllm,
}

impl EngineKind {
    /// Every engine, in the order the page and the command line list them.
    pub const ALL: [EngineKind; 3] = [EngineKind::Vllm, EngineKind::Sglang, EngineKind::Trtllm];

    /// The id the command line and links use.
    pub fn id(self) -> &'static str {
        match self {
            EngineKind::Vllm => "vllm",
            EngineKind::Sglang => "sglang",
            EngineKind::Trtllm => "trtllm",
        }
    }

    /// The engine of an id (`vllm`, `sglang`, `trtllm`; case-insensitive, `tensorrt-llm` and
    /// `trt-llm` also read).
    pub fn from_id(s: &str) -> Option<EngineKind> {
        match s.trim().to_ascii_lowercase().as_str() {
            "vllm" => Some(EngineKind::Vllm),
            "sglang" => Some(EngineKind::Sglang),
            "trtllm" | "tensorrt-llm" | "trt-llm" | "tensorrt_llm" => Some(EngineKind::Trtllm),
            _ => None,
        }
    }

    /// The engine's name as its project writes it.
    pub fn name(self) -> &'static str {
        match self {
            EngineKind::Vllm => "vLLM",
            EngineKind::Sglang => "SGLang",
            EngineKind::Trtllm => "TensorRT-LLM",
        }
    }

    /// The version whose defaults and behaviour the figures refer to.
    pub fn version(self) -> &'static str {
        match self {
            EngineKind::Vllm => "0.19",
            EngineKind::Sglang => "0.5.9",
            EngineKind::Trtllm => "1.2",
        }
    }

    /// The engine's own names of the generic knobs, in the order (most requests running,
    /// tokens per step, tokens per KV page, memory share for the pool).
    pub fn flag_names(self) -> [&'static str; 4] {
        match self {
            EngineKind::Vllm => [
                "--max-num-seqs",
                "--max-num-batched-tokens",
                "--block-size",
                "--gpu-memory-utilization",
            ],
            EngineKind::Sglang => [
                "--max-running-requests",
                "--chunked-prefill-size",
                "--page-size",
                "--mem-fraction-static",
            ],
            EngineKind::Trtllm => [
                "max_batch_size",
                "max_num_tokens",
                "tokens_per_block",
                "free_gpu_memory_fraction",
            ],
        }
    }
}

/// How an engine's scheduler forms a step (`sim::scheduler`).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Policy {
    /// vLLM V1: running requests first (decodes and prompt chunks in one step), then waiting
    /// ones, blocks taken as needed, the last running request preempted when they run out.
    #[default]
    Vllm,
    /// SGLang: a prompt batch (the unfinished chunked prompt first, then waiting requests
    /// while the reservation allows) or, when none can be formed, a decode batch; retraction
    /// of the request with the fewest generated tokens when a decode step runs out of pages.
    Sglang {
        /// `--enable-mixed-chunk` (off by default): the running decodes ride in the prompt
        /// batch, and the batch's token budget is less their number.
        mixed_chunk: bool,
        /// `--max-prefill-tokens` (16,384 by default): the new prompt tokens of one batch; a
        /// request whose prompt reaches what is left joins only an empty batch.
        max_prefill_tokens: u64,
        /// `--scheduler-recv-interval` (1 by default): while it decodes, the scheduler takes
        /// new requests from the tokenizer only every this many decode steps (after a prompt
        /// batch or when idle, at once: `SchedulerRecvSkipper`, weights 1 for a decode step
        /// and 1,000 for a prompt batch).
        #[serde(default = "one")]
        recv_interval: u64,
    },
    /// TensorRT-LLM, `GUARANTEED_NO_EVICT`: decodes first, then whole prompts (or chunks, with
    /// `chunked`) of requests admitted only when their whole prompt and output fit.
    Trtllm {
        /// `enable_chunked_prefill` (off by default).
        chunked: bool,
        /// Attention DP's balancing (`attention_dp_config.enable_balance` with
        /// `timeout_iters`; 0: off, the default): while requests decode, new prompts wait
        /// until every rank has one, or this many steps since prompts were last let in.
        #[serde(default)]
        adp_timeout_iters: u64,
        /// The attention-DP ranks the balancing waits on (the shape's `dp`).
        #[serde(default)]
        adp_ranks: u64,
        /// Batch waiting without attention DP (`batch_wait_timeout_iters` T and
        /// `batch_wait_max_tokens_ratio` R; both 0, off, by default): while requests decode,
        /// new prompts wait up to T steps for their tokens and the decodes' to reach
        /// `R × max_num_tokens` (`py_executor.py` `_waiting_requests`).
        #[serde(default)]
        batch_wait: (u64, f64),
    },
}

impl Policy {
    /// The engine whose scheduler this is.
    pub fn engine(self) -> EngineKind {
        match self {
            Policy::Vllm => EngineKind::Vllm,
            Policy::Sglang { .. } => EngineKind::Sglang,
            Policy::Trtllm { .. } => EngineKind::Trtllm,
        }
    }
}

fn one() -> u64 {
    1
}

/// SGLang's `--chunked-prefill-size` default: 8,192 tokens on GPUs of 60 to 160 GiB, 16,384
/// above, 4,096 from 35 GiB and 2,048 below (`server_args.py`, v0.5.3 to v0.5.9).
pub fn sglang_chunked_prefill_size(smi_mib: u64) -> u64 {
    let gib = smi_mib / 1024;
    if gib < 35 {
        2048
    } else if gib < 60 {
        4096
    } else if gib < 160 {
        8192
    } else {
        16384
    }
}

/// SGLang's `cuda_graph_max_bs` default: 256 below 160 GiB at TP below 4, else 512 (v0.5.3
/// to v0.5.9; smaller GPUs are not modelled: 512 there too would only lower the fraction).
pub fn sglang_cuda_graph_max_bs(smi_mib: u64, tp: u64) -> u64 {
    if smi_mib / 1024 < 160 && tp < 4 {
        256
    } else {
        512
    }
}

/// SGLang's `--mem-fraction-static` default, `round((M − reserved) / M, 3)` with `M` the
/// GPU's memory in MiB as nvidia-smi reports it and `reserved` as the module docs say.
pub fn sglang_mem_fraction_static(smi_mib: u64, tp: u64, chunk: u64) -> f64 {
    let bs = sglang_cuda_graph_max_bs(smi_mib, tp);
    let mut reserved =
        512.0 + 1.5 * chunk.max(2048) as f64 + 2.0 * bs as f64 + tp as f64 / 8.0 * 1024.0;
    if smi_mib > 60 * 1024 {
        reserved = reserved.max(10_240.0);
    }
    let m = smi_mib.max(1) as f64;
    (((m - reserved) / m) * 1000.0).round() / 1000.0
}

/// SGLang's default page size on `gpu`: 64 on Blackwell (`trtllm_mha`, the default attention
/// backend there from 0.5.6.post2, pages of 64), else 1.
pub fn sglang_page_size(gpu: &Accelerator) -> u64 {
    if gpu.architecture == Architecture::Blackwell {
        64
    } else {
        1
    }
}

/// SGLang's `--max-running-requests` default for a pool of `pool_tokens` tokens and requests
/// of up to `context` tokens: `min(pool / 2, clamp(pool × 512 / context, 2048, 4096))`.
pub fn sglang_max_running_requests(pool_tokens: u64, context: u64) -> u64 {
    let per_context = (pool_tokens as f64 / context.max(1) as f64 * 512.0) as u64;
    (pool_tokens / 2).min(per_context.clamp(2048, 4096)).max(1)
}

/// SGLang's `--max-running-requests` under speculative decoding (EAGLE, EAGLE-3, NEXTN/MTP)
/// when the flag is not given: 48 (`server_args.py`, "Max running requests is reset to 48 for
/// speculative decoding").
pub const SGLANG_SPEC_MAX_RUNNING_REQUESTS: u64 = 48;

/// SGLang's `--max-prefill-tokens` default: 16,384.
pub const SGLANG_MAX_PREFILL_TOKENS: u64 = 16384;

/// SGLang's `--mamba-full-memory-ratio` default: 0.9, the recurrent-state slots' memory over
/// the attention KV pool's when neither the slots nor the running requests are given
/// (`server_args.py`; `handle_max_mamba_cache` solves `state + kv = rest`, `state / kv = r`).
pub const SGLANG_MAMBA_FULL_MEMORY_RATIO: f64 = 0.9;

/// Recurrent-state slots per running request while SGLang's radix cache is on: 3
/// (`MAMBA_CACHE_SIZE_MAX_RUNNING_REQUESTS_RATIO`, `model_runner_kv_cache_mixin.py`
/// `init_memory_pool`: the cache keeps finished prefixes' states in the other slots); 1 with
/// `--disable-radix-cache`.
pub const SGLANG_MAMBA_SLOTS_PER_RUNNING_REQUEST: u64 = 3;

/// SGLang's flags that size a hybrid model's recurrent-state pool (all off or unset by
/// default; read only for a model with recurrent layers).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct SglangStateFlags {
    /// `--disable-radix-cache`: one state slot per running request instead of three, and the
    /// overlap scheduler kept on.
    #[serde(default)]
    pub disable_radix_cache: bool,
    /// `--max-mamba-cache-size`: the state slots of the whole instance (divided among
    /// attention-DP ranks).
    #[serde(default)]
    pub max_mamba_cache_size: Option<u64>,
    /// `--mamba-full-memory-ratio` (`None`: 0.9).
    #[serde(default)]
    pub mamba_full_memory_ratio: Option<f64>,
    /// `--mamba-ssm-dtype`: the SSM state's precision (`None`: the config's
    /// `mamba_ssm_dtype`, else float32).
    #[serde(default)]
    pub mamba_ssm_dtype: Option<Dtype>,
}

impl SglangStateFlags {
    /// Whether every flag is at its default (nothing to serialize).
    pub fn is_default(&self) -> bool {
        *self == SglangStateFlags::default()
    }
}

/// What SGLang's split of its pool needs besides the pool: the flags, the running requests
/// given (`--max-running-requests`), the attention-DP ranks, and under speculative
/// decoding the tokens verified per step (`--speculative-num-draft-tokens`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HybridSplitInputs {
    /// The state-pool flags.
    pub flags: SglangStateFlags,
    /// `--max-running-requests` as given (SGLang sets 48 under speculative decoding).
    pub max_running_requests: Option<u64>,
    /// Attention-DP ranks (1 without).
    pub dp: u64,
    /// Draft tokens verified per step under speculative decoding (`None`: off).
    pub draft_tokens: Option<u64>,
}

/// SGLang's pool of a hybrid model split into the attention KV pool and the recurrent-state
/// slots (bytes, slots).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HybridSplit {
    /// The attention layers' KV pool.
    pub kv: Bytes,
    /// The recurrent-state slots.
    pub slots: u64,
    /// The slots' memory and the speculative reserve.
    pub state: Bytes,
}

/// SGLang's split of `rest` (its pool, `mem_fraction_static × free − weights`) for a hybrid
/// model whose one request's recurrent state takes `per_seq` (`handle_max_mamba_cache`,
/// `model_runner_kv_cache_mixin.py`, 0.5.9): under speculative decoding, first
/// `per_seq × running / dp × draft tokens` for the intermediate states; then the slots:
/// `--max-mamba-cache-size / dp` when given, else `--max-running-requests / dp` with
/// `--disable-radix-cache`, else `⌊rest × r / (1 + r) / per_seq⌋`; the KV pool is what the
/// slots leave.
pub fn sglang_hybrid_split(rest: Bytes, per_seq: Bytes, inp: &HybridSplitInputs) -> HybridSplit {
    let dp = inp.dp.max(1);
    let per = per_seq.0.max(1);
    let reserve = match (inp.draft_tokens, inp.max_running_requests) {
        (Some(t), Some(n)) => per.saturating_mul(n / dp).saturating_mul(t),
        _ => 0,
    };
    let left = rest.0.saturating_sub(reserve);
    let f = inp.flags;
    let slots = match (f.max_mamba_cache_size, inp.max_running_requests) {
        (Some(n), _) => n / dp,
        (None, Some(n)) if f.disable_radix_cache => n / dp,
        _ => {
            let r = f
                .mamba_full_memory_ratio
                .unwrap_or(SGLANG_MAMBA_FULL_MEMORY_RATIO);
            (left as f64 * r / (1.0 + r) / per as f64) as u64
        }
    };
    let held = slots.saturating_mul(per);
    HybridSplit {
        kv: Bytes(left.saturating_sub(held)),
        slots,
        state: Bytes(held.saturating_add(reserve)),
    }
}

/// The running requests SGLang's state slots allow: `slots / 3`, or `slots` with
/// `--disable-radix-cache` ([`SGLANG_MAMBA_SLOTS_PER_RUNNING_REQUEST`]).
pub fn sglang_state_running_cap(slots: u64, disable_radix_cache: bool) -> u64 {
    if disable_radix_cache {
        slots
    } else {
        slots / SGLANG_MAMBA_SLOTS_PER_RUNNING_REQUEST
    }
}

/// TensorRT-LLM's `max_num_tokens` default: 8,192.
pub const TRTLLM_MAX_NUM_TOKENS: u64 = 8192;

/// TensorRT-LLM's `max_batch_size` default: 2,048.
pub const TRTLLM_MAX_BATCH_SIZE: u64 = 2048;

/// TensorRT-LLM's `tokens_per_block` default: 32.
pub const TRTLLM_TOKENS_PER_BLOCK: u64 = 32;

/// TensorRT-LLM's `free_gpu_memory_fraction` default: 0.9.
pub const TRTLLM_FREE_GPU_MEMORY_FRACTION: f64 = 0.9;

/// The terms of SGLang's or TensorRT-LLM's KV pool on one GPU, and the pool (bytes).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct EnginePool {
    /// The engine.
    pub engine: EngineKind,
    /// `--mem-fraction-static` or `free_gpu_memory_fraction`.
    pub fraction: f64,
    /// The total memory (as vLLM sees the GPU).
    pub total: Bytes,
    /// The CUDA context and communication buffers (vLLM's non-torch estimate).
    pub non_torch: Bytes,
    /// The weights on this GPU.
    pub weights: Bytes,
    /// The warm-up prefill's activation peak (TensorRT-LLM's rule only).
    pub activation: Bytes,
    /// The pool.
    pub pool: Bytes,
    /// KV bytes of one token on this GPU.
    pub per_token: Bytes,
    /// A hybrid model's recurrent-state slots (SGLang; 0 without recurrent layers).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub state_slots: u64,
    /// One slot's bytes on this GPU (SGLang's `mamba_cache_per_req`).
    #[serde(default, skip_serializing_if = "no_bytes")]
    pub state_per_seq: Bytes,
    /// The slots' memory, and the speculative reserve (taken from the pool before `pool`).
    #[serde(default, skip_serializing_if = "no_bytes")]
    pub state: Bytes,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

fn no_bytes(b: &Bytes) -> bool {
    *b == Bytes::ZERO
}

impl EnginePool {
    /// The pool's rule as a formula, and with its values substituted (GiB): [`EnginePool::expr`]
    /// printed both ways.
    pub fn formula(&self) -> (String, String) {
        let e = self.expr();
        (e.formula(), e.values())
    }

    /// The pool's rule as an expression over its terms (bytes, shown in GiB): TensorRT-LLM's
    /// `free_gpu_memory_fraction × (M − W − A − N)`, SGLang's `mem_fraction_static × (M − N) −
    /// W`, less the recurrent states `S` of a hybrid model.
    pub fn expr(&self) -> Expr {
        let b =
            |symbol: &str, v: Bytes| Expr::sym(symbol, format!("{:.2} GiB", v.gib()), v.0 as f64);
        let (m, n, w) = (
            b("M", self.total),
            b("N", self.non_torch),
            b("W", self.weights),
        );
        let e = match self.engine {
            EngineKind::Trtllm => Expr::mul([
                Expr::sym(
                    "free_gpu_memory_fraction",
                    self.fraction.to_string(),
                    self.fraction,
                ),
                Expr::minus(Expr::minus(Expr::minus(m, w), b("A", self.activation)), n),
            ]),
            _ => Expr::minus(
                Expr::mul([
                    Expr::sym(
                        "mem_fraction_static",
                        self.fraction.to_string(),
                        self.fraction,
                    ),
                    Expr::minus(m, n),
                ]),
                w,
            ),
        };
        let e = if self.state > Bytes::ZERO {
            Expr::minus(e, b("S", self.state))
        } else {
            e
        };
        Expr::named("KV", e)
    }
}

/// nvidia-smi's memory of `gpu`, MiB (the driver's figure when the catalog has it, else the
/// capacity).
pub fn smi_mib(gpu: &Accelerator) -> u64 {
    gpu.memory_reported.unwrap_or_else(|| gpu.capacity()).0 >> 20
}

/// The KV pool of SGLang, bytes: `fraction × free − weights`, `free` the memory free before
/// the weights load (`total` less the CUDA context and communication buffers, `non_torch`).
pub fn sglang_pool_bytes(total: Bytes, non_torch: Bytes, weights: Bytes, fraction: f64) -> Bytes {
    let free = total.0.saturating_sub(non_torch.0) as f64;
    Bytes((free * fraction - weights.0 as f64).max(0.0) as u64)
}

/// The KV pool of TensorRT-LLM, bytes: `fraction × (total − peak)`, the peak being the
/// weights, the warm-up prefill's activations and the memory outside PyTorch.
pub fn trtllm_pool_bytes(
    total: Bytes,
    weights: Bytes,
    activation: Bytes,
    non_torch: Bytes,
    fraction: f64,
) -> Bytes {
    let peak = weights
        .0
        .saturating_add(activation.0)
        .saturating_add(non_torch.0);
    Bytes((total.0.saturating_sub(peak) as f64 * fraction) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SGLang's defaults as its `server_args.py` (v0.5.3 to v0.5.9) gives them for MHA models,
    /// worked by hand from its code (`docs/SERVING_SIMULATOR.md`, "Engines"): H100 (81,559
    /// MiB) .835 / .834 / .824 / .818 and H200 (143,771 MiB) .907 / .906 / .900 / .897 at TP 1 /
    /// 2 / 4 / 8, B200 (183,359 MiB) .857 / .856 / .855 / .852.
    #[test]
    fn sglang_fraction_is_its_published_default() {
        let table = [
            (81_559, [0.835, 0.834, 0.824, 0.818]),
            (143_771, [0.907, 0.906, 0.900, 0.897]),
            (183_359, [0.857, 0.856, 0.855, 0.852]),
        ];
        for (mib, want) in table {
            for (tp, w) in [1, 2, 4, 8].into_iter().zip(want) {
                let f = sglang_mem_fraction_static(mib, tp, sglang_chunked_prefill_size(mib));
                assert!((f - w).abs() < 1e-9, "{mib} MiB, TP {tp}: {f}, SGLang {w}");
            }
        }
    }

    #[test]
    fn ids_read_back() {
        for e in EngineKind::ALL {
            assert_eq!(EngineKind::from_id(e.id()), Some(e));
        }
        assert_eq!(
            EngineKind::from_id("TensorRT-LLM"),
            Some(EngineKind::Trtllm)
        );
        assert_eq!(EngineKind::from_id("tgi"), None);
    }

    /// Each engine's pool rule evaluates to the pool its function computes, and prints its
    /// terms in GiB.
    #[test]
    fn the_pool_formula_is_the_pool() {
        let gib = |x: f64| Bytes((x * (1u64 << 30) as f64) as u64);
        let (total, non_torch, weights, activation) = (gib(79.22), gib(1.5), gib(60.0), gib(2.0));
        for (engine, fraction) in [(EngineKind::Sglang, 0.835), (EngineKind::Trtllm, 0.9)] {
            let pool = match engine {
                EngineKind::Trtllm => {
                    trtllm_pool_bytes(total, weights, activation, non_torch, fraction)
                }
                _ => sglang_pool_bytes(total, non_torch, weights, fraction),
            };
            let p = EnginePool {
                engine,
                fraction,
                total,
                non_torch,
                weights,
                activation,
                pool,
                per_token: Bytes(1),
                state_slots: 0,
                state_per_seq: Bytes::ZERO,
                state: Bytes::ZERO,
            };
            let e = p.expr();
            assert!(
                (e.eval() - pool.0 as f64).abs() <= 1.0,
                "{engine:?}: {} vs {pool:?}",
                e.eval()
            );
            // Printed as each engine's documentation writes its rule.
            let want = match engine {
                EngineKind::Trtllm => (
                    "KV = free_gpu_memory_fraction × (M − W − A − N)",
                    "0.9 × (79.22 GiB − 60.00 GiB − 2.00 GiB − 1.50 GiB)",
                ),
                _ => (
                    "KV = mem_fraction_static × (M − N) − W",
                    "0.835 × (79.22 GiB − 1.50 GiB) − 60.00 GiB",
                ),
            };
            let (formula, values) = p.formula();
            assert_eq!((formula.as_str(), values.as_str()), want);
        }
    }

    /// `handle_max_mamba_cache`'s three cases, each from its rule: the ratio's share of the
    /// pool, the running requests given with the radix cache off, the slots given (each
    /// divided among attention-DP ranks); speculative decoding's reserve first.
    #[test]
    fn the_hybrid_split_follows_sglangs_rules() {
        let (rest, per) = (Bytes(10_000_000), Bytes(7_000));
        let inp = |flags, running, dp, draft| HybridSplitInputs {
            flags,
            max_running_requests: running,
            dp,
            draft_tokens: draft,
        };
        let radix = SglangStateFlags::default();
        let s = sglang_hybrid_split(rest, per, &inp(radix, Some(128), 1, None));
        let slots = (10_000_000.0 * 0.9 / 1.9 / 7_000.0) as u64;
        assert_eq!((s.slots, s.kv.0), (slots, 10_000_000 - slots * 7_000));
        assert_eq!(s.state.0 + s.kv.0, rest.0);
        let off = SglangStateFlags {
            disable_radix_cache: true,
            ..radix
        };
        let s = sglang_hybrid_split(rest, per, &inp(off, Some(128), 2, None));
        assert_eq!((s.slots, s.kv.0), (64, 10_000_000 - 64 * 7_000));
        let given = SglangStateFlags {
            max_mamba_cache_size: Some(90),
            ..off
        };
        let s = sglang_hybrid_split(rest, per, &inp(given, Some(128), 1, None));
        assert_eq!(s.slots, 90);
        // Speculation: 48 requests × 4 draft tokens of intermediate states, then 48 slots.
        let s = sglang_hybrid_split(rest, per, &inp(off, Some(48), 1, Some(4)));
        assert_eq!(s.slots, 48);
        assert_eq!(s.kv.0, 10_000_000 - 48 * 4 * 7_000 - 48 * 7_000);
        assert_eq!(sglang_state_running_cap(100, false), 33);
        assert_eq!(sglang_state_running_cap(100, true), 100);
    }

    #[test]
    fn max_running_requests_is_bounded_by_half_the_pool_and_the_request_table() {
        assert_eq!(sglang_max_running_requests(1_000_000, 1_000_000), 2048);
        assert_eq!(sglang_max_running_requests(1_000_000, 131_072), 3906);
        assert_eq!(sglang_max_running_requests(1_000_000, 2048), 4096);
        assert_eq!(sglang_max_running_requests(3000, 2048), 1500);
    }
}
