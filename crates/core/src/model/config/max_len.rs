//! The `max_model_len` vLLM derives from a config when `--max-model-len` is not given
//! (`_get_and_verify_max_len` in vLLM 0.12.0's `vllm/config/model.py`; 0.14.0 moves the key
//! search to `derive_max_model_len_and_key` and keeps the rules), where it is not the length the
//! calculator reads (`max_position_embeddings` and its spellings). Read on the language model's
//! config, with its class's defaults (vLLM's `hf_text_config`):
//!
//! 1. the smallest of nine length keys ([`POSSIBLE_KEYS`]), so ChatGLM's and Qwen-1's
//!    `seq_length` wins over a larger `max_position_embeddings`;
//! 2. `model_max_length` whenever it is set, larger or not (Command-R);
//! 3. RoPE scaling (`rope_scaling`, or transformers 5's `rope_parameters`, per layer type or
//!    not), unless the model type names Gemma 3 (its length is already scaled): every type but
//!    `su`/`longrope` and `llama3` multiplies the length by its `factor`, and YaRN starts from
//!    `original_max_position_embeddings` (the top-level key first, as vLLM's
//!    `patch_rope_parameters` copies it over);
//! 4. with LongRoPE, vLLM (from 0.12) starts at the top-level `original_max_position_embeddings`
//!    (Phi-3's class default 4,096) "to avoid performance degradation for shorter sequences".
//!
//! Not modelled: `tokenizer_config.json`'s `model_max_length` (vLLM takes the smaller; the
//! calculator sees `config.json` only); RoPE scaling of the 2,048 vLLM assumes when no key is
//! set; vLLM 0.10.x, which kept LongRoPE's scaled length. Where vLLM would stop (a length or
//! factor that is text or not positive, a RoPE set without a type, YaRN without its original)
//! the unusable value is skipped: the rest of the rule still applies.

use super::reader::{Reader, MAX_DIM};
use crate::model::desc::{EngineMaxLen, LedgerSource, MaxLenRule};
use serde_json::{Map, Value};

/// vLLM's length keys, in its order (`possible_keys`).
pub const POSSIBLE_KEYS: [&str; 9] = [
    "max_position_embeddings",
    "n_positions",
    "max_seq_len",
    "seq_length",
    "model_max_length",
    "max_target_positions",
    "max_sequence_length",
    "max_seq_length",
    "seq_len",
];

/// A positive finite number.
fn positive(v: &Value) -> Option<f64> {
    v.as_f64().filter(|x| x.is_finite() && *x > 0.0)
}

/// The RoPE parameter sets of the config: one, or one per layer type (every value an object).
fn rope_sets<'a>(r: &Reader<'a>) -> Vec<&'a Map<String, Value>> {
    let rope = r
        .engine_attr("rope_scaling")
        .or_else(|| r.engine_attr("rope_parameters"))
        .and_then(Value::as_object);
    match rope {
        Some(m) if !m.is_empty() && m.values().all(Value::is_object) => {
            m.values().filter_map(Value::as_object).collect()
        }
        Some(m) => vec![m],
        None => Vec::new(),
    }
}

/// A set's `rope_type` (or the legacy `type`), as vLLM's `patch_rope_parameters_dict` renames
/// it: `su` is `longrope`, `mrope` is `default`.
fn rope_type(set: &Map<String, Value>) -> Option<&str> {
    let t = set
        .get("rope_type")
        .or_else(|| set.get("type"))
        .and_then(Value::as_str)?;
    Some(match t {
        "su" => "longrope",
        "mrope" => "default",
        other => other,
    })
}

/// vLLM's default `max_model_len` for this config when it is not `positions` (the length the
/// calculator read), recorded in the ledger; `None` when the two agree or the config states no
/// length key (vLLM's assumed 2,048 is `calc::memory::default_max_model_len`'s).
pub(crate) fn vllm_max_len(
    r: &mut Reader,
    model_type: &str,
    positions: Option<u64>,
) -> Option<EngineMaxLen> {
    let num = |r: &Reader, k: &str| r.engine_attr(k).and_then(positive);
    let mut found: Option<(&str, f64)> = None;
    for key in POSSIBLE_KEYS {
        if let Some(v) = num(r, key) {
            if found.is_none_or(|(_, m)| v < m) {
                found = Some((key, v));
            }
        }
    }
    let model_max_length = num(r, "model_max_length");
    if let Some(v) = model_max_length {
        found = Some(("model_max_length", v));
    }
    let (key, base) = found?;
    let mut rule = if model_max_length.is_some() {
        MaxLenRule::ModelMaxLength
    } else {
        MaxLenRule::SmallestKey { key: key.into() }
    };
    let mut derived = base;
    let top_original = num(r, "original_max_position_embeddings");
    let sets = if model_type.contains("gemma3") {
        Vec::new()
    } else {
        rope_sets(r)
    };
    let mut longrope = false;
    let (mut factor, mut scaled_by, mut yarn_from) = (1.0, None, None);
    for set in &sets {
        match rope_type(set) {
            None | Some("llama3") => {}
            Some("longrope") => longrope = true,
            Some(t) => {
                if let Some(f) = set.get("factor").and_then(positive) {
                    factor = f;
                    scaled_by = Some(t.to_string());
                }
                if t == "yarn" {
                    let orig = top_original.or_else(|| {
                        set.get("original_max_position_embeddings")
                            .and_then(positive)
                    });
                    if let Some(o) = orig {
                        derived = o;
                        yarn_from = Some(o);
                    }
                }
            }
        }
    }
    derived *= factor;
    if let Some(original) = yarn_from {
        rule = MaxLenRule::Yarn {
            original: original as u64,
            factor,
        };
    } else if let (Some(t), true) = (scaled_by, factor != 1.0) {
        rule = MaxLenRule::RopeFactor {
            key: key.into(),
            base: base as u64,
            factor,
            rope_type: t,
        };
    }
    if let (true, Some(o)) = (longrope, top_original) {
        derived = o;
        rule = MaxLenRule::LongRope { original: o as u64 };
    }
    if !(1.0..=MAX_DIM as f64).contains(&derived) {
        return None;
    }
    let tokens = derived as u64;
    if Some(tokens) == positions {
        return None;
    }
    r.note(
        "vllm_max_model_len",
        tokens,
        LedgerSource::Derived(rule.phrase()),
    );
    Some(EngineMaxLen {
        tokens,
        positions,
        rule,
    })
}
