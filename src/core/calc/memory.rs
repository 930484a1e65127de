//! Memory budgets: how many requests fit beside the weights.
//!
//! Two rules, both explained as [`Derivation`]s:
//!
//! * **The textbook's** (course chapter, section 3 of `WORKED_EXAMPLES.md`):
//!   `budget = capacity − weights`, `max requests = ⌊budget / KV per request⌋`. The theoretical
//!   figure reads the marketed capacity as GiB (the vendors' convention: "24 GB" → 24 GiB); the
//!   practical figure starts from the capacity the driver reports (A10G 23,028 MiB, L40S
//!   46,068 MiB) and also keeps an activation reserve ([`activation_estimate`]). This turns the
//!   chapter's 5 into 4 (A10G) and 17 into 16 (L40S) for Llama-2-7b fp16 at 4,096 tokens.
//! * **vLLM's** ([`vllm_budget`]): `available KV = total × gpu_memory_utilization − weights −
//!   activation peak − non-torch memory`, paged in blocks of `block_size` tokens, reporting the
//!   same lines vLLM logs ("GPU KV cache size: N tokens", "Maximum concurrency for L tokens per
//!   request: X×"). Source: vLLM `vllm/worker/worker.py` (`determine_num_available_blocks`),
//!   `vllm/executor/executor_base.py` (`initialize_cache`) and `vllm/v1/core/kv_cache_utils.py`
//!   (hybrid allocator, `get_max_concurrency_for_kv_cache_config`).
//!
//! Sliding-window layers follow vLLM V1's hybrid KV-cache allocator (`Paging::Hybrid`): layers
//! are bucketed by kind (full, or each window), grouped into equal-size groups (group size = the
//! smallest bucket, or the largest when it is under 1.5× the smallest; short buckets padded),
//! and every group draws block ids from one shared pool, so one block id costs
//! `block_size × group_size × per-layer bytes per token`. A request of `max_model_len` tokens
//! needs `⌈L / block_size⌉` blocks per full group and `⌈min(W − 1 + max_num_batched_tokens, L) /
//! block_size⌉ + 1` per sliding group; concurrency = blocks / that sum and the token figure is
//! `⌊concurrency × L⌋`, as the newest vLLM logs it. When layer page sizes differ, sliding layers
//! are paged as full attention (vLLM's fallback, with a note). All-full-attention models use the
//! classic rule that the logged observations follow: tokens = blocks × block_size, concurrency =
//! tokens / L (newest vLLM divides blocks by `⌈L / block_size⌉` instead, which differs only when
//! `block_size` does not divide L: 23,641 vs 23,648 tokens for row 2 of the observations).
//!
//! All byte arithmetic is integer and saturating or checked: no input can panic, overflow or
//! produce NaN.

use crate::core::base::derivation::{group, Derivation, Source, Term};
use crate::core::base::dtype::Dtype;
use crate::core::base::error::{shorten, CalcError, Phrase};
use crate::core::base::units::{fmt_sig, Bytes, GIB};
use crate::core::calc::kv as kvmod;
use crate::core::hardware::catalog::Accelerator;
use crate::core::model::{Ffn, Mixer, ModelDesc};
use serde::{Deserialize, Serialize};

/// vLLM's default `block_size` (tokens per KV-cache block) on CUDA.
pub const DEFAULT_BLOCK_SIZE: u64 = 16;
/// vLLM's default `gpu_memory_utilization`.
pub const DEFAULT_GPU_MEMORY_UTILIZATION: f64 = 0.9;
/// vLLM's default `max_num_seqs` for `vllm serve` on GPUs below 70 GiB (rows of logits the
/// profiling run samples).
pub const DEFAULT_MAX_NUM_SEQS: u64 = 256;

/// vLLM's default `max_num_batched_tokens` (the prefill chunk its profiling run uses) for
/// `vllm serve` with chunked prefill: 8,192 on GPUs with at least 70 GiB, 2,048 below
/// (vLLM `EngineArgs._set_default_args`, V1 engine).
pub fn default_max_num_batched_tokens(total_memory: Bytes) -> u64 {
    if total_memory.0 >= 70 * GIB {
        8192
    } else {
        2048
    }
}

// ---------------------------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------------------------

fn gib_str(b: Bytes) -> String {
    format!("{:.3}", b.gib())
}

fn bytes_result(b: Bytes) -> String {
    format!("{} B = {} = {}", group(b.0), b.fmt_gib(), b.fmt_gb())
}

/// `⌈a × bits / 8⌉` bytes, saturating.
fn elems_to_bytes(elems: u64, bits: u64) -> Bytes {
    let total_bits = u128::from(elems) * u128::from(bits);
    Bytes(u64::try_from(total_bits.div_ceil(8)).unwrap_or(u64::MAX))
}

fn ceil_div(a: u64, b: u64) -> u64 {
    if b == 0 {
        0
    } else {
        a.div_ceil(b)
    }
}

/// `⌊a / b⌋` for byte counts, 0 when `b` is 0.
fn floor_div(a: Bytes, b: Bytes) -> u64 {
    a.0.checked_div(b.0).unwrap_or(0)
}

fn out_of_range(field: &str, value: impl ToString, range: Phrase) -> CalcError {
    CalcError::OutOfRange {
        field: Phrase::verbatim(field),
        value: shorten(&value.to_string()),
        range,
    }
}

// ---------------------------------------------------------------------------------------------
// Tensor parallelism
// ---------------------------------------------------------------------------------------------

use crate::core::calc::tp::check_heads as check_tp;

pub use crate::core::calc::kv::kv_heads_per_rank;

/// One GPU's share of the weights under tensor parallelism, with its derivation.
///
/// Sharded (divided by `tp`): embeddings and lm_head (vLLM's vocab-parallel layers), query and
/// output projections, K/V projections while `kv_heads ≥ tp`, MLA up-projections, MLP, experts
/// and SSM projections. Replicated on every GPU: norms, routers, learned position embeddings,
/// MLA down-projections (`q_a`, `kv_a`), and one K/V head per GPU when `tp > kv_heads`.
/// The stored bytes `total_bytes` (any precision, with scales) are split in proportion to the
/// parameter counts. Source: vLLM `ColumnParallelLinear`/`RowParallelLinear`/
/// `QKVParallelLinear`/`VocabParallelEmbedding`.
pub fn weights_per_gpu(
    model: &ModelDesc,
    total_bytes: Bytes,
    tp: u64,
) -> Result<(Bytes, Derivation), CalcError> {
    let tp = tp.max(1);
    let p = &model.params;
    let mut replicated: u64 = p
        .norms
        .saturating_add(p.router)
        .saturating_add(p.position_embeddings);
    let mut kv_extra: u64 = 0; // K/V parameters per rank beyond the ideal 1/tp share
    let h = model.hidden_size;
    for l in &model.layers {
        match &l.mixer {
            Mixer::Attention {
                num_heads,
                kv_heads,
                head_dim,
                v_head_dim,
                ..
            } => {
                check_tp(*num_heads, *kv_heads, tp)?;
                if *kv_heads < tp && *kv_heads > 0 {
                    // Per rank: one whole head instead of kv_heads / tp heads.
                    let per_head = h.saturating_mul(head_dim.saturating_add(*v_head_dim));
                    let held = per_head;
                    let ideal = per_head.saturating_mul(*kv_heads) / tp;
                    kv_extra = kv_extra.saturating_add(held.saturating_sub(ideal));
                }
            }
            Mixer::Mla {
                num_heads,
                kv_lora_rank,
                q_lora_rank,
                qk_rope_head_dim,
                ..
            } => {
                check_tp(*num_heads, 0, tp)?;
                let kv_a = h.saturating_mul(kv_lora_rank.saturating_add(*qk_rope_head_dim));
                let q_a = q_lora_rank.map_or(0, |r| h.saturating_mul(r));
                replicated = replicated.saturating_add(kv_a).saturating_add(q_a);
            }
            Mixer::Ssm { .. } => {}
        }
    }
    let total = p.total.max(1);
    let replicated = replicated.min(total);
    let sharded = total - replicated;
    let per_rank_params = (sharded / tp)
        .saturating_add(replicated)
        .saturating_add(kv_extra)
        .min(total);
    let bytes = if p.total == 0 {
        Bytes(total_bytes.0 / tp)
    } else {
        let b = u128::from(total_bytes.0) * u128::from(per_rank_params) / u128::from(total);
        Bytes(u64::try_from(b).unwrap_or(u64::MAX))
    };
    let d = Derivation {
        title_key: "mem_weights_per_gpu".into(),
        formula: "W_gpu = W × (P_sharded / TP + P_replicated) / P".into(),
        substituted: format!(
            "{} B × ({} / {} + {}) / {}",
            group(total_bytes.0),
            group(sharded),
            tp,
            group(replicated.saturating_add(kv_extra)),
            group(p.total)
        ),
        result: bytes_result(bytes),
        terms: vec![
            Term::new("W", "term_weights", group(total_bytes.0), "B", Source::Derived("weights_bytes".into())),
            Term::new("TP", "term_tp", tp.to_string(), "", Source::User("tp".into())),
            Term::new("P", "term_params", group(p.total), "", Source::Derived("params_total".into())),
            Term::new(
                "P_replicated",
                "term_params_replicated",
                group(replicated.saturating_add(kv_extra)),
                "",
                Source::Derived("norms + routers + position embeddings + MLA down-projections + replicated K/V heads".into()),
            ),
        ],
        notes: vec!["note_tp_weights_proportional".into()],
    };
    Ok((bytes, d))
}

