//! Qwen3-Next (`qwen3_next`): Gated DeltaNet (linear attention) and gated full attention
//! layers, a MoE with a gated shared expert, and its multi-token-prediction module; the layers
//! Qwen3.5 builds too.

use super::common::{read_core, read_max_pos, read_tie, read_top_k, Core};
use super::kit::{
    add_dense_ffn, add_embeddings, add_mlp, add_mtp_modules, add_routed_experts, full_attention,
    Acc, Comp, MtpHeads, Parts,
};
use super::reader::Reader;
use super::ssm::ssm_mixer;
use crate::base::checked::{add, mul};
use crate::base::error::CalcError;
use crate::model::desc::{Ffn, Layer, Mixer};

/// One Gated DeltaNet (linear attention) mixer of Qwen3-Next: in_proj_qkvz
/// `h·(2·K_h·d_k + 2·V_h·d_v)`, in_proj_ba `h·2V_h`, depthwise conv `(2·K_h·d_k + V_h·d_v)·k`,
/// dt_bias and A_log `2V_h`, gated RMSNorm `d_v`, out_proj `V_h·d_v·h`. Its state (what vLLM
/// allocates per sequence instead of KV): conv `(k − 1)·conv_dim` + recurrent `V_h·d_k·d_v`.
fn gated_delta_net(acc: &mut Acc, h: u64, g: &Gdn) -> Result<Mixer, CalcError> {
    let w = "ovf_ssm_params";
    let key = mul(w, &[g.kh, g.dk])?;
    let value = mul(w, &[g.vh, g.dv])?;
    let conv_dim = add(w, &[mul(w, &[2, key])?, value])?;
    acc.lin(
        Comp::Ssm,
        mul(
            w,
            &[h, add(w, &[mul(w, &[2, key])?, mul(w, &[2, value])?])?],
        )?,
    )?;
    acc.lin(Comp::Ssm, mul(w, &[h, 2, g.vh])?)?;
    acc.add(Comp::Ssm, mul(w, &[conv_dim, g.k])?)?;
    acc.add(Comp::Ssm, add(w, &[mul(w, &[2, g.vh])?, g.dv])?)?;
    acc.lin(Comp::Ssm, mul(w, &[value, h])?)?;
    ssm_mixer(
        (g.k, conv_dim),
        mul(w, &[g.vh, g.dk, g.dv])?,
        (value, g.dk),
        None,
    )
}

/// The Gated DeltaNet sizes of Qwen3-Next.
struct Gdn {
    kh: u64,
    vh: u64,
    dk: u64,
    dv: u64,
    k: u64,
}

/// A MoE block of routed experts and an optional gated shared expert (Qwen3-Next; MiniMax's
/// remote code).
pub(super) struct SharedMoe {
    pub experts: u64,
    pub top_k: u64,
    pub inter: u64,
    /// The shared expert's width (0: none).
    pub shared: u64,
}

/// Gated full attention of Qwen3-Next: q_proj doubled for the output gate (`2·h·H·d`; `h·H·d`
/// without the gate), k and v (`2·h·K·d`), o (`H·d·h`), q/k norms (`2d`).
fn qn_full_attention(acc: &mut Acc, c: &Core, gate: bool) -> Result<Mixer, CalcError> {
    let (w, h) = ("ovf_attention_params", c.h);
    acc.lin(
        Comp::Attn,
        mul(w, &[h, c.heads, c.hd, 1 + u64::from(gate)])?,
    )?;
    acc.lin(Comp::Attn, mul(w, &[h, c.kv, c.hd, 2])?)?;
    acc.lin(Comp::Attn, mul(w, &[c.heads, c.hd, h])?)?;
    acc.add(Comp::Attn, mul(w, &[2, c.hd])?)?;
    Ok(full_attention(c.heads, c.kv, c.hd))
}

/// A MoE layer: router `E·h`, experts `3·E·h·I`, the shared expert `3·h·S` and its gate `h`
/// (Qwen3-Next's `shared_expert_gate`, MiniMax's `coefficient`).
pub(super) fn shared_moe(acc: &mut Acc, h: u64, m: &SharedMoe) -> Result<Ffn, CalcError> {
    let routed = (m.experts, m.top_k, m.inter);
    let ffn = add_routed_experts(acc, h, routed, (u64::from(m.shared > 0), m.shared))?;
    if m.shared > 0 {
        add_mlp(acc, Comp::Mlp, h, m.shared, true, false)?;
        acc.add(Comp::Router, h)?;
    }
    Ok(ffn)
}

/// Reads the Gated DeltaNet sizes of Qwen3-Next.
fn read_gdn(r: &mut Reader) -> Result<Gdn, CalcError> {
    let mut f = |field: &str, key: &'static str| r.req((field, key), "why_size_mamba2");
    Ok(Gdn {
        kh: f("linear_num_key_heads", "linear_num_key_heads")?,
        vh: f("linear_num_value_heads", "linear_num_value_heads")?,
        dk: f("linear_key_head_dim", "linear_key_head_dim")?,
        dv: f("linear_value_head_dim", "linear_value_head_dim")?,
        k: f("linear_conv_kernel_dim", "linear_conv_kernel_dim")?,
    })
}

