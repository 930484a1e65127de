//! Gemma 4 (`gemma4`, `gemma4_text`), counted as transformers' `modeling_gemma4.py` builds it
//! and as the published checkpoints store it (the class defaults of `Gemma4TextConfig`,
//! `Gemma4VisionConfig` and `Gemma4AudioConfig` are in `data/config_defaults.csv`).
//!
//! - Layers: `layer_types` names each one sliding or full (default: every 6th full; the last
//!   layer is always full). A sliding layer has `num_key_value_heads` KV heads of `head_dim`; a
//!   full one has heads of `global_head_dim` and, with `attention_k_eq_v`, its own
//!   `num_global_key_value_heads` KV heads and no `v_proj` (the key is reused as the value).
//! - Each layer: q/o `2·h·H·d`, k `h·K·d`, v `h·K·d` (not on a k_eq_v layer), q/k norms `2d`
//!   (the v norm has no weight), a gated MLP `3·h·I` (`2I` wide on the KV-sharing layers with
//!   `use_double_wide_mlp`), four norms `4h` and the stored `layer_scalar` (one number).
//! - `enable_moe_block`: beside the dense MLP, a router (`E·h` projection, its `h` scale and
//!   `E` per-expert scales), `E` experts `3·h·I_e` of which a token uses `top_k_experts`, and
//!   three more norms `3h`.
//! - Per-layer embeddings (`hidden_size_per_layer_input` `p` > 0): each layer's gate and
//!   projection `2·h·p` and norm `h`; the table `V_p·L·p`, its projection `h·L·p` and norm `p`.
//! - Embedding `V·h` (tied to the head by default), final norm `h`.
//! - Vision tower (`vision_config`, none without it): patch projection `3·P²·v`, the 2-D
//!   position table `2·N·v`, per layer q/k/v/o, q/k norms `2d`, four norms `4v`, a gated MLP
//!   `3·v·I`; `std_bias`/`std_scale` `2v` with `standardize`; its projection `v·h` into the
//!   language model.
//! - Audio tower (`audio_config`, none without it): two sub-sampling convolutions
//!   `9·c₀ + 9·c₀·c₁` with their norms `c₀ + c₁`, the input projection `(c₀/4)·c₁·a`; per
//!   conformer layer two feed-forward modules `2·(8a² + 2a)`, attention `5a² + a/heads`, the
//!   light convolution `3a² + k·a + 2a`, three norms `3a`; the output projection `a·o + o` and
//!   its projection `o·h` into the language model.
//!
//! With `use_clipped_linears` every clipped linear of a tower stores four 0-dimensional clamp
//! bounds; the Hub's safetensors total leaves 0-dimensional tensors out, so they are named in
//! the ledger and not counted. The last `num_kv_shared_layers` layers reuse the KV cache of
//! the last earlier layer of their kind ([`super::kit::Parts::kv_shared`]); the checkpoint
//! still stores their k/v projections and k norm.

use super::common::{check_kv, not_one_per_layer, read_core, read_tie};
use super::defaults::{class_for, nested};
use super::gemma3n::{finish_kv_shared, need_list, part_reader};
use super::kit::{
    add_attention, add_dense_ffn, add_embeddings, add_mlp, add_routed_experts, windowed_attention,
    Acc, Comp, Parts,
};
use super::reader::{layer_count, Reader};
use crate::base::checked::{add, mul};
use crate::base::error::{shorten, CalcError, Phrase};
use crate::model::desc::Layer;
use serde_json::{Map, Value};

const W: &str = "ovf_param_count";

/// Clamp bounds a clipped linear stores (`input_min`, `input_max`, `output_min`,
/// `output_max`), each a 0-dimensional tensor.
const CLIP_BOUNDS: u64 = 4;

/// The attention of one kind of layer: KV heads, head size, and whether it has a `v_proj`.
#[derive(Clone, Copy)]
struct Attn {
    kv: u64,
    d: u64,
    v_proj: bool,
}

/// The routed experts of `enable_moe_block`: count, per token, width.
struct Moe {
    experts: u64,
    top_k: u64,
    width: u64,
}

