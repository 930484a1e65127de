//! Issue 49, "every model counted exactly": the checkpoints of
//! `tests/fixtures/research/model_totals.csv` that have a verbatim `config.json` give their
//! published total to the parameter (`model_totals.md` says where each total comes from and
//! what it counts). The totals are read from the CSV, never written here a second time; every
//! row with a config and a total is checked here or named in [`CHECKED_ELSEWHERE`].
//!
//! Beside each total: the language model / vision split, worked by hand from the config's own
//! sizes, the tensor counts the CSV notes give (which show which matrices carry a bias), and
//! the KV cache per token as vLLM allocates it.

mod common;

use llm_serving_calculator::core::base::dtype::Dtype;
use llm_serving_calculator::core::base::units::{Bytes, GIB};
use llm_serving_calculator::core::calc::kv;
use llm_serving_calculator::core::calc::memory::{vllm_budget, KvProfile, VllmInputs};
use llm_serving_calculator::core::hardware::Architecture;
use llm_serving_calculator::core::model::config::{parse_model_text, parse_model_value};
use llm_serving_calculator::core::model::{LedgerSource, ModelDesc};
use serde_json::Value;
use std::path::PathBuf;

/// The rows checked here, by `model_id`.
const CHECKED: &[&str] = &[
    "Qwen/Qwen-7B",
    "Qwen/Qwen-72B",
    "openbmb/MiniCPM-V-2",
    "openbmb/MiniCPM-Llama3-V-2_5",
    "stabilityai/stablelm-zephyr-3b",
    "EleutherAI/gpt-j-6b",
    "tencent/Hunyuan-A13B-Instruct",
    "google/gemma-4-31B-it",
    "google/gemma-4-26B-A4B-it",
];

