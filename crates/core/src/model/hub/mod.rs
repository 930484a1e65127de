//! The Hugging Face Hub, opt-in: where a model's files live and how its answers are read.
//!
//! Pure: nothing here touches the network. The CLI (`llmcalc model --hf ORG/NAME`, a blocking
//! HTTPS client) and the app (the browser's `fetch`, only when the user presses the button)
//! make the requests; both build the URLs with [`HubFile::url`] and hand each answer's status
//! code and body to [`read_config`], [`read_api`] or [`read_index`], which turn it into data or
//! a [`HubError`] whose sentence (English and Korean) says what happened and what to do.
//!
//! The URL layout (the Hub's, as `huggingface_hub` uses it):
//!
//! | file | URL |
//! |---|---|
//! | `config.json` | `{base}/{org}/{name}/resolve/main/config.json` |
//! | `model.safetensors.index.json` | `{base}/{org}/{name}/resolve/main/model.safetensors.index.json` |
//! | the model API | `{base}/api/models/{org}/{name}` (its `safetensors.parameters` per dtype, `safetensors.total`) |
//!
//! `base` is [`HUB_ORIGIN`]; only tests point it at a loopback stub ([`endpoint_override`],
//! [`loopback_endpoint`]). Only the model id is sent: no cookie, no token, no other data.
//!
//! The Hub's count is the number of elements the checkpoint's safetensors files store, per
//! dtype; [`compare`] sets it beside the calculator's count and explains the difference
//! (a vision tower or MTP layers the language model does not use, a tied head stored twice, a
//! quantized checkpoint packing several weights into one stored element). When the API gives no
//! count, the index's `metadata.total_parameters` is used, or else its `metadata.total_size`
//! divided by the bytes per parameter of the config's dtype (an estimate, said so).

mod answers;
mod compare;
mod endpoint;
mod request;

pub use answers::{check_answer, read_api, read_config, read_index, CountSource, HubCount};
pub use compare::{compare, Comparison};
pub use endpoint::{endpoint_override, loopback_endpoint, HUB_ORIGIN, TIMEOUT_S};
pub use request::{HubError, HubFile, ModelId, NAME_MAX};

/// What the tests of this folder share: a model id known to parse, and a fixture file's text.
#[cfg(test)]
mod test_support {
    use super::request::ModelId;

    pub(super) fn id(s: &str) -> ModelId {
        ModelId::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    pub(super) fn fixture(name: &str) -> String {
        let p = format!(
            "{}/tests/fixtures/{name}",
            concat!(env!("CARGO_MANIFEST_DIR"), "/../..")
        );
        std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
    }
}