/// Reads the MoE sizes: `num_local_experts`, `num_experts_per_tok`, the experts' width under
/// `inter_key` and the shared expert's under `shared_key` (0 when absent).
pub(super) fn read_shared_moe(
    r: &mut Reader,
    (inter_key, shared_key): (&'static str, &'static str),
) -> Result<SharedMoe, CalcError> {
    let experts = r.req(("experts", "num_local_experts"), "why_count_experts")?;
    let top_k = read_top_k(r, experts, None)?;
    let inter = r.req(("expert_intermediate", inter_key), "why_size_experts")?;
    let shared = r.or0(
        ("shared_intermediate", shared_key),
        0,
        "ldg_no_shared_expert",
    )?;
    Ok(SharedMoe {
        experts,
        top_k,
        inter,
        shared,
    })
}

/// The feed-forward of a Qwen3-Next-style layer: a MoE with a gated shared expert (Qwen3-Next,
/// Qwen3.5-MoE) or a dense gated MLP of this width (Qwen3.5).
pub(super) enum NextFfn {
    Moe(SharedMoe),
    Dense(u64),
}

impl NextFfn {
    fn add(&self, acc: &mut Acc, h: u64) -> Result<Ffn, CalcError> {
        match self {
            NextFfn::Moe(m) => shared_moe(acc, h, m),
            NextFfn::Dense(i) => add_dense_ffn(acc, h, *i, true, false),
        }
    }
}

/// How a Qwen3-Next-style config names its MTP modules: the key, and the ledger's reason for
/// one module when the key is absent.
pub(super) struct MtpKey {
    pub(super) key: &'static str,
    pub(super) why_one: &'static str,
}

/// Qwen3-Next: every `full_attention_interval`-th layer is gated full attention, the others
/// Gated DeltaNet; every layer a MoE and two RMSNorms; final norm, embeddings, head.
///
/// The checkpoint also stores one multi-token-prediction module (`mtp.*`: fc `2h·h`,
/// pre_fc_norm_embedding, pre_fc_norm_hidden and norm `3h`, one full-attention MoE layer with
/// its two norms; it reuses the main embedding and head). The config names it only through
/// `num_nextn_predict_layers` when present; otherwise one module is counted, as the published
/// checkpoints store (the Hub total of Qwen3-Next-80B-A3B-Instruct, 81,324,862,720, is the main
/// model plus exactly this module) and as vLLM's `qwen3_next_mtp` reads it. vLLM skips it
/// unless speculative decoding uses it (`skip_prefixes=["mtp."]`).
pub(super) fn qwen3_next(r: &mut Reader) -> Result<Parts, CalcError> {
    let c = read_core(r, "qwen3_next")?;
    let ffn = NextFfn::Moe(read_shared_moe(
        r,
        ("moe_intermediate_size", "shared_expert_intermediate_size"),
    )?);
    let mtp = MtpKey {
        key: "num_nextn_predict_layers",
        why_one: "ldg_qwen3_next_mtp_default",
    };
    gated_delta_hybrid(r, "qwen3_next", &c, &ffn, &mtp)
}

/// The layers of Qwen3-Next and Qwen3.5: full attention (gated unless `attn_output_gate` is
/// false) where `layer_types` says `full_attention` (without it, every
/// `full_attention_interval`-th layer, 4 as transformers fills it), Gated DeltaNet elsewhere,
/// `ffn` in every layer with two RMSNorms; final norm, embeddings, head, then the MTP modules
/// (full attention and `ffn`), which reuse the main embedding and head.
pub(super) fn gated_delta_hybrid(
    r: &mut Reader,
    fam: &str,
    c: &Core,
    ffn: &NextFfn,
    mtp_key: &MtpKey,
) -> Result<Parts, CalcError> {
    let h = c.h;
    let tie = read_tie(r, false, fam)?;
    let interval = r.or("full_attention_interval", 4, "ldg_full_attention_every_4th")?;
    // vLLM's Qwen3NextAttention reads `attn_output_gate` (true when absent); transformers
    // always builds the gate.
    let gate = r.flag("attn_output_gate", true, "ldg_attn_output_gate_default")?;
    let g = read_gdn(r)?;
    let types = r.str_list("layer_types")?;
    let mut acc = Acc::default();
    let mut layers = Vec::new();
    for i in 0..c.n_layers {
        let full = match types.as_ref().and_then(|t| t.get(i as usize)) {
            Some(t) => t == "full_attention",
            None => (i + 1).is_multiple_of(interval),
        };
        acc.norms(2, h)?;
        let mixer = if full {
            qn_full_attention(&mut acc, c, gate)?
        } else {
            gated_delta_net(&mut acc, h, &g)?
        };
        let ffn = ffn.add(&mut acc, h)?;
        layers.push(Layer { mixer, ffn });
    }
    acc.add(Comp::Norms, h)?;
    add_embeddings(r, &mut acc, c.vocab, h, tie)?;
    let mtp = r.or0(("mtp_layers", mtp_key.key), 1, mtp_key.why_one)?;
    if mtp > 0 {
        let mut m = Acc::default();
        for _ in 0..mtp {
            m.norms(2, h)?;
            let mixer = qn_full_attention(&mut m, c, gate)?;
            let ffn = ffn.add(&mut m, h)?;
            m.mtp_layers.push(Layer { mixer, ffn });
        }
        add_mtp_modules(r, &mut acc, m, mtp, (c.vocab, h), MtpHeads::Shared)?;
    }
    let max_pos = read_max_pos(r)?;
    Ok(Parts::new(layers, acc, h, c.vocab, tie, max_pos))
}
