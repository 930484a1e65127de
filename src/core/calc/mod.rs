//! Layer 4: the formulas. KV cache and recurrent state ([`kv`]), weight bytes ([`weights`]),
//! memory budgets by the textbook's and vLLM's rules ([`memory`]), the roofline ([`roofline`]),
//! the performance model ([`perf`]), loading and offloading ([`loading`]), capacity planning
//! ([`capacity`]) and the calibration against measured benchmarks ([`calibration`]).
//!
//! Invariant: imports only `base`, `model` and `hardware`; never the scenario or anything that
//! presents. Each module's doc states its formulas with their sources.

pub mod calibration;
pub mod capacity;
pub mod kv;
pub mod loading;
pub mod memory;
pub mod perf;
pub mod roofline;
pub mod tp;
pub mod weights;
