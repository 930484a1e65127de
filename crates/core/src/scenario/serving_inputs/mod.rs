//! The inputs of "Serving under load" (the serving simulator's section), each with its URL
//! parameter (`sv_…`). The engine's knobs are named as `vllm serve` names its flags and default
//! as vLLM does; the load as `vllm bench serve` names it.
//!
//! Optional knobs (`max_num_seqs`, `max_num_batched_tokens`, the chosen rate) use 0 for "vLLM's
//! default" / "automatic", so that one decimal field edits each of them. The engine
//! (`sv_engine`) may be SGLang or TensorRT-LLM instead, whose names those two knobs then take. Beside vLLM's flags,
//! the server's frontend path per request (`sv_fo`, milliseconds; the simulator's
//! `frontend_overhead_ms`, default its measured value).

mod workload;

use super::notice::NoticeKind;
use crate::calc::memory::{DEFAULT_BLOCK_SIZE, DEFAULT_GPU_MEMORY_UTILIZATION};
use crate::sim::config::{
    engine_frontend_overhead_ms, DEFAULT_FRONTEND_OVERHEAD_MS, MAX_FRONTEND_OVERHEAD_MS,
};
use crate::sim::disagg::{KvLink, MAX_WORKERS};
use crate::sim::engines::EngineKind;
use crate::sim::fleet::Router;
use crate::sim::spec::SpecMethod;
use serde::{Deserialize, Serialize};

pub use workload::{ArrivalKind, DatasetKind, UNIFORM_RANGE_RATIO};

/// The serving section's inputs, part of the scenario's [`ViewInputs`](super::ViewInputs).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ServingInputs {
    /// The engine (URL `sv_engine=sglang|trtllm`; vLLM when absent). Under SGLang and
    /// TensorRT-LLM the first two knobs are theirs (`--max-running-requests` /
    /// `max_batch_size`, `--chunked-prefill-size` / `max_num_tokens`), `block_size` and
    /// `gpu_memory_utilization` do not apply (the engine's own defaults are used), and the
    /// server path defaults to the engine's fitted value.
    #[serde(default)]
    pub engine: EngineKind,
    /// `--max-num-seqs` (0 = vLLM's default for the GPU).
    pub max_num_seqs: u64,
    /// `--max-num-batched-tokens` (0 = vLLM's default for the GPU).
    pub max_num_batched_tokens: u64,
    /// `--block-size`, tokens.
    pub block_size: u64,
    /// `--gpu-memory-utilization`, a fraction.
    pub gpu_memory_utilization: f64,
    /// Share of each prompt found in the prefix cache.
    pub prefix_hit: f64,
    /// The server's frontend path per request, ms (`sim::EngineConfig::frontend_overhead_ms`).
    #[serde(default = "default_frontend_overhead_ms")]
    pub frontend_overhead_ms: f64,
    /// vLLM's largest CUDA graph, tokens (URL `sv_cg`; `max_cudagraph_capture_size`; 0 =
    /// vLLM's default, `min(2 × max_num_seqs, 512)`): a larger step runs eagerly and pays the
    /// CPU's launches per layer (`sim::kernel_step`, `FIT_EAGER_LAYER_S`).
    #[serde(default)]
    pub cudagraph_capture: u64,
    /// How requests arrive.
    pub arrival: ArrivalKind,
    /// Coefficient of variation of the gaps with bursty arrivals (1 = Poisson).
    pub burstiness_cv: f64,
    /// `--max-concurrency` with [`ArrivalKind::MaxConcurrency`].
    pub max_concurrency: u64,
    /// How lengths are drawn.
    pub dataset: DatasetKind,
    /// `--num-prompts` per rate, warm-up included.
    pub num_requests: u64,
    /// Requests at the start left out of the statistics.
    pub warmup: u64,
    /// The rate of the time-series run, req/s (0 = automatic: just below saturation).
    pub rate: f64,
    /// How the planner's simulated fleet spreads requests over its replicas (URL
    /// `sv_router=round-robin|least-loaded`; the planner's simulated sizing reads it).
    #[serde(default)]
    pub router: Router,
    /// Attention data-parallel ranks of the scenario's TP each (URL `sv_dp`;
    /// `sim::parallel`).
    #[serde(default = "one")]
    pub dp: u64,
    /// The MoE layers' expert-parallel size (URL `sv_ep`; divides TP × DP).
    #[serde(default = "one")]
    pub ep: u64,
    /// Pipeline stages (URL `sv_pp`).
    #[serde(default = "one")]
    pub pp: u64,
    /// Nodes the GPUs are spread over (URL `sv_nodes`; 0 = the fewest that hold them).
    #[serde(default)]
    pub nodes: u64,
    /// Speculative decoding's method (URL `sv_spec=mtp|eagle3|ngram`; off when absent).
    #[serde(default)]
    pub spec: Option<SpecMethod>,
    /// Draft tokens per step under speculative decoding (URL `sv_spec_k`).
    #[serde(default = "default_spec_k")]
    pub spec_k: u64,
    /// Mean accepted length under speculative decoding (URL `sv_spec_al`; 0 = the method's
    /// default rates).
    #[serde(default)]
    pub spec_length: f64,
    /// Disaggregated prefill and decode (URL `sv_disagg=1`; one engine when absent).
    #[serde(default)]
    pub disagg: bool,
    /// Prefill workers under disaggregation (URL `sv_pw`).
    #[serde(default = "one")]
    pub prefill_workers: u64,
    /// Decode workers under disaggregation (URL `sv_dw`).
    #[serde(default = "one")]
    pub decode_workers: u64,
    /// One prefill worker's TP (URL `sv_ptp`; 0 = the scenario's TP).
    #[serde(default)]
    pub prefill_tp: u64,
    /// One decode worker's TP (URL `sv_dtp`; 0 = the scenario's TP).
    #[serde(default)]
    pub decode_tp: u64,
    /// The link the KV crosses (URL `sv_kvl=nvlink|ib|roce`; absent or `auto`: NVLink when
    /// both pools fit in one NVLink domain, else InfiniBand).
    #[serde(default)]
    pub kv_link: Option<KvLink>,
}

