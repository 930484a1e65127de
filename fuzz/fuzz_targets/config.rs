//! Fuzzes `core::model::config::parse_model_text` with config.json-like text (seeds: the real
//! configs in data/presets/), checking the parsed model's invariants and the whole report.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        llm_serving_calculator_fuzz::check_model_text(text);
    }
});
