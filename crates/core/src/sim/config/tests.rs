use super::*;
use crate::base::units::Bytes;
use crate::calc::memory::{
    default_max_num_batched_tokens, default_max_num_seqs, vllm_total_memory, LARGE_GPU_MEMORY,
};
use crate::hardware::Catalog;
use crate::model::{parse_model_text, preset};
use crate::sim::engines::{sglang_max_running_requests, sglang_pool_bytes};

/// A small Qwen3.5 (Gated DeltaNet every three layers of four): Qwen3.5-397B-A17B's
/// config with 8 layers and 32 experts.
fn small_hybrid() -> ModelDesc {
    let mut v: serde_json::Value = serde_json::from_str(include_str!(
        "../../../../../tests/fixtures/e2e_configs/Qwen--Qwen3.5-397B-A17B.json"
    ))
    .expect("JSON");
    let t = &mut v["text_config"];
    t["num_hidden_layers"] = 8.into();
    t["num_experts"] = 32.into();
    let types: Vec<serde_json::Value> = t["layer_types"]
        .as_array()
        .expect("layer_types")
        .iter()
        .take(8)
        .cloned()
        .collect();
    t["layer_types"] = types.into();
    parse_model_text(&v.to_string()).expect("parses")
}

/// SGLang's split of a hybrid model's pool, derived here from its rules
/// (`model_runner_kv_cache_mixin.py` `handle_max_mamba_cache`, `init_memory_pool`;
/// `configs/mamba_utils.py` `mamba_cache_per_req`): one request's state is the linear
/// layers' conv window in bfloat16 and their SSM state in float32 (the config's
/// `mamba_ssm_dtype`); by default the slots take `0.9 / 1.9` of the pool and the running
/// requests are a third of them; `--disable-radix-cache` with `--max-running-requests N`
/// gives N slots and N requests; `--max-mamba-cache-size` sets the slots; the KV pool is
/// what the slots leave, in tokens of the attention layers alone.
#[test]
fn sglang_sizes_a_hybrid_models_state_slots_and_kv_pool() {
    let m = small_hybrid();
    let gpu = Catalog::builtin().get("h100-sxm").expect("gpu");
    let (tp, linear, attention) = (2u64, 6u64, 2u64);
    // Qwen3.5's linear layers: 16 key heads and 64 value heads of 128, kernel 4.
    let (kh, vh, dk, dv, k) = (16u64, 64u64, 128u64, 128u64, 4u64);
    let conv = (2 * kh * dk + vh * dv) / tp * (k - 1);
    let ssm = vh / tp * dv * dk;
    let per_seq = linear * (conv * 2 + ssm * 4);
    // Attention: 2 KV heads of 256, split 2 ways, K and V in bfloat16.
    let per_token = attention * (2 / tp) * 256 * 2 * 2;
    let cfg = |f: &dyn Fn(&mut EngineConfig)| {
        let mut e = EngineConfig {
            engine: EngineKind::Sglang,
            tp,
            max_model_len: Some(4096),
            ..EngineConfig::default()
        };
        f(&mut e);
        e.resolve(&m, gpu).expect("resolves")
    };
    let r = cfg(&|_| {});
    let p = r.pool.expect("pool");
    assert_eq!((p.state_per_seq.0, p.per_token.0), (per_seq, per_token));
    let rest = sglang_pool_bytes(p.total, p.non_torch, p.weights, p.fraction).0;
    let slots = (rest as f64 * 0.9 / 1.9 / per_seq as f64) as u64;
    assert_eq!(p.state_slots, slots);
    assert_eq!(p.pool.0, rest - slots * per_seq);
    assert_eq!(r.block_size, 1, "pages of one token");
    let tokens = p.pool.0 / per_token;
    assert!(
        r.num_gpu_blocks.abs_diff(tokens) <= 1,
        "{} vs {tokens}",
        r.num_gpu_blocks
    );
    let default_running = sglang_max_running_requests(r.num_gpu_blocks, 4096);
    assert_eq!(r.max_num_seqs, default_running.min(slots / 3));
    // The formula shows the states taken from the pool.
    assert!(p.formula().0.ends_with("− S"), "{}", p.formula().0);

    let r = cfg(&|e| {
        e.max_num_seqs = Some(128);
        e.sglang_state.disable_radix_cache = true;
    });
    let p = r.pool.expect("pool");
    assert_eq!((p.state_slots, r.max_num_seqs), (128, 128));
    assert_eq!(p.pool.0, rest - 128 * per_seq);

    let r = cfg(&|e| e.sglang_state.max_mamba_cache_size = Some(300));
    let p = r.pool.expect("pool");
    assert_eq!((p.state_slots, r.max_num_seqs), (300, 100));

    // `--mamba-ssm-dtype bfloat16` halves the SSM state.
    let r = cfg(&|e| e.sglang_state.mamba_ssm_dtype = Some(Dtype::Bf16));
    let p = r.pool.expect("pool");
    assert_eq!(p.state_per_seq.0, linear * (conv + ssm) * 2);

    // A smaller ratio leaves more to the KV pool.
    let r = cfg(&|e| e.sglang_state.mamba_full_memory_ratio = Some(0.5));
    let p = r.pool.expect("pool");
    assert_eq!(p.state_slots, (rest as f64 / 3.0 / per_seq as f64) as u64);
}

