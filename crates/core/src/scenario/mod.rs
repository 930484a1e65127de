//! The scenario: everything a user chose, as plain data, and its URL form.
//!
//! [`Scenario::to_query`] writes it as a URL query; [`Scenario::from_query`] reads one back,
//! parsing every parameter on its own: a bad, garbled, enormous or outdated parameter falls
//! back to its default and produces a [`Notice`] naming it; nothing here panics.
//!
//! A pasted config travels in the `cfg` parameter as base64url of its minified JSON (of the
//! raw text when it is not JSON). Links longer than [`MAX_LINK_QUERY_BYTES`] are not shareable
//! by every host, so [`Scenario::share_query`] leaves the config out and says so.
//!
//! Layer 5 of the core: imports `base`, `model`, `hardware` and `calc` (for the types a
//! scenario names: efficiencies, the planner's family, a matmul), never `present`. The
//! analysis views' own inputs live in [`view_inputs`] (the planner's search's in
//! [`search_inputs`]).

mod choice;
mod notice;
mod query;
mod search_inputs;
mod serving_inputs;
mod view_inputs;

pub use choice::*;
pub use notice::*;
pub use search_inputs::*;
pub use serving_inputs::*;
pub use view_inputs::*;
