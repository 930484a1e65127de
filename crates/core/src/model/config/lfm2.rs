//! LFM2 (`lfm2`): gated short convolutions and attention layers, a gated MLP in every layer.

use super::common::{not_one_per_layer, read_core, read_tie, Core};
use super::kit::{add_dense_ffn, finish_parts, Acc, Comp, Parts};
use super::reader::Reader;
use super::ssm::{attention, layer_indices, ssm_mixer};
use crate::base::checked::mul;
use crate::base::error::{CalcError, Phrase};
use crate::model::desc::{Layer, Mixer};
use serde_json::Value;

/// Which LFM2 layers attend: `layer_types` ("full_attention" or "conv") when given, else the
/// indices of `full_attn_idxs`, else every layer (as `Lfm2Config` reads them).
pub(super) fn lfm2_attention_layers(r: &mut Reader, n_layers: u64) -> Result<Vec<bool>, CalcError> {
    if let Some(types) = r.str_list("layer_types")? {
        if types.len() as u64 != n_layers {
            return Err(not_one_per_layer("layer_types", types.len(), n_layers));
        }
        return Ok(types.iter().map(|t| t != "conv").collect());
    }
    if r.find("full_attn_idxs").is_none() {
        r.derived(
            "attention_layers",
            n_layers,
            "ldg_lfm2_no_layer_kinds_all_attend",
        );
        return Ok(vec![true; usize::try_from(n_layers).unwrap_or(0)]);
    }
    let idx = layer_indices(r, "full_attn_idxs", n_layers)?;
    r.derived("attention_layers", idx.len(), "ldg_lfm2_full_attn_idxs");
    Ok((0..n_layers).map(|i| idx.contains(&i)).collect())
}

/// LFM2's MLP width: `block_ff_dim` (else `intermediate_size`), with
/// `block_auto_adjust_ff_dim` taken to `⌊2·I/3⌋`, then, unless `block_ffn_dim_multiplier` is
/// null, times it and rounded up to `block_multiple_of` (`Lfm2MLP`).
fn lfm2_ff_width(r: &mut Reader) -> Result<u64, CalcError> {
    let base = match r.opt("block_ff_dim")? {
        Some(i) => i,
        None => r.req("intermediate_size", "why_size_mlp_blocks")?,
    };
    let auto = r.flag(
        "block_auto_adjust_ff_dim",
        true,
        "ldg_lfm2_default_auto_adjust_ff_dim",
    )?;
    if !auto {
        return Ok(base);
    }
    let mut i = mul("ovf_intermediate", &[2, base])? / 3;
    // Lfm2Config defaults the multiplier to 1.0; an explicit null skips it and the rounding.
    let explicit_null = r
        .root()
        .get("block_ffn_dim_multiplier")
        .is_some_and(Value::is_null);
    let mult = match r.find("block_ffn_dim_multiplier") {
        None if explicit_null => None,
        None => {
            r.default_note(
                "block_ffn_dim_multiplier",
                1,
                "ldg_lfm2_default_multiplier_1",
            );
            Some(1.0)
        }
        Some((k, v)) => match v.as_f64() {
            Some(m) if m.is_finite() && m > 0.0 && m <= 64.0 => Some(m),
            _ => {
                return Err(CalcError::BadValue {
                    key: k.to_string(),
                    found: Phrase::verbatim(v.to_string().chars().take(40).collect::<String>()),
                    expected: Phrase::tr("exp_multiplier_range"),
                })
            }
        },
    };
    if let Some(m) = mult {
        // A multiplier up to 64 can take the width past u64: refuse it rather than saturate.
        let scaled = (m * i as f64).floor();
        if scaled >= 2f64.powi(63) {
            return Err(CalcError::Overflow {
                what: Phrase::tr("ovf_intermediate"),
            });
        }
        let of = r.or("block_multiple_of", 256, "ldg_lfm2_default_multiple_of_256")?;
        i = (scaled as u64).div_ceil(of) * of;
    }
    r.derived("intermediate_size", i, "ldg_lfm2_ff_width");
    Ok(i)
}

/// One LFM2 gated short convolution (`Lfm2ShortConv`): in_proj `h·3h`, depthwise conv `h·L`,
/// out_proj `h·h`, each with a bias under `conv_bias`. Its state (vLLM's
/// `short_conv_state_shape`): `(L − 1)·h` per sequence, no recurrent part.
pub(super) fn short_conv(acc: &mut Acc, h: u64, l: u64, bias: bool) -> Result<Mixer, CalcError> {
    let w = "ovf_ssm_params";
    acc.lin(Comp::Ssm, mul(w, &[3, h, h])?)?;
    acc.add(Comp::Ssm, mul(w, &[h, l])?)?;
    acc.lin(Comp::Ssm, mul(w, &[h, h])?)?;
    if bias {
        acc.add(Comp::Ssm, mul(w, &[5, h])?)?;
    }
    ssm_mixer((l, h), 0, (h, 0), None)
}

/// One LFM2 attention mixer: GQA q/k/v/out without biases, and the q/k layernorms over the
/// head (`2·d`).
pub(super) fn lfm2_attention(acc: &mut Acc, c: &Core) -> Result<Mixer, CalcError> {
    let m = attention(acc, c.h, (c.heads, c.kv, c.hd), false)?;
    acc.add(Comp::Attn, mul("ovf_attention_params", &[2, c.hd])?)?;
    Ok(m)
}

/// LFM2 (`lfm2`): per layer two RMSNorms (operator, FFN), a gated short convolution or, at the
/// attention layers, GQA attention without biases with q/k layernorms over the head (`2·d`);
/// a gated MLP in every layer ([`lfm2_ff_width`]); the final norm; embeddings, the head tied
/// unless the config unties it.
pub(super) fn lfm2(r: &mut Reader) -> Result<Parts, CalcError> {
    let c = read_core(r, "lfm2")?;
    let h = c.h;
    let tie = read_tie(r, true, "lfm2")?;
    let attends = lfm2_attention_layers(r, c.n_layers)?;
    let l = r.or("conv_L_cache", 3, "ldg_lfm2_default_conv_l_cache_3")?;
    let bias = r.flag("conv_bias", false, "ldg_no_conv_bias")?;
    let inter = lfm2_ff_width(r)?;
    let mut acc = Acc::default();
    let mut layers = Vec::new();
    for a in attends {
        acc.norms(2, h)?;
        let mixer = if a {
            lfm2_attention(&mut acc, &c)?
        } else {
            short_conv(&mut acc, h, l, bias)?
        };
        let ffn = add_dense_ffn(&mut acc, h, inter, true, false)?;
        layers.push(Layer { mixer, ffn });
    }
    finish_parts(r, layers, acc, (h, c.vocab, tie), 1)
}
