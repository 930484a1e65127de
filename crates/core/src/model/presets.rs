//! The built-in model presets: real `config.json` files compiled in (`data/presets/`), listed
//! in `data/presets/presets.csv` (id, display name, family, file, Hugging Face id, exact
//! parameter count where published, and each row's sources and notes). What is compiled in is
//! `data/presets/presets.app.csv`, that table projected on [`APP_COLUMNS`]; a test checks it
//! equals the projection of the full table.
//!
//! The list is fixed at build time; tests check that every file in `data/presets/` is
//! compiled in, that each parses with [`crate::model::config::parse_model_text`], and that the
//! parsed parameter count matches `params_total` from the table where the table gives one.

use crate::base::csv;
use crate::base::error::CalcError;
use crate::model::config::parse_model_text;
use crate::model::desc::ModelDesc;
use std::sync::OnceLock;

/// The preset table: `data/presets/presets.csv` projected on [`APP_COLUMNS`].
const PRESETS_CSV: &str = include_str!("../../../../data/presets/presets.app.csv");

/// The columns of `presets.csv` the app reads, in the order of the compiled-in projection.
pub const APP_COLUMNS: [&str; 6] = [
    "id",
    "display_name",
    "family",
    "file",
    "hf_model_id",
    "params_total",
];

/// One list (in file-name order) of the compiled-in files, made into [`FILES`] (their names) and [`file_text`]
/// (their text): a binary that never reads a preset's config (the first-answer module, which
/// takes the presets' models from [`crate::model::presets_first`]) links the names only.
macro_rules! presets {
    ($($file:literal,)*) => {
        /// The compiled-in files' names.
        static FILES: &[&str] = &[$($file),*];

        /// A compiled-in file's config.json text.
        fn file_text(file: &str) -> Option<&'static str> {
            match file {
                $($file => Some(include_str!(concat!("../../../../data/presets/", $file))),)*
                _ => None,
            }
        }
    };
}

presets! {
    "ArthurZ__mamba-2.8b.json",
    "EleutherAI__gpt-neox-20b.json",
    "Qwen__Qwen2.5-32B-Instruct.json",
    "Qwen__Qwen2.5-7B-Instruct.json",
    "Qwen__Qwen3-235B-A22B.json",
    "Qwen__Qwen3-30B-A3B.json",
    "Qwen__Qwen3-32B.json",
    "Qwen__Qwen3-8B.json",
    "deepseek-ai__DeepSeek-Coder-V2-Lite-Base.json",
    "deepseek-ai__DeepSeek-R1.json",
    "deepseek-ai__DeepSeek-V3.json",
    "google__gemma-2-9b-it.json",
    "google__gemma-3-27b-it.json",
    "meta-llama__Llama-2-13b-hf.json",
    "meta-llama__Llama-2-7b-hf.json",
    "meta-llama__Llama-3.2-1B-Instruct.json",
    "meta-llama__Llama-3.2-3B-Instruct.json",
    "meta-llama__Meta-Llama-3.1-405B.json",
    "meta-llama__Meta-Llama-3.1-70B.json",
    "meta-llama__Meta-Llama-3.1-8B.json",
    "microsoft__phi-4.json",
    "mistralai__Mistral-7B-Instruct-v0.3.json",
    "mistralai__Mixtral-8x22B-v0.1.json",
    "mistralai__Mixtral-8x7B-v0.1.json",
    "nvidia__Nemotron-H-56B-Base-8K.json",
    "openai-community__gpt2.json",
    "openai__gpt-oss-120b.json",
    "openai__gpt-oss-20b.json",
    "tiiuae__falcon-7b.json",
}

/// One preset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Preset {
    /// Stable id used in URLs (`llama-2-7b`).
    pub id: String,
    /// Display name (`Llama 2 7B`).
    pub name: String,
    /// Model family (`llama`, `qwen3_moe`, …).
    pub family: String,
    /// File name in `data/presets/`.
    pub file: &'static str,
    /// Hugging Face repository id (`meta-llama/Llama-2-7b-hf`).
    pub hf_id: String,
    /// Exact parameter count from a public source, when the table gives one.
    pub params_total: Option<u64>,
}

impl Preset {
    /// The label shown in the picker: display name and repository.
    pub fn label(&self) -> String {
        if self.hf_id.is_empty() {
            self.name.clone()
        } else {
            format!("{} — {}", self.name, self.hf_id)
        }
    }

    /// The config.json text.
    pub fn json(&self) -> &'static str {
        file_text(self.file).unwrap_or_default()
    }

    /// The parsed model.
    pub fn parse(&self) -> Result<ModelDesc, CalcError> {
        parse_model_text(self.json())
    }
}