/// Whether each layer is a full-attention one: `layer_types`, else every 6th; the last layer
/// is made full as transformers does (with a warning when the list says otherwise).
fn full_layers(r: &mut Reader, n: u64) -> Result<Vec<bool>, CalcError> {
    let count = usize::try_from(n).map_err(|_| CalcError::Overflow {
        what: Phrase::tr("ovf_layer_count"),
    })?;
    let mut full = match r.str_list("layer_types")? {
        Some(types) => {
            if types.len() != count {
                return Err(not_one_per_layer("layer_types", types.len(), n));
            }
            let mut out = Vec::with_capacity(count);
            for t in &types {
                out.push(match t.as_str() {
                    "full_attention" => true,
                    "sliding_attention" => false,
                    other => {
                        return Err(CalcError::BadValue {
                            key: "layer_types".into(),
                            found: Phrase::tr("fnd_text").val("s", shorten(other)),
                            expected: Phrase::tr("exp_one_of")
                                .val("list", "\"sliding_attention\", \"full_attention\""),
                        })
                    }
                });
            }
            out
        }
        None => {
            r.derived(
                "window_layers",
                "ℓ + 1 ≢ 0 (mod 6)",
                "ldg_gemma4_every_6th_global",
            );
            (1..=n).map(|i| i.is_multiple_of(6)).collect()
        }
    };
    if let Some(last) = full.last_mut() {
        if !*last {
            *last = true;
            r.warnings
                .push(Phrase::tr("wrn_gemma4_last_layer_full").val("layer", n - 1));
        }
    }
    Ok(full)
}

/// The full-attention layers' shape: `global_head_dim` (the sliding `head_dim` when null),
/// and with `attention_k_eq_v` their own KV heads and no `v_proj`.
fn global_attention(r: &mut Reader, heads: u64, sliding: Attn) -> Result<Attn, CalcError> {
    let d = match r.opt("global_head_dim")? {
        Some(d) => d,
        None => {
            r.derived(
                "global_head_dim",
                sliding.d,
                "ldg_gemma4_global_head_dim_is_head_dim",
            );
            sliding.d
        }
    };
    let k_eq_v = r.flag("attention_k_eq_v", false, "ldg_gemma4_no_k_eq_v")?;
    let kv = if k_eq_v {
        match r.opt(("global_kv_heads", "num_global_key_value_heads"))? {
            Some(g) => {
                check_kv(heads, g, r.key_of("global_kv_heads"))?;
                g
            }
            None => {
                r.default_note(
                    "global_kv_heads",
                    sliding.kv,
                    "ldg_gemma4_no_global_kv_heads",
                );
                sliding.kv
            }
        }
    } else {
        r.derived(
            "global_kv_heads",
            sliding.kv,
            "ldg_gemma4_global_kv_heads_same",
        );
        sliding.kv
    };
    Ok(Attn {
        kv,
        d,
        v_proj: !k_eq_v,
    })
}

/// The routed experts when `enable_moe_block` is set.
fn read_moe(r: &mut Reader) -> Result<Option<Moe>, CalcError> {
    if !r.flag("enable_moe_block", false, "ldg_gemma4_no_moe_block")? {
        return Ok(None);
    }
    let experts =
        r.opt(("experts", "num_local_experts"))?
            .ok_or_else(|| CalcError::MissingKey {
                key: "num_experts".into(),
                why: Phrase::tr("why_count_experts"),
            })?;
    let top_k = r.req(
        ("experts_per_token", "top_k_experts"),
        "why_count_active_experts",
    )?;
    if top_k > experts {
        return Err(CalcError::BadValue {
            key: "top_k_experts".into(),
            found: Phrase::verbatim(top_k.to_string()),
            expected: Phrase::tr("exp_at_most_experts").val("experts", experts),
        });
    }
    // vLLM reads `moe_intermediate_size`, else `expert_intermediate_size`.
    let width = match r.opt(("expert_intermediate", "moe_intermediate_size"))? {
        Some(w) => w,
        None => r
            .opt(("expert_intermediate", "expert_intermediate_size"))?
            .ok_or_else(|| CalcError::MissingKey {
                key: "moe_intermediate_size".into(),
                why: Phrase::tr("why_size_experts"),
            })?,
    };
    r.derived("moe_block", "dense MLP + experts", "ldg_gemma4_moe_block");
    Ok(Some(Moe {
        experts,
        top_k,
        width,
    }))
}

