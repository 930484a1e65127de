//! Granite 4.0-H (`granitemoehybrid`): Mamba-2 and attention layers, each with a MoE and a
//! shared MLP; and its Mamba-2 sizes, which Bamba reads too.

use super::common::{not_one_per_layer, read_core, read_tie, read_top_k};
use super::kit::{add_dense_ffn, add_mlp, add_routed_experts, finish_parts, Acc, Comp, Parts};
use super::mamba2::{mamba2, read_mamba2_sizes, NemotronH};
use super::reader::Reader;
use super::ssm::attention;
use crate::base::checked::mul;
use crate::base::error::{CalcError, Phrase};
use crate::model::desc::Layer;

/// Reads GraniteMoeHybrid's Mamba-2 sizes (`mamba_d_head` "auto" = `expand·h / heads`).
pub(super) fn read_granite_mamba(
    r: &mut Reader,
    h: u64,
    tie: bool,
) -> Result<NemotronH, CalcError> {
    let mh = r.req("mamba_num_heads", "why_size_mamba2")?;
    let expand = r.req(("mamba_expand", "expand"), "why_size_mamba2")?;
    let mp = match r.find("mamba_head_dim") {
        Some((_, v)) if v.is_number() => r.req("mamba_head_dim", "why_size_mamba2")?,
        _ => {
            let d = mul("ovf_ssm_params", &[expand, h])? / mh.max(1);
            r.derived("mamba_head_dim", d, "ldg_mamba_head_dim_auto");
            d
        }
    };
    NemotronH::mamba(h, tie, mh, mp, read_mamba2_sizes(r)?)
}

/// Granite 4.0-H (`granitemoehybrid`): per layer two RMSNorms, a Mamba-2 or an attention
/// mixer (`layer_types`), a MoE (router `E·h`, experts `3·E·I·h`) when there are experts,
/// and a shared gated MLP `3·h·S`; final norm; embeddings (tied in the published configs).
pub(super) fn granite_hybrid(r: &mut Reader) -> Result<Parts, CalcError> {
    let c = read_core(r, "granitemoehybrid")?;
    let h = c.h;
    let tie = read_tie(r, false, "granitemoehybrid")?;
    let types = r
        .str_list("layer_types")?
        .ok_or_else(|| CalcError::MissingKey {
            key: "layer_types".into(),
            why: Phrase::tr("why_layer_kinds"),
        })?;
    if types.len() as u64 != c.n_layers {
        return Err(not_one_per_layer("layer_types", types.len(), c.n_layers));
    }
    let m = read_granite_mamba(r, h, tie)?;
    let attn_bias = r.flag("attention_bias", false, "ldg_no_attention_biases")?;
    let experts = r.or0(("experts", "num_local_experts"), 0, "ldg_no_shared_expert")?;
    let top_k = if experts > 0 {
        read_top_k(r, experts, None)?
    } else {
        0
    };
    let inter = r.req(
        ("expert_intermediate", "intermediate_size"),
        "why_size_experts",
    )?;
    let shared = r.or0(
        ("shared_intermediate", "shared_intermediate_size"),
        0,
        "ldg_no_shared_expert",
    )?;
    let mut acc = Acc::default();
    let mut layers = Vec::new();
    for t in &types {
        acc.norms(2, h)?;
        let mixer = if t == "attention" {
            attention(&mut acc, h, (c.heads, c.kv, c.hd), attn_bias)?
        } else {
            mamba2(&mut acc, &m)?
        };
        let ffn = if experts > 0 {
            let moe = (experts, top_k, inter);
            let ffn = add_routed_experts(&mut acc, h, moe, (u64::from(shared > 0), shared))?;
            add_mlp(&mut acc, Comp::Mlp, h, shared, true, false)?;
            ffn
        } else {
            add_dense_ffn(&mut acc, h, shared, true, false)?
        };
        layers.push(Layer { mixer, ffn });
    }
    finish_parts(r, layers, acc, (h, c.vocab, tie), 1)
}
