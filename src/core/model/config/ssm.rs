//! State-space models and hybrids: mamba, nemotron_h (Mamba-2 + attention + MLP), jamba
//! (Mamba + attention + MoE).
//!
//! Mamba (v1) mixer: in_proj `h·2D` (D = expand·h), conv1d `D·k` (+ `D` bias), x_proj
//! `D·(R + 2N)`, dt_proj `R·D + D`, A_log `D·N`, D `D`, out_proj `D·h`. Recurrent state per
//! sequence: conv `(k − 1)·D` + SSM `D·N` elements.
//! Mamba-2 mixer: in_proj `h·(2D + 2·g·N + H_m)`, conv1d `(D + 2gN)·k` (+ bias), dt_bias,
//! A_log, D (`H_m` each), gated norm `D`, out_proj `D·h`. State: conv `(k − 1)·(D + 2gN)` +
//! SSM `H_m·P·N` (P = head dim, H_m·P = D).
//! Falcon-H1: every layer runs GQA attention and a Mamba-2 mixer side by side on the same
//! input, then a gated MLP; it is described as two layers (the attention with no FFN, then
//! the Mamba-2 mixer with the MLP), so the KV of every attention and the state of every
//! mixer are both counted.

use super::reader::layer_count;
use super::reader::Reader;
use super::{
    add, add_attention, add_dense_ffn, add_embeddings, add_mlp, add_routed_experts, check_kv,
    finish_parts, full_attention, mul, read_head_dim, read_max_pos, read_tie, Acc, Comp, Parts,
};
use crate::core::base::dtype::Dtype;
use crate::core::base::error::{shorten, CalcError, Phrase};
use crate::core::model::desc::{Ffn, Layer, LedgerSource, Mixer, SsmGroups};
use serde_json::Value;

