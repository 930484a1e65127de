//! Totals a user can check against a published figure: the checkpoint's count (`params_total`,
//! as the Hub counts the safetensors), the language model alone, the vision tower and the
//! multi-token-prediction modules, for the three cases of issue 16, and the memory rule for
//! MTP (vLLM skips it unless speculative decoding uses it).
//!
//! The configs are the published `config.json` files as their model pages give them (keys
//! equal to a class default are omitted there; the parser fills them from
//! `data/config_defaults.csv`). The expected figures are published ones, not our output.

use llm_serving_calculator::core::base::dtype::Dtype;
use llm_serving_calculator::core::calc::weights;
use llm_serving_calculator::core::calc::{per_token, state_bytes, KvProfile};
use llm_serving_calculator::core::hardware::Architecture;
use llm_serving_calculator::core::model::config::parse_model_text;
use llm_serving_calculator::core::model::{LedgerSource, ModelDesc};

/// google/gemma-3-4b-it `config.json` (the text config names 4 keys; Gemma3TextConfig gives
/// heads, KV heads, head_dim and the vocabulary).
const GEMMA3_4B: &str = r#"{
  "architectures": ["Gemma3ForConditionalGeneration"],
  "boi_token_index": 255999, "eoi_token_index": 256000, "eos_token_id": [1, 106],
  "image_token_index": 262144, "initializer_range": 0.02, "mm_tokens_per_image": 256,
  "model_type": "gemma3",
  "text_config": {"hidden_size": 2560, "intermediate_size": 10240, "model_type": "gemma3_text",
    "num_hidden_layers": 34, "rope_scaling": {"factor": 8.0, "rope_type": "linear"},
    "sliding_window": 1024},
  "torch_dtype": "bfloat16", "transformers_version": "4.50.0.dev0",
  "vision_config": {"hidden_size": 1152, "image_size": 896, "intermediate_size": 4304,
    "model_type": "siglip_vision_model", "num_attention_heads": 16, "num_hidden_layers": 27,
    "patch_size": 14, "vision_use_head": false}
}"#;

/// bigscience/bloom-560m `config.json` (BLOOM spells the width `n_embed`, the depth `n_layer`).
const BLOOM_560M: &str = r#"{
  "apply_residual_connection_post_layernorm": false, "architectures": ["BloomForCausalLM"],
  "attention_dropout": 0.0, "attention_softmax_in_fp32": true, "bias_dropout_fusion": true,
  "bos_token_id": 1, "eos_token_id": 2, "hidden_dropout": 0.0, "hidden_size": 1024,
  "initializer_range": 0.02, "layer_norm_epsilon": 1e-05, "masked_softmax_fusion": true,
  "model_type": "bloom", "n_head": 16, "n_inner": null, "n_layer": 24, "offset_alibi": 100,
  "pad_token_id": 3, "pretraining_tp": 1, "skip_bias_add": true, "skip_bias_add_qkv": false,
  "slow_but_exact": false, "transformers_version": "4.26.0", "unk_token_id": 0,
  "use_cache": true, "vocab_size": 250880
}"#;

#[track_caller]
fn model(text: &str) -> ModelDesc {
    match parse_model_text(text) {
        Ok(m) => m,
        Err(e) => panic!("did not parse: {e}"),
    }
}

fn class_default_fields(m: &ModelDesc) -> Vec<&str> {
    m.ledger
        .iter()
        .filter(|e| matches!(e.source, LedgerSource::ClassDefault(_)))
        .map(|e| e.field.as_str())
        .collect()
}