/// TensorRT-LLM's state pool is not modelled: a hybrid model is refused there, with the
/// sentence naming it; SGLang refuses a model without attention layers.
#[test]
fn trtllm_refuses_a_hybrid_and_sglang_a_pure_recurrent_model() {
    let gpu = Catalog::builtin().get("h100-sxm").expect("gpu");
    let e = EngineConfig {
        engine: EngineKind::Trtllm,
        max_model_len: Some(4096),
        tp: 2,
        ..EngineConfig::default()
    };
    let err = e.resolve(&small_hybrid(), gpu).expect_err("refused");
    assert!(
        format!("{err:?}").contains("exp_sim_engine_recurrent"),
        "{err:?}"
    );
    let mamba = parse_model_text(preset("ArthurZ__mamba-2.8b").expect("preset").json()).expect("m");
    let e = EngineConfig {
        engine: EngineKind::Sglang,
        tp: 1,
        ..e
    };
    let err = e.resolve(&mamba, gpu).expect_err("refused");
    assert!(
        format!("{err:?}").contains("exp_sim_sglang_recurrent_only"),
        "{err:?}"
    );
}

/// vLLM's rule: the large figures from 70 GiB, except on an A100 (its device name), which
/// keeps the small ones; an explicit flag always wins.
#[test]
fn a100_keeps_the_small_defaults_whatever_its_memory() {
    let cat = Catalog::builtin();
    let m = parse_model_text(preset("Qwen__Qwen3-8B").expect("preset").json()).expect("m");
    for (id, large) in [
        ("a100-sxm-80gb", false),
        ("a100-pcie-80gb", false),
        ("h100-sxm", true),
        ("rtx-4090", false),
    ] {
        let gpu = cat.get(id).expect("gpu");
        let big_memory = vllm_total_memory(gpu) >= LARGE_GPU_MEMORY;
        assert_eq!(
            big_memory,
            id != "rtx-4090",
            "{id}: its memory decides the rest"
        );
        let want = if large {
            (
                default_max_num_seqs(LARGE_GPU_MEMORY),
                default_max_num_batched_tokens(LARGE_GPU_MEMORY),
            )
        } else {
            (
                default_max_num_seqs(Bytes(0)),
                default_max_num_batched_tokens(Bytes(0)),
            )
        };
        assert_eq!(vllm_serve_defaults(gpu), want, "{id}");
        let r = EngineConfig::default().resolve(&m, gpu).expect("resolves");
        assert_eq!((r.max_num_seqs, r.max_num_batched_tokens), want, "{id}");
        let set = EngineConfig {
            max_num_seqs: Some(1000),
            max_num_batched_tokens: Some(4096),
            ..EngineConfig::default()
        };
        let r = set.resolve(&m, gpu).expect("resolves");
        assert_eq!(
            (r.max_num_seqs, r.max_num_batched_tokens),
            (1000, 4096),
            "{id}"
        );
    }
}
