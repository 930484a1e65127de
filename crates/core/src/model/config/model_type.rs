//! The `model_type` of a config: the top level's, the nested language model's (and where the two
//! parts disagree), or the one its `architectures` entry names.

use super::dispatch::{known_types, recognised};
use super::reader::Reader;
use super::{architecture, defaults, reader};
use crate::base::error::Phrase;
use crate::model::desc::LedgerSource;
use serde_json::{Map, Value};

/// Keys whose values must agree when both the top level and the language-model part give them.
const SHARED_KEYS: &[&str] = &[
    "hidden_size",
    "num_hidden_layers",
    "num_attention_heads",
    "num_key_value_heads",
    "intermediate_size",
    "vocab_size",
    "head_dim",
];

/// A warning naming the keys on which the top level and the nested part `part` disagree.
pub(super) fn disagreements(
    r: &mut Reader,
    part: &str,
    primary: &Map<String, Value>,
    root: &Map<String, Value>,
) {
    let mut pairs = Vec::new();
    for k in SHARED_KEYS {
        if let (Some(a), Some(b)) = (primary.get(*k), root.get(*k)) {
            if !a.is_null() && !b.is_null() && a != b {
                pairs.push(Phrase::verbatim(format!(
                    "{part}.{k} = {} ≠ {k} = {}",
                    reader::short(a).text(crate::base::i18n::Lang::En),
                    reader::short(b).text(crate::base::i18n::Lang::En)
                )));
            }
        }
    }
    if !pairs.is_empty() {
        r.warnings.push(
            Phrase::tr("wrn_nested_disagree")
                .val("part", part)
                .sub("pairs", Phrase::List(pairs)),
        );
    }
}

/// The language-model part of a config and its name, if nested: `text_config` or one of its
/// generic spellings (`llm_config`, `language_config`), in the table's order.
pub(super) fn text_part(root: &Map<String, Value>) -> Option<(&'static str, &Map<String, Value>)> {
    defaults::spellings("text_config")
        .find_map(|p| root.get(p).and_then(Value::as_object).map(|o| (p, o)))
}

/// The lowercase `model_type` of an object (at most 64 characters).
pub(super) fn type_of(o: &Map<String, Value>) -> String {
    o.get("model_type")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_ascii_lowercase()
        .chars()
        .take(64)
        .collect()
}

/// The `model_type`s of a config: the top level's, the language model's, and what the
/// architecture stood in for.
pub(super) struct Types {
    /// The top level's type (the architecture's where the config gives none this calculator
    /// knows).
    pub(super) root: String,
    /// The language-model part's own type (the top level's for a flat config).
    pub(super) own: String,
    /// The type the config gave and the architecture read instead, when one was.
    pub(super) by_arch: Option<(String, String)>,
}

impl Types {
    pub(super) fn of(
        root: &Map<String, Value>,
        text: Option<(&str, &Map<String, Value>)>,
    ) -> Types {
        let mut root_type = type_of(root);
        // No type this calculator knows at the top level: the one the architecture names.
        let mut by_arch = None;
        if !recognised(&root_type) {
            if let Some((t, arch)) = architecture::from_architectures(root, known_types()) {
                by_arch = Some((std::mem::replace(&mut root_type, t.to_string()), arch));
            }
        }
        let own = match text {
            Some((_, t)) => type_of(t),
            None => root_type.clone(),
        };
        Types {
            root: root_type,
            own,
            by_arch,
        }
    }

    /// The language model's type, noted in the ledger (`part`: the nested part's key).
    pub(super) fn note(self, r: &mut Reader, part: Option<&str>) -> String {
        let from_root = self.own.is_empty() || (self.by_arch.is_some() && !recognised(&self.own));
        let mt = if from_root {
            self.root.clone()
        } else {
            self.own
        };
        if let Some((given, arch)) = &self.by_arch {
            note_type_by_architecture(r, &self.root, given, arch);
            if let (Some(part), true) = (part, mt != self.root) {
                let key = format!("{part}.model_type");
                r.note("model_type", &mt, LedgerSource::Key(key));
            }
        } else if mt.is_empty() {
            r.default_note(
                "model_type",
                "(none)",
                "ldg_no_model_type_read_as_a_generic",
            );
        } else {
            r.note("model_type", &mt, LedgerSource::Key("model_type".into()));
        }
        mt
    }
}

/// The ledger line and the warning of a `model_type` read from the config's `architectures`
/// (`given`: the config's own type, empty when it has none).
fn note_type_by_architecture(r: &mut Reader, mt: &str, given: &str, arch: &str) {
    let (why, warning) = if given.is_empty() {
        ("ldg_type_from_architecture", "wrn_type_from_architecture")
    } else {
        (
            "ldg_unknown_type_by_architecture",
            "wrn_unknown_type_by_architecture",
        )
    };
    let phrase = |key| {
        Phrase::tr(key)
            .val("mt", mt)
            .val("given", given)
            .val("arch", arch)
    };
    r.note("model_type", mt, LedgerSource::Derived(phrase(why)));
    r.warnings.push(phrase(warning));
}
