//! LLM Serving Calculator: will this model fit, how many requests, how fast, at what cost.
//!
//! [`core`] is the pure calculation core (no web dependency), shared by the browser app
//! ([`ui`], wasm only) and the native `llmcalc` CLI ([`cli`]).
#![doc = include_str!("../README.md")]

/// The calculation core (the `llmcalc-core` crate of this workspace, `crates/core/`), under
/// the name the app, the charts and the CLI use for it.
pub use llmcalc_core as core;

/// Every chart, drawn from prepared data by backend-generic plotters code (the `llmcalc-charts`
/// crate of this workspace, `crates/charts/`).
pub use llmcalc_charts as charts;

/// The command line (the `llmcalc-cli` crate of this workspace, `crates/cli/`; native only).
#[cfg(not(target_arch = "wasm32"))]
pub use llmcalc_cli as cli;

#[cfg(target_arch = "wasm32")]
pub mod ui;
