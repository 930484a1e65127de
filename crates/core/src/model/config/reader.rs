//! Reading config keys with aliases, validation and an assumption ledger.

use super::defaults::{self, ClassDefaults};
use crate::base::error::{CalcError, Phrase};
use crate::base::json::{non_finite, NonFinite};
use crate::model::desc::{LedgerEntry, LedgerSource};
use serde_json::{Map, Value};

/// Largest size accepted for any dimension or count read from a config (2^40). Larger
/// values are refused as out of range; products of accepted values use checked arithmetic.
pub const MAX_DIM: u64 = 1 << 40;

/// Largest accepted layer count (65,536): layers are materialized one by one.
pub const MAX_LAYERS: u64 = 1 << 16;

/// What a read asks for: the config key (its canonical spelling; [`Reader::lookup`] also tries
/// the other spellings) and the ledger field its value is recorded under. A bare key is
/// recorded under its own name (`"hidden_size"`); a pair records under another name
/// (`("kv_heads", "num_key_value_heads")`), for a quantity several keys may give.
pub trait Field {
    /// The ledger field.
    fn field(&self) -> &str;
    /// The canonical config key.
    fn key(&self) -> &'static str;
}

impl Field for &'static str {
    fn field(&self) -> &str {
        self
    }
    fn key(&self) -> &'static str {
        self
    }
}

impl Field for (&str, &'static str) {
    fn field(&self) -> &str {
        self.0
    }
    fn key(&self) -> &'static str {
        self.1
    }
}

/// Reads keys from the language-model object (`text_config` when present) and falls back to
/// the top-level object, then to the transformers class defaults of either (see
/// [`super::defaults`]); records every read and every default in the ledger.
pub struct Reader<'a> {
    primary: &'a Map<String, Value>,
    root: &'a Map<String, Value>,
    /// The configuration classes of the primary and the top-level object, if known.
    classes: [Option<&'static ClassDefaults>; 2],
    /// The assumption ledger so far.
    pub ledger: Vec<LedgerEntry>,
    /// Warnings so far.
    pub warnings: Vec<Phrase>,
}

/// `n` layers stated under `key`: refused outside 1 ..= [`MAX_LAYERS`].
pub(crate) fn layer_count(key: &str, n: u64) -> Result<u64, CalcError> {
    CalcError::whole_in(Phrase::verbatim(key), n, (1, MAX_LAYERS))
}

/// What a JSON value is, in a few words (a text is cut to 48 characters).
pub(crate) fn short(v: &Value) -> Phrase {
    if let Some(nf) = non_finite(v) {
        return Phrase::verbatim(nf.token());
    }
    match v {
        Value::String(s) => Phrase::tr("fnd_text").val("s", s.chars().take(48).collect::<String>()),
        Value::Bool(b) => Phrase::tr("fnd_bool").val("b", b),
        Value::Array(_) => Phrase::tr("fnd_list"),
        Value::Object(_) => Phrase::tr("fnd_object"),
        Value::Null => Phrase::verbatim("null"),
        Value::Number(n) => Phrase::verbatim(n.to_string().chars().take(60).collect::<String>()),
    }
}

impl<'a> Reader<'a> {
    /// A reader over `primary` (the language model) with fallback to `root`.
    pub fn new(primary: &'a Map<String, Value>, root: &'a Map<String, Value>) -> Self {
        Reader {
            primary,
            root,
            classes: [None, None],
            ledger: Vec::new(),
            warnings: Vec::new(),
        }
    }

    /// The same reader with the configuration classes of the primary and the top-level object
    /// (their defaults fill missing keys, their aliases add spellings).
    #[must_use]
    pub fn with_classes(
        mut self,
        primary: Option<&'static ClassDefaults>,
        root: Option<&'static ClassDefaults>,
    ) -> Self {
        self.classes = [primary, root];
        self
    }

