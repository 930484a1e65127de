//! The typed model description that every calculation reads.
//!
//! Produced by the config parser (`core::config`), by a safetensors index, or by quick mode
//! (a parameter count and a precision). Fields listed here are a contract between layers:
//! add fields freely, do not rename or remove these.

use crate::base::dtype::Dtype;
use crate::base::error::Phrase;
use crate::base::units::Bytes;
use borsh::{BorshDeserialize, BorshSerialize};
use serde::{Deserialize, Serialize};

/// How the model was described.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, BorshSerialize, BorshDeserialize)]
#[serde(rename_all = "snake_case")]
pub enum ModelOrigin {
    /// A full config.json: architecture known layer by layer.
    Config,
    /// Quick mode: only a parameter count and a precision (no KV/layer information
    /// unless the user adds it).
    Quick,
    /// A model.safetensors.index.json: exact stored bytes, no architecture.
    SafetensorsIndex,
}

/// Parameter counts by component: distinct parameters (tied embeddings counted once).
#[derive(
    Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, BorshSerialize, BorshDeserialize,
)]
pub struct ParamBreakdown {
    /// Token embedding table.
    pub embeddings: u64,
    /// Learned position embeddings (GPT-2, OPT); 0 for rotary/ALiBi.
    pub position_embeddings: u64,
    /// Attention (q/k/v/o projections, biases, MLA down/up projections, sinks, q/k norms).
    pub attention: u64,
    /// Dense MLP layers (including shared experts of MoE layers).
    pub mlp: u64,
    /// Routed experts, all of them.
    pub experts: u64,
    /// MoE routers (gates) and their biases.
    pub router: u64,
    /// Norm weights and biases (per layer and final).
    pub norms: u64,
    /// Output head, 0 when tied to the embeddings.
    pub lm_head: u64,
    /// Recurrent/SSM mixers (Mamba in_proj, conv, x_proj, dt_proj, A, D, out_proj).
    pub ssm: u64,
    /// Anything else (multi-token-prediction layers, vision towers left out, …).
    pub other: u64,
    /// Sum of all of the above.
    pub total: u64,
    /// Parameters touched per token: total minus the routed experts not selected.
    pub active: u64,
    /// Elements of the decoder layers' linear weight matrices (attention projections, MLP,
    /// experts, SSM projections; no biases, norms, embeddings, lm_head or routers): the part a
    /// weight-only quantization (AWQ/GPTQ/fp8/int8/fp4) stores in low precision. Included in
    /// the components above, not added to `total`.
    #[serde(default)]
    pub linear: u64,
    /// The routed-expert part of `linear` (what gpt-oss stores in MXFP4).
    #[serde(default)]
    pub expert_linear: u64,
    /// The language model alone (decoder, embeddings, head): `total − vision − mtp`, the
    /// figure most model cards name.
    #[serde(default)]
    pub language_model: u64,
    /// Vision (and audio) towers with their projectors, in `other` and in `total`: a serving
    /// engine loads them on the GPU with the language model.
    #[serde(default)]
    pub vision: u64,
    /// Multi-token-prediction modules as the checkpoint stores them (their own embedding and
    /// head copies included), in `other` and in `total`. Serving engines skip them unless
    /// speculative decoding uses them (see [`ModelDesc::load_mtp`]).
    #[serde(default)]
    pub mtp: u64,
    /// The part of `linear` inside the MTP modules.
    #[serde(default)]
    pub mtp_linear: u64,
    /// The part of `expert_linear` inside the MTP modules.
    #[serde(default)]
    pub mtp_expert_linear: u64,
    /// Router parameters held in fp32 whatever the weights' precision: vLLM allocates them with
    /// `params_dtype=torch.float32` (or an fp32 `nn.Parameter`) and the checkpoints store them
    /// so. MiniMax's `gate` and shared-MoE `coefficient` (MiniMax-Text-01/M1, MiniMax-M2), and
    /// the per-expert `e_score_correction_bias` of DeepSeek-V2/V3, GLM-4.5, ERNIE 4.5 and
    /// MiniMax-M2. Inside `router` (inside `other` for the MTP modules' routers); serialized
    /// only when not zero.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub router_fp32: u64,
    /// The part of `router_fp32` inside the MTP modules.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub mtp_router_fp32: u64,
}