fn load() -> Vec<Preset> {
    let records = csv::parse(PRESETS_CSV).unwrap_or_default();
    let mut it = records.into_iter();
    let header: Vec<String> = it.next().map(|r| r.fields).unwrap_or_default();
    let col = |name: &str| header.iter().position(|h| h.trim() == name);
    let (c_id, c_name, c_family, c_file, c_hf, c_params) = (
        col("id"),
        col("display_name"),
        col("family"),
        col("file"),
        col("hf_model_id"),
        col("params_total"),
    );
    let mut out: Vec<Preset> = Vec::new();
    for r in it {
        let get = |c: Option<usize>| -> String {
            c.and_then(|i| r.fields.get(i))
                .map(|s| s.trim().to_string())
                .unwrap_or_default()
        };
        let file = get(c_file);
        let Some(fname) = FILES.iter().find(|f| **f == file) else {
            continue;
        };
        let id = get(c_id);
        if id.is_empty() || out.iter().any(|p| p.id == id) {
            continue;
        }
        out.push(Preset {
            name: Some(get(c_name))
                .filter(|n| !n.is_empty())
                .unwrap_or_else(|| id.clone()),
            id,
            family: get(c_family),
            file: fname,
            hf_id: get(c_hf),
            params_total: get(c_params).parse().ok(),
        });
    }
    // Files not in the table still appear, under their file stem.
    for f in FILES {
        if !out.iter().any(|p| p.file == *f) {
            let stem = f.trim_end_matches(".json").to_string();
            out.push(Preset {
                id: stem.clone(),
                name: stem.replacen("__", "/", 1),
                family: String::new(),
                file: f,
                hf_id: String::new(),
                params_total: None,
            });
        }
    }
    out
}

/// Every preset, in table order (then unlisted files).
pub fn all() -> &'static [Preset] {
    static ALL: OnceLock<Vec<Preset>> = OnceLock::new();
    ALL.get_or_init(load)
}

/// The preset with this id (case-insensitive), or whose file stem is this (older links).
pub fn get(id: &str) -> Option<&'static Preset> {
    let id = id.trim();
    all()
        .iter()
        .find(|p| p.id.eq_ignore_ascii_case(id))
        .or_else(|| {
            all()
                .iter()
                .find(|p| p.file.trim_end_matches(".json").eq_ignore_ascii_case(id))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_is_compiled_in_and_listed() {
        let dir = concat!(
            concat!(env!("CARGO_MANIFEST_DIR"), "/../.."),
            "/data/presets"
        );
        let mut on_disk: Vec<String> = std::fs::read_dir(dir)
            .map(|rd| {
                rd.filter_map(|e| e.ok())
                    .filter_map(|e| e.file_name().into_string().ok())
                    .filter(|n| n.ends_with(".json"))
                    .collect()
            })
            .unwrap_or_default();
        on_disk.sort();
        let compiled: Vec<String> = FILES.iter().map(|f| f.to_string()).collect();
        assert_eq!(compiled, on_disk, "regenerate FILES in presets.rs");
        assert!(all().len() >= 25, "{} presets", all().len());
        let listed = all().iter().filter(|p| !p.hf_id.is_empty()).count();
        assert_eq!(
            listed,
            all().len(),
            "every preset file has a row in presets.csv"
        );
    }

    #[test]
    fn the_compiled_app_csv_is_the_projection_of_the_sourced_file() {
        let same: fn(&str) -> &str = |s| s;
        let cols: Vec<csv::Column> = APP_COLUMNS.iter().map(|c| (*c, *c, same)).collect();
        let want = csv::project(include_str!("../../../../data/presets/presets.csv"), &cols);
        csv::check_projection(PRESETS_CSV, &want, "data/presets/presets.app.csv");
    }

    /// The full table's notes on how `params_total` was counted (its basis), by preset id.
    fn params_notes(id: &str) -> String {
        let recs = csv::parse(include_str!("../../../../data/presets/presets.csv"))
            .unwrap_or_else(|e| panic!("{e}"));
        let col = |name: &str| {
            recs.first()
                .and_then(|h| h.fields.iter().position(|f| f == name))
                .unwrap_or_else(|| panic!("no column {name}"))
        };
        let (c_id, c_notes) = (col("id"), col("notes"));
        recs.iter()
            .find(|r| r.fields.get(c_id).is_some_and(|f| f.trim() == id))
            .and_then(|r| r.fields.get(c_notes))
            .map(|s| s.trim().to_string())
            .unwrap_or_default()
    }

    #[test]
    fn every_preset_parses_and_matches_its_published_count() {
        let mut failures = Vec::new();
        // The notes are read from the full table: the deepseek rows must mention MTP.
        assert!(params_notes("deepseek-v3").contains("MTP"));
        for p in all() {
            match p.parse() {
                Ok(m) => {
                    // DeepSeek-V3/R1: the published total includes the multi-token-prediction
                    // module (and, for V3, fp32 block scales), a different basis from the
                    // main model the parser counts; the table's notes say so.
                    let other_basis = params_notes(&p.id).contains("MTP");
                    if let Some(n) = p.params_total.filter(|_| !other_basis) {
                        // The table's count may include saved rotary buffers (notes say so);
                        // allow only that tiny difference.
                        let diff = m.params.total.abs_diff(n);
                        if diff > n / 100_000 {
                            failures.push(format!(
                                "{}: parsed {} vs table {}",
                                p.id, m.params.total, n
                            ));
                        }
                    }
                }
                Err(e) => failures.push(format!("{}: {e}", p.id)),
            }
        }
        assert!(failures.is_empty(), "{failures:#?}");
    }

    #[test]
    fn default_preset_exists() {
        assert!(get(crate::scenario::DEFAULT_PRESET).is_some());
        assert!(get("LLAMA-2-7B").is_some());
        assert!(get("meta-llama__Llama-2-7b-hf").is_some());
        assert!(get("nope").is_none());
    }
}