// ---------------------------------------------------------------------------------------------
// KV profile: how the cache of one request grows with its length, per GPU
// ---------------------------------------------------------------------------------------------

/// How one layer's KV cache grows with the sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum KvLayerKind {
    /// Full attention (or MLA): every token stays cached.
    Full,
    /// Sliding-window attention: at most `window` tokens stay cached.
    Sliding {
        /// Window in tokens.
        window: u64,
    },
}

/// One attention layer's cache on one GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct KvLayer {
    /// Full or sliding.
    pub kind: KvLayerKind,
    /// Bytes cached per token by this layer on one GPU: `kv_heads_per_rank × (k_dim + v_dim) ×
    /// dtype bytes`, or `(kv_lora_rank + qk_rope_head_dim) × dtype bytes` for MLA.
    pub bytes_per_token: Bytes,
}

/// The per-GPU KV cache of a model at one KV precision and TP degree.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct KvProfile {
    /// Attention layers, in model order.
    pub layers: Vec<KvLayer>,
    /// Constant recurrent state per sequence (SSM / linear-attention layers), per GPU.
    pub state_per_seq: Bytes,
}

impl KvProfile {
    /// `n` identical full-attention layers of `bytes_per_token` each (plain quantities).
    pub fn uniform(n: u64, bytes_per_token: Bytes) -> KvProfile {
        let n = usize::try_from(n.min(1 << 20)).unwrap_or(0);
        KvProfile {
            layers: vec![
                KvLayer {
                    kind: KvLayerKind::Full,
                    bytes_per_token
                };
                n
            ],
            state_per_seq: Bytes::ZERO,
        }
    }

    /// Builds the profile from a model at KV precision `kv` and tensor-parallel degree `tp`,
    /// with `core::kv`'s per-layer elements (per-GPU KV heads; MLA latents replicated on every
    /// GPU, as in vLLM) and its recurrent state (model precision, split across TP ranks).
    pub fn from_model(model: &ModelDesc, kv: Dtype, tp: u64) -> Result<KvProfile, CalcError> {
        if tp == 0 {
            return Err(out_of_range("tp", tp, Phrase::tr("rng_whole_at_least_1")));
        }
        let bits = kv.bits();
        let mut p = KvProfile::default();
        for l in &model.layers {
            let window = match &l.mixer {
                Mixer::Attention {
                    num_heads,
                    kv_heads,
                    window,
                    ..
                } => {
                    check_tp(*num_heads, *kv_heads, tp)?;
                    *window
                }
                Mixer::Mla { num_heads, .. } => {
                    check_tp(*num_heads, 0, tp)?;
                    None
                }
                Mixer::Ssm { .. } => continue,
            };
            let elems = kvmod::layer_elems_per_token(&l.mixer, tp)?;
            p.layers.push(KvLayer {
                kind: match window {
                    Some(w) => KvLayerKind::Sliding { window: w },
                    None => KvLayerKind::Full,
                },
                bytes_per_token: elems_to_bytes(elems, bits),
            });
        }
        p.state_per_seq = kvmod::state_bytes(model, model.weights.base, tp)?.bytes;
        Ok(p)
    }

    /// Bytes per token summed over all attention layers, as if every layer kept every token
    /// (what one vLLM block of one token costs when all layers are full attention).
    pub fn per_token_all_layers(&self) -> Bytes {
        self.layers
            .iter()
            .fold(Bytes::ZERO, |a, l| a + l.bytes_per_token)
    }

    /// KV bytes of one request of `len` tokens: full layers × len, sliding layers ×
    /// min(len, window), plus the constant state.
    pub fn per_request(&self, len: u64) -> Bytes {
        self.layers.iter().fold(self.state_per_seq, |a, l| {
            let t = match l.kind {
                KvLayerKind::Full => len,
                KvLayerKind::Sliding { window } => len.min(window),
            };
            a + l.bytes_per_token * t
        })
    }

    /// KV bytes of `batch` requests of `len` tokens each.
    pub fn per_batch(&self, batch: u64, len: u64) -> Bytes {
        self.per_request(len) * batch
    }

    /// Whether the model has any attention KV cache.
    pub fn has_attention(&self) -> bool {
        !self.layers.is_empty()
    }

    /// The longest request (tokens) whose KV fits in `budget`; `None` if even the constant
    /// state does not fit. Capped at 2^40 tokens.
    pub fn max_len_within(&self, budget: Bytes) -> Option<u64> {
        if self.per_request(0) > budget {
            return None;
        }
        let (mut lo, mut hi) = (0u64, 1u64 << 40);
        if self.per_request(hi) <= budget {
            return Some(hi);
        }
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if self.per_request(mid) <= budget {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        Some(lo)
    }
}

// ---------------------------------------------------------------------------------------------
// Activation reserve estimate
// ---------------------------------------------------------------------------------------------

/// Settings of the activation estimate.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ActivationParams {
    /// Tokens in one forward pass (vLLM `max_num_batched_tokens`, the prefill chunk).
    pub chunk_tokens: u64,
    /// Sequences whose logits are computed at fp32 (vLLM `max_num_seqs`).
    pub logit_rows: u64,
    /// Activation precision.
    pub act: Dtype,
    /// Tensor-parallel degree (per-GPU widths).
    pub tp: u64,
}

impl ActivationParams {
    /// The textbook/vLLM defaults for a GPU of `total_memory`: chunk from
    /// [`default_max_num_batched_tokens`], 256 logit rows, 16-bit activations, TP 1.
    pub fn defaults(total_memory: Bytes) -> ActivationParams {
        ActivationParams {
            chunk_tokens: default_max_num_batched_tokens(total_memory),
            logit_rows: DEFAULT_MAX_NUM_SEQS,
            act: Dtype::Bf16,
            tp: 1,
        }
    }
}

