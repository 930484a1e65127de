//! Numbers as the logs the tests reproduce print them. A module of its own, included with
//! `#[path]` by tests that do not need `common/mod.rs`'s simulation helpers.

/// `n` with commas every three digits, as Python's `f"{n:,}"` prints it.
pub fn commas(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
