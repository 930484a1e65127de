//! vLLM's budget: the KV memory left after weights, activations and non-torch memory, paged in
//! blocks, and the lines vLLM logs.

use super::helpers::{ceil_div, floor_div, gib_str, out_of_range};
use super::kv_profile::{KvLayer, KvLayerKind, KvProfile};
use crate::core::base::derivation::bytes_text;
use crate::core::base::derivation::{group, Derivation, Source, Term};
use crate::core::base::error::{CalcError, Phrase};
use crate::core::base::units::{Bytes, GIB};
use serde::{Deserialize, Serialize};

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
    /// vLLM V1's allocator for attention beside recurrent layers (Mamba, short convolution,
    /// linear attention): the attention block grows until one page holds a layer's state,
    /// every state is padded to that page, and the layers form equal-size groups sharing one
    /// block pool, each request holding one block in every recurrent group. A model of
    /// recurrent layers only has one group of them all and blocks of `max_model_len` tokens.
    Mamba,
    /// Neither attention nor recurrent layers: no paged cache.
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
    /// Tokens per block as vLLM runs it: the user's `block_size`, or the larger one vLLM sets
    /// for a model with recurrent layers ([`Paging::Mamba`]).
    pub block_size: u64,
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

impl VllmInputs {
    /// vLLM's inputs with the KV memory given outright (`available_kv_override`, as a log's
    /// "Available KV cache memory" gives it), 16-token blocks, 2,048 tokens a step and
    /// `max_model_len`; the rest zero (the override bypasses them).
    pub fn with_available_kv(available: Bytes, max_model_len: u64) -> VllmInputs {
        let given = |s: &str| Source::User(s.into());
        VllmInputs {
            total_memory: Bytes::ZERO,
            total_source: given("total_memory"),
            gpu_memory_utilization: 0.9,
            weights: Bytes::ZERO,
            weights_source: given("weights"),
            activation_peak: Bytes::ZERO,
            activation_source: given("activation_peak"),
            non_torch: Bytes::ZERO,
            non_torch_source: given("non_torch"),
            available_kv_override: Some(available),
            block_size: 16,
            max_model_len,
            max_num_batched_tokens: 2048,
        }
    }
}

/// What vLLM V1 does at start-up with a budget: its `check_enough_kv_cache_memory` refuses to
/// start when the pool does not hold one request of `max_model_len`
/// ([`VllmBudget::fits_max_model_len`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VllmStartup {
    /// The engine starts with `num_gpu_blocks` blocks.
    Starts {
        /// The pool, blocks.
        num_gpu_blocks: u64,
    },
    /// The engine refuses to start: the pool holds `num_gpu_blocks` blocks where one request
    /// of `max_model_len` needs `needed`.
    Refuses {
        /// The pool, blocks.
        num_gpu_blocks: u64,
        /// Blocks of one request of `max_model_len` (vLLM's minimum).
        needed: u64,
    },
}

impl VllmBudget {
    /// What vLLM V1 does at start-up with this budget ([`VllmStartup`]).
    pub fn startup(&self) -> VllmStartup {
        if self.fits_max_model_len {
            VllmStartup::Starts {
                num_gpu_blocks: self.num_gpu_blocks,
            }
        } else {
            VllmStartup::Refuses {
                num_gpu_blocks: self.num_gpu_blocks,
                needed: self.blocks_per_request,
            }
        }
    }

    /// The fewest blocks a server **known to have started** on these inputs can have had: the
    /// budget's, or vLLM's start-up minimum (one request of `max_model_len`) where the budget
    /// falls below it. A server that started passed `check_enough_kv_cache_memory`, so where
    /// this budget says it would have refused, the inputs differ from the deployment's (more
    /// memory, other flags) and the minimum is the smallest pool consistent with its having
    /// started: for a published benchmark that ran, not for a deployment being planned (there
    /// the refusal is the answer).
    pub fn blocks_if_started(&self) -> u64 {
        match self.startup() {
            VllmStartup::Starts { num_gpu_blocks } => num_gpu_blocks,
            VllmStartup::Refuses { needed, .. } => needed,
        }
    }
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
    /// Tokens per block (the user's, or raised for recurrent layers).
    block_size: u64,
    /// Groups of attention layers and of recurrent layers ([`Paging::Mamba`]; else 0).
    groups: (u64, u64),
    /// One recurrent layer's state before padding to the page ([`Paging::Mamba`]; else 0).
    state_page: Bytes,
    /// The block size is the one vLLM's rule for recurrent layers chose (it logs it).
    block_set: bool,
}

