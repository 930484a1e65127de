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

/// Reads `key=value` parts into a default `T` through its `set`, counting the refused parts
/// (the URL-key tests of the input groups).
#[cfg(test)]
fn read_parts<T: Default, E>(
    q: &[String],
    set: impl Fn(&mut T, &str, &str) -> Result<(), E>,
) -> (T, usize) {
    let mut v = T::default();
    let mut errors = 0;
    for p in q {
        let (k, val) = p.split_once('=').unwrap_or((p, ""));
        if set(&mut v, k, val).is_err() {
            errors += 1;
        }
    }
    (v, errors)
}

pub use choice::*;
pub use notice::*;
pub use search_inputs::*;
pub use serving_inputs::*;
pub use view_inputs::*;
