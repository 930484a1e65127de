//! The calibration's model configurations: hyperparameters of the public Hugging Face
//! `config.json` files (`data/presets/`, `shared/reference/configs/`); Llama-2-70B,
//! Mistral-7B-v0.1 and GPT-J-6B are built from their published hyperparameters ([`MODELS`]).

use crate::base::dtype::Dtype;
use crate::model::{Ffn, Layer, Mixer, ModelDesc, ModelOrigin, ParamBreakdown, WeightFormat};

/// A model the calibration rows name, with its hyperparameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ModelSpec {
    /// Canonical name.
    pub name: &'static str,
    /// Hidden size.
    pub hidden: u64,
    /// Decoder layers.
    pub layers: u64,
    /// Query heads.
    pub heads: u64,
    /// KV heads.
    pub kv_heads: u64,
    /// MLP intermediate size.
    pub intermediate: u64,
    /// Vocabulary.
    pub vocab: u64,
    /// Gated (SwiGLU) MLP.
    pub gated: bool,
    /// Sliding window, if any.
    pub window: Option<u64>,
    /// Where the hyperparameters come from.
    pub source: &'static str,
}

/// The models the calibration rows use.
pub const MODELS: &[ModelSpec] = &[
    ModelSpec { name: "Llama-2-7B", hidden: 4096, layers: 32, heads: 32, kv_heads: 32, intermediate: 11008, vocab: 32000, gated: true, window: None, source: "config.json (data/presets/meta-llama__Llama-2-7b-hf.json)" },
    ModelSpec { name: "Llama-2-13B", hidden: 5120, layers: 40, heads: 40, kv_heads: 40, intermediate: 13824, vocab: 32000, gated: true, window: None, source: "config.json (data/presets/meta-llama__Llama-2-13b-hf.json)" },
    ModelSpec { name: "Llama-2-70B", hidden: 8192, layers: 80, heads: 64, kv_heads: 8, intermediate: 28672, vocab: 32000, gated: true, window: None, source: "published hyperparameters (meta-llama/Llama-2-70b-hf config.json; not in data/presets)" },
    ModelSpec { name: "Mistral-7B-v0.1", hidden: 4096, layers: 32, heads: 32, kv_heads: 8, intermediate: 14336, vocab: 32000, gated: true, window: Some(4096), source: "published hyperparameters (mistralai/Mistral-7B-v0.1 config.json; not in data/presets)" },
    ModelSpec { name: "Llama-3.1-8B", hidden: 4096, layers: 32, heads: 32, kv_heads: 8, intermediate: 14336, vocab: 128_256, gated: true, window: None, source: "config.json (data/presets/meta-llama__Meta-Llama-3.1-8B.json)" },
    ModelSpec { name: "Llama-3.1-70B", hidden: 8192, layers: 80, heads: 64, kv_heads: 8, intermediate: 28672, vocab: 128_256, gated: true, window: None, source: "config.json (data/presets/meta-llama__Meta-Llama-3.1-70B.json); Llama-3.3-70B has the same architecture" },
    ModelSpec { name: "GPT-J-6B", hidden: 4096, layers: 28, heads: 16, kv_heads: 16, intermediate: 16384, vocab: 50400, gated: false, window: None, source: "published hyperparameters (EleutherAI/gpt-j-6b config.json: n_embd 4096, n_layer 28, n_head 16, n_inner 4×n_embd, vocab 50400; not in data/presets)" },
];

