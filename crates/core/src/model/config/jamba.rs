//! Jamba (`jamba`): Mamba and attention layers, MoE and dense feed-forwards, each by period
//! and offset.

use super::common::{read_tie, read_top_k};
use super::kit::{add_dense_ffn, add_routed_experts, finish_parts, Acc, Parts};
use super::mamba::{dt_rank, mamba1, Mamba1};
use super::reader::Reader;
use super::ssm::{attention, read_attention, read_sizes};
use crate::base::checked::mul;
use crate::base::error::CalcError;
use crate::model::desc::Layer;

/// Jamba's layout: which layers are attention and which are MoE, and the experts.
struct JambaLayout {
    ap: u64,
    ao: u64,
    ep: u64,
    eo: u64,
    experts: u64,
    top_k: u64,
}

/// Reads Jamba's attention and expert periods and offsets, and its expert counts.
fn read_jamba_layout(r: &mut Reader) -> Result<JambaLayout, CalcError> {
    let ap = r.or(
        "attn_layer_period",
        8,
        "ldg_jamba_default_one_attention_layer_in_8",
    )?;
    let ao = r.or0("attn_layer_offset", 4, "ldg_jamba_default_offset_4")?;
    let ep = r.or(
        "expert_layer_period",
        2,
        "ldg_jamba_default_moe_every_2nd_layer",
    )?;
    let eo = r.or0("expert_layer_offset", 1, "ldg_jamba_default_offset_1")?;
    let experts = r.or(
        ("experts", "num_local_experts"),
        16,
        "ldg_jamba_default_16_experts",
    )?;
    let top_k = read_top_k(r, experts, Some((2, "ldg_jamba_default_2_active_experts")))?;
    Ok(JambaLayout {
        ap,
        ao,
        ep,
        eo,
        experts,
        top_k,
    })
}

/// Reads Jamba's Mamba settings (state size, conv kernel, expand, dt rank, biases), then the
/// tie; returns the Mamba mixer (`D = expand·h`) and the tie.
fn read_jamba_mamba(r: &mut Reader, h: u64) -> Result<(Mamba1, bool), CalcError> {
    let n = r.or(
        ("mamba_d_state", "state_size"),
        16,
        "ldg_jamba_default_state_size_16",
    )?;
    let k = r.or(
        ("mamba_d_conv", "conv_kernel"),
        4,
        "ldg_jamba_default_conv_kernel_4",
    )?;
    let expand = r.or(("mamba_expand", "expand"), 2, "ldg_jamba_default_expand_2")?;
    let rank = dt_rank(r, "time_step_rank", h)?;
    let conv_bias = r.flag(
        ("mamba_conv_bias", "use_conv_bias"),
        true,
        "ldg_jamba_default_conv_bias",
    )?;
    let proj_bias = r.flag(
        "mamba_proj_bias",
        false,
        "ldg_jamba_default_no_projection_biases",
    )?;
    let tie = read_tie(r, false, "jamba")?;
    let cfg = Mamba1 {
        h,
        d: mul("ovf_inner", &[expand, h])?,
        n,
        k,
        rank,
        proj_bias,
        conv_bias,
        inner_norms: true,
    };
    Ok((cfg, tie))
}

/// Jamba: layer i is attention when `i % attn_layer_period == attn_layer_offset`, otherwise
/// Mamba (with dt/B/C layernorms); its feed-forward is MoE when
/// `i % expert_layer_period == expert_layer_offset`, otherwise a gated MLP. Two RMSNorms per
/// layer, final norm.
pub(super) fn jamba(r: &mut Reader) -> Result<Parts, CalcError> {
    let (h, nl, vocab) = read_sizes(r)?;
    let (heads, kv, hd) = read_attention(r, h)?;
    let inter = r.req("intermediate_size", "why_size_mlp")?;
    let JambaLayout {
        ap,
        ao,
        ep,
        eo,
        experts,
        top_k,
    } = read_jamba_layout(r)?;
    let (cfg, tie) = read_jamba_mamba(r, h)?;
    let mut acc = Acc::default();
    let mut layers = Vec::new();
    for i in 0..nl {
        acc.norms(2, h)?;
        let mixer = if i % ap == ao {
            attention(&mut acc, h, (heads, kv, hd), false)?
        } else {
            mamba1(&mut acc, &cfg)?
        };
        let ffn = if i % ep == eo {
            add_routed_experts(&mut acc, h, (experts, top_k, inter), (0, 0))?
        } else {
            add_dense_ffn(&mut acc, h, inter, true, false)?
        };
        layers.push(Layer { mixer, ffn });
    }
    finish_parts(r, layers, acc, (h, vocab, tie), 1)
}
