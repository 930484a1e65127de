//! Llama-style decoders: llama, mistral, mixtral, qwen2, qwen2_moe, qwen3, qwen3_moe, gemma,
//! gemma2, gemma3, phi3 (phi-4), gpt_oss, llama4, and the generic fallback.
//!
//! Per layer: attention q/k/v/o (`h·H·d + 2·h·K·d + H·d·h`), optional biases, optional q/k
//! norms (`2·d`, Qwen3/Gemma3), attention sinks (`H`, gpt-oss), RMSNorm weights (2 per layer,
//! 4 for Gemma-2/3), and a gated MLP (`3·h·I`) or a mixture of experts (router `E·h`, experts
//! `E·3·h·I_e`, optional shared expert). Then a final norm `h`, the embeddings `V·h`, and an
//! lm_head `V·h` unless tied.

use super::common::{
    read_core, read_intermediate, read_max_pos, read_tie, read_top_k, Core, FourH,
};
use super::kit::{
    add_attention, add_dense_ffn, add_embeddings, add_mlp, add_mtp_modules, add_routed_experts,
    full_attention, windowed_attention, Acc, Comp, MtpHeads, Parts,
};
use super::reader::Reader;
use super::windows::read_windows;
use crate::base::checked::{add, mul};
use crate::base::error::{CalcError, Phrase};
use crate::model::desc::{Ffn, Layer};

/// Families handled here (besides `generic`).
pub(super) const KNOWN: &[&str] = &[
    "llama",
    "mistral",
    "mixtral",
    "qwen2",
    "qwen2_moe",
    "qwen3",
    "qwen3_moe",
    "gemma",
    "gemma2",
    "gemma3",
    "phi3",
    "gpt_oss",
    "llama4",
    "exaone",
    "exaone4",
    "smollm3",
    "granite",
    "granitemoe",
    "olmo",
    "olmo2",
    "olmoe",
    "stablelm",
    "glm",
    "cohere",
    "cohere2",
    "starcoder2",
    "internlm2",
    "internlm3",
    "ernie4_5",
    "ernie4_5_moe",
    "glm4",
    "glm4_moe",
    "phimoe",
    "minimax_m2",
    "hyperclovax",
    "mllama",
    "arcee",
    "apertus",
    "seed_oss",
    "dots1",
];

/// The MoE shape of a family.
struct Moe {
    experts: u64,
    top_k: u64,
    inter: u64,
    shared_inter: u64,
    shared_gate: bool,
    router_bias: bool,
    expert_bias: bool,
    /// vLLM keeps the router `gate` in fp32 (GLM-4.5, ERNIE 4.5, MiniMax-M2).
    gate_fp32: bool,
    /// vLLM keeps the router's correction bias in fp32 (every family with one but dots.llm1).
    bias_fp32: bool,
}

/// The key the transformers class of `fam` reads the number of routed experts from: the one
/// of `num_local_experts` and its spellings that the class records a default for in
/// `data/config_defaults.csv` (transformers 5.24.0: `num_experts` for `Qwen2MoeConfig` and
/// `Qwen3MoeConfig`, `num_local_experts` for `MixtralConfig`, `GptOssConfig`,
/// `PhimoeConfig`, `GraniteMoeConfig`), else the canonical `num_local_experts`.
fn experts_key(fam: &str) -> &'static str {
    const CANONICAL: &str = "num_local_experts";
    let Some(class) = super::defaults::class_for(fam) else {
        return CANONICAL;
    };
    super::defaults::spellings(CANONICAL)
        .find(|k| class.default_of(k).is_some())
        .unwrap_or(CANONICAL)
}

