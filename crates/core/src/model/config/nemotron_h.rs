//! NVIDIA Nemotron-H (`nemotron_h`): Mamba-2, attention, MLP and MoE blocks in the order of a
//! layer pattern, and its multi-token-prediction layers.

use super::common::{not_one_per_layer, read_max_pos, read_tie, read_top_k};
use super::kit::{
    add_dense_ffn, add_embeddings, add_mlp, add_mtp_modules, Acc, Comp, MtpHeads, Parts,
};
use super::mamba2::{mamba2, Mamba2Sizes, NemotronH};
use super::reader::{layer_count, Reader};
use super::ssm::{attention, read_attention, read_sizes, read_ssm_state_dtype};
use crate::base::checked::{add, mul};
use crate::base::error::{shorten, CalcError, Phrase};
use crate::model::desc::{Ffn, Layer, Mixer};

/// Reads `hybrid_override_pattern`, which must have one character per layer.
fn read_pattern(r: &mut Reader, nl: u64) -> Result<String, CalcError> {
    let pattern = r
        .string("hybrid_override_pattern")
        .map(|(_, s)| s.to_string())
        .ok_or_else(|| CalcError::MissingKey {
            key: "hybrid_override_pattern".into(),
            why: Phrase::tr("why_layer_kinds"),
        })?;
    if pattern.chars().count() as u64 != nl {
        return Err(CalcError::BadValue {
            key: "hybrid_override_pattern".into(),
            found: Phrase::tr("fnd_chars").val("n", pattern.chars().count()),
            expected: Phrase::tr("exp_one_char_per_layer").val("n", nl),
        });
    }
    r.note(
        "hybrid_override_pattern",
        &pattern,
        crate::model::desc::LedgerSource::Key("hybrid_override_pattern".into()),
    );
    Ok(pattern)
}

/// Nemotron-H's layer kinds as one character per layer (`M` Mamba-2, `*` attention, `-` MLP,
/// `E` MoE): `hybrid_override_pattern` with `num_hidden_layers`, or, in a config saved by
/// transformers 5 (which writes no pattern and may write no layer count), the list
/// `layers_block_type` (`layer_types`), its legacy names (`mamba`, `attention`) mapped as
/// transformers' `remap_legacy_layer_types` maps them. Returns the width, the layer count and
/// the vocabulary beside the pattern.
fn read_kinds(r: &mut Reader) -> Result<(u64, u64, u64, String), CalcError> {
    let listed =
        r.find("hybrid_override_pattern").is_none() && r.find("layers_block_type").is_some();
    if listed && r.find("num_hidden_layers").is_none() {
        let h = r.req("hidden_size", "why_size_model")?;
        let pattern = pattern_of_list(r, "layers_block_type", "hybrid_override_pattern")?;
        let nl = pattern.chars().count() as u64;
        r.derived("num_hidden_layers", nl, "ldg_layers_from_block_types");
        let vocab = r.req("vocab_size", "why_size_embeddings")?;
        return Ok((h, nl, vocab, pattern));
    }
    let (h, nl, vocab) = read_sizes(r)?;
    let pattern = if listed {
        let p = pattern_of_list(r, "layers_block_type", "hybrid_override_pattern")?;
        if p.chars().count() as u64 != nl {
            return Err(not_one_per_layer(
                "layers_block_type",
                p.chars().count(),
                nl,
            ));
        }
        p
    } else {
        read_pattern(r, nl)?
    };
    Ok((h, nl, vocab, pattern))
}

/// The list of block types under `list` (`layers_block_type`, `mtp_layers_block_type`) as a
/// pattern string (one character per entry), noted in the ledger as `field`.
fn pattern_of_list(r: &mut Reader, list: &'static str, field: &str) -> Result<String, CalcError> {
    let types = r.str_list(list)?.unwrap_or_default();
    let key = r.key_of(list).unwrap_or(list).to_string();
    let mut pattern = String::with_capacity(types.len());
    for t in &types {
        pattern.push(match t.as_str() {
            "linear_attention" | "mamba" => 'M',
            "full_attention" | "attention" => '*',
            "mlp" => '-',
            "moe" => 'E',
            other => {
                return Err(CalcError::BadValue {
                    key,
                    found: Phrase::verbatim(shorten(other)),
                    expected: Phrase::tr("exp_nemotron_block_types"),
                })
            }
        });
    }
    layer_count(&key, pattern.len() as u64)?;
    r.derived(field, &pattern, "ldg_pattern_from_block_types");
    Ok(pattern)
}