#[test]
fn gemma3_4b_is_the_hub_count_with_its_vision_tower() {
    // Hub (safetensors) count of google/gemma-3-4b-it: 4,300,079,472 ("4B").
    let m = model(GEMMA3_4B);
    assert_eq!(m.params.total, 4_300_079_472);
    assert_eq!(
        m.params.language_model + m.params.vision,
        m.params.total,
        "the lines add up"
    );
    assert!(m.params.vision > 0 && m.params.mtp == 0);
    let filled = class_default_fields(&m);
    for k in ["num_attention_heads", "kv_heads", "head_dim", "vocab_size"] {
        assert!(filled.contains(&k), "{k} from Gemma3TextConfig: {filled:?}");
    }
    // The tower is loaded: bf16 weights are 2 bytes for every stored parameter.
    let w = weights::checkpoint(&m, 1).map(|w| w.total.0).ok();
    assert_eq!(w, Some(2 * m.params.total));
}

#[test]
fn bloom_560m_reads_its_own_spellings() {
    // Hub count of bigscience/bloom-560m: 559,214,592.
    let m = model(BLOOM_560M);
    assert_eq!(m.params.total, 559_214_592);
    assert_eq!(m.params.language_model, m.params.total);
    // The same config with BLOOM's historical spelling of the width (`n_embed`, which
    // BloomConfig accepts) gives the same count.
    let n_embed = BLOOM_560M.replace("\"hidden_size\"", "\"n_embed\"");
    assert_eq!(model(&n_embed).params, m.params);
}

#[test]
fn deepseek_v3_main_model_and_checkpoint() {
    let text = include_str!("../data/presets/deepseek-ai__DeepSeek-V3.json");
    let m = model(text);
    // The model card's 671B main model, exactly as DeepSeek's report counts it.
    assert_eq!(m.params.language_model, 671_026_419_200);
    // The checkpoint also stores the MTP module with its own embedding and head (2·V·h).
    let mtp_copies = 2 * 129_280 * 7_168;
    assert!(m.params.mtp > mtp_copies);
    assert_eq!(m.params.total, m.params.language_model + m.params.mtp);
    // The Hub's safetensors count of deepseek-ai/DeepSeek-R1 (the same architecture and
    // config), 684,489,845,504 (data/presets/presets.csv); V3's own Hub figure,
    // 684,531,386,000, adds the 41,540,496 fp32 block-scale elements of its fp8 weights.
    assert_eq!(m.params.total, 684_489_845_504);
    assert_eq!(m.params.total + 41_540_496, 684_531_386_000);
}

#[test]
fn memory_leaves_mtp_out_unless_asked() {
    let mut m = model(include_str!(
        "../data/presets/deepseek-ai__DeepSeek-V3.json"
    ));
    let without = weights::checkpoint(&m, 1).map(|w| w.total.0).unwrap_or(0);
    m.load_mtp = true;
    let with = weights::checkpoint(&m, 1).map(|w| w.total.0).unwrap_or(0);
    assert!(with > without);
    // The MTP module is fp8 in its linear layers and bf16 elsewhere: at least one byte per
    // parameter, at most two.
    let d = with - without;
    assert!(d >= m.params.mtp && d <= 2 * m.params.mtp, "{d}");
    assert!(m
        .ledger
        .iter()
        .any(|e| e.field == "mtp_loaded" && matches!(e.source, LedgerSource::Default(_))));
}

#[test]
fn nested_parts_that_disagree_are_named() {
    // The top level says 4096, text_config says 2560: transformers builds the text model
    // from text_config, and the user is told which keys disagree.
    let text = GEMMA3_4B.replacen(
        "\"model_type\": \"gemma3\",",
        "\"model_type\": \"gemma3\", \"hidden_size\": 4096,",
        1,
    );
    let m = model(&text);
    assert_eq!(m.hidden_size, 2560);
    let w: Vec<String> = m.warnings.iter().map(ToString::to_string).collect();
    assert!(
        w.iter()
            .any(|s| s.contains("text_config.hidden_size = 2560")
                && s.contains("hidden_size = 4096")),
        "{w:?}"
    );
    // The same config without the contradiction has no such sentence.
    assert!(!model(GEMMA3_4B)
        .warnings
        .iter()
        .any(|p| p.to_string().contains("disagree")));
}

