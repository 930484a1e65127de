//! How vLLM pages the KV memory: the page layout of each rule ([`Paging`]: uniform blocks,
//! V1's hybrid allocator for sliding windows, the Mamba rule for recurrent layers beside
//! attention, one block per request for recurrent layers only), the tokens and concurrency the
//! blocks hold, and the derivations of a block's bytes.
//!
//! **Unequal pages.** When sliding-window and full-attention layers cache different bytes per
//! token (Gemma 4: sliding layers of `head_dim` 256, full ones of `global_head_dim` 512 with
//! their own KV heads), vLLM V1 (`vllm/v1/core/kv_cache_utils.py`, read for the 0.19 line)
//! first makes the pages equal (`unify_kv_cache_spec_page_size`): the layers whose page
//! (`block_size × bytes per token`) is smaller get `block_size × largest page / their page`
//! tokens per block, so every page holds the same bytes, and it refuses (`NotImplementedError`)
//! when the largest page is not a whole multiple of a smaller one. The layers are then grouped by their spec
//! (`_get_kv_cache_groups_uniform_page_size`: kind and block size) into groups of equal size,
//! as for equal pages; a block is `group size × largest page`, and one request holds
//! `⌈L / block⌉` blocks in each full group and `⌈min(W − 1 + T, L) / block⌉ + 1` in each
//! sliding group, each with its own block (`max_memory_usage_bytes`,
//! `get_max_concurrency_for_kv_cache_config`). How the blocks become the logged cache tokens
//! and concurrency depends on the vLLM release, for every layout alike
//! ([`tokens_and_concurrency`], the rules in `vllm_version`): vLLM ≤ 0.20 logs the cache
//! tokens as `⌊blocks / groups⌋ × the smallest block_size` (a vLLM 0.19.2 log of Gemma 4
//! 26B-A4B in `tests/vllm_observations.rs` shows it), 0.21 and later
//! `⌊concurrency × max_model_len⌋`. Layers that reuse an earlier layer's cache (Gemma 3n and
//! Gemma 4's `num_kv_shared_layers`) get no cache spec in vLLM and are absent from the
//! profile (`ModelDesc::kv_layers`).

use super::helpers::ceil_div;
use super::kv_profile::{KvLayer, KvLayerKind, KvProfile};
use super::vllm_inputs::{user, VllmInputs};
use super::vllm_version::{CacheTokensRule, ConcurrencyRule, VllmLogRules};
use crate::base::derivation::bytes_text;
use crate::base::derivation::{group, Derivation, Source, Term};
use crate::base::expr::Expr;
use crate::base::units::Bytes;
use serde::{Deserialize, Serialize};

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

/// One kind of attention layer under vLLM V1's hybrid allocator when the layers' pages were
/// unified (`unify_kv_cache_spec_page_size`, module docs): its kind, its bytes per token, its
/// layers and the tokens per block vLLM gives it so that its page equals the largest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnifiedKind {
    /// Full or sliding (with its window).
    pub kind: KvLayerKind,
    /// One layer's bytes per token on one GPU.
    pub bytes_per_token: Bytes,
    /// Layers of this kind.
    pub layers: u64,
    /// Tokens per block: `block_size × largest page / this kind's page`.
    pub block_size: u64,
}

