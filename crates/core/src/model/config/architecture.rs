//! The `model_type` a config's `architectures` names, for a config that gives no `model_type`
//! or one this calculator does not know.
//!
//! vLLM builds a model from its config's `architectures` (its model registry maps
//! `Qwen2ForCausalLM` to its Qwen2 implementation), and a checkpoint whose `model_type` is a
//! remote-code name often declares a transformers architecture. transformers names a model
//! class after its configuration class: `{Prefix}ForCausalLM`, `{Prefix}ForConditionalGeneration`,
//! `{Prefix}LMHeadModel` and `{Prefix}Model` are built from `{Prefix}Config`, whose `model_type`
//! is `{prefix}` in lower case, with underscores where the class name has none (`GptOss` →
//! `gpt_oss`, `Qwen2_5_VL` → `qwen2_5_vl`). A causal-LM class of a multimodal family is built
//! from the text configuration (`Gemma3ForCausalLM` → `Gemma3TextConfig`, `gemma3_text`).
//!
//! So an architecture's prefix is compared with the `model_type`s this calculator reads, both
//! in lower case and without underscores; the `_text` type is tried first for a causal LM.

/// The suffixes of transformers' model class names, longest first where one ends another.
const SUFFIXES: &[&str] = &[
    "ForConditionalGeneration",
    "ForCausalLM",
    "LMHeadModel",
    "Model",
];

/// At most this many entries of `architectures` are looked at, and names up to this length.
const MAX_ENTRIES: usize = 8;
const MAX_NAME: usize = 100;

/// `s` in (ASCII) lower case without underscores or hyphens: the form in which a class prefix and a
/// `model_type` are compared.
fn squash(s: &str) -> String {
    s.chars()
        .filter(|c| *c != '_' && *c != '-')
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// The `model_type` built by the architecture class `arch`, among `known`, if any.
pub(super) fn type_of_architecture<'k>(arch: &str, known: &[&'k str]) -> Option<&'k str> {
    if arch.len() > MAX_NAME {
        return None;
    }
    let (prefix, suffix) = SUFFIXES.iter().find_map(|s| {
        arch.strip_suffix(s)
            .filter(|p| !p.is_empty())
            .map(|p| (p, *s))
    })?;
    let want = squash(prefix);
    let find = |w: &str| known.iter().copied().find(|k| squash(k) == w);
    let text = (suffix == "ForCausalLM")
        .then(|| find(&format!("{want}text")))
        .flatten();
    text.or_else(|| find(&want))
}

/// The first entry of a config's `architectures` that names a known `model_type`: the type
/// and the architecture as written.
pub(super) fn from_architectures<'k>(
    root: &serde_json::Map<String, serde_json::Value>,
    known: &[&'k str],
) -> Option<(&'k str, String)> {
    root.get("architectures")?
        .as_array()?
        .iter()
        .take(MAX_ENTRIES)
        .filter_map(serde_json::Value::as_str)
        .find_map(|a| type_of_architecture(a, known).map(|t| (t, a.to_string())))
}

#[cfg(test)]
mod tests {
    use super::*;

    const KNOWN: &[&str] = &[
        "llama",
        "qwen2",
        "qwen2_5_vl",
        "gpt_oss",
        "gpt2",
        "gemma3",
        "gemma3_text",
        "phimoe",
        "mpt",
        "deepseek_v3",
    ];

    #[test]
    fn prefixes_name_their_types() {
        for (arch, want) in [
            ("LlamaForCausalLM", Some("llama")),
            ("Qwen2ForCausalLM", Some("qwen2")),
            ("Qwen2_5_VLForConditionalGeneration", Some("qwen2_5_vl")),
            ("GptOssForCausalLM", Some("gpt_oss")),
            ("GPT2LMHeadModel", Some("gpt2")),
            ("Gemma3ForCausalLM", Some("gemma3_text")),
            ("Gemma3ForConditionalGeneration", Some("gemma3")),
            ("PhiMoEForCausalLM", Some("phimoe")),
            ("MPTForCausalLM", Some("mpt")),
            ("DeepseekV3ForCausalLM", Some("deepseek_v3")),
            ("LlamaModel", Some("llama")),
            ("ForCausalLM", None),
            ("FooForCausalLM", None),
            ("Llama", None),
            ("", None),
        ] {
            assert_eq!(type_of_architecture(arch, KNOWN), want, "{arch}");
        }
        let long = format!("{}ForCausalLM", "Llama".repeat(40));
        assert_eq!(type_of_architecture(&long, KNOWN), None);
    }

    #[test]
    fn the_first_entry_that_resolves_wins() {
        let v: serde_json::Value = serde_json::json!({
            "architectures": [7, "FooForCausalLM", "Qwen2ForCausalLM", "LlamaForCausalLM"]
        });
        let root = v.as_object().unwrap();
        assert_eq!(
            from_architectures(root, KNOWN),
            Some(("qwen2", "Qwen2ForCausalLM".to_string()))
        );
        let v = serde_json::json!({"architectures": "LlamaForCausalLM"});
        assert_eq!(from_architectures(v.as_object().unwrap(), KNOWN), None);
    }
}