#[test]
fn an_unknown_model_type_names_the_keys_it_guessed() {
    let m = model(
        r#"{"model_type":"brand_new","hidden_size":512,"num_hidden_layers":2,
        "num_attention_heads":8,"vocab_size":1000}"#,
    );
    let w: Vec<String> = m.warnings.iter().map(ToString::to_string).collect();
    // No intermediate_size: the generic reader guesses 4 × hidden and says so.
    assert!(
        w.iter()
            .any(|s| s.contains("brand_new") && s.contains("intermediate_size = 2048")),
        "{w:?}"
    );
}

#[test]
fn llama_3_2_vision_counts_cross_attention_and_the_tiled_tower() {
    // meta-llama/Llama-3.2-11B-Vision-Instruct: the Hub's safetensors count is 10,670,220,835.
    // Its config differs from the 90B one (a real fixture) only in the text sizes, set here
    // from the 11B model card: 40 layers of width 4096 (32 heads, 8 KV heads, MLP 14336),
    // cross-attention at layers 3, 8, …, 38.
    let text = include_str!("fixtures/corpus/meta-llama__Llama-3.2-90B-Vision-Instruct.json");
    let mut v: serde_json::Value = serde_json::from_str(text).unwrap_or_default();
    if let Some(t) = v
        .get_mut("text_config")
        .and_then(serde_json::Value::as_object_mut)
    {
        for (k, n) in [
            ("hidden_size", 4096),
            ("num_hidden_layers", 40),
            ("num_attention_heads", 32),
            ("num_key_value_heads", 8),
            ("intermediate_size", 14336),
        ] {
            t.insert(k.into(), n.into());
        }
        t.insert(
            "cross_attention_layers".into(),
            serde_json::json!([3, 8, 13, 18, 23, 28, 33, 38]),
        );
    }
    let m = model(&v.to_string());
    assert_eq!(m.params.total, 10_670_220_835);
    assert!(m.params.vision > 0);
    assert_eq!(m.params.total, m.params.language_model + m.params.vision);
    // The cross-attention cache of vLLM's V0 engine held each image's encoder tokens:
    // 4 tiles × ((560 / 14)² + 1) = 6,404 (image_size 560, patch 14 in the fixture).
    let side = 560 / 14;
    let tokens = m
        .ledger
        .iter()
        .find(|e| e.field == "encoder_tokens_per_image")
        .map(|e| e.value.clone());
    assert_eq!(tokens, Some((4 * (side * side + 1)).to_string()));
    assert!(m.warnings.iter().any(|w| w
        .to_string()
        .contains("8 of the layers are cross-attention")));
}

#[test]
fn qwen3_next_counts_its_mtp_module_apart() {
    // Qwen3-Next-80B-A3B: the config names no MTP key, the checkpoint stores one module
    // (`mtp.*`, sharing the main embedding and head). By hand (h = 2048, V = 151,936):
    // gated full attention 2h·16·256 + 2·h·2·256 + 16·256·h + 2·256 = 27,263,488;
    // MoE 512·h + 512·3·h·512 + 3·h·512 + h = 1,614,809,088; two norms 2h.
    let h: u64 = 2048;
    let full = 2 * h * 16 * 256 + 2 * h * 2 * 256 + 16 * 256 * h + 2 * 256;
    let moe = 512 * h + 512 * 3 * h * 512 + 3 * h * 512 + h;
    // MTP: fc 2h·h, pre_fc_norm_embedding + pre_fc_norm_hidden + norm 3h, one layer.
    let mtp = 2 * h * h + 3 * h + full + moe + 2 * h;
    let m = model(include_str!(
        "fixtures/corpus/Qwen__Qwen3-Next-80B-A3B-Thinking.json"
    ));
    assert_eq!(m.params.mtp, mtp);
    assert_eq!(m.params.total, m.params.language_model + m.params.mtp);
    // The Hub's safetensors count of Qwen3-Next-80B-A3B-Instruct (same config values).
    assert_eq!(m.params.total, 81_324_862_720);
    // The model card's "80B" is the main model; vLLM skips `mtp.*` unless speculating.
    assert!(m.params.language_model.abs_diff(80_000_000_000) < 500_000_000);
    assert_eq!(m.loaded_params().total, m.params.language_model);
}

