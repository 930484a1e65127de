//! What a run returns: [`SimResult`], plain data, with the statistics named as `vllm bench
//! serve` names them ([`SimResult::vllm_fields`]) and the notes of the run.

use crate::base::i18n::{fill, tr, Lang};
use crate::calc::perf::PerfNote;
use crate::model::desc::EngineMaxLen;
use crate::sim::engines::EngineKind;
use crate::sim::stats::{Dist, Series};
use serde::{Deserialize, Serialize};

/// Simulated over measured mean TTFT, median over the 90 vLLM 0.12 runs of
/// `tests/vllm_v1_concurrency.rs` (Qwen3-32B on H100, 8–128 clients, every request the same
/// lengths, the roofline step model with a 48 ms server path): how far the lockstep of
/// [`SimNote::Lockstep`] puts the TTFT above a real server's. The note is given on the roofline
/// step model only. That test recomputes it and fails when it drifts by
/// more than 0.1.
pub const LOCKSTEP_TTFT_RATIO: f64 = 2.4;

/// A note on a run, typed so that the UI can say it in either language.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum SimNote {
    /// More requests were asked for than one run takes; the count was capped.
    RequestsCapped {
        /// The count asked for.
        asked: u64,
        /// The count simulated.
        cap: u64,
    },
    /// The step budget ran out: the statistics cover the requests finished so far.
    Partial {
        /// Steps simulated.
        steps: u64,
    },
    /// Every request has the same lengths and a fixed number of clients sends them, each its
    /// next as soon as its last returns, for at least a round (`--max-concurrency` binding):
    /// the deterministic clients stay in step, round after round (their prompts share engine
    /// steps), where a real server's timing breaks them up. The TTFT is likely overestimated
    /// ([`LOCKSTEP_TTFT_RATIO`]).
    Lockstep {
        /// The clients.
        clients: u64,
    },
    /// The config states no maximum length, so `max_model_len` is the `len` vLLM assumes.
    MaxModelLenAssumed {
        /// The length assumed.
        len: u64,
    },
    /// `max_model_len` is the length vLLM derives from the config by its own rules (the
    /// smallest length key, `model_max_length`, RoPE scaling), not `max_position_embeddings`.
    MaxModelLenDerived {
        /// The length and its rule.
        derived: EngineMaxLen,
    },
    /// Step times come from vLLM's measured kernels: the GPU's own tables, or (`sibling`)
    /// those of the nearest measured GPU of its architecture.
    Kernels {
        /// The measured GPU (`h100_sxm`, …).
        table: String,
        /// The vLLM version its tables measured.
        vllm: String,
        /// The tables are a sibling's.
        sibling: bool,
        /// The engine's time per step beyond its kernels, ms.
        step_ms: f64,
    },
    /// vLLM runs a step of more than `graph_tokens` tokens without a CUDA graph: such a step
    /// adds `per_layer_ms` per layer, `step_ms` in all (`sim::kernel_step::FIT_EAGER_LAYER_S`).
    EagerSteps {
        /// The most tokens a step runs as a captured graph.
        graph_tokens: u64,
        /// Per layer, ms.
        per_layer_ms: f64,
        /// Per such step, ms.
        step_ms: f64,
    },
    /// Measured kernels cover neither this GPU nor its architecture (another vendor, an older
    /// generation), or not this model's layers (recurrent mixers, latent MoE): the fitted
    /// roofline times the steps.
    RooflineFallback,
    /// The run stands for another engine than vLLM: its defaults, memory rule and scheduler,
    /// with vLLM's measured kernels timing its steps (`sim::engines`).
    Engine {
        /// The engine.
        engine: EngineKind,
    },
    /// The instance has `units` symmetric units (attention-DP ranks × pipeline slots): one
    /// was simulated with its share of the load, and the throughputs are `active` times its
    /// own (`sim::parallel`).
    Parallel {
        /// `dp × pp`.
        units: u64,
        /// Units with requests.
        active: u64,
    },
    /// Speculative decoding (`sim::spec`): the method, drafts per step and the mean accepted
    /// length its rates give.
    Spec {
        /// The method's command-line name.
        method: String,
        /// Drafts per step.
        k: u64,
        /// Tokens a verifying step yields on average.
        length: f64,
    },
    /// A note of the performance model (precision fallback, no published peak, …).
    Perf {
        /// The note.
        note: PerfNote,
    },
}