/// Whether a count is zero (for `skip_serializing_if`).
#[allow(clippy::trivially_copy_pass_by_ref)]
fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl ParamBreakdown {
    /// The breakdown's invariant, checked by the tests and the fuzz targets: the components add
    /// up to the total exactly (no wrap), and the sub-totals fit inside it (active and linear
    /// within the total, expert linear within linear). The error says which part fails.
    pub fn check_sums(&self) -> Result<(), String> {
        let parts = [
            self.embeddings,
            self.position_embeddings,
            self.attention,
            self.mlp,
            self.experts,
            self.router,
            self.norms,
            self.lm_head,
            self.ssm,
            self.other,
        ];
        let sum = parts.iter().try_fold(0u64, |a, &x| a.checked_add(x));
        if sum != Some(self.total) {
            return Err(format!(
                "components add up to {sum:?}, total is {}: {self:?}",
                self.total
            ));
        }
        if self.active > self.total
            || self.linear > self.total
            || self.expert_linear > self.linear
            || self.router_fp32 > self.router.saturating_add(self.mtp)
        {
            return Err(format!("active/linear exceed the total: {self:?}"));
        }
        Ok(())
    }

    /// The counts a serving engine loads: without the MTP modules unless `with_mtp`
    /// (`total`, `other`, `linear`, `expert_linear` reduced by their MTP parts).
    #[must_use]
    pub fn loaded(&self, with_mtp: bool) -> ParamBreakdown {
        let mut p = self.clone();
        if !with_mtp && p.mtp > 0 {
            p.total = p.total.saturating_sub(p.mtp);
            p.other = p.other.saturating_sub(p.mtp);
            p.linear = p.linear.saturating_sub(p.mtp_linear);
            p.expert_linear = p.expert_linear.saturating_sub(p.mtp_expert_linear);
            p.mtp = 0;
            p.mtp_linear = 0;
            p.mtp_expert_linear = 0;
            p.router_fp32 = p.router_fp32.saturating_sub(p.mtp_router_fp32);
            p.mtp_router_fp32 = 0;
        }
        p
    }
}

/// The token mixer of one layer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, BorshSerialize, BorshDeserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Mixer {
    /// Softmax attention with a per-head KV cache (MHA, GQA, MQA), full or sliding-window.
    Attention {
        /// Query heads.
        num_heads: u64,
        /// Key/value heads (== num_heads for MHA, 1 for MQA).
        kv_heads: u64,
        /// Query/key head dimension.
        head_dim: u64,
        /// Value head dimension (usually == head_dim).
        v_head_dim: u64,
        /// Sliding-window size in tokens; `None` = full attention.
        window: Option<u64>,
    },
    /// Multi-head latent attention (DeepSeek-V2/V3): caches one latent per token per layer.
    Mla {
        /// Query heads.
        num_heads: u64,
        /// Latent rank of the compressed KV (`kv_lora_rank`).
        kv_lora_rank: u64,
        /// Query compression rank (`q_lora_rank`), `None` when q is not compressed.
        q_lora_rank: Option<u64>,
        /// Non-rotary part of the q/k head (`qk_nope_head_dim`).
        qk_nope_head_dim: u64,
        /// Rotary part of the q/k head, cached once per token (`qk_rope_head_dim`).
        qk_rope_head_dim: u64,
        /// Value head dimension (`v_head_dim`).
        v_head_dim: u64,
        /// The DeepSeek Sparse Attention indexer this layer runs (DeepSeek-V3.2, GLM-5), which
        /// caches its own key per token beside the latent; `None` without one (every other MLA
        /// model, and a GLM-5 layer that reuses the previous layer's top-k). Serialized only
        /// when present, so the JSON of every other description stays as it was.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        indexer: Option<MlaIndexer>,
    },
    /// A recurrent state-space / linear-attention mixer with a constant per-sequence state.
    Ssm {
        /// Elements of recurrent state per sequence for this layer (conv state + SSM state).
        state_elems: u64,
        /// Inner (expanded) dimension, for FLOP estimates.
        d_inner: u64,
        /// SSM state size N.
        d_state: u64,
        /// Mamba-2's grouped B/C channels in the conv state (`None` for other mixers).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        groups: Option<SsmGroups>,
    },
}