/// `time_step_rank` / `mamba_dt_rank`: a number, or "auto" = ⌈h / 16⌉, given by the config or
/// by its class (`JambaConfig` and `MambaConfig` default to "auto": a config that omits the key
/// gets ⌈h / 16⌉, and the ledger names the class).
fn dt_rank(r: &mut Reader, key: &'static str, h: u64) -> Result<u64, CalcError> {
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

/// Full attention (q/k/v/o, biases with `bias`) of `heads` query and `kv` key/value heads of
/// width `hd` in a model of width `h`; returns its mixer.
pub(super) fn attention(
    acc: &mut Acc,
    h: u64,
    (heads, kv, hd): (u64, u64, u64),
    bias: bool,
) -> Result<Mixer, CalcError> {
    add_attention(acc, h, heads, kv, hd, hd, bias, bias)?;
    Ok(full_attention(heads, kv, hd))
}

/// The width, layer count and vocabulary every SSM family states, in the ledger's order.
fn read_sizes(r: &mut Reader) -> Result<(u64, u64, u64), CalcError> {
    let h = r.req("hidden_size", "why_size_model")?;
    let nl = r.layers()?;
    let vocab = r.req("vocab_size", "why_size_embeddings")?;
    Ok((h, nl, vocab))
}

/// The attention layers' query heads, key/value heads (as many unless stated; checked) and
/// head width, in a model of width `h`.
fn read_attention(r: &mut Reader, h: u64) -> Result<(u64, u64, u64), CalcError> {
    let heads = r.req("num_attention_heads", "why_size_attention")?;
    let kv = r.or(
        ("kv_heads", "num_key_value_heads"),
        heads,
        "ldg_no_num_key_value_heads_equal_to",
    )?;
    check_kv(heads, kv, r.key_of("kv_heads"))?;
    let hd = read_head_dim(r, h, heads)?;
    Ok((heads, kv, hd))
}

/// A recurrent mixer of inner width `d_inner` and state size `d_state`, whose per-sequence
/// state is the convolution's window, `(k − 1)` steps of `conv_dim` channels, plus the
/// recurrent state of `recurrent` elements.
fn ssm_mixer(
    (k, conv_dim): (u64, u64),
    recurrent: u64,
    (d_inner, d_state): (u64, u64),
    groups: Option<SsmGroups>,
) -> Result<Mixer, CalcError> {
    let w = "ovf_ssm_params";
    Ok(Mixer::Ssm {
        state_elems: add(w, &[mul(w, &[k.saturating_sub(1), conv_dim])?, recurrent])?,
        d_inner,
        d_state,
        groups,
    })
}

/// A model of SSM layers only: per layer an RMSNorm `h` and a mixer (`mixer` adds it), a
/// final norm, the embeddings and the head unless tied.
fn ssm_stack(
    r: &mut Reader,
    (nl, h, vocab, tie): (u64, u64, u64, bool),
    mut mixer: impl FnMut(&mut Acc) -> Result<Mixer, CalcError>,
) -> Result<Parts, CalcError> {
    let mut acc = Acc::default();
    let mut layers = Vec::new();
    for _ in 0..nl {
        acc.add(Comp::Norms, h)?;
        layers.push(Layer {
            mixer: mixer(&mut acc)?,
            ffn: Ffn::None,
        });
    }
    acc.add(Comp::Norms, h)?;
    add_embeddings(r, &mut acc, vocab, h, tie)?;
    Ok(Parts::new(layers, acc, h, vocab, tie, None))
}

struct Mamba1 {
    h: u64,
    d: u64,
    n: u64,
    k: u64,
    rank: u64,
    proj_bias: bool,
    conv_bias: bool,
    inner_norms: bool,
}

/// Adds one Mamba-1 mixer and returns its mixer description.
fn mamba1(acc: &mut Acc, m: &Mamba1) -> Result<Mixer, CalcError> {
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

/// Nemotron-H's sizes besides the layer pattern.
struct NemotronH {
    h: u64,
    tie: bool,
    /// Mamba-2 inner width `H_m·P`.
    d: u64,
    /// conv1d channels `D + 2gN`.
    conv_dim: u64,
    heads: u64,
    kv: u64,
    hd: u64,
    inter: u64,
    mh: u64,
    mp: u64,
    n: u64,
    g: u64,
    k: u64,
    proj_bias: bool,
    conv_bias: bool,
    attn_bias: bool,
    mlp_bias: bool,
    /// The gated RMSNorm over the inner width (Falcon-H1 only with `mamba_rms_norm`).
    gated_norm: bool,
    /// The out_proj bias (`proj_bias` for Nemotron-H and Granite; `projectors_bias` for
    /// Falcon-H1).
    out_bias: bool,
}

impl NemotronH {
    /// A Mamba-2-only layout (no attention or MLP sizes: a hybrid sets them with struct
    /// update) of width `h`, `mh` heads of `mp`: inner width `D = H_m·P`, conv channels
    /// `D + 2gN`, the gated norm, and the out_proj bias following the projection bias.
    fn mamba(h: u64, tie: bool, mh: u64, mp: u64, s: Mamba2Sizes) -> Result<NemotronH, CalcError> {
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
        crate::core::model::desc::LedgerSource::Key("hybrid_override_pattern".into()),
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
            return Err(super::not_one_per_layer(
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
    let top_k = super::read_top_k(r, experts, None)?;
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
/// shared module parts ([`add_mtp_modules`](super::add_mtp_modules): three norms and the
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
    super::add_mtp_modules(r, acc, mtp, n, (vocab, m.h), super::MtpHeads::Shared)
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

/// Adds one Mamba-2 mixer (`M` in the pattern) and returns its mixer description.
fn mamba2(acc: &mut Acc, m: &NemotronH) -> Result<Mixer, CalcError> {
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
struct Mamba2Sizes {
    n: u64,
    g: u64,
    k: u64,
    proj_bias: bool,
    conv_bias: bool,
}

/// Reads [`Mamba2Sizes`] (in the ledger's order: state, groups, kernel, biases).
fn read_mamba2_sizes(r: &mut Reader) -> Result<Mamba2Sizes, CalcError> {
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

/// Reads GraniteMoeHybrid's Mamba-2 sizes (`mamba_d_head` "auto" = `expand·h / heads`).
fn read_granite_mamba(r: &mut Reader, h: u64, tie: bool) -> Result<NemotronH, CalcError> {
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
    let c = super::read_core(r, "granitemoehybrid")?;
    let h = c.h;
    let tie = read_tie(r, false, "granitemoehybrid")?;
    let types = r
        .str_list("layer_types")?
        .ok_or_else(|| CalcError::MissingKey {
            key: "layer_types".into(),
            why: Phrase::tr("why_layer_kinds"),
        })?;
    if types.len() as u64 != c.n_layers {
        return Err(super::not_one_per_layer(
            "layer_types",
            types.len(),
            c.n_layers,
        ));
    }
    let m = read_granite_mamba(r, h, tie)?;
    let attn_bias = r.flag("attention_bias", false, "ldg_no_attention_biases")?;
    let experts = r.or0(("experts", "num_local_experts"), 0, "ldg_no_shared_expert")?;
    let top_k = if experts > 0 {
        super::read_top_k(r, experts, None)?
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
fn qn_full_attention(acc: &mut Acc, c: &super::Core, gate: bool) -> Result<Mixer, CalcError> {
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

/// The precision the config keeps the recurrent state in, under `key`
/// ([`ModelDesc::ssm_state_dtype`](crate::core::model::desc::ModelDesc)): `float32`, `float16`
/// or `bfloat16` (vLLM's `MambaDType`); `None` (the model's precision) when the key is absent
/// or `auto`, or, with a warning, when it names anything else.
fn read_ssm_state_dtype(r: &mut Reader, key: &'static str) -> Option<Dtype> {
    let (k, s) = r.string(key)?;
    if s.trim().eq_ignore_ascii_case("auto") {
        r.note("ssm_state_dtype", "auto", LedgerSource::Key(k.to_string()));
        return None;
    }
    match Dtype::parse(s) {
        Ok(d @ (Dtype::Fp32 | Dtype::Fp16 | Dtype::Bf16)) => {
            r.note("ssm_state_dtype", d, LedgerSource::Key(k.to_string()));
            Some(d)
        }
        _ => {
            r.warnings.push(
                Phrase::tr("wrn_ssm_state_dtype")
                    .val("k", k)
                    .val("shown", shorten(s)),
            );
            None
        }
    }
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
    let top_k = super::read_top_k(r, experts, None)?;
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
enum NextFfn {
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
struct MtpKey {
    key: &'static str,
    why_one: &'static str,
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
    let c = super::read_core(r, "qwen3_next")?;
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

/// Qwen3.5 (`qwen3_5_text`, dense: a gated MLP of `intermediate_size` in every layer) and
/// Qwen3.5-MoE (`qwen3_5_moe_text`: Qwen3-Next's MoE in every layer): Qwen3-Next's layers
/// (transformers 5.24.0 builds `Qwen3_5GatedDeltaNet` with in_proj_qkv, in_proj_z, in_proj_b
/// and in_proj_a, the same sizes as Qwen3-Next's in_proj_qkvz and in_proj_ba). The MTP modules
/// are `mtp_num_hidden_layers` (one when absent, as the published checkpoints store), with the
/// same feed-forward as the main layers. The vision tower is counted apart
/// ([`super::vision::qwen_vl`]).
pub(super) fn qwen3_5(r: &mut Reader, moe: bool) -> Result<Parts, CalcError> {
    let fam = if moe { "qwen3_5_moe" } else { "qwen3_5" };
    let c = super::read_core(r, fam)?;
    let ffn = if moe {
        NextFfn::Moe(read_shared_moe(
            r,
            ("moe_intermediate_size", "shared_expert_intermediate_size"),
        )?)
    } else {
        NextFfn::Dense(r.req("intermediate_size", "why_size_mlp")?)
    };
    if r.flag(
        "mtp_use_dedicated_embeddings",
        false,
        "ldg_mtp_shares_embeddings",
    )? {
        r.warnings.push(Phrase::tr("wrn_mtp_dedicated_embeddings"));
    }
    let mtp = MtpKey {
        key: "mtp_num_hidden_layers",
        why_one: "ldg_qwen3_5_mtp_default",
    };
    let mut parts = gated_delta_hybrid(r, fam, &c, &ffn, &mtp)?;
    parts.ssm_state_dtype = read_ssm_state_dtype(r, "mamba_ssm_dtype");
    Ok(parts)
}

/// The layers of Qwen3-Next and Qwen3.5: full attention (gated unless `attn_output_gate` is
/// false) where `layer_types` says `full_attention` (without it, every
/// `full_attention_interval`-th layer, 4 as transformers fills it), Gated DeltaNet elsewhere,
/// `ffn` in every layer with two RMSNorms; final norm, embeddings, head, then the MTP modules
/// (full attention and `ffn`), which reuse the main embedding and head.
fn gated_delta_hybrid(
    r: &mut Reader,
    fam: &str,
    c: &super::Core,
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
        super::add_mtp_modules(r, &mut acc, m, mtp, (c.vocab, h), super::MtpHeads::Shared)?;
    }
    let max_pos = read_max_pos(r)?;
    Ok(Parts::new(layers, acc, h, c.vocab, tie, max_pos))
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
/// [`ModelDesc::layers`](crate::core::model::desc::ModelDesc).
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
    let top_k = super::read_top_k(r, experts, Some((2, "ldg_jamba_default_2_active_experts")))?;
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

/// Reads Falcon-H1's Mamba-2 sizes: inner width `mamba_d_ssm` (null: `mamba_expand·h`),
/// `mamba_n_heads`, `mamba_d_head` ("auto" = width / heads), `mamba_n_groups`,
/// `mamba_d_state`, `mamba_d_conv`; the gated norm only with `mamba_rms_norm`; in_proj bias
/// `mamba_proj_bias`, out_proj bias `projectors_bias`.
fn read_falcon_h1_mamba(
    r: &mut Reader,
    c: &super::Core,
    tie: bool,
) -> Result<NemotronH, CalcError> {
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
    let c = super::read_core(r, "falcon_h1")?;
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

/// The layer indices listed under `key` (empty when absent), each below `n_layers`.
fn layer_indices(r: &mut Reader, key: &'static str, n_layers: u64) -> Result<Vec<u64>, CalcError> {
    let idx = r.u64_list(key)?;
    if let Some(bad) = idx.iter().find(|i| **i >= n_layers) {
        return Err(CalcError::BadValue {
            key: key.into(),
            found: Phrase::verbatim(bad.to_string()),
            expected: Phrase::tr("exp_layer_index_below").val("n", n_layers),
        });
    }
    Ok(idx)
}

/// Bamba (`bamba`): per layer two RMSNorms (input, pre-FF), a Mamba-2 mixer or, at
/// `attn_layer_indices` (none: every layer is Mamba, as `BambaConfig` reads it), GQA
/// attention without biases; a gated MLP `3·h·I` in every layer; final norm; embeddings and
/// the head unless tied.
pub(super) fn bamba(r: &mut Reader) -> Result<Parts, CalcError> {
    let c = super::read_core(r, "bamba")?;
    let h = c.h;
    let tie = read_tie(r, false, "bamba")?;
    let attn = layer_indices(r, "attn_layer_indices", c.n_layers)?;
    r.derived("attention_layers", attn.len(), "ldg_bamba_attention_layers");
    let m = read_granite_mamba(r, h, tie)?;
    let inter = r.req("intermediate_size", "why_size_mlp_blocks")?;
    let mut acc = Acc::default();
    let mut layers = Vec::new();
    for i in 0..c.n_layers {
        acc.norms(2, h)?;
        let mixer = if attn.contains(&i) {
            attention(&mut acc, h, (c.heads, c.kv, c.hd), false)?
        } else {
            mamba2(&mut acc, &m)?
        };
        let ffn = add_dense_ffn(&mut acc, h, inter, true, false)?;
        layers.push(Layer { mixer, ffn });
    }
    finish_parts(r, layers, acc, (h, c.vocab, tie), 1)
}

/// Which LFM2 layers attend: `layer_types` ("full_attention" or "conv") when given, else the
/// indices of `full_attn_idxs`, else every layer (as `Lfm2Config` reads them).
fn lfm2_attention_layers(r: &mut Reader, n_layers: u64) -> Result<Vec<bool>, CalcError> {
    if let Some(types) = r.str_list("layer_types")? {
        if types.len() as u64 != n_layers {
            return Err(super::not_one_per_layer(
                "layer_types",
                types.len(),
                n_layers,
            ));
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
fn short_conv(acc: &mut Acc, h: u64, l: u64, bias: bool) -> Result<Mixer, CalcError> {
    let w = "ovf_ssm_params";
    acc.lin(Comp::Ssm, mul(w, &[3, h, h])?)?;
    acc.add(Comp::Ssm, mul(w, &[h, l])?)?;
    acc.lin(Comp::Ssm, mul(w, &[h, h])?)?;
    if bias {
        acc.add(Comp::Ssm, mul(w, &[5, h])?)?;
    }
    ssm_mixer((l, h), 0, (h, 0), None)
}

/// LFM2 (`lfm2`): per layer two RMSNorms (operator, FFN), a gated short convolution or, at the
/// attention layers, GQA attention without biases with q/k layernorms over the head (`2·d`);
/// a gated MLP in every layer ([`lfm2_ff_width`]); the final norm; embeddings, the head tied
/// unless the config unties it.
pub(super) fn lfm2(r: &mut Reader) -> Result<Parts, CalcError> {
    let c = super::read_core(r, "lfm2")?;
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
            let m = attention(&mut acc, h, (c.heads, c.kv, c.hd), false)?;
            acc.add(Comp::Attn, mul("ovf_attention_params", &[2, c.hd])?)?;
            m
        } else {
            short_conv(&mut acc, h, l, bias)?
        };
        let ffn = add_dense_ffn(&mut acc, h, inter, true, false)?;
        layers.push(Layer { mixer, ffn });
    }
    finish_parts(r, layers, acc, (h, c.vocab, tie), 1)
}
