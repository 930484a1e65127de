//! Mamba-2 (`mamba2`), and the Mamba-2 mixer and its layout the hybrids also use (Nemotron-H,
//! Granite 4.0-H, Bamba, Falcon-H1).
//!
//! Mamba-2 mixer: in_proj `h·(2D + 2·g·N + H_m)`, conv1d `(D + 2gN)·k` (+ bias), dt_bias,
//! A_log, D (`H_m` each), gated norm `D`, out_proj `D·h`. State: conv `(k − 1)·(D + 2gN)` +
//! SSM `H_m·P·N` (P = head dim, H_m·P = D).

use super::common::read_tie;
use super::kit::{Acc, Comp, Parts};
use super::reader::Reader;
use super::ssm::{read_sizes, ssm_mixer, ssm_stack};
use crate::base::checked::{add, mul};
use crate::base::error::CalcError;
use crate::model::desc::{Mixer, SsmGroups};

/// Nemotron-H's sizes besides the layer pattern.
pub(super) struct NemotronH {
    pub(super) h: u64,
    pub(super) tie: bool,
    /// Mamba-2 inner width `H_m·P`.
    pub(super) d: u64,
    /// conv1d channels `D + 2gN`.
    pub(super) conv_dim: u64,
    pub(super) heads: u64,
    pub(super) kv: u64,
    pub(super) hd: u64,
    pub(super) inter: u64,
    pub(super) mh: u64,
    pub(super) mp: u64,
    pub(super) n: u64,
    pub(super) g: u64,
    pub(super) k: u64,
    pub(super) proj_bias: bool,
    pub(super) conv_bias: bool,
    pub(super) attn_bias: bool,
    pub(super) mlp_bias: bool,
    /// The gated RMSNorm over the inner width (Falcon-H1 only with `mamba_rms_norm`).
    pub(super) gated_norm: bool,
    /// The out_proj bias (`proj_bias` for Nemotron-H and Granite; `projectors_bias` for
    /// Falcon-H1).
    pub(super) out_bias: bool,
}

impl NemotronH {
    /// A Mamba-2-only layout (no attention or MLP sizes: a hybrid sets them with struct
    /// update) of width `h`, `mh` heads of `mp`: inner width `D = H_m·P`, conv channels
    /// `D + 2gN`, the gated norm, and the out_proj bias following the projection bias.
    pub(super) fn mamba(
        h: u64,
        tie: bool,
        mh: u64,
        mp: u64,
        s: Mamba2Sizes,
    ) -> Result<NemotronH, CalcError> {
        let w = "ovf_ssm_params";
        let d = mul(w, &[mh, mp])?;
        Ok(NemotronH {
            h,
            tie,
            d,
            conv_dim: add(w, &[d, mul(w, &[2, s.g, s.n])?])?,
            heads: 1,
            kv: 1,
            hd: 1,
            inter: 0,
            mh,
            mp,
            n: s.n,
            g: s.g,
            k: s.k,
            proj_bias: s.proj_bias,
            conv_bias: s.conv_bias,
            attn_bias: false,
            mlp_bias: false,
            gated_norm: true,
            out_bias: s.proj_bias,
        })
    }
}

/// Adds one Mamba-2 mixer (`M` in the pattern) and returns its mixer description.
pub(super) fn mamba2(acc: &mut Acc, m: &NemotronH) -> Result<Mixer, CalcError> {
    let w = "ovf_ssm_params";
    let (h, mh, mp, n, g, k) = (m.h, m.mh, m.mp, m.n, m.g, m.k);
    let (d, conv_dim) = (m.d, m.conv_dim);
    acc.lin(
        Comp::Ssm,
        mul(
            w,
            &[h, add(w, &[mul(w, &[2, d])?, mul(w, &[2, g, n])?, mh])?],
        )?,
    )?;
    if m.proj_bias {
        acc.add(
            Comp::Ssm,
            add(w, &[mul(w, &[2, d])?, mul(w, &[2, g, n])?, mh])?,
        )?;
    }
    acc.add(Comp::Ssm, mul(w, &[conv_dim, k])?)?;
    if m.conv_bias {
        acc.add(Comp::Ssm, conv_dim)?;
    }
    acc.add(Comp::Ssm, mul(w, &[3, mh])?)?; // dt_bias, A_log, D
    if m.gated_norm {
        acc.add(Comp::Ssm, d)?; // gated RMSNorm
    }
    acc.lin(Comp::Ssm, mul(w, &[d, h])?)?;
    if m.out_bias {
        acc.add(Comp::Ssm, h)?;
    }
    let groups = SsmGroups {
        groups: g,
        conv_elems: mul(w, &[k.saturating_sub(1), 2, n])?,
        linear_elems: mul(w, &[2, n, h])?,
        other_elems: mul(
            w,
            &[
                2,
                n,
                add(w, &[k, u64::from(m.conv_bias), u64::from(m.proj_bias)])?,
            ],
        )?,
    };
    ssm_mixer((k, conv_dim), mul(w, &[mh, mp, n])?, (d, n), Some(groups))
}

/// Mamba-2 (`Mamba2ForCausalLM`): embeddings, per layer an RMSNorm and a Mamba-2 mixer
/// (`num_heads × head_dim` inner width, `n_groups`, `state_size`, `conv_kernel`), a final
/// norm and the head unless tied.
pub(super) fn mamba2_model(r: &mut Reader) -> Result<Parts, CalcError> {
    let (h, nl, vocab) = read_sizes(r)?;
    let mh = r.req(("mamba_num_heads", "num_heads"), "why_size_mamba2")?;
    let mp = r.req(("mamba_head_dim", "head_dim"), "why_size_mamba2")?;
    let sizes = read_mamba2_sizes(r)?;
    let tie = read_tie(r, false, "mamba2")?;
    let m = NemotronH::mamba(h, tie, mh, mp, sizes)?;
    ssm_stack(r, (nl, h, vocab, tie), |acc| mamba2(acc, &m))
}

/// The Mamba-2 mixer's state, group and convolution sizes and its biases (Mamba-2's keys;
/// GraniteMoeHybrid's and Falcon-H1's `mamba_*` spellings are generic spellings of them).
pub(super) struct Mamba2Sizes {
    pub(super) n: u64,
    pub(super) g: u64,
    pub(super) k: u64,
    pub(super) proj_bias: bool,
    pub(super) conv_bias: bool,
}

/// Reads [`Mamba2Sizes`] (in the ledger's order: state, groups, kernel, biases).
pub(super) fn read_mamba2_sizes(r: &mut Reader) -> Result<Mamba2Sizes, CalcError> {
    let n = r.req(("ssm_state_size", "state_size"), "why_size_mamba2")?;
    let g = r.req("n_groups", "why_size_mamba2")?;
    let k = r.req("conv_kernel", "why_size_mamba2")?;
    let proj_bias = r.flag("mamba_proj_bias", false, "ldg_no_mamba_projection_biases")?;
    let conv_bias = r.flag("use_conv_bias", true, "ldg_conv_bias")?;
    Ok(Mamba2Sizes {
        n,
        g,
        k,
        proj_bias,
        conv_bias,
    })
}