/// The widest intermediate of any layer per GPU, `w_max`, in elements per token: attention
/// `q + k + v + out` widths, MLA's naive prefill widths, SSM `4·d_inner`, gated MLP `3·I`,
/// plain MLP `2·I`, MoE `top_k × 3·I_e` (+ shared experts), each divided by `tp`.
fn widest_intermediate(model: &ModelDesc, tp: u64) -> u64 {
    let mut w_max: u64 = 0;
    for l in &model.layers {
        let mix = match &l.mixer {
            Mixer::Attention {
                num_heads,
                kv_heads,
                head_dim,
                v_head_dim,
                ..
            } => {
                let hq = num_heads / tp;
                let hkv = kv_heads_per_rank(*kv_heads, tp);
                hq.saturating_mul(head_dim.saturating_add(*v_head_dim))
                    .saturating_add(hkv.saturating_mul(head_dim.saturating_add(*v_head_dim)))
            }
            Mixer::Mla {
                num_heads,
                kv_lora_rank,
                qk_nope_head_dim,
                qk_rope_head_dim,
                v_head_dim,
                ..
            } => {
                let hq = num_heads / tp;
                let qk = qk_nope_head_dim.saturating_add(*qk_rope_head_dim);
                // Naive MLA prefill: q and k of qk dims, v and out of v dims, per head.
                hq.saturating_mul(qk.saturating_add(*v_head_dim).saturating_mul(2))
                    .saturating_add(kv_lora_rank.saturating_add(*qk_rope_head_dim))
            }
            Mixer::Ssm { d_inner, .. } => d_inner.saturating_mul(4) / tp,
        };
        let ffn = match &l.ffn {
            Ffn::Dense {
                intermediate,
                gated,
            } => ceil_div(*intermediate, tp).saturating_mul(if *gated { 3 } else { 2 }),
            Ffn::Moe {
                top_k,
                expert_intermediate,
                shared_experts,
                shared_intermediate,
                gated,
                ..
            } => {
                let m = if *gated { 3 } else { 2 };
                top_k
                    .saturating_mul(ceil_div(*expert_intermediate, tp))
                    .saturating_mul(m)
                    .saturating_add(
                        shared_experts
                            .saturating_mul(ceil_div(*shared_intermediate, tp))
                            .saturating_mul(m),
                    )
            }
            Ffn::None => 0,
        };
        w_max = w_max.max(mix).max(ffn);
    }
    w_max
}

/// Estimated peak activation memory of one forward pass, per GPU, with its derivation.
///
/// `A = T × (2h + w_max) × b_act + R × V × 4`: over a chunk of `T = chunk_tokens` tokens, two
/// hidden-size tensors live across the layer (the residual stream and its normed copy) plus the
/// widest intermediate of any layer, `w_max`: gated MLP `3·I` (gate/up output `2·I` and the
/// activated `I`), plain MLP `2·I`, attention `q + k + v + out` widths, MoE `top_k × 3·I_e` (+
/// shared experts), SSM `4·d_inner`; widths per GPU (÷ TP). Then `R = min(logit_rows, T)` rows
/// of logits at fp32 over the full vocabulary `V` (vLLM gathers them on every rank). The KV
/// cache and weights are excluded (counted elsewhere). Checked against vLLM's logged activation
/// peaks: Llama-3.1-8B profiled at 20,000 / 29,000 tokens estimates 2.03 / 2.89 GiB against
/// logged 2.07 / 2.99 GiB (`tests/vllm_observations.rs`). For a model without layer data
/// (quick mode) the estimate is 0 and a note says so.
pub fn activation_estimate(
    model: &ModelDesc,
    ap: &ActivationParams,
) -> Result<(Bytes, Derivation), CalcError> {
    let tp = ap.tp.max(1);
    let h = model.hidden_size;
    let w_max = widest_intermediate(model, tp);
    let width = h.saturating_mul(2).saturating_add(w_max);
    let per_tok = elems_to_bytes(width, ap.act.bits());
    let rows = ap.logit_rows.min(ap.chunk_tokens);
    let hidden_part = per_tok * ap.chunk_tokens;
    let logits = Bytes(rows.saturating_mul(model.vocab_size).saturating_mul(4));
    let total = if model.layers.is_empty() {
        Bytes::ZERO
    } else {
        hidden_part + logits
    };
    let b_act = ap.act.bits() as f64 / 8.0;
    let d = Derivation {
        title_key: "mem_activation_estimate".into(),
        formula: "A = T × (2h + w_max) × b_act + R × V × 4".into(),
        substituted: format!(
            "{} × (2 × {} + {}) × {} + {} × {} × 4",
            group(ap.chunk_tokens),
            group(h),
            group(w_max),
            fmt_sig(b_act),
            group(rows),
            group(model.vocab_size)
        ),
        result: bytes_result(total),
        terms: vec![
            Term::new(
                "T",
                "term_chunk_tokens",
                group(ap.chunk_tokens),
                "tokens",
                Source::Default("default_max_num_batched_tokens".into()),
            ),
            Term::new(
                "h",
                "term_hidden",
                group(h),
                "",
                Source::ConfigKey("hidden_size".into()),
            ),
            Term::new(
                "w_max",
                "term_widest_intermediate",
                group(w_max),
                "",
                Source::Derived("widest per-layer intermediate per GPU".into()),
            ),
            Term::new(
                "b_act",
                "term_act_bytes",
                fmt_sig(b_act),
                "B",
                Source::Default(ap.act.id().into()),
            ),
            Term::new(
                "R",
                "term_logit_rows",
                group(rows),
                "",
                Source::Default("max_num_seqs".into()),
            ),
            Term::new(
                "V",
                "term_vocab",
                group(model.vocab_size),
                "",
                Source::ConfigKey("vocab_size".into()),
            ),
        ],
        notes: if model.layers.is_empty() {
            vec!["note_activation_unknown_arch".into()]
        } else {
            vec!["note_activation_estimate".into()]
        },
    };
    Ok((total, d))
}

// ---------------------------------------------------------------------------------------------
// The textbook's budget
// ---------------------------------------------------------------------------------------------

/// Inputs of the textbook rule, as plain quantities.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TextbookInputs {
    /// Capacity for the theoretical count: the marketed figure read as GiB.
    pub marketed_capacity: Bytes,
    /// Capacity for the practical count: what the driver reports.
    pub usable_capacity: Bytes,
    /// Weight bytes.
    pub weights: Bytes,
    /// KV bytes of one request at the chosen length.
    pub kv_per_request: Bytes,
    /// Activation reserve kept free for the practical count.
    pub activation_reserve: Bytes,
}

/// The textbook's budget.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TextbookBudget {
    /// `marketed − weights`, at least 0.
    pub budget_theoretical: Bytes,
    /// `usable − weights − reserve`, at least 0.
    pub budget_practical: Bytes,
    /// Concurrent requests in theory.
    pub theoretical: u64,
    /// Concurrent requests in practice.
    pub practical: u64,
    /// Rule of thumb: GPU memory ≈ 2 × model size.
    pub rule_of_thumb: Bytes,
    /// Derivations: theoretical, practical, rule of thumb.
    pub derivations: Vec<Derivation>,
}

/// The textbook rule: `⌊(capacity − weights) / KV per request⌋`, in theory (marketed
/// capacity) and in practice (driver-reported capacity minus an activation reserve).
/// A request of 0 bytes is counted as fitting `u64::MAX` times.
pub fn textbook_budget(inp: &TextbookInputs) -> TextbookBudget {
    let bt = inp.marketed_capacity - inp.weights;
    let bp = inp.usable_capacity - inp.weights - inp.activation_reserve;
    let per = inp.kv_per_request;
    let count = |b: Bytes| b.0.checked_div(per.0).unwrap_or(u64::MAX);
    let theoretical = count(bt);
    let practical = count(bp);
    let rot = inp.weights * 2;
    let t_weights = || {
        Term::new(
            "W",
            "term_weights",
            gib_str(inp.weights),
            "GiB",
            Source::Derived("weights_bytes".into()),
        )
    };
    let t_kv = || {
        Term::new(
            "KV_req",
            "term_kv_per_request",
            gib_str(per),
            "GiB",
            Source::Derived("kv_per_request".into()),
        )
    };
    let d_theory = Derivation {
        title_key: "mem_requests_theoretical".into(),
        formula: "N = ⌊(C_marketed − W) / KV_req⌋".into(),
        substituted: format!(
            "⌊({} GiB − {} GiB) / {} GiB⌋",
            gib_str(inp.marketed_capacity),
            gib_str(inp.weights),
            gib_str(per)
        ),
        result: format!("{theoretical} requests"),
        terms: vec![
            Term::new(
                "C_marketed",
                "term_capacity_marketed",
                gib_str(inp.marketed_capacity),
                "GiB",
                Source::Catalog("memory_marketed_gb (read as GiB)".into()),
            ),
            t_weights(),
            t_kv(),
        ],
        notes: vec!["note_marketed_as_gib".into()],
    };
    let d_practice = Derivation {
        title_key: "mem_requests_practical".into(),
        formula: "N = ⌊(C_usable − W − A) / KV_req⌋".into(),
        substituted: format!(
            "⌊({} GiB − {} GiB − {} GiB) / {} GiB⌋",
            gib_str(inp.usable_capacity),
            gib_str(inp.weights),
            gib_str(inp.activation_reserve),
            gib_str(per)
        ),
        result: format!("{practical} requests"),
        terms: vec![
            Term::new(
                "C_usable",
                "term_capacity_usable",
                gib_str(inp.usable_capacity),
                "GiB",
                Source::Catalog("memory_reported (driver)".into()),
            ),
            t_weights(),
            Term::new(
                "A",
                "term_activation_reserve",
                gib_str(inp.activation_reserve),
                "GiB",
                Source::Derived("mem_activation_estimate".into()),
            ),
            t_kv(),
        ],
        notes: vec!["note_activation_reserve".into()],
    };
    let d_rot = Derivation {
        title_key: "mem_rule_of_thumb".into(),
        formula: "M ≈ 2 × W".into(),
        substituted: format!("2 × {}", inp.weights.fmt_gb()),
        result: format!("{} ({})", rot.fmt_gb(), rot.fmt_gib()),
        terms: vec![t_weights()],
        notes: vec!["note_rule_of_thumb".into()],
    };
    TextbookBudget {
        budget_theoretical: bt,
        budget_practical: bp,
        theoretical,
        practical,
        rule_of_thumb: rot,
        derivations: vec![d_theory, d_practice, d_rot],
    }
}

