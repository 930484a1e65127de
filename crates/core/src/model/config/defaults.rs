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
//!
//! The last section (`model_type` `*`) holds the generic spellings: other names of a field that
//! apply to a config of any `model_type`, because many served configs have a `model_type` with
//! no transformers class (ChatGLM's `multi_query_group_num`, Falcon RW's `n_head_kv`, …). Each
//! row names, in the `class` column, the family and the file that spell the key so, and in the
//! last column the transformers release where the spelling is a field of a transformers class
//! (`-` where it is not). A reader names the canonical key only; [`spellings`] gives the rest,
//! in the table's order (the first spelling a config gives wins).

use crate::base::csv;
use serde_json::Value;
use std::sync::OnceLock;

/// The compiled-in table (natively, and in wasm once [`link_full`] ran).
pub const CSV: &str = include_str!("../../../../../data/config_defaults.csv");

/// The table's text once [`link_full`] ran (wasm only).
#[cfg(target_arch = "wasm32")]
static LINKED: OnceLock<&'static str> = OnceLock::new();

/// Makes the whole table available in this binary: every wasm binary that reads configs calls
/// it (through `present::link_page`) before reading one (the first-answer module reads none).
/// Natively the table is always there and this does nothing.
pub fn link_full() {
    #[cfg(target_arch = "wasm32")]
    let _ = LINKED.set(CSV);
}

/// The table's text as this binary has it.
fn text() -> &'static str {
    #[cfg(target_arch = "wasm32")]
    return LINKED.get().copied().unwrap_or("");
    #[cfg(not(target_arch = "wasm32"))]
    CSV
}

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

/// Another spelling of a field, for a config of any `model_type`.
#[derive(Debug)]
pub struct GenericAlias {
    /// The spelling a config may use (`multi_query_group_num`).
    pub alias: String,
    /// The key the readers name (`num_key_value_heads`).
    pub canonical: String,
    /// The family and file that spell it so.
    pub source: String,
    /// The transformers release where it is a class field, `-` where it is not.
    pub version: String,
}

/// The parsed table: the classes, then the generic spellings.
#[derive(Debug, Default)]
pub struct Table {
    /// One entry per configuration class.
    pub classes: Vec<ClassDefaults>,
    /// The `*` section, in the file's order.
    pub generic: Vec<GenericAlias>,
}

/// Parses the table text (the header row first).
pub fn parse(text: &str) -> Table {
    let mut t = Table::default();
    let Ok(records) = csv::parse(text) else {
        return t;
    };
    let out = &mut t.classes;
    for rec in records.iter().skip(1) {
        let [mt, class, kind, key, value, version] = rec.fields.as_slice() else {
            continue;
        };
        let Ok(v) = serde_json::from_str::<Value>(value) else {
            continue;
        };
        if mt == "*" {
            if let ("alias", Value::String(canonical)) = (kind.as_str(), v) {
                t.generic.push(GenericAlias {
                    alias: key.clone(),
                    canonical,
                    source: class.clone(),
                    version: version.clone(),
                });
            }
            continue;
        }
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
    t
}

/// The compiled-in table, parsed once.
fn parsed() -> &'static Table {
    static T: OnceLock<Table> = OnceLock::new();
    T.get_or_init(|| parse(text()))
}

/// The configuration classes of the compiled-in table.
pub fn table() -> &'static [ClassDefaults] {
    &parsed().classes
}

/// The generic spellings of the compiled-in table.
pub fn generic() -> &'static [GenericAlias] {
    &parsed().generic
}

/// `key` and its generic spellings, in the table's order (`num_key_value_heads`,
/// `num_kv_heads`, `n_head_kv`, `multi_query_group_num`).
pub fn spellings(key: &'static str) -> impl Iterator<Item = &'static str> {
    std::iter::once(key).chain(
        generic()
            .iter()
            .filter(move |a| a.canonical == key)
            .map(|a| a.alias.as_str()),
    )
}

/// The class that reads configs of `model_type` (the first one recorded for it).
pub fn class_for(model_type: &str) -> Option<&'static ClassDefaults> {
    #[cfg(not(target_arch = "wasm32"))]
    crate::base::lookups::asked("config_defaults", model_type);
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
        assert_eq!(facts + generic().len(), rows, "every row is one fact");
        let v = &t[0].version;
        assert!(t.iter().all(|c| &c.version == v));
    }

    #[test]
    fn every_generic_spelling_has_a_source_and_names_a_new_key() {
        let g = generic();
        assert!(g.len() > 20, "{} generic spellings", g.len());
        for a in g {
            assert!(!a.source.trim().is_empty(), "{} has no source", a.alias);
            assert_ne!(a.alias, a.canonical);
            // A spelling is an alias of one field only, and never a canonical key itself (the
            // readers' lookups would then chain).
            assert_eq!(
                g.iter().filter(|b| b.alias == a.alias).count(),
                1,
                "{}",
                a.alias
            );
            assert!(g.iter().all(|b| b.canonical != a.alias), "{}", a.alias);
            assert!(a.version == "-" || a.version == t_version(), "{}", a.alias);
        }
        let kv: Vec<&str> = spellings("num_key_value_heads").collect();
        assert_eq!(kv.first(), Some(&"num_key_value_heads"));
        assert!(kv.contains(&"multi_query_group_num"), "{kv:?}");
    }

    fn t_version() -> &'static str {
        table().first().map_or("", |c| c.version.as_str())
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