/// One layer's attention into `acc`: q/k/v/o (no v on a k_eq_v layer) and the q and k norms.
fn attention(acc: &mut Acc, h: u64, heads: u64, a: Attn, bias: bool) -> Result<(), CalcError> {
    if a.v_proj {
        add_attention(acc, h, heads, a.kv, a.d, a.d, bias, bias)?;
    } else {
        let w = "ovf_attention_params";
        acc.lin(Comp::Attn, mul(w, &[2, h, heads, a.d])?)?;
        acc.lin(Comp::Attn, mul(w, &[h, a.kv, a.d])?)?;
        if bias {
            acc.add(
                Comp::Attn,
                add(w, &[mul(w, &[heads, a.d])?, mul(w, &[a.kv, a.d])?, h])?,
            )?;
        }
    }
    acc.add(Comp::Attn, mul(W, &[2, a.d])?)
}

/// The Gemma 4 language model.
pub(super) fn build(r: &mut Reader) -> Result<Parts, CalcError> {
    let c = read_core(r, "gemma4")?;
    let (h, n, heads) = (c.h, c.n_layers, c.heads);
    let tie = read_tie(r, true, "gemma4")?;
    let inter = r.req("intermediate_size", "why_size_mlp")?;
    let full = full_layers(r, n)?;
    let window = r.limit("sliding_window")?;
    if window.is_none() && full.contains(&false) {
        r.warnings.push(Phrase::tr("wrn_sliding_without_window"));
    }
    let sliding = Attn {
        kv: c.kv,
        d: c.hd,
        v_proj: true,
    };
    let global = global_attention(r, heads, sliding)?;
    let bias = r.flag("attention_bias", false, "ldg_default_no_attention_biases")?;
    let shared = r.or0("num_kv_shared_layers", 0, "ldg_gemma4_no_kv_sharing")?;
    if shared >= n {
        return Err(CalcError::range_error(
            Phrase::verbatim("num_kv_shared_layers"),
            shared,
            Phrase::tr("rng_below").val("n", n),
        ));
    }
    let first_shared = n - shared;
    let double_wide = r.flag("use_double_wide_mlp", false, "ldg_gemma4_no_double_wide")?;
    let ple = r.or0("hidden_size_per_layer_input", 0, "ldg_gemma4_no_ple")?;
    let moe = read_moe(r)?;

    let mut acc = Acc::default();
    let mut layers = Vec::with_capacity(full.len());
    for (i, is_full) in (0u64..).zip(&full) {
        let a = if *is_full { global } else { sliding };
        attention(&mut acc, h, heads, a, bias)?;
        let wide = double_wide && shared > 0 && i >= first_shared;
        let width = if wide { mul(W, &[2, inter])? } else { inter };
        acc.norms(4, h)?;
        let ffn = match &moe {
            None => add_dense_ffn(&mut acc, h, width, true, false)?,
            Some(m) => {
                add_mlp(&mut acc, Comp::Mlp, h, width, true, false)?;
                let ffn =
                    add_routed_experts(&mut acc, h, (m.experts, m.top_k, m.width), (1, width))?;
                // The router's scale and per-expert scales; the three norms around the experts.
                acc.add(Comp::Router, add(W, &[h, m.experts])?)?;
                acc.norms(3, h)?;
                ffn
            }
        };
        if ple > 0 {
            acc.lin(Comp::Other, mul(W, &[2, h, ple])?)?;
            acc.norms(1, h)?;
        }
        layers.push(Layer {
            mixer: windowed_attention(heads, a.kv, a.d, if *is_full { None } else { window }),
            ffn,
        });
    }
    if double_wide && shared > 0 {
        r.derived("double_wide_layers", shared, "ldg_gemma4_double_wide");
    }
    acc.add(Comp::Other, n)?;
    r.derived("layer_scalars", n, "ldg_gemma4_layer_scalars");
    if ple > 0 {
        let per_layer_vocab = r.req("vocab_size_per_layer_input", "why_size_embeddings")?;
        let all = mul(W, &[n, ple])?;
        let table = mul(W, &[per_layer_vocab, all])?;
        acc.add(Comp::Emb, table)?;
        acc.add(Comp::Other, mul(W, &[h, all])?)?;
        acc.add(Comp::Norms, ple)?;
        r.derived(
            "per_layer_embeddings",
            table,
            "ldg_gemma4_per_layer_embeddings",
        );
    }
    acc.norms(1, h)?;
    add_embeddings(r, &mut acc, c.vocab, h, tie)?;
    finish_kv_shared(
        r,
        layers,
        acc,
        (h, c.vocab, tie),
        (n, shared),
        "ldg_gemma4_kv_shared",
    )
}

