//! Lenient, bounded JSON parsing for pasted files (to be completed: `Infinity`/`NaN` tokens,
//! BOM, size and depth limits).

use crate::core::error::CalcError;

/// Parses pasted JSON text into a value.
pub fn parse(text: &str) -> Result<serde_json::Value, CalcError> {
    let t = text.trim_start_matches('\u{feff}');
    if t.trim().is_empty() {
        return Err(CalcError::EmptyInput);
    }
    serde_json::from_str(t).map_err(|e| CalcError::InvalidJson {
        detail: e.to_string(),
        line: e.line(),
        column: e.column(),
    })
}