impl PageLayout {
    /// A layout of one block size without recurrent groups.
    fn plain(
        paging: Paging,
        group_size: u64,
        bytes_per_block: Bytes,
        per_req: u64,
        bs: u64,
    ) -> Self {
        PageLayout {
            paging,
            group_size,
            bytes_per_block,
            blocks_per_request: per_req,
            block_size: bs,
            groups: (0, 0),
            state_page: Bytes::ZERO,
            block_set: false,
        }
    }
}

/// The page layout of `kv`'s layers: the recurrent layers alone without attention
/// ([`state_only_layout`]), none without either, attention beside recurrent layers
/// ([`mamba_layout`]), uniform (all layers in one group) without sliding layers or when page
/// sizes differ, else vLLM V1's hybrid allocator ([`hybrid_layout`]).
fn page_layout(inp: &VllmInputs, kv: &KvProfile, notes: &mut Vec<String>) -> PageLayout {
    let (bs, l) = (inp.block_size, inp.max_model_len);
    let attn = &kv.layers;
    let sliding = attn
        .iter()
        .any(|x| matches!(x.kind, KvLayerKind::Sliding { .. }));
    let uniform_page = attn
        .first()
        .is_some_and(|f| attn.iter().all(|x| x.bytes_per_token == f.bytes_per_token));
    if attn.is_empty() && !kv.state_layers.is_empty() {
        state_only_layout(inp, kv, notes)
    } else if attn.is_empty() {
        notes.push("note_vllm_no_attention".to_string());
        PageLayout::plain(Paging::None, 0, Bytes::ZERO, 0, bs)
    } else if !kv.state_layers.is_empty() && !sliding && uniform_page {
        mamba_layout(inp, kv, notes)
    } else if !sliding || !uniform_page {
        if sliding {
            // vLLM falls back to full-attention paging when page sizes cannot be unified.
            notes.push("note_vllm_sliding_as_full".to_string());
        }
        let per_block = kv.per_token_all_layers() * bs;
        let n = attn.len() as u64;
        PageLayout::plain(Paging::Uniform, n, per_block, ceil_div(l, bs), bs)
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
    let min = buckets.iter().map(|b| b.1).min().unwrap_or(1);
    let max = buckets.iter().map(|b| b.1).max().unwrap_or(1);
    let group_size = hybrid_group_size(min, max, 1.5);
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
    PageLayout::plain(Paging::Hybrid, group_size, page * group_size, need, bs)
}

/// The layers per group of vLLM V1's hybrid allocator for buckets of `min` and `max` layers:
/// the larger when it is under `ratio` times the smaller (the rest padded), else the smaller.
fn hybrid_group_size(min: u64, max: u64, ratio: f64) -> u64 {
    let (min, max) = (min.max(1), max.max(1));
    if (max as f64) < ratio * min as f64 {
        max
    } else {
        min
    }
}

/// The alignment, tokens, of the attention block size vLLM sets beside recurrent layers (the
/// attention kernels' block alignment; 16 in the logs of `tests/vllm_observations.rs`).
pub const MAMBA_BLOCK_ALIGN: u64 = 16;

/// vLLM V1's layout for attention beside recurrent layers ([`Paging::Mamba`]): the block
/// size raised to `max(block_size, 16·⌈S / (16·a)⌉)` (`a` one attention layer's bytes per
/// token, `S` one recurrent layer's state), each state padded to the page `block × a`, the
/// layers in groups of equal size; one request holds `⌈L / block⌉` blocks in each attention
/// group and one in each recurrent group.
fn mamba_layout(inp: &VllmInputs, kv: &KvProfile, notes: &mut Vec<String>) -> PageLayout {
    let l = inp.max_model_len;
    let a = kv.layers.first().map_or(0, |f| f.bytes_per_token.0).max(1);
    let state = kv.state_layers.iter().copied().max().unwrap_or(Bytes::ZERO);
    let align = MAMBA_BLOCK_ALIGN;
    let needed = align.saturating_mul(ceil_div(state.0, align.saturating_mul(a)));
    let bs = inp.block_size.max(needed).max(1);
    let page = Bytes(bs.saturating_mul(a));
    let (n_attn, n_state) = (kv.layers.len() as u64, kv.state_layers.len() as u64);
    // vLLM 0.12+ takes the larger under 1.25 times the smaller (0.10 and 0.11 always the
    // smaller; the sliding-window buckets above keep 1.5).
    let g = hybrid_group_size(n_attn.min(n_state), n_attn.max(n_state), 1.25);
    let (ga, gs) = (ceil_div(n_attn, g), ceil_div(n_state, g));
    if n_attn % g != 0 || n_state % g != 0 {
        notes.push("note_vllm_padding_layers".to_string());
    }
    notes.push("note_vllm_mamba_paged".to_string());
    PageLayout {
        paging: Paging::Mamba,
        group_size: g,
        bytes_per_block: page * g,
        blocks_per_request: ga.saturating_mul(ceil_div(l, bs)).saturating_add(gs),
        block_size: bs,
        groups: (ga, gs),
        state_page: state,
        block_set: needed >= inp.block_size,
    }
}

/// vLLM V1's layout for a model of recurrent layers only (Mamba, Mamba-2, FalconMamba: its
/// `IsAttentionFree` classes, which the hybrid rule above never sees): every layer in one
/// group, the block as long as `max_model_len` so that one block holds a request's whole state,
/// the page the state itself (no padding); one block per request, whatever its length. vLLM
/// 0.10.2–0.14.0 (`get_kv_cache_spec` / `MambaModelConfig`, `get_num_blocks`,
/// `get_max_concurrency_for_kv_cache_config`). The layers of these models all keep the same
/// state; were they to differ, the largest is taken (an upper bound on the block).
fn state_only_layout(inp: &VllmInputs, kv: &KvProfile, notes: &mut Vec<String>) -> PageLayout {
    let n = kv.state_layers.len() as u64;
    let state = kv.state_layers.iter().copied().max().unwrap_or(Bytes::ZERO);
    notes.push("note_vllm_state_only_paged".to_string());
    PageLayout {
        paging: Paging::Mamba,
        group_size: n,
        bytes_per_block: state * n,
        blocks_per_request: 1,
        block_size: inp.max_model_len,
        groups: (0, 1),
        state_page: state,
        block_set: false,
    }
}

/// KV-cache tokens and maximum concurrency from the block count: `blocks × block_size` and
/// `tokens / L` (uniform), `blocks / blocks_per_request` and `⌊X × L⌋` (hybrid), 0 without
/// paging.
fn tokens_and_concurrency(inp: &VllmInputs, layout: &PageLayout, blocks: u64) -> (u64, f64) {
    let (bs, l) = (layout.block_size, inp.max_model_len);
    match layout.paging {
        // vLLM ≤ 0.19 logs `num_blocks // len(kv_cache_groups) × block_size`.
        // (a state group's block size is `max_model_len`, hence `min(block_size, L)`).
        Paging::Mamba => {
            let g = layout.groups.0 + layout.groups.1;
            let c = blocks as f64 / layout.blocks_per_request.max(1) as f64;
            let per = bs.min(l);
            (blocks.checked_div(g).unwrap_or(0).saturating_mul(per), c)
        }
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

/// The lines vLLM logs when it sizes the attention block for recurrent layers: the block
/// size it sets (when the rule chose it) and the padding of the state to the page.
fn mamba_log_lines(layout: &PageLayout) -> Vec<String> {
    let mut out = Vec::new();
    if layout.paging != Paging::Mamba {
        return out;
    }
    let bs = layout.block_size;
    if layout.block_set {
        out.push(format!(
            "Setting attention block size to {bs} tokens to ensure that attention page size is >= mamba page size."
        ));
    }
    let page = layout.bytes_per_block.0 / layout.group_size.max(1);
    let state = layout.state_page.0;
    if state > 0 && page > state {
        let pct = 100.0 * (page - state) as f64 / state as f64;
        out.push(format!(
            "Padding mamba page size by {pct:.2}% to ensure that mamba page size and attention page size are exactly equal."
        ));
    }
    out
}

/// Blocks, cache tokens and concurrency, as vLLM reports them.
struct BlockCounts {
    blocks: u64,
    tokens: u64,
    conc: f64,
}

/// A value the user entered in field `field`.
fn user(field: &str) -> Source {
    Source::User(field.to_string())
}

/// The derivation of the available KV memory: the override, or `M × u − W − A − N`.
fn available_derivation(inp: &VllmInputs, available: Bytes) -> Derivation {
    let u = inp.gpu_memory_utilization;
    let (formula, substituted, terms, notes) = match inp.available_kv_override {
        Some(k) => (
            "KV_avail = K",
            format!("{} GiB", gib_str(k)),
            vec![Term::new(
                "K",
                "term_available_kv",
                gib_str(k),
                "GiB",
                user("available_kv_gib"),
            )],
            vec![],
        ),
        None => (
            "KV_avail = M × u − W − A − N",
            format!(
                "{} GiB × {} − {} GiB − {} GiB − {} GiB",
                gib_str(inp.total_memory),
                u,
                gib_str(inp.weights),
                gib_str(inp.activation_peak),
                gib_str(inp.non_torch)
            ),
            vec![
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
                    user("gpu_memory_utilization"),
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
            vec!["note_vllm_gib".into()],
        ),
    };
    Derivation {
        title_key: "vllm_available_kv".into(),
        formula: formula.into(),
        substituted,
        // The override is the available memory itself.
        result: format!("{:.2} GiB ({} B)", available.gib(), group(available.0)),
        terms,
        notes,
        ..Default::default()
    }
}

/// The derivation of the bytes per block: `block_size` times the per-token bytes of one
/// group (hybrid) or of all attention layers.
fn block_bytes_derivation(kv: &KvProfile, layout: &PageLayout) -> Derivation {
    if layout.paging == Paging::Mamba && layout.groups.0 == 0 {
        return state_block_derivation(layout);
    }
    let bs = layout.block_size;
    let grouped = matches!(layout.paging, Paging::Hybrid | Paging::Mamba);
    let per_tok_group = if grouped {
        kv.layers.first().map_or(Bytes::ZERO, |f| f.bytes_per_token) * layout.group_size
    } else {
        kv.per_token_all_layers()
    };
    Derivation {
        title_key: "vllm_bytes_per_block".into(),
        formula: if grouped {
            "B_block = block_size × g × H_kv,rank × (d_k + d_v) × b".into()
        } else {
            "B_block = block_size × Σ_layers H_kv,rank × (d_k + d_v) × b".into()
        },
        substituted: format!("{} × {} B", bs, group(per_tok_group.0)),
        result: bytes_text(layout.bytes_per_block, true),
        terms: vec![
            Term::new(
                "block_size",
                "term_block_size",
                bs.to_string(),
                "unit_tokens",
                if layout.block_set {
                    Source::Derived("src_vllm_mamba_block".into())
                } else {
                    user("block_size")
                },
            ),
            Term::new(
                "Σ",
                "term_kv_per_token_gpu",
                group(per_tok_group.0),
                "B",
                Source::Derived("src_kv_per_token_per_gpu".into()),
            ),
        ],
        notes: if layout.paging == Paging::Mamba {
            vec!["note_vllm_mamba_block".into()]
        } else {
            vec!["note_vllm_mla_latent".into()]
        },
        ..Default::default()
    }
}

/// The derivation of the bytes per block of a model of recurrent layers only: every layer's
/// state, one request's worth.
fn state_block_derivation(layout: &PageLayout) -> Derivation {
    let n = layout.group_size;
    Derivation {
        title_key: "vllm_bytes_per_block".into(),
        formula: "B_block = n_layers × S_layer".into(),
        substituted: format!("{} × {} B", n, group(layout.state_page.0)),
        result: bytes_text(layout.bytes_per_block, true),
        terms: vec![
            Term::new(
                "n_layers",
                "term_layers",
                n.to_string(),
                "",
                Source::Derived("src_ssm_layers".into()),
            ),
            Term::new(
                "S_layer",
                "term_state_bytes_layer_gpu",
                group(layout.state_page.0),
                "B",
                Source::Derived("src_ssm_state_per_layer".into()),
            ),
        ],
        notes: vec!["note_vllm_state_only_block".into()],
        ..Default::default()
    }
}

/// The derivations of the block count, the cache tokens and the maximum concurrency.
fn count_derivations(
    inp: &VllmInputs,
    layout: &PageLayout,
    available: Bytes,
    counts: &BlockCounts,
) -> [Derivation; 3] {
    let (bs, l) = (layout.block_size, inp.max_model_len);
    let (blocks, tokens, conc) = (counts.blocks, counts.tokens, counts.conc);
    let hybrid = matches!(layout.paging, Paging::Hybrid | Paging::Mamba);
    let mamba = layout.paging == Paging::Mamba;
    let (ga, gs) = layout.groups;
    let d_blocks = Derivation {
        result_key: "drv_n_blocks".into(),
        title_key: "vllm_num_gpu_blocks".into(),
        formula: "N_blocks = ⌊KV_avail / B_block⌋".into(),
        substituted: format!(
            "⌊{} B / {} B⌋",
            group(available.0),
            group(layout.bytes_per_block.0)
        ),
        result: group(blocks),
        terms: vec![],
        notes: vec![],
    };
    let d_tokens = Derivation {
        result_key: "drv_n_tokens".into(),
        title_key: "vllm_kv_cache_tokens".into(),
        formula: if mamba {
            "N_tok = ⌊N_blocks / G⌋ × min(block_size, L)".into()
        } else if hybrid {
            "N_tok = ⌊X × L⌋".into()
        } else {
            "N_tok = N_blocks × block_size".into()
        },
        substituted: if mamba {
            format!("⌊{} / {}⌋ × {}", group(blocks), ga + gs, bs.min(l))
        } else if hybrid {
            format!("⌊{conc:.4} × {}⌋", group(l))
        } else {
            format!("{} × {}", group(blocks), bs)
        },
        result: group(tokens),
        terms: vec![],
        notes: vec![],
    };
    let d_conc = Derivation {
        title_key: "vllm_max_concurrency".into(),
        formula: if hybrid {
            "X = N_blocks / Σ_groups blocks_per_request".into()
        } else {
            "X = N_tok / L".into()
        },
        substituted: if mamba && ga == 0 {
            format!("{} / {gs}", group(blocks))
        } else if mamba {
            format!("{} / ({ga} × ⌈{} / {bs}⌉ + {gs})", group(blocks), group(l))
        } else if hybrid {
            format!("{} / {}", group(blocks), group(layout.blocks_per_request))
        } else {
            format!("{} / {}", group(tokens), group(l))
        },
        result: format!("{conc:.2}×"),
        terms: vec![Term::new(
            "L",
            "term_max_model_len",
            group(l),
            "unit_tokens",
            user("max_model_len"),
        )],
        notes: vec![],
        ..Default::default()
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

    // Paging.
    let layout = page_layout(inp, kv, &mut notes);
    if kv.state_per_seq > Bytes::ZERO && kv.has_attention() && layout.paging != Paging::Mamba {
        // Recurrent state beside sliding-window layers: not paged here, only attention is.
        notes.push("note_vllm_state_not_paged".to_string());
    }
    let blocks = floor_div(available, layout.bytes_per_block);
    let (tokens, conc) = tokens_and_concurrency(inp, &layout, blocks);
    let counts = BlockCounts {
        blocks,
        tokens,
        conc,
    };
    let fits = layout.paging == Paging::None || blocks >= layout.blocks_per_request;
    let mut log_lines = mamba_log_lines(&layout);
    log_lines.extend(vllm_log_lines(l, available, &counts, fits));

    let d_avail = available_derivation(inp, available);
    let d_block = block_bytes_derivation(kv, &layout);
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
        block_size: layout.block_size,
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

    /// vLLM's inputs with the KV memory given outright, 16-token blocks, `max_model_len`
    /// 20,000: the tests change what they vary.
    fn inputs_with_kv(available: Bytes) -> VllmInputs {
        VllmInputs::with_available_kv(available, 20_000)
    }

    #[test]
    fn vllm_uniform_blocks_tokens_concurrency() {
        // Llama-3.1-8B: 32 layers × 8 KV heads × (128 + 128) × 2 B = 131,072 B/token;
        // one block = 16 × 131,072 = 2 MiB. 3.8125 GiB / 2 MiB = 1,952 blocks;
        // tokens = 1,952 × 16 = 31,232; concurrency at 20,000 = 1.5616.
        let kv = KvProfile::uniform(32, Bytes(8 * 256 * 2));
        let inp = inputs_with_kv(Bytes(3 * GIB + 13 * GIB / 16));
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

    /// A KV pool given outright derives as itself (`KV_avail = K`, the user's figure, no
    /// GiB note); without it, `M × u − W − A − N` with the GiB note. Both results show the
    /// budget's own `available_kv`.
    #[test]
    fn available_derivation_of_override_and_of_memory() {
        let kv = KvProfile::uniform(1, Bytes(1));
        let given = vllm_budget(&inputs_with_kv(Bytes(3 * GIB)), &kv).expect("valid");
        let mut inp = inputs_with_kv(Bytes::ZERO);
        (inp.available_kv_override, inp.total_memory) = (None, Bytes::from_gib(80));
        let derived = vllm_budget(&inp, &kv).expect("valid");
        for (b, formula, source, notes) in [
            (&given, "KV_avail = K", user("available_kv_gib"), 0),
            (
                &derived,
                "KV_avail = M × u − W − A − N",
                Source::User("total_memory".into()),
                1,
            ),
        ] {
            let d = &b.derivations[0];
            assert_eq!(d.title_key, "vllm_available_kv");
            assert_eq!(d.formula, formula);
            assert_eq!(d.terms[0].source, source);
            assert_eq!(d.notes.len(), notes);
            let gib = format!("{:.2} GiB", b.available_kv.gib());
            assert!(d.result.starts_with(&gib), "{} vs {gib}", d.result);
        }
        assert_eq!(given.available_kv, Bytes(3 * GIB));
    }

    /// vLLM starts when one request of `max_model_len` fits, else refuses; a server known to
    /// have started had at least that request's blocks.
    #[test]
    fn startup_refuses_below_one_request_and_the_floor_is_that_request() {
        // 2 MiB blocks (as above); 20,000 tokens need ⌈20,000 / 16⌉ = 1,250 blocks.
        let kv = KvProfile::uniform(32, Bytes(8 * 256 * 2));
        let budget_of = |blocks: u64| {
            vllm_budget(&inputs_with_kv(Bytes(blocks * 2 * MIB)), &kv).expect("valid")
        };
        for (blocks, starts) in [(1249, false), (1250, true), (3000, true)] {
            let b = budget_of(blocks);
            assert_eq!(b.num_gpu_blocks, blocks);
            let want = if starts {
                VllmStartup::Starts {
                    num_gpu_blocks: blocks,
                }
            } else {
                VllmStartup::Refuses {
                    num_gpu_blocks: blocks,
                    needed: 1250,
                }
            };
            assert_eq!(b.startup(), want, "{blocks} blocks");
            assert_eq!(b.blocks_if_started(), blocks.max(1250), "{blocks} blocks");
        }
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
            max_model_len: 8192,
            ..inputs_with_kv(Bytes::from_gib(10))
        };
        let b = vllm_budget(&inp, &kv).expect("valid");
        assert_eq!(b.paging, Paging::Hybrid);
        assert_eq!(b.group_size, 12);
        assert_eq!(b.bytes_per_block, Bytes(12 * 16 * 2048));
        assert_eq!(b.num_gpu_blocks, 10 * GIB / (12 * 16 * 2048));
        assert_eq!(b.blocks_per_request, 512 + 137);
    }

    #[test]
    fn bad_utilization_is_an_error() {
        let kv = KvProfile::uniform(1, Bytes(1));
        for u in [0.0, -1.0, 1.5, f64::NAN, f64::INFINITY] {
            let inp = VllmInputs {
                total_memory: Bytes(1),
                gpu_memory_utilization: u,
                available_kv_override: None,
                max_model_len: 1,
                max_num_batched_tokens: 1,
                ..inputs_with_kv(Bytes::ZERO)
            };
            assert!(vllm_budget(&inp, &kv).is_err());
        }
    }
}