/// The links the section offers beside "auto", in display order (URL `sv_kvl`, by
/// `KvLink::id`).
pub const KV_LINKS: [KvLink; 3] = [KvLink::Nvlink, KvLink::Ib, KvLink::Roce];

/// Draft tokens per step when speculative decoding is turned on.
pub const DEFAULT_SPEC_K: u64 = 3;

fn default_spec_k() -> u64 {
    DEFAULT_SPEC_K
}

fn default_frontend_overhead_ms() -> f64 {
    DEFAULT_FRONTEND_OVERHEAD_MS
}

fn one() -> u64 {
    1
}

impl Default for ServingInputs {
    fn default() -> Self {
        ServingInputs {
            engine: EngineKind::Vllm,
            max_num_seqs: 0,
            max_num_batched_tokens: 0,
            block_size: DEFAULT_BLOCK_SIZE,
            gpu_memory_utilization: DEFAULT_GPU_MEMORY_UTILIZATION,
            prefix_hit: 0.0,
            frontend_overhead_ms: DEFAULT_FRONTEND_OVERHEAD_MS,
            cudagraph_capture: 0,
            arrival: ArrivalKind::Poisson,
            burstiness_cv: 1.0,
            max_concurrency: 64,
            dataset: DatasetKind::Fixed,
            num_requests: 2_000,
            warmup: 100,
            rate: 0.0,
            router: Router::RoundRobin,
            dp: 1,
            ep: 1,
            pp: 1,
            nodes: 0,
            spec: None,
            spec_k: DEFAULT_SPEC_K,
            spec_length: 0.0,
            disagg: false,
            prefill_workers: 1,
            decode_workers: 1,
            prefill_tp: 0,
            decode_tp: 0,
            kv_link: None,
        }
    }
}