impl Mixer {
    /// The recurrent (SSM / linear-attention) part of a mixer's state per sequence, before
    /// tensor parallelism: `d_inner × d_state` for every recurrent mixer the readers build
    /// (Mamba `D·N`, Mamba-2 `H·P·N`, Gated DeltaNet `V_h·d_v·d_k`, lightning attention
    /// `heads·d·d`; 0 for LFM2's short convolution, whose state is its conv window). The rest of
    /// `state_elems` is the conv state. 0 for attention.
    pub fn recurrent_state_elems(&self) -> u64 {
        match *self {
            Mixer::Ssm {
                state_elems,
                d_inner,
                d_state,
                ..
            } => d_inner.saturating_mul(d_state).min(state_elems),
            _ => 0,
        }
    }
}

/// A DeepSeek Sparse Attention indexer (`index_n_heads` heads of `index_head_dim`): it scores
/// every cached token with its own key, cached one per token per layer beside the MLA latent.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, BorshSerialize, BorshDeserialize,
)]
pub struct MlaIndexer {
    /// Query heads (`index_n_heads`).
    pub heads: u64,
    /// Width of its query heads and of its one cached key (`index_head_dim`).
    pub head_dim: u64,
}

impl MlaIndexer {
    /// Elements of the indexer key that share one fp32 scale in vLLM's cache
    /// (`Indexer.quant_block_size`, `vllm/model_executor/models/deepseek_v2.py`).
    pub const QUANT_BLOCK: u64 = 128;

    /// Bytes vLLM caches per token for this indexer, whatever the KV cache's precision: the
    /// key in fp8 (one byte per element) and a 4-byte fp32 scale per [`Self::QUANT_BLOCK`]
    /// elements, `d_i + ⌊d_i / 128⌋ × 4` (`DeepseekV32IndexerCache`, an `MLAAttentionSpec` of
    /// one head of that many `uint8`; 132 B for DeepSeek-V3.2's and GLM-5's 128).
    pub fn cache_bytes_per_token(&self) -> u64 {
        self.head_dim
            .saturating_add(self.head_dim / Self::QUANT_BLOCK * 4)
    }
}

/// The `n_groups` groups of a Mamba-2 mixer's B and C channels, which sit in its conv state.
/// vLLM keeps every group a head needs on that head's GPU: when the tensor-parallel degree
/// does not divide `n_groups`, it pads them to the degree (`calc::tp::group_padding`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, BorshSerialize, BorshDeserialize,
)]
pub struct SsmGroups {
    /// `n_groups`.
    pub groups: u64,
    /// Conv-state elements of one group: `(conv_kernel − 1) × 2 × state_size`.
    pub conv_elems: u64,
    /// Linear weights of one group: its B and C rows of `in_proj`, `2 × state_size × h`.
    pub linear_elems: u64,
    /// Other weights of one group: its rows of the conv1d weight and of the biases,
    /// `2 × state_size × (conv_kernel + conv bias + in_proj bias)`.
    pub other_elems: u64,
}