/// Reads the MoE shape (`None` for a dense model); the MoE families must have experts.
fn read_moe(r: &mut Reader, fam: &str, h: u64) -> Result<Option<Moe>, CalcError> {
    let experts = r.opt(("experts", "num_local_experts"))?;
    let Some(experts) = experts else {
        if matches!(
            fam,
            "mixtral"
                | "qwen2_moe"
                | "qwen3_moe"
                | "gpt_oss"
                | "phimoe"
                | "granitemoe"
                | "olmoe"
                | "dots1"
        ) {
            return Err(CalcError::MissingKey {
                key: experts_key(fam).into(),
                why: Phrase::tr("why_count_experts"),
            });
        }
        return Ok(None);
    };
    let top_k = read_top_k(r, experts, None)?;
    let inter = match fam {
        "mixtral" | "gpt_oss" | "llama4" | "phimoe" | "granitemoe" | "minimax_m2" | "olmoe" => r
            .req(
                ("expert_intermediate", "intermediate_size"),
                "why_size_experts",
            )?,
        _ => match r.opt(("expert_intermediate", "moe_intermediate_size"))? {
            Some(i) => i,
            None => r.req(
                ("expert_intermediate", "intermediate_size"),
                "why_size_experts",
            )?,
        },
    };
    let (shared_inter, shared_gate) = match fam {
        "qwen2_moe" => (
            r.or0(
                ("shared_intermediate", "shared_expert_intermediate_size"),
                0,
                "ldg_no_shared_expert",
            )?,
            true,
        ),
        "llama4" => (inter, false),
        "glm4_moe" | "ernie4_5_moe" | "dots1" => {
            let n = r.or0(
                ("shared_experts", "n_shared_experts"),
                0,
                "ldg_no_shared_expert",
            )?;
            (mul("ovf_shared_expert", &[n, inter])?, false)
        }
        "granitemoe" => (
            r.or0(
                ("shared_intermediate", "shared_intermediate_size"),
                0,
                "ldg_no_shared_expert",
            )?,
            false,
        ),
        _ => (0, false),
    };
    let gpt = fam == "gpt_oss";
    // GLM-4.5, ERNIE 4.5, MiniMax-M2 and dots.llm1 route with a per-expert correction bias
    // (a stored buffer in Dots1TopkRouter, which the Hub's total counts).
    let corr = matches!(fam, "glm4_moe" | "ernie4_5_moe" | "minimax_m2" | "dots1");
    if corr {
        r.derived(
            "e_score_correction_bias",
            experts,
            "ldg_topk_method_noaux_tc_one_routing_bias",
        );
    }
    let _ = h;
    Ok(Some(Moe {
        experts,
        top_k,
        inter,
        shared_inter,
        shared_gate,
        router_bias: gpt || corr,
        expert_bias: gpt,
        // vLLM's `Glm4MoE.gate` (an fp32 nn.Linear), `Ernie4_5_MoeMoE.gate` and
        // `MiniMaxM2MoE.gate` (fp32 ReplicatedLinears), and their fp32 `e_score_correction_bias`;
        // `Dots1MoE` keeps both in the model's dtype.
        gate_fp32: matches!(fam, "glm4_moe" | "ernie4_5_moe" | "minimax_m2"),
        bias_fp32: corr && fam != "dots1",
    }))
}

/// The per-layer options of a Llama-style decoder besides its core sizes.
struct LayerOpts {
    qkv_bias: bool,
    o_bias: bool,
    /// Elements of the q/k norms per layer (0 = none).
    qk_norm: u64,
    sinks: bool,
    /// Norm weight vectors of width `h` per layer (a LayerNorm with a bias counts 2).
    norms_per_layer: u64,
    /// The same for the final norm.
    final_norm: u64,
    mlp_bias: bool,
    gated: bool,
    dense_inter: u64,
    /// The output head has a bias (`V`, Phi-3.5-MoE).
    lm_head_bias: bool,
    /// Learnable scalars of the activation per dense MLP (Apertus's xIELU: 2).
    act_params: u64,
}