/// One numeric serving input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ServField {
    /// `max_num_seqs`.
    MaxNumSeqs,
    /// `max_num_batched_tokens`.
    MaxNumBatchedTokens,
    /// `block_size`.
    BlockSize,
    /// `gpu_memory_utilization`.
    GpuMemoryUtilization,
    /// Prefix-cache hit fraction.
    PrefixHit,
    /// The server's frontend path per request, ms.
    FrontendOverheadMs,
    /// vLLM's largest CUDA graph, tokens (0 = vLLM's default).
    CudagraphCapture,
    /// Attention data-parallel ranks.
    Dp,
    /// MoE expert-parallel size.
    Ep,
    /// Pipeline stages.
    Pp,
    /// Nodes.
    Nodes,
    /// Burstiness CV.
    BurstinessCv,
    /// `max_concurrency`.
    MaxConcurrency,
    /// Requests per rate.
    NumRequests,
    /// Warm-up requests.
    Warmup,
    /// The time-series run's rate.
    Rate,
    /// Draft tokens per step (speculative decoding).
    SpecK,
    /// Mean accepted length (speculative decoding; 0 = the method's default).
    SpecLength,
    /// Prefill workers (disaggregation).
    PrefillWorkers,
    /// One prefill worker's TP (disaggregation; 0 = the scenario's).
    PrefillTp,
    /// Decode workers (disaggregation).
    DecodeWorkers,
    /// One decode worker's TP (disaggregation; 0 = the scenario's).
    DecodeTp,
}

