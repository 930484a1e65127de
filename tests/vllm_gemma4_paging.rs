//! Gemma 4 on one H100 SXM under vLLM's paging of unequal pages: the blocks, cache tokens and
//! concurrency `llmcalc vllm` prints, against the same figures derived here from the config's
//! keys and vLLM V1's rules (`vllm/v1/core/kv_cache_utils.py`, read for the 0.19 line:
//! `unify_kv_cache_spec_page_size`, `_get_kv_cache_groups_uniform_page_size`,
//! `get_num_blocks`, `get_max_concurrency_for_kv_cache_config`, `_report_kv_cache_config`;
//! the per-layer pages of `vllm/v1/kv_cache_interface.py`; the layers' heads and head sizes
//! and the KV-sharing layers of `vllm/model_executor/models/gemma4.py`).
//!
//! The KV memory itself is the CLI's (`kv_cache_bytes`): what is checked here is how it is
//! paged. The serving simulator's block groups are checked to hold the same blocks per request
//! with the same per-group block sizes.

mod common;

use common::run_cli;
use llm_serving_calculator::core::model::parse_model_text;
use llm_serving_calculator::core::sim::EngineConfig;
use serde_json::Value;

/// `max_model_len` of the checks: longer than a sliding group's span (`W − 1 + T`), so each
/// sliding group holds its window's blocks, not the whole request's.
const MAX_MODEL_LEN: u64 = 32_768;

/// vLLM's default `block_size` (TRITON_ATTN, which vLLM forces for Gemma 4's two head sizes,
/// prefers the default 16).
const BLOCK_SIZE: u64 = 16;

/// vLLM's figures for one model, derived from its config.
#[derive(Debug, PartialEq)]
struct Derived {
    /// Tokens per block of the sliding and of the full layers.
    block_sizes: (u64, u64),
    /// Layers per group.
    group_size: u64,
    /// One block id's bytes: `group_size × the largest page`.
    bytes_per_block: u64,
    /// Blocks one request of `max_model_len` holds across the groups.
    per_request: u64,
    blocks: u64,
    tokens: u64,
    concurrency: f64,
}

