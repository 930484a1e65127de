//! From pasted text to an exact [`ModelDesc`]: a Hugging Face `config.json` (many families)
//! or a `model.safetensors.index.json`.
//!
//! Parameter counts follow each family's Hugging Face modelling code (biases and norms
//! included), count distinct parameters (tied embeddings once), and use checked 64-bit
//! arithmetic: a config whose counts do not fit in `u64` gives [`CalcError::Overflow`], never a
//! wrapped number. Every derived field is recorded in the assumption ledger.
//!
//! ```
//! use llm_serving_calculator::core::model::config::parse_model_text;
//! let cfg = r#"{"model_type": "llama", "hidden_size": 4096, "intermediate_size": 11008,
//!   "num_hidden_layers": 32, "num_attention_heads": 32, "vocab_size": 32000,
//!   "tie_word_embeddings": false, "torch_dtype": "float16"}"#;
//! let m = parse_model_text(cfg).unwrap();
//! assert_eq!(m.params.total, 6_738_415_616);
//! ```

mod architecture;
mod classic;
mod decoder;
mod deepseek;
pub mod defaults;
mod gemma3n;
pub mod max_len;
mod minimax;
mod others;
mod quant;
pub mod reader;
mod ssm;
mod vision;

use crate::core::base::dtype::Dtype;
use crate::core::base::error::{shorten, CalcError, Phrase};
use crate::core::base::units::Bytes;
use crate::core::model::desc::{
    Ffn, Layer, LedgerSource, Mixer, ModelDesc, ModelOrigin, ParamBreakdown, WeightFormat,
};
use reader::Reader;
use serde_json::{Map, Value};
use vision::QwenVlLayout;

pub use quant::weight_format_from;

pub(crate) use crate::core::base::checked::{add, mul};

/// A component of [`ParamBreakdown`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Comp {
    Emb,
    Pos,
    Attn,
    Mlp,
    Experts,
    Router,
    Norms,
    LmHead,
    Ssm,
    Other,
}

/// Accumulates a [`ParamBreakdown`] with checked arithmetic.
#[derive(Debug, Default)]
pub(crate) struct Acc {
    pub b: ParamBreakdown,
    /// Parameters of routed experts that a token does not use.
    pub inactive: u64,
    /// The decoder layers of multi-token-prediction modules: an MTP module's own accumulator
    /// records its layer here, and [`add_mtp_modules`] moves them to the model's
    /// ([`ModelDesc::mtp_layers`], which the KV cache counts when MTP is loaded).
    pub mtp_layers: Vec<Layer>,
}

impl Acc {
    /// Adds `n` parameters to component `c` (not a quantizable matrix).
    pub fn add(&mut self, c: Comp, n: u64) -> Result<(), CalcError> {
        let b = &mut self.b;
        let f = match c {
            Comp::Emb => &mut b.embeddings,
            Comp::Pos => &mut b.position_embeddings,
            Comp::Attn => &mut b.attention,
            Comp::Mlp => &mut b.mlp,
            Comp::Experts => &mut b.experts,
            Comp::Router => &mut b.router,
            Comp::Norms => &mut b.norms,
            Comp::LmHead => &mut b.lm_head,
            Comp::Ssm => &mut b.ssm,
            Comp::Other => &mut b.other,
        };
        *f = add("ovf_param_count", &[*f, n])?;
        b.total = add("ovf_param_count", &[b.total, n])?;
        Ok(())
    }

    /// Adds a linear weight matrix of `n` elements (quantizable) to component `c`.
    pub fn lin(&mut self, c: Comp, n: u64) -> Result<(), CalcError> {
        self.add(c, n)?;
        self.b.linear = add("ovf_param_count", &[self.b.linear, n])?;
        if c == Comp::Experts {
            self.b.expert_linear = add("ovf_param_count", &[self.b.expert_linear, n])?;
        }
        Ok(())
    }

    /// Marks `n` of the router parameters already added as held in fp32
    /// ([`ParamBreakdown::router_fp32`]).
    pub fn router_fp32(&mut self, n: u64) -> Result<(), CalcError> {
        self.b.router_fp32 = add("ovf_param_count", &[self.b.router_fp32, n])?;
        Ok(())
    }

    /// Adds `n` norm weight vectors of width `h` (an RMSNorm is one, a LayerNorm with its bias
    /// two).
    pub fn norms(&mut self, n: u64, h: u64) -> Result<(), CalcError> {
        self.add(Comp::Norms, mul("ovf_norm_params", &[n, h])?)
    }

    /// Records `n` routed-expert parameters that a token does not touch.
    pub fn skip(&mut self, n: u64) -> Result<(), CalcError> {
        self.inactive = add("ovf_param_count", &[self.inactive, n])?;
        Ok(())
    }

    /// Adds a vision/audio tower (with its projector) of `n` parameters to `other`.
    pub fn tower(&mut self, n: u64) -> Result<(), CalcError> {
        self.add(Comp::Other, n)?;
        self.b.vision = add("ovf_param_count", &[self.b.vision, n])?;
        self.skip(n)
    }

    /// Adds multi-token-prediction modules (built in their own accumulator `m`, plus `copies`
    /// parameters of embedding/head copies) to `other`; none of it is active in the main model.
    pub fn mtp(&mut self, m: &Acc, copies: u64) -> Result<(), CalcError> {
        let n = add("ovf_mtp_params", &[m.b.total, copies])?;
        self.add(Comp::Other, n)?;
        let b = &mut self.b;
        b.mtp = add("ovf_param_count", &[b.mtp, n])?;
        b.linear = add("ovf_param_count", &[b.linear, m.b.linear])?;
        b.expert_linear = add("ovf_param_count", &[b.expert_linear, m.b.expert_linear])?;
        b.mtp_linear = add("ovf_param_count", &[b.mtp_linear, m.b.linear])?;
        b.mtp_expert_linear = add("ovf_param_count", &[b.mtp_expert_linear, m.b.expert_linear])?;
        b.router_fp32 = add("ovf_param_count", &[b.router_fp32, m.b.router_fp32])?;
        b.mtp_router_fp32 = add("ovf_param_count", &[b.mtp_router_fp32, m.b.router_fp32])?;
        self.skip(n)
    }