impl ServField {
    /// Every field, in display order.
    pub const ALL: &'static [ServField] = &[
        ServField::MaxNumSeqs,
        ServField::MaxNumBatchedTokens,
        ServField::BlockSize,
        ServField::GpuMemoryUtilization,
        ServField::PrefixHit,
        ServField::FrontendOverheadMs,
        ServField::CudagraphCapture,
        ServField::Dp,
        ServField::Ep,
        ServField::Pp,
        ServField::Nodes,
        ServField::BurstinessCv,
        ServField::MaxConcurrency,
        ServField::NumRequests,
        ServField::Warmup,
        ServField::Rate,
        ServField::SpecK,
        ServField::SpecLength,
        ServField::PrefillWorkers,
        ServField::PrefillTp,
        ServField::DecodeWorkers,
        ServField::DecodeTp,
    ];

    /// URL parameter name.
    pub const fn query_key(self) -> &'static str {
        match self {
            ServField::MaxNumSeqs => "sv_mns",
            ServField::MaxNumBatchedTokens => "sv_mbt",
            ServField::BlockSize => "sv_bs",
            ServField::GpuMemoryUtilization => "sv_gmu",
            ServField::PrefixHit => "sv_ph",
            ServField::FrontendOverheadMs => "sv_fo",
            ServField::CudagraphCapture => "sv_cg",
            ServField::Dp => "sv_dp",
            ServField::Ep => "sv_ep",
            ServField::Pp => "sv_pp",
            ServField::Nodes => "sv_nodes",
            ServField::BurstinessCv => "sv_cv",
            ServField::MaxConcurrency => "sv_conc",
            ServField::NumRequests => "sv_n",
            ServField::Warmup => "sv_warm",
            ServField::Rate => "sv_rate",
            ServField::SpecK => "sv_spec_k",
            ServField::SpecLength => "sv_spec_al",
            ServField::PrefillWorkers => "sv_pw",
            ServField::PrefillTp => "sv_ptp",
            ServField::DecodeWorkers => "sv_dw",
            ServField::DecodeTp => "sv_dtp",
        }
    }

    /// Translation key of the label.
    pub const fn label_key(self) -> &'static str {
        match self {
            ServField::MaxNumSeqs => "sv_max_num_seqs",
            ServField::MaxNumBatchedTokens => "sv_max_num_batched_tokens",
            ServField::BlockSize => "sv_block_size",
            ServField::GpuMemoryUtilization => "sv_gpu_memory_utilization",
            ServField::PrefixHit => "sv_prefix_hit",
            ServField::FrontendOverheadMs => "sv_frontend_overhead",
            ServField::CudagraphCapture => "sv_cudagraph_capture",
            ServField::Dp => "sv_par_dp",
            ServField::Ep => "sv_par_ep",
            ServField::Pp => "sv_par_pp",
            ServField::Nodes => "sv_par_nodes",
            ServField::BurstinessCv => "sv_burstiness_cv",
            ServField::MaxConcurrency => "sv_max_concurrency",
            ServField::NumRequests => "sv_num_requests",
            ServField::Warmup => "sv_warmup",
            ServField::Rate => "sv_rate",
            ServField::SpecK => "sv_spec_drafts",
            ServField::SpecLength => "sv_spec_length",
            ServField::PrefillWorkers => "sv_pd_prefill_workers",
            ServField::PrefillTp => "sv_pd_prefill_tp",
            ServField::DecodeWorkers => "sv_pd_decode_workers",
            ServField::DecodeTp => "sv_pd_decode_tp",
        }
    }

    /// Whether the field is shown for inputs `v`: `engine`'s knobs ([`ServField::applies`]),
    /// speculative decoding's only when it is on, and disaggregation's only when it is on.
    pub fn shown(self, v: &ServingInputs) -> bool {
        self.applies(v.engine)
            && (v.spec.is_some() || !matches!(self, ServField::SpecK | ServField::SpecLength))
            && (v.disagg || !self.disaggregation())
    }

    /// Whether the field is one of disaggregation's (its pools' workers and TP).
    pub const fn disaggregation(self) -> bool {
        matches!(
            self,
            ServField::PrefillWorkers
                | ServField::PrefillTp
                | ServField::DecodeWorkers
                | ServField::DecodeTp
        )
    }

    /// Whether the field is one of `engine`'s knobs: `block_size`,
    /// `gpu_memory_utilization` and the CUDA graphs' size are vLLM's only.
    pub fn applies(self, engine: EngineKind) -> bool {
        engine == EngineKind::Vllm
            || !matches!(
                self,
                ServField::BlockSize
                    | ServField::GpuMemoryUtilization
                    | ServField::CudagraphCapture
            )
    }

    /// Translation key of the label under `engine` (its own flag names).
    pub const fn label_key_for(self, engine: EngineKind) -> &'static str {
        match (self, engine) {
            (ServField::MaxNumSeqs, EngineKind::Sglang) => "sv_max_running_requests",
            (ServField::MaxNumSeqs, EngineKind::Trtllm) => "sv_max_batch_size",
            (ServField::MaxNumBatchedTokens, EngineKind::Sglang) => "sv_chunked_prefill_size",
            (ServField::MaxNumBatchedTokens, EngineKind::Trtllm) => "sv_max_num_tokens",
            _ => self.label_key(),
        }
    }

    /// Translation key of the unit under `engine` ("0 = the engine's default").
    pub const fn unit_key_for(self, engine: EngineKind) -> &'static str {
        match (self, engine) {
            (ServField::MaxNumSeqs | ServField::MaxNumBatchedTokens, EngineKind::Sglang) => {
                "sv_unit_default_zero_sglang"
            }
            (ServField::MaxNumSeqs | ServField::MaxNumBatchedTokens, EngineKind::Trtllm) => {
                "sv_unit_default_zero_trtllm"
            }
            _ => self.unit_key(),
        }
    }

    /// Translation key of the unit (or the hint beside the field).
    pub const fn unit_key(self) -> &'static str {
        match self {
            ServField::MaxNumSeqs
            | ServField::MaxNumBatchedTokens
            | ServField::CudagraphCapture => "sv_unit_default_zero",
            ServField::BlockSize => "view_unit_tokens",
            ServField::GpuMemoryUtilization | ServField::PrefixHit => "view_unit_fraction",
            ServField::FrontendOverheadMs => "view_unit_ms",
            ServField::Dp => "sv_unit_par_dp",
            ServField::Ep => "sv_unit_par_ep",
            ServField::Pp => "sv_unit_par_pp",
            ServField::Nodes => "sv_unit_par_nodes",
            ServField::BurstinessCv => "sv_unit_cv",
            ServField::MaxConcurrency => "sv_unit_requests",
            ServField::NumRequests | ServField::Warmup => "sv_unit_requests",
            ServField::Rate => "sv_unit_rate_auto",
            ServField::SpecK => "sv_unit_spec_k",
            ServField::SpecLength => "sv_unit_spec_length",
            ServField::PrefillWorkers | ServField::DecodeWorkers => "sv_unit_pd_workers",
            ServField::PrefillTp | ServField::DecodeTp => "sv_unit_pd_tp",
        }
    }

    /// Whether the value is a whole number.
    pub const fn whole(self) -> bool {
        !matches!(
            self,
            ServField::GpuMemoryUtilization
                | ServField::PrefixHit
                | ServField::FrontendOverheadMs
                | ServField::BurstinessCv
                | ServField::Rate
                | ServField::SpecLength
        )
    }

    /// Accepted range (inclusive).
    pub const fn range(self) -> (f64, f64) {
        match self {
            ServField::MaxNumSeqs
            | ServField::MaxNumBatchedTokens
            | ServField::CudagraphCapture => (0.0, 1_048_576.0),
            ServField::BlockSize => (1.0, 1024.0),
            ServField::GpuMemoryUtilization => (0.05, 1.0),
            ServField::PrefixHit => (0.0, 0.99),
            ServField::FrontendOverheadMs => (0.0, MAX_FRONTEND_OVERHEAD_MS),
            ServField::Dp | ServField::Pp => (1.0, 64.0),
            ServField::Ep => (1.0, 1024.0),
            ServField::Nodes => (0.0, 128.0),
            ServField::BurstinessCv => (0.1, 10.0),
            ServField::MaxConcurrency => (1.0, 100_000.0),
            ServField::NumRequests => (20.0, 20_000.0),
            ServField::Warmup => (0.0, 10_000.0),
            ServField::Rate => (0.0, 1_000_000.0),
            ServField::SpecK => (1.0, SpecMethod::MAX_K as f64),
            ServField::SpecLength => (0.0, 1.0 + SpecMethod::MAX_K as f64),
            ServField::PrefillWorkers | ServField::DecodeWorkers => (1.0, MAX_WORKERS as f64),
            ServField::PrefillTp | ServField::DecodeTp => (0.0, 64.0),
        }
    }

    /// The value.
    pub fn get(self, v: &ServingInputs) -> f64 {
        match self {
            ServField::MaxNumSeqs => v.max_num_seqs as f64,
            ServField::MaxNumBatchedTokens => v.max_num_batched_tokens as f64,
            ServField::BlockSize => v.block_size as f64,
            ServField::GpuMemoryUtilization => v.gpu_memory_utilization,
            ServField::PrefixHit => v.prefix_hit,
            ServField::FrontendOverheadMs => v.frontend_overhead_ms,
            ServField::CudagraphCapture => v.cudagraph_capture as f64,
            ServField::Dp => v.dp as f64,
            ServField::Ep => v.ep as f64,
            ServField::Pp => v.pp as f64,
            ServField::Nodes => v.nodes as f64,
            ServField::BurstinessCv => v.burstiness_cv,
            ServField::MaxConcurrency => v.max_concurrency as f64,
            ServField::NumRequests => v.num_requests as f64,
            ServField::Warmup => v.warmup as f64,
            ServField::Rate => v.rate,
            ServField::SpecK => v.spec_k as f64,
            ServField::SpecLength => v.spec_length,
            ServField::PrefillWorkers => v.prefill_workers as f64,
            ServField::PrefillTp => v.prefill_tp as f64,
            ServField::DecodeWorkers => v.decode_workers as f64,
            ServField::DecodeTp => v.decode_tp as f64,
        }
    }

    /// Checks a value against the range (whole numbers where whole) and, for the warm-up,
    /// against the request count.
    pub fn check(self, v: &ServingInputs, x: f64) -> Result<f64, NoticeKind> {
        let (lo, hi) = self.range();
        if !x.is_finite() {
            return Err(NoticeKind::Invalid);
        }
        if self.whole() && x.fract() != 0.0 {
            return Err(NoticeKind::Invalid);
        }
        if x < lo || x > hi {
            return Err(NoticeKind::OutOfRange);
        }
        let too_much_warmup = match self {
            ServField::Warmup => x >= v.num_requests as f64,
            ServField::NumRequests => x <= v.warmup as f64,
            // A mean accepted length lies between 1 and 1 + k (0: the method's default).
            ServField::SpecLength => x != 0.0 && !(x > 1.0 && x < 1.0 + v.spec_k as f64),
            _ => false,
        };
        if too_much_warmup {
            return Err(NoticeKind::OutOfRange);
        }
        Ok(x)
    }

    /// Why [`ServField::check`] refuses `x` beyond its range, as the translation key of a
    /// sentence with `{field}`, `{value}`, `{n}` and `{warm}` placeholders: a fraction in a
    /// whole-number field, or a warm-up not below the request count (`None` otherwise).
    pub fn refusal_key(self, v: &ServingInputs, x: f64) -> Option<&'static str> {
        if !x.is_finite() {
            return None;
        }
        if self.whole() && x.fract() != 0.0 {
            return Some("sv_err_whole");
        }
        let (lo, hi) = self.range();
        if x < lo || x > hi {
            return None;
        }
        match self {
            ServField::Warmup if x >= v.num_requests as f64 => Some("sv_err_warmup"),
            ServField::NumRequests if x <= v.warmup as f64 => Some("sv_err_requests"),
            ServField::SpecLength if x != 0.0 && !(x > 1.0 && x < 1.0 + v.spec_k as f64) => {
                Some("sv_err_spec_length")
            }
            _ => None,
        }
    }

    /// Sets a value already checked by [`ServField::check`].
    pub fn set(self, v: &mut ServingInputs, x: f64) {
        // Whole-number fields were checked whole and within u64 (below 2^21).
        let n = x.max(0.0) as u64;
        match self {
            ServField::MaxNumSeqs => v.max_num_seqs = n,
            ServField::MaxNumBatchedTokens => v.max_num_batched_tokens = n,
            ServField::BlockSize => v.block_size = n,
            ServField::GpuMemoryUtilization => v.gpu_memory_utilization = x,
            ServField::PrefixHit => v.prefix_hit = x,
            ServField::FrontendOverheadMs => v.frontend_overhead_ms = x,
            ServField::CudagraphCapture => v.cudagraph_capture = n,
            ServField::Dp => v.dp = n,
            ServField::Ep => v.ep = n,
            ServField::Pp => v.pp = n,
            ServField::Nodes => v.nodes = n,
            ServField::BurstinessCv => v.burstiness_cv = x,
            ServField::MaxConcurrency => v.max_concurrency = n,
            ServField::NumRequests => v.num_requests = n,
            ServField::Warmup => v.warmup = n,
            ServField::Rate => v.rate = x,
            ServField::SpecK => v.spec_k = n,
            ServField::SpecLength => v.spec_length = x,
            ServField::PrefillWorkers => v.prefill_workers = n,
            ServField::PrefillTp => v.prefill_tp = n,
            ServField::DecodeWorkers => v.decode_workers = n,
            ServField::DecodeTp => v.decode_tp = n,
        }
    }
}

