//! From pasted text to an exact [`ModelDesc`]: a Hugging Face `config.json` (many families)
//! or a `model.safetensors.index.json`.
//!
//! Parameter counts follow each family's Hugging Face modelling code (biases and norms
//! included), count distinct parameters (tied embeddings once), and use checked 64-bit
//! arithmetic: a config whose counts do not fit in `u64` gives [`CalcError::Overflow`], never a
//! wrapped number. Every derived field is recorded in the assumption ledger.
//!
//! ```
//! use llmcalc_core::model::config::parse_model_text;
//! let cfg = r#"{"model_type": "llama", "hidden_size": 4096, "intermediate_size": 11008,
//!   "num_hidden_layers": 32, "num_attention_heads": 32, "vocab_size": 32000,
//!   "tie_word_embeddings": false, "torch_dtype": "float16"}"#;
//! let m = parse_model_text(cfg).unwrap();
//! assert_eq!(m.params.total, 6_738_415_616);
//! ```

mod afmoe;
mod architecture;
mod bamba;
mod classic;
mod cohere2_moe;
mod common;
mod decoder;
mod deepseek;
pub mod defaults;
mod dispatch;
mod exaone_moe;
mod falcon_h1;
mod gemma3n;
mod gemma4;
mod granite_hybrid;
mod hunyuan;
mod jamba;
mod kit;
mod lfm2;
mod lfm2_moe;
mod longcat;
mod mamba;
mod mamba2;
pub mod max_len;
mod minicpmv;
mod minimax;
mod model_type;
mod nemotron_h;
mod others;
mod quant;
mod qwen3_5;
mod qwen3_next;
mod qwen_v1;
pub mod reader;
mod ssm;
mod vision;
mod windows;

use crate::base::dtype::Dtype;
use crate::base::error::{CalcError, Phrase};
use crate::base::units::Bytes;
use crate::model::desc::{LedgerSource, ModelDesc, ModelOrigin, ParamBreakdown, WeightFormat};
use common::base_dtype;
use dispatch::{build_family, family};
use model_type::{disagreements, text_part, type_of, Types};
use reader::Reader;
use serde_json::{Map, Value};
use vision::vision_tower;

pub use quant::weight_format_from;

/// Parses pasted text: a `model.safetensors.index.json` (it has `weight_map` or
/// `metadata.total_size`) or a `config.json`.
pub fn parse_model_text(text: &str) -> Result<ModelDesc, CalcError> {
    let v = crate::base::json::parse(text)?;
    parse_model_value(&v)
}

/// As [`parse_model_text`], from an already parsed JSON value.
pub fn parse_model_value(v: &Value) -> Result<ModelDesc, CalcError> {
    let Value::Object(root) = v else {
        return Err(CalcError::NotAnObject);
    };
    let total_size = root.get("metadata").and_then(|m| m.get("total_size"));
    if root.contains_key("weight_map") || total_size.is_some() {
        return from_index(root, total_size);
    }
    from_config(root)
}

fn from_index(
    root: &Map<String, Value>,
    total_size: Option<&Value>,
) -> Result<ModelDesc, CalcError> {
    let mut r = Reader::new(root, root);
    let exact = match total_size {
        Some(ts) => {
            // total_size may exceed MAX_DIM (it is bytes), so read it directly.
            let n = ts
                .as_u64()
                .filter(|n| *n > 0)
                .ok_or_else(|| CalcError::BadValue {
                    key: "metadata.total_size".into(),
                    found: reader::short(ts),
                    expected: Phrase::tr("exp_bytes_positive"),
                })?;
            r.note(
                "weights_bytes",
                n,
                LedgerSource::Key("metadata.total_size".into()),
            );
            Some(Bytes(n))
        }
        None => {
            r.warnings.push(Phrase::tr("wrn_index_no_total"));
            None
        }
    };
    let mut params = ParamBreakdown::default();
    if let Some(tp) = root.get("metadata").and_then(|m| m.get("total_parameters")) {
        if let Some(n) = tp.as_u64() {
            r.note(
                "params_total",
                n,
                LedgerSource::Key("metadata.total_parameters".into()),
            );
            params.total = n;
            params.active = n;
            params.other = n;
        }
    }
    let tensors = root
        .get("weight_map")
        .and_then(Value::as_object)
        .map_or(0, Map::len);
    r.derived("tensors", tensors, "ldg_entries_in_weight_map");
    r.default_note(
        "architecture",
        "unknown",
        "ldg_a_safetensors_index_lists_tensors_not_the",
    );
    Ok(ModelDesc {
        name: "model.safetensors.index.json".into(),
        model_type: "safetensors_index".into(),
        origin: ModelOrigin::SafetensorsIndex,
        hidden_size: 0,
        vocab_size: 0,
        layers: Vec::new(),
        tie_word_embeddings: false,
        max_position_embeddings: None,
        engine_max_len: None,
        params,
        weights: WeightFormat::plain(Dtype::Bf16),
        exact_weight_bytes: exact,
        ledger: r.ledger,
        warnings: r.warnings,
        load_mtp: false,
        mtp_layers: Vec::new(),
        kv_shared: Vec::new(),
        ssm_state_dtype: None,
    })
}