impl SimNote {
    /// The sentence in a language.
    pub fn message(&self, lang: Lang) -> String {
        match self {
            SimNote::RequestsCapped { asked, cap } => fill(
                tr(lang, "sim_note_capped"),
                &[("asked", &asked.to_string()), ("cap", &cap.to_string())],
            ),
            SimNote::Partial { steps } => fill(
                tr(lang, "sim_note_partial"),
                &[("steps", &steps.to_string())],
            ),
            SimNote::Lockstep { clients } => fill(
                tr(lang, "sim_note_lockstep"),
                &[
                    ("clients", &clients.to_string()),
                    ("ratio", &format!("{LOCKSTEP_TTFT_RATIO:.1}")),
                ],
            ),
            SimNote::MaxModelLenAssumed { len } => fill(
                tr(lang, "sim_note_max_model_len"),
                &[("len", &len.to_string())],
            ),
            SimNote::MaxModelLenDerived { derived } => fill(
                tr(lang, "sim_note_max_model_len_derived"),
                &[
                    ("len", &derived.tokens.to_string()),
                    ("rule", &derived.rule.phrase().text(lang)),
                    (
                        "pos",
                        &derived
                            .positions
                            .map_or_else(|| "—".into(), |p| p.to_string()),
                    ),
                ],
            ),
            SimNote::Kernels {
                table,
                vllm,
                sibling,
                step_ms,
            } => fill(
                tr(
                    lang,
                    if *sibling {
                        "sim_note_kernels_sibling"
                    } else {
                        "sim_note_kernels"
                    },
                ),
                &[
                    ("table", crate::hardware::kernels::table_name(table)),
                    ("vllm", vllm),
                    ("step", &format!("{step_ms:.2}")),
                ],
            ),
            SimNote::EagerSteps {
                graph_tokens,
                per_layer_ms,
                step_ms,
            } => fill(
                tr(lang, "sim_note_eager"),
                &[
                    ("graph", &graph_tokens.to_string()),
                    ("layer", &format!("{per_layer_ms:.2}")),
                    ("step", &format!("{step_ms:.1}")),
                ],
            ),
            SimNote::RooflineFallback => tr(lang, "sim_note_roofline").to_string(),
            SimNote::Engine { engine } => {
                let [seqs, tokens, page, fraction] = engine.flag_names();
                fill(
                    tr(lang, "sim_note_engine"),
                    &[
                        ("engine", engine.name()),
                        ("version", engine.version()),
                        ("seqs", seqs),
                        ("tokens", tokens),
                        ("page", page),
                        ("fraction", fraction),
                    ],
                )
            }
            SimNote::Parallel { units, active } => fill(
                tr(lang, "sim_note_parallel"),
                &[
                    ("units", &units.to_string()),
                    ("active", &active.to_string()),
                ],
            ),
            SimNote::Spec { method, k, length } => fill(
                tr(lang, "sim_note_spec"),
                &[
                    ("method", method),
                    ("k", &k.to_string()),
                    ("length", &format!("{length:.2}")),
                ],
            ),
            SimNote::Perf { note } => note.message(lang),
        }
    }
}

/// The engine figures a run used (after defaults and the KV budget).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct EngineUsed {
    /// `max_num_seqs`.
    pub max_num_seqs: u64,
    /// `max_num_batched_tokens`.
    pub max_num_batched_tokens: u64,
    /// `block_size`.
    pub block_size: u64,
    /// `max_model_len`.
    pub max_model_len: u64,
    /// KV blocks.
    pub num_gpu_blocks: u64,
    /// The engine whose knobs these are (vLLM's names above; the others' in
    /// [`EngineKind::flag_names`]); left out of the JSON for vLLM.
    #[serde(default, skip_serializing_if = "is_vllm")]
    pub engine: EngineKind,
    /// The instance's parallelism beyond tensor parallelism inside one node (the KV blocks
    /// above are one DP rank's); left out of the JSON otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallel: Option<crate::sim::parallel::Parallel>,
}

fn is_vllm(e: &EngineKind) -> bool {
    *e == EngineKind::Vllm
}