fn read_config(path: &str) -> (String, Value) {
    let full = format!("{}/{path}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&full).expect("config");
    let v: Value = serde_json::from_str(&text).expect("json");
    (full, v)
}

/// The figures vLLM derives for `cfg` with `available` bytes of KV memory, KV elements of
/// `kv_bytes` bytes and `t` tokens per step.
fn derive(cfg: &Value, kv_bytes: u64, available: u64, t: u64) -> Derived {
    let tc = cfg.get("text_config").unwrap_or(cfg);
    let num = |k: &str| tc[k].as_u64().unwrap_or_else(|| panic!("{k}"));
    // gemma4.py: a sliding layer has num_key_value_heads heads of head_dim; a full layer heads
    // of global_head_dim, num_global_key_value_heads of them with attention_k_eq_v (whose
    // value is a copy of the key, still cached as V: the cache is (blocks, 2, block, heads,
    // head_size) whatever the layer).
    let k_eq_v = tc["attention_k_eq_v"].as_bool().unwrap_or(false);
    let full_heads = if k_eq_v {
        num("num_global_key_value_heads")
    } else {
        num("num_key_value_heads")
    };
    let sliding_bpt = 2 * num("num_key_value_heads") * num("head_dim") * kv_bytes;
    let full_bpt = 2 * full_heads * num("global_head_dim") * kv_bytes;
    // The last num_kv_shared_layers layers reuse an earlier layer's cache: no cache spec.
    let shared = tc["num_kv_shared_layers"].as_u64().unwrap_or(0);
    let cached = (num("num_hidden_layers") - shared) as usize;
    let types: Vec<&str> = tc["layer_types"].as_array().expect("layer_types")[..cached]
        .iter()
        .map(|x| x.as_str().expect("type"))
        .collect();
    let n_full = types.iter().filter(|x| **x == "full_attention").count() as u64;
    let n_sliding = cached as u64 - n_full;
    let window = num("sliding_window");
    // unify_kv_cache_spec_page_size: the smaller page's block grows by largest / its page.
    let (page_s, page_f) = (BLOCK_SIZE * sliding_bpt, BLOCK_SIZE * full_bpt);
    let page = page_s.max(page_f);
    assert_eq!(
        page % page_s.min(page_f),
        0,
        "vLLM would refuse these pages"
    );
    let block_sizes = (BLOCK_SIZE * page / page_s, BLOCK_SIZE * page / page_f);
    // _get_kv_cache_groups_uniform_page_size: the smaller count, or the larger one when it is
    // under 1.5 times the smaller.
    let (lo, hi) = (n_full.min(n_sliding), n_full.max(n_sliding));
    let group_size = if (hi as f64) < 1.5 * lo as f64 {
        hi
    } else {
        lo
    };
    let (groups_s, groups_f) = (n_sliding.div_ceil(group_size), n_full.div_ceil(group_size));
    // get_num_blocks: available // page // layers per group.
    let blocks = available / page / group_size;
    // max_memory_usage_bytes per group, in pages: a full group ⌈L / block⌉, a sliding one
    // ⌈min(W − 1 + T, L) / block⌉ + 1.
    let l = MAX_MODEL_LEN;
    let sliding_span = (window - 1 + t).min(l);
    let per_request = groups_f * l.div_ceil(block_sizes.1)
        + groups_s * (sliding_span.div_ceil(block_sizes.0) + 1);
    Derived {
        block_sizes,
        group_size,
        bytes_per_block: group_size * page,
        per_request,
        blocks,
        // _report_kv_cache_config (≤ 0.20): blocks // groups × the smallest block size.
        tokens: blocks / (groups_s + groups_f) * block_sizes.0.min(block_sizes.1),
        concurrency: blocks as f64 / per_request as f64,
    }
}

/// The bytes of one KV element of the CLI's `kv_dtype`.
fn kv_bytes(id: &str) -> u64 {
    match id {
        "bf16" | "fp16" => 2,
        "fp8" => 1,
        other => panic!("kv dtype {other}"),
    }
}

/// `llmcalc vllm` on one H100 SXM at [`MAX_MODEL_LEN`] prints the derived figures, and the
/// serving simulator's groups hold the derived blocks per request.
#[track_caller]
fn check(path: &str, want_block_sizes: (u64, u64)) {
    let (full, cfg) = read_config(path);
    let len = MAX_MODEL_LEN.to_string();
    let args = [
        "vllm",
        "--config",
        &full,
        "--gpu",
        "h100-sxm",
        "--max-model-len",
        &len,
        // The rules read above are the 0.19 line's (the cache tokens `⌊blocks / groups⌋ ×
        // block_size`, two lines): `VllmVersion`.
        "--vllm-version",
        "0.19.2",
        "--json",
    ];
    let (code, out, err) = run_cli(&args);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).expect("json");
    let n = |k: &str| v[k].as_u64().unwrap_or_else(|| panic!("{k}"));
    let t = v["inputs"]["max_num_batched_tokens"].as_u64().expect("T");
    let kv = kv_bytes(v["kv_dtype"].as_str().expect("kv_dtype"));
    let d = derive(&cfg, kv, n("kv_cache_bytes"), t);
    println!("{path}: {d:?}");
    assert_eq!(d.block_sizes, want_block_sizes, "{path}");
    assert_eq!(v["paging"], "hybrid", "{path}");
    assert_eq!(n("bytes_per_block"), d.bytes_per_block, "{path}");
    assert_eq!(n("num_gpu_blocks"), d.blocks, "{path}");
    assert_eq!(n("kv_cache_tokens"), d.tokens, "{path}");
    let x = v["max_concurrency"].as_f64().expect("concurrency");
    assert!((x - d.concurrency).abs() < 1e-12, "{path}: {x}");
    let lines: Vec<&str> = v["log_lines"]
        .as_array()
        .expect("lines")
        .iter()
        .map(|l| l.as_str().expect("line"))
        .collect();
    let conc_line = format!("Maximum concurrency for 32,768 tokens per request: {x:.2}x");
    assert!(lines.contains(&conc_line.as_str()), "{path}: {lines:?}");

    // The simulator draws from the same groups, each with its own block size.
    let text = std::fs::read_to_string(&full).expect("config");
    let m = parse_model_text(&text).expect("parses");
    let r = EngineConfig {
        max_model_len: Some(MAX_MODEL_LEN),
        ..EngineConfig::default()
    }
    .resolve(&m, common::h100())
    .expect("resolve");
    assert_eq!(r.budget.group_size, d.group_size, "{path}");
    assert_eq!(r.budget.blocks_per_request, d.per_request, "{path}");
    let held: u64 = r
        .groups
        .iter()
        .map(|g| g.count * g.blocks(MAX_MODEL_LEN, r.max_num_batched_tokens, r.block_size))
        .sum();
    assert_eq!(held, d.per_request, "{path}: {:?}", r.groups);
    for g in &r.groups {
        let own = g.block_size.unwrap_or(r.block_size);
        let want = if g.window.is_some() {
            d.block_sizes.0
        } else {
            d.block_sizes.1
        };
        assert_eq!(own, want, "{path}: {:?}", r.groups);
    }
}