/// The feed-forward block of one layer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, BorshSerialize, BorshDeserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Ffn {
    /// A dense MLP.
    Dense {
        /// Intermediate size.
        intermediate: u64,
        /// Gated (SwiGLU/GeGLU: 3 matrices) or plain (2 matrices).
        gated: bool,
    },
    /// A mixture of experts.
    Moe {
        /// Routed experts.
        experts: u64,
        /// Experts selected per token.
        top_k: u64,
        /// Intermediate size of each routed expert.
        expert_intermediate: u64,
        /// Shared (always active) experts.
        shared_experts: u64,
        /// Intermediate size of each shared expert.
        shared_intermediate: u64,
        /// Gated experts (3 matrices each).
        gated: bool,
        /// The width the routed experts work at when it is not the model's (a latent MoE:
        /// Nemotron 3 Super projects `h → L` before them and `L → h` after, with two linear
        /// layers vLLM holds whole on every GPU); `None`: `hidden_size`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        latent: Option<u64>,
    },
    /// No feed-forward block (pure Mamba layers, nemotron_h attention-only layers).
    None,
}

/// One decoder layer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, BorshSerialize, BorshDeserialize)]
pub struct Layer {
    /// Token mixer.
    pub mixer: Mixer,
    /// Feed-forward block.
    pub ffn: Ffn,
}

/// Where a field's value came from, for the assumption ledger.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, BorshSerialize, BorshDeserialize)]
#[serde(tag = "kind", content = "detail", rename_all = "snake_case")]
pub enum LedgerSource {
    /// Read from this config key (the spelling actually present).
    Key(String),
    /// Not in the config: this default was applied (why; serialized in English).
    Default(Phrase),
    /// Computed from other fields (how; serialized in English).
    Derived(Phrase),
    /// Not in the config: the default of its transformers configuration class ("default of
    /// Gemma3TextConfig (transformers 5.24.0)"; serialized in English).
    ClassDefault(Phrase),
}

/// One line of the assumption ledger.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, BorshSerialize, BorshDeserialize)]
pub struct LedgerEntry {
    /// The model field (`hidden_size`, `head_dim`, `kv_heads`, `tie_word_embeddings`, …).
    pub field: String,
    /// The value used, as text.
    pub value: String,
    /// Where it came from.
    pub source: LedgerSource,
}

/// How weights are stored (from `torch_dtype`/`dtype` and `quantization_config`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, BorshSerialize, BorshDeserialize)]
pub struct WeightFormat {
    /// Element precision of the quantized (or plain) weights.
    pub dtype: Dtype,
    /// Group size for per-group scales (int4 AWQ/GPTQ 128, MXFP4 32, NVFP4 16); `None` = no scales.
    pub group_size: Option<u64>,
    /// Bits per scale (16 for fp16 scales, 8 for e8m0/fp8 scales).
    pub scale_bits: u64,
    /// Whether a zero point per group is stored too (asymmetric int4).
    pub zero_point: bool,
    /// Name of the method (`awq`, `gptq`, `fp8`, `mxfp4`, `bitsandbytes`, …) or `none`.
    pub method: String,
    /// Whether only the MoE experts are quantized (gpt-oss MXFP4); others stay in `base`.
    pub experts_only: bool,
    /// Precision of the parts that are not quantized (`torch_dtype`).
    pub base: Dtype,
}

impl WeightFormat {
    /// A plain (unquantized) format: every parameter in `d`.
    pub fn plain(d: Dtype) -> WeightFormat {
        WeightFormat {
            dtype: d,
            group_size: None,
            scale_bits: 0,
            zero_point: false,
            method: "none".into(),
            experts_only: false,
            base: d,
        }
    }

