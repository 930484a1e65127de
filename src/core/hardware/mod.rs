//! Layer 3: the hardware. The accelerator catalog compiled in from `data/accelerators.csv`
//! (every row sourced), custom accelerators a user describes, and interconnects.
//!
//! Invariant: imports only [`crate::core::base`]; knows nothing of models. A new GPU field is a
//! CSV column read in [`catalog`] and checked by its tests.

pub mod catalog;
