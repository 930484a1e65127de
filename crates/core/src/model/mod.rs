//! Layer 2: the model. What a model is ([`ModelDesc`], its layers, mixers and feed-forward
//! blocks, in [`desc`]) and how pasted text becomes one: a Hugging Face `config.json` or a
//! safetensors index ([`config`]), the built-in presets ([`presets`]), or a bare parameter count
//! ([`quick`]).
//!
//! Invariant: imports only [`crate::base`]. A new model family goes in [`config`] (its
//! reader beside the others), with its fixture and published count in `tests/configs.rs`.

pub mod config;
pub mod desc;
pub mod hub;
pub mod presets;
pub mod presets_first;
pub mod quick;

pub use desc::*;

// The face of this layer: what the UI, the charts and the CLI use (they name no module
// inside a layer; `tests/layers.rs` checks it).
pub use config::parse_model_text;
pub use hub::{
    compare as compare_hub_count, endpoint_override, loopback_endpoint, read_api, read_config,
    read_index, Comparison, CountSource, HubCount, HubError, HubFile, ModelId, HUB_ORIGIN,
    TIMEOUT_S as HUB_TIMEOUT_S,
};
pub use presets::{all as all_presets, get as preset};
pub use quick::{parse_param_count, quick_model};