    /// Bytes per stored element of the quantized (or plain) tensors, per-group scales and zero
    /// points included: `(bits + (s + z) / g) / 8` (`calc::weights::quantized_bytes` counts the
    /// same exactly, rounded up per tensor). This is the size of one linear-layer weight; the
    /// checkpoint's average over all parameters (unquantized embeddings and norms included) is
    /// `weights ÷ params`, which the teaching texts use for a whole-model pass.
    pub fn bytes_per_element(&self) -> f64 {
        let mut bits = self.dtype.bits() as f64;
        if let Some(g) = self.group_size.filter(|g| *g > 0) {
            bits += self.scale_bits as f64 / g as f64;
            if self.zero_point {
                bits += self.dtype.bits() as f64 / g as f64;
            }
        }
        bits / 8.0
    }
}

/// A model, described precisely enough to size and time it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, BorshSerialize, BorshDeserialize)]
pub struct ModelDesc {
    /// Display name (`_name_or_path`, or derived). Untrusted text: render as text only.
    pub name: String,
    /// `model_type` as given (lowercase), or `quick` / `safetensors_index`.
    pub model_type: String,
    /// How it was described.
    pub origin: ModelOrigin,
    /// Hidden size (0 when unknown, e.g. quick mode).
    pub hidden_size: u64,
    /// Vocabulary size (0 when unknown).
    pub vocab_size: u64,
    /// The decoder layers, in order (empty when unknown).
    pub layers: Vec<Layer>,
    /// Whether the output head shares the embedding matrix.
    pub tie_word_embeddings: bool,
    /// Context length the model supports, if stated.
    pub max_position_embeddings: Option<u64>,
    /// The `max_model_len` vLLM derives from the config when `--max-model-len` is not given,
    /// where its rules give another figure than [`ModelDesc::max_position_embeddings`] (the
    /// smallest of its length keys, `model_max_length`, RoPE scaling: [`EngineMaxLen`]).
    /// Serialized only when present, so the JSON of every other description stays as it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine_max_len: Option<EngineMaxLen>,
    /// Exact parameter counts.
    pub params: ParamBreakdown,
    /// The checkpoint's own storage format.
    pub weights: WeightFormat,
    /// Exact stored bytes when known (safetensors index `metadata.total_size`).
    pub exact_weight_bytes: Option<Bytes>,
    /// The assumption ledger.
    pub ledger: Vec<LedgerEntry>,
    /// Warnings for the user (unknown model_type read as generic, …), in either language;
    /// serialized as the English sentences.
    pub warnings: Vec<Phrase>,
    /// Whether the serving engine loads the multi-token-prediction modules (speculative
    /// decoding with MTP). vLLM skips them otherwise, so weights memory leaves them out unless
    /// the scenario (`mtp=1`, `--include-mtp`) sets this.
    #[serde(default)]
    pub load_mtp: bool,
    /// The decoder layers of the multi-token-prediction modules (one per module: DeepSeek-V3's
    /// MLA + MoE layer, GLM-4.5's and Qwen3-Next's full-attention MoE layer), apart from
    /// [`ModelDesc::layers`]: their weights are in [`ParamBreakdown::mtp`]. With
    /// [`ModelDesc::load_mtp`] vLLM also gives their attention a KV cache (the drafter's
    /// attention layers join the KV cache config beside the target's:
    /// `vllm/v1/spec_decode/eagle.py` `EagleProposer.load_model`, `draft_attn_layer_names`;
    /// `DeepSeekMTP` / `Qwen3NextMTP` build `num_nextn_predict_layers` layers), so
    /// [`ModelDesc::kv_layers`] counts them then. Not serialized: the JSON of a description
    /// stays as it was (the counts are in `params.mtp`), and no layer reads a description back.
    #[serde(default, skip_serializing)]
    pub mtp_layers: Vec<Layer>,
    /// Indices (into [`ModelDesc::layers`]) of the layers that reuse the KV cache of an earlier
    /// layer instead of keeping their own: Gemma 3n's last `num_kv_shared_layers` layers read
    /// the cache of the last earlier layer of their attention type (transformers
    /// `Gemma3nTextConfig.kv_sharing_modes`; vLLM gives them `kv_sharing_target_layer_name` and
    /// allocates them no KV blocks). [`ModelDesc::kv_layers`] leaves them out; they still
    /// attend (and read that cache) in [`ModelDesc::layers`]. Serialized only when not empty, so
    /// the JSON of every other description stays as it was.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kv_shared: Vec<usize>,
    /// The precision the serving engine keeps the recurrent (SSM / linear-attention) state in,
    /// when the config names one: Qwen3.5's `mamba_ssm_dtype` (vLLM's
    /// `Qwen3_5ForConditionalGenerationConfig` sets `mamba_ssm_cache_dtype` from it) and
    /// Nemotron-H's `mamba_ssm_cache_dtype` (read by vLLM's `NemotronHForCausalLMConfig` since
    /// 0.14). `None`: the model's precision (vLLM's `auto`). The conv state stays in the
    /// model's precision either way ([`crate::calc::kv::state_bytes`]). Serialized only
    /// when set, so the JSON of every other description stays as it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ssm_state_dtype: Option<Dtype>,
}