/// The sizes of the vision tower, and its clipped linears' bounds (not counted).
fn vision(v: &mut Reader, text_h: u64) -> Result<(u64, u64), CalcError> {
    let why = "why_size_vision";
    let vh = v.req(("vision.hidden_size", "hidden_size"), why)?;
    let vi = v.req(("vision.intermediate_size", "intermediate_size"), why)?;
    let field = "vision.num_hidden_layers";
    let vl = layer_count(field, v.req((field, "num_hidden_layers"), why)?)?;
    let heads = v.req(("vision.num_attention_heads", "num_attention_heads"), why)?;
    let kv = v.req(("vision.num_key_value_heads", "num_key_value_heads"), why)?;
    check_kv(heads, kv, v.key_of("vision.num_key_value_heads"))?;
    let d = v.req(("vision.head_dim", "head_dim"), why)?;
    let patch = v.req(("vision.patch_size", "patch_size"), why)?;
    let positions = v.req(
        ("vision.position_embedding_size", "position_embedding_size"),
        why,
    )?;
    let standardize = v.flag(
        ("vision.standardize", "standardize"),
        false,
        "ldg_gemma4_no_standardize",
    )?;
    let clipped = v.flag(
        ("vision.use_clipped_linears", "use_clipped_linears"),
        false,
        "ldg_gemma4_no_clipped_linears",
    )?;
    let layer = add(
        W,
        &[
            mul(W, &[2, vh, heads, d])?,
            mul(W, &[2, vh, kv, d])?,
            mul(W, &[2, d])?,
            mul(W, &[4, vh])?,
            mul(W, &[3, vh, vi])?,
        ],
    )?;
    let total = add(
        W,
        &[
            mul(W, &[3, patch, patch, vh])?,
            mul(W, &[2, positions, vh])?,
            mul(W, &[vl, layer])?,
            if standardize { mul(W, &[2, vh])? } else { 0 },
            mul(W, &[vh, text_h])?,
        ],
    )?;
    // q, k, v, o and the MLP's gate, up and down.
    let bounds = if clipped {
        mul(W, &[vl, 7, CLIP_BOUNDS])?
    } else {
        0
    };
    v.derived("vision_parameters", total, "ldg_gemma4_vision_tower");
    Ok((total, bounds))
}

