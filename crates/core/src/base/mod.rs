//! Layer 1, the ground: what every other layer speaks in.
//!
//! Units ([`units`]), numeric precisions ([`dtype`]), checked `u64` arithmetic ([`checked`]),
//! the compiled-in data readers ([`csv`], [`json`]), one deterministic sort ([`order`]),
//! quantiles ([`quantile`](mod@quantile)), the translation table ([`i18n`]), what the tables
//! were asked for ([`lookups`]), phrases and typed errors ([`error`]) and derivations as data
//! ([`derivation`]).
//!
//! Invariant: imports nothing of the core above it (`tests/layers.rs`). Inside it, `units`,
//! `order` and `lookups` are leaves, `i18n` and `quantile` stand on them, `error` on `i18n`,
//! and the rest on `error`.

pub mod checked;
pub mod csv;
pub mod derivation;
pub mod dtype;
pub mod error;
pub mod expr;
#[cfg(test)]
pub mod generated;
pub mod i18n;
pub mod json;
pub mod lookups;
pub mod order;
pub mod quantile;
pub mod units;
pub mod url;

// The face of this layer: what the UI, the charts and the CLI use (they name no module
// inside a layer; `tests/layers.rs` checks it).
pub use derivation::{group, Derivation, Source};
pub use dtype::Dtype;
pub use error::{shorten, CalcError, Phrase};
pub use i18n::{fill, has, link_embed, link_first, link_late, link_shell, tr, Lang};
pub use json::{f64_any_text, f64_any_value};
pub use order::{order_by, sort_by};
pub use quantile::{quantile, weighted_quantile};
pub use units::{fmt_eok, fmt_sig, Bytes, BytesPerSecond, NumberSymbols, GIB};
