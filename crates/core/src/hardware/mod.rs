//! Layer 3: the hardware. The accelerator catalog compiled in from `data/accelerators.csv`
//! (every row sourced), custom accelerators a user describes, and interconnects.
//!
//! Files, each importing only the ones above it:
//! - [`peak`]: dense peaks by precision and the roofline's ridge point (a leaf).
//! - [`interconnect`]: topologies, interconnects, the textbook presets and links.
//! - [`accelerator`]: one accelerator, its capacity, price and compute precision.
//! - [`custom`]: a user-entered accelerator, validated and carried in the URL.
//! - [`kernels`]: vLLM's kernels as measured per GPU, in a compact form (times of GEMMs,
//!   attention, all-reduce and fused MoE at any shape).
//! - [`catalog`]: the compiled-in catalog, its CSV parsing and look-up; re-exports the items
//!   above so `catalog::X` paths keep working.
//!
//! Invariant: imports only [`crate::base`]; knows nothing of models. A new GPU field is a
//! CSV column read in [`catalog`] and checked by its tests.

pub mod accelerator;
pub mod catalog;
pub mod catalog_first;
pub mod custom;
pub mod interconnect;
pub mod kernels;
pub mod peak;

// The face of this layer: what the UI, the charts and the CLI use (they name no module
// inside a layer; `tests/layers.rs` checks it).
pub use catalog::{
    Accelerator, Architecture, Catalog, CustomAccelerator, CustomFigure, InterconnectPreset, Link,
    Peak, Peaks, NAME_MAX_CHARS,
};
pub use kernels::{
    kernels_for, GemmDtype, GpuKernels, KernelSource, MoeDtype, MoeShape, Roof, Routing,
};