/// Reads the attention biases: q/k/v only for Qwen2, `attention_bias` (default on for
/// gpt-oss, off otherwise) for the rest.
fn read_attention_bias(r: &mut Reader, fam: &str) -> Result<(bool, bool), CalcError> {
    Ok(match fam {
        "qwen2" | "qwen2_moe" => {
            r.derived(
                "attention_bias",
                "q, k, v: ✓; o: ✗",
                "ldg_qwen2_attention_has_q_k_v_biases",
            );
            (true, false)
        }
        "gpt_oss" => {
            let b = r.flag(
                "attention_bias",
                true,
                "ldg_gpt_oss_default_attention_biases",
            )?;
            (b, b)
        }
        // GLM and GLM-4: `attention_bias` puts biases on q, k, v only (o_proj has none).
        "glm" | "glm4" | "glm4_moe" => {
            let b = r.flag("attention_bias", false, "ldg_default_no_attention_biases")?;
            (b, false)
        }
        // Seed-OSS: `attention_bias` on q, k, v (on by default), `attention_out_bias` on o_proj.
        "seed_oss" => {
            let q = r.flag("attention_bias", true, "ldg_seed_oss_qkv_bias_default_on")?;
            let o = r.flag(
                "attention_out_bias",
                false,
                "ldg_default_no_attention_biases",
            )?;
            (q, o)
        }
        // StableLM: `use_qkv_bias` on q, k, v; o_proj has none.
        "stablelm" => {
            let b = r.flag("use_qkv_bias", false, "ldg_default_no_attention_biases")?;
            (b, false)
        }
        // StarCoder2 and ERNIE 4.5: one `use_bias` for every projection.
        "starcoder2" | "ernie4_5" | "ernie4_5_moe" => {
            let b = r.flag("use_bias", false, "ldg_default_no_attention_biases")?;
            (b, b)
        }
        // InternLM2: one `bias` for every projection.
        "internlm2" => {
            let b = r.flag("bias", false, "ldg_default_no_attention_biases")?;
            (b, b)
        }
        // InternLM3: q/k/v follow `qkv_bias`, o_proj (and the MLP) `bias`.
        "internlm3" => {
            let q = r.flag(
                ("attention_bias", "qkv_bias"),
                false,
                "ldg_default_no_attention_biases",
            )?;
            let o = r.flag(("mlp_bias", "bias"), false, "ldg_default_no_mlp_biases")?;
            (q, o)
        }
        _ => {
            let b = r.flag("attention_bias", false, "ldg_default_no_attention_biases")?;
            (b, b)
        }
    })
}

/// Reads the dense MLP width (`intermediate_size_mlp` for Llama 4), default `4·h`.
fn read_dense_inter(r: &mut Reader, fam: &str, h: u64) -> Result<u64, CalcError> {
    if fam == "llama4" {
        r.or(
            "intermediate_size_mlp",
            mul("ovf_intermediate", &[4, h])?,
            "ldg_no_intermediate_size_mlp_4_x_hidden",
        )
    } else {
        read_intermediate(
            r,
            h,
            FourH::Guessed,
            "ldg_no_intermediate_size_4_x_hidden_size",
        )
    }
}

/// The q/k norm elements per layer: per head (`2·d`: Qwen3, Gemma 3, EXAONE 4, GLM-4.5 with
/// `use_qk_norm`) or over all heads (`(H + K)·d`: OLMo 2, OLMoE, MiniMax-M2, Cohere with
/// `use_qk_norm`).
fn read_qk_norm(r: &mut Reader, fam: &str, c: &Core) -> Result<u64, CalcError> {
    let per_head = 2 * c.hd;
    let full = (c.heads + c.kv) * c.hd;
    let n = match fam {
        "qwen3" | "qwen3_moe" | "gemma3" | "exaone4" | "apertus" | "dots1" => per_head,
        // OlmoeAttention: q_norm over `h`, k_norm over `K·d` (d = h / H).
        "olmo2" | "olmoe" => full,
        // StableLM 2 12B: a LayerNorm (weight only) per query head and per KV head.
        "stablelm" => {
            let on = r.flag("qk_layernorm", false, "ldg_default_no_qk_norm")?;
            if on {
                full
            } else {
                0
            }
        }
        "glm4_moe" | "cohere" | "cohere2" | "minimax_m2" => {
            let on = r.flag("use_qk_norm", fam == "minimax_m2", "ldg_default_no_qk_norm")?;
            match (on, fam) {
                (false, _) => 0,
                (true, "glm4_moe") => per_head,
                (true, _) => full,
            }
        }
        _ => 0,
    };
    if n > 0 {
        let why = if n == per_head {
            "ldg_q_norm_and_k_norm_rmsnorm_weights"
        } else {
            "ldg_qk_norm_over_all_heads"
        };
        r.derived("qk_norm", n, why);
    }
    Ok(n)
}