    /// The breakdown with `active` (the language model's, per token) and `language_model`
    /// filled in.
    pub fn finish(mut self) -> ParamBreakdown {
        self.b.active = self.b.total.saturating_sub(self.inactive);
        self.b.language_model = self
            .b
            .total
            .saturating_sub(self.b.vision)
            .saturating_sub(self.b.mtp);
        self.b
    }
}

/// Attention projections q, k, v, o (`h·H·d + h·K·d + h·K·d_v + H·d_v·h`) plus optional
/// q/k/v biases (`H·d + K·d + K·d_v`) and o bias (`h`).
#[allow(clippy::too_many_arguments)] // the eight numbers of an attention block
pub(crate) fn add_attention(
    acc: &mut Acc,
    h: u64,
    heads: u64,
    kv: u64,
    hd: u64,
    vhd: u64,
    qkv_bias: bool,
    o_bias: bool,
) -> Result<(), CalcError> {
    let w = "ovf_attention_params";
    acc.lin(Comp::Attn, mul(w, &[h, heads, hd])?)?;
    acc.lin(Comp::Attn, mul(w, &[h, kv, hd])?)?;
    acc.lin(Comp::Attn, mul(w, &[h, kv, vhd])?)?;
    acc.lin(Comp::Attn, mul(w, &[heads, vhd, h])?)?;
    if qkv_bias {
        acc.add(
            Comp::Attn,
            add(
                w,
                &[
                    mul(w, &[heads, hd])?,
                    mul(w, &[kv, hd])?,
                    mul(w, &[kv, vhd])?,
                ],
            )?,
        )?;
    }
    if o_bias {
        acc.add(Comp::Attn, h)?;
    }
    Ok(())
}

/// A dense MLP: gated `3·h·I` (gate, up, down) or plain `2·h·I`; biases `2I + h` or `I + h`.
pub(crate) fn add_mlp(
    acc: &mut Acc,
    c: Comp,
    h: u64,
    i: u64,
    gated: bool,
    bias: bool,
) -> Result<(), CalcError> {
    let w = "ovf_mlp_params";
    let mats = if gated { 3 } else { 2 };
    acc.lin(c, mul(w, &[mats, h, i])?)?;
    if bias {
        acc.add(c, add(w, &[mul(w, &[mats - 1, i])?, h])?)?;
    }
    Ok(())
}

/// A dense MLP ([`add_mlp`], into the MLP component) and its description.
pub(crate) fn add_dense_ffn(
    acc: &mut Acc,
    h: u64,
    i: u64,
    gated: bool,
    bias: bool,
) -> Result<Ffn, CalcError> {
    add_mlp(acc, Comp::Mlp, h, i, gated, bias)?;
    Ok(Ffn::Dense {
        intermediate: i,
        gated,
    })
}

/// The end of a family builder: the final norm (`final_norms` weight vectors of width `h`, see
/// [`Acc::norms`]), the embeddings and the head unless tied, and `max_position_embeddings`.
pub(crate) fn finish_parts(
    r: &mut Reader,
    layers: Vec<Layer>,
    mut acc: Acc,
    (h, vocab, tie): (u64, u64, bool),
    final_norms: u64,
) -> Result<Parts, CalcError> {
    acc.norms(final_norms, h)?;
    add_embeddings(r, &mut acc, vocab, h, tie)?;
    let max_pos = read_max_pos(r)?;
    Ok(Parts::new(layers, acc, h, vocab, tie, max_pos))
}

/// The mixer of attention with `heads` query and `kv` key/value heads of width `hd` (values
/// too) over a sliding `window` of tokens (`None`: every token).
pub(crate) fn windowed_attention(heads: u64, kv: u64, hd: u64, window: Option<u64>) -> Mixer {
    Mixer::Attention {
        num_heads: heads,
        kv_heads: kv,
        head_dim: hd,
        v_head_dim: hd,
        window,
    }
}

/// The mixer of full (not sliding-window) attention ([`windowed_attention`] without a window).
pub(crate) fn full_attention(heads: u64, kv: u64, hd: u64) -> Mixer {
    windowed_attention(heads, kv, hd, None)
}

/// Adds routed gated experts (router `E·h`, `E` experts of `3·h·I`: gate, up, down), of which a
/// token uses `top_k` (the other `(E − k)·3·h·I` are inactive), and returns the feed-forward's
/// description with `shared` = (shared experts, their width), whose parameters the caller adds.
pub(crate) fn add_routed_experts(
    acc: &mut Acc,
    h: u64,
    (experts, top_k, inter): (u64, u64, u64),
    (shared_experts, shared_intermediate): (u64, u64),
) -> Result<Ffn, CalcError> {
    acc.add(Comp::Router, mul("ovf_router_params", &[experts, h])?)?;
    let per = mul("ovf_expert_params", &[3, h, inter])?;
    acc.lin(Comp::Experts, mul("ovf_expert_params", &[experts, per])?)?;
    acc.skip(mul("ovf_expert_params", &[experts - top_k, per])?)?;
    Ok(Ffn::Moe {
        experts,
        top_k,
        expert_intermediate: inter,
        shared_experts,
        shared_intermediate,
        gated: true,
        latent: None,
    })
}

/// Whether MTP modules store their own copies of the embedding and the output head.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MtpHeads {
    /// DeepSeek-V3, GLM-4.5: each module stores `embed_tokens` and `shared_head.head`.
    OwnCopies,
    /// Qwen3-Next: the module reuses the main model's embedding and head.
    Shared,
}

