use super::*;
use crate::base::dtype::Dtype;
use crate::base::error::CalcError;
use crate::base::units::GIB;
use crate::hardware::Architecture;
use crate::model::config::parse_model_text;
use crate::model::ModelDesc;

fn model(json: &str) -> ModelDesc {
    match parse_model_text(json) {
        Ok(m) => m,
        Err(e) => panic!("{e}"),
    }
}

const LLAMA2_7B: &str = r#"{"model_type":"llama","hidden_size":4096,"intermediate_size":11008,"num_hidden_layers":32,
        "num_attention_heads":32,"vocab_size":32000,"torch_dtype":"float16"}"#;

#[test]
fn llama2_7b_textbook() {
    // 2 × 32 layers × 32 KV heads × 128 (4096/32) × 2 B = 524,288 B = 0.5 MiB per token.
    let m = model(LLAMA2_7B);
    let t = per_token(&m, Dtype::Fp16, 1).map(|k| k.bytes.0).ok();
    assert_eq!(t, Some(2 * 32 * 32 * (4096 / 32) * 2));
    // × 4,096 tokens × 16 sequences = 32 GiB.
    let b = per_batch(&m, Dtype::Fp16, 1, 4096, 16)
        .map(|k| k.bytes.0)
        .ok();
    assert_eq!(b, Some(2 * 32 * 32 * 128 * 2 * 4096 * 16));
    assert_eq!(b, Some(32 * GIB));
    let d = per_token(&m, Dtype::Fp16, 1).map(|k| k.derivation).ok();
    assert_eq!(
        d.as_ref().map(|d| d.formula.as_str()),
        Some("2 × L × H_kv × d_head × b")
    );
    let d = d.unwrap_or_else(|| panic!("no derivation"));
    assert_eq!(d.substituted, "(32 × 2 × 32 × 128) × 2");
    assert_eq!(d.result, "524,288 B = 0.5 MiB");
}

#[test]
fn llama3_8b_gqa() {
    // 2 × 32 × 8 × 128 × 2 = 131,072 B = 128 KiB.
    let m = model(
        r#"{"model_type":"llama","hidden_size":4096,"intermediate_size":14336,"num_hidden_layers":32,
            "num_attention_heads":32,"num_key_value_heads":8,"vocab_size":128256,"torch_dtype":"bfloat16"}"#,
    );
    assert_eq!(
        per_token(&m, Dtype::Bf16, 1).map(|k| k.bytes.0).ok(),
        Some(2 * 32 * 8 * 128 * 2)
    );
    // TP 16 > 8 KV heads: one head per rank, replicated.
    assert_eq!(kv_heads_per_rank(8, 16), 1);
    assert_eq!(
        per_token(&m, Dtype::Bf16, 4).map(|k| k.bytes.0).ok(),
        Some(2 * 32 * 2 * 128 * 2)
    );
    assert!(matches!(
        per_token(&m, Dtype::Bf16, 3),
        Err(CalcError::TpDoesNotDivide { .. })
    ));
    // fp4 KV: half a byte per element.
    assert_eq!(
        per_token(&m, Dtype::Fp4, 1).map(|k| k.bytes.0).ok(),
        Some(2 * 32 * 8 * 128 / 2)
    );
}

#[test]
fn sliding_window_caps() {
    // 2 layers, window 128 on layer 0 only; head_dim 64, 8 KV heads, bf16.
    let m = model(
        r#"{"model_type":"gpt_oss","hidden_size":256,"intermediate_size":256,"num_hidden_layers":2,
            "num_attention_heads":8,"num_key_value_heads":8,"head_dim":64,"vocab_size":100,"num_local_experts":4,
            "num_experts_per_tok":2,"sliding_window":128,"layer_types":["sliding_attention","full_attention"]}"#,
    );
    let per_layer = 2 * 8 * 64 * 2;
    assert_eq!(
        per_sequence(&m, Dtype::Bf16, 1, 1000)
            .map(|k| k.bytes.0)
            .ok(),
        Some(per_layer * (128 + 1000))
    );
    assert_eq!(
        per_sequence(&m, Dtype::Bf16, 1, 100)
            .map(|k| k.bytes.0)
            .ok(),
        Some(per_layer * (100 + 100))
    );
    assert_eq!(
        per_token(&m, Dtype::Bf16, 1).map(|k| k.bytes.0).ok(),
        Some(per_layer * 2)
    );
}

/// Two GLM-5-shaped layers (kv_lora_rank 32, rope 8), one running an indexer of width 256.
const DSA: &str = r#"{"model_type":"glm_moe_dsa","hidden_size":64,"num_hidden_layers":2,
        "num_attention_heads":4,"q_lora_rank":32,"kv_lora_rank":32,"qk_nope_head_dim":8,
        "qk_rope_head_dim":8,"v_head_dim":8,"intermediate_size":96,"vocab_size":100,
        "index_n_heads":2,"index_head_dim":256,"index_topk_pattern":"FS"}"#;

