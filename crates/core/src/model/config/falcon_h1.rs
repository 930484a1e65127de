//! Falcon-H1 (`falcon_h1`).
//!
//! Every layer runs GQA attention and a Mamba-2 mixer side by side on the same input, then a
//! gated MLP; it is described as two layers (the attention with no FFN, then the Mamba-2 mixer
//! with the MLP), so the KV of every attention and the state of every mixer are both counted.

use super::common::{read_core, read_tie, Core};
use super::kit::{add_dense_ffn, finish_parts, Acc, Parts};
use super::mamba2::{mamba2, read_mamba2_sizes, NemotronH};
use super::reader::Reader;
use super::ssm::attention;
use crate::base::checked::mul;
use crate::base::error::{CalcError, Phrase};
use crate::model::desc::{Ffn, Layer};

/// Reads Falcon-H1's Mamba-2 sizes: inner width `mamba_d_ssm` (null: `mamba_expand·h`),
/// `mamba_n_heads`, `mamba_d_head` ("auto" = width / heads), `mamba_n_groups`,
/// `mamba_d_state`, `mamba_d_conv`; the gated norm only with `mamba_rms_norm`; in_proj bias
/// `mamba_proj_bias`, out_proj bias `projectors_bias`.
fn read_falcon_h1_mamba(r: &mut Reader, c: &Core, tie: bool) -> Result<NemotronH, CalcError> {
    let w = "ovf_ssm_params";
    let mh = r.req("mamba_num_heads", "why_size_mamba2")?;
    let d = match r.opt("mamba_d_ssm")? {
        Some(d) => d,
        None => {
            let e = r.req(("mamba_expand", "expand"), "why_size_mamba2")?;
            let d = mul(w, &[e, c.h])?;
            r.derived("mamba_d_ssm", d, "ldg_falcon_h1_d_ssm_expand");
            d
        }
    };
    let mp = match r.find("mamba_head_dim") {
        Some((_, v)) if v.is_number() => r.req("mamba_head_dim", "why_size_mamba2")?,
        _ => {
            let p = d / mh;
            r.derived("mamba_head_dim", p, "ldg_falcon_h1_head_auto");
            p
        }
    };
    if mul(w, &[mh, mp])? != d {
        return Err(CalcError::BadValue {
            key: r.key_of("mamba_head_dim").unwrap_or("mamba_d_head").into(),
            found: Phrase::verbatim(mp.to_string()),
            expected: Phrase::tr("exp_falcon_h1_head")
                .val("d", d)
                .val("heads", mh),
        });
    }
    let sizes = read_mamba2_sizes(r)?;
    let gated_norm = r.flag("mamba_rms_norm", false, "ldg_falcon_h1_no_gated_norm")?;
    let out_bias = r.flag("projectors_bias", false, "ldg_no_mamba_projection_biases")?;
    let attn_bias = r.flag("attention_bias", false, "ldg_default_no_attention_biases")?;
    let mlp_bias = r.flag("mlp_bias", false, "ldg_default_no_mlp_biases")?;
    let inter = r.req("intermediate_size", "why_size_mlp")?;
    // D = H_m·P was checked above, so the layout's inner width is mamba_d_ssm.
    Ok(NemotronH {
        heads: c.heads,
        kv: c.kv,
        hd: c.hd,
        inter,
        attn_bias,
        mlp_bias,
        gated_norm,
        out_bias,
        ..NemotronH::mamba(c.h, tie, mh, mp, sizes)?
    })
}

/// Falcon-H1 (`falcon_h1`): per layer input and pre-FFN RMSNorms, GQA attention (q/k/v/o,
/// `attention_bias`) and a Mamba-2 mixer in parallel, a gated MLP `3·h·I` (`mlp_bias`); final
/// norm; embeddings and the head unless tied. Each layer is described as two (attention with
/// no FFN, then the mixer with the MLP): vLLM keeps a KV cache for every attention and a
/// Mamba-2 state (conv `(k − 1)·(D + 2gN)` + SSM `H_m·P·N`) for every mixer.
pub(super) fn falcon_h1(r: &mut Reader) -> Result<Parts, CalcError> {
    let c = read_core(r, "falcon_h1")?;
    let tie = read_tie(r, false, "falcon_h1")?;
    let m = read_falcon_h1_mamba(r, &c, tie)?;
    let h = c.h;
    let mut acc = Acc::default();
    let mut layers = Vec::new();
    for _ in 0..c.n_layers {
        acc.norms(2, h)?;
        layers.push(Layer {
            mixer: attention(&mut acc, h, (c.heads, c.kv, c.hd), m.attn_bias)?,
            ffn: Ffn::None,
        });
        let mixer = mamba2(&mut acc, &m)?;
        let ffn = add_dense_ffn(&mut acc, h, m.inter, true, m.mlp_bias)?;
        layers.push(Layer { mixer, ffn });
    }
    r.derived("layers_described", layers.len(), "ldg_falcon_h1_parallel");
    finish_parts(r, layers, acc, (h, c.vocab, tie), 1)
}