/// Norm vectors per layer and for the final norm: Gemma 2/3, GLM-4 and HyperCLOVA X four per layer, Cohere
/// one (attention and MLP in parallel), LayerNorms with biases count twice (StarCoder2,
/// Phi-3.5-MoE), OLMo's none (its LayerNorms have no parameters); two otherwise (EXAONE 4 and
/// OLMo 2 put theirs after the blocks).
fn norm_counts(r: &mut Reader, fam: &str) -> Result<(u64, u64), CalcError> {
    // HyperCLOVA X (Peri-LN): post_norm1/post_norm2 after the blocks with `use_post_norm`.
    let peri = fam == "hyperclovax" && r.flag("use_post_norm", true, "ldg_gemma_pre_post_norms")?;
    let (per_layer, fin, key) = match fam {
        _ if peri => (4, 1, "ldg_gemma_pre_post_norms"),
        "gemma2" | "gemma3" | "glm4" => (4, 1, "ldg_gemma_pre_post_norms"),
        "cohere" | "cohere2" => (1, 1, "ldg_one_norm_parallel_block"),
        "starcoder2" | "phimoe" => (4, 2, "ldg_layernorm_with_bias"),
        // StableLM: LayerNorms with biases; one per layer with `use_parallel_residual`.
        "stablelm" => {
            let parallel = r.flag(
                "use_parallel_residual",
                false,
                "ldg_stablelm_default_sequential_residual",
            )?;
            if parallel {
                (2, 2, "ldg_one_layernorm_with_bias_parallel_block")
            } else {
                (4, 2, "ldg_layernorm_with_bias")
            }
        }
        // OlmoLayerNorm: "LayerNorm but with no learnable weight or bias".
        "olmo" => (0, 0, "ldg_olmo_layernorm_without_parameters"),
        _ => (2, 1, "ldg_input_and_post_attention_rmsnorm"),
    };
    r.derived("norms_per_layer", per_layer, key);
    Ok((per_layer, fin))
}

/// Reads the per-layer options: biases, q/k norms, norms per layer, sinks, the dense width.
fn read_layer_opts(r: &mut Reader, fam: &str, c: &Core) -> Result<LayerOpts, CalcError> {
    let (qkv_bias, o_bias) = read_attention_bias(r, fam)?;
    let qk_norm = read_qk_norm(r, fam, c)?;
    let (norms_per_layer, final_norm) = norm_counts(r, fam)?;
    let sinks = fam == "gpt_oss";
    let mlp_bias = match fam {
        // ApertusMLP: bias=False whatever `mlp_bias` says.
        "gpt_oss" | "apertus" => false,
        "starcoder2" | "ernie4_5" | "ernie4_5_moe" | "internlm2" => qkv_bias,
        "internlm3" => o_bias,
        _ => r.flag("mlp_bias", false, "ldg_default_no_mlp_biases")?,
    };
    // StarCoder2 (c_fc, c_proj), Arcee (relu2) and Apertus (xIELU): up and down only.
    let gated = !matches!(fam, "starcoder2" | "arcee" | "apertus");
    if !gated {
        r.derived("mlp_gated", false, "ldg_plain_mlp_c_fc_c_proj");
    }
    let lm_head_bias =
        fam == "phimoe" && r.flag("lm_head_bias", false, "ldg_default_no_lm_head_bias")?;
    let dense_inter = read_dense_inter(r, fam, c.h)?;
    let act_params = read_act_params(r, fam);
    Ok(LayerOpts {
        qkv_bias,
        o_bias,
        qk_norm,
        sinks,
        norms_per_layer,
        final_norm,
        mlp_bias,
        gated,
        dense_inter,
        lm_head_bias,
        act_params,
    })
}

/// The activation's own parameters per MLP: Apertus's xIELU (`hidden_act` "xielu", the
/// class default) learns `alpha_p` and `alpha_n`, one element each; its `beta` and `eps` are
/// 0-dimensional buffers, which the Hub's total leaves out.
fn read_act_params(r: &mut Reader, fam: &str) -> u64 {
    if fam != "apertus" {
        return 0;
    }
    let act = r.string("hidden_act").map_or("xielu", |(_, a)| a);
    if act != "xielu" {
        return 0;
    }
    r.derived("act_params", 2, "ldg_apertus_xielu_alphas");
    2
}

