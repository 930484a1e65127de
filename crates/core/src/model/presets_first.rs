//! The presets as a first screen needs them, stored: what the first-answer module
//! (`crates/first`) finds a link's preset and evaluates it with, so it links neither the
//! presets' table and its CSV reader, nor the config readers, nor the presets' configs.
//! `data/presets/first_models.bin` holds every preset as its id, file stem, picker label and
//! model in borsh's binary form: the model as its reader makes it, the assumption ledger's
//! entries a first screen does not read left blank (it shows their count), consecutive equal
//! layers as one run (borsh, not serde: serde's derived decoders for the model's tagged enums
//! made the module larger than the readers did). Made by this module's test
//! (`REGENERATE_FIRST_MODELS=1 cargo test -p llmcalc-core --lib presets_first`), which fails
//! when the file is not what the presets and their readers make today, and checks that every
//! id and stem finds the preset [`crate::model::presets::get`] finds, with its label and its
//! parsed model (the ledger so blanked).

use crate::model::desc::{Layer, ModelDesc};
use borsh::{BorshDeserialize, BorshSerialize};
use std::sync::OnceLock;

/// The stored presets: a list of [`StoredPreset`].
static BYTES: &[u8] = include_bytes!("../../../../data/presets/first_models.bin");

/// One stored preset.
#[derive(BorshSerialize, BorshDeserialize)]
pub struct StoredPreset {
    /// Its id, and its file's name without `.json` (older links name it so).
    id: String,
    stem: String,
    /// The label shown in the picker ([`crate::model::presets::Preset::label`]).
    pub label: String,
    /// Its [`Stored`] model's bytes.
    model: Vec<u8>,
}

/// One stored model: the model without its layers (the main model's and the MTP modules'),
/// and the layers as runs.
#[derive(BorshSerialize, BorshDeserialize)]
struct Stored {
    model: ModelDesc,
    layers: Vec<(u32, Layer)>,
    mtp_layers: Vec<(u32, Layer)>,
}

/// Consecutive equal layers as `(count, layer)` runs.
#[cfg(test)]
fn runs(layers: &[Layer]) -> Vec<(u32, Layer)> {
    let mut out: Vec<(u32, Layer)> = Vec::new();
    for l in layers {
        match out.last_mut() {
            Some((n, last)) if last == l => *n += 1,
            _ => out.push((1, l.clone())),
        }
    }
    out
}

fn unrun(runs: Vec<(u32, Layer)>) -> Vec<Layer> {
    runs.into_iter()
        .flat_map(|(n, l)| std::iter::repeat_n(l, n as usize))
        .collect()
}

/// The stored presets, read once (none were the bytes unreadable: a test guarantees they are
/// not, and with no preset the first screen declines every link).
fn all() -> &'static [StoredPreset] {
    static ALL: OnceLock<Vec<StoredPreset>> = OnceLock::new();
    ALL.get_or_init(|| Vec::try_from_slice(BYTES).unwrap_or_default())
}

/// The preset with this id (case-insensitive), or whose file stem is this: the rule of
/// [`crate::model::presets::get`], kept equal to it by this module's test.
pub fn get(id: &str) -> Option<&'static StoredPreset> {
    let id = id.trim();
    let all = all();
    all.iter()
        .find(|p| p.id.eq_ignore_ascii_case(id))
        .or_else(|| all.iter().find(|p| p.stem.eq_ignore_ascii_case(id)))
}

impl StoredPreset {
    /// Its model, as the reader of its config makes it (the ledger blanked as said above);
    /// `None` were its bytes unreadable.
    pub fn model(&self) -> Option<ModelDesc> {
        let s = Stored::try_from_slice(&self.model).ok()?;
        Some(ModelDesc {
            layers: unrun(s.layers),
            mtp_layers: unrun(s.mtp_layers),
            ..s.model
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::generated::check_or_write;
    use crate::model::desc::{LedgerEntry, LedgerSource};
    use crate::model::presets;

    /// The ledger's entries a first screen reads (`num_hidden_layers`, `ssm_state_dtype`) as
    /// they are, the others blank: the screen shows their count only.
    fn slim(mut m: ModelDesc) -> ModelDesc {
        for e in &mut m.ledger {
            if !matches!(e.field.as_str(), "num_hidden_layers" | "ssm_state_dtype") {
                *e = LedgerEntry {
                    field: String::new(),
                    value: String::new(),
                    source: LedgerSource::Key(String::new()),
                };
            }
        }
        m
    }

    /// The file's bytes as the presets and their readers make them today.
    fn made() -> Vec<u8> {
        let mut all: Vec<StoredPreset> = Vec::new();
        for p in presets::all() {
            let m = slim(p.parse().unwrap_or_else(|e| panic!("{}: {e}", p.id)));
            let stored = Stored {
                layers: runs(&m.layers),
                mtp_layers: runs(&m.mtp_layers),
                model: ModelDesc {
                    layers: Vec::new(),
                    mtp_layers: Vec::new(),
                    ..m
                },
            };
            all.push(StoredPreset {
                id: p.id.clone(),
                stem: p.file.trim_end_matches(".json").to_string(),
                label: p.label(),
                model: borsh::to_vec(&stored).expect("serialises"),
            });
        }
        borsh::to_vec(&all).expect("serialises")
    }

    #[test]
    fn the_stored_models_are_the_readers_models() {
        let fresh = check_or_write(
            BYTES,
            &made(),
            "data/presets/first_models.bin",
            "REGENERATE_FIRST_MODELS",
            "presets_first",
        );
        if !fresh {
            return;
        }
        for p in presets::all() {
            let parsed = p.parse().expect("parses");
            let stem = p.file.trim_end_matches(".json");
            let names = [
                p.id.clone(),
                p.id.to_uppercase(),
                format!(" {} ", p.id),
                stem.to_string(),
                stem.to_lowercase(),
            ];
            for name in names {
                let stored = get(&name).unwrap_or_else(|| panic!("{name}"));
                let found = presets::get(&name).expect("a preset");
                assert_eq!(stored.label, found.label(), "{name}");
                assert_eq!(stored.id, found.id, "{name}");
            }
            let stored = get(&p.id).and_then(StoredPreset::model).expect("stored");
            assert_eq!(stored.ledger.len(), parsed.ledger.len(), "{}", p.id);
            assert_eq!(stored.stated_layers(), parsed.stated_layers(), "{}", p.id);
            assert_eq!(stored, slim(parsed), "{}", p.id);
        }
        for name in ["no-such-preset", "", "llama", "meta-llama"] {
            assert!(get(name).is_none(), "{name}");
            assert!(presets::get(name).is_none(), "{name}");
        }
    }
}