    /// The class of the primary object, if known.
    pub fn primary_class(&self) -> Option<&'static ClassDefaults> {
        self.classes[0]
    }

    /// Every spelling of `key`: the key, its generic spellings (the `*` rows of
    /// `data/config_defaults.csv`), then the classes' aliases of each.
    fn spellings(&self, key: &'static str) -> Vec<&'static str> {
        let mut out: Vec<&'static str> = defaults::spellings(key).collect();
        let named = out.len();
        for c in self.classes.iter().flatten() {
            for i in 0..named {
                let Some(k) = out.get(i).copied() else { break };
                for s in c.spellings_of(k) {
                    if !out.contains(&s) {
                        out.push(s);
                    }
                }
            }
        }
        out
    }

    /// `key` (or another spelling of it) present with a non-null value, and the spelling
    /// found.
    pub fn find(&self, key: &'static str) -> Option<(&'static str, &'a Value)> {
        let all = self.spellings(key);
        for obj in [self.primary, self.root] {
            for k in &all {
                if let Some(v) = obj.get(*k) {
                    if !v.is_null() {
                        return Some((k, v));
                    }
                }
            }
        }
        None
    }

    /// As [`Reader::find`], falling back to the class default of the first spelling that has
    /// one (primary class first). An explicit `null` in the config, or a `null` class default,
    /// means "no value": the family derives it.
    pub fn lookup(
        &self,
        key: &'static str,
    ) -> Option<(&'static str, &'a Value, Option<&'static ClassDefaults>)> {
        if let Some((k, v)) = self.find(key) {
            return Some((k, v, None));
        }
        let all = self.spellings(key);
        let explicit_null = [self.primary, self.root]
            .iter()
            .any(|o| all.iter().any(|k| o.get(*k).is_some_and(Value::is_null)));
        if explicit_null {
            return None;
        }
        for c in self.classes.iter().flatten() {
            for k in &all {
                if let Some(v) = c.default_of(k) {
                    return (!v.is_null()).then_some((k, v, Some(*c)));
                }
            }
        }
        None
    }

    /// `key` as vLLM's `getattr(hf_text_config, key, None)` sees it: the language model's object
    /// (the key or a spelling its class maps to it), else its class's default; `None` when
    /// absent or `null`. No generic spelling and no top-level fallback: vLLM reads the text
    /// config's attributes only.
    pub fn engine_attr(&self, key: &str) -> Option<&'a Value> {
        let class = self.classes[0];
        let mut names = vec![key];
        if let Some(c) = class {
            names.extend(c.spellings_of(key));
        }
        let v = names
            .iter()
            .find_map(|k| self.primary.get(*k))
            .or_else(|| class.and_then(|c| names.iter().find_map(|k| c.default_of(k))));
        v.filter(|v| !v.is_null())
    }

    /// The class defaults of `key` (primary class first), non-null ones only.
    pub fn class_defaults(&self, key: &str) -> Vec<(&'static ClassDefaults, &'static Value)> {
        self.classes
            .iter()
            .flatten()
            .filter_map(|c| c.default_of(key).filter(|v| !v.is_null()).map(|v| (*c, v)))
            .collect()
    }

    /// Records `value` as the class default of `key` in `class`.
    pub fn note_class_default(
        &mut self,
        field: &str,
        value: impl ToString,
        key: &str,
        class: &ClassDefaults,
    ) {
        self.note_found(field, value, key, Some(class));
    }

    /// Records `value` as [`Reader::lookup`] found it: under config key `key`, or the class
    /// default of `key` in `class`.
    pub fn note_found(
        &mut self,
        field: &str,
        value: impl ToString,
        key: &str,
        class: Option<&ClassDefaults>,
    ) {
        self.note(field, value, Self::source_of(key, class));
    }

    /// The ledger source of a value found by [`Reader::lookup`].
    fn source_of(k: &str, class: Option<&ClassDefaults>) -> LedgerSource {
        match class {
            None => LedgerSource::Key(k.to_string()),
            Some(c) => LedgerSource::ClassDefault(
                Phrase::tr("ldg_class_default")
                    .val("key", k)
                    .val("class", &c.class)
                    .val("version", &c.version),
            ),
        }
    }

    /// The spelling from which `field` was last read (`n_head_kv` for `kv_heads`, say); `None`
    /// when it was not read from a key of the config (a default, a derivation).
    pub fn key_of(&self, field: &str) -> Option<&str> {
        self.ledger
            .iter()
            .rev()
            .find(|e| e.field == field)
            .and_then(|e| match &e.source {
                LedgerSource::Key(k) => Some(k.as_str()),
                _ => None,
            })
    }

    /// Adds a ledger line.
    pub fn note(&mut self, field: &str, value: impl ToString, source: LedgerSource) {
        self.ledger.push(LedgerEntry {
            field: field.to_string(),
            value: value.to_string(),
            source,
        });
    }

    /// Records a default that was applied, with the reason (`why`, an `ldg_…` translation key).
    pub fn default_note(&mut self, field: &str, value: impl ToString, why: &'static str) {
        self.note(field, value, LedgerSource::Default(Phrase::tr(why)));
    }

    /// Records a value derived from others (`how`, an `ldg_…` translation key).
    pub fn derived(&mut self, field: &str, value: impl ToString, how: &'static str) {
        self.note(field, value, LedgerSource::Derived(Phrase::tr(how)));
    }

    /// Converts a JSON value to a whole number in `[min, MAX_DIM]`.
    pub fn to_u64(key: &str, v: &Value, min: u64) -> Result<u64, CalcError> {
        let range = || {
            Phrase::tr("rng_whole_from_to")
                .val("lo", min)
                .val("hi", MAX_DIM)
        };
        if let Some(nf) = non_finite(v) {
            return Err(CalcError::BadValue {
                key: key.to_string(),
                found: Phrase::tr("fnd_nonstandard").val("token", nf.token()),
                expected: range(),
            });
        }
        let Value::Number(n) = v else {
            return Err(CalcError::BadValue {
                key: key.to_string(),
                found: short(v),
                expected: range(),
            });
        };
        let out = |value: String| CalcError::range_error(Phrase::verbatim(key), value, range());
        if let Some(u) = n.as_u64() {
            return if u < min || u > MAX_DIM {
                Err(out(u.to_string()))
            } else {
                Ok(u)
            };
        }
        if let Some(i) = n.as_i64() {
            return Err(out(i.to_string()));
        }
        let f = n.as_f64().unwrap_or(f64::NAN);
        if !f.is_finite() || f.fract() != 0.0 {
            return Err(CalcError::BadValue {
                key: key.to_string(),
                found: Phrase::verbatim(n.to_string()),
                expected: range(),
            });
        }
        if f < min as f64 || f > MAX_DIM as f64 {
            return Err(out(n.to_string()));
        }
        // Whole, in range (≤ 2^40 < 2^53): the conversion is exact.
        Ok(f as u64)
    }

    fn read(&mut self, name: impl Field, min: u64) -> Result<Option<u64>, CalcError> {
        let (field, key) = (name.field(), name.key());
        match self.lookup(key) {
            None => Ok(None),
            Some((k, v, class)) => {
                let n = Self::to_u64(k, v, min)?;
                self.note(field, n, Self::source_of(k, class));
                Ok(Some(n))
            }
        }
    }

    /// A required positive whole number; `MissingKey` naming the key and why it is
    /// needed (`why`, a `why_…` translation key).
    pub fn req(&mut self, name: impl Field, why: &'static str) -> Result<u64, CalcError> {
        let (field, key) = (name.field(), name.key());
        self.read((field, key), 1)?
            .ok_or_else(|| CalcError::MissingKey {
                key: key.to_string(),
                why: Phrase::tr(why),
            })
    }

    /// The layer count (`num_hidden_layers` and its spellings), at most [`MAX_LAYERS`].
    pub fn layers(&mut self) -> Result<u64, CalcError> {
        let key = "num_hidden_layers";
        let n = self.req(key, "why_count_layers")?;
        layer_count(key, n)
    }

    /// An optional positive whole number.
    pub fn opt(&mut self, name: impl Field) -> Result<Option<u64>, CalcError> {
        let (field, key) = (name.field(), name.key());
        self.read((field, key), 1)
    }

    /// A positive whole number, or `default` (recorded with `why`).
    pub fn or(
        &mut self,
        name: impl Field,
        default: u64,
        why: &'static str,
    ) -> Result<u64, CalcError> {
        let (field, key) = (name.field(), name.key());
        self.or_at_least((field, key), 1, default, why)
    }

    /// A whole number that may be zero, or `default` (recorded with `why`).
    pub fn or0(
        &mut self,
        name: impl Field,
        default: u64,
        why: &'static str,
    ) -> Result<u64, CalcError> {
        let (field, key) = (name.field(), name.key());
        self.or_at_least((field, key), 0, default, why)
    }

    /// A whole number from `min`, or `default` (recorded with `why`).
    fn or_at_least(
        &mut self,
        name: impl Field,
        min: u64,
        default: u64,
        why: &'static str,
    ) -> Result<u64, CalcError> {
        let (field, key) = (name.field(), name.key());
        match self.read((field, key), min)? {
            Some(n) => Ok(n),
            None => {
                self.default_note(field, default, why);
                Ok(default)
            }
        }
    }

    /// A limit such as a window or a context length: `null`, absent or `Infinity` mean
    /// "no limit" (`None`).
    pub fn limit(&mut self, name: impl Field) -> Result<Option<u64>, CalcError> {
        let (field, key) = (name.field(), name.key());
        match self.lookup(key) {
            Some((k, v, _)) if non_finite(v) == Some(NonFinite::PosInf) => {
                self.note(field, "∞ (Infinity)", LedgerSource::Key(k.to_string()));
                Ok(None)
            }
            _ => self.read((field, key), 1),
        }
    }

    /// A boolean, or `default` (recorded with `why`, an `ldg_…` translation key).
    pub fn flag(
        &mut self,
        name: impl Field,
        default: bool,
        why: &'static str,
    ) -> Result<bool, CalcError> {
        let (field, key) = (name.field(), name.key());
        self.flag_why((field, key), default, Phrase::tr(why))
    }

    /// As [`Reader::flag`], with the reason as a phrase (one that names the family, say).
    pub fn flag_why(
        &mut self,
        name: impl Field,
        default: bool,
        why: Phrase,
    ) -> Result<bool, CalcError> {
        let (field, key) = (name.field(), name.key());
        match self.lookup(key) {
            Some((k, Value::Bool(b), class)) => {
                self.note(field, b, Self::source_of(k, class));
                Ok(*b)
            }
            Some((k, v, _)) => Err(CalcError::BadValue {
                key: k.to_string(),
                found: short(v),
                expected: Phrase::tr("exp_true_false"),
            }),
            None => {
                self.note(field, default, LedgerSource::Default(why));
                Ok(default)
            }
        }
    }

    /// A string value, if present.
    pub fn string(&self, key: &'static str) -> Option<(&'static str, &'a str)> {
        self.find(key).and_then(|(k, v)| v.as_str().map(|s| (k, s)))
    }

    /// A list of whole numbers (e.g. `mlp_only_layers`), empty when absent.
    pub fn u64_list(&mut self, name: impl Field) -> Result<Vec<u64>, CalcError> {
        let (field, key) = (name.field(), name.key());
        match self.find(key) {
            None => Ok(Vec::new()),
            Some((k, Value::Array(a))) => {
                let v = a
                    .iter()
                    .map(|x| Self::to_u64(k, x, 0))
                    .collect::<Result<Vec<_>, _>>()?;
                self.note(field, format!("{v:?}"), LedgerSource::Key(k.to_string()));
                Ok(v)
            }
            Some((k, v)) => Err(CalcError::BadValue {
                key: k.to_string(),
                found: short(v),
                expected: Phrase::tr("exp_list_whole"),
            }),
        }
    }

    /// A list of strings (e.g. `layer_types`), `None` when absent.
    pub fn str_list(&mut self, name: impl Field) -> Result<Option<Vec<String>>, CalcError> {
        let (field, key) = (name.field(), name.key());
        match self.find(key) {
            None => Ok(None),
            Some((k, Value::Array(a))) => {
                let mut out = Vec::with_capacity(a.len());
                for x in a {
                    match x.as_str() {
                        Some(s) => out.push(s.to_string()),
                        None => {
                            return Err(CalcError::BadValue {
                                key: k.to_string(),
                                found: short(x),
                                expected: Phrase::tr("exp_list_texts"),
                            })
                        }
                    }
                }
                self.note(
                    field,
                    format!("{} entries", out.len()),
                    LedgerSource::Key(k.to_string()),
                );
                Ok(Some(out))
            }
            Some((k, v)) => Err(CalcError::BadValue {
                key: k.to_string(),
                found: short(v),
                expected: Phrase::tr("exp_list_texts"),
            }),
        }
    }

    /// The top-level object (for keys that never sit under `text_config`).
    pub fn root(&self) -> &'a Map<String, Value> {
        self.root
    }
}
