//! The `max_model_len` vLLM starts with when `--max-model-len` is not given, as its
//! `_get_and_verify_max_len` derives it (vLLM 0.12.0, `vllm/config/model.py`): the smallest of
//! its length keys, `model_max_length` over every other, RoPE scaling (YaRN from
//! `original_max_position_embeddings`, `llama3` and LongRoPE not scaled, Gemma 3 skipped), and
//! LongRoPE's start at `original_max_position_embeddings`. Every expected length is computed
//! here from the raw keys of the config by vLLM's rule for that case.

mod common;

use common::{h100, run_cli};
use llm_serving_calculator::core::base::Lang;
use llm_serving_calculator::core::model::desc::{LedgerSource, MaxLenRule};
use llm_serving_calculator::core::model::{parse_model_text, ModelDesc};
use llm_serving_calculator::core::sim::{
    simulate, Arrival, Lengths, SimConfig, SimNote, WorkloadSpec,
};
use serde_json::Value;

fn read(path: &str) -> String {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[track_caller]
fn model(text: &str) -> ModelDesc {
    parse_model_text(text).unwrap_or_else(|e| panic!("did not parse: {e}"))
}

#[track_caller]
fn num(v: &Value, path: &[&str]) -> f64 {
    let mut at = v;
    for k in path {
        at = &at[*k];
    }
    at.as_f64()
        .unwrap_or_else(|| panic!("{path:?} is not a number"))
}

/// The ledger line of vLLM's length, if the parser wrote one.
fn ledger_line(m: &ModelDesc) -> Option<String> {
    m.ledger
        .iter()
        .find(|e| e.field == "vllm_max_model_len")
        .map(|e| match &e.source {
            LedgerSource::Derived(p) => format!("{} ({p})", e.value),
            other => panic!("not derived: {other:?}"),
        })
}

#[test]
fn real_configs_whose_rope_scaling_changes_vllms_length() {
    // AFM-4.5B: YaRN, so vLLM starts from original_max_position_embeddings × factor, whatever
    // max_position_embeddings says.
    let text = read("tests/fixtures/corpus/arcee-ai__AFM-4.5B-Base.json");
    let raw: Value = serde_json::from_str(&text).expect("json");
    let yarn = num(&raw, &["rope_scaling", "original_max_position_embeddings"])
        * num(&raw, &["rope_scaling", "factor"]);
    let m = model(&text);
    let positions = num(&raw, &["max_position_embeddings"]) as u64;
    assert_eq!(m.max_position_embeddings, Some(positions));
    assert_eq!(m.vllm_default_max_len(), Some(yarn as u64));
    assert_ne!(yarn as u64, positions, "the case must tell the rules apart");
    assert!(matches!(
        m.engine_max_len.as_ref().map(|e| &e.rule),
        Some(MaxLenRule::Yarn { .. })
    ));
    let line = ledger_line(&m).expect("ledger line");
    assert!(line.starts_with(&(yarn as u64).to_string()), "{line}");

    // InternLM2.5: "dynamic" scaling multiplies max_position_embeddings by its factor.
    let text = read("tests/fixtures/corpus/internlm__internlm2_5-7b-chat.json");
    let raw: Value = serde_json::from_str(&text).expect("json");
    let dynamic = num(&raw, &["max_position_embeddings"]) * num(&raw, &["rope_scaling", "factor"]);
    let m = model(&text);
    assert_eq!(m.vllm_default_max_len(), Some(dynamic as u64));
    assert!(matches!(
        m.engine_max_len.as_ref().map(|e| &e.rule),
        Some(MaxLenRule::RopeFactor { rope_type, .. }) if rope_type == "dynamic"
    ));
}

#[test]
fn real_configs_where_vllm_agrees_with_max_position_embeddings() {
    for (path, why) in [
        // YaRN whose original × factor is max_position_embeddings.
        (
            "tests/fixtures/corpus/moonshotai__Kimi-K2-Instruct.json",
            "yarn",
        ),
        (
            "tests/fixtures/corpus/deepseek-ai__DeepSeek-V3.1.json",
            "yarn",
        ),
        (
            "tests/fixtures/corpus/allenai__Olmo-3.1-32B-Instruct.json",
            "yarn",
        ),
        ("tests/fixtures/openai__gpt-oss-20b.json", "yarn"),
        // llama3 scaling is not applied; Gemma 3's linear factor neither (already scaled).
        (
            "tests/fixtures/meta-llama__Meta-Llama-3.1-8B.json",
            "llama3",
        ),
        ("tests/fixtures/corpus/google__gemma-3-4b-it.json", "gemma3"),
        // Qwen2.5-VL's mrope is vLLM's "default": no factor.
        (
            "tests/fixtures/corpus/Qwen__Qwen2.5-VL-7B-Instruct.json",
            "mrope",
        ),
        ("tests/fixtures/Qwen__Qwen3-8B.json", "no scaling"),
        ("tests/fixtures/openai-community__gpt2.json", "n_positions"),
    ] {
        let text = read(path);
        let raw: Value = serde_json::from_str(&text).expect("json");
        let m = model(&text);
        assert!(m.max_position_embeddings.is_some(), "{path}");
        assert_eq!(m.engine_max_len, None, "{path} ({why})");
        assert_eq!(
            m.vllm_default_max_len(),
            m.max_position_embeddings,
            "{path}"
        );
        if why == "yarn" {
            let rope = if raw["rope_scaling"].is_object() {
                &raw["rope_scaling"]
            } else {
                &raw["rope_parameters"]
            };
            let scaled = num(rope, &["original_max_position_embeddings"]) * num(rope, &["factor"]);
            assert_eq!(Some(scaled as u64), m.max_position_embeddings, "{path}");
        }
        assert_eq!(ledger_line(&m), None, "{path}");
    }
}

/// A small Llama with the given extra keys (max_position_embeddings 4,096 unless overridden).
fn llama(extra: &str) -> String {
    format!(
        r#"{{"model_type":"llama","hidden_size":64,"intermediate_size":128,
        "num_hidden_layers":2,"num_attention_heads":4,"vocab_size":100{extra}}}"#
    )
}

