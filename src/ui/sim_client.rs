//! The page's side of the serving simulator's Web Worker (`src/bin/sim_worker.rs`): starts it
//! on demand, sends jobs, drops stale replies.
//!
//! Where the worker is: Trunk names a `data-type="worker"` rust asset after its Cargo binary
//! and never hashes it (its name must be known at run time: Trunk's `hashed_wasm_base` skips
//! the hash for workers), so the loader shim Trunk writes (`data-loader-shim`) is always
//! [`WORKER_URL`] next to `index.html`; it imports `sim_worker.js` and instantiates
//! `sim_worker_bg.wasm`. The e2e test checks that the built `dist/` holds it. `sw.js` fetches
//! these three unhashed files network-first, so a new build never pairs a new page with an
//! old worker.
//!
//! Protocol (`core::present::serving`): one job in flight at a time. A new job while one runs
//! replaces the waiting one (only the newest waits), and a reply whose id is not the newest
//! job's is dropped: a new scenario during a sweep supersedes it, and no sweep in between
//! ever runs.

use crate::core::present::{ServingJob, ServingView, WorkerReply};
use leptos::prelude::*;
use std::cell::RefCell;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};

/// The worker's loader shim, relative to the page.
pub const WORKER_URL: &str = "sim_worker_loader.js";
/// How long the worker may take to say it is ready before the page gives up on it.
const READY_TIMEOUT_MS: u32 = 30_000;

/// What the section shows about the worker.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Status {
    /// Not started (the section has not come near the screen yet).
    #[default]
    Idle,
    /// Starting: the module is loading.
    Loading,
    /// A job is running.
    Running,
    /// Up to date.
    Done,
    /// The worker could not be loaded or crashed (the reason, for the sentence).
    Failed(String),
}

/// The signals the section reads; written by the worker's replies.
#[derive(Clone, Copy)]
pub struct SimSignals {
    /// The worker's state.
    pub status: RwSignal<Status>,
    /// The newest result (kept when a later job fails).
    pub view: RwSignal<Option<ServingView>>,
    /// The newest job's failure, in one sentence.
    pub job_error: RwSignal<Option<String>>,
}

struct Client {
    worker: web_sys::Worker,
    ready: bool,
    busy: bool,
    newest: u64,
    waiting: Option<ServingJob>,
    // Kept alive as long as the worker.
    _on_message: Closure<dyn FnMut(web_sys::MessageEvent)>,
    _on_error: Closure<dyn FnMut(web_sys::Event)>,
}

thread_local! {
    static CLIENT: RefCell<Option<Client>> = const { RefCell::new(None) };
    static NEXT_ID: RefCell<u64> = const { RefCell::new(0) };
}

/// Whether the worker has been started.
pub fn started() -> bool {
    CLIENT.with(|c| c.try_borrow().map(|c| c.is_some()).unwrap_or(true))
}

/// Starts the worker (once); `sig.status` says how it goes.
pub fn start(sig: SimSignals) {
    if started() {
        return;
    }
    sig.status.set(Status::Loading);
    mark(START_MARK);
    let worker = match web_sys::Worker::new(WORKER_URL) {
        Ok(w) => w,
        Err(e) => {
            sig.status.set(Status::Failed(js_text(&e)));
            return;
        }
    };
    let on_message =
        Closure::<dyn FnMut(web_sys::MessageEvent)>::new(move |ev: web_sys::MessageEvent| {
            let text = ev.data().as_string().unwrap_or_default();
            on_reply(sig, &text);
        });
    let on_error = Closure::<dyn FnMut(web_sys::Event)>::new(move |ev: web_sys::Event| {
        let why = ev
            .dyn_ref::<web_sys::ErrorEvent>()
            .map(|e| e.message())
            .filter(|m| !m.is_empty())
            .unwrap_or_else(|| WORKER_URL.to_string());
        fail(sig, why);
    });
    worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
    CLIENT.with(|c| {
        if let Ok(mut c) = c.try_borrow_mut() {
            *c = Some(Client {
                worker,
                ready: false,
                busy: false,
                newest: 0,
                waiting: None,
                _on_message: on_message,
                _on_error: on_error,
            });
        }
    });
    // A worker whose wasm fails to load inside it reports nothing: give up after a while.
    gloo::timers::callback::Timeout::new(READY_TIMEOUT_MS, move || {
        let ready = CLIENT.with(|c| {
            c.try_borrow()
                .ok()
                .and_then(|c| c.as_ref().map(|c| c.ready))
                .unwrap_or(true)
        });
        if !ready {
            fail(sig, "timeout".into());
        }
    })
    .forget();
}

