//! The building kit of the family readers: the parameter accumulator and its components, the
//! blocks a decoder is made of (attention, MLP, routed experts, embeddings, multi-token
//! prediction modules), the mixers' descriptions, and what a family builder hands back.

use super::common::read_max_pos;
use super::reader::Reader;
use crate::base::checked::{add, mul};
use crate::base::dtype::Dtype;
use crate::base::error::{CalcError, Phrase};
use crate::model::desc::{Ffn, Layer, Mixer, ParamBreakdown};

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
    /// ([`ModelDesc::mtp_layers`](crate::model::desc::ModelDesc::mtp_layers), which the
    /// KV cache counts when MTP is loaded).
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

/// A routed MoE's sizes: `experts` gated experts of width `inter`, `top_k` of them per token,
/// and `shared` shared experts of the same width beside them.
pub(crate) struct RoutedMoe {
    pub(crate) experts: u64,
    pub(crate) top_k: u64,
    pub(crate) inter: u64,
    pub(crate) shared: u64,
}

/// One routed-MoE layer with a router bias and shared experts of the experts' width (AFMoE,
/// EXAONE-MoE): the routed experts ([`add_routed_experts`]), the router's `E` bias, `fp32` of
/// the router's parameters kept in fp32 as the checkpoint stores them, and the shared experts
/// as one gated MLP of `shared·inter`.
pub(crate) fn add_biased_moe(
    acc: &mut Acc,
    h: u64,
    m: &RoutedMoe,
    fp32: u64,
) -> Result<Ffn, CalcError> {
    let ffn = add_routed_experts(acc, h, (m.experts, m.top_k, m.inter), (m.shared, m.inter))?;
    acc.add(Comp::Router, m.experts)?;
    acc.router_fp32(fp32)?;
    if m.shared > 0 {
        let width = mul("ovf_shared_expert", &[m.shared, m.inter])?;
        add_mlp(acc, Comp::Mlp, h, width, true, false)?;
    }
    Ok(ffn)
}

/// Whether MTP modules store their own copies of the embedding and the output head.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MtpHeads {
    /// DeepSeek-V3, GLM-4.5: each module stores `embed_tokens` and `shared_head.head`.
    OwnCopies,
    /// Qwen3-Next, EXAONE-MoE: the module reuses the main model's embedding and head.
    Shared,
    /// LongCat-Flash: the module stores its own embedding (`model.mtp.embed_tokens`) and reuses
    /// the main output head.
    OwnEmbedding,
}

/// Adds `mtp` multi-token-prediction modules to `other` as the checkpoint stores them: their
/// decoder layers (already in `m`), and per module three norms (`3h`: DeepSeek-V3's enorm,
/// hnorm, shared_head.norm; Qwen3-Next's pre_fc_norm_embedding, pre_fc_norm_hidden, norm), the
/// projection of the concatenated embedding and hidden state (`2h·h`: eh_proj / fc) and, with
/// [`MtpHeads::OwnCopies`], its own copies of the embedding and the output head (`2·V·h`), with
/// [`MtpHeads::OwnEmbedding`] its own embedding (`V·h`); a ledger entry and a warning name the
/// main model's count beside the checkpoint's. `m` carries
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
        MtpHeads::OwnEmbedding => mul("ovf_stored_params", &[mtp, vocab, h])?,
        MtpHeads::Shared => 0,
    };
    let main = acc.b.total;
    acc.mtp(&m, copies)?;
    acc.mtp_layers.append(&mut m.mtp_layers);
    let stored = acc.b.mtp;
    let (ldg, wrn) = match heads {
        MtpHeads::OwnCopies => ("ldg_mtp_modules_stored", "wrn_mtp_stored"),
        MtpHeads::Shared => ("ldg_mtp_modules_shared_head", "wrn_mtp_stored_shared_head"),
        MtpHeads::OwnEmbedding => (
            "ldg_mtp_modules_own_embedding",
            "wrn_mtp_stored_own_embedding",
        ),
    };
    r.derived("mtp_parameters", stored, ldg);
    r.warnings.push(
        Phrase::tr(wrn)
            .val("mtp", mtp)
            .val("params", crate::base::derivation::group(stored))
            .val("main", crate::base::derivation::group(main))
            .val(
                "total",
                crate::base::derivation::group(main.saturating_add(stored)),
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
    /// Layers that reuse an earlier layer's KV cache
    /// ([`ModelDesc::kv_shared`](crate::model::desc::ModelDesc::kv_shared)).
    pub kv_shared: Vec<usize>,
    /// The recurrent state's precision the config names
    /// ([`ModelDesc::ssm_state_dtype`](crate::model::desc::ModelDesc::ssm_state_dtype)).
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
