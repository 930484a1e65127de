//! What a computation looked up in the compiled-in tables, for the first-answer module that
//! carries only part of them (`present::link_first`): a miss flag the tables raise when a part
//! they leave out is asked for, and (natively) a record of every name asked for, from which
//! the parts are listed (`tests/first_keys.rs`).

use std::cell::{Cell, RefCell};
use std::collections::BTreeSet;

thread_local! {
    /// Set when a table was asked on this thread for something its linked part lacks.
    static MISSED: Cell<bool> = const { Cell::new(false) };
    /// The (table, name) pairs asked for on this thread while [`record`] runs.
    static RECORDED: RefCell<Option<BTreeSet<(&'static str, String)>>> =
        const { RefCell::new(None) };
}

/// Notes that `table` was asked for `name` (kept only while [`record`] runs).
pub fn asked(table: &'static str, name: &str) {
    RECORDED.with(|r| {
        if let Ok(mut r) = r.try_borrow_mut() {
            if let Some(set) = r.as_mut() {
                set.insert((table, name.to_string()));
            }
        }
    });
}

/// Notes that a table lacked what it was asked for in its linked part.
pub fn missed() {
    MISSED.with(|m| m.set(true));
}

/// Whether a table missed something on this thread since the last call (and clears the flag).
pub fn take_missed() -> bool {
    MISSED.with(|m| m.replace(false))
}

/// Runs `f` and returns what it returned with every (table, name) asked for on this thread
/// meanwhile.
pub fn record<R>(f: impl FnOnce() -> R) -> (R, BTreeSet<(&'static str, String)>) {
    RECORDED.with(|r| *r.borrow_mut() = Some(BTreeSet::new()));
    let out = f();
    let asked = RECORDED.with(|r| r.borrow_mut().take()).unwrap_or_default();
    (out, asked)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_while_asked_and_the_miss_flag_clears() {
        asked("t", "outside");
        let ((), got) = record(|| {
            asked("t", "a");
            asked("u", "b");
            asked("t", "a");
        });
        let want: BTreeSet<(&str, String)> =
            [("t", "a".to_string()), ("u", "b".to_string())].into();
        assert_eq!(got, want);
        assert!(!take_missed());
        missed();
        assert!(take_missed());
        assert!(!take_missed());
    }
}
