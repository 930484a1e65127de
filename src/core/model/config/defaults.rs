//! The defaults and key spellings of the transformers configuration classes, as data.
//!
//! A real `config.json` omits every key whose value equals the default of its configuration
//! class: transformers fills them when it loads the config. `data/config_defaults.csv` records
//! those facts for every `model_type` the parser reads (and the classes nested under
//! `text_config`, `vision_config`, …), read from the `configuration_<type>.py` files of the
//! transformers release named in its last column. One row per fact:
//!
//! - `default`: key → its default value (JSON; `null` = "no value": the class derives it);
//! - `alias`: a key and another spelling that names the same field (the class's
//!   `attribute_map`, such as GPT-2's `n_embd` for `hidden_size`, and constructor aliases
//!   such as BLOOM's `n_embed`);
//! - `sub`: a nested part (`text_config`) and the `model_type` of its class.

use crate::core::base::csv;
use serde_json::Value;
use std::sync::OnceLock;

/// The compiled-in table.
pub const CSV: &str = include_str!("../../../../data/config_defaults.csv");

/// The facts recorded for one configuration class.
#[derive(Debug)]
pub struct ClassDefaults {
    /// The `model_type` the class answers to (`gemma3_text`).
    pub model_type: String,
    /// The class name (`Gemma3TextConfig`).
    pub class: String,
    /// The transformers release the facts were read from.
    pub version: String,
    /// Key → default value.
    pub defaults: Vec<(String, Value)>,
    /// Pairs of spellings of one field.
    pub aliases: Vec<(String, String)>,
    /// Nested part → `model_type` of its class.
    pub subs: Vec<(String, String)>,
}

impl ClassDefaults {
    /// The default of `key`, if the class has one.
    pub fn default_of(&self, key: &str) -> Option<&Value> {
        self.defaults.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// The other spellings of `key` (both directions of each alias pair).
    pub fn spellings_of<'s>(&'s self, key: &'s str) -> impl Iterator<Item = &'s str> + 's {
        self.aliases.iter().filter_map(move |(a, b)| {
            if a == key {
                Some(b.as_str())
            } else if b == key {
                Some(a.as_str())
            } else {
                None
            }
        })
    }

    /// The `model_type` of the class nested under `part` (`text_config`).
    pub fn sub(&self, part: &str) -> Option<&str> {
        self.subs
            .iter()
            .find(|(p, _)| p == part)
            .map(|(_, t)| t.as_str())
    }
}

/// Parses the table text (the header row first).
pub fn parse(text: &str) -> Vec<ClassDefaults> {
    let mut out: Vec<ClassDefaults> = Vec::new();
    let Ok(records) = csv::parse(text) else {
        return out;
    };
    for rec in records.iter().skip(1) {
        let [mt, class, kind, key, value, version] = rec.fields.as_slice() else {
            continue;
        };
        let Ok(v) = serde_json::from_str::<Value>(value) else {
            continue;
        };
        let idx = match out.iter().position(|c| &c.class == class) {
            Some(i) => i,
            None => {
                out.push(ClassDefaults {
                    model_type: mt.clone(),
                    class: class.clone(),
                    version: version.clone(),
                    defaults: Vec::new(),
                    aliases: Vec::new(),
                    subs: Vec::new(),
                });
                out.len() - 1
            }
        };
        let Some(c) = out.get_mut(idx) else { continue };
        match (kind.as_str(), v) {
            ("default", v) => c.defaults.push((key.clone(), v)),
            ("alias", Value::String(s)) => c.aliases.push((key.clone(), s)),
            ("sub", Value::String(s)) => c.subs.push((key.clone(), s)),
            _ => {}
        }
    }
    out
}

/// The compiled-in table, parsed once.
pub fn table() -> &'static [ClassDefaults] {
    static T: OnceLock<Vec<ClassDefaults>> = OnceLock::new();
    T.get_or_init(|| parse(CSV))
}

/// The class that reads configs of `model_type` (the first one recorded for it).
pub fn class_for(model_type: &str) -> Option<&'static ClassDefaults> {
    table().iter().find(|c| c.model_type == model_type)
}

/// The class of the part `part` nested in a config of class `parent`.
pub fn nested(
    parent: Option<&'static ClassDefaults>,
    part: &str,
) -> Option<&'static ClassDefaults> {
    parent.and_then(|p| p.sub(part)).and_then(class_for)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_parses_and_names_one_release() {
        let t = table();
        assert!(t.len() > 50, "{} classes", t.len());
        let rows = CSV.lines().skip(1).filter(|l| !l.trim().is_empty()).count();
        let facts: usize = t
            .iter()
            .map(|c| c.defaults.len() + c.aliases.len() + c.subs.len())
            .sum();
        assert_eq!(facts, rows, "every row is one fact");
        let v = &t[0].version;
        assert!(t.iter().all(|c| &c.version == v));
    }

    #[test]
    fn nested_classes_resolve() {
        let g = class_for("gemma3");
        assert_eq!(
            nested(g, "text_config").map(|c| c.class.as_str()),
            Some("Gemma3TextConfig")
        );
    }
}