/// The sizes of the audio tower, and its clipped linears' bounds (not counted).
fn audio(v: &mut Reader, text_h: u64) -> Result<(u64, u64), CalcError> {
    let why = "why_size_audio";
    let a = v.req(("audio.hidden_size", "hidden_size"), why)?;
    let field = "audio.num_hidden_layers";
    let layers = layer_count(field, v.req((field, "num_hidden_layers"), why)?)?;
    let heads = v.req(("audio.num_attention_heads", "num_attention_heads"), why)?;
    let kernel = v.req(("audio.conv_kernel_size", "conv_kernel_size"), why)?;
    let out = v.req(("audio.output_proj_dims", "output_proj_dims"), why)?;
    let ch = need_list(v, "subsampling_conv_channels", 2)?;
    let clipped = v.flag(
        ("audio.use_clipped_linears", "use_clipped_linears"),
        false,
        "ldg_gemma4_no_clipped_linears",
    )?;
    let (c0, c1) = (ch[0], ch[1]);
    // Two 3×3 convolutions without bias, each with a LayerNorm weight; the input projection
    // reads (c₀ / 4) · c₁ features (modeling_gemma4.py's `proj_input_dim`).
    let subsample = add(
        W,
        &[
            mul(W, &[9, c0])?,
            c0,
            mul(W, &[9, c0, c1])?,
            c1,
            mul(W, &[c0 / 4, c1, a])?,
        ],
    )?;
    let feed_forward = add(W, &[mul(W, &[8, a, a])?, mul(W, &[2, a])?])?;
    let attention = add(W, &[mul(W, &[5, a, a])?, a / heads])?;
    let light_conv = add(
        W,
        &[mul(W, &[3, a, a])?, mul(W, &[kernel, a])?, mul(W, &[2, a])?],
    )?;
    let layer = add(
        W,
        &[
            mul(W, &[2, feed_forward])?,
            attention,
            light_conv,
            mul(W, &[3, a])?,
        ],
    )?;
    let total = add(
        W,
        &[
            subsample,
            mul(W, &[layers, layer])?,
            mul(W, &[a, out])?,
            out,
            mul(W, &[out, text_h])?,
        ],
    )?;
    // Two per feed-forward module, q, k, v, post, and the light convolution's two.
    let bounds = if clipped {
        mul(W, &[layers, 10, CLIP_BOUNDS])?
    } else {
        0
    };
    v.derived("audio_parameters", total, "ldg_gemma4_audio_tower");
    Ok((total, bounds))
}

