//! Layer 6: what is shown. The one entry point [`report::evaluate`] (a scenario and a catalog
//! in, a [`report::Report`] out), the chart series ([`series`]), the analysis views' data
//! ([`views`]), the teaching texts ([`explain`]) and the CSV/JSON exports ([`export`]).
//!
//! Invariant: the top of the core; imports any layer below, and nothing in the core imports it.
//! A new chart gets its prepared data here and its drawing in `crate::charts`.

pub mod explain;
pub mod export;
pub mod report;
pub mod series;
pub mod views;
