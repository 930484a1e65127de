//! Fuzzes the `model.safetensors.index.json` path of `core::model::config::parse_model_text`.
//!
//! Raw text (seeds: real-shaped indexes) and, when the first byte is odd, the rest of the
//! input spliced in as the `metadata.total_size` token of an otherwise valid index, so the
//! fuzzer spends its time on the number itself (2^64, -1, 1e400, NaN, ...).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((first, rest)) = data.split_first() else {
        llm_serving_calculator_fuzz::check_model_text("");
        return;
    };
    if first % 2 == 1 {
        let token = String::from_utf8_lossy(rest);
        let text = format!(
            "{{\"metadata\": {{\"total_size\": {token}}}, \"weight_map\": {{\"lm_head.weight\": \"model-00001-of-00001.safetensors\"}}}}"
        );
        llm_serving_calculator_fuzz::check_model_text(&text);
    } else if let Ok(text) = std::str::from_utf8(data) {
        llm_serving_calculator_fuzz::check_model_text(text);
    }
});