#[test]
fn each_of_vllms_rules_on_a_small_config() {
    // The smallest length key wins: ChatGLM / Qwen-1 spell a shorter seq_length.
    let m = model(&llama(
        r#","max_position_embeddings":32768,"seq_length":8192"#,
    ));
    assert_eq!(m.max_position_embeddings, Some(32768));
    assert_eq!(m.vllm_default_max_len(), Some(8192));
    assert_eq!(
        m.engine_max_len.map(|e| e.rule),
        Some(MaxLenRule::SmallestKey {
            key: "seq_length".into()
        })
    );
    // A key the calculator does not read still gives vLLM its length.
    let m = model(&llama(r#","max_position_embeddings":null,"seq_len":3000"#));
    assert_eq!(m.max_position_embeddings, None);
    assert_eq!(m.vllm_default_max_len(), Some(3000));
    // model_max_length (Command-R) wins even when larger.
    let m = model(&llama(
        r#","max_position_embeddings":8192,"model_max_length":131072"#,
    ));
    assert_eq!(m.vllm_default_max_len(), Some(131_072));
    assert_eq!(
        m.engine_max_len.map(|e| e.rule),
        Some(MaxLenRule::ModelMaxLength)
    );
    // Linear scaling; the legacy "type" key reads as rope_type.
    let m = model(&llama(
        r#","max_position_embeddings":4096,"rope_scaling":{"type":"linear","factor":2.5}"#,
    ));
    assert_eq!(m.vllm_default_max_len(), Some((4096.0 * 2.5) as u64));
    // transformers 5's rope_parameters per layer type.
    let m = model(&llama(
        r#","max_position_embeddings":4096,"rope_parameters":{
            "full_attention":{"rope_type":"linear","factor":4.0},
            "sliding_attention":{"rope_type":"default"}}"#,
    ));
    assert_eq!(m.vllm_default_max_len(), Some(4 * 4096));
    // YaRN takes the top-level original_max_position_embeddings over its own.
    let m = model(&llama(
        r#","max_position_embeddings":4096,"original_max_position_embeddings":1000,
        "rope_scaling":{"rope_type":"yarn","factor":3.0,"original_max_position_embeddings":2000}"#,
    ));
    assert_eq!(m.vllm_default_max_len(), Some(3 * 1000));
}

#[test]
fn longrope_starts_at_the_original_length() {
    // Phi-3 128k: LongRoPE ("su" in older configs), max_position_embeddings 131,072; vLLM 0.12
    // starts at original_max_position_embeddings, the config's or Phi3Config's default.
    let phi3 = |extra: &str| {
        format!(
            r#"{{"model_type":"phi3","hidden_size":64,"intermediate_size":128,
            "num_hidden_layers":2,"num_attention_heads":4,"vocab_size":100,
            "max_position_embeddings":131072,
            "rope_scaling":{{"type":"{extra}","long_factor":[1.0],"short_factor":[1.0]}}{}}}"#,
            if extra == "longrope" {
                r#","original_max_position_embeddings":8192"#
            } else {
                ""
            }
        )
    };
    let m = model(&phi3("longrope"));
    assert_eq!(m.vllm_default_max_len(), Some(8192));
    assert_eq!(
        m.engine_max_len.map(|e| e.rule),
        Some(MaxLenRule::LongRope { original: 8192 })
    );
    let m = model(&phi3("su"));
    let class_default = llm_serving_calculator::core::model::config::defaults::class_for("phi3")
        .and_then(|c| c.default_of("original_max_position_embeddings"))
        .and_then(Value::as_u64)
        .expect("Phi3Config's default");
    assert_eq!(m.vllm_default_max_len(), Some(class_default));
}

