//! The calculation core: pure Rust, no web dependency (this crate's manifest names none, so the
//! compiler refuses one); the web app, the charts and the CLI name it `crate::core`.
//!
//! Plain data in, plain data out. Every quantity carries its unit (see [`base::units`]), every
//! failure is a typed [`base::error::CalcError`] with a user-facing sentence, and every headline
//! number can explain itself as a [`base::derivation::Derivation`].
//!
//! # Layers
//!
//! The core is seven layers, each a folder; a layer imports only the layers listed before it
//! (`tests/layers.rs` reads every `use` and fails on an import against this order, and on any
//! import cycle between core modules):
//!
//! 1. [`base`]: units, precisions, checked arithmetic, CSV/JSON readers, the translation table,
//!    phrases and errors, derivations. Imports nothing of the core.
//! 2. [`model`]: what a model is ([`model::ModelDesc`]) and how text becomes one (config
//!    parsing, presets, quick mode).
//! 3. [`hardware`]: the accelerator catalog, custom accelerators, interconnects.
//! 4. [`calc`]: every formula: KV cache, weights, memory budgets, roofline, performance,
//!    loading, capacity, calibration.
//! 5. [`sim`]: the serving simulator: one vLLM engine replica under load (continuous
//!    batching, paged KV blocks, preemption), timed by `calc`'s performance model.
//! 6. [`scenario`]: what the user chose, as plain data, and its URL form.
//! 7. [`present`]: the report, chart series, view data, explanations and exports.
//!
//! `ui`, `charts` and `cli` sit above the core.

pub mod base;
pub mod calc;
pub mod hardware;
pub mod model;
pub mod present;
pub mod scenario;
pub mod sim;