/// Adds `mtp` multi-token-prediction modules to `other` as the checkpoint stores them: their
/// decoder layers (already in `m`), and per module three norms (`3h`: DeepSeek-V3's enorm,
/// hnorm, shared_head.norm; Qwen3-Next's pre_fc_norm_embedding, pre_fc_norm_hidden, norm), the
/// projection of the concatenated embedding and hidden state (`2h·h`: eh_proj / fc) and, with
/// [`MtpHeads::OwnCopies`], its own copies of the embedding and the output head (`2·V·h`); a
/// ledger entry and a warning name the main model's count beside the checkpoint's. `m` carries
/// the modules' decoder layers in [`Acc::mtp_layers`] (one per module), kept for the KV cache.
pub(crate) fn add_mtp_modules(
    r: &mut Reader,
    acc: &mut Acc,
    mut m: Acc,
    mtp: u64,
    (vocab, h): (u64, u64),
    heads: MtpHeads,
) -> Result<(), CalcError> {
    let w = "ovf_mtp_params";
    m.add(Comp::Other, mul(w, &[mtp, 3, h])?)?;
    m.add(Comp::Other, mul(w, &[mtp, 2, h, h])?)?;
    let copies = match heads {
        MtpHeads::OwnCopies => mul("ovf_stored_params", &[mtp, 2, vocab, h])?,
        MtpHeads::Shared => 0,
    };
    let main = acc.b.total;
    acc.mtp(&m, copies)?;
    acc.mtp_layers.append(&mut m.mtp_layers);
    let stored = acc.b.mtp;
    let (ldg, wrn) = match heads {
        MtpHeads::OwnCopies => ("ldg_mtp_modules_stored", "wrn_mtp_stored"),
        MtpHeads::Shared => ("ldg_mtp_modules_shared_head", "wrn_mtp_stored_shared_head"),
    };
    r.derived("mtp_parameters", stored, ldg);
    r.warnings.push(
        Phrase::tr(wrn)
            .val("mtp", mtp)
            .val("params", crate::core::base::derivation::group(stored))
            .val("main", crate::core::base::derivation::group(main))
            .val(
                "total",
                crate::core::base::derivation::group(main.saturating_add(stored)),
            ),
    );
    Ok(())
}

/// What a family builder hands back.
pub(crate) struct Parts {
    pub layers: Vec<Layer>,
    pub acc: Acc,
    pub hidden: u64,
    pub vocab: u64,
    pub tie: bool,
    pub max_pos: Option<u64>,
    /// Parameters that the checkpoint stores twice (Falcon RW saves a tied lm_head; the
    /// DeepSeek-V3 MTP layer has its own copies of the embedding and head).
    pub stored_twice: u64,
    /// Layers that reuse an earlier layer's KV cache ([`ModelDesc::kv_shared`]).
    pub kv_shared: Vec<usize>,
    /// The recurrent state's precision the config names ([`ModelDesc::ssm_state_dtype`]).
    pub ssm_state_dtype: Option<Dtype>,
}

impl Parts {
    /// The parts of a checkpoint that stores every parameter once.
    pub(crate) fn new(
        layers: Vec<Layer>,
        acc: Acc,
        hidden: u64,
        vocab: u64,
        tie: bool,
        max_pos: Option<u64>,
    ) -> Parts {
        Parts {
            layers,
            acc,
            hidden,
            vocab,
            tie,
            max_pos,
            stored_twice: 0,
            kv_shared: Vec::new(),
            ssm_state_dtype: None,
        }
    }
}

/// Counts the vision tower of a multimodal config (with its projector into the language
/// model of width `text_h`), `None` for a tower this calculator does not know.
fn vision_tower(
    r: &mut Reader,
    vc: &Map<String, Value>,
    root_type: &str,
    fam: &str,
    text_h: u64,
) -> Result<Option<u64>, CalcError> {
    let vt = type_of(vc);
    let class = defaults::nested(defaults::class_for(root_type), "vision_config")
        .or_else(|| defaults::class_for(&vt));
    Ok(match (root_type, fam, vt.as_str()) {
        (_, "gemma3", "siglip_vision_model" | "") => Some(vision::siglip(r, vc, text_h)?),
        ("qwen2_5_vl", _, _) => Some(vision::qwen_vl(r, vc, class, QwenVlLayout::Qwen25)?),
        ("qwen3_vl" | "qwen3_vl_moe", _, _) => {
            Some(vision::qwen_vl(r, vc, class, QwenVlLayout::Qwen3)?)
        }
        ("qwen3_5" | "qwen3_5_moe", _, _) => {
            Some(vision::qwen_vl(r, vc, class, QwenVlLayout::Qwen35)?)
        }
        ("mistral3", _, "pixtral" | "") => Some(vision::pixtral(r, vc, class, text_h)?),
        ("llama4", _, _) => Some(vision::llama4(r, vc, class, text_h)?),
        ("mllama", _, _) => Some(vision::mllama(r, vc, class, text_h)?),
        _ => None,
    })
}

/// Parses pasted text: a `model.safetensors.index.json` (it has `weight_map` or
/// `metadata.total_size`) or a `config.json`.
pub fn parse_model_text(text: &str) -> Result<ModelDesc, CalcError> {
    let v = crate::core::base::json::parse(text)?;
    parse_model_value(&v)
}

/// As [`parse_model_text`], from an already parsed JSON value.
pub fn parse_model_value(v: &Value) -> Result<ModelDesc, CalcError> {
    let Value::Object(root) = v else {
        return Err(CalcError::NotAnObject);
    };
    let total_size = root.get("metadata").and_then(|m| m.get("total_size"));
    if root.contains_key("weight_map") || total_size.is_some() {
        return from_index(root, total_size);
    }
    from_config(root)
}