#[test]
fn a_nested_text_config_is_where_vllm_reads() {
    let cfg = r#"{"model_type":"llava","text_config":{"model_type":"llama","hidden_size":64,
        "intermediate_size":128,"num_hidden_layers":2,"num_attention_heads":4,
        "vocab_size":100,"max_position_embeddings":4096,
        "rope_scaling":{"type":"dynamic","factor":2.0}}}"#;
    assert_eq!(model(cfg).vllm_default_max_len(), Some(2 * 4096));
}

#[test]
fn values_vllm_could_not_use_leave_the_length_alone() {
    for extra in [
        r#","rope_scaling":{"type":"linear","factor":"x"}"#,
        r#","rope_scaling":{"type":"linear","factor":-2}"#,
        r#","rope_scaling":{"type":"linear","factor":1e300}"#,
        r#","rope_scaling":{"type":"yarn","factor":4}"#,
        r#","rope_scaling":{"factor":4}"#,
        r#","rope_scaling":[1,2]"#,
        r#","seq_length":"long""#,
        r#","model_max_length":0"#,
    ] {
        let m = model(&llama(&format!(
            r#","max_position_embeddings":4096{extra}"#
        )));
        // vLLM stops at each of these (a KeyError for YaRN without its original, a TypeError
        // or a check for the others); the calculator scales the length it has by a usable
        // factor and otherwise leaves it as it is.
        let want = if extra.contains("yarn") {
            4 * 4096
        } else {
            4096
        };
        assert_eq!(m.vllm_default_max_len(), Some(want), "{extra}");
    }
}

#[test]
fn the_simulator_and_llmcalc_vllm_start_at_vllms_length() {
    let path = "tests/fixtures/corpus/arcee-ai__AFM-4.5B-Base.json";
    let text = read(path);
    let raw: Value = serde_json::from_str(&text).expect("json");
    let yarn = (num(&raw, &["rope_scaling", "original_max_position_embeddings"])
        * num(&raw, &["rope_scaling", "factor"])) as u64;
    let positions = num(&raw, &["max_position_embeddings"]) as u64;

    let args = ["vllm", "--config", path, "--gpu", "h100-sxm", "--json"];
    let (code, json, err) = run_cli(&args);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&json).expect("json");
    assert_eq!(v["max_model_len"], yarn);
    assert_eq!(v["max_model_len_assumed"], false);

    let m = model(&text);
    let cfg = SimConfig {
        workload: WorkloadSpec {
            arrival: Arrival::AllAtOnce,
            lengths: Lengths::Fixed {
                input: 100,
                output: 10,
            },
            num_requests: 4,
            ..WorkloadSpec::default()
        },
        ..SimConfig::default()
    };
    let r = simulate(&m, h100(), &cfg).expect("runs");
    assert_eq!(r.engine.max_model_len, yarn);
    let note = r
        .notes
        .iter()
        .find(|n| matches!(n, SimNote::MaxModelLenDerived { .. }))
        .expect("the note");
    for lang in [Lang::En, Lang::Ko] {
        let text = note.message(lang);
        for figure in [yarn, positions] {
            assert!(text.contains(&figure.to_string()), "{text}");
        }
    }
    let mut cfg = cfg;
    cfg.engine.max_model_len = Some(4096);
    let r = simulate(&m, h100(), &cfg).expect("runs");
    assert!(!r
        .notes
        .iter()
        .any(|n| matches!(n, SimNote::MaxModelLenDerived { .. })));
}