/// Nemotron-H's MoE block (`E`), as transformers 5.24.0's `NemotronHMoE` and vLLM 0.14.0 build
/// it: a sigmoid router `E·h` with its `e_score_correction_bias` `E` (both fp32 in vLLM), `E`
/// plain experts (up and down, relu²) `2·E·I·w` at the width `w` (`h`, or the latent width `L`
/// of a latent MoE, which adds the projections `fc1_latent_proj` `h·L` and `fc2_latent_proj`
/// `L·h`, with biases under `mlp_bias`), and one plain shared MLP of width
/// `S·n_shared_experts` on `h` (none with no shared expert, as vLLM builds it).
struct NemotronMoe {
    experts: u64,
    top_k: u64,
    inter: u64,
    shared: u64,
    latent: Option<u64>,
}

/// Reads the MoE sizes (the class defaults where absent).
fn read_nemotron_moe(r: &mut Reader) -> Result<NemotronMoe, CalcError> {
    let experts = r.req(("experts", "n_routed_experts"), "why_count_experts")?;
    let top_k = read_top_k(r, experts, None)?;
    let inter = r.req(
        ("expert_intermediate", "moe_intermediate_size"),
        "why_size_experts",
    )?;
    let latent = r.opt(("moe_latent_size", "moe_latent_size"))?;
    let n_shared = r.or0(
        ("shared_experts", "n_shared_experts"),
        1,
        "ldg_nemotron_h_one_shared_expert",
    )?;
    let shared = if n_shared > 0 {
        let s = r.req(
            ("shared_intermediate", "moe_shared_expert_intermediate_size"),
            "why_size_experts",
        )?;
        mul("ovf_expert_params", &[s, n_shared])?
    } else {
        0
    };
    Ok(NemotronMoe {
        experts,
        top_k,
        inter,
        shared,
        latent,
    })
}

/// Adds one Nemotron-H MoE block's parameters (its norm is the caller's) and returns its
/// feed-forward.
fn nemotron_moe(acc: &mut Acc, h: u64, m: &NemotronMoe, mlp_bias: bool) -> Result<Ffn, CalcError> {
    let w = "ovf_expert_params";
    let router = add(w, &[mul(w, &[m.experts, h])?, m.experts])?;
    acc.add(Comp::Router, router)?;
    acc.router_fp32(router)?;
    let per = mul(w, &[2, m.latent.unwrap_or(h), m.inter])?;
    acc.lin(Comp::Experts, mul(w, &[m.experts, per])?)?;
    acc.skip(mul(w, &[m.experts - m.top_k, per])?)?;
    if let Some(l) = m.latent {
        acc.lin(Comp::Mlp, mul(w, &[2, h, l])?)?;
        if mlp_bias {
            acc.add(Comp::Mlp, add(w, &[l, h])?)?;
        }
    }
    if m.shared > 0 {
        add_mlp(acc, Comp::Mlp, h, m.shared, false, mlp_bias)?;
    }
    Ok(Ffn::Moe {
        experts: m.experts,
        top_k: m.top_k,
        expert_intermediate: m.inter,
        shared_experts: u64::from(m.shared > 0),
        shared_intermediate: m.shared,
        gated: false,
        latent: m.latent,
    })
}

/// Nemotron-H's multi-token-prediction layers as the checkpoint stores them (Nemotron 3
/// Super): `num_nextn_predict_layers` modules, each the blocks of `mtp_hybrid_override_pattern`
/// (`mtp_layers_block_type`; `*E`, attention then MoE, by default) with their norms, and the
/// shared module parts ([`add_mtp_modules`](add_mtp_modules): three norms and the
/// `2h·h` projection; the main embedding and head are reused). Part of the checkpoint's total,
/// not of the language model; vLLM 0.14.0 skips `mtp.*` when loading.
fn nemotron_mtp(
    r: &mut Reader,
    acc: &mut Acc,
    m: &NemotronH,
    moe: Option<&NemotronMoe>,
    vocab: u64,
) -> Result<(), CalcError> {
    if r.find("num_nextn_predict_layers").is_none() {
        return Ok(());
    }
    let n = r.or0(
        ("mtp_layers", "num_nextn_predict_layers"),
        0,
        "ldg_nemotron_h_no_mtp",
    )?;
    if n == 0 {
        return Ok(());
    }
    let pattern = match r.string("mtp_hybrid_override_pattern") {
        Some((_, p)) => p.to_string(),
        None if r.find("mtp_layers_block_type").is_some() => {
            pattern_of_list(r, "mtp_layers_block_type", "mtp_hybrid_override_pattern")?
        }
        None => {
            r.default_note(
                "mtp_hybrid_override_pattern",
                "*E",
                "ldg_nemotron_h_mtp_blocks",
            );
            "*E".to_string()
        }
    };
    let mut mtp = Acc::default();
    let mut layers = Vec::new();
    for _ in 0..n {
        for c in pattern.chars() {
            nemotron_block(&mut mtp, m, moe, c, &mut layers)?;
        }
    }
    mtp.mtp_layers = layers;
    add_mtp_modules(r, acc, mtp, n, (vocab, m.h), MtpHeads::Shared)
}

