//! Classic decoders with LayerNorm (weight + bias) and biased projections: gpt2, opt,
//! gpt_bigcode, falcon / RefinedWeb, gpt_neox, bloom, phi.

use super::common::{
    check_kv, read_core, read_core_with, read_dims, read_head_dim, read_intermediate, read_tie,
    Core, Dims, FourH,
};
use super::kit::{
    add_attention, add_dense_ffn, add_embeddings, finish_parts, full_attention, Acc, Comp, Parts,
};
use super::reader::Reader;
use crate::base::checked::{add, mul};
use crate::base::error::CalcError;
use crate::model::desc::{Ffn, Layer};

/// A layer of full multi-head attention (`c`'s heads) and the plain MLP `ffn`.
fn mha_layer(c: &Core, ffn: Ffn) -> Layer {
    Layer {
        mixer: full_attention(c.heads, c.kv, c.hd),
        ffn,
    }
}

/// LayerNorm with weight and bias: `2·h`.
fn ln(acc: &mut Acc, h: u64) -> Result<(), CalcError> {
    acc.norms(2, h)
}

/// GPT-2: per layer ln_1, c_attn (`3h² + 3h`), c_proj (`h² + h`), ln_2, c_fc (`h·I + I`),
/// c_proj (`I·h + h`); learned positions `n_positions·h`; ln_f; tied lm_head.
pub(super) fn gpt2(r: &mut Reader) -> Result<Parts, CalcError> {
    let c = read_core(r, "gpt2")?;
    gpt2_stack(r, &c, "gpt2")
}

/// GPTBigCode (StarCoder, SantaCoder, WizardCoder, Granite Code 20B/34B): GPT-2's layers with
/// multi-query attention when `multi_query` (its class default): c_attn `h·(h + 2d) + h + 2d`.
/// The model takes its KV heads from `multi_query` alone (1 or all), whatever else the config
/// says.
pub(super) fn gpt_bigcode(r: &mut Reader) -> Result<Parts, CalcError> {
    let c = read_core_with(r, "gpt_bigcode", |r, heads| {
        Ok(
            if r.flag("multi_query", true, "ldg_gpt_bigcode_default_multi_query")? {
                r.derived("kv_heads", 1, "ldg_multi_query_true_one_shared_kv_head");
                1
            } else {
                r.derived("kv_heads", heads, "ldg_multi_query_false_every_head");
                heads
            },
        )
    })?;
    gpt2_stack(r, &c, "gpt_bigcode")
}

/// GPT-2's stack for the core dimensions `c`.
fn gpt2_stack(r: &mut Reader, c: &Core, fam: &str) -> Result<Parts, CalcError> {
    let h = c.h;
    // GPT2Config's n_inner defaults to null: the model then uses 4 × n_embd.
    let inter = read_intermediate(r, h, FourH::Derived, "ldg_n_inner_is_null_4_x_n")?;
    let pos = r.req(
        ("n_positions", "max_position_embeddings"),
        "why_size_pos_emb",
    )?;
    let tie = read_tie(r, true, fam)?;
    let mut acc = Acc::default();
    let mut layers = Vec::new();
    for _ in 0..c.n_layers {
        ln(&mut acc, h)?;
        add_attention(&mut acc, h, c.heads, c.kv, c.hd, c.hd, true, true)?;
        ln(&mut acc, h)?;
        layers.push(mha_layer(
            c,
            add_dense_ffn(&mut acc, h, inter, false, true)?,
        ));
    }
    ln(&mut acc, h)?;
    acc.add(Comp::Pos, mul("ovf_position_embeddings", &[pos, h])?)?;
    add_embeddings(r, &mut acc, c.vocab, h, tie)?;
    Ok(Parts::new(layers, acc, h, c.vocab, tie, Some(pos)))
}