/// Builds a dense decoder (Llama-style: untied head, no biases) from hyperparameters, in bf16.
/// Parameter counts: embeddings V·h, attention L·h·(2·h + 2·kv·d), MLP L·(3|2)·h·I, norms
/// (2L + 1)·h, head V·h. Llama-2-7B gives 6,738,415,616 (params.csv).
pub fn dense_model(s: &ModelSpec) -> ModelDesc {
    let hd = s.hidden / s.heads.max(1);
    let mixer = Mixer::Attention {
        num_heads: s.heads,
        kv_heads: s.kv_heads,
        head_dim: hd,
        v_head_dim: hd,
        window: s.window,
    };
    let ffn = Ffn::Dense {
        intermediate: s.intermediate,
        gated: s.gated,
    };
    let layers = vec![Layer { mixer, ffn }; s.layers as usize];
    let attn = s.layers * (s.hidden * s.heads * hd * 2 + s.hidden * s.kv_heads * hd * 2);
    let mlp = s.layers * if s.gated { 3 } else { 2 } * s.hidden * s.intermediate;
    let emb = s.vocab * s.hidden;
    let norms = (2 * s.layers + 1) * s.hidden;
    let total = emb * 2 + attn + mlp + norms;
    ModelDesc {
        name: s.name.to_string(),
        model_type: "llama".into(),
        origin: ModelOrigin::Config,
        hidden_size: s.hidden,
        vocab_size: s.vocab,
        layers,
        tie_word_embeddings: false,
        max_position_embeddings: None,
        engine_max_len: None,
        params: ParamBreakdown {
            embeddings: emb,
            attention: attn,
            mlp,
            norms,
            lm_head: emb,
            total,
            active: total,
            linear: attn + mlp,
            language_model: total,
            ..ParamBreakdown::default()
        },
        weights: WeightFormat {
            dtype: Dtype::Bf16,
            group_size: None,
            scale_bits: 0,
            zero_point: false,
            method: "none".into(),
            experts_only: false,
            base: Dtype::Bf16,
        },
        exact_weight_bytes: None,
        ledger: Vec::new(),
        warnings: Vec::new(),
        load_mtp: false,
        mtp_layers: Vec::new(),
        kv_shared: Vec::new(),
        ssm_state_dtype: None,
    }
}

/// Maps a model name of the CSV to a [`ModelSpec`].
pub fn map_model(s: &str) -> Option<&'static ModelSpec> {
    let t = s.to_ascii_lowercase();
    let name = if t.starts_with("llama-2-7b") {
        "Llama-2-7B"
    } else if t.starts_with("llama-2-13b") {
        "Llama-2-13B"
    } else if t.starts_with("llama-2-70b") {
        "Llama-2-70B"
    } else if t.starts_with("mistral-7b") {
        "Mistral-7B-v0.1"
    } else if t.starts_with("llama-3.1-8b") || t.starts_with("llama-3-8b") {
        "Llama-3.1-8B"
    } else if t.starts_with("llama-3.1-70b") || t.starts_with("llama-3.3-70b") {
        "Llama-3.1-70B"
    } else if t.starts_with("gpt-j-6b") {
        "GPT-J-6B"
    } else {
        return None;
    };
    MODELS.iter().find(|m| m.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::config::parse_model_text;

    #[test]
    fn builder_matches_the_config_parser_and_params_csv() {
        // Exact totals from shared/reference/params.csv.
        for (name, text, total) in [
            (
                "Llama-2-7B",
                include_str!("../../../../../data/presets/meta-llama__Llama-2-7b-hf.json"),
                6_738_415_616u64,
            ),
            // params.csv: 13,015,866,880 includes 40 × 64 rotary inv_freq buffers; distinct
            // parameters = 13,015,866,880 − 2,560.
            (
                "Llama-2-13B",
                include_str!("../../../../../data/presets/meta-llama__Llama-2-13b-hf.json"),
                13_015_866_880 - 40 * 64,
            ),
            (
                "Llama-3.1-8B",
                include_str!("../../../../../data/presets/meta-llama__Meta-Llama-3.1-8B.json"),
                8_030_261_248,
            ),
            (
                "Llama-3.1-70B",
                include_str!("../../../../../data/presets/meta-llama__Meta-Llama-3.1-70B.json"),
                70_553_706_496,
            ),
        ] {
            let built = map_model(name)
                .map(dense_model)
                .unwrap_or_else(|| panic!("{name}"));
            let parsed = parse_model_text(text).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(built.params.total, total, "{name}");
            assert_eq!(parsed.params.total, total, "{name}");
            assert_eq!(built.layers, parsed.layers, "{name}");
            assert_eq!(
                (built.hidden_size, built.vocab_size),
                (parsed.hidden_size, parsed.vocab_size),
                "{name}"
            );
        }
    }
}