#[test]
fn falcon_h1_counts_attention_and_mamba_in_every_layer() {
    use llm_serving_calculator::core::base::dtype::Dtype;
    use llm_serving_calculator::core::calc::kv;
    // Falcon-H1-0.5B (h 1024, 36 layers, V 32,784, untied), from modeling_falcon_h1:
    // attention q/k/v/o 1024·512 + 2·1024·128 + 512·1024 = 1,310,720;
    // Mamba-2 (24 heads × 64 = d_ssm 1536, 1 group, state 128, conv 4, no gated norm):
    // in_proj 1024·(1536 + 1792 + 24), conv 1792·4 + 1792, dt_bias/A_log/D 3·24,
    // out_proj 1536·1024; MLP 3·1024·2048; two RMSNorms 2·1024.
    let attn = 1024 * 512 + 2 * 1024 * 128 + 512 * 1024;
    let conv_dim = 1536 + 2 * 128;
    let mamba = 1024 * (1536 + conv_dim + 24) + conv_dim * 4 + conv_dim + 3 * 24 + 1536 * 1024;
    let layer: u64 = attn + mamba + 3 * 1024 * 2048 + 2 * 1024;
    let want = 36 * layer + 1024 + 2 * 32_784 * 1024;
    let m = model(include_str!(
        "fixtures/corpus/tiiuae__Falcon-H1-0.5B-Instruct.json"
    ));
    assert_eq!(m.params.total, want);
    // The name says 0.5B.
    assert!(m.params.total.abs_diff(500_000_000) < 50_000_000);
    // vLLM: a KV cache for every attention (2 KV heads × 64, K and V, bf16) …
    let per_token = kv::per_token(&m, Dtype::Bf16, 1).map(|b| b.bytes.0).ok();
    assert_eq!(per_token, Some(36 * 2 * 2 * 64 * 2));
    // … and a Mamba-2 state per sequence: conv (4 − 1)·1792 + SSM 24·64·128, bf16.
    let state = kv::state_bytes(&m, Dtype::Bf16, 1).map(|b| b.bytes.0).ok();
    assert_eq!(state, Some(36 * (3 * conv_dim + 24 * 64 * 128) * 2));
}

/// A config's integer value (the tests below take the sizes from the config itself).
fn int(v: &serde_json::Value, k: &str) -> u64 {
    v.get(k)
        .and_then(serde_json::Value::as_u64)
        .unwrap_or_else(|| panic!("{k}"))
}

/// KV bytes per token, per GPU (tp 1), at bf16, of `m` with and without its MTP modules, and
/// the number of cached layers the KV profile has in each case.
fn kv_with_and_without_mtp(m: &mut ModelDesc) -> ((u64, usize), (u64, usize)) {
    let mut one = |load: bool| {
        m.load_mtp = load;
        let d = per_token(m, Dtype::Bf16, 1).unwrap_or_else(|e| panic!("{e}"));
        let p = KvProfile::from_model(m, Dtype::Bf16, 1, Architecture::Unknown)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            p.per_token_all_layers().0,
            d.bytes.0,
            "profile and kv agree"
        );
        let noted = d.derivation.notes.iter().any(|n| n == "note_kv_mtp_layers");
        assert_eq!(
            noted, load,
            "the derivation says when MTP layers are cached"
        );
        (d.bytes.0, p.layers.len())
    };
    let without = one(false);
    let with = one(true);
    m.load_mtp = false;
    (without, with)
}