impl ServingInputs {
    /// Whether `key` is one of these inputs' URL parameters.
    pub fn owns(key: &str) -> bool {
        ServField::ALL.iter().any(|f| f.query_key() == key)
            || matches!(
                key,
                "sv_arr" | "sv_ds" | "sv_router" | "sv_engine" | "sv_spec" | "sv_disagg" | "sv_kvl"
            )
    }

    /// Switches the engine; a server path left at the old engine's default follows to the
    /// new one's.
    pub fn set_engine(&mut self, engine: EngineKind) {
        if self.frontend_overhead_ms.to_bits() == engine_frontend_overhead_ms(self.engine).to_bits()
        {
            self.frontend_overhead_ms = engine_frontend_overhead_ms(engine);
        }
        self.engine = engine;
    }

    /// Reads one URL parameter (already percent-decoded); unchanged on error.
    pub fn set(&mut self, key: &str, val: &str) -> Result<(), NoticeKind> {
        if let Some(f) = ServField::ALL.iter().find(|f| f.query_key() == key) {
            let t = val.trim();
            if t.is_empty() || t.len() > 40 {
                return Err(NoticeKind::Invalid);
            }
            let x: f64 = t.parse().map_err(|_| NoticeKind::Invalid)?;
            let x = f.check(self, x)?;
            f.set(self, x);
            return Ok(());
        }
        match key {
            "sv_arr" => self.arrival = ArrivalKind::parse(val).ok_or(NoticeKind::Invalid)?,
            "sv_ds" => self.dataset = DatasetKind::parse(val).ok_or(NoticeKind::Invalid)?,
            "sv_router" => self.router = Router::parse(val).map_err(|_| NoticeKind::Invalid)?,
            "sv_engine" => self.set_engine(EngineKind::from_id(val).ok_or(NoticeKind::Invalid)?),
            "sv_spec" => {
                self.spec = Some(SpecMethod::parse(val).ok_or(NoticeKind::Invalid)?);
            }
            "sv_disagg" => {
                self.disagg = match val.trim() {
                    "1" => true,
                    "0" => false,
                    _ => return Err(NoticeKind::Invalid),
                };
            }
            "sv_kvl" => {
                self.kv_link = match val.trim() {
                    "auto" => None,
                    // The CLI's names only (not `KvLink::parse`, whose refusal's sentence
                    // would ship in the shell).
                    l => Some(
                        KV_LINKS
                            .into_iter()
                            .find(|k| k.id() == l)
                            .ok_or(NoticeKind::Invalid)?,
                    ),
                };
            }
            _ => return Err(NoticeKind::UnknownParam),
        }
        Ok(())
    }

