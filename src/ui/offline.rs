//! Works offline once loaded: registers `sw.js` (next to `index.html`), a service worker that
//! keeps the app's own files in a cache. Only over http(s), never in embed mode (a course page's
//! iframe should not install workers), and a refusal is silent: the app works without it.
//!
//! The registration waits until the late module has loaded (or failed to): the worker's
//! install then copies the files the page has just fetched from the HTTP cache instead of
//! downloading them a second time, and it neither competes with the first answer's bytes nor
//! with the late module's.

use crate::core::scenario::{Scenario, ViewMode};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};

/// Registers `./sw.js` with the page's directory as its scope, when the browser supports it
/// and the page is served over http(s). Never panics; failures are logged as warnings.
pub fn register_service_worker(embedded: bool) {
    if embedded {
        return;
    }
    let Some(w) = web_sys::window() else {
        return;
    };
    let protocol = w.location().protocol().unwrap_or_default();
    if protocol != "http:" && protocol != "https:" {
        return;
    }
    let nav = w.navigator();
    let Ok(container) = js_sys::Reflect::get(&nav, &JsValue::from_str("serviceWorker")) else {
        return;
    };
    if container.is_undefined() || container.is_null() {
        return;
    }
    let Ok(register) = js_sys::Reflect::get(&container, &JsValue::from_str("register")) else {
        return;
    };
    let Ok(register) = register.dyn_into::<js_sys::Function>() else {
        return;
    };
    // Relative to the document: works under any sub-path of a static host.
    let Ok(promise) = register.call1(&container, &JsValue::from_str("./sw.js")) else {
        return;
    };
    let Ok(promise) = promise.dyn_into::<js_sys::Promise>() else {
        return;
    };
    let ok = Closure::<dyn FnMut(JsValue)>::new(|_: JsValue| {});
    let err = Closure::<dyn FnMut(JsValue)>::new(|e: JsValue| {
        leptos::logging::warn!("offline mode unavailable: {e:?}");
    });
    let _ = promise.then2(&ok, &err);
    ok.forget();
    err.forget();
}

/// How long after the start the registration happens at the latest, when the late module has
/// neither loaded nor failed by then (it is asked for only once a first answer exists).
const REGISTER_AT_THE_LATEST_MS: u32 = 10_000;

/// [`register_service_worker`] for the page's own URL (embed mode read from its query), once
/// the late module has loaded or failed ([`crate::ui::late::EVT_READY`] /
/// [`crate::ui::late::EVT_FAILED`]), or after [`REGISTER_AT_THE_LATEST_MS`].
pub fn register_for_location() {
    let embedded = web_sys::window()
        .and_then(|w| w.location().search().ok())
        .map(|q| matches!(Scenario::from_query(&q).0.view, ViewMode::Embed(_)))
        .unwrap_or(false);
    if embedded {
        return;
    }
    let Some(w) = web_sys::window() else {
        return;
    };
    let done = std::rc::Rc::new(std::cell::Cell::new(false));
    let register = move || {
        if !done.replace(true) {
            register_service_worker(false);
        }
    };
    for name in [crate::ui::late::EVT_READY, crate::ui::late::EVT_FAILED] {
        let register = register.clone();
        gloo::events::EventListener::once(&w, name, move |_| register()).forget();
    }
    gloo::timers::callback::Timeout::new(REGISTER_AT_THE_LATEST_MS, register).forget();
}