fn from_index(
    root: &Map<String, Value>,
    total_size: Option<&Value>,
) -> Result<ModelDesc, CalcError> {
    let mut r = Reader::new(root, root);
    let exact = match total_size {
        Some(ts) => {
            // total_size may exceed MAX_DIM (it is bytes), so read it directly.
            let n = ts
                .as_u64()
                .filter(|n| *n > 0)
                .ok_or_else(|| CalcError::BadValue {
                    key: "metadata.total_size".into(),
                    found: reader::short(ts),
                    expected: Phrase::tr("exp_bytes_positive"),
                })?;
            r.note(
                "weights_bytes",
                n,
                LedgerSource::Key("metadata.total_size".into()),
            );
            Some(Bytes(n))
        }
        None => {
            r.warnings.push(Phrase::tr("wrn_index_no_total"));
            None
        }
    };
    let mut params = ParamBreakdown::default();
    if let Some(tp) = root.get("metadata").and_then(|m| m.get("total_parameters")) {
        if let Some(n) = tp.as_u64() {
            r.note(
                "params_total",
                n,
                LedgerSource::Key("metadata.total_parameters".into()),
            );
            params.total = n;
            params.active = n;
            params.other = n;
        }
    }
    let tensors = root
        .get("weight_map")
        .and_then(Value::as_object)
        .map_or(0, Map::len);
    r.derived("tensors", tensors, "ldg_entries_in_weight_map");
    r.default_note(
        "architecture",
        "unknown",
        "ldg_a_safetensors_index_lists_tensors_not_the",
    );
    Ok(ModelDesc {
        name: "model.safetensors.index.json".into(),
        model_type: "safetensors_index".into(),
        origin: ModelOrigin::SafetensorsIndex,
        hidden_size: 0,
        vocab_size: 0,
        layers: Vec::new(),
        tie_word_embeddings: false,
        max_position_embeddings: None,
        engine_max_len: None,
        params,
        weights: WeightFormat::plain(Dtype::Bf16),
        exact_weight_bytes: exact,
        ledger: r.ledger,
        warnings: r.warnings,
        load_mtp: false,
        mtp_layers: Vec::new(),
        kv_shared: Vec::new(),
        ssm_state_dtype: None,
    })
}

/// Normalizes `model_type` spellings to a family name.
fn family(mt: &str) -> &str {
    FAMILY_OF
        .iter()
        .find(|(t, _)| *t == mt)
        .map_or(mt, |(_, f)| f)
}

/// The `model_type`s read as another family's (`gemma3_text` as `gemma3`).
const FAMILY_OF: &[(&str, &str)] = &[
    ("refinedweb", "falcon"),
    ("refinedwebmodel", "falcon"),
    ("rw", "falcon"),
    ("gemma3_text", "gemma3"),
    ("gemma3n_text", "gemma3n"),
    ("llama4_text", "llama4"),
    ("phi4", "phi3"),
    ("qwen2_vl", "qwen2"),
    ("qwen2_5_vl", "qwen2"),
    ("qwen2_vl_text", "qwen2"),
    ("qwen2_5_vl_text", "qwen2"),
    ("qwen3_vl_text", "qwen3"),
    ("qwen3_vl", "qwen3"),
    ("qwen3_vl_moe_text", "qwen3_moe"),
    ("qwen3_vl_moe", "qwen3_moe"),
    ("qwen3_5_text", "qwen3_5"),
    ("qwen3_5_moe_text", "qwen3_5_moe"),
    ("olmo3", "olmo2"),
    ("granitemoeshared", "granitemoe"),
    ("kanana", "llama"),
    ("smollm", "llama"),
    ("mllama_text_model", "mllama"),
    ("minimax_text_01", "minimax"),
    ("minimax_m1", "minimax"),
];

/// A family's own builder: the reader, the family, the `model_type` as written.
type Builder = fn(&mut Reader, &str, &str) -> Result<Parts, CalcError>;

/// The families [`build_family`] reads with a builder of their own, and the builder (the rest
/// of the known ones are [`decoder::KNOWN`]). One table, so a family cannot have a builder and
/// still count as unknown, or the reverse.
const OWN_BUILDERS: &[(&str, Builder)] = &[
    ("gpt2", |r, _, _| classic::gpt2(r)),
    ("gpt_bigcode", |r, _, _| classic::gpt_bigcode(r)),
    ("opt", |r, _, _| classic::opt(r)),
    ("falcon", |r, _, mt| classic::falcon(r, mt)),
    ("gpt_neox", |r, _, _| classic::gpt_neox(r)),
    ("bloom", |r, _, _| classic::bloom(r)),
    ("phi", |r, _, _| classic::phi(r)),
    ("deepseek_v2", |r, fam, _| deepseek::build(r, fam)),
    ("deepseek_v3", |r, fam, _| deepseek::build(r, fam)),
    ("kimi_k2", |r, fam, _| deepseek::build(r, fam)),
    ("axk1", |r, fam, _| deepseek::build(r, fam)),
    ("mamba", |r, _, _| ssm::mamba(r)),
    ("mamba2", |r, _, _| ssm::mamba2_model(r)),
    ("dbrx", |r, _, _| others::dbrx(r)),
    ("gemma3n", |r, _, _| gemma3n::build(r)),
    ("granitemoehybrid", |r, _, _| ssm::granite_hybrid(r)),
    ("qwen3_next", |r, _, _| ssm::qwen3_next(r)),
    ("qwen3_5", |r, _, _| ssm::qwen3_5(r, false)),
    ("qwen3_5_moe", |r, _, _| ssm::qwen3_5(r, true)),
    ("mpt", |r, _, _| others::mpt(r)),
    ("gptj", |r, _, _| others::gptj(r)),
    ("nemotron_h", |r, _, _| ssm::nemotron_h(r)),
    ("jamba", |r, _, _| ssm::jamba(r)),
    ("falcon_h1", |r, _, _| ssm::falcon_h1(r)),
    ("bamba", |r, _, _| ssm::bamba(r)),
    ("lfm2", |r, _, _| ssm::lfm2(r)),
    ("minimax", |r, _, mt| minimax::build(r, mt)),
];

/// The builder of a family in [`OWN_BUILDERS`].
fn own_builder(fam: &str) -> Option<Builder> {
    OWN_BUILDERS
        .iter()
        .find(|(name, _)| *name == fam)
        .map(|(_, b)| *b)
}

/// Whether a `model_type` is one this calculator reads by its family (not as a generic
/// decoder).
fn known_type(mt: &str) -> bool {
    let f = family(mt);
    own_builder(f).is_some() || decoder::KNOWN.contains(&f)
}