/// Reads Nemotron-H's attention, MLP and Mamba-2 sizes and biases (after the pattern), then
/// the tie, and computes the Mamba-2 inner and conv widths.
fn read_nemotron_h(r: &mut Reader, h: u64) -> Result<NemotronH, CalcError> {
    let (heads, kv, hd) = read_attention(r, h)?;
    let inter = r.req("intermediate_size", "why_size_mlp_blocks")?;
    let mh = r.req("mamba_num_heads", "why_size_mamba2")?;
    let mp = r.req("mamba_head_dim", "why_size_mamba2")?;
    let n = r.or(
        ("ssm_state_size", "state_size"),
        128,
        "ldg_nemotron_h_default_state_size_128",
    )?;
    let g = r.or("n_groups", 8, "ldg_nemotron_h_default_8_groups")?;
    let k = r.or("conv_kernel", 4, "ldg_nemotron_h_default_conv_kernel_4")?;
    let proj_bias = r.flag("mamba_proj_bias", false, "ldg_no_mamba_projection_biases")?;
    let conv_bias = r.flag("use_conv_bias", true, "ldg_conv_bias")?;
    let attn_bias = r.flag("attention_bias", false, "ldg_no_attention_biases")?;
    let mlp_bias = r.flag("mlp_bias", false, "ldg_no_mlp_biases")?;
    let tie = read_tie(r, false, "nemotron_h")?;
    let sizes = Mamba2Sizes {
        n,
        g,
        k,
        proj_bias,
        conv_bias,
    };
    Ok(NemotronH {
        heads,
        kv,
        hd,
        inter,
        attn_bias,
        mlp_bias,
        ..NemotronH::mamba(h, tie, mh, mp, sizes)?
    })
}

/// Adds one pattern character's block (with its RMSNorm) to `layers`: a Mamba-2 or attention
/// layer, or an MLP attached to the preceding mixer (a layer of its own if there is none free).
fn nemotron_block(
    acc: &mut Acc,
    m: &NemotronH,
    moe: Option<&NemotronMoe>,
    c: char,
    layers: &mut Vec<Layer>,
) -> Result<(), CalcError> {
    acc.add(Comp::Norms, m.h)?;
    let ffn = match (c, moe) {
        ('M', _) => {
            let mixer = mamba2(acc, m)?;
            layers.push(Layer {
                mixer,
                ffn: Ffn::None,
            });
            return Ok(());
        }
        ('*', _) => {
            layers.push(Layer {
                mixer: attention(acc, m.h, (m.heads, m.kv, m.hd), m.attn_bias)?,
                ffn: Ffn::None,
            });
            return Ok(());
        }
        ('-', _) => add_dense_ffn(acc, m.h, m.inter, false, m.mlp_bias)?,
        ('E', Some(moe)) => nemotron_moe(acc, m.h, moe, m.mlp_bias)?,
        (other, _) => {
            return Err(CalcError::BadValue {
                key: "hybrid_override_pattern".into(),
                found: Phrase::tr("fnd_char").val("c", other),
                expected: Phrase::tr("exp_hybrid_chars"),
            })
        }
    };
    match layers.last_mut() {
        Some(l) if l.ffn == Ffn::None => l.ffn = ffn,
        _ => layers.push(Layer {
            mixer: Mixer::Ssm {
                state_elems: 0,
                d_inner: 0,
                d_state: 0,
                groups: None,
            },
            ffn,
        }),
    }
    Ok(())
}

/// NVIDIA Nemotron-H: `hybrid_override_pattern` (M = Mamba-2, * = attention, - = MLP, E = MoE)
/// or `layers_block_type`, one RMSNorm per block, final norm. An MLP or MoE block is attached
/// to the preceding mixer block's feed-forward slot in
/// [`ModelDesc::layers`](crate::model::desc::ModelDesc).
pub(super) fn nemotron_h(r: &mut Reader) -> Result<Parts, CalcError> {
    let (h, _, vocab, pattern) = read_kinds(r)?;
    let m = read_nemotron_h(r, h)?;
    let moe = if pattern.contains('E') {
        Some(read_nemotron_moe(r)?)
    } else {
        None
    };
    let tie = m.tie;
    let mut acc = Acc::default();
    let mut layers: Vec<Layer> = Vec::new();
    for c in pattern.chars() {
        nemotron_block(&mut acc, &m, moe.as_ref(), c, &mut layers)?;
    }
    // The final norm and the embeddings before the MTP modules, whose warning names the main
    // model's count.
    acc.norms(1, h)?;
    add_embeddings(r, &mut acc, vocab, h, tie)?;
    nemotron_mtp(r, &mut acc, &m, moe.as_ref(), vocab)?;
    let max_pos = read_max_pos(r)?;
    let mut parts = Parts::new(layers, acc, h, vocab, tie, max_pos);
    parts.ssm_state_dtype = read_ssm_state_dtype(r, "mamba_ssm_cache_dtype");
    Ok(parts)
}