    /// The URL parameters that differ from the defaults, `key=value` each (the request count
    /// before the warm-up, so that reading them back in order passes the warm-up check).
    pub fn query_parts(&self) -> Vec<String> {
        // The engine first: reading it sets the server path's default the rest compares with.
        let mut d = ServingInputs::default();
        d.set_engine(self.engine);
        let mut q = Vec::new();
        if self.engine != EngineKind::Vllm {
            q.push(format!("sv_engine={}", self.engine.id()));
        }
        let mut fields: Vec<ServField> = ServField::ALL.to_vec();
        if self.warmup < d.num_requests {
            // A warm-up below the default count is read before the count (a small count
            // needs its small warm-up first); a larger one after the count.
            fields.retain(|f| *f != ServField::Warmup);
            let at = fields
                .iter()
                .position(|f| *f == ServField::NumRequests)
                .unwrap_or(0);
            fields.insert(at, ServField::Warmup);
        }
        for f in fields {
            let v = f.get(self);
            if v.to_bits() != f.get(&d).to_bits() {
                q.push(format!("{}={}", f.query_key(), v));
            }
        }
        if self.arrival != d.arrival {
            q.push(format!("sv_arr={}", self.arrival.id()));
        }
        if self.dataset != d.dataset {
            q.push(format!("sv_ds={}", self.dataset.id()));
        }
        if self.router != d.router {
            q.push(format!("sv_router={}", self.router.id()));
        }
        if let Some(m) = self.spec {
            q.push(format!("sv_spec={}", m.name()));
        }
        if self.disagg {
            q.push("sv_disagg=1".to_string());
        }
        if let Some(l) = self.kv_link {
            q.push(format!("sv_kvl={}", l.id()));
        }
        q
    }
}

#[cfg(test)]
mod tests;