/// How the attention layers are paged: the scheme, layers per group, bytes per block and
/// blocks one request of `max_model_len` needs.
pub(super) struct PageLayout {
    pub(super) paging: Paging,
    pub(super) group_size: u64,
    pub(super) bytes_per_block: Bytes,
    pub(super) blocks_per_request: u64,
    /// Tokens per block (the user's, or raised for recurrent layers).
    pub(super) block_size: u64,
    /// Groups of attention layers and of recurrent layers ([`Paging::Mamba`]; else 0).
    pub(super) groups: (u64, u64),
    /// One recurrent layer's state before padding to the page ([`Paging::Mamba`]; else 0).
    pub(super) state_page: Bytes,
    /// The block size is the one vLLM's rule for recurrent layers chose (it logs it).
    pub(super) block_set: bool,
    /// Under the hybrid allocator with the pages unified, each kind of layer with its block
    /// size; empty otherwise (every group's block is `block_size`).
    pub(super) unified: Vec<UnifiedKind>,
    /// The KV-cache groups vLLM forms (`len(kv_cache_groups)`): 1 for one group of every
    /// layer, `Σ_kinds ⌈layers / group_size⌉` under the hybrid allocator.
    pub(super) kv_groups: u64,
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
            unified: Vec::new(),
            kv_groups: 1,
        }
    }

    /// The smallest block size among the groups, tokens: the user's (a unified layout raises
    /// only the smaller pages' blocks), or with recurrent layers `min(block_size, L)` (a state
    /// group's block is `max_model_len` tokens).
    fn smallest_block(&self, max_model_len: u64) -> u64 {
        match self.paging {
            Paging::Mamba => self.block_size.min(max_model_len),
            _ => self.block_size,
        }
    }
}

/// The page layout of `kv`'s layers: the recurrent layers alone without attention
/// ([`state_only_layout`]), none without either, attention beside recurrent layers
/// ([`mamba_layout`]), uniform (all layers in one group) without sliding layers, else vLLM V1's
/// hybrid allocator ([`hybrid_layout`]) when the pages are equal or can be unified (module
/// docs), else uniform with sliding layers paged as full attention. `state_blocks`: the blocks
/// a request holds in each recurrent group beside attention (`VllmLogRules`).
pub(super) fn page_layout(
    inp: &VllmInputs,
    kv: &KvProfile,
    state_blocks: u64,
    notes: &mut Vec<String>,
) -> PageLayout {
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
        mamba_layout(inp, kv, state_blocks, notes)
    } else if sliding && (uniform_page || (kv.state_layers.is_empty() && pages_unify(attn))) {
        hybrid_layout(inp, attn, notes)
    } else {
        if sliding {
            // Pages that cannot be unified: paged as full attention, as vLLM does with its
            // hybrid manager disabled.
            notes.push("note_vllm_sliding_as_full".to_string());
        }
        let per_block = kv.per_token_all_layers() * bs;
        let n = attn.len() as u64;
        PageLayout::plain(Paging::Uniform, n, per_block, ceil_div(l, bs), bs)
    }
}

/// Whether vLLM can make the layers' pages equal by raising the smaller ones' block size:
/// the largest bytes per token is a whole multiple of every layer's
/// (`unify_kv_cache_spec_page_size`; the block size cancels).
fn pages_unify(attn: &[KvLayer]) -> bool {
    let max = attn.iter().map(|x| x.bytes_per_token.0).max().unwrap_or(0);
    attn.iter()
        .all(|x| x.bytes_per_token.0 > 0 && max % x.bytes_per_token.0 == 0)
}