/// Reads which layers are MoE: the `mlp_only_layers` list (Qwen MoE), the MoE step
/// (`decoder_sparse_step`, or Llama 4's `interleave_moe_layer_step`), GLM-4.5's dense prefix
/// (`first_k_dense_replace`) and ERNIE 4.5's MoE range (`moe_layer_start_index` …
/// `moe_layer_end_index`, every `moe_layer_interval`-th).
fn read_moe_layers(
    r: &mut Reader,
    fam: &str,
    has_moe: bool,
    n: u64,
) -> Result<Vec<bool>, CalcError> {
    let mut mask: Vec<bool> = (0..n).map(|_| has_moe).collect();
    if !has_moe {
        return Ok(mask);
    }
    match fam {
        "qwen2_moe" | "qwen3_moe" | "llama4" => {
            let mlp_only = if fam == "llama4" {
                Vec::new()
            } else {
                r.u64_list("mlp_only_layers")?
            };
            let key = if fam == "llama4" {
                "interleave_moe_layer_step"
            } else {
                "decoder_sparse_step"
            };
            let step = r.or(key, 1, "ldg_every_layer_is_moe")?;
            for (i, m) in (0..n).zip(mask.iter_mut()) {
                *m = !mlp_only.contains(&i) && (i + 1).is_multiple_of(step);
            }
        }
        "glm4_moe" | "dots1" => {
            let first = r.or0(
                "first_k_dense_replace",
                0,
                "ldg_no_first_k_dense_replace_every_layer",
            )?;
            for (i, m) in (0..n).zip(mask.iter_mut()) {
                *m = i >= first;
            }
        }
        "ernie4_5_moe" => {
            let start = r.or0("moe_layer_start_index", 0, "ldg_every_layer_is_moe")?;
            let end = r.or0(
                "moe_layer_end_index",
                n.saturating_sub(1),
                "ldg_every_layer_is_moe",
            )?;
            let every = r.or("moe_layer_interval", 1, "ldg_every_layer_is_moe")?;
            for (i, m) in (0..n).zip(mask.iter_mut()) {
                *m = i >= start && i <= end && (i - start).is_multiple_of(every);
            }
        }
        _ => {}
    }
    Ok(mask)
}

/// Adds one MoE feed-forward: the routed experts ([`add_routed_experts`]) with the router's bias
/// and the experts' biases (`2·I_e + h` each, inactive like their weights) where the family has
/// them, then the optional shared expert and its gate.
fn add_moe_ffn(acc: &mut Acc, m: &Moe, h: u64) -> Result<Ffn, CalcError> {
    let shared = (u64::from(m.shared_inter > 0), m.shared_inter);
    let ffn = add_routed_experts(acc, h, (m.experts, m.top_k, m.inter), shared)?;
    if m.gate_fp32 {
        acc.router_fp32(mul("ovf_router_params", &[m.experts, h])?)?;
    }
    if m.router_bias {
        acc.add(Comp::Router, m.experts)?;
        if m.bias_fp32 {
            acc.router_fp32(m.experts)?;
        }
    }
    if m.expert_bias {
        let w = "ovf_expert_params";
        let per_bias = add(w, &[mul(w, &[2, m.inter])?, h])?;
        acc.add(Comp::Experts, mul(w, &[m.experts, per_bias])?)?;
        acc.skip(mul(w, &[m.experts - m.top_k, per_bias])?)?;
    }
    if m.shared_inter > 0 {
        add_mlp(acc, Comp::Mlp, h, m.shared_inter, true, false)?;
        if m.shared_gate {
            acc.add(Comp::Router, h)?;
        }
    }
    Ok(ffn)
}

/// Adds one layer's attention (with q/k norms and sinks) and its norms.
fn add_attention_block(acc: &mut Acc, c: &Core, o: &LayerOpts) -> Result<(), CalcError> {
    let (h, hd) = (c.h, c.hd);
    add_attention(acc, h, c.heads, c.kv, hd, hd, o.qkv_bias, o.o_bias)?;
    if o.qk_norm > 0 {
        acc.add(Comp::Attn, o.qk_norm)?;
    }
    if o.sinks {
        acc.add(Comp::Attn, c.heads)?;
    }
    acc.norms(o.norms_per_layer, h)
}