/// Whether a `model_type` is read by its family or has a class in the defaults table (a
/// multimodal wrapper such as `mistral3`, whose language model is nested).
fn recognised(mt: &str) -> bool {
    known_type(mt) || defaults::class_for(mt).is_some()
}

/// Every recognised `model_type`: the families, the types read as another family's and the
/// classes of the defaults table (the candidates an architecture is matched against).
fn known_types() -> &'static [&'static str] {
    static TYPES: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    TYPES.get_or_init(|| {
        let mut v: Vec<&'static str> = OWN_BUILDERS.iter().map(|(name, _)| *name).collect();
        v.extend(decoder::KNOWN);
        v.extend(FAMILY_OF.iter().map(|(t, _)| *t));
        v.extend(defaults::table().iter().map(|c| c.model_type.as_str()));
        let mut known: Vec<&'static str> = Vec::new();
        for t in v {
            if recognised(t) && !known.contains(&t) {
                known.push(t);
            }
        }
        known
    })
}

/// Keys whose values must agree when both the top level and the language-model part give them.
const SHARED_KEYS: &[&str] = &[
    "hidden_size",
    "num_hidden_layers",
    "num_attention_heads",
    "num_key_value_heads",
    "intermediate_size",
    "vocab_size",
    "head_dim",
];

/// A warning naming the keys on which the top level and the nested part `part` disagree.
fn disagreements(
    r: &mut Reader,
    part: &str,
    primary: &Map<String, Value>,
    root: &Map<String, Value>,
) {
    let mut pairs = Vec::new();
    for k in SHARED_KEYS {
        if let (Some(a), Some(b)) = (primary.get(*k), root.get(*k)) {
            if !a.is_null() && !b.is_null() && a != b {
                pairs.push(Phrase::verbatim(format!(
                    "{part}.{k} = {} ≠ {k} = {}",
                    reader::short(a).text(crate::core::base::i18n::Lang::En),
                    reader::short(b).text(crate::core::base::i18n::Lang::En)
                )));
            }
        }
    }
    if !pairs.is_empty() {
        r.warnings.push(
            Phrase::tr("wrn_nested_disagree")
                .val("part", part)
                .sub("pairs", Phrase::List(pairs)),
        );
    }
}

/// The language-model part of a config and its name, if nested: `text_config` or one of its
/// generic spellings (`llm_config`, `language_config`), in the table's order.
fn text_part(root: &Map<String, Value>) -> Option<(&'static str, &Map<String, Value>)> {
    defaults::spellings("text_config")
        .find_map(|p| root.get(p).and_then(Value::as_object).map(|o| (p, o)))
}

/// The lowercase `model_type` of an object (at most 64 characters).
fn type_of(o: &Map<String, Value>) -> String {
    o.get("model_type")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_ascii_lowercase()
        .chars()
        .take(64)
        .collect()
}

fn from_config(root: &Map<String, Value>) -> Result<ModelDesc, CalcError> {
    let text = text_part(root);
    let primary = text.map_or(root, |(_, t)| t);
    let types = Types::of(root, text);
    let root_type = types.root.clone();
    let root_class = defaults::class_for(&root_type);
    let primary_class = match text {
        // The parent class names the part by its canonical key, whatever its spelling here.
        Some((_, t)) => {
            defaults::class_for(&type_of(t)).or_else(|| defaults::nested(root_class, "text_config"))
        }
        None => root_class,
    };
    let mut r = Reader::new(primary, root).with_classes(primary_class, root_class);
    if let Some((part, _)) = text {
        r.note(
            "language_model",
            part,
            LedgerSource::Derived(Phrase::tr("ldg_language_model_part").val("part", part)),
        );
        disagreements(&mut r, part, primary, root);
    }
    let mt = types.note(&mut r, text.map(|(part, _)| part));
    let fam = family(&mt).to_string();

    let parts = build_family(&mut r, &fam, &mt)?;

    let base = base_dtype(&mut r, &fam)?;
    let weights = quant::weight_format_from(&mut r, base, &fam)?;
    let name = root
        .get("_name_or_path")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(|s| s.chars().take(200).collect::<String>())
        .unwrap_or_else(|| {
            if mt.is_empty() {
                "model".into()
            } else {
                mt.clone()
            }
        });

    let mut acc = parts.acc;
    let mtp_layers = std::mem::take(&mut acc.mtp_layers);
    if root_type == "gemma3n" {
        gemma3n::towers(&mut r, &mut acc, root, parts.hidden)?;
    } else if let Some(vc) = root.get("vision_config").and_then(Value::as_object) {
        match vision_tower(&mut r, vc, &root_type, &fam, parts.hidden)? {
            Some(n) => acc.tower(n)?,
            None => r.warnings.push(Phrase::tr("wrn_vision_not_counted")),
        }
    }
    let params = acc.finish();
    if params.mtp > 0 {
        r.default_note("mtp_loaded", false, "ldg_mtp_not_loaded");
    }
    if parts.stored_twice > 0 {
        let stored = params.total.saturating_add(parts.stored_twice);
        r.derived(
            "stored_parameters",
            stored,
            "ldg_the_checkpoint_stores_some_matrices_twice_a",
        );
        r.warnings.push(
            Phrase::tr("wrn_stored_twice")
                .val(
                    "distinct",
                    crate::core::base::derivation::group(params.total),
                )
                .val("stored", crate::core::base::derivation::group(stored)),
        );
    }
    if params.experts > 0 {
        r.derived(
            "params_active",
            params.active,
            "ldg_total_minus_the_routed_experts_a_token",
        );
    }
    let max_pos = parts.max_pos;
    let engine_max_len = max_len::vllm_max_len(&mut r, &mt, max_pos);
    Ok(ModelDesc {
        name,
        model_type: mt,
        origin: ModelOrigin::Config,
        hidden_size: parts.hidden,
        vocab_size: parts.vocab,
        layers: parts.layers,
        tie_word_embeddings: parts.tie,
        max_position_embeddings: max_pos,
        engine_max_len,
        params,
        weights,
        exact_weight_bytes: None,
        ledger: r.ledger,
        warnings: r.warnings,
        load_mtp: false,
        mtp_layers,
        kv_shared: parts.kv_shared,
        ssm_state_dtype: parts.ssm_state_dtype,
    })
}