/// vLLM V1's hybrid layout: layers bucketed by kind (full, or each distinct window) and bytes
/// per token, each bucket's block raised so its page equals the largest (module docs), groups
/// of equal size sharing one block pool, sliding groups holding only their window.
fn hybrid_layout(inp: &VllmInputs, attn: &[KvLayer], notes: &mut Vec<String>) -> PageLayout {
    let (bs, l) = (inp.block_size, inp.max_model_len);
    // Hybrid allocator: bucket layers by spec (kind, and bytes per token).
    let mut buckets: Vec<(KvLayerKind, Bytes, u64)> = Vec::new();
    for x in attn {
        match buckets
            .iter_mut()
            .find(|(k, b, _)| *k == x.kind && *b == x.bytes_per_token)
        {
            Some((_, _, c)) => *c += 1,
            None => buckets.push((x.kind, x.bytes_per_token, 1)),
        }
    }
    let min = buckets.iter().map(|b| b.2).min().unwrap_or(1);
    let max = buckets.iter().map(|b| b.2).max().unwrap_or(1);
    let group_size = hybrid_group_size(min, max, 1.5);
    let largest = buckets.iter().map(|b| b.1).max().unwrap_or(Bytes::ZERO);
    // One page: the user's block of the largest layer (every other page raised to it).
    let page = largest * bs;
    let block_of = |bpt: Bytes| bs.saturating_mul(largest.0.checked_div(bpt.0).unwrap_or(1));
    let (mut need, mut kv_groups) = (0u64, 0u64);
    for (k, bpt, c) in &buckets {
        let groups = ceil_div(*c, group_size);
        kv_groups = kv_groups.saturating_add(groups);
        let block = block_of(*bpt);
        let per_group = match k {
            KvLayerKind::Full => ceil_div(l, block),
            KvLayerKind::Sliding { window } => {
                let toks = window
                    .saturating_sub(1)
                    .saturating_add(inp.max_num_batched_tokens)
                    .min(l);
                ceil_div(toks, block).saturating_add(1)
            }
        };
        need = need.saturating_add(groups.saturating_mul(per_group));
    }
    if buckets.iter().any(|(_, _, c)| c % group_size != 0) {
        notes.push("note_vllm_padding_layers".to_string());
    }
    let unified: Vec<UnifiedKind> = if buckets.iter().any(|b| b.1 != largest) {
        notes.push("note_vllm_unified_pages".to_string());
        buckets
            .iter()
            .map(|&(kind, bytes_per_token, layers)| UnifiedKind {
                kind,
                bytes_per_token,
                layers,
                block_size: block_of(bytes_per_token),
            })
            .collect()
    } else {
        Vec::new()
    };
    notes.push("note_vllm_hybrid".to_string());
    PageLayout {
        unified,
        kv_groups,
        ..PageLayout::plain(Paging::Hybrid, group_size, page * group_size, need, bs)
    }
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
/// group and `state_blocks` in each recurrent group (one, or two in vLLM 0.28's default
/// "align" mode: `vllm_version`).
fn mamba_layout(
    inp: &VllmInputs,
    kv: &KvProfile,
    state_blocks: u64,
    notes: &mut Vec<String>,
) -> PageLayout {
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
        blocks_per_request: ga
            .saturating_mul(ceil_div(l, bs))
            .saturating_add(gs.saturating_mul(state_blocks)),
        block_size: bs,
        groups: (ga, gs),
        state_page: state,
        block_set: needed >= inp.block_size,
        unified: Vec::new(),
        kv_groups: ga.saturating_add(gs),
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
        bytes_per_block: state_block_bytes(n, state),
        blocks_per_request: 1,
        block_size: inp.max_model_len,
        groups: (0, 1),
        state_page: state,
        block_set: false,
        unified: Vec::new(),
        kv_groups: 1,
    }
}

/// KV-cache tokens and maximum concurrency from the block count, as the release of `rules`
/// logs them (`vllm_version`): the concurrency `blocks / blocks_per_request`, or
/// `blocks × block_size / L` for one group of full attention before 0.9.1; the tokens
/// `⌊blocks / groups⌋ × the smallest block_size` before 0.21, `⌊X × L⌋` from 0.21; 0 without
/// paging.
pub(super) fn tokens_and_concurrency(
    inp: &VllmInputs,
    layout: &PageLayout,
    blocks: u64,
    rules: &VllmLogRules,
) -> (u64, f64) {
    let l = inp.max_model_len;
    if layout.paging == Paging::None {
        return (0, 0.0);
    }
    let per_group = blocks
        .checked_div(layout.kv_groups)
        .unwrap_or(0)
        .saturating_mul(layout.smallest_block(l));
    let conc = match (layout.paging, rules.concurrency) {
        (Paging::Uniform, ConcurrencyRule::TokensOverLength) => per_group as f64 / l as f64,
        _ if layout.blocks_per_request == 0 => 0.0,
        _ => blocks as f64 / layout.blocks_per_request as f64,
    };
    let tokens = match rules.cache_tokens {
        CacheTokensRule::BlocksPerGroup => per_group,
        // Python's `int(max_concurrency * max_model_len)`: the same f64 product, truncated.
        CacheTokensRule::ConcurrencyTimesLength => (conc * l as f64) as u64,
    };
    (tokens, conc)
}