/// Builds a Llama-style decoder.
pub(super) fn build(r: &mut Reader, fam: &str) -> Result<Parts, CalcError> {
    let c = read_core(r, fam)?;
    let (h, hd) = (c.h, c.hd);
    let tie = read_tie(r, fam.starts_with("gemma"), fam)?;
    let o = read_layer_opts(r, fam, &c)?;
    let moe = read_moe(r, fam, h)?;
    let windows = read_windows(r, fam, c.n_layers)?;
    let moe_mask = read_moe_layers(r, fam, moe.is_some(), c.n_layers)?;
    let cross = if fam == "mllama" {
        r.u64_list("cross_attention_layers")?
    } else {
        Vec::new()
    };

    let mut acc = Acc::default();
    let mut layers = Vec::with_capacity(windows.len());
    for (i, window) in windows.iter().enumerate() {
        add_attention_block(&mut acc, &c, &o)?;
        if cross.contains(&(i as u64)) {
            // Llama 3.2 Vision: a cross-attention layer has q/k norms and two tanh gates.
            acc.add(
                Comp::Attn,
                add(
                    "ovf_attention_params",
                    &[mul("ovf_attention_params", &[2, hd])?, 2],
                )?,
            )?;
        }
        let is_moe = moe_mask.get(i).copied().unwrap_or(false);
        let ffn = match (&moe, is_moe) {
            (Some(m), true) => add_moe_ffn(&mut acc, m, h)?,
            _ => {
                let ffn = add_dense_ffn(&mut acc, h, o.dense_inter, o.gated, o.mlp_bias)?;
                if o.act_params > 0 {
                    acc.add(Comp::Mlp, o.act_params)?;
                }
                ffn
            }
        };
        layers.push(Layer {
            mixer: windowed_attention(c.heads, c.kv, hd, *window),
            ffn,
        });
    }
    acc.norms(o.final_norm, h)?;
    add_embeddings(r, &mut acc, c.vocab, h, tie)?;
    if !cross.is_empty() {
        // MllamaTextModel's embedding has 8 rows beyond the vocabulary (image tokens).
        acc.add(Comp::Emb, mul("ovf_embedding_params", &[8, h])?)?;
        r.derived(
            "cross_attention_layers",
            cross.len(),
            "ldg_mllama_cross_layers",
        );
        r.warnings
            .push(Phrase::tr("wrn_mllama_cross_kv").val("n", cross.len()));
    }
    if let (Some(m), "glm4_moe") = (&moe, fam) {
        let n = r.or0(
            ("mtp_layers", "num_nextn_predict_layers"),
            0,
            "ldg_no_num_nextn_predict_layers_no_multi",
        )?;
        if n > 0 {
            let mut mt = Acc::default();
            for _ in 0..n {
                add_attention_block(&mut mt, &c, &o)?;
                let ffn = add_moe_ffn(&mut mt, m, h)?;
                // Glm4MoeMTP: a full-attention layer (no window) with the MoE block.
                mt.mtp_layers.push(Layer {
                    mixer: full_attention(c.heads, c.kv, hd),
                    ffn,
                });
            }
            add_mtp_modules(r, &mut acc, mt, n, (c.vocab, h), MtpHeads::OwnCopies)?;
        }
    }
    if o.lm_head_bias {
        acc.add(Comp::LmHead, c.vocab)?;
    }
    let max_pos = read_max_pos(r)?;
    Ok(Parts::new(layers, acc, h, c.vocab, tie, max_pos))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The key named in the missing-experts error is the family's own (read from the
    /// recorded class defaults, not a list here): Qwen's MoE classes read `num_experts`,
    /// Mixtral-style classes `num_local_experts`, a family without a recorded class the
    /// canonical key.
    #[test]
    fn the_missing_experts_error_names_the_familys_key() {
        for fam in ["qwen2_moe", "qwen3_moe"] {
            let class = super::super::defaults::class_for(fam).expect("class");
            assert!(class.default_of("num_experts").is_some(), "{fam}");
            assert_eq!(experts_key(fam), "num_experts", "{fam}");
        }
        for fam in ["mixtral", "gpt_oss", "phimoe", "granitemoe"] {
            let class = super::super::defaults::class_for(fam).expect("class");
            assert!(class.default_of("num_local_experts").is_some(), "{fam}");
            assert_eq!(experts_key(fam), "num_local_experts", "{fam}");
        }
        assert_eq!(experts_key("no_such_family"), "num_local_experts");
    }
}
