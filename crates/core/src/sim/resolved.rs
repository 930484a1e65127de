//! What the engine's knobs resolve to on one GPU ([`Resolved`], made by
//! `EngineConfig::resolve` in `sim::config`): every figure the scheduler reads, and the block
//! groups a request draws from the KV pool ([`BlockGroup`], vLLM V1's KV-cache groups).

use crate::calc::memory::{KvLayerKind, KvProfile, Paging, VllmBudget};
use crate::model::EngineMaxLen;
use crate::sim::engines::{EnginePool, Policy};
use crate::sim::spec::SpecConfig;
use serde::{Deserialize, Serialize};

/// The knobs resolved on one GPU: every figure the scheduler reads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Resolved {
    /// `max_num_seqs`.
    pub max_num_seqs: u64,
    /// `max_num_batched_tokens`.
    pub max_num_batched_tokens: u64,
    /// `block_size`.
    pub block_size: u64,
    /// `max_model_len`.
    pub max_model_len: u64,
    /// `max_model_len` is vLLM's 2,048 for a config that states no maximum length
    /// ([`default_max_model_len`](crate::calc::memory::default_max_model_len)).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub max_model_len_assumed: bool,
    /// `max_model_len` is the length vLLM derives from the config by its own rules
    /// ([`ModelDesc::engine_max_len`](crate::model::ModelDesc::engine_max_len)), not `max_position_embeddings`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_model_len_derived: Option<EngineMaxLen>,
    /// KV blocks in the pool (`# GPU blocks`); requests draw from one fewer
    /// ([`Resolved::usable_blocks`]).
    pub num_gpu_blocks: u64,
    /// The block groups one request draws from the pool (vLLM V1's KV-cache groups): one
    /// full-attention group for a uniform cache; under the hybrid allocator, one per
    /// `group_size` layers of each kind, sliding groups holding only their window.
    pub groups: Vec<BlockGroup>,
    /// Prefix-cache hit share.
    pub prefix_hit: f64,
    /// The frontend path of one request, seconds.
    #[serde(default)]
    pub frontend_overhead_s: f64,
    /// The server's serial work per prompt token, seconds (one worker, in arrival order).
    #[serde(default)]
    pub frontend_per_token_s: f64,
    /// vLLM's budget (its block count is replaced by `num_gpu_blocks_override` when given);
    /// under another engine, the same figures of that engine's pool.
    pub budget: VllmBudget,
    /// How the engine's scheduler forms a step.
    #[serde(default)]
    pub policy: Policy,
    /// SGLang's or TensorRT-LLM's pool and its terms (`None` under vLLM: its budget is
    /// `budget`).
    #[serde(default)]
    pub pool: Option<EnginePool>,
    /// Speculative decoding (`None`: off).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<SpecConfig>,
}

impl Resolved {
    /// The blocks requests can hold: the pool less vLLM's null block (`BlockPool` takes the
    /// first free block as `null_block` at start-up, and `get_usage` divides by the rest).
    pub fn usable_blocks(&self) -> u64 {
        self.num_gpu_blocks.saturating_sub(1)
    }
}

/// Block groups of one kind: `count` groups, each needing `⌈tokens / block_size⌉` blocks per
/// request (full attention) or only those of its window (sliding: `⌈(W − 1 + new) /
/// block_size⌉ + 1` at most, as vLLM's sliding-window manager keeps them), with the group's
/// own block size where vLLM raised it to unify page sizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockGroup {
    /// Groups of this kind.
    pub count: u64,
    /// Sliding window, tokens (`None` = full attention).
    pub window: Option<u64>,
    /// Recurrent layers (Mamba, short convolution, linear attention): one block per request,
    /// whatever its length ([`Paging::Mamba`]).
    #[serde(default)]
    pub state: bool,
    /// Tokens per block of these groups where vLLM made it larger than the engine's to give
    /// every page the same bytes ([`VllmBudget::unified_kinds`]); `None`: the engine's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_size: Option<u64>,
}

impl BlockGroup {
    /// Blocks one group holds for a request of `tokens` tokens, `new` of them computed in
    /// the current step, with blocks of `block_size` tokens unless the group has its own.
    pub fn blocks(&self, tokens: u64, new: u64, block_size: u64) -> u64 {
        if self.state {
            return u64::from(tokens > 0);
        }
        let block_size = self.block_size.unwrap_or(block_size);
        let all = tokens.div_ceil(block_size.max(1));
        match self.window {
            None => all,
            Some(w) => all.min(
                w.saturating_sub(1)
                    .saturating_add(new)
                    .div_ceil(block_size.max(1))
                    .saturating_add(1),
            ),
        }
    }
}

/// The groups of a cache: the hybrid allocator's buckets (by kind; with the pages unified, by
/// kind and block size, each group with its own block) split in groups of `group_size` layers;
/// beside recurrent layers, the attention groups and the state groups
/// (one block each per request); or one full group.
pub(super) fn block_groups(profile: &KvProfile, budget: &VllmBudget) -> Vec<BlockGroup> {
    let g = budget.group_size;
    if budget.paging == Paging::Mamba && g > 0 {
        return vec![
            BlockGroup {
                count: (profile.layers.len() as u64).div_ceil(g),
                window: None,
                state: false,
                block_size: None,
            },
            BlockGroup {
                count: (profile.state_layers.len() as u64).div_ceil(g),
                window: None,
                state: true,
                block_size: None,
            },
        ];
    }
    if budget.paging != Paging::Hybrid || g == 0 {
        return vec![BlockGroup {
            count: 1,
            window: None,
            state: false,
            block_size: None,
        }];
    }
    if !budget.unified_kinds.is_empty() {
        return budget
            .unified_kinds
            .iter()
            .map(|k| BlockGroup {
                count: k.layers.div_ceil(g),
                window: match k.kind {
                    KvLayerKind::Full => None,
                    KvLayerKind::Sliding { window } => Some(window),
                },
                state: false,
                block_size: (k.block_size != budget.block_size).then_some(k.block_size),
            })
            .collect();
    }
    let mut buckets: Vec<(Option<u64>, u64)> = Vec::new();
    for l in &profile.layers {
        let w = match l.kind {
            KvLayerKind::Full => None,
            KvLayerKind::Sliding { window } => Some(window),
        };
        match buckets.iter_mut().find(|(k, _)| *k == w) {
            Some((_, c)) => *c += 1,
            None => buckets.push((w, 1)),
        }
    }
    buckets
        .into_iter()
        .map(|(window, c)| BlockGroup {
            count: c.div_ceil(budget.group_size),
            window,
            state: false,
            block_size: None,
        })
        .collect()
}