/// The `model_type`s of a config: the top level's, the language model's, and what the
/// architecture stood in for.
struct Types {
    /// The top level's type (the architecture's where the config gives none this calculator
    /// knows).
    root: String,
    /// The language-model part's own type (the top level's for a flat config).
    own: String,
    /// The type the config gave and the architecture read instead, when one was.
    by_arch: Option<(String, String)>,
}

impl Types {
    fn of(root: &Map<String, Value>, text: Option<(&str, &Map<String, Value>)>) -> Types {
        let mut root_type = type_of(root);
        // No type this calculator knows at the top level: the one the architecture names.
        let mut by_arch = None;
        if !recognised(&root_type) {
            if let Some((t, arch)) = architecture::from_architectures(root, known_types()) {
                by_arch = Some((std::mem::replace(&mut root_type, t.to_string()), arch));
            }
        }
        let own = match text {
            Some((_, t)) => type_of(t),
            None => root_type.clone(),
        };
        Types {
            root: root_type,
            own,
            by_arch,
        }
    }

    /// The language model's type, noted in the ledger (`part`: the nested part's key).
    fn note(self, r: &mut Reader, part: Option<&str>) -> String {
        let from_root = self.own.is_empty() || (self.by_arch.is_some() && !recognised(&self.own));
        let mt = if from_root {
            self.root.clone()
        } else {
            self.own
        };
        if let Some((given, arch)) = &self.by_arch {
            note_type_by_architecture(r, &self.root, given, arch);
            if let (Some(part), true) = (part, mt != self.root) {
                let key = format!("{part}.model_type");
                r.note("model_type", &mt, LedgerSource::Key(key));
            }
        } else if mt.is_empty() {
            r.default_note(
                "model_type",
                "(none)",
                "ldg_no_model_type_read_as_a_generic",
            );
        } else {
            r.note("model_type", &mt, LedgerSource::Key("model_type".into()));
        }
        mt
    }
}

/// The ledger line and the warning of a `model_type` read from the config's `architectures`
/// (`given`: the config's own type, empty when it has none).
fn note_type_by_architecture(r: &mut Reader, mt: &str, given: &str, arch: &str) {
    let (why, warning) = if given.is_empty() {
        ("ldg_type_from_architecture", "wrn_type_from_architecture")
    } else {
        (
            "ldg_unknown_type_by_architecture",
            "wrn_unknown_type_by_architecture",
        )
    };
    let phrase = |key| {
        Phrase::tr(key)
            .val("mt", mt)
            .val("given", given)
            .val("arch", arch)
    };
    r.note("model_type", mt, LedgerSource::Derived(phrase(why)));
    r.warnings.push(phrase(warning));
}

/// Reads the language model of family `fam` (`mt` as written, for the warnings).
fn build_family(r: &mut Reader, fam: &str, mt: &str) -> Result<Parts, CalcError> {
    if let Some(build) = own_builder(fam) {
        return build(r, fam, mt);
    }
    if decoder::KNOWN.contains(&fam) {
        return decoder::build(r, fam);
    }
    if r.find("kv_lora_rank").is_some() {
        r.warnings
            .push(Phrase::tr("wrn_unknown_type_mla").val("mt", mt));
        return deepseek::build(r, "deepseek_v3");
    }
    generic(r, mt)
}

/// Reads an unknown `model_type` as a generic decoder, warning with the keys it guessed (the
/// ledger lines that no key and no class gave).
fn generic(r: &mut Reader, mt: &str) -> Result<Parts, CalcError> {
    let before = r.ledger.len();
    let parts = decoder::build(r, "generic")?;
    let guessed: Vec<Phrase> = r
        .ledger
        .iter()
        .skip(before)
        .filter(|e| matches!(e.source, LedgerSource::Default(_)))
        .map(|e| Phrase::verbatim(format!("{} = {}", e.field, e.value)))
        .collect();
    let shown = if mt.is_empty() { "(none)" } else { mt };
    r.warnings.push(if guessed.is_empty() {
        Phrase::tr("wrn_unknown_type_generic").val("mt", shown)
    } else {
        Phrase::tr("wrn_unknown_type_guessed")
            .val("mt", shown)
            .sub("keys", Phrase::List(guessed))
    });
    Ok(parts)
}

/// The checkpoint precision from `torch_dtype` / `dtype`.
fn base_dtype(r: &mut Reader, fam: &str) -> Result<Dtype, CalcError> {
    match r.string("torch_dtype") {
        Some((k, s)) => match Dtype::parse(s) {
            Ok(d) => {
                r.note("dtype", d, LedgerSource::Key(k.to_string()));
                Ok(d)
            }
            Err(_) => {
                let shown = shorten(s);
                r.warnings.push(
                    Phrase::tr("wrn_unknown_dtype")
                        .val("k", k)
                        .val("shown", &shown),
                );
                r.default_note("dtype", Dtype::Bf16, "ldg_the_config_s_dtype_is_not_a");
                Ok(Dtype::Bf16)
            }
        },
        None => {
            if fam == "gpt2" {
                r.default_note(
                    "dtype",
                    Dtype::Fp32,
                    "ldg_no_torch_dtype_gpt_2_checkpoints_are",
                );
                Ok(Dtype::Fp32)
            } else {
                r.default_note(
                    "dtype",
                    Dtype::Bf16,
                    "ldg_no_torch_dtype_dtype_assumed_bf16_the",
                );
                Ok(Dtype::Bf16)
            }
        }
    }
}

/// The sizes every decoder states: width, layers, attention heads, vocabulary.
pub(crate) struct Dims {
    pub h: u64,
    pub n_layers: u64,
    pub heads: u64,
    pub vocab: u64,
}