/// A computed way to make a model fit when not even one request does.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Suggestion {
    /// Shard over this many GPUs of the same kind (tensor parallelism).
    TensorParallel {
        /// GPUs.
        gpus: u64,
        /// Requests that then fit (practical count, pooled memory).
        requests: u64,
    },
    /// Store the weights at a lower precision.
    LowerPrecision {
        /// The precision.
        dtype: Dtype,
        /// Weight bytes at that precision.
        weights: Bytes,
        /// Requests that then fit.
        requests: u64,
    },
    /// Serve shorter requests.
    ShorterContext {
        /// The longest request length (tokens) for which one request fits.
        max_tokens: u64,
    },
}

/// "What would fit" when the practical count is 0: the fewest GPUs (2, 4, 8, …, 64) whose
/// pooled memory holds the weights, one reserve per GPU and at least one request; each lower
/// weight precision in `alternatives` (precision, weight bytes) that fits at least one
/// request; and the longest request that fits on one GPU (if the weights fit at all).
/// Returns an empty list when at least one request already fits.
pub fn what_would_fit(
    inp: &TextbookInputs,
    profile: &KvProfile,
    context: u64,
    alternatives: &[(Dtype, Bytes)],
) -> Vec<Suggestion> {
    let base = textbook_budget(inp);
    if base.practical > 0 {
        return Vec::new();
    }
    let mut out = Vec::new();
    let per_req = profile.per_request(context);
    let mut n = 2u64;
    while n <= 64 {
        let pooled = (inp.usable_capacity * n) - inp.weights - (inp.activation_reserve * n);
        if per_req.0 > 0 && pooled >= per_req {
            out.push(Suggestion::TensorParallel {
                gpus: n,
                requests: pooled.0 / per_req.0,
            });
            break;
        }
        n *= 2;
    }
    for (dtype, w) in alternatives {
        if *w >= inp.weights {
            continue;
        }
        let b = textbook_budget(&TextbookInputs {
            weights: *w,
            ..*inp
        });
        if b.practical > 0 {
            out.push(Suggestion::LowerPrecision {
                dtype: *dtype,
                weights: *w,
                requests: b.practical,
            });
        }
    }
    if let Some(l) = profile.max_len_within(base.budget_practical) {
        if l > 0 && l < context {
            out.push(Suggestion::ShorterContext { max_tokens: l });
        }
    }
    out
}

/// The textbook budget for a model on a catalog accelerator: theoretical from the marketed
/// capacity read as GiB, practical from [`Accelerator::capacity`] minus
/// [`activation_estimate`] with vLLM's default chunk for that GPU. `weights` and `profile` are
/// per GPU. Same as [`textbook_for_tp`] at TP 1.
pub fn textbook_for(
    model: &ModelDesc,
    acc: &Accelerator,
    weights: Bytes,
    profile: &KvProfile,
    context: u64,
) -> Result<(TextbookInputs, TextbookBudget, Derivation), CalcError> {
    textbook_for_tp(model, acc, weights, profile, context, 1)
}

/// [`textbook_for`] on one GPU of a tensor-parallel group of `tp`: the activation reserve is
/// estimated with per-GPU widths (heads and intermediate ÷ TP). `weights` and `profile` must
/// already be per GPU ([`weights_per_gpu`], [`KvProfile::from_model`] with the same `tp`).
pub fn textbook_for_tp(
    model: &ModelDesc,
    acc: &Accelerator,
    weights: Bytes,
    profile: &KvProfile,
    context: u64,
    tp: u64,
) -> Result<(TextbookInputs, TextbookBudget, Derivation), CalcError> {
    let marketed = Bytes::from_gib_f64(acc.memory_marketed_gb).ok_or_else(|| {
        out_of_range(
            "memory_marketed_gb",
            acc.memory_marketed_gb,
            Phrase::tr("rng_positive"),
        )
    })?;
    let usable = acc.capacity();
    let ap = ActivationParams {
        tp: tp.max(1),
        ..ActivationParams::defaults(usable)
    };
    let (reserve, d_act) = activation_estimate(model, &ap)?;
    let inp = TextbookInputs {
        marketed_capacity: marketed,
        usable_capacity: usable,
        weights,
        kv_per_request: profile.per_request(context),
        activation_reserve: reserve,
    };
    Ok((inp, textbook_budget(&inp), d_act))
}

/// Memory of serving `batch` requests of `len` tokens: weights + activation reserve + KV.
pub fn serving_memory(
    weights: Bytes,
    reserve: Bytes,
    profile: &KvProfile,
    batch: u64,
    len: u64,
) -> Bytes {
    weights + reserve + profile.per_batch(batch, len)
}

// ---------------------------------------------------------------------------------------------
// vLLM's budget
// ---------------------------------------------------------------------------------------------

/// Inputs of vLLM's rule, per GPU, with where each came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VllmInputs {
    /// Total GPU memory (vLLM's `total_gpu_memory`).
    pub total_memory: Bytes,
    /// Where the total came from.
    pub total_source: Source,
    /// `gpu_memory_utilization`, in (0, 1].
    pub gpu_memory_utilization: f64,
    /// Weights on this GPU.
    pub weights: Bytes,
    /// Where the weights came from.
    pub weights_source: Source,
    /// Peak activation memory of the profiling run.
    pub activation_peak: Bytes,
    /// Where the activation peak came from.
    pub activation_source: Source,
    /// Memory outside PyTorch's allocator (CUDA context, NCCL, cuBLAS workspaces).
    pub non_torch: Bytes,
    /// Where the non-torch figure came from.
    pub non_torch_source: Source,
    /// When set, the available KV memory directly (bypasses the subtraction).
    pub available_kv_override: Option<Bytes>,
    /// Tokens per block (vLLM `block_size`, default 16).
    pub block_size: u64,
    /// `max_model_len`.
    pub max_model_len: u64,
    /// `max_num_batched_tokens` (sliding-window layers keep `window − 1 + this` tokens).
    pub max_num_batched_tokens: u64,
}

/// vLLM's non-torch memory estimate: 0.5 GiB on one GPU, 2 GiB with tensor parallelism (NCCL
/// buffers). Coarse: vLLM logged 0.16–1.79 GiB at TP 1 and 3.58 GiB at TP 2
/// (`vllm_observations.csv`); give the figure from your own log when you have it.
pub fn non_torch_estimate(tp: u64) -> Bytes {
    if tp > 1 {
        Bytes::from_gib(2)
    } else {
        Bytes(GIB / 2)
    }
}

