//! The presets' models as their readers make them, the assumption ledger's entries a first
//! screen does not read left blank (it shows their count), stored: what the first-answer module
//! (`crates/first`) evaluates a link's preset with, so it links neither the config readers nor
//! the presets' configs. `data/presets/first_models.bin` holds every preset as its id and its
//! model in borsh's binary form, consecutive equal layers as one run (borsh, not serde: serde's
//! derived decoders for the model's tagged enums made the module larger than the readers did).
//! Made by this module's test (`REGENERATE_FIRST_MODELS=1 cargo test -p llmcalc-core --lib
//! presets_first`), which fails when the file is not what the readers make today and checks
//! each model reads back equal to the preset's parsed model (its ledger so blanked).

use crate::model::desc::{Layer, ModelDesc};
use borsh::{BorshDeserialize, BorshSerialize};

/// The stored models: for each preset, its id and its [`Stored`] model's bytes.
static BYTES: &[u8] = include_bytes!("../../../../data/presets/first_models.bin");

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

/// The stored model of the preset `id` (its exact id, as `presets::get` resolves it), or
/// `None` when the file has none.
pub fn get(id: &str) -> Option<ModelDesc> {
    let all = Vec::<(String, Vec<u8>)>::try_from_slice(BYTES).ok()?;
    let (_, bytes) = all.into_iter().find(|(i, _)| i == id)?;
    let s = Stored::try_from_slice(&bytes).ok()?;
    Some(ModelDesc {
        layers: unrun(s.layers),
        mtp_layers: unrun(s.mtp_layers),
        ..s.model
    })
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

    /// The file's bytes as the readers make them today.
    fn made() -> Vec<u8> {
        let mut all: Vec<(String, Vec<u8>)> = Vec::new();
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
            all.push((p.id.clone(), borsh::to_vec(&stored).expect("serialises")));
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
            let stored = get(&p.id).expect("stored");
            assert_eq!(stored.ledger.len(), parsed.ledger.len(), "{}", p.id);
            assert_eq!(stored.stated_layers(), parsed.stated_layers(), "{}", p.id);
            assert_eq!(stored, slim(parsed), "{}", p.id);
        }
        assert!(get("no-such-preset").is_none());
    }
}