/// Reads the sizes every decoder states, in the ledger's order (`hidden_size`,
/// `num_hidden_layers`, `num_attention_heads`, `vocab_size`, each with its spellings); a
/// Gemma 3 text config without `vocab_size` takes the published 262,208.
pub(crate) fn read_dims(r: &mut Reader, fam: &str) -> Result<Dims, CalcError> {
    let h = r.req("hidden_size", "why_size_model")?;
    let n_layers = r.layers()?;
    let heads = r.req("num_attention_heads", "why_size_attention")?;
    let vocab = match (r.opt("vocab_size")?, fam) {
        (Some(v), _) => v,
        (None, "gemma3") => {
            r.default_note("vocab_size", 262_208, "ldg_no_vocab_size_the_gemma_3_text");
            262_208
        }
        (None, _) => {
            return Err(CalcError::MissingKey {
                key: "vocab_size".into(),
                why: Phrase::tr("why_size_embeddings"),
            })
        }
    };
    Ok(Dims {
        h,
        n_layers,
        heads,
        vocab,
    })
}

/// Shared reads for decoders: hidden size, layers, heads, head_dim, kv heads.
pub(crate) struct Core {
    pub h: u64,
    pub n_layers: u64,
    pub heads: u64,
    pub kv: u64,
    pub hd: u64,
    pub vocab: u64,
}

/// Reads the keys every transformer decoder has ([`read_dims`], then the head size and the KV
/// heads) and validates them.
pub(crate) fn read_core(r: &mut Reader, fam: &str) -> Result<Core, CalcError> {
    read_core_with(r, fam, kv_from_keys)
}

/// As [`read_core`], with the KV heads from `kv` (given the reader and the attention heads).
pub(crate) fn read_core_with(
    r: &mut Reader,
    fam: &str,
    kv: fn(&mut Reader, u64) -> Result<u64, CalcError>,
) -> Result<Core, CalcError> {
    let Dims {
        h,
        n_layers,
        heads,
        vocab,
    } = read_dims(r, fam)?;
    let hd = read_head_dim(r, h, heads)?;
    let kv = kv(r, heads)?;
    check_kv(heads, kv, r.key_of("kv_heads"))?;
    Ok(Core {
        h,
        n_layers,
        heads,
        kv,
        hd,
        vocab,
    })
}

/// The KV heads a decoder's keys give: `num_key_value_heads` (or a spelling), one with
/// `multi_query`, otherwise every attention head.
fn kv_from_keys(r: &mut Reader, heads: u64) -> Result<u64, CalcError> {
    Ok(match r.opt(("kv_heads", "num_key_value_heads"))? {
        Some(k) => k,
        None if r.find("multi_query").and_then(|(_, v)| v.as_bool()) == Some(true) => {
            r.derived("kv_heads", 1, "ldg_multi_query_true_one_shared_kv_head");
            1
        }
        None => {
            r.default_note("kv_heads", heads, "ldg_no_num_key_value_heads_multi_head");
            heads
        }
    })
}

/// An explicit `head_dim` beats hidden / heads (Qwen3, Gemma); otherwise the heads must
/// divide the hidden size.
pub(crate) fn read_head_dim(r: &mut Reader, h: u64, heads: u64) -> Result<u64, CalcError> {
    match r.opt("head_dim")? {
        Some(d) => Ok(d),
        None => {
            let d = split_heads(h, heads)?;
            r.derived("head_dim", d, "ldg_hidden_size_num_attention_heads_no_head");
            Ok(d)
        }
    }
}

/// `hidden / heads`, refusing a split that does not divide.
pub(crate) fn split_heads(h: u64, heads: u64) -> Result<u64, CalcError> {
    if heads == 0 || !h.is_multiple_of(heads) {
        return Err(CalcError::HeadsDoNotDivide { heads, hidden: h });
    }
    Ok(h / heads)
}

/// How a family fills a missing MLP width with 4 × hidden.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FourH {
    /// The class leaves it null and the model computes 4 × hidden (GPT-2's `n_inner`,
    /// Falcon's `ffn_hidden_size`): a derivation.
    Derived,
    /// The config should state it; 4 × hidden is a guess (a default in the ledger).
    Guessed,
}

/// `intermediate_size` (and its spellings), or 4 × hidden recorded as `how` says with the
/// reason `why` (an `ldg_…` key).
pub(crate) fn read_intermediate(
    r: &mut Reader,
    h: u64,
    how: FourH,
    why: &'static str,
) -> Result<u64, CalcError> {
    let key = "intermediate_size";
    let four_h = mul("ovf_intermediate", &[4, h])?;
    match how {
        FourH::Guessed => r.or(key, four_h, why),
        FourH::Derived => match r.opt(key)? {
            Some(i) => Ok(i),
            None => {
                r.derived(key, four_h, why);
                Ok(four_h)
            }
        },
    }
}