/// How the cache was paged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Paging {
    /// One group of all layers (all full attention, or layers treated as such):
    /// tokens = blocks × block_size, concurrency = tokens / max_model_len (vLLM V0 and V1).
    Uniform,
    /// vLLM V1 hybrid allocator: full and sliding-window layers in equal-size groups sharing
    /// one block pool; sliding groups hold only their window.
    Hybrid,
    /// No attention layer: no paged KV cache.
    None,
}

/// vLLM's KV budget and what it logs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VllmBudget {
    /// `total × gpu_memory_utilization`.
    pub requested_memory: Bytes,
    /// Memory left for the KV cache (0 when negative).
    pub available_kv: Bytes,
    /// Bytes of one block id across all layers that share it.
    pub bytes_per_block: Bytes,
    /// `num_gpu_blocks`.
    pub num_gpu_blocks: u64,
    /// "GPU KV cache size: N tokens".
    pub kv_cache_tokens: u64,
    /// "Maximum concurrency for L tokens per request: X×".
    pub max_concurrency: f64,
    /// Whether one request of `max_model_len` fits (vLLM refuses to start otherwise).
    pub fits_max_model_len: bool,
    /// Paging scheme used.
    pub paging: Paging,
    /// Layers per KV group (hybrid), else the number of attention layers.
    pub group_size: u64,
    /// Blocks one request of `max_model_len` needs.
    pub blocks_per_request: u64,
    /// The lines vLLM prints.
    pub log_lines: Vec<String>,
    /// Derivations: available KV, bytes per block, blocks, tokens, concurrency.
    pub derivations: Vec<Derivation>,
    /// Notes (translation keys).
    pub notes: Vec<String>,
}

/// Formats an integer with thousands separators as Python's `f"{n:,}"`.
fn py_group(n: u64) -> String {
    group(n)
}

/// Checks vLLM's inputs in order: the utilization in (0, 1], then a block size of at least 1,
/// then a `max_model_len` of at least 1.
fn check_vllm_inputs(inp: &VllmInputs) -> Result<(), CalcError> {
    let u = inp.gpu_memory_utilization;
    if !(u.is_finite() && u > 0.0 && u <= 1.0) {
        return Err(out_of_range(
            "gpu_memory_utilization",
            u,
            Phrase::tr("rng_number_above0_at_most1"),
        ));
    }
    if inp.block_size == 0 {
        return Err(out_of_range(
            "block_size",
            0,
            Phrase::tr("rng_whole_at_least_1"),
        ));
    }
    if inp.max_model_len == 0 {
        return Err(out_of_range(
            "max_model_len",
            0,
            Phrase::tr("rng_whole_at_least_1"),
        ));
    }
    Ok(())
}

/// Memory left for the KV cache: the override when given, else `requested − W − A − N`
/// (0 when negative, with a note).
fn available_kv(inp: &VllmInputs, requested: Bytes, notes: &mut Vec<String>) -> Bytes {
    match inp.available_kv_override {
        Some(k) => k,
        None => {
            let need = inp.weights + inp.activation_peak + inp.non_torch;
            if need > requested {
                notes.push("note_vllm_no_memory".to_string());
            }
            requested - inp.weights - inp.activation_peak - inp.non_torch
        }
    }
}

/// How the attention layers are paged: the scheme, layers per group, bytes per block and
/// blocks one request of `max_model_len` needs.
struct PageLayout {
    paging: Paging,
    group_size: u64,
    bytes_per_block: Bytes,
    blocks_per_request: u64,
}

/// The page layout of `kv`'s attention layers: none without attention, uniform (all layers
/// in one group) without sliding layers or when page sizes differ, else vLLM V1's hybrid
/// allocator ([`hybrid_layout`]).
fn page_layout(inp: &VllmInputs, kv: &KvProfile, notes: &mut Vec<String>) -> PageLayout {
    let (bs, l) = (inp.block_size, inp.max_model_len);
    let attn = &kv.layers;
    let sliding = attn
        .iter()
        .any(|x| matches!(x.kind, KvLayerKind::Sliding { .. }));
    let uniform_page = attn
        .first()
        .is_some_and(|f| attn.iter().all(|x| x.bytes_per_token == f.bytes_per_token));
    if attn.is_empty() {
        notes.push("note_vllm_no_attention".to_string());
        PageLayout {
            paging: Paging::None,
            group_size: 0,
            bytes_per_block: Bytes::ZERO,
            blocks_per_request: 0,
        }
    } else if !sliding || !uniform_page {
        if sliding {
            // vLLM falls back to full-attention paging when page sizes cannot be unified.
            notes.push("note_vllm_sliding_as_full".to_string());
        }
        let per_block = kv.per_token_all_layers() * bs;
        PageLayout {
            paging: Paging::Uniform,
            group_size: attn.len() as u64,
            bytes_per_block: per_block,
            blocks_per_request: ceil_div(l, bs),
        }
    } else {
        hybrid_layout(inp, attn, notes)
    }
}

/// vLLM V1's hybrid layout: layers bucketed by kind (full, or each distinct window), groups
/// of equal size sharing one block pool, sliding groups holding only their window.
fn hybrid_layout(inp: &VllmInputs, attn: &[KvLayer], notes: &mut Vec<String>) -> PageLayout {
    let (bs, l) = (inp.block_size, inp.max_model_len);
    // Hybrid allocator: bucket layers by kind (full, or each distinct window).
    let mut buckets: Vec<(KvLayerKind, u64)> = Vec::new();
    for x in attn {
        match buckets.iter_mut().find(|(k, _)| *k == x.kind) {
            Some((_, c)) => *c += 1,
            None => buckets.push((x.kind, 1)),
        }
    }
    let min = buckets.iter().map(|b| b.1).min().unwrap_or(1).max(1);
    let max = buckets.iter().map(|b| b.1).max().unwrap_or(1).max(1);
    let group_size = if (max as f64) < 1.5 * min as f64 {
        max
    } else {
        min
    };
    let page = attn.first().map_or(Bytes::ZERO, |f| f.bytes_per_token) * bs;
    let mut need = 0u64;
    for (k, c) in &buckets {
        let groups = ceil_div(*c, group_size);
        let per_group = match k {
            KvLayerKind::Full => ceil_div(l, bs),
            KvLayerKind::Sliding { window } => {
                let toks = window
                    .saturating_sub(1)
                    .saturating_add(inp.max_num_batched_tokens)
                    .min(l);
                ceil_div(toks, bs).saturating_add(1)
            }
        };
        need = need.saturating_add(groups.saturating_mul(per_group));
    }
    if buckets.iter().any(|(_, c)| c % group_size != 0) {
        notes.push("note_vllm_padding_layers".to_string());
    }
    notes.push("note_vllm_hybrid".to_string());
    PageLayout {
        paging: Paging::Hybrid,
        group_size,
        bytes_per_block: page * group_size,
        blocks_per_request: need,
    }
}

/// KV-cache tokens and maximum concurrency from the block count: `blocks × block_size` and
/// `tokens / L` (uniform), `blocks / blocks_per_request` and `⌊X × L⌋` (hybrid), 0 without
/// paging.
fn tokens_and_concurrency(inp: &VllmInputs, layout: &PageLayout, blocks: u64) -> (u64, f64) {
    let (bs, l) = (inp.block_size, inp.max_model_len);
    match layout.paging {
        Paging::Uniform => {
            let t = blocks.saturating_mul(bs);
            (t, t as f64 / l as f64)
        }
        Paging::Hybrid => {
            let c = if layout.blocks_per_request == 0 {
                0.0
            } else {
                blocks as f64 / layout.blocks_per_request as f64
            };
            ((c * l as f64) as u64, c)
        }
        Paging::None => (0, 0.0),
    }
}

/// The lines vLLM logs: available memory, blocks, cache tokens, concurrency, and the refusal
/// when one request of `max_model_len` does not fit.
fn vllm_log_lines(l: u64, available: Bytes, counts: &BlockCounts, fits: bool) -> Vec<String> {
    let (blocks, tokens, conc) = (counts.blocks, counts.tokens, counts.conc);
    let mut log_lines = vec![
        format!("Available KV cache memory: {:.2} GiB", available.gib()),
        format!("# GPU blocks: {blocks}"),
        format!("GPU KV cache size: {} tokens", py_group(tokens)),
        format!(
            "Maximum concurrency for {} tokens per request: {:.2}x",
            py_group(l),
            conc
        ),
    ];
    if !fits {
        log_lines.push(format!(
            "The model's max seq len ({l}) is larger than the maximum number of tokens that can be stored in KV cache ({tokens})."
        ));
    }
    log_lines
}

