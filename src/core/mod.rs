//! The calculation core: pure Rust, no web dependency (a test scans for that).
//!
//! Plain data in, plain data out. Every quantity carries its unit (see [`units`]), every
//! failure is a typed [`error::CalcError`] with a user-facing sentence, and every headline
//! number can explain itself as a [`derivation::Derivation`].

pub mod calibration;
pub mod capacity;
pub mod catalog;
pub mod config;
pub mod csv;
pub mod derivation;
pub mod dtype;
pub mod error;
pub mod explain;
pub mod export;
pub mod i18n;
pub mod json;
pub mod kv;
pub mod loading;
pub mod memory;
pub mod model;
pub mod order;
pub mod perf;
pub mod presets;
pub mod quick;
pub mod report;
pub mod roofline;
pub mod scenario;
pub mod series;
pub mod units;
pub mod views;
pub mod weights;