/// The experts a token is routed to (`num_experts_per_tok` and its spellings), at most
/// `experts`: a config asking for more is refused with the key it used (every MoE family; the
/// Qwen3-Next and Granite hybrid readers once clamped it silently). `default` (a value and its
/// `ldg_…` reason) applies when neither the config nor its class gives one; without it the key
/// is required.
pub(crate) fn read_top_k(
    r: &mut Reader,
    experts: u64,
    default: Option<(u64, &'static str)>,
) -> Result<u64, CalcError> {
    let (field, key) = ("experts_per_token", "num_experts_per_tok");
    let k = match default {
        Some((d, why)) => r.or((field, key), d, why)?,
        None => r.req((field, key), "why_count_active_experts")?,
    };
    if k > experts {
        return Err(CalcError::BadValue {
            key: r.key_of(field).unwrap_or(key).into(),
            found: Phrase::verbatim(k.to_string()),
            expected: Phrase::tr("exp_at_most_experts").val("experts", experts),
        });
    }
    Ok(k)
}

/// The refusal of a per-layer list under `key` that holds `found` entries where the model has
/// `n_layers` layers.
pub(crate) fn not_one_per_layer(key: &str, found: usize, n_layers: u64) -> CalcError {
    CalcError::BadValue {
        key: key.into(),
        found: Phrase::tr("fnd_list_of").val("n", found),
        expected: Phrase::tr("exp_one_per_layer").val("n", n_layers),
    }
}

/// KV heads must divide the attention heads and not exceed them; the error names `key`, the
/// spelling the config used (`n_head_kv`, `attn_config.kv_n_heads`, …), or
/// `num_key_value_heads` when the value was not read from a key.
pub(crate) fn check_kv(heads: u64, kv: u64, key: Option<&str>) -> Result<(), CalcError> {
    if kv > heads || !heads.is_multiple_of(kv) {
        return Err(CalcError::BadValue {
            key: key.unwrap_or("num_key_value_heads").into(),
            found: Phrase::verbatim(kv.to_string()),
            expected: Phrase::tr("exp_divisor_heads").val("heads", heads),
        });
    }
    Ok(())
}

/// Reads `tie_word_embeddings` with the family default.
pub(crate) fn read_tie(r: &mut Reader, default: bool, fam: &str) -> Result<bool, CalcError> {
    // Neither part states it and the two classes disagree (Mistral3Config ties, MistralConfig
    // does not; Qwen3VLMoeConfig does not, its text class does): transformers 4.x followed the
    // text class, 5.x follows the top level. The published checkpoints store the head, so
    // the untied reading is taken.
    let k = "tie_word_embeddings";
    if r.find(k).is_none() {
        let ds = r.class_defaults(k);
        let untied = ds.iter().find(|(_, v)| v.as_bool() == Some(false));
        if ds.len() > 1 && ds.iter().any(|(_, v)| v.as_bool() == Some(true)) {
            if let Some((c, _)) = untied {
                r.note_class_default(k, false, k, c);
                return Ok(false);
            }
        }
    }
    let why = Phrase::tr(if default {
        "ldg_tie_default"
    } else {
        "ldg_untied_default"
    })
    .val("fam", fam);
    r.flag_why("tie_word_embeddings", default, why)
}

/// Adds the embedding table and the lm_head (unless tied).
pub(crate) fn add_embeddings(
    r: &mut Reader,
    acc: &mut Acc,
    vocab: u64,
    h: u64,
    tie: bool,
) -> Result<(), CalcError> {
    let e = mul("ovf_embedding_params", &[vocab, h])?;
    acc.add(Comp::Emb, e)?;
    if tie {
        r.derived("lm_head", 0, "ldg_tied_to_the_embeddings_counted_once");
    } else {
        acc.add(Comp::LmHead, e)?;
    }
    Ok(())
}

/// `max_position_embeddings` and its spellings (`Infinity` = no limit).
pub(crate) fn read_max_pos(r: &mut Reader) -> Result<Option<u64>, CalcError> {
    r.limit("max_position_embeddings")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checked_helpers() {
        assert_eq!(mul("ovf_params", &[2, 3, 4]).ok(), Some(24));
        assert!(matches!(
            mul("ovf_params", &[u64::MAX, 2]),
            Err(CalcError::Overflow { .. })
        ));
        assert!(matches!(
            add("ovf_params", &[u64::MAX, 1]),
            Err(CalcError::Overflow { .. })
        ));
    }

    #[test]
    fn a_sampling_top_k_is_not_read_as_experts_per_token() {
        // transformers 4.x saved the sampling parameter `top_k` in configs (Llama 3.2 Vision's
        // has 50); no family spells its experts per token so, so it is no spelling of
        // num_experts_per_tok: the count is missing, not 50.
        let cfg = r#"{"model_type":"some_moe","hidden_size":64,"intermediate_size":128,
            "num_hidden_layers":2,"num_attention_heads":4,"vocab_size":100,
            "num_local_experts":8,"top_k":50}"#;
        match parse_model_text(cfg) {
            Err(CalcError::MissingKey { key, .. }) => assert_eq!(key, "num_experts_per_tok"),
            other => panic!("{:?}", other.map(|m| m.params.total)),
        }
    }

    #[test]
    fn a_chatglm_config_reads_through_the_generic_spellings() {
        // No transformers class reads ChatGLM: its spellings come from the `*` rows.
        // h = 64, 2 layers, 4 heads (d = 16), 2 KV groups, I = 128, V = 100, untied:
        // per layer q 64·64 + k, v 2·64·2·16 + o 64·64 + MLP 3·64·128 + 2 norms 2·64
        // = 4096 + 4096 + 4096 + 24576 + 128 = 36,992; ×2 = 73,984; + final norm 64
        // + embeddings and head 2·100·64 = 12,800 → 86,848.
        let cfg = r#"{"model_type":"chatglm","hidden_size":64,"ffn_hidden_size":128,
            "intermediate_size":128,"num_layers":2,"num_attention_heads":4,
            "multi_query_group_num":2,"padded_vocab_size":100,"seq_length":8192}"#;
        let m = parse_model_text(cfg).ok();
        assert_eq!(m.as_ref().map(|m| m.params.total), Some(86_848));
        let keys: Vec<String> = m
            .iter()
            .flat_map(|m| &m.ledger)
            .filter_map(|e| match &e.source {
                LedgerSource::Key(k) => Some(k.clone()),
                _ => None,
            })
            .collect();
        for k in [
            "num_layers",
            "multi_query_group_num",
            "padded_vocab_size",
            "seq_length",
        ] {
            assert!(keys.iter().any(|x| x == k), "{k} not in {keys:?}");
        }
    }

    #[test]
    fn llama2_7b_by_hand() {
        // embed 32000·4096 = 131,072,000 (×2 untied = 262,144,000);
        // per layer 4·4096² + 3·4096·11008 + 2·4096 = 202,383,360; ×32 = 6,476,267,520;
        // + final norm 4096 → 6,738,415,616.
        let per_layer = 4 * 4096 * 4096 + 3 * 4096 * 11008 + 2 * 4096;
        let want = 2 * 32000 * 4096 + 32 * per_layer + 4096;
        let cfg = r#"{"model_type":"llama","hidden_size":4096,"intermediate_size":11008,
            "num_hidden_layers":32,"num_attention_heads":32,"vocab_size":32000,"tie_word_embeddings":false}"#;
        let m = parse_model_text(cfg).map(|m| m.params.total).ok();
        assert_eq!(m, Some(want));
    }
}