/// Blocks, cache tokens and concurrency, as vLLM reports them.
struct BlockCounts {
    blocks: u64,
    tokens: u64,
    conc: f64,
}

/// The derivation of the available KV memory: the override, or `M × u − W − A − N`.
fn available_derivation(inp: &VllmInputs, available: Bytes) -> Derivation {
    let u = inp.gpu_memory_utilization;
    let src_user = |k: &str| Source::User(k.to_string());
    match inp.available_kv_override {
        Some(k) => Derivation {
            title_key: "vllm_available_kv".into(),
            formula: "KV_avail = K".into(),
            substituted: format!("{} GiB", gib_str(k)),
            result: format!("{:.2} GiB ({} B)", k.gib(), group(k.0)),
            terms: vec![Term::new(
                "K",
                "term_available_kv",
                gib_str(k),
                "GiB",
                src_user("available_kv_gib"),
            )],
            notes: vec![],
        },
        None => Derivation {
            title_key: "vllm_available_kv".into(),
            formula: "KV_avail = M × u − W − A − N".into(),
            substituted: format!(
                "{} GiB × {} − {} GiB − {} GiB − {} GiB",
                gib_str(inp.total_memory),
                u,
                gib_str(inp.weights),
                gib_str(inp.activation_peak),
                gib_str(inp.non_torch)
            ),
            result: format!("{:.2} GiB ({} B)", available.gib(), group(available.0)),
            terms: vec![
                Term::new(
                    "M",
                    "term_total_gpu_memory",
                    gib_str(inp.total_memory),
                    "GiB",
                    inp.total_source.clone(),
                ),
                Term::new(
                    "u",
                    "term_gpu_memory_utilization",
                    u.to_string(),
                    "",
                    src_user("gpu_memory_utilization"),
                ),
                Term::new(
                    "W",
                    "term_weights",
                    gib_str(inp.weights),
                    "GiB",
                    inp.weights_source.clone(),
                ),
                Term::new(
                    "A",
                    "term_activation_peak",
                    gib_str(inp.activation_peak),
                    "GiB",
                    inp.activation_source.clone(),
                ),
                Term::new(
                    "N",
                    "term_non_torch",
                    gib_str(inp.non_torch),
                    "GiB",
                    inp.non_torch_source.clone(),
                ),
            ],
            notes: vec!["note_vllm_gib".into()],
        },
    }
}

/// The derivation of the bytes per block: `block_size` times the per-token bytes of one
/// group (hybrid) or of all attention layers.
fn block_bytes_derivation(inp: &VllmInputs, kv: &KvProfile, layout: &PageLayout) -> Derivation {
    let bs = inp.block_size;
    let src_user = |k: &str| Source::User(k.to_string());
    let per_tok_group = if layout.paging == Paging::Hybrid {
        kv.layers.first().map_or(Bytes::ZERO, |f| f.bytes_per_token) * layout.group_size
    } else {
        kv.per_token_all_layers()
    };
    Derivation {
        title_key: "vllm_bytes_per_block".into(),
        formula: if layout.paging == Paging::Hybrid {
            "B_block = block_size × g × H_kv,rank × (d_k + d_v) × b".into()
        } else {
            "B_block = block_size × Σ_layers H_kv,rank × (d_k + d_v) × b".into()
        },
        substituted: format!("{} × {} B", bs, group(per_tok_group.0)),
        result: bytes_result(layout.bytes_per_block),
        terms: vec![
            Term::new(
                "block_size",
                "term_block_size",
                bs.to_string(),
                "tokens",
                src_user("block_size"),
            ),
            Term::new(
                "Σ",
                "term_kv_per_token_gpu",
                group(per_tok_group.0),
                "B",
                Source::Derived("kv_per_token per GPU".into()),
            ),
        ],
        notes: vec!["note_vllm_mla_latent".into()],
    }
}

/// The derivations of the block count, the cache tokens and the maximum concurrency.
fn count_derivations(
    inp: &VllmInputs,
    layout: &PageLayout,
    available: Bytes,
    counts: &BlockCounts,
) -> [Derivation; 3] {
    let (bs, l) = (inp.block_size, inp.max_model_len);
    let (blocks, tokens, conc) = (counts.blocks, counts.tokens, counts.conc);
    let hybrid = layout.paging == Paging::Hybrid;
    let d_blocks = Derivation {
        title_key: "vllm_num_gpu_blocks".into(),
        formula: "blocks = ⌊KV_avail / B_block⌋".into(),
        substituted: format!(
            "⌊{} B / {} B⌋",
            group(available.0),
            group(layout.bytes_per_block.0)
        ),
        result: format!("{} blocks", group(blocks)),
        terms: vec![],
        notes: vec![],
    };
    let d_tokens = Derivation {
        title_key: "vllm_kv_cache_tokens".into(),
        formula: if hybrid {
            "tokens = ⌊X × L⌋".into()
        } else {
            "tokens = blocks × block_size".into()
        },
        substituted: if hybrid {
            format!("⌊{conc:.4} × {}⌋", group(l))
        } else {
            format!("{} × {}", group(blocks), bs)
        },
        result: format!("{} tokens", group(tokens)),
        terms: vec![],
        notes: vec![],
    };
    let d_conc = Derivation {
        title_key: "vllm_max_concurrency".into(),
        formula: if hybrid {
            "X = blocks / Σ_groups blocks_per_request".into()
        } else {
            "X = tokens / L".into()
        },
        substituted: if hybrid {
            format!("{} / {}", group(blocks), group(layout.blocks_per_request))
        } else {
            format!("{} / {}", group(tokens), group(l))
        },
        result: format!("{conc:.2}×"),
        terms: vec![Term::new(
            "L",
            "term_max_model_len",
            group(l),
            "tokens",
            Source::User("max_model_len".to_string()),
        )],
        notes: vec![],
    };
    [d_blocks, d_tokens, d_conc]
}