/// With the MTP modules loaded (speculative decoding), vLLM caches their attention too: the
/// drafter's attention layers join the KV cache config (`EagleProposer.load_model`,
/// `draft_attn_layer_names`), one per `num_nextn_predict_layers`. Without them nothing
/// changes. Expected bytes come from the configs' own sizes and the per-layer formulas.
#[test]
fn mtp_layers_are_cached_only_when_loaded() {
    let bf16 = 2;
    // DeepSeek-V3: MLA, one latent (r_kv + d_rope) per token per layer.
    let text = include_str!("../data/presets/deepseek-ai__DeepSeek-V3.json");
    let c: serde_json::Value = serde_json::from_str(text).unwrap_or_default();
    let (n, mtp) = (
        int(&c, "num_hidden_layers"),
        int(&c, "num_nextn_predict_layers"),
    );
    let per_layer = (int(&c, "kv_lora_rank") + int(&c, "qk_rope_head_dim")) * bf16;
    let mut m = model(text);
    assert_eq!(m.mtp_layers.len() as u64, mtp);
    let ((b0, l0), (b1, l1)) = kv_with_and_without_mtp(&mut m);
    assert_eq!(b0, n * per_layer);
    assert_eq!(b1, (n + mtp) * per_layer);
    assert_eq!((l0 as u64, l1 as u64), (n, n + mtp));

    // GLM-4.5-Air: GQA in every layer, and in its MTP layer: 2 × H_kv × d_head.
    let text = include_str!("fixtures/corpus/zai-org__GLM-4.5-Air.json");
    let c: serde_json::Value = serde_json::from_str(text).unwrap_or_default();
    let (n, mtp) = (
        int(&c, "num_hidden_layers"),
        int(&c, "num_nextn_predict_layers"),
    );
    let per_layer = 2 * int(&c, "num_key_value_heads") * int(&c, "head_dim") * bf16;
    let mut m = model(text);
    let ((b0, _), (b1, _)) = kv_with_and_without_mtp(&mut m);
    assert_eq!(b0, n * per_layer);
    assert_eq!(b1, (n + mtp) * per_layer);

    // Qwen3-Next: only every `full_attention_interval`-th layer is cached (the others are
    // linear attention with a constant state); the MTP layer is full attention. The config
    // omits num_nextn_predict_layers: the published checkpoint stores one module.
    let text = include_str!("fixtures/corpus/Qwen__Qwen3-Next-80B-A3B-Thinking.json");
    let c: serde_json::Value = serde_json::from_str(text).unwrap_or_default();
    let full = int(&c, "num_hidden_layers") / int(&c, "full_attention_interval");
    let per_layer = 2 * int(&c, "num_key_value_heads") * int(&c, "head_dim") * bf16;
    let mut m = model(text);
    let mtp = m.mtp_layers.len() as u64;
    assert_eq!(mtp, 1);
    let state = state_bytes(&m, Dtype::Bf16, 1).map(|s| s.bytes.0).ok();
    let ((b0, _), (b1, _)) = kv_with_and_without_mtp(&mut m);
    assert_eq!(b0, full * per_layer);
    assert_eq!(b1, (full + mtp) * per_layer);
    // The MTP layer has no recurrent state.
    m.load_mtp = true;
    assert_eq!(
        state_bytes(&m, Dtype::Bf16, 1).map(|s| s.bytes.0).ok(),
        state
    );

    // A model without MTP modules is the same either way.
    let mut m = model(BLOOM_560M);
    let (without, with) = kv_with_and_without_mtp_plain(&mut m);
    assert_eq!(without, with);
}

/// As [`kv_with_and_without_mtp`] for a model without MTP modules (no note either way).
fn kv_with_and_without_mtp_plain(m: &mut ModelDesc) -> ((u64, usize), (u64, usize)) {
    let mut one = |load: bool| {
        m.load_mtp = load;
        let d = per_token(m, Dtype::Bf16, 1).unwrap_or_else(|e| panic!("{e}"));
        assert!(!d.derivation.notes.iter().any(|n| n == "note_kv_mtp_layers"));
        let p = KvProfile::from_model(m, Dtype::Bf16, 1, Architecture::Unknown)
            .unwrap_or_else(|e| panic!("{e}"));
        (d.bytes.0, p.layers.len())
    };
    (one(false), one(true))
}