/// OPT: learned positions with an offset of 2 (`(max_pos + 2)·h`), biased q/k/v/o and fc1/fc2,
/// two LayerNorms per layer, a final LayerNorm, optional project_in/out when
/// `word_embed_proj_dim ≠ hidden_size`; tied lm_head.
pub(super) fn opt(r: &mut Reader) -> Result<Parts, CalcError> {
    let c = read_core(r, "opt")?;
    let h = c.h;
    let inter = read_intermediate(r, h, FourH::Guessed, "ldg_no_ffn_dim_4_x_hidden_size")?;
    let max_pos = r.req("max_position_embeddings", "why_size_pos_emb")?;
    let proj = r.or(
        "word_embed_proj_dim",
        h,
        "ldg_no_word_embed_proj_dim_equal_to",
    )?;
    let bias = r.flag("enable_bias", true, "ldg_opt_default_biased_projections")?;
    let final_ln = r.flag(
        "do_layer_norm_before",
        true,
        "ldg_opt_default_pre_norm_with_a_final",
    )? && !r.flag(
        "_remove_final_layer_norm",
        false,
        "ldg_opt_default_final_layernorm_kept",
    )?;
    let tie = read_tie(r, true, "opt")?;
    let mut acc = Acc::default();
    let mut layers = Vec::new();
    for _ in 0..c.n_layers {
        add_attention(&mut acc, h, c.heads, c.kv, c.hd, c.hd, bias, bias)?;
        ln(&mut acc, h)?;
        layers.push(mha_layer(
            &c,
            add_dense_ffn(&mut acc, h, inter, false, bias)?,
        ));
        ln(&mut acc, h)?;
    }
    if final_ln {
        ln(&mut acc, h)?;
    }
    acc.add(
        Comp::Pos,
        mul(
            "ovf_position_embeddings",
            &[add("ovf_position_embeddings", &[max_pos, 2])?, h],
        )?,
    )?;
    if proj != h {
        acc.add(Comp::Other, mul("ovf_projection_params", &[2, proj, h])?)?;
        r.derived(
            "project_in_out",
            "2 × word_embed_proj_dim × hidden_size",
            "ldg_word_embed_proj_dim_differs_from_hidden",
        );
    }
    add_embeddings(r, &mut acc, c.vocab, proj, tie)?;
    Ok(Parts::new(layers, acc, h, c.vocab, tie, Some(max_pos)))
}

/// Falcon / RefinedWeb: fused query_key_value `h·(H + 2K)·d`, dense `h²`, MLP `2·h·4h`
/// (no biases unless `bias`), LayerNorms (one per layer with `parallel_attn`, two without,
/// `ln_attn` + `ln_mlp` with `new_decoder_architecture`), ln_f; tied lm_head. KV heads: 1 with
/// `multi_query`, `num_kv_heads` with `new_decoder_architecture`.
pub(super) fn falcon(r: &mut Reader, mt: &str) -> Result<Parts, CalcError> {
    let Dims {
        h,
        n_layers: n,
        heads,
        vocab,
    } = read_dims(r, "falcon")?;
    let hd = read_head_dim(r, h, heads)?;
    let new_arch = r.flag(
        "new_decoder_architecture",
        false,
        "ldg_falcon_default_original_decoder",
    )?;
    let kv = if new_arch {
        r.or(
            ("kv_heads", "num_key_value_heads"),
            heads,
            "ldg_no_num_kv_heads_equal_to_heads",
        )?
    } else if r.flag(
        "multi_query",
        true,
        "ldg_falcon_default_multi_query_attention",
    )? {
        r.derived("kv_heads", 1, "ldg_multi_query_true_one_shared_kv_head");
        1
    } else {
        heads
    };
    check_kv(heads, kv, r.key_of("kv_heads"))?;
    let bias = r.flag("bias", false, "ldg_falcon_default_no_linear_biases")?;
    let parallel = r.flag(
        "parallel_attn",
        true,
        "ldg_falcon_default_parallel_attention_and_mlp",
    )?;
    // FalconConfig's ffn_hidden_size defaults to null: the model then uses 4 × hidden_size.
    let inter = read_intermediate(r, h, FourH::Derived, "ldg_no_ffn_hidden_size_4_x_hidden")?;
    let tie = read_tie(r, true, "falcon")?;
    let lns_per_layer = if new_arch {
        r.or(
            "num_ln_in_parallel_attn",
            2,
            "ldg_new_decoder_architecture_ln_attn_and_ln",
        )?
    } else if parallel {
        1
    } else {
        2
    };
    let mut acc = Acc::default();
    let mut layers = Vec::new();
    let w = "ovf_attention_params";
    for _ in 0..n {
        let qkv_out = mul(w, &[add(w, &[heads, mul(w, &[2, kv])?])?, hd])?;
        acc.lin(Comp::Attn, mul(w, &[h, qkv_out])?)?;
        acc.lin(Comp::Attn, mul(w, &[heads, hd, h])?)?;
        if bias {
            acc.add(Comp::Attn, add(w, &[qkv_out, h])?)?;
        }
        layers.push(Layer {
            mixer: full_attention(heads, kv, hd),
            ffn: add_dense_ffn(&mut acc, h, inter, false, bias)?,
        });
        for _ in 0..lns_per_layer {
            ln(&mut acc, h)?;
        }
    }
    let parts = finish_parts(r, layers, acc, (h, vocab, tie), 2)?;
    let stored_twice = if tie && mt.starts_with("refinedweb") {
        mul("ovf_embedding_params", &[vocab, h])?
    } else {
        0
    };
    Ok(Parts {
        stored_twice,
        ..parts
    })
}

