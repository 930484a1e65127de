//! Fuzzes `core::scenario::Scenario::from_query` (every URL parameter) and the custom
//! accelerator's `key=value;…` form: never a panic, values within limits, and
//! `from_query(to_query(s)) == s`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let q = String::from_utf8_lossy(data);
    llm_serving_calculator_fuzz::check_query(&q);
    if let Some(rest) = q.strip_prefix("custom:") {
        llm_serving_calculator_fuzz::check_custom(rest);
    } else {
        llm_serving_calculator_fuzz::check_custom(&q);
    }
});