/// The outcome of one simulated benchmark.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SimResult {
    /// Requests measured (sent after the warm-up).
    pub num_prompts: u64,
    /// Measured requests completed.
    pub completed: u64,
    /// The run stopped at its step budget; the statistics cover what finished.
    pub partial: bool,
    /// Benchmark duration: first send to last completion of the measured requests, seconds.
    pub duration_s: f64,
    /// Prompt tokens of the completed measured requests.
    pub total_input_tokens: u64,
    /// Output tokens of the completed measured requests.
    pub total_output_tokens: u64,
    /// Completed requests per second.
    pub request_throughput: f64,
    /// Output tokens per second.
    pub output_throughput: f64,
    /// Prompt + output tokens per second.
    pub total_token_throughput: f64,
    /// Requests meeting the targets per second (with targets).
    pub request_goodput: Option<f64>,
    /// Share of completed requests meeting the targets, 0–1 (with targets).
    pub goodput: Option<f64>,
    /// Time to first token, ms.
    pub ttft_ms: Dist,
    /// Time per output token, ms.
    pub tpot_ms: Dist,
    /// Inter-token latency, ms.
    pub itl_ms: Dist,
    /// End-to-end latency, ms.
    pub e2el_ms: Dist,
    /// Queueing delay (entering the engine's queue, after the frontend path, to first
    /// scheduled), ms.
    pub queue_ms: Dist,
    /// The server's path (serial work per prompt token and its fixed latency), ms: with
    /// `queue_ms` and `prefill_ms` it makes each request's TTFT.
    pub frontend_ms: Dist,
    /// From first scheduled to the first token, ms.
    pub prefill_ms: Dist,
    /// Preemptions (recomputations) in the whole run.
    pub preemptions: u64,
    /// Engine steps simulated.
    pub steps: u64,
    /// Mean running requests per step.
    pub mean_batch: f64,
    /// Most running requests in a step.
    pub max_batch: u64,
    /// Highest share of KV blocks in use, 0–1.
    pub peak_kv_occupancy: f64,
    /// Requests still running at the end (all, warm-up included).
    pub running_at_end: u64,
    /// Requests waiting in the engine at the end.
    pub waiting_at_end: u64,
    /// Requests not yet sent at the end (the client's queue and later arrivals).
    pub not_sent_at_end: u64,
    /// Requests completed, warm-up included.
    pub completed_all: u64,
    /// Requests generated (warm-up included).
    pub generated: u64,
    /// Batch, queue and KV occupancy over time.
    pub series: Series,
    /// The engine figures used.
    pub engine: EngineUsed,
    /// Notes.
    pub notes: Vec<SimNote>,
    /// Disaggregated serving: each pool's load and the stages of TTFT (`None`: one
    /// aggregated engine or a fleet of them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disagg: Option<DisaggSummary>,
}

impl SimResult {
    /// The statistics under the keys of vLLM's result file (`request_throughput`,
    /// `mean_ttft_ms`, `p99_itl_ms`, …; P90 as vLLM names it with `--metric-percentiles
    /// 90,99`), then the simulator's own (`preemptions`, `goodput`, and the parts of TTFT:
    /// `mean_frontend_ms` the server's path, `mean_queue_ms` the wait for the engine,
    /// `mean_prefill_ms` from first scheduled to the first token).
    pub fn vllm_fields(&self) -> Vec<(String, f64)> {
        let mut v: Vec<(String, f64)> = vec![
            ("duration".into(), self.duration_s),
            ("completed".into(), self.completed as f64),
            ("total_input_tokens".into(), self.total_input_tokens as f64),
            (
                "total_output_tokens".into(),
                self.total_output_tokens as f64,
            ),
            ("request_throughput".into(), self.request_throughput),
            ("output_throughput".into(), self.output_throughput),
            ("total_token_throughput".into(), self.total_token_throughput),
        ];
        for (name, d) in [
            ("ttft", &self.ttft_ms),
            ("tpot", &self.tpot_ms),
            ("itl", &self.itl_ms),
            ("e2el", &self.e2el_ms),
            ("queue", &self.queue_ms),
            ("frontend", &self.frontend_ms),
            ("prefill", &self.prefill_ms),
        ] {
            v.push((format!("mean_{name}_ms"), d.mean));
            v.push((format!("median_{name}_ms"), d.median));
            v.push((format!("std_{name}_ms"), d.std));
            v.push((format!("p90_{name}_ms"), d.p90));
            v.push((format!("p99_{name}_ms"), d.p99));
        }
        v.push(("preemptions".into(), self.preemptions as f64));
        if let (Some(g), Some(rg)) = (self.goodput, self.request_goodput) {
            v.push(("goodput".into(), g));
            v.push(("request_goodput".into(), rg));
        }
        v
    }
}

/// What disaggregation adds to a run's statistics: each pool's load and the stages of TTFT.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DisaggSummary {
    /// Prefill and decode workers.
    pub prefill_workers: u64,
    pub decode_workers: u64,
    /// GPUs of one prefill worker and of one decode worker.
    pub prefill_gpus: u64,
    pub decode_gpus: u64,
    /// The link and one transfer's fixed latency, ms.
    pub link: crate::sim::kv_link::KvLink,
    pub transfer_latency_ms: f64,
    /// Share of the run each pool's units were running a step, 0–1 (mean over units).
    pub prefill_busy: f64,
    pub decode_busy: f64,
    /// From the client's send to the prefill's end (server's path, prefill queue, prefill), ms.
    pub prefill_stage_ms: Dist,
    /// The KV's transfer, ms.
    pub transfer_ms: Dist,
    /// From the KV's landing to the first token (decode queue and one decode step), ms.
    pub decode_first_ms: Dist,
    /// Mean requests per decode step (over the decode units' steps).
    pub decode_mean_batch: f64,
    /// Bytes of one request's KV sent per GPU (mean over measured requests).
    pub kv_bytes_per_gpu: f64,
}