/// How vLLM's default `max_model_len` comes from a config (`_get_and_verify_max_len`, vLLM
/// 0.12.0), where it is not [`ModelDesc::max_position_embeddings`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, BorshSerialize, BorshDeserialize)]
#[serde(tag = "rule", rename_all = "snake_case")]
pub enum MaxLenRule {
    /// The smallest of vLLM's length keys is `key` (ChatGLM's `seq_length` below
    /// `max_position_embeddings`, a key the calculator does not read, …).
    SmallestKey {
        /// The key.
        key: String,
    },
    /// `model_max_length`, which vLLM takes over every other length key (Command-R).
    ModelMaxLength,
    /// The length of `key` (`base`) times the RoPE scaling `factor` of `rope_type` (`linear`,
    /// `dynamic`, …).
    RopeFactor {
        /// The length key.
        key: String,
        /// Its length.
        base: u64,
        /// `rope_scaling.factor`.
        factor: f64,
        /// `rope_scaling.rope_type` (or the legacy `type`).
        rope_type: String,
    },
    /// YaRN: `original_max_position_embeddings` times the scaling `factor`.
    Yarn {
        /// `original_max_position_embeddings`.
        original: u64,
        /// `rope_scaling.factor`.
        factor: f64,
    },
    /// LongRoPE: vLLM starts with `original_max_position_embeddings` (from 0.12).
    LongRope {
        /// `original_max_position_embeddings`.
        original: u64,
    },
}

impl MaxLenRule {
    /// The rule as a phrase (the ledger's reason, the simulator's note).
    pub fn phrase(&self) -> Phrase {
        match self {
            MaxLenRule::SmallestKey { key } => {
                Phrase::tr("ldg_vllm_len_smallest_key").val("key", key)
            }
            MaxLenRule::ModelMaxLength => Phrase::tr("ldg_vllm_len_model_max_length"),
            MaxLenRule::RopeFactor {
                key,
                base,
                factor,
                rope_type,
            } => Phrase::tr("ldg_vllm_len_rope")
                .val("key", key)
                .val("base", base)
                .val("factor", factor)
                .val("type", rope_type),
            MaxLenRule::Yarn { original, factor } => Phrase::tr("ldg_vllm_len_yarn")
                .val("original", original)
                .val("factor", factor),
            MaxLenRule::LongRope { original } => {
                Phrase::tr("ldg_vllm_len_longrope").val("original", original)
            }
        }
    }
}

/// vLLM's default `max_model_len` for a config whose rules give another figure than
/// `max_position_embeddings` ([`ModelDesc::engine_max_len`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, BorshSerialize, BorshDeserialize)]
pub struct EngineMaxLen {
    /// The length, in tokens.
    pub tokens: u64,
    /// [`ModelDesc::max_position_embeddings`], for the sentence that compares them.
    pub positions: Option<u64>,
    /// How vLLM derives it.
    pub rule: MaxLenRule,
}

