//! Model families (a line of models in several sizes, from the compiled presets) for the
//! largest-model search.

use crate::base::error::{CalcError, Phrase};
use crate::model::ModelDesc;
use serde::{Deserialize, Serialize};

/// A line of models in several sizes, for "largest model that meets the target" (the chapter:
/// a well-served 32B or 70B can replace an 8B on the same hardware at the same latency).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    /// Qwen3 dense: 8B, 32B.
    Qwen3,
    /// Llama 3.1 / 3.2: 1B, 3B, 8B, 70B, 405B.
    Llama3,
    /// Qwen2.5 Instruct: 7B, 32B.
    Qwen25,
    /// Llama 2: 7B, 13B.
    Llama2,
    /// Qwen3 mixture of experts: 30B-A3B, 235B-A22B.
    Qwen3Moe,
    /// Mixtral: 8x7B, 8x22B.
    Mixtral,
    /// gpt-oss: 20b, 120b.
    GptOss,
}

impl Family {
    /// Every family, in display order.
    pub const ALL: &'static [Family] = &[
        Family::Qwen3,
        Family::Llama3,
        Family::Qwen25,
        Family::Llama2,
        Family::Qwen3Moe,
        Family::Mixtral,
        Family::GptOss,
    ];

    /// Stable id (URL `pl_fam`, CLI `--family`, JSON).
    pub const fn id(self) -> &'static str {
        match self {
            Family::Qwen3 => "qwen3",
            Family::Llama3 => "llama3",
            Family::Qwen25 => "qwen2.5",
            Family::Llama2 => "llama2",
            Family::Qwen3Moe => "qwen3-moe",
            Family::Mixtral => "mixtral",
            Family::GptOss => "gpt-oss",
        }
    }

    /// Display name (a product name, the same in every language).
    pub const fn name(self) -> &'static str {
        match self {
            Family::Qwen3 => "Qwen3",
            Family::Llama3 => "Llama 3.x",
            Family::Qwen25 => "Qwen2.5",
            Family::Llama2 => "Llama 2",
            Family::Qwen3Moe => "Qwen3 MoE",
            Family::Mixtral => "Mixtral",
            Family::GptOss => "gpt-oss",
        }
    }

    /// Ids of its presets (`core::presets`), smallest first.
    pub const fn preset_ids(self) -> &'static [&'static str] {
        match self {
            Family::Qwen3 => &["qwen3-8b", "qwen3-32b"],
            Family::Llama3 => &[
                "llama-3.2-1b-instruct",
                "llama-3.2-3b-instruct",
                "llama-3.1-8b",
                "llama-3.1-70b",
                "llama-3.1-405b",
            ],
            Family::Qwen25 => &["qwen2.5-7b-instruct", "qwen2.5-32b-instruct"],
            Family::Llama2 => &["llama-2-7b", "llama-2-13b"],
            Family::Qwen3Moe => &["qwen3-30b-a3b", "qwen3-235b-a22b"],
            Family::Mixtral => &["mixtral-8x7b", "mixtral-8x22b"],
            Family::GptOss => &["gpt-oss-20b", "gpt-oss-120b"],
        }
    }

    /// The family with this id (case-insensitive; `qwen2_5` and `qwen25` also work).
    pub fn parse(s: &str) -> Result<Family, CalcError> {
        let norm = |x: &str| {
            x.trim()
                .to_ascii_lowercase()
                .replace(['.', '-', '_', ' '], "")
        };
        let t = norm(s);
        Family::ALL
            .iter()
            .copied()
            .find(|f| !t.is_empty() && norm(f.id()) == t)
            .ok_or_else(|| CalcError::BadValue {
                key: "model family".into(),
                found: Phrase::quoted(s),
                expected: Phrase::tr("exp_one_of").val(
                    "list",
                    Family::ALL
                        .iter()
                        .map(|f| f.id())
                        .collect::<Vec<_>>()
                        .join(", "),
                ),
            })
    }

    /// The parsed models of the family, smallest first, named by their presets' display names.
    pub fn models(self) -> Result<Vec<ModelDesc>, CalcError> {
        self.preset_ids()
            .iter()
            .map(|id| {
                crate::model::presets::get(id)
                    .ok_or_else(|| CalcError::BadValue {
                        key: "preset".into(),
                        found: Phrase::verbatim(*id),
                        expected: Phrase::tr("exp_compiled_preset"),
                    })
                    .and_then(|p| {
                        // The preset's display name ("Qwen3 32B"), not the config's model type.
                        p.parse().map(|mut m| {
                            m.name.clone_from(&p.name);
                            m
                        })
                    })
            })
            .collect()
    }
}
