//! Layer 3: the hardware. The accelerator catalog compiled in from `data/accelerators.csv`
//! (every row sourced), custom accelerators a user describes, and interconnects.
//!
//! Invariant: imports only [`crate::core::base`]; knows nothing of models. A new GPU field is a
//! CSV column read in [`catalog`] and checked by its tests.

pub mod catalog;

// The face of this layer: what the UI, the charts and the CLI use (they name no module
// inside a layer; `tests/layers.rs` checks it).
pub use catalog::{Accelerator, Catalog, CustomAccelerator, InterconnectPreset, Link, Peak, Peaks};