/// GPT-NeoX: per layer two LayerNorms, fused query_key_value `3h² + 3h`, dense `h² + h`,
/// MLP `h·I + I + I·h + h`; final LayerNorm; untied embed_out by default.
pub(super) fn gpt_neox(r: &mut Reader) -> Result<Parts, CalcError> {
    let c = read_core(r, "gpt_neox")?;
    let h = c.h;
    let inter = read_intermediate(
        r,
        h,
        FourH::Guessed,
        "ldg_no_intermediate_size_4_x_hidden_size",
    )?;
    let bias = r.flag(
        "attention_bias",
        true,
        "ldg_gpt_neox_default_attention_biases",
    )?;
    let tie = read_tie(r, false, "gpt_neox")?;
    let mut acc = Acc::default();
    let mut layers = Vec::new();
    for _ in 0..c.n_layers {
        ln(&mut acc, h)?;
        ln(&mut acc, h)?;
        add_attention(&mut acc, h, c.heads, c.kv, c.hd, c.hd, bias, bias)?;
        layers.push(mha_layer(
            &c,
            add_dense_ffn(&mut acc, h, inter, false, true)?,
        ));
    }
    finish_parts(r, layers, acc, (h, c.vocab, tie), 2)
}

/// BLOOM (ALiBi, no position embeddings): embedding LayerNorm, per layer two LayerNorms,
/// query_key_value `3h² + 3h`, dense `h² + h`, MLP `h·4h + 4h + 4h·h + h`; ln_f; tied.
pub(super) fn bloom(r: &mut Reader) -> Result<Parts, CalcError> {
    let c = read_core(r, "bloom")?;
    let h = c.h;
    let inter = mul("ovf_intermediate", &[4, h])?;
    r.derived("intermediate_size", inter, "ldg_bloom_4_x_hidden_size");
    let tie = read_tie(r, true, "bloom")?;
    let mut acc = Acc::default();
    let mut layers = Vec::new();
    for _ in 0..c.n_layers {
        ln(&mut acc, h)?;
        ln(&mut acc, h)?;
        add_attention(&mut acc, h, c.heads, c.kv, c.hd, c.hd, true, true)?;
        layers.push(mha_layer(
            &c,
            add_dense_ffn(&mut acc, h, inter, false, true)?,
        ));
    }
    ln(&mut acc, h)?;
    ln(&mut acc, h)?; // word_embeddings_layernorm
    add_embeddings(r, &mut acc, c.vocab, h, tie)?;
    r.derived(
        "position_embeddings",
        0,
        "ldg_bloom_uses_alibi_no_position_parameters",
    );
    Ok(Parts::new(layers, acc, h, c.vocab, tie, None))
}

/// Phi-1, Phi-1.5, Phi-2 (`PhiForCausalLM`): attention and MLP in parallel after one LayerNorm
/// per layer; biased q/k/v (`h·H·d + H·d`, `2·(h·K·d + K·d)`) and dense (`H·d·h + h`); MLP fc1
/// and fc2 with biases (`h·I + I + I·h + h`); with `qk_layernorm`, a LayerNorm of `h / H` on
/// the queries and one on the keys (`2·2·(h / H)`); final LayerNorm; untied lm_head with a
/// bias (`V·h + V`).
pub(super) fn phi(r: &mut Reader) -> Result<Parts, CalcError> {
    let c = read_core(r, "phi")?;
    let h = c.h;
    let inter = read_intermediate(
        r,
        h,
        FourH::Guessed,
        "ldg_no_intermediate_size_4_x_hidden_size",
    )?;
    let qk_ln = r.flag("qk_layernorm", false, "ldg_default_no_qk_norm")?;
    let tie = read_tie(r, false, "phi")?;
    let mut acc = Acc::default();
    let mut layers = Vec::new();
    for _ in 0..c.n_layers {
        ln(&mut acc, h)?;
        add_attention(&mut acc, h, c.heads, c.kv, c.hd, c.hd, true, true)?;
        if qk_ln {
            // PhiAttention sizes these LayerNorms hidden_size // num_attention_heads.
            acc.norms(4, h / c.heads)?;
        }
        layers.push(mha_layer(
            &c,
            add_dense_ffn(&mut acc, h, inter, false, true)?,
        ));
    }
    let parts = finish_parts(r, layers, acc, (h, c.vocab, tie), 2)?;
    let mut acc = parts.acc;
    acc.add(Comp::LmHead, c.vocab)?;
    r.derived("lm_head_bias", c.vocab, "ldg_phi_lm_head_bias");
    Ok(Parts { acc, ..parts })
}