/// Counts the towers of a `gemma4` config into `acc`: each of `vision_config` and
/// `audio_config` that is an object (transformers builds no tower for an absent or null one).
pub(super) fn towers(
    r: &mut Reader,
    acc: &mut Acc,
    root: &Map<String, Value>,
    text_h: u64,
) -> Result<(), CalcError> {
    let root_class = class_for("gemma4");
    let class_of = |key: &str, own: &str| nested(root_class, key).or_else(|| class_for(own));
    let mut bounds = 0;
    if let Some(vc) = root.get("vision_config").and_then(Value::as_object) {
        let mut v = part_reader(vc, class_of("vision_config", "gemma4_vision"));
        let counted = vision(&mut v, text_h);
        r.ledger.append(&mut v.ledger);
        let (n, b) = counted?;
        acc.tower(n)?;
        bounds += b;
    }
    if let Some(ac) = root.get("audio_config").and_then(Value::as_object) {
        let mut v = part_reader(ac, class_of("audio_config", "gemma4_audio"));
        let counted = audio(&mut v, text_h);
        r.ledger.append(&mut v.ledger);
        let (n, b) = counted?;
        acc.tower(n)?;
        bounds += b;
    }
    if bounds > 0 {
        r.derived("clip_bounds", bounds, "ldg_gemma4_clip_bounds");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::parse_model_text;
    use crate::base::dtype::Dtype;
    use crate::base::error::CalcError;
    use crate::calc::kv;

    /// A small text-only config: h 64, layers sliding, sliding, full; 4 heads of 16 with 2 KV
    /// heads on the sliding layers, 1 KV head of 32 without v_proj on the full one
    /// (attention_k_eq_v); MLP 48; V 100, tied; no per-layer inputs.
    const SMALL: &str = r#"{"model_type":"gemma4_text","hidden_size":64,"num_hidden_layers":3,
        "layer_types":["sliding_attention","sliding_attention","full_attention"],
        "num_attention_heads":4,"num_key_value_heads":2,"head_dim":16,"global_head_dim":32,
        "attention_k_eq_v":true,"num_global_key_value_heads":1,"intermediate_size":48,
        "vocab_size":100,"hidden_size_per_layer_input":0,"sliding_window":8}"#;

    /// A sliding layer: q and o 2·64·4·16 = 8,192, k and v 2·64·2·16 = 4,096, q/k norms 32;
    /// MLP 3·64·48 = 9,216; four norms 256; the layer_scalar 1.
    const SLIDING: u64 = 8_192 + 4_096 + 32 + 9_216 + 256 + 1;
    /// The full layer: q and o 2·64·4·32 = 16,384, k 64·1·32 = 2,048 (no v), q/k norms 64;
    /// MLP 9,216; norms 256; the layer_scalar 1.
    const FULL: u64 = 16_384 + 2_048 + 64 + 9_216 + 256 + 1;
    /// The final norm 64 and the tied embedding 100·64.
    const REST: u64 = 64 + 6_400;

    fn with(cfg: &str, from: &str, to: &str) -> String {
        assert!(cfg.contains(from), "{from}");
        cfg.replacen(from, to, 1)
    }

    #[test]
    fn a_small_gemma4_by_hand() {
        let m = parse_model_text(SMALL).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(m.params.total, 2 * SLIDING + FULL + REST);
        assert!(m.warnings.is_empty(), "{:?}", m.warnings);
        // KV per token at bf16: each sliding layer K and V of 2·16, the full one of 1·32 (V a
        // copy of K): (2 · 2·2·16 + 2·1·32) · 2 B = 384 B.
        let kv = kv::per_token(&m, Dtype::Bf16, 1).map(|b| b.bytes.0).ok();
        assert_eq!(kv, Some(384));
        // Without attention_k_eq_v the full layer has 2 KV heads and its v_proj: k and v
        // 2·64·2·32 = 8,192 instead of 2,048.
        let plain = with(
            SMALL,
            r#""attention_k_eq_v":true"#,
            r#""attention_k_eq_v":false"#,
        );
        let m = parse_model_text(&plain).ok();
        assert_eq!(
            m.map(|m| m.params.total),
            Some(2 * SLIDING + FULL + 6_144 + REST)
        );
    }

    #[test]
    fn the_moe_block_and_per_layer_inputs_by_hand() {
        // enable_moe_block, 4 experts of 8, top 2: per layer the router 4·64 + 64 + 4 = 324,
        // the experts 4·3·64·8 = 6,144, three norms 192; a token skips 2 experts, 3,072.
        let moe = with(
            SMALL,
            r#""intermediate_size":48"#,
            r#""intermediate_size":48,"enable_moe_block":true,"num_experts":4,
            "top_k_experts":2,"moe_intermediate_size":8"#,
        );
        let m = parse_model_text(&moe).unwrap_or_else(|e| panic!("{e}"));
        let total = 2 * SLIDING + FULL + REST + 3 * (324 + 6_144 + 192);
        assert_eq!(m.params.total, total);
        assert_eq!(m.params.active, total - 3 * 3_072);
        // Per-layer inputs of 4 from a vocabulary of 10, the last layer sharing the KV cache
        // with a double-wide MLP: per layer the gate and projection 2·64·4 and a norm 64; the
        // table 10·3·4 = 120, its projection 64·12 = 768 and norm 4; the MLP 3·64·48 more.
        let ple = with(
            SMALL,
            r#""hidden_size_per_layer_input":0"#,
            r#""hidden_size_per_layer_input":4,"vocab_size_per_layer_input":10,
            "num_kv_shared_layers":1,"use_double_wide_mlp":true"#,
        );
        let m = parse_model_text(&ple).unwrap_or_else(|e| panic!("{e}"));
        let total = 2 * SLIDING + FULL + REST + 3 * (512 + 64) + 120 + 768 + 4 + 9_216;
        assert_eq!(m.params.total, total);
        assert_eq!(m.kv_shared, vec![2]);
        // The shared full layer keeps no cache: the two sliding layers' 256 B.
        let kv = kv::per_token(&m, Dtype::Bf16, 1).map(|b| b.bytes.0).ok();
        assert_eq!(kv, Some(256));
        assert_eq!(m.warnings.len(), 1, "{:?}", m.warnings);
    }

    #[test]
    fn the_towers_by_hand() {
        // Vision: patch 3·2²·8 = 96, positions 2·5·8 = 80; the layer q/o 2·8·2·4 = 128, k/v
        // 128, q/k norms 8, four norms 32, MLP 3·8·16 = 384; std_bias and std_scale 16; the
        // projection 8·64 = 512: 1,384.
        // Audio: convolutions 9·4 + 4 + 9·4·2 + 2 and the input projection (4/4)·2·8 = 130; the
        // layer: feed-forward 2·(8·8² + 2·8) = 1,056, attention 5·8² + 8/2 = 324, the light
        // convolution 3·8² + 3·8 + 2·8 = 232, norms 24; output_proj 8·6 + 6 = 54; the
        // projection 6·64 = 384: 2,204. Its 10 clipped linears store 40 bounds, not counted.
        let text = SMALL;
        let cfg = format!(
            r#"{{"model_type":"gemma4","text_config":{text},
            "vision_config":{{"hidden_size":8,"intermediate_size":16,"num_hidden_layers":1,
              "num_attention_heads":2,"num_key_value_heads":2,"head_dim":4,"patch_size":2,
              "position_embedding_size":5,"standardize":true}},
            "audio_config":{{"hidden_size":8,"num_hidden_layers":1,"num_attention_heads":2,
              "conv_kernel_size":3,"output_proj_dims":6,"subsampling_conv_channels":[4,2]}}}}"#
        );
        let m = parse_model_text(&cfg).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(m.params.language_model, 2 * SLIDING + FULL + REST);
        assert_eq!(m.params.vision, 1_384 + 2_204);
        let bounds = m.ledger.iter().find(|e| e.field == "clip_bounds");
        assert_eq!(bounds.map(|e| e.value.as_str()), Some("40"));
        // A null tower is not built.
        let none = cfg.replace(r#""audio_config":{"#, r#""audio_config":null,"unused":{"#);
        let m = parse_model_text(&none).ok();
        assert_eq!(m.map(|m| m.params.vision), Some(1_384));
    }

    /// The key a refusal names.
    fn refused(cfg: &str) -> String {
        match parse_model_text(cfg) {
            Err(CalcError::MissingKey { key, .. } | CalcError::BadValue { key, .. }) => key,
            Err(CalcError::OutOfRange { field, .. }) => field.to_string(),
            other => panic!("{:?}", other.map(|m| m.params.total)),
        }
    }

    #[test]
    fn bad_input_names_its_key() {
        let moe = with(
            SMALL,
            r#""intermediate_size":48"#,
            r#""intermediate_size":48,"enable_moe_block":true"#,
        );
        assert_eq!(refused(&moe), "num_experts");
        let too_many = with(
            &moe,
            r#""enable_moe_block":true"#,
            r#""enable_moe_block":true,"num_experts":4,"top_k_experts":5,"moe_intermediate_size":8"#,
        );
        assert_eq!(refused(&too_many), "top_k_experts");
        let no_width = with(
            &moe,
            r#""enable_moe_block":true"#,
            r#""enable_moe_block":true,"num_experts":4,"top_k_experts":2"#,
        );
        assert_eq!(refused(&no_width), "moe_intermediate_size");
        let shared = with(
            SMALL,
            r#""sliding_window":8"#,
            r#""sliding_window":8,"num_kv_shared_layers":3"#,
        );
        assert_eq!(refused(&shared), "num_kv_shared_layers");
        let kind = with(
            SMALL,
            r#""sliding_attention","full_attention"]"#,
            r#""chunked_attention","full_attention"]"#,
        );
        assert_eq!(refused(&kind), "layer_types");
        let short = with(SMALL, r#"["sliding_attention","#, "[");
        assert_eq!(refused(&short), "layer_types");
        let global = with(
            SMALL,
            r#""num_global_key_value_heads":1"#,
            r#""num_global_key_value_heads":3"#,
        );
        assert_eq!(refused(&global), "num_global_key_value_heads");
    }

    #[test]
    fn the_last_layer_is_always_full() {
        // layer_types ending with a sliding layer: transformers makes it full, and says so.
        let cfg = with(
            SMALL,
            r#"["sliding_attention","sliding_attention","full_attention"]"#,
            r#"["sliding_attention","full_attention","sliding_attention"]"#,
        );
        let m = parse_model_text(&cfg).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(m.params.total, SLIDING + 2 * FULL + REST);
        assert_eq!(m.warnings.len(), 1, "{:?}", m.warnings);
        // Without layer_types: every 6th layer is full (here only the last, forced).
        let cfg = with(
            SMALL,
            r#""layer_types":["sliding_attention","sliding_attention","full_attention"],"#,
            "",
        );
        let m = parse_model_text(&cfg).ok();
        assert_eq!(m.map(|m| m.params.total), Some(2 * SLIDING + FULL + REST));
    }
}