#[test]
fn an_indexer_key_is_cached_in_fp8_beside_the_latent() {
    let m = model(DSA);
    // The latent (32 + 8) per layer at the KV precision; the indexer's key 256 fp8 bytes
    // and 256 / 128 = 2 fp32 scales, in the one layer that runs it, at any precision.
    let (latent, key) = (32 + 8, 256 + 2 * 4);
    let bytes = |d: Dtype, tp: u64| per_token(&m, d, tp).map(|k| k.bytes.0).ok();
    assert_eq!(bytes(Dtype::Bf16, 1), Some(2 * latent * 2 + key));
    assert_eq!(bytes(Dtype::Fp8, 1), Some(2 * latent + key));
    // Both replicated on every GPU.
    assert_eq!(bytes(Dtype::Bf16, 4), bytes(Dtype::Bf16, 1));
    // Every token is kept, in every sequence.
    let batch = per_batch(&m, Dtype::Bf16, 1, 1000, 3)
        .map(|k| k.bytes.0)
        .ok();
    assert_eq!(batch, Some((2 * latent * 2 + key) * 1000 * 3));
    let d = per_batch(&m, Dtype::Bf16, 1, 1000, 3).map(|k| k.derivation);
    let d = d.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        d.formula,
        "L × (r_kv + d_rope) × T × B × b + L_idx × d_idx × T × B"
    );
    assert_eq!(
        d.substituted,
        "(2 × (32 + 8) × 1000) × 3 × 2 + (1 × 264 × 1000) × 3"
    );
    assert!(d.notes.iter().any(|n| n == "note_kv_indexer"));
    let term = |s: &str| {
        d.terms
            .iter()
            .find(|t| t.symbol == s)
            .map(|t| t.value.clone())
    };
    assert_eq!(term("L_idx").as_deref(), Some("1"));
    assert_eq!(term("d_idx").as_deref(), Some("264"));
    // vLLM's profile of the same model: one layer's page holds both.
    let p = crate::calc::memory::KvProfile::from_model(&m, Dtype::Bf16, 1, Architecture::Unknown);
    let per_layer: Vec<u64> = p
        .map(|p| p.layers.iter().map(|l| l.bytes_per_token.0).collect())
        .unwrap_or_default();
    assert_eq!(per_layer, vec![latent * 2 + key, latent * 2]);
}

#[test]
fn fp8_latent_of_a_sparse_model_is_in_fp8_ds_mla_on_hopper_only() {
    let m = model(DSA);
    // vLLM's fp8_ds_mla from the config's fields: kv_lora_rank (32) NoPE values in fp8,
    // one 4-byte fp32 scale per 128 of them (⌈32 / 128⌉ = 1), qk_rope_head_dim (8) in bf16.
    let (r_kv, d_rope): (u64, u64) = (32, 8);
    let ds = r_kv + r_kv.div_ceil(FP8_DS_MLA_SCALE_BLOCK) * 4 + d_rope * 2;
    assert_eq!(fp8_ds_mla_bytes_per_token(r_kv, d_rope), ds);
    // DeepSeek-V3.2's and GLM-5's 512 + 64: 512 + 4 × 4 + 64 × 2, vLLM's 656.
    assert_eq!(fp8_ds_mla_bytes_per_token(512, 64), 512 + 4 * 4 + 64 * 2);
    let key = 256 + 2 * 4;
    // The model-level figure keeps the plain fp8 latent, and its derivation says so.
    let d = per_batch(&m, Dtype::Fp8, 1, 1000, 3).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(d.bytes.0, (2 * (r_kv + d_rope) + key) * 1000 * 3);
    assert_eq!(
        d.derivation.substituted,
        "(2 × (32 + 8) × 1000) × 3 × 1 + (1 × 264 × 1000) × 3"
    );
    assert!(d.derivation.notes.iter().any(|n| n == "note_kv_fp8_ds_mla"));
    let bf16 = per_token(&m, Dtype::Bf16, 1).unwrap_or_else(|e| panic!("{e}"));
    assert!(!bf16
        .derivation
        .notes
        .iter()
        .any(|n| n == "note_kv_fp8_ds_mla"));
    // vLLM's profile on a GPU: fp8_ds_mla in both MLA layers on Hopper (one cache dtype per
    // engine, the layer without its own indexer too), the plain latent elsewhere.
    let per_layer = |arch: Architecture| -> Vec<u64> {
        crate::calc::memory::KvProfile::from_model(&m, Dtype::Fp8, 1, arch)
            .map(|p| p.layers.iter().map(|l| l.bytes_per_token.0).collect())
            .unwrap_or_default()
    };
    assert_eq!(per_layer(Architecture::Hopper), vec![ds + key, ds]);
    let plain = vec![r_kv + d_rope + key, r_kv + d_rope];
    for arch in [
        Architecture::Blackwell,
        Architecture::Ampere,
        Architecture::Unknown,
    ] {
        assert_eq!(per_layer(arch), plain, "{arch:?}");
    }
    // bf16 keeps the plain latent; a dense MLA model (no indexer) keeps plain fp8.
    assert!(!uses_fp8_ds_mla(&m, Dtype::Bf16, Architecture::Hopper));
    let dense = model(
        r#"{"model_type":"deepseek_v3","hidden_size":64,"num_hidden_layers":2,
            "num_attention_heads":4,"q_lora_rank":32,"kv_lora_rank":32,"qk_nope_head_dim":8,
            "qk_rope_head_dim":8,"v_head_dim":8,"intermediate_size":96,"vocab_size":100}"#,
    );
    assert!(!uses_fp8_ds_mla(&dense, Dtype::Fp8, Architecture::Hopper));
}

#[test]
fn mamba_state_is_constant() {
    // d_inner 2·64 = 128, N 16, k 4: (4 − 1)·128 + 128·16 = 2,432 elements per layer, 2 layers, fp16.
    let m = model(
        r#"{"model_type":"mamba","hidden_size":64,"num_hidden_layers":2,"vocab_size":100,"state_size":16,
            "expand":2,"conv_kernel":4,"time_step_rank":4,"torch_dtype":"float16"}"#,
    );
    assert_eq!(
        per_sequence(&m, Dtype::Fp16, 1, 4096)
            .map(|k| k.bytes.0)
            .ok(),
        Some(0)
    );
    assert_eq!(
        state_bytes(&m, Dtype::Fp16, 1).map(|k| k.bytes.0).ok(),
        Some(2 * (3 * 128 + 128 * 16) * 2)
    );
}