/// Queues the newest job (`query`, `lang`): sent at once when the worker is idle, else when
/// the running job answers; any job still waiting is replaced.
pub fn submit(sig: SimSignals, query: String, lang: &str) {
    let id = NEXT_ID.with(|n| {
        let mut n = n.borrow_mut();
        *n += 1;
        *n
    });
    let job = ServingJob {
        id,
        query,
        lang: lang.to_string(),
    };
    let sent = CLIENT.with(|c| {
        let Ok(mut c) = c.try_borrow_mut() else {
            return false;
        };
        let Some(c) = c.as_mut() else { return false };
        c.newest = id;
        c.waiting = Some(job);
        pump(c)
    });
    if (sent || started())
        && !matches!(
            sig.status.get_untracked(),
            Status::Failed(_) | Status::Loading
        )
    {
        sig.status.set(Status::Running);
    }
}

/// Sends the waiting job when the worker is ready and idle; whether one was sent.
fn pump(c: &mut Client) -> bool {
    if !c.ready || c.busy {
        return false;
    }
    let Some(job) = c.waiting.take() else {
        return false;
    };
    let Ok(text) = serde_json::to_string(&job) else {
        return false;
    };
    c.busy = c.worker.post_message(&JsValue::from_str(&text)).is_ok();
    if c.busy {
        mark(SENT_MARK);
    }
    c.busy
}

/// Performance marks for `bench/sim_worker.mjs`: a job sent; the worker started and ready.
const SENT_MARK: &str = "llmcalc-sim-sent";
const START_MARK: &str = "llmcalc-sim-start";

fn mark(name: &str) {
    if let Some(p) = web_sys::window().and_then(|w| w.performance()) {
        let _ = p.mark(name);
    }
}

/// Measures from the newest mark `start` to now as `name` (a job: sent to shown).
fn measure(name: &str, start: &str) {
    if let Some(p) = web_sys::window().and_then(|w| w.performance()) {
        let _ = p.measure_with_start_mark(name, start);
    }
}

fn on_reply(sig: SimSignals, text: &str) {
    let Ok(reply) = serde_json::from_str::<WorkerReply>(text) else {
        return;
    };
    let (id, outcome) = match reply {
        WorkerReply::Ready => {
            measure("llmcalc-sim-ready", START_MARK);
            let sent = with_client(|c| {
                c.ready = true;
                pump(c)
            });
            sig.status.set(if sent == Some(true) {
                Status::Running
            } else {
                Status::Done
            });
            return;
        }
        WorkerReply::Done { id, view } => (id, Ok(view)),
        WorkerReply::Failed { id, message } => (id, Err(message)),
    };
    let newest = with_client(|c| {
        c.busy = false;
        let newest = c.newest == id;
        pump(c);
        newest
    })
    .unwrap_or(false);
    if !newest {
        // A stale reply: a newer job is on its way.
        return;
    }
    match outcome {
        Ok(view) => {
            sig.job_error.set(None);
            sig.view.set(Some(*view));
        }
        Err(m) => sig.job_error.set(Some(m)),
    }
    sig.status.set(Status::Done);
    // Sent to received, parsed and handed to the page (the charts draw in this task).
    measure("llmcalc-sim-job", SENT_MARK);
}

fn with_client<T>(f: impl FnOnce(&mut Client) -> T) -> Option<T> {
    CLIENT.with(|c| c.try_borrow_mut().ok().and_then(|mut c| c.as_mut().map(f)))
}

fn fail(sig: SimSignals, why: String) {
    with_client(|c| {
        c.worker.terminate();
        c.busy = false;
        c.ready = false;
    });
    sig.status.set(Status::Failed(why));
}

fn js_text(v: &JsValue) -> String {
    v.as_string()
        .or_else(|| {
            v.dyn_ref::<js_sys::Error>()
                .map(|e| String::from(e.message()))
        })
        .unwrap_or_else(|| WORKER_URL.to_string())
}