/// Gemma 4 31B (NVIDIA's NVFP4 checkpoint of it): 50 sliding layers of 16 KV heads × 256
/// and 10 full layers of 4 × 512, so the sliding page is twice the full one and the full
/// layers' blocks hold 32 tokens.
#[test]
fn gemma4_31b_on_one_h100() {
    check(
        "tests/fixtures/research/configs/nvidia__Gemma-4-31B-IT-NVFP4.json",
        (16, 32),
    );
}

/// Gemma 4 26B-A4B: 25 sliding layers of 8 KV heads × 256 and 5 full layers of 2 × 512.
#[test]
fn gemma4_26b_a4b_on_one_h100() {
    check(
        "tests/fixtures/research/configs/google__gemma-4-26B-A4B.json",
        (16, 32),
    );
}

/// Gemma 4 E4B: 2 KV heads everywhere (no `attention_k_eq_v`), so the full layers' page is
/// the larger and the sliding layers' blocks hold 32 tokens; its last 18 layers share the
/// cache of earlier ones and get none of their own (24 cached: 20 sliding, 4 full).
#[test]
fn gemma4_e4b_on_one_h100() {
    check(
        "tests/fixtures/corpus/google__gemma-4-E4B-it.json",
        (32, 16),
    );
}

/// vLLM loads Gemma 4's `attention_k_eq_v` keys twice (`gemma4.py`: the full layers'
/// `QKVParallelLinear` has a V slot, filled with a clone of `k_proj`): per full layer
/// `hidden_size × global_head_dim × max(1, num_global_key_value_heads / TP)` more elements on
/// each GPU, at the precision of the attention matrices. E4B has no `attention_k_eq_v`.
#[test]
fn vllm_loads_the_k_eq_v_keys_twice() {
    use llm_serving_calculator::core::calc::memory::{k_as_v_elems, vllm_loaded_weights};
    for (path, bytes_per_elem) in [
        // NVIDIA's NVFP4: 4 bits and an 8-bit scale per 16 elements.
        (
            "tests/fixtures/research/configs/nvidia__Gemma-4-31B-IT-NVFP4.json",
            (0.5, 16),
        ),
        (
            "tests/fixtures/research/configs/google__gemma-4-26B-A4B.json",
            (2.0, 0),
        ),
        (
            "tests/fixtures/corpus/google__gemma-4-E4B-it.json",
            (2.0, 0),
        ),
    ] {
        let (full, cfg) = read_config(path);
        let tc = cfg.get("text_config").unwrap_or(&cfg);
        let num = |k: &str| tc[k].as_u64().unwrap_or(0);
        let k_eq_v = tc["attention_k_eq_v"].as_bool().unwrap_or(false);
        let n_full = tc["layer_types"]
            .as_array()
            .expect("layer_types")
            .iter()
            .filter(|x| x.as_str() == Some("full_attention"))
            .count() as u64;
        let text = std::fs::read_to_string(&full).expect("config");
        let m = parse_model_text(&text).expect("parses");
        for tp in [1u64, 2, 8] {
            let heads = num("num_global_key_value_heads");
            let want = if k_eq_v {
                n_full * num("hidden_size") * num("global_head_dim") * (heads / tp).max(1)
            } else {
                0
            };
            assert_eq!(k_as_v_elems(&m, tp), want, "{path} TP {tp}");
        }
        let w = vllm_loaded_weights(&m, None, 1, Some(common::h100())).expect("weights");
        let n = k_as_v_elems(&m, 1);
        let (per, group) = bytes_per_elem;
        let scales = if group > 0 { n.div_ceil(group) } else { 0 };
        let want = (n as f64 * per) as u64 + scales;
        assert_eq!(w.v_copy.0, want, "{path}");
        assert_eq!(
            w.bytes,
            w.checkpoint.per_gpu + w.padding + w.v_copy,
            "{path}"
        );
        println!("{path}: V copy {n} elements, {want} B");
    }
}