impl ModelDesc {
    /// The `max_model_len` vLLM starts with when `--max-model-len` is not given:
    /// [`ModelDesc::engine_max_len`] where vLLM's rules give another figure, else
    /// [`ModelDesc::max_position_embeddings`]; `None` when the config states no length (vLLM then
    /// assumes 2,048: `calc::memory::default_max_model_len`).
    pub fn vllm_default_max_len(&self) -> Option<u64> {
        self.engine_max_len
            .as_ref()
            .map(|e| e.tokens)
            .or(self.max_position_embeddings)
    }

    /// The parameters the serving engine loads ([`ParamBreakdown::loaded`] with
    /// [`ModelDesc::load_mtp`]).
    pub fn loaded_params(&self) -> ParamBreakdown {
        self.params.loaded(self.load_mtp)
    }

    /// The layers whose attention the serving engine caches: [`ModelDesc::layers`] except those
    /// that reuse another layer's cache ([`ModelDesc::kv_shared`]), then the MTP modules' layers
    /// when they are loaded ([`ModelDesc::load_mtp`]; speculative decoding with MTP gives them a
    /// KV cache too).
    pub fn kv_layers(&self) -> impl Iterator<Item = &Layer> {
        // The MTP layers come after `layers`, so their positions are never in `kv_shared`.
        let shared = &self.kv_shared;
        self.weight_layers()
            .enumerate()
            .filter(move |(i, _)| !shared.contains(i))
            .map(|(_, l)| l)
    }

    /// The layer count the config states (`num_hidden_layers` as the ledger records it, read or
    /// derived), else the number of described layers. They differ for hybrids whose blocks are
    /// described otherwise: Nemotron-H's MLP and MoE blocks share a described layer with the
    /// mixer before them, and Falcon-H1's parallel attention and Mamba are two.
    pub fn stated_layers(&self) -> usize {
        self.ledger
            .iter()
            .find(|e| e.field == "num_hidden_layers")
            .and_then(|e| e.value.parse().ok())
            .unwrap_or(self.layers.len())
    }

    /// The layers whose weights the serving engine loads: every layer of [`ModelDesc::layers`]
    /// (a layer that reads another layer's KV cache, [`ModelDesc::kv_shared`], still holds its
    /// own K/V projections: vLLM's Gemma 3n builds `qkv_proj` in every layer), then the MTP
    /// modules' layers when they are loaded ([`ModelDesc::load_mtp`]).
    pub fn weight_layers(&self) -> impl Iterator<Item = &Layer> {
        let mtp: &[Layer] = if self.load_mtp { &self.mtp_layers } else { &[] };
        self.layers.iter().chain(mtp)
    }

    /// The number of MTP layers the KV cache holds: `mtp_layers` when loaded, else 0.
    pub fn kv_mtp_layers(&self) -> usize {
        if self.load_mtp {
            self.mtp_layers.len()
        } else {
            0
        }
    }

    /// The lines that split `params.total` (the checkpoint's count) into the language model,
    /// the vision/audio tower and the MTP modules, saying which are in weights memory; none
    /// when the total is the language model alone.
    pub fn param_parts(&self) -> Vec<Phrase> {
        use crate::base::derivation::group;
        let p = &self.params;
        if p.vision == 0 && p.mtp == 0 {
            return Vec::new();
        }
        let line = |k: &'static str, n: u64| Phrase::tr(k).val("n", group(n));
        let mut v = vec![line("prm_language_model", p.language_model)];
        if p.vision > 0 {
            v.push(line("prm_vision", p.vision));
        }
        if p.mtp > 0 {
            let k = if self.load_mtp {
                "prm_mtp_loaded"
            } else {
                "prm_mtp_skipped"
            };
            v.push(line(k, p.mtp));
        }
        v
    }
}
