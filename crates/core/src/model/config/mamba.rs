//! Mamba (v1) (`mamba`), and the Mamba-1 mixer Jamba also uses.
//!
//! Mamba (v1) mixer: in_proj `h·2D` (D = expand·h), conv1d `D·k` (+ `D` bias), x_proj
//! `D·(R + 2N)`, dt_proj `R·D + D`, A_log `D·N`, D `D`, out_proj `D·h`. Recurrent state per
//! sequence: conv `(k − 1)·D` + SSM `D·N` elements.

use super::common::read_tie;
use super::kit::{Acc, Comp, Parts};
use super::reader::Reader;
use super::ssm::{read_sizes, ssm_mixer, ssm_stack};
use crate::base::checked::{add, mul};
use crate::base::error::CalcError;
use crate::model::desc::Mixer;
use serde_json::Value;

/// `time_step_rank` / `mamba_dt_rank`: a number, or "auto" = ⌈h / 16⌉, given by the config or
/// by its class (`JambaConfig` and `MambaConfig` default to "auto": a config that omits the key
/// gets ⌈h / 16⌉, and the ledger names the class).
pub(super) fn dt_rank(r: &mut Reader, key: &'static str, h: u64) -> Result<u64, CalcError> {
    let auto = h.div_ceil(16);
    match r.lookup(key) {
        Some((k, Value::String(s), class)) if s == "auto" => {
            if let Some(c) = class {
                r.note_class_default("dt_rank_spec", "auto", k, c);
            }
            r.derived("dt_rank", auto, "ldg_auto_hidden_size_16");
            Ok(auto)
        }
        _ => r.or(("dt_rank", key), auto, "ldg_no_dt_rank_hidden_size_16"),
    }
}

pub(super) struct Mamba1 {
    pub(super) h: u64,
    pub(super) d: u64,
    pub(super) n: u64,
    pub(super) k: u64,
    pub(super) rank: u64,
    pub(super) proj_bias: bool,
    pub(super) conv_bias: bool,
    pub(super) inner_norms: bool,
}

/// Adds one Mamba-1 mixer and returns its mixer description.
pub(super) fn mamba1(acc: &mut Acc, m: &Mamba1) -> Result<Mixer, CalcError> {
    let w = "ovf_ssm_params";
    let (h, d, n, k, rk) = (m.h, m.d, m.n, m.k, m.rank);
    acc.lin(Comp::Ssm, mul(w, &[h, 2, d])?)?;
    if m.proj_bias {
        acc.add(Comp::Ssm, mul(w, &[2, d])?)?;
    }
    acc.add(Comp::Ssm, mul(w, &[d, k])?)?;
    if m.conv_bias {
        acc.add(Comp::Ssm, d)?;
    }
    acc.lin(Comp::Ssm, mul(w, &[d, add(w, &[rk, mul(w, &[2, n])?])?])?)?;
    acc.lin(Comp::Ssm, mul(w, &[rk, d])?)?;
    acc.add(Comp::Ssm, d)?; // dt_proj bias
    acc.add(Comp::Ssm, mul(w, &[d, n])?)?; // A_log
    acc.add(Comp::Ssm, d)?; // D
    acc.lin(Comp::Ssm, mul(w, &[d, h])?)?;
    if m.proj_bias {
        acc.add(Comp::Ssm, h)?;
    }
    if m.inner_norms {
        acc.add(Comp::Ssm, add(w, &[rk, n, n])?)?; // dt/b/c layernorms (Jamba)
    }
    ssm_mixer((k, d), mul(w, &[d, n])?, (d, n), None)
}

/// Mamba (v1): embeddings, `n_layer` × (RMSNorm `h` + mixer), norm_f, tied lm_head.
pub(super) fn mamba(r: &mut Reader) -> Result<Parts, CalcError> {
    let (h, nl, vocab) = read_sizes(r)?;
    let n = r.or("state_size", 16, "ldg_mamba_default_state_size_16")?;
    let expand = r.or("expand", 2, "ldg_mamba_default_expand_2")?;
    let d = match r.opt(("d_inner", "intermediate_size"))? {
        Some(d) => d,
        None => {
            let d = mul("ovf_inner", &[expand, h])?;
            r.derived("d_inner", d, "ldg_expand_x_hidden_size");
            d
        }
    };
    let k = r.or("conv_kernel", 4, "ldg_mamba_default_conv_kernel_4")?;
    let rank = dt_rank(r, "time_step_rank", h)?;
    let proj_bias = r.flag(
        ("use_bias", "mamba_proj_bias"),
        false,
        "ldg_mamba_default_no_projection_biases",
    )?;
    let conv_bias = r.flag("use_conv_bias", true, "ldg_mamba_default_conv_bias")?;
    let tie = read_tie(r, true, "mamba")?;
    let cfg = Mamba1 {
        h,
        d,
        n,
        k,
        rank,
        proj_bias,
        conv_bias,
        inner_norms: false,
    };
    let parts = ssm_stack(r, (nl, h, vocab, tie), |acc| mamba1(acc, &cfg))?;
    r.derived(
        "kv_cache",
        0,
        "ldg_mamba_has_no_attention_constant_recurrent_st",
    );
    Ok(parts)
}