/// vLLM's rule. Errors for a utilization outside (0, 1], a zero block size or a zero
/// `max_model_len`.
pub fn vllm_budget(inp: &VllmInputs, kv: &KvProfile) -> Result<VllmBudget, CalcError> {
    check_vllm_inputs(inp)?;
    let u = inp.gpu_memory_utilization;
    let l = inp.max_model_len;
    let requested = Bytes((inp.total_memory.0 as f64 * u) as u64);
    let mut notes = Vec::new();
    let available = available_kv(inp, requested, &mut notes);

    if kv.state_per_seq > Bytes::ZERO && kv.has_attention() {
        // vLLM V1 pages recurrent state alongside attention (enlarging block_size to equal page
        // sizes); that is not modelled: only the attention layers are paged here.
        notes.push("note_vllm_state_not_paged".to_string());
    }
    // Paging.
    let layout = page_layout(inp, kv, &mut notes);
    let blocks = floor_div(available, layout.bytes_per_block);
    let (tokens, conc) = tokens_and_concurrency(inp, &layout, blocks);
    let counts = BlockCounts {
        blocks,
        tokens,
        conc,
    };
    let fits = layout.paging == Paging::None || blocks >= layout.blocks_per_request;
    let log_lines = vllm_log_lines(l, available, &counts, fits);

    let d_avail = available_derivation(inp, available);
    let d_block = block_bytes_derivation(inp, kv, &layout);
    let [d_blocks, d_tokens, d_conc] = count_derivations(inp, &layout, available, &counts);
    Ok(VllmBudget {
        requested_memory: requested,
        available_kv: available,
        bytes_per_block: layout.bytes_per_block,
        num_gpu_blocks: blocks,
        kv_cache_tokens: tokens,
        max_concurrency: conc,
        fits_max_model_len: fits,
        paging: layout.paging,
        group_size: layout.group_size,
        blocks_per_request: layout.blocks_per_request,
        log_lines,
        derivations: vec![d_avail, d_block, d_blocks, d_tokens, d_conc],
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::base::units::MIB;

    // Llama-2-7b: 6,738,415,616 params × 2 B; KV/token = 2 × 32 × 32 × 128 × 2 = 524,288 B.
    const W_7B: Bytes = Bytes(6_738_415_616 * 2);
    const KV_TOK_7B: u64 = 2 * 32 * 32 * 128 * 2;

    #[test]
    fn textbook_counts_5_4_and_17_16() {
        // KV per request at 4,096 tokens: 524,288 × 4,096 = 2^31 B = 2 GiB.
        // A10G theory: (24 GiB − 12.551 GiB) / 2 GiB = 5.72 → 5.
        // A10G practice: (23,028 MiB = 22.488 GiB − 12.551 − A) / 2 = 4.97 − A/2 → 4.
        // L40S theory: (48 − 12.551) / 2 = 17.72 → 17; practice (44.988 − 12.551 − A)/2 → 16
        // for any reserve A in [0, 0.437) GiB.
        let profile = KvProfile::uniform(32, Bytes(KV_TOK_7B / 32));
        let kv = profile.per_request(4096);
        assert_eq!(kv, Bytes(2 * GIB));
        for (marketed, mib, theory, practice) in [(24, 23_028, 5, 4), (48, 46_068, 17, 16)] {
            for reserve in [Bytes(0), Bytes(GIB * 436 / 1000)] {
                let b = textbook_budget(&TextbookInputs {
                    marketed_capacity: Bytes::from_gib(marketed),
                    usable_capacity: Bytes::from_mib(mib),
                    weights: W_7B,
                    kv_per_request: kv,
                    activation_reserve: reserve,
                });
                assert_eq!((b.theoretical, b.practical), (theory, practice));
            }
        }
        // A reserve of 0.44 GiB would turn the L40S's 16 into 15: the window is real.
        let b = textbook_budget(&TextbookInputs {
            marketed_capacity: Bytes::from_gib(48),
            usable_capacity: Bytes::from_mib(46_068),
            weights: W_7B,
            kv_per_request: kv,
            activation_reserve: Bytes(GIB * 44 / 100),
        });
        assert_eq!(b.practical, 15);
    }

    #[test]
    fn vllm_uniform_blocks_tokens_concurrency() {
        // Llama-3.1-8B: 32 layers × 8 KV heads × (128 + 128) × 2 B = 131,072 B/token;
        // one block = 16 × 131,072 = 2 MiB. 3.8125 GiB / 2 MiB = 1,952 blocks;
        // tokens = 1,952 × 16 = 31,232; concurrency at 20,000 = 1.5616.
        let kv = KvProfile::uniform(32, Bytes(8 * 256 * 2));
        let inp = VllmInputs {
            total_memory: Bytes::ZERO,
            total_source: Source::User("t".into()),
            gpu_memory_utilization: 0.9,
            weights: Bytes::ZERO,
            weights_source: Source::User("w".into()),
            activation_peak: Bytes::ZERO,
            activation_source: Source::User("a".into()),
            non_torch: Bytes::ZERO,
            non_torch_source: Source::User("n".into()),
            available_kv_override: Some(Bytes(3 * GIB + 13 * GIB / 16)),
            block_size: 16,
            max_model_len: 20_000,
            max_num_batched_tokens: 2048,
        };
        let b = vllm_budget(&inp, &kv).expect("valid");
        assert_eq!(b.bytes_per_block, Bytes(2 * MIB));
        assert_eq!(b.num_gpu_blocks, 1952);
        assert_eq!(b.kv_cache_tokens, 1952 * 16);
        assert!((b.max_concurrency - 31_232.0 / 20_000.0).abs() < 1e-12);
        assert!(b
            .log_lines
            .contains(&"Maximum concurrency for 20,000 tokens per request: 1.56x".to_string()));
        assert!(b
            .log_lines
            .contains(&"GPU KV cache size: 31,232 tokens".to_string()));
    }

    #[test]
    fn vllm_hybrid_sliding_groups() {
        // 12 full + 12 sliding (window 128) layers of 2,048 B/token (gpt-oss-20b shape):
        // group size 12, page = 16 × 2,048 = 32 KiB, block id = 12 pages = 384 KiB.
        // Per request at L = 8,192 with 2,048 batched tokens: full ⌈8192/16⌉ = 512 blocks,
        // sliding ⌈min(127 + 2048, 8192)/16⌉ + 1 = 136 + 1 = 137; total 649.
        let mut kv = KvProfile::default();
        for i in 0..24 {
            kv.layers.push(KvLayer {
                kind: if i % 2 == 0 {
                    KvLayerKind::Sliding { window: 128 }
                } else {
                    KvLayerKind::Full
                },
                bytes_per_token: Bytes(2048),
            });
        }
        let inp = VllmInputs {
            total_memory: Bytes::ZERO,
            total_source: Source::User("t".into()),
            gpu_memory_utilization: 0.9,
            weights: Bytes::ZERO,
            weights_source: Source::User("w".into()),
            activation_peak: Bytes::ZERO,
            activation_source: Source::User("a".into()),
            non_torch: Bytes::ZERO,
            non_torch_source: Source::User("n".into()),
            available_kv_override: Some(Bytes::from_gib(10)),
            block_size: 16,
            max_model_len: 8192,
            max_num_batched_tokens: 2048,
        };
        let b = vllm_budget(&inp, &kv).expect("valid");
        assert_eq!(b.paging, Paging::Hybrid);
        assert_eq!(b.group_size, 12);
        assert_eq!(b.bytes_per_block, Bytes(12 * 16 * 2048));
        assert_eq!(b.num_gpu_blocks, 10 * GIB / (12 * 16 * 2048));
        assert_eq!(b.blocks_per_request, 512 + 137);
    }

    #[test]
    fn tp_checks_and_replication() {
        assert_eq!(kv_heads_per_rank(8, 2), 4);
        assert_eq!(kv_heads_per_rank(8, 16), 1);
        assert!(check_tp(32, 8, 3).is_err());
        assert!(check_tp(32, 8, 16).is_ok());
        assert!(check_tp(32, 6, 4).is_err());
        assert!(matches!(
            check_tp(32, 8, 0),
            Err(CalcError::OutOfRange { .. })
        ));
    }

    #[test]
    fn bad_utilization_is_an_error() {
        let kv = KvProfile::uniform(1, Bytes(1));
        for u in [0.0, -1.0, 1.5, f64::NAN, f64::INFINITY] {
            let inp = VllmInputs {
                total_memory: Bytes(1),
                total_source: Source::User("t".into()),
                gpu_memory_utilization: u,
                weights: Bytes::ZERO,
                weights_source: Source::User("w".into()),
                activation_peak: Bytes::ZERO,
                activation_source: Source::User("a".into()),
                non_torch: Bytes::ZERO,
                non_torch_source: Source::User("n".into()),
                available_kv_override: None,
                block_size: 16,
                max_model_len: 1,
                max_num_batched_tokens: 1,
            };
            assert!(vllm_budget(&inp, &kv).is_err());
        }
    }

    #[test]
    fn max_len_within_is_the_boundary() {
        // 1 KiB per token, 1 MiB budget → 1,024 tokens exactly.
        let p = KvProfile::uniform(1, Bytes(1024));
        assert_eq!(p.max_len_within(Bytes(MIB)), Some(1024));
    }

    #[test]
    fn what_would_fit_is_computed() {
        // Llama-2-7b fp16 (12.55 GiB) on a 12 GiB card with a 0.19 GiB reserve: nothing fits.
        // TP 2: 24 − 12.55 − 2 × 0.19 = 11.07 GiB → 5 requests of 2 GiB.
        // int8 (6.28 GiB): 12 − 6.28 − 0.19 = 5.53 → 2; int4 (3.14 GiB): 8.67 → 4.
        let p = KvProfile::uniform(32, Bytes(KV_TOK_7B / 32));
        let inp = TextbookInputs {
            marketed_capacity: Bytes::from_gib(12),
            usable_capacity: Bytes::from_gib(12),
            weights: W_7B,
            kv_per_request: p.per_request(4096),
            activation_reserve: Bytes(201_588_736),
        };
        assert_eq!(textbook_budget(&inp).practical, 0);
        let s = what_would_fit(
            &inp,
            &p,
            4096,
            &[
                (Dtype::Int8, Bytes(W_7B.0 / 2)),
                (Dtype::Int4, Bytes(W_7B.0 / 4)),
            ],
        );
        let want_tp = (24 * GIB - W_7B.0 - 2 * 201_588_736) / (2 * GIB);
        let want_i8 = (12 * GIB - W_7B.0 / 2 - 201_588_736) / (2 * GIB);
        let want_i4 = (12 * GIB - W_7B.0 / 4 - 201_588_736) / (2 * GIB);
        assert_eq!(
            s,
            vec![
                Suggestion::TensorParallel {
                    gpus: 2,
                    requests: want_tp
                },
                Suggestion::LowerPrecision {
                    dtype: Dtype::Int8,
                    weights: Bytes(W_7B.0 / 2),
                    requests: want_i8
                },
                Suggestion::LowerPrecision {
                    dtype: Dtype::Int4,
                    weights: Bytes(W_7B.0 / 4),
                    requests: want_i4
                },
            ]
        );
        // With the weights fitting but 4,096 tokens not: a shorter context is suggested.
        let inp2 = TextbookInputs {
            usable_capacity: Bytes::from_gib(14),
            ..inp
        };
        let s2 = what_would_fit(&inp2, &p, 4096, &[]);
        let budget = 14 * GIB - W_7B.0 - 201_588_736;
        assert!(s2.contains(&Suggestion::ShorterContext {
            max_tokens: budget / KV_TOK_7B
        }));
    }

    #[test]
    fn activation_estimate_llama2() {
        // Llama-2-7b, chunk 2,048, 256 rows, fp16: the widest intermediate is the gated MLP,
        // 3 × 11,008 = 33,024 (attention: (32 + 32) × 256 = 16,384). Two residual copies of
        // 4,096. A = 2,048 × (8,192 + 33,024) × 2 + 256 × 32,000 × 4 = 201,588,736 B.
        let m = crate::core::model::config::parse_model_text(include_str!(
            "../../../tests/fixtures/meta-llama__Llama-2-7b-hf.json"
        ))
        .expect("config");
        let ap = ActivationParams {
            chunk_tokens: 2048,
            logit_rows: 256,
            act: Dtype::Fp16,
            tp: 1,
        };
        let (a, d) = activation_estimate(&m, &ap).expect("estimate");
        assert_eq!(
            a,
            Bytes(2048 * (2 * 4096 + 3 * 11_008) * 2 + 256 * 32_000 * 4)
        );
        assert!(d.substituted.contains("33,024"));
        // TP 2 halves the MLP width: 3 × 5,504.
        let (a2, _) = activation_estimate(&m, &ActivationParams { tp: 2, ..ap }).expect("estimate");
        assert_eq!(
            a2,
            Bytes(2048 * (2 * 4096 + 3 * 5504) * 2 + 256 * 32_000 * 4)
        );
    }

    #[test]
    fn weights_per_gpu_replicates_kv_heads_beyond_tp() {
        // Llama-3.1-8B at TP 16 (8 KV heads): each GPU holds 1 K and 1 V head instead of 1/2:
        // extra per layer = 4,096 × (128 + 128) − 8 × 4,096 × 256 / 16 = 524,288 params.
        // Per GPU = (P − norms) / 16 + norms + 32 × 524,288, norms = 65 × 4,096.
        let m = crate::core::model::config::parse_model_text(include_str!(
            "../../../tests/fixtures/meta-llama__Meta-Llama-3.1-8B.json"
        ))
        .expect("config");
        let p = 8_030_261_248u64;
        let norms = 65 * 4096;
        let per_gpu = (p - norms) / 16 + norms + 32 * 524_288;
        let (w, _) = weights_per_gpu(&m, Bytes(2 * p), 16).expect("tp 16");
        assert_eq!(w, Bytes(2 * per_gpu));
        assert!(weights_per_gpu(&m, Bytes(2 * p), 3).is_err());
    }

    mod props {
        use super::super::*;
        use crate::core::model::quick::quick_model;
        use crate::core::model::{Ffn, Layer, Mixer};
        use proptest::prelude::*;

        fn profile() -> impl Strategy<Value = KvProfile> {
            (
                proptest::collection::vec((any::<u64>(), proptest::option::of(any::<u64>())), 0..6),
                any::<u64>(),
            )
                .prop_map(|(ls, st)| KvProfile {
                    layers: ls
                        .into_iter()
                        .map(|(b, w)| KvLayer {
                            kind: w
                                .map_or(KvLayerKind::Full, |w| KvLayerKind::Sliding { window: w }),
                            bytes_per_token: Bytes(b),
                        })
                        .collect(),
                    state_per_seq: Bytes(st),
                })
        }

        proptest! {
            #[test]
            fn memory_grows_with_batch_and_context(p in profile(), b in 0u64..1_000_000, l in 0u64..u64::MAX - 1, w in any::<u64>()) {
                prop_assert!(p.per_batch(b + 1, l) >= p.per_batch(b, l));
                prop_assert!(p.per_request(l + 1) >= p.per_request(l));
                prop_assert!(serving_memory(Bytes(w), Bytes(0), &p, b + 1, l) >= serving_memory(Bytes(w), Bytes(0), &p, b, l));
            }

            #[test]
            fn vllm_never_panics(p in profile(), t in any::<u64>(), w in any::<u64>(), a in any::<u64>(), n in any::<u64>(),
                                 u in any::<f64>(), bs in any::<u64>(), l in any::<u64>(), m in any::<u64>(), k in proptest::option::of(any::<u64>())) {
                let inp = VllmInputs {
                    total_memory: Bytes(t), total_source: Source::User("t".into()), gpu_memory_utilization: u,
                    weights: Bytes(w), weights_source: Source::User("w".into()),
                    activation_peak: Bytes(a), activation_source: Source::User("a".into()),
                    non_torch: Bytes(n), non_torch_source: Source::User("n".into()),
                    available_kv_override: k.map(Bytes), block_size: bs, max_model_len: l, max_num_batched_tokens: m,
                };
                if let Ok(b) = vllm_budget(&inp, &p) {
                    prop_assert!(b.max_concurrency.is_finite() && b.max_concurrency >= 0.0);
                    prop_assert!(b.available_kv <= b.requested_memory || k.is_some());
                }
            }

            #[test]
            fn textbook_never_panics(a in any::<u64>(), b in any::<u64>(), c in any::<u64>(), d in any::<u64>(), e in any::<u64>()) {
                let t = textbook_budget(&TextbookInputs {
                    marketed_capacity: Bytes(a), usable_capacity: Bytes(b), weights: Bytes(c),
                    kv_per_request: Bytes(d), activation_reserve: Bytes(e),
                });
                prop_assert!(t.practical <= t.theoretical || b > a);
            }

            #[test]
            fn estimates_never_panic(h in any::<u64>(), v in any::<u64>(), heads in 1u64..1_000, kvh in 0u64..1_000,
                                     d in any::<u64>(), i in any::<u64>(), tp in 0u64..64, chunk in any::<u64>(), params in any::<u64>()) {
                let mut m = quick_model(params.max(1), Dtype::Bf16);
                m.hidden_size = h;
                m.vocab_size = v;
                m.layers = vec![Layer {
                    mixer: Mixer::Attention { num_heads: heads, kv_heads: kvh, head_dim: d, v_head_dim: d, window: None },
                    ffn: Ffn::Dense { intermediate: i, gated: true },
                }];
                let ap = ActivationParams { chunk_tokens: chunk, logit_rows: 256, act: Dtype::Bf16, tp };
                let _ = activation_estimate(&m, &ap);
                let _ = KvProfile::from_model(&m, Dtype::Fp8, tp);
                let _ = weights_per_gpu(&m, Bytes(params), tp);
            }
        }
    }
}
