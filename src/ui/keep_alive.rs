//! Browser handles (observers, listeners and their callbacks) kept alive exactly as long as the
//! reactive owner that made them: released at its cleanup, never leaked, never dropped early.

use leptos::prelude::*;
use wasm_bindgen::closure::Closure;

/// Keeps `held` (a browser observer or listener target with its callback) alive while the
/// current reactive owner lives, and calls `release` on it when the owner is cleaned up.
pub fn keep_until_cleanup<T: 'static, R: FnOnce(&T) + 'static>(held: T, release: R) {
    let keep = StoredValue::new_local(Some((held, release)));
    on_cleanup(move || {
        keep.try_update_value(|k| {
            if let Some((h, release)) = k.take() {
                release(&h);
            }
        });
    });
}

/// [`keep_until_cleanup`] for an observer and its callback: disconnects it at cleanup.
pub fn keep_observer<O: 'static, F: ?Sized + 'static>(obs: O, cb: Closure<F>, disconnect: fn(&O)) {
    keep_until_cleanup((obs, cb), move |(obs, _)| disconnect(obs));
}