/// The derivation of the bytes per block: `block_size` times the per-token bytes of one
/// group (hybrid: the layers of the largest page) or of all attention layers.
pub(super) fn block_bytes_derivation(kv: &KvProfile, layout: &PageLayout) -> Derivation {
    if layout.paging == Paging::Mamba && layout.groups.0 == 0 {
        return state_block_derivation(layout);
    }
    let bs = layout.block_size;
    let grouped = matches!(layout.paging, Paging::Hybrid | Paging::Mamba);
    let per_tok_group = if grouped {
        let largest = kv.layers.iter().map(|f| f.bytes_per_token).max();
        largest.unwrap_or(Bytes::ZERO) * layout.group_size
    } else {
        kv.per_token_all_layers()
    };
    let e = block_bytes_expr(bs, grouped, per_tok_group);
    // The result is the layout's block (its largest page, padded as vLLM pads it).
    Derivation {
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
        } else if !layout.unified.is_empty() {
            vec!["note_vllm_unified_pages".into()]
        } else {
            vec!["note_vllm_mla_latent".into()]
        },
        ..Derivation::of("vllm_bytes_per_block", &e)
    }
}

/// `B_block = block_size × g × H_kv,rank × (d_k + d_v) × b` (one group of `g` layers) or
/// `block_size × Σ_layers …` (every attention layer), the per-token bytes `per_token` as the
/// KV profile counted them.
fn block_bytes_expr(bs: u64, grouped: bool, per_token: Bytes) -> Expr {
    // The per-token bytes' own symbols: the values line shows their product only.
    let named = |symbol: &str| Expr::sym(symbol, "", f64::NAN);
    let per_layer = Expr::mul([
        named("H_kv,rank"),
        Expr::add([named("d_k"), named("d_v")]),
        named("b"),
    ]);
    let per_token_expr = if grouped {
        Expr::mul([named("g"), per_layer])
    } else {
        Expr::Sum {
            index: Some("layers".into()),
            pattern: Box::new(per_layer),
            terms: Vec::new(),
        }
    };
    Expr::named(
        "B_block",
        Expr::mul([
            Expr::sym("block_size", bs.to_string(), bs),
            Expr::computed(
                per_token_expr,
                format!("{} B", group(per_token.0)),
                per_token.0,
            ),
        ]),
    )
}

/// The block of `n` recurrent layers of `state` bytes each, `B_block = n_layers × S_layer`.
fn state_block_expr(n: u64, state: Bytes) -> Expr {
    Expr::named(
        "B_block",
        Expr::mul([
            Expr::sym("n_layers", n.to_string(), n),
            Expr::sym("S_layer", format!("{} B", group(state.0)), state.0),
        ]),
    )
}

/// [`state_block_expr`]'s bytes, saturating as a byte count times a count does.
fn state_block_bytes(n: u64, state: Bytes) -> Bytes {
    state_block_expr(n, state)
        .exact("ovf_kv_bytes")
        .map_or(Bytes(u64::MAX), |r| Bytes(r.ceil()))
}

/// The derivation of the bytes per block of a model of recurrent layers only: every layer's
/// state, one request's worth.
fn state_block_derivation(layout: &PageLayout) -> Derivation {
    let n = layout.group_size;
    let e = state_block_expr(n, layout.state_page);
    Derivation {
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
        ..Derivation::of("vllm_bytes_per_block", &e)
    }
}