fn from_config(root: &Map<String, Value>) -> Result<ModelDesc, CalcError> {
    let text = text_part(root);
    let primary = text.map_or(root, |(_, t)| t);
    let types = Types::of(root, text);
    let root_type = types.root.clone();
    let root_class = defaults::class_for(&root_type);
    let primary_class = match text {
        // The parent class names the part by its canonical key, whatever its spelling here.
        Some((_, t)) => {
            defaults::class_for(&type_of(t)).or_else(|| defaults::nested(root_class, "text_config"))
        }
        None => root_class,
    };
    let mut r = Reader::new(primary, root).with_classes(primary_class, root_class);
    if let Some((part, _)) = text {
        r.note(
            "language_model",
            part,
            LedgerSource::Derived(Phrase::tr("ldg_language_model_part").val("part", part)),
        );
        disagreements(&mut r, part, primary, root);
    }
    let mt = types.note(&mut r, text.map(|(part, _)| part));
    let fam = family(&mt).to_string();

    let parts = build_family(&mut r, &fam, &mt)?;

    let base = base_dtype(&mut r, &fam)?;
    let weights = quant::weight_format_from(&mut r, base, &fam)?;
    let name = root
        .get("_name_or_path")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(|s| s.chars().take(200).collect::<String>())
        .unwrap_or_else(|| {
            if mt.is_empty() {
                "model".into()
            } else {
                mt.clone()
            }
        });

    let mut acc = parts.acc;
    let mtp_layers = std::mem::take(&mut acc.mtp_layers);
    if root_type == "gemma3n" {
        gemma3n::towers(&mut r, &mut acc, root, parts.hidden)?;
    } else if root_type == "gemma4" {
        gemma4::towers(&mut r, &mut acc, root, parts.hidden)?;
    } else if fam == "minicpmv" {
        minicpmv::towers(&mut r, &mut acc, root, parts.hidden)?;
    } else if let Some(vc) = root.get("vision_config").and_then(Value::as_object) {
        match vision_tower(&mut r, vc, &root_type, &fam, parts.hidden)? {
            Some(n) => acc.tower(n)?,
            None => r.warnings.push(Phrase::tr("wrn_vision_not_counted")),
        }
    }
    let params = acc.finish();
    if params.mtp > 0 {
        r.default_note("mtp_loaded", false, "ldg_mtp_not_loaded");
    }
    if parts.stored_twice > 0 {
        let stored = params.total.saturating_add(parts.stored_twice);
        r.derived(
            "stored_parameters",
            stored,
            "ldg_the_checkpoint_stores_some_matrices_twice_a",
        );
        r.warnings.push(
            Phrase::tr("wrn_stored_twice")
                .val("distinct", crate::base::derivation::group(params.total))
                .val("stored", crate::base::derivation::group(stored)),
        );
    }
    if params.experts > 0 {
        r.derived(
            "params_active",
            params.active,
            "ldg_total_minus_the_routed_experts_a_token",
        );
    }
    let max_pos = parts.max_pos;
    let engine_max_len = max_len::vllm_max_len(&mut r, &mt, max_pos);
    Ok(ModelDesc {
        name,
        model_type: mt,
        origin: ModelOrigin::Config,
        hidden_size: parts.hidden,
        vocab_size: parts.vocab,
        layers: parts.layers,
        tie_word_embeddings: parts.tie,
        max_position_embeddings: max_pos,
        engine_max_len,
        params,
        weights,
        exact_weight_bytes: None,
        ledger: r.ledger,
        warnings: r.warnings,
        load_mtp: false,
        mtp_layers,
        kv_shared: parts.kv_shared,
        ssm_state_dtype: parts.ssm_state_dtype,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::checked::{add, mul};

    #[test]
    fn checked_helpers() {
        assert_eq!(mul("ovf_params", &[2, 3, 4]).ok(), Some(24));
        assert!(matches!(
            mul("ovf_params", &[u64::MAX, 2]),
            Err(CalcError::Overflow { .. })
        ));
        assert!(matches!(
            add("ovf_params", &[u64::MAX, 1]),
            Err(CalcError::Overflow { .. })
        ));
    }

    #[test]
    fn a_sampling_top_k_is_not_read_as_experts_per_token() {
        // transformers 4.x saved the sampling parameter `top_k` in configs (Llama 3.2 Vision's
        // has 50); no family spells its experts per token so, so it is no spelling of
        // num_experts_per_tok: the count is missing, not 50.
        let cfg = r#"{"model_type":"some_moe","hidden_size":64,"intermediate_size":128,
            "num_hidden_layers":2,"num_attention_heads":4,"vocab_size":100,
            "num_local_experts":8,"top_k":50}"#;
        match parse_model_text(cfg) {
            Err(CalcError::MissingKey { key, .. }) => assert_eq!(key, "num_experts_per_tok"),
            other => panic!("{:?}", other.map(|m| m.params.total)),
        }
    }

    #[test]
    fn a_chatglm_config_reads_through_the_generic_spellings() {
        // No transformers class reads ChatGLM: its spellings come from the `*` rows.
        // h = 64, 2 layers, 4 heads (d = 16), 2 KV groups, I = 128, V = 100, untied:
        // per layer q 64·64 + k, v 2·64·2·16 + o 64·64 + MLP 3·64·128 + 2 norms 2·64
        // = 4096 + 4096 + 4096 + 24576 + 128 = 36,992; ×2 = 73,984; + final norm 64
        // + embeddings and head 2·100·64 = 12,800 → 86,848.
        let cfg = r#"{"model_type":"chatglm","hidden_size":64,"ffn_hidden_size":128,
            "intermediate_size":128,"num_layers":2,"num_attention_heads":4,
            "multi_query_group_num":2,"padded_vocab_size":100,"seq_length":8192}"#;
        let m = parse_model_text(cfg).ok();
        assert_eq!(m.as_ref().map(|m| m.params.total), Some(86_848));
        let keys: Vec<String> = m
            .iter()
            .flat_map(|m| &m.ledger)
            .filter_map(|e| match &e.source {
                LedgerSource::Key(k) => Some(k.clone()),
                _ => None,
            })
            .collect();
        for k in [
            "num_layers",
            "multi_query_group_num",
            "padded_vocab_size",
            "seq_length",
        ] {
            assert!(keys.iter().any(|x| x == k), "{k} not in {keys:?}");
        }
    }

    #[test]
    fn llama2_7b_by_hand() {
        // embed 32000·4096 = 131,072,000 (×2 untied = 262,144,000);
        // per layer 4·4096² + 3·4096·11008 + 2·4096 = 202,383,360; ×32 = 6,476,267,520;
        // + final norm 4096 → 6,738,415,616.
        let per_layer = 4 * 4096 * 4096 + 3 * 4096 * 11008 + 2 * 4096;
        let want = 2 * 32000 * 4096 + 32 * per_layer + 4096;
        let cfg = r#"{"model_type":"llama","hidden_size":4096,"intermediate_size":11008,
            "num_hidden_layers":32,"num_attention_heads":32,"vocab_size":32000,"tie_word_embeddings":false}"#;
        let m = parse_model_text(cfg).map(|m| m.params.total).ok();
        assert_eq!(m, Some(want));
    }
}