/// Rows with a config and a total that this file does not check, and why.
const CHECKED_ELSEWHERE: &[(&str, &str)] = &[
    (
        "moonshotai/Kimi-K2-Instruct",
        "mixed dtypes: the Hub total counts FP8 weights and F32 block scales; tests/corpus.rs",
    ),
    (
        "deepseek-ai/DeepSeek-V3",
        "the Hub total holds the MTP layer and the F32 block scales; tests/corpus.rs",
    ),
    (
        "deepseek-ai/DeepSeek-V3.2",
        "the total holds the MTP layer, which the language model leaves out; \
         deepseek_v32_and_glm_5_count_their_indexers below",
    ),
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// One row of `model_totals.csv`.
struct Row {
    model_id: String,
    config_file: String,
    total: Option<u64>,
    notes: String,
}

fn rows() -> Vec<Row> {
    let p = root().join("tests/fixtures/research/model_totals.csv");
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    let mut out = Vec::new();
    common::for_each_csv_row(&text, |_, f| {
        let get = |n: &str| f.get(n).copied().unwrap_or_default().to_string();
        out.push(Row {
            model_id: get("model_id"),
            config_file: get("config_file"),
            total: get("total_params").trim().parse().ok(),
            notes: get("notes"),
        });
    });
    out
}

#[track_caller]
fn row(id: &str) -> Row {
    rows()
        .into_iter()
        .find(|r| r.model_id == id)
        .unwrap_or_else(|| panic!("{id} is not in model_totals.csv"))
}

#[track_caller]
fn published(id: &str) -> u64 {
    row(id)
        .total
        .unwrap_or_else(|| panic!("{id} has no total in model_totals.csv"))
}

#[track_caller]
fn config_text(id: &str) -> String {
    let p = root().join(row(id).config_file);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[track_caller]
fn config(id: &str) -> Value {
    serde_json::from_str(&config_text(id)).unwrap_or_else(|e| panic!("{id}: {e}"))
}

#[track_caller]
fn model(id: &str) -> ModelDesc {
    parse_model_text(&config_text(id)).unwrap_or_else(|e| panic!("{id} did not parse: {e}"))
}

/// A config's whole-number value.
#[track_caller]
fn int(v: &Value, k: &str) -> u64 {
    v.get(k)
        .and_then(Value::as_u64)
        .unwrap_or_else(|| panic!("no {k}"))
}

/// The KV cache per token at bf16 on one GPU.
#[track_caller]
fn kv_per_token(m: &ModelDesc) -> u64 {
    kv::per_token(m, Dtype::Bf16, 1)
        .map(|b| b.bytes.0)
        .unwrap_or_else(|e| panic!("{e}"))
}

/// The "N tensors" figure of a row's notes.
#[track_caller]
fn tensors_in_notes(id: &str) -> u64 {
    let notes = row(id).notes;
    let end = notes
        .find(" tensors")
        .unwrap_or_else(|| panic!("{id}: no tensor count in the notes"));
    let digits: String = notes[..end]
        .chars()
        .rev()
        .take_while(char::is_ascii_digit)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    digits.parse().unwrap_or_else(|e| panic!("{id}: {e}"))
}

/// The config keys the ledger says were read.
fn keys_read(m: &ModelDesc) -> Vec<&str> {
    m.ledger
        .iter()
        .filter_map(|e| match &e.source {
            LedgerSource::Key(k) => Some(k.as_str()),
            _ => None,
        })
        .collect()
}

#[test]
fn every_row_with_a_config_and_a_total_is_accounted_for() {
    for r in rows() {
        if r.config_file.is_empty() || r.total.is_none() {
            continue;
        }
        let id = r.model_id.as_str();
        let here = CHECKED.contains(&id);
        let elsewhere = CHECKED_ELSEWHERE.iter().any(|(m, _)| *m == id);
        assert!(
            here != elsewhere,
            "{id}: checked here or named elsewhere, once"
        );
    }
    for id in CHECKED {
        assert!(!row(id).config_file.is_empty(), "{id} has a config");
    }
}

#[test]
fn every_checked_total_is_exact() {
    for id in CHECKED {
        let m = model(id);
        assert_eq!(m.params.total, published(id), "{id}");
        assert_eq!(
            m.params.language_model + m.params.vision,
            m.params.total,
            "{id}: the lines add up"
        );
    }
}

#[test]
fn qwen_v1_counts_its_biased_c_attn_and_its_gate_halves() {
    for id in ["Qwen/Qwen-7B", "Qwen/Qwen-72B"] {
        let c = config(id);
        let (h, layers, vocab) = (
            int(&c, "hidden_size"),
            int(&c, "num_hidden_layers"),
            int(&c, "vocab_size"),
        );
        let half = int(&c, "intermediate_size") / 2;
        // modeling_qwen.py, kv_channels × heads = h: per block ln_1, ln_2 2h; c_attn 3h² + 3h
        // (biased); c_proj h² (no bias, no_bias true); w1, w2, c_proj 3·h·(I/2); then ln_f h,
        // wte and an untied lm_head 2·V·h.
        let block = 2 * h + 3 * h * h + 3 * h + h * h + 3 * h * half;
        let m = model(id);
        assert_eq!(m.params.total, layers * block + h + 2 * vocab * h, "{id}");
        assert_eq!(m.params.vision, 0, "{id}");
        assert!(!m.tie_word_embeddings, "{id}");
        // The notes' tensor count: 8 per block (ln_1, c_attn weight and bias, c_proj, ln_2,
        // w1, w2, mlp.c_proj) and wte, ln_f, lm_head.
        assert_eq!(tensors_in_notes(id), 8 * layers + 3, "{id}");
        // Multi-head attention: K and V of every head, 2 bytes each.
        assert_eq!(kv_per_token(&m), 2 * layers * h * 2, "{id}");
        let keys = keys_read(&m);
        for k in [
            "kv_channels",
            "intermediate_size",
            "no_bias",
            "tie_word_embeddings",
        ] {
            assert!(keys.contains(&k), "{id}: {k} not in {keys:?}");
        }
        assert!(m.warnings.is_empty(), "{id}: {:?}", m.warnings);
    }
    // Qwen-7B's seq_length (8,192) is the length vLLM serves, not max_position_embeddings.
    let m = model("Qwen/Qwen-7B");
    assert_eq!(m.max_position_embeddings, Some(32_768));
    assert_eq!(m.engine_max_len.map(|e| e.tokens), Some(8_192));
}

/// The resampler of `q` queries from width `v` into width `h` (with a stored `pos_embed` of
/// `q·h` when `pos`): query, kv_proj, in_proj weight and bias, out_proj weight and bias, three
/// LayerNorms, proj.
fn resampler(q: u64, v: u64, h: u64, pos: bool) -> u64 {
    q * h + v * h + 3 * h * h + 3 * h + h * h + h + 6 * h + h * h + if pos { q * h } else { 0 }
}

/// A SigLIP block of width 1152 and MLP 4304: two LayerNorms, qkv and proj with biases, fc1 and
/// fc2 with biases.
const SIGLIP_BLOCK: u64 = 4 * 1152 + 4 * 1152 * 1152 + 4 * 1152 + 2 * 1152 * 4304 + 4304 + 1152;

/// The language model of a MiniCPM-V config, read as the Llama-style model it is.
fn llm_alone(id: &str) -> u64 {
    let mut c = config(id);
    if let Some(o) = c.as_object_mut() {
        o.insert("model_type".into(), "llama".into());
    }
    parse_model_value(&c)
        .map(|m| m.params.total)
        .unwrap_or_else(|e| panic!("{id}: {e}"))
}

#[test]
fn minicpm_v_2_counts_the_timm_tower_and_the_resampler() {
    let id = "openbmb/MiniCPM-V-2";
    let c = config(id);
    let (h, layers) = (int(&c, "hidden_size"), int(&c, "num_hidden_layers"));
    let m = model(id);
    assert_eq!(m.params.language_model, llm_alone(id));
    // vpm: timm's so400m SigLIP at 384 px, its last block dropped (drop_vision_last_layer):
    // patch conv 3·14²·1152 + 1152, pos_embed 27²·1152, 26 blocks, final LayerNorm 2·1152.
    let tower = 3 * 14 * 14 * 1152 + 1152 + 27 * 27 * 1152 + 26 * SIGLIP_BLOCK + 2 * 1152;
    // The resampler: 8² = 64 queries from 1152 into h, and its stored pos_embed.
    assert_eq!(m.params.vision, tower + resampler(64, 1152, h, true));
    // The notes' 694 tensors: llm 9 per layer + embed_tokens, norm, lm_head; vpm 12 per block
    // + patch weight and bias, pos_embed, norm weight and bias; resampler 14 (query, kv_proj,
    // in_proj weight and bias, out_proj weight and bias, three LayerNorms ×2, proj, pos_embed).
    assert_eq!(tensors_in_notes(id), (9 * layers + 3) + (12 * 26 + 5) + 14);
    // KV: 40 layers, 36 KV heads of 64, K and V, bf16.
    let kv_heads = int(&c, "num_key_value_heads");
    assert_eq!(kv_per_token(&m), 2 * layers * kv_heads * (h / 36) * 2);
    assert!(keys_read(&m).contains(&"vision_encoder"));
    assert!(m.warnings.is_empty(), "{:?}", m.warnings);
}

#[test]
fn minicpm_llama3_v_2_5_counts_the_navit_tower_and_the_resampler() {
    let id = "openbmb/MiniCPM-Llama3-V-2_5";
    let c = config(id);
    let (h, layers) = (int(&c, "hidden_size"), int(&c, "num_hidden_layers"));
    let m = model(id);
    // Llama-3-8B: 8,030,261,248.
    assert_eq!(m.params.language_model, llm_alone(id));
    assert_eq!(m.params.language_model, 8_030_261_248);
    // vpm: the SigLIP tower of vision_config, all 27 blocks (drop_vision_last_layer false):
    // patch conv, (980/14)² = 4,900 positions, post LayerNorm.
    let tower = 3 * 14 * 14 * 1152 + 1152 + 70 * 70 * 1152 + 27 * SIGLIP_BLOCK + 2 * 1152;
    // The resampler: 96 queries, its sin-cos positions a buffer (not stored).
    assert_eq!(m.params.vision, tower + resampler(96, 1152, h, false));
    // KV: 32 layers, 8 KV heads of 128.
    let kv_heads = int(&c, "num_key_value_heads");
    let hd = h / int(&c, "num_attention_heads");
    assert_eq!(kv_per_token(&m), 2 * layers * kv_heads * hd * 2);
    assert!(m.warnings.is_empty(), "{:?}", m.warnings);
}

/// The stablelm-zephyr-3b config as transformers' native `stablelm` type spells it.
fn stablelm_native() -> Value {
    let mut c = config("stabilityai/stablelm-zephyr-3b");
    if let Some(o) = c.as_object_mut() {
        o.insert("model_type".into(), "stablelm".into());
        o.insert(
            "architectures".into(),
            serde_json::json!(["StableLmForCausalLM"]),
        );
        o.remove("auto_map");
        o.remove("num_heads");
        if let Some(v) = o.remove("rope_pct") {
            o.insert("partial_rotary_factor".into(), v);
        }
        if let Some(v) = o.remove("norm_eps") {
            o.insert("layer_norm_eps".into(), v);
        }
    }
    c
}

#[test]
fn stablelm_counts_layernorm_biases_in_both_spellings() {
    let id = "stabilityai/stablelm-zephyr-3b";
    let c = config(id);
    let (h, layers, vocab, inter) = (
        int(&c, "hidden_size"),
        int(&c, "num_hidden_layers"),
        int(&c, "vocab_size"),
        int(&c, "intermediate_size"),
    );
    // Per layer two LayerNorms with biases 4h, q/k/v/o 4h² (no bias), gated MLP 3·h·I; final
    // LayerNorm 2h; untied head. The partial rotary (rope_pct) holds no parameter.
    let want = layers * (4 * h + 4 * h * h + 3 * h * inter) + 2 * h + 2 * vocab * h;
    let epoch = model(id);
    assert_eq!(epoch.params.total, want);
    let native = parse_model_value(&stablelm_native()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(native.params.total, want);
    for m in [&epoch, &native] {
        assert_eq!(kv_per_token(m), 2 * layers * h * 2, "{}", m.model_type);
        assert!(m.warnings.is_empty(), "{}: {:?}", m.model_type, m.warnings);
    }
}

#[test]
fn gpt_j_counts_parameters_not_its_mask_buffers() {
    let id = "EleutherAI/gpt-j-6b";
    let c = config(id);
    let (h, layers) = (int(&c, "n_embd"), int(&c, "n_layer"));
    let m = model(id);
    // The stored .bin also holds 28 attn.bias masks and 28 attn.masked_bias scalars: buffers.
    assert!(
        m.ledger.iter().any(|e| e.field == "attention_mask_buffers"),
        "the ledger says the mask buffers are left out"
    );
    assert_eq!(kv_per_token(&m), 2 * layers * h * 2);
}

/// A per-layer list of the config (`moe_topk`, `num_shared_expert`, `moe_intermediate_size`).
#[track_caller]
fn list(v: &Value, k: &str) -> Vec<u64> {
    v.get(k)
        .and_then(Value::as_array)
        .unwrap_or_else(|| panic!("no list {k}"))
        .iter()
        .map(|x| x.as_u64().unwrap_or_else(|| panic!("{k}: {x}")))
        .collect()
}

#[test]
fn hunyuan_a13b_reads_its_per_layer_lists() {
    let id = "tencent/Hunyuan-A13B-Instruct";
    let c = config(id);
    let (h, layers, vocab, inter) = (
        int(&c, "hidden_size"),
        int(&c, "num_hidden_layers"),
        int(&c, "vocab_size"),
        int(&c, "intermediate_size"),
    );
    let (heads, kv, hd) = (
        int(&c, "num_attention_heads"),
        int(&c, "num_key_value_heads"),
        int(&c, "attention_head_dim"),
    );
    let experts = int(&c, "num_experts");
    let (top_k, shared, moe_inter) = (
        list(&c, "moe_topk"),
        list(&c, "num_shared_expert"),
        list(&c, "moe_intermediate_size"),
    );
    // vLLM's hunyuan_v1.py: per layer two RMSNorms 2h; q, k, v, o without biases; query and key
    // layernorms 2d (use_qk_norm); the router E·h; E experts 3·h·I_e (moe_intermediate_size of
    // the layer); the shared MLP 3·h·(intermediate_size × num_shared_expert of the layer). Then
    // the final norm h and the tied embedding V·h.
    let attn = h * heads * hd + 2 * h * kv * hd + heads * hd * h + 2 * hd;
    let mut want = h + vocab * h;
    let mut active = want;
    for i in 0..layers as usize {
        let common = 2 * h + attn + experts * h + 3 * h * inter * shared[i];
        want += common + experts * 3 * h * moe_inter[i];
        active += common + top_k[i] * 3 * h * moe_inter[i];
    }
    let m = model(id);
    assert_eq!(m.params.total, want);
    assert_eq!(m.params.active, active);
    assert_eq!(m.params.vision, 0);
    assert!(m.tie_word_embeddings);
    // Every layer keeps K and V of its 8 heads of 128 (use_cla false), 2 bytes each.
    assert_eq!(kv_per_token(&m), 2 * layers * kv * hd * 2);
    let keys = keys_read(&m);
    for k in [
        "attention_head_dim",
        "moe_topk",
        "num_shared_expert",
        "use_qk_norm",
    ] {
        assert!(keys.contains(&k), "{k} not in {keys:?}");
    }
    assert!(m.warnings.is_empty(), "{:?}", m.warnings);
}

/// A DeepSeek-style MLA model with DeepSeek Sparse Attention, from its config: the parameters
/// of the main model and of each MTP module, and the indexer's per layer.
struct DsaCount {
    main: u64,
    mtp: u64,
    indexer: u64,
}

/// Counts a DSA model from its config's fields as the modeling code builds it (DeepSeek's
/// `inference/model.py`, transformers' `DeepseekV32Indexer`, vLLM's `deepseek_v2.py`).
fn dsa_count(c: &Value) -> DsaCount {
    let (h, layers, vocab, heads) = (
        int(c, "hidden_size"),
        int(c, "num_hidden_layers"),
        int(c, "vocab_size"),
        int(c, "num_attention_heads"),
    );
    let (rq, rkv, nope, rope, v) = (
        int(c, "q_lora_rank"),
        int(c, "kv_lora_rank"),
        int(c, "qk_nope_head_dim"),
        int(c, "qk_rope_head_dim"),
        int(c, "v_head_dim"),
    );
    let (e, mi, shared, first) = (
        int(c, "n_routed_experts"),
        int(c, "moe_intermediate_size"),
        int(c, "n_shared_experts"),
        int(c, "first_k_dense_replace"),
    );
    let (n, di) = (int(c, "index_n_heads"), int(c, "index_head_dim"));
    // MLA: q_a_proj, q_a_layernorm, q_b_proj, kv_a_proj_with_mqa, kv_a_layernorm, kv_b_proj,
    // o_proj; the indexer: wq_b, wk, k_norm (LayerNorm weight and bias), weights_proj.
    let mla = h * rq
        + rq
        + rq * heads * (nope + rope)
        + h * (rkv + rope)
        + rkv
        + rkv * heads * (nope + v)
        + heads * v * h;
    let indexer = rq * n * di + h * di + 2 * di + h * n;
    let attn = 2 * h + mla + indexer;
    // MoE: the router and its e_score_correction_bias, the experts, the shared experts.
    let moe = e * h + e + e * 3 * h * mi + 3 * h * shared * mi;
    let dense = 3 * h * int(c, "intermediate_size");
    let main = (0..layers)
        .map(|i| attn + if i < first { dense } else { moe })
        .sum::<u64>()
        + h
        + 2 * vocab * h;
    // Each MTP module: one MoE layer, enorm, hnorm, shared_head.norm, eh_proj 2h·h and its own
    // embedding and head.
    let mtp = attn + moe + 3 * h + 2 * h * h + 2 * vocab * h;
    DsaCount { main, mtp, indexer }
}

#[test]
fn deepseek_v32_and_glm_5_count_their_indexers() {
    for id in ["deepseek-ai/DeepSeek-V3.2", "zai-org/GLM-5"] {
        let c = config(id);
        let want = dsa_count(&c);
        let n_mtp = int(&c, "num_nextn_predict_layers");
        let m = model(id);
        assert_eq!(m.params.language_model, want.main, "{id}");
        assert_eq!(m.params.mtp, n_mtp * want.mtp, "{id}");
        assert_eq!(m.params.total, want.main + n_mtp * want.mtp, "{id}");
        assert!(want.indexer > 0, "{id}");
        // vLLM's indexer K cache (`DeepseekV32IndexerCache`): index_head_dim fp8 bytes and a
        // 4-byte fp32 scale per 128, stated in the ledger.
        let di = int(&c, "index_head_dim");
        let indexer = di + di / 128 * 4;
        let stated = m.ledger.iter().find(|e| e.field == "indexer_k_cache");
        assert_eq!(
            stated.map(|e| e.value.as_str()),
            Some(format!("{indexer} B").as_str()),
            "{id}"
        );
        // Each layer caches the MLA latent, kv_lora_rank + qk_rope_head_dim at 2 bytes, and
        // (no layer of these configs reuses another's top-k) its indexer's key, in fp8 at any
        // KV precision and on every GPU.
        let layers = int(&c, "num_hidden_layers");
        let latent = int(&c, "kv_lora_rank") + int(&c, "qk_rope_head_dim");
        assert_eq!(kv_per_token(&m), layers * (latent * 2 + indexer), "{id}");
        let at = |d: Dtype, tp: u64| kv::per_token(&m, d, tp).map(|b| b.bytes.0).ok();
        // At fp8 the model-level figure keeps the plain latent, kv_lora_rank +
        // qk_rope_head_dim at one byte each, plus the indexer.
        assert_eq!(at(Dtype::Fp8, 1), Some(layers * (latent + indexer)), "{id}");
        // On a GPU, vLLM's layout: on Hopper FlashMLA's sparse backend stores the latent as
        // `fp8_ds_mla` (kv_lora_rank fp8 values, an fp32 scale per 128 of them, the
        // qk_rope_head_dim part kept in bf16); on Blackwell FlashInfer's keeps it plain.
        let (r_kv, d_rope) = (int(&c, "kv_lora_rank"), int(&c, "qk_rope_head_dim"));
        let ds_mla = r_kv + r_kv.div_ceil(128) * 4 + d_rope * 2;
        let on = |arch: Architecture| {
            KvProfile::from_model(&m, Dtype::Fp8, 8, arch)
                .unwrap_or_else(|e| panic!("{e}"))
                .per_token_all_layers()
        };
        let hopper = Bytes(layers * (ds_mla + indexer));
        assert_eq!(on(Architecture::Hopper), hopper, "{id}");
        let plain = Bytes(layers * (latent + indexer));
        for arch in [Architecture::Blackwell, Architecture::Unknown] {
            assert_eq!(on(arch), plain, "{id} {arch:?}");
        }
        // `llmcalc vllm` with the same KV memory on an H200 and a B200: the blocks are that
        // memory over block_size × each GPU's bytes per token, which differ by the layout's.
        let available_gib = 40;
        let blocks = |gpu: &str| {
            let path = root().join(row(id).config_file);
            let (code, out, err) = common::run_cli(&[
                "vllm",
                "--config",
                &path.to_string_lossy(),
                "--gpu",
                gpu,
                "--tp",
                "8",
                "--kv-dtype",
                "fp8",
                "--available-kv-gib",
                &available_gib.to_string(),
                "--json",
            ]);
            assert_eq!(code, 0, "{id} {gpu}: {err}");
            let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}"));
            let n = |k: &str| v[k].as_u64().unwrap_or_else(|| panic!("{id} {gpu}: {k}"));
            (n("block_size"), n("bytes_per_block"), n("num_gpu_blocks"))
        };
        let available = available_gib * GIB;
        for (gpu, per_token) in [("h200-sxm", hopper), ("b200", plain)] {
            let (block_size, per_block, n) = blocks(gpu);
            assert_eq!(per_block, block_size * per_token.0, "{id} {gpu}");
            assert_eq!(n, available / per_block, "{id} {gpu}");
        }
        let (h200, b200) = (blocks("h200-sxm"), blocks("b200"));
        assert_eq!(h200.0, b200.0, "{id}: one block size");
        assert_eq!(
            h200.1 - b200.1,
            h200.0 * layers * (ds_mla - latent),
            "{id}: the layout's bytes"
        );
        assert_eq!(at(Dtype::Bf16, 8), Some(kv_per_token(&m)), "{id}");
        // vLLM pages the latents and the indexer keys in one group, a block the sum of every
        // layer's page (`UniformTypeKVCacheSpecs`): the blocks are the KV memory over it.
        let profile = KvProfile::from_model(&m, Dtype::Bf16, 8, Architecture::Unknown)
            .unwrap_or_else(|e| panic!("{e}"));
        let available = Bytes(64 * GIB);
        let b = vllm_budget(&VllmInputs::with_available_kv(available, 8192), &profile)
            .unwrap_or_else(|e| panic!("{e}"));
        let block = b.block_size * layers * (latent * 2 + indexer);
        assert_eq!(b.bytes_per_block, Bytes(block), "{id}");
        assert_eq!(b.num_gpu_blocks, available.0 / block, "{id}");
        // With the MTP layer loaded for speculative decoding, its attention and its own
        // indexer are cached too.
        let mut with_mtp = m.clone();
        with_mtp.load_mtp = true;
        assert_eq!(
            kv_per_token(&with_mtp),
            (layers + n_mtp) * (latent * 2 + indexer),
            "{id}"
        );
        assert!(
            m.warnings
                .iter()
                .all(|w| !format!("{w:?}").contains("unknown")),
            "{id}"
        );
    }
    // DeepSeek-V3.2 against the HF page's figure (the CSV's row; see model_totals.md).
    let id = "deepseek-ai/DeepSeek-V3.2";
    assert_eq!(model(id).params.total, published(id));
    // GLM-5: not checked against a published total (none found); the card's "744B" is the
    // main model, 743,911,218,432 by the count above.
    assert!(row("zai-org/GLM-5").total.is_none());
}

/// A Gemma 4 config's counts from its fields, as `modeling_gemma4.py` builds the model and the
/// checkpoint stores it: the language model, its share a token touches, each tower, and the
/// KV cache per token at bf16 as vLLM allocates it.
#[derive(Debug, PartialEq)]
struct Gemma4Count {
    text: u64,
    active_text: u64,
    vision: u64,
    audio: u64,
    kv_bf16: u64,
}

/// A whole number of `v`, or `default` when absent or null.
fn int_or(v: &Value, k: &str, default: u64) -> u64 {
    v.get(k).and_then(Value::as_u64).unwrap_or(default)
}

/// A flag of `v`, false when absent or null.
fn flag(v: &Value, k: &str) -> bool {
    v.get(k).and_then(Value::as_bool).unwrap_or(false)
}

/// Counts a Gemma 4 config (`Gemma4ForConditionalGeneration`) from its fields.
fn gemma4_count(c: &Value) -> Gemma4Count {
    let t = &c["text_config"];
    let (h, layers, vocab, heads) = (
        int(t, "hidden_size"),
        int(t, "num_hidden_layers"),
        int(t, "vocab_size"),
        int(t, "num_attention_heads"),
    );
    let (kv, hd, ghd, inter) = (
        int(t, "num_key_value_heads"),
        int(t, "head_dim"),
        int(t, "global_head_dim"),
        int(t, "intermediate_size"),
    );
    let k_eq_v = flag(t, "attention_k_eq_v");
    let global_kv = if k_eq_v {
        int(t, "num_global_key_value_heads")
    } else {
        kv
    };
    let shared = int_or(t, "num_kv_shared_layers", 0);
    let first_shared = layers - shared;
    let ple = int_or(t, "hidden_size_per_layer_input", 0);
    let types: Vec<&str> = t["layer_types"]
        .as_array()
        .unwrap_or_else(|| panic!("no layer_types"))
        .iter()
        .map(|x| x.as_str().unwrap_or_default())
        .collect();
    assert_eq!(types.len() as u64, layers);
    let moe = flag(t, "enable_moe_block").then(|| {
        (
            int(t, "num_experts"),
            int(t, "top_k_experts"),
            int(t, "moe_intermediate_size"),
        )
    });
    // Gemma4TextAttention: q_proj and o_proj h·H·d each, k_proj h·K·d, v_proj h·K·d unless the
    // layer is a full one with attention_k_eq_v, q_norm and k_norm d each (v_norm has no
    // weight). A KV-sharing layer still stores its k_proj, v_proj and k_norm.
    // Gemma4TextDecoderLayer: the MLP 3·h·I (2I wide on a KV-sharing layer with
    // use_double_wide_mlp), four norms, the layer_scalar buffer [1]; with per-layer inputs its
    // gate h·p, projection p·h and norm h; with the MoE block the router (proj E·h, scale h,
    // per_expert_scale E), the experts E·3·h·I_e and three more norms.
    let (mut text, mut inactive, mut kv_bf16) = (0, 0, 0);
    for (i, ty) in (0u64..).zip(&types) {
        let full = *ty == "full_attention" || i + 1 == layers;
        let (k, d, v_proj) = if full {
            (global_kv, ghd, !k_eq_v)
        } else {
            (kv, hd, true)
        };
        let attn = 2 * h * heads * d + h * k * d + if v_proj { h * k * d } else { 0 } + 2 * d;
        let wide = flag(t, "use_double_wide_mlp") && shared > 0 && i >= first_shared;
        let mlp = 3 * h * inter * if wide { 2 } else { 1 };
        let mut layer = attn + mlp + 4 * h + 1;
        if ple > 0 {
            layer += 2 * h * ple + h;
        }
        if let Some((e, top_k, ie)) = moe {
            layer += e * h + h + e + e * 3 * h * ie + 3 * h;
            inactive += (e - top_k) * 3 * h * ie;
        }
        text += layer;
        // vLLM caches K and V (V a copy of K on a k_eq_v layer) for every layer that does not
        // read an earlier layer's cache.
        if i < first_shared {
            kv_bf16 += 2 * k * d * 2;
        }
    }
    // Gemma4TextModel: embed_tokens (tied to the head), norm; the per-layer embedding table
    // V_p × (L·p), its projection h × (L·p) and its norm p.
    text += vocab * h + h;
    if ple > 0 {
        let vp = int(t, "vocab_size_per_layer_input");
        text += vp * layers * ple + h * layers * ple + ple;
    }
    // Gemma4VisionModel: patch input_proj 3·P²·v, the position table 2·N·v; per layer q/k/v/o,
    // q/k norms, four norms, the gated MLP; std_bias and std_scale with standardize; then
    // embed_vision's projection v·h. Clamp bounds are 0-dimensional: not in the Hub total.
    let vision = match c.get("vision_config").filter(|v| v.is_object()) {
        None => 0,
        Some(v) => {
            let (vh, vi, vl) = (
                int(v, "hidden_size"),
                int(v, "intermediate_size"),
                int(v, "num_hidden_layers"),
            );
            let (vheads, vkv, vd, patch, pos) = (
                int(v, "num_attention_heads"),
                int(v, "num_key_value_heads"),
                int(v, "head_dim"),
                int(v, "patch_size"),
                int(v, "position_embedding_size"),
            );
            let layer = 2 * vh * vheads * vd + 2 * vh * vkv * vd + 2 * vd + 4 * vh + 3 * vh * vi;
            let std = if flag(v, "standardize") { 2 * vh } else { 0 };
            3 * patch * patch * vh + 2 * pos * vh + vl * layer + std + vh * h
        }
    };
    // Gemma4AudioModel: two 3×3 convolutions (1 → c₀ → c₁) with LayerNorm weights, the input
    // projection (c₀/4)·c₁·a; per layer two feed-forward modules (a → 4a → a, two norms),
    // q/k/v/post and relative_k_proj 5a², per_dim_scale a/heads, the light convolution
    // (linear_start a·2a, linear_end a², depthwise k·a, two norms), three norms; output_proj
    // a·o + o; then embed_audio's projection o·h.
    let audio = match c.get("audio_config").filter(|v| v.is_object()) {
        None => 0,
        Some(a) => {
            let (w, al, aheads, k, o) = (
                int(a, "hidden_size"),
                int(a, "num_hidden_layers"),
                int(a, "num_attention_heads"),
                int(a, "conv_kernel_size"),
                int(a, "output_proj_dims"),
            );
            let ch = list(a, "subsampling_conv_channels");
            let (c0, c1) = (ch[0], ch[1]);
            let sub = 9 * c0 + c0 + 9 * c0 * c1 + c1 + (c0 / 4) * c1 * w;
            let layer = 2 * (8 * w * w + 2 * w)
                + 5 * w * w
                + w / aheads
                + 3 * w * w
                + k * w
                + 2 * w
                + 3 * w;
            sub + al * layer + w * o + o + o * h
        }
    };
    Gemma4Count {
        text,
        active_text: text - inactive,
        vision,
        audio,
        kv_bf16,
    }
}

/// The count of a parsed Gemma 4 model, in the same lines.
fn gemma4_parsed(m: &ModelDesc, audio: u64) -> Gemma4Count {
    Gemma4Count {
        text: m.params.language_model,
        active_text: m.params.active,
        vision: m.params.vision - audio,
        audio,
        kv_bf16: kv_per_token(m),
    }
}

#[test]
fn gemma_4_31b_and_26b_a4b_count_their_global_layers_and_experts() {
    for id in ["google/gemma-4-31B-it", "google/gemma-4-26B-A4B-it"] {
        let c = config(id);
        let want = gemma4_count(&c);
        let m = model(id);
        assert_eq!(want.text + want.vision + want.audio, published(id), "{id}");
        assert_eq!(gemma4_parsed(&m, 0), want, "{id}");
        assert_eq!(m.params.total, published(id), "{id}");
        assert_eq!(want.audio, 0, "{id}: audio_config null");
        // Every layer stores a layer_scalar: the ledger names them.
        let t = &c["text_config"];
        let layers = int(t, "num_hidden_layers");
        let stated = m.ledger.iter().find(|e| e.field == "layer_scalars");
        assert_eq!(
            stated.map(|e| e.value.clone()),
            Some(layers.to_string()),
            "{id}"
        );
        // The full layers attend with global_head_dim and (attention_k_eq_v) the global KV
        // heads, without a window; the sliding ones with sliding_window.
        let window = int(t, "sliding_window");
        for (l, ty) in m
            .layers
            .iter()
            .zip(t["layer_types"].as_array().into_iter().flatten())
        {
            let full = ty.as_str() == Some("full_attention");
            let want = if full {
                (
                    int(t, "num_global_key_value_heads"),
                    int(t, "global_head_dim"),
                    None,
                )
            } else {
                (
                    int(t, "num_key_value_heads"),
                    int(t, "head_dim"),
                    Some(window),
                )
            };
            match l.mixer {
                llm_serving_calculator::core::model::Mixer::Attention {
                    kv_heads,
                    head_dim,
                    v_head_dim,
                    window,
                    ..
                } => {
                    assert_eq!((kv_heads, head_dim, window), want, "{id}");
                    assert_eq!(v_head_dim, head_dim, "{id}: V cached beside K");
                }
                ref other => panic!("{id}: {other:?}"),
            }
        }
        assert!(m.kv_shared.is_empty(), "{id}");
        assert!(m.warnings.is_empty(), "{id}: {:?}", m.warnings);
    }
    // The MoE's active share: the dense MLP and 8 of the 128 experts of each layer.
    let m = model("google/gemma-4-26B-A4B-it");
    assert!(m.params.experts > 0 && m.params.active < m.params.language_model);
}

/// The reconstructed configs of the small Gemma 4 checkpoints (tests/fixtures/corpus), whose
/// totals `model_totals.csv` holds without a verbatim config.
const GEMMA4_SMALL: &[(&str, &str)] = &[
    (
        "google/gemma-4-E4B-it",
        "tests/fixtures/corpus/google__gemma-4-E4B-it.json",
    ),
    (
        "google/gemma-4-E2B-it",
        "tests/fixtures/corpus/google__gemma-4-E2B-it.json",
    ),
];

#[test]
fn gemma_4_e4b_and_e2b_count_per_layer_embeddings_shared_kv_and_audio() {
    for (id, path) in GEMMA4_SMALL {
        let text = std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{e}"));
        let c: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
        let want = gemma4_count(&c);
        let m = parse_model_text(&text).unwrap_or_else(|e| panic!("{id}: {e}"));
        assert_eq!(want.text + want.vision + want.audio, published(id), "{id}");
        assert_eq!(m.params.total, published(id), "{id}");
        assert_eq!(gemma4_parsed(&m, want.audio), want, "{id}");
        let audio = m.ledger.iter().find(|e| e.field == "audio_parameters");
        assert_eq!(
            audio.map(|e| e.value.clone()),
            Some(want.audio.to_string()),
            "{id}"
        );
        // The last num_kv_shared_layers layers keep no KV cache of their own.
        let t = &c["text_config"];
        let (layers, shared) = (
            int(t, "num_hidden_layers") as usize,
            int(t, "num_kv_shared_layers") as usize,
        );
        assert_eq!(
            m.kv_shared,
            (layers - shared..layers).collect::<Vec<_>>(),
            "{id}"
        );
        // use_clipped_linears: 4 clamp bounds per clipped linear (7 a vision layer, 10 an
        // audio layer), 0-dimensional, named in the ledger and not counted.
        let bounds = 4
            * (7 * int(&c["vision_config"], "num_hidden_layers")
                + 10 * int(&c["audio_config"], "num_hidden_layers"));
        let stated = m.ledger.iter().find(|e| e.field == "clip_bounds");
        assert_eq!(
            stated.map(|e| e.value.clone()),
            Some(bounds.to_string()),
            "{id}"
        );
        // The layers that share a cache are said so; nothing else is.
        assert_eq!(m.warnings.len(), 1, "{id}: {:?}", m.warnings);
    }
    // The E2B checkpoint's file holds the clamp bounds too: the per-tensor dump's 5,123,178,979
    // elements are the Hub's total and those 928 (see model_totals.csv).
    assert_eq!(published("google/gemma-4-E2B-it") + 928, 5_123_178_979);
}

/// A reconstructed config of the corpus (`tests/fixtures/corpus/`), for the rows of
/// `model_totals.csv` that have no verbatim config (`model_totals.md` section 7 says how each
/// was put together).
#[track_caller]
fn corpus_text(file: &str) -> String {
    let p = root().join("tests/fixtures/corpus").join(file);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[track_caller]
fn corpus_config(file: &str) -> Value {
    serde_json::from_str(&corpus_text(file)).unwrap_or_else(|e| panic!("{file}: {e}"))
}

#[track_caller]
fn corpus_model(file: &str) -> ModelDesc {
    parse_model_text(&corpus_text(file)).unwrap_or_else(|e| panic!("{file} did not parse: {e}"))
}

/// The warnings of a model, as text.
fn warning_texts(m: &ModelDesc) -> Vec<String> {
    m.warnings.iter().map(ToString::to_string).collect()
}

/// The KV bytes of one sequence of `tokens` tokens at bf16 on one GPU.
#[track_caller]
fn kv_per_sequence(m: &ModelDesc, tokens: u64) -> u64 {
    kv::per_sequence(m, Dtype::Bf16, 1, tokens)
        .map(|b| b.bytes.0)
        .unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn longcat_flash_chat_counts_its_zero_experts_and_its_mtp_embedding() {
    let id = "meituan-longcat/LongCat-Flash-Chat";
    let c = corpus_config("meituan-longcat__LongCat-Flash-Chat.json");
    let (h, blocks, heads, vocab) = (
        int(&c, "hidden_size"),
        int(&c, "num_layers"),
        int(&c, "num_attention_heads"),
        int(&c, "vocab_size"),
    );
    let (rq, rkv, nope, rope, v) = (
        int(&c, "q_lora_rank"),
        int(&c, "kv_lora_rank"),
        int(&c, "qk_nope_head_dim"),
        int(&c, "qk_rope_head_dim"),
        int(&c, "v_head_dim"),
    );
    let (ffn, e, z, ie) = (
        int(&c, "ffn_hidden_size"),
        int(&c, "n_routed_experts"),
        int(&c, "zero_expert_num"),
        int(&c, "expert_ffn_hidden_size"),
    );
    // vLLM's longcat_flash.py: DeepSeek-V2's MLA (q_a_proj, q_a_layernorm, q_b_proj,
    // kv_a_proj_with_mqa, kv_a_layernorm, kv_b_proj, o_proj).
    let mla = h * rq
        + rq
        + rq * heads * (nope + rope)
        + h * (rkv + rope)
        + rkv
        + rkv * heads * (nope + v)
        + heads * v * h;
    // A sublayer: input_layernorm and post_attention_layernorm, the MLA, a dense MLP.
    let sub = 2 * h + mla + 3 * h * ffn;
    // The MoE: the router classifier over routed and zero experts and its
    // e_score_correction_bias, the routed experts (the zero experts store nothing).
    let moe = (e + z) * h + (e + z) + e * 3 * h * ie;
    // Each block two sublayers and the MoE; the final norm; embedding and untied head.
    let main = blocks * (2 * sub + moe) + h + 2 * vocab * h;
    // The MTP module (model.mtp.*): enorm, hnorm, final norm, eh_proj 2h·h, one sublayer, its
    // own embedding (the head is shared).
    let mtp = 3 * h + 2 * h * h + sub + vocab * h;
    assert_eq!((main, mtp), (560_664_980_480, 1_197_899_776));
    let m = corpus_model("meituan-longcat__LongCat-Flash-Chat.json");
    assert_eq!(m.params.language_model, main);
    assert_eq!(m.params.mtp, mtp);
    assert_eq!(m.params.total, published(id));
    // Read by its architecture (the config has no model_type), then exactly: the only other
    // warning is the MTP module's.
    assert_eq!(m.model_type, "longcat_flash");
    let warned = warning_texts(&m);
    assert_eq!(warned.len(), 2, "{warned:?}");
    assert!(warned[0].contains("LongcatFlashForCausalLM"), "{warned:?}");
    assert!(
        warned[1].contains("= main model 560,664,980,480 + MTP 1,197,899,776"),
        "{warned:?}"
    );
    // vLLM holds the router classifier and its bias in float32, in every block.
    assert_eq!(m.params.router_fp32, blocks * ((e + z) * h + (e + z)));
    // Active: at most moe_topk routed experts a token (every pick a real expert).
    let k = int(&c, "moe_topk");
    assert_eq!(
        m.params.active,
        main - blocks * (e - k) * 3 * h * ie,
        "the upper bound of the card's 18.6B-31.3B"
    );
    // Two MLA caches per block, the latent r_kv + d_rope at 2 bytes each; with the MTP loaded,
    // its layer's too.
    assert_eq!(kv_per_token(&m), 2 * blocks * (rkv + rope) * 2);
    let mut with_mtp = m.clone();
    with_mtp.load_mtp = true;
    assert_eq!(kv_per_token(&with_mtp), (2 * blocks + 1) * (rkv + rope) * 2);
}

/// AFMoE's count from a config's fields, as vLLM's afmoe.py builds it.
fn afmoe_count(c: &Value) -> u64 {
    let (h, layers, heads, kv, d) = (
        int(c, "hidden_size"),
        int(c, "num_hidden_layers"),
        int(c, "num_attention_heads"),
        int(c, "num_key_value_heads"),
        int(c, "head_dim"),
    );
    let (inter, ie, e, shared, dense) = (
        int(c, "intermediate_size"),
        int(c, "moe_intermediate_size"),
        int(c, "num_experts"),
        int(c, "num_shared_experts"),
        int(c, "num_dense_layers"),
    );
    // Four norms; q, k, v, o and the output gate gate_proj; q_norm and k_norm over the head.
    let attn = 4 * h + h * heads * d + 2 * h * kv * d + heads * d * h + h * heads * d + 2 * d;
    // The router gate and its expert_bias, the routed experts, the shared MLP of shared × I_e.
    let moe = e * h + e + e * 3 * h * ie + 3 * h * shared * ie;
    layers * attn
        + dense * 3 * h * inter
        + (layers - dense) * moe
        + h
        + 2 * int(c, "vocab_size") * h
}

#[test]
fn trinity_nano_and_large_count_their_gated_attention() {
    for (id, file) in [
        (
            "arcee-ai/Trinity-Nano-Preview",
            "arcee-ai__Trinity-Nano-Preview.json",
        ),
        (
            "arcee-ai/Trinity-Large-Thinking",
            "arcee-ai__Trinity-Large-Thinking.json",
        ),
    ] {
        let c = corpus_config(file);
        let m = corpus_model(file);
        assert_eq!(m.params.total, afmoe_count(&c), "{id}");
        assert_eq!(m.params.total, published(id), "{id}");
        assert!(m.warnings.is_empty(), "{id}: {:?}", m.warnings);
        // Every global_attn_every_n_layers-th layer attends to all tokens, the others over
        // sliding_window: at a context longer than the window vLLM holds W tokens there.
        let (layers, every, w) = (
            int(&c, "num_hidden_layers"),
            int(&c, "global_attn_every_n_layers"),
            int(&c, "sliding_window"),
        );
        let full = layers / every;
        let per_layer = 2 * int(&c, "num_key_value_heads") * int(&c, "head_dim") * 2;
        assert_eq!(kv_per_token(&m), layers * per_layer, "{id}");
        let t = 4 * w;
        assert_eq!(
            kv_per_sequence(&m, t),
            (full * t + (layers - full) * w) * per_layer,
            "{id}"
        );
        // The router gate and its bias in fp32 in every MoE layer.
        let (h, e) = (int(&c, "hidden_size"), int(&c, "num_experts"));
        assert_eq!(
            m.params.router_fp32,
            (layers - int(&c, "num_dense_layers")) * (e * h + e),
            "{id}"
        );
    }
}

/// LFM2-MoE's count from a config's fields, as vLLM's lfm2_moe.py builds it.
fn lfm2_moe_count(c: &Value) -> u64 {
    let (h, layers, heads, kv) = (
        int(c, "hidden_size"),
        int(c, "num_hidden_layers"),
        int(c, "num_attention_heads"),
        int(c, "num_key_value_heads"),
    );
    let d = h / heads;
    let attn_layers = c["layer_types"]
        .as_array()
        .map_or(0, |t| t.iter().filter(|x| *x == "full_attention").count())
        as u64;
    let l = int(c, "conv_L_cache");
    let (inter, ie, e, dense) = (
        int(c, "intermediate_size"),
        int(c, "moe_intermediate_size"),
        int(c, "num_experts"),
        int(c, "num_dense_layers"),
    );
    // Short conv: in_proj h·3h, depthwise conv h·L, out_proj h·h. Attention: q, k, v, out
    // and the q/k layernorms over the head.
    let conv = 3 * h * h + h * l + h * h;
    let attn = h * heads * d + 2 * h * kv * d + heads * d * h + 2 * d;
    // The MoE: gate E·h, the fp32 expert_bias E, the experts.
    let moe = e * h + e + e * 3 * h * ie;
    layers * 2 * h
        + attn_layers * attn
        + (layers - attn_layers) * conv
        + dense * 3 * h * inter
        + (layers - dense) * moe
        + h
        + int(c, "vocab_size") * h
}

#[test]
fn lfm2_moe_counts_its_fp32_expert_bias() {
    let id = "LiquidAI/LFM2-8B-A1B";
    let c = corpus_config("LiquidAI__LFM2-8B-A1B.json");
    let m = corpus_model("LiquidAI__LFM2-8B-A1B.json");
    assert_eq!(m.params.total, lfm2_moe_count(&c));
    assert_eq!(m.params.total, published(id));
    assert!(m.warnings.is_empty(), "{:?}", m.warnings);
    // The Hub's F32 part: one expert_bias of 32 in each of the 22 MoE layers.
    assert_eq!(m.params.router_fp32, 704);
    // 6 attention layers cache K and V of 8 heads of 64; the 18 conv layers keep (3 − 1)·h.
    assert_eq!(kv_per_token(&m), 6 * 2 * 8 * 64 * 2);
    let state = kv::state_bytes(&m, Dtype::Bf16, 1)
        .map(|b| b.bytes.0)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(state, 18 * 2 * 2048 * 2);
    // LFM2-24B-A2B (no config found): the same layers at 40 deep, 10 of them attention, 64
    // experts of 1536, dense layers of 11776. Where the attention layers sit changes nothing.
    let id = "LiquidAI/LFM2-24B-A2B";
    let mut big = c.clone();
    let types: Vec<Value> = (0..40)
        .map(|i| Value::from(if i % 4 == 2 { "full_attention" } else { "conv" }))
        .collect();
    if let Some(o) = big.as_object_mut() {
        o.insert("num_hidden_layers".into(), 40.into());
        o.insert("num_experts".into(), 64.into());
        o.insert("moe_intermediate_size".into(), 1536.into());
        o.insert("intermediate_size".into(), 11_776.into());
        o.insert("layer_types".into(), Value::Array(types));
    }
    let m = parse_model_value(&big).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(m.params.total, lfm2_moe_count(&big));
    assert_eq!(m.params.total, published(id));
}

#[test]
fn k_exaone_counts_its_dense_first_layer_and_its_mtp_module() {
    let id = "LGAI-EXAONE/K-EXAONE-236B-A23B";
    let c = corpus_config("LGAI-EXAONE__K-EXAONE-236B-A23B.json");
    let (h, layers, heads, kv, d) = (
        int(&c, "hidden_size"),
        int(&c, "num_hidden_layers"),
        int(&c, "num_attention_heads"),
        int(&c, "num_key_value_heads"),
        int(&c, "head_dim"),
    );
    let (inter, ie, e, shared) = (
        int(&c, "intermediate_size"),
        int(&c, "moe_intermediate_size"),
        int(&c, "num_experts"),
        int(&c, "num_shared_experts"),
    );
    let moe_layers = c["is_moe_layer"].as_array().map_or(0, |a| {
        a.iter().filter(|x| x.as_bool() == Some(true)).count()
    }) as u64;
    // vLLM's exaone_moe.py: input and post-attention norms, q, k, v, o, q_norm and k_norm.
    let attn = 2 * h + h * heads * d + 2 * h * kv * d + heads * d * h + 2 * d;
    let dense = 3 * h * inter;
    // The router gate, its fp32 e_score_correction_bias, the experts, the shared MLP.
    let moe = e * h + e + e * 3 * h * ie + 3 * h * shared * ie;
    let main = layers * attn
        + (layers - moe_layers) * dense
        + moe_layers * moe
        + h
        + 2 * int(&c, "vocab_size") * h;
    // The MTP module: enorm, hnorm, final norm, eh_proj, one layer with the dense MLP.
    let mtp = 3 * h + 2 * h * h + attn + dense;
    assert_eq!((main, mtp), (236_571_156_352, 528_513_280));
    let m = corpus_model("LGAI-EXAONE__K-EXAONE-236B-A23B.json");
    assert_eq!(m.params.language_model, main);
    assert_eq!(m.params.mtp, int(&c, "num_nextn_predict_layers") * mtp);
    assert_eq!(m.params.total, published(id));
    let warned = warning_texts(&m);
    assert!(
        warned.len() == 1 && warned[0].contains("= main model 236,571,156,352 + MTP"),
        "{warned:?}"
    );
    assert_eq!(m.params.router_fp32, moe_layers * e);
    // 3 of every 4 layers slide over 128 tokens: at 8,192 tokens vLLM holds 36 × 128 + 12 ×
    // 8,192 tokens of 8 KV heads of 128, K and V, 2 bytes.
    let per_layer = 2 * kv * d * 2;
    let w = int(&c, "sliding_window");
    assert_eq!(kv_per_token(&m), layers * per_layer);
    assert_eq!(
        kv_per_sequence(&m, 8_192),
        (36 * w + 12 * 8_192) * per_layer
    );
}

#[test]
fn north_mini_code_counts_its_parallel_blocks() {
    let id = "CohereLabs/North-Mini-Code-1.0";
    let c = corpus_config("CohereLabs__North-Mini-Code-1.0.json");
    let (h, layers, heads, kv, d) = (
        int(&c, "hidden_size"),
        int(&c, "num_hidden_layers"),
        int(&c, "num_attention_heads"),
        int(&c, "num_key_value_heads"),
        int(&c, "head_dim"),
    );
    let (inter, dense_inter, e, dense) = (
        int(&c, "intermediate_size"),
        int(&c, "prefix_dense_intermediate_size"),
        int(&c, "num_experts"),
        int(&c, "first_k_dense_replace"),
    );
    // vLLM's cohere2_moe.py: one input_layernorm per layer (a parallel block), q, k, v, o
    // without biases; the dense prefix an MLP of prefix_dense_intermediate_size; the MoE a
    // router E·h and E experts of intermediate_size (no shared expert here); the final norm
    // and the tied embedding.
    let attn = h + h * heads * d + 2 * h * kv * d + heads * d * h;
    let moe = e * h + e * 3 * h * inter;
    let want = layers * attn
        + dense * 3 * h * dense_inter
        + (layers - dense) * moe
        + h
        + int(&c, "vocab_size") * h;
    let m = corpus_model("CohereLabs__North-Mini-Code-1.0.json");
    assert_eq!(m.params.total, want);
    assert_eq!(m.params.total, published(id));
    assert!(m.tie_word_embeddings);
    assert!(m.warnings.is_empty(), "{:?}", m.warnings);
    // 13 full-attention layers; 36 sliding over vLLM's sliding_window + 1 tokens.
    let per_layer = 2 * kv * d * 2;
    let w = int(&c, "sliding_window") + 1;
    assert_eq!(kv_per_token(&m), layers * per_layer);
    assert_eq!(
        kv_per_sequence(&m, 32_768),
        (13 * 32_768 + 36 * w) * per_layer
    );
}
