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
//! Protocol (`core::present::serving`): one job in flight at a time, of four kinds (the serving
//! section's sweep, the planner's simulated sizing, a pasted benchmark, the planner's search),
//! each section with its own signals
//! ([`SimSignals`], registered by [`submit`]). A new job while one runs replaces the waiting
//! one of its kind (only the newest of each kind waits; the one queued first is sent first),
//! and a reply whose id is not the newest job's of its kind is dropped: a new scenario during
//! a sweep supersedes it, and no sweep in between ever runs. A search posts its progress while
//! it runs (`WorkerReply::Progress`), shown by its section ([`SimSignals::progress`]); the
//! job is still in flight until its answer.

use crate::core::present::{
    BenchView, JobKind, PlanSimView, SearchView, ServingJob, ServingView, WorkerReply,
};
use crate::core::scenario::{PerfInputs, Scenario, ServingInputs, ViewInputs};
use leptos::prelude::*;
use std::cell::RefCell;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};

/// The worker's loader shim, relative to the page.
pub const WORKER_URL: &str = "sim_worker_loader.js";
/// How long the worker may take to say it is ready before the page gives up on it.
const READY_TIMEOUT_MS: u32 = 30_000;

/// What a section shows about the worker.
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

/// The signals one section reads (`V`: what its jobs answer, the serving section's
/// [`ServingView`] or the planner's [`PlanSimView`]); written by the worker's replies.
pub struct SimSignals<V: Send + Sync + 'static = ServingView> {
    /// The worker's state, for this section's jobs.
    pub status: RwSignal<Status>,
    /// The newest result (kept when a later job fails).
    pub view: RwSignal<Option<V>>,
    /// The newest job's failure, in one sentence.
    pub job_error: RwSignal<Option<String>>,
    /// Where the newest job is, while it runs (a search's stage and steps; `None` before its
    /// first report and after its answer).
    pub progress: RwSignal<Option<JobProgress>>,
}

/// A running job's report: its stage (`screen`, `simulate`) and steps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobProgress {
    /// The stage.
    pub stage: String,
    /// Steps done.
    pub done: u64,
    /// Steps of the stage.
    pub total: u64,
}

impl<V: Send + Sync + 'static> Clone for SimSignals<V> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<V: Send + Sync + 'static> Copy for SimSignals<V> {}

impl<V: Send + Sync + 'static> SimSignals<V> {
    /// Fresh signals: idle, no result, no error.
    pub fn new() -> Self {
        SimSignals {
            status: RwSignal::new(Status::Idle),
            view: RwSignal::new(None),
            job_error: RwSignal::new(None),
            progress: RwSignal::new(None),
        }
    }
}

impl<V: Send + Sync + 'static> Default for SimSignals<V> {
    fn default() -> Self {
        Self::new()
    }
}

/// What the worker answers, per job kind: which signals receive it.
pub trait JobOutput: Send + Sync + Sized + 'static {
    /// The kind of job that answers with it.
    const KIND: JobKind;
    /// This kind's place among the sections' signals.
    fn sink(s: &mut Sinks) -> &mut Option<SimSignals<Self>>;
    /// Registers the section's signals for this kind (the newest registration wins).
    fn register(sig: SimSignals<Self>) {
        SINKS.with(|s| {
            if let Ok(mut s) = s.try_borrow_mut() {
                *Self::sink(&mut s) = Some(sig);
            }
        });
    }
}

impl JobOutput for ServingView {
    const KIND: JobKind = JobKind::Sweep;
    fn sink(s: &mut Sinks) -> &mut Option<SimSignals<Self>> {
        &mut s.sweep
    }
}

impl JobOutput for PlanSimView {
    const KIND: JobKind = JobKind::Plan;
    fn sink(s: &mut Sinks) -> &mut Option<SimSignals<Self>> {
        &mut s.plan
    }
}

impl JobOutput for BenchView {
    const KIND: JobKind = JobKind::Bench;
    fn sink(s: &mut Sinks) -> &mut Option<SimSignals<Self>> {
        &mut s.bench
    }
}

impl JobOutput for SearchView {
    const KIND: JobKind = JobKind::Search;
    fn sink(s: &mut Sinks) -> &mut Option<SimSignals<Self>> {
        &mut s.search
    }
}

/// Every job kind.
const KINDS: [JobKind; 4] = [
    JobKind::Sweep,
    JobKind::Plan,
    JobKind::Bench,
    JobKind::Search,
];

/// The sections' signals, by job kind.
#[derive(Default, Clone, Copy)]
pub struct Sinks {
    sweep: Option<SimSignals<ServingView>>,
    plan: Option<SimSignals<PlanSimView>>,
    bench: Option<SimSignals<BenchView>>,
    search: Option<SimSignals<SearchView>>,
}

impl Sinks {
    fn status(self, kind: JobKind) -> Option<RwSignal<Status>> {
        match kind {
            JobKind::Sweep => self.sweep.map(|s| s.status),
            JobKind::Plan => self.plan.map(|s| s.status),
            JobKind::Bench => self.bench.map(|s| s.status),
            JobKind::Search => self.search.map(|s| s.status),
        }
    }

    fn statuses(self) -> impl Iterator<Item = RwSignal<Status>> {
        KINDS.into_iter().filter_map(move |k| self.status(k))
    }

    fn error(self, kind: JobKind) -> Option<RwSignal<Option<String>>> {
        match kind {
            JobKind::Sweep => self.sweep.map(|s| s.job_error),
            JobKind::Plan => self.plan.map(|s| s.job_error),
            JobKind::Bench => self.bench.map(|s| s.job_error),
            JobKind::Search => self.search.map(|s| s.job_error),
        }
    }

    fn progress(self, kind: JobKind) -> Option<RwSignal<Option<JobProgress>>> {
        match kind {
            JobKind::Sweep => self.sweep.map(|s| s.progress),
            JobKind::Plan => self.plan.map(|s| s.progress),
            JobKind::Bench => self.bench.map(|s| s.progress),
            JobKind::Search => self.search.map(|s| s.progress),
        }
    }
}

fn sinks() -> Sinks {
    SINKS.with(|s| s.try_borrow().map(|s| *s).unwrap_or_default())
}

/// The newest job of one kind and the one waiting to be sent.
#[derive(Default)]
struct Slot {
    newest: u64,
    waiting: Option<ServingJob>,
}

struct Client {
    worker: web_sys::Worker,
    ready: bool,
    busy: bool,
    /// Why the worker stopped, once it has failed.
    failed: Option<String>,
    sweep: Slot,
    plan: Slot,
    bench: Slot,
    search: Slot,
    // Kept alive as long as the worker.
    _on_message: Closure<dyn FnMut(web_sys::MessageEvent)>,
    _on_error: Closure<dyn FnMut(web_sys::Event)>,
}

impl Client {
    fn slot(&mut self, kind: JobKind) -> &mut Slot {
        match kind {
            JobKind::Sweep => &mut self.sweep,
            JobKind::Plan => &mut self.plan,
            JobKind::Bench => &mut self.bench,
            JobKind::Search => &mut self.search,
        }
    }

    /// The kind whose newest job is `id`, if any.
    fn newest_kind(&mut self, id: u64) -> Option<JobKind> {
        KINDS.into_iter().find(|k| self.slot(*k).newest == id)
    }
}

thread_local! {
    static CLIENT: RefCell<Option<Client>> = const { RefCell::new(None) };
    static NEXT_ID: RefCell<u64> = const { RefCell::new(0) };
    static SINKS: RefCell<Sinks> = RefCell::new(Sinks::default());
}

/// Whether the worker has been started.
pub fn started() -> bool {
    CLIENT.with(|c| c.try_borrow().map(|c| c.is_some()).unwrap_or(true))
}

/// Starts the worker (once); every registered section's status says how it goes.
fn start() {
    if started() {
        return;
    }
    for s in sinks().statuses() {
        s.set(Status::Loading);
    }
    mark(START_MARK);
    let worker = match web_sys::Worker::new(WORKER_URL) {
        Ok(w) => w,
        Err(e) => {
            let why = js_text(&e);
            for s in sinks().statuses() {
                s.set(Status::Failed(why.clone()));
            }
            return;
        }
    };
    let on_message =
        Closure::<dyn FnMut(web_sys::MessageEvent)>::new(move |ev: web_sys::MessageEvent| {
            let text = ev.data().as_string().unwrap_or_default();
            on_reply(&text);
        });
    let on_error = Closure::<dyn FnMut(web_sys::Event)>::new(move |ev: web_sys::Event| {
        let why = ev
            .dyn_ref::<web_sys::ErrorEvent>()
            .map(|e| e.message())
            .filter(|m| !m.is_empty())
            .unwrap_or_else(|| WORKER_URL.to_string());
        fail(why);
    });
    worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
    CLIENT.with(|c| {
        if let Ok(mut c) = c.try_borrow_mut() {
            *c = Some(Client {
                worker,
                ready: false,
                busy: false,
                failed: None,
                sweep: Slot::default(),
                plan: Slot::default(),
                bench: Slot::default(),
                search: Slot::default(),
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
            fail("timeout".into());
        }
    })
    .forget();
}

/// Queues the newest job of `V`'s kind (`query`, `lang`), starting the worker on the first
/// job: sent at once when the worker is idle, else when the running job answers; any job of
/// the same kind still waiting is replaced.
pub fn submit<V: JobOutput>(sig: SimSignals<V>, query: String, lang: &str) {
    submit_text(sig, query, String::new(), lang);
}

/// [`submit`] with a text the job carries (the pasted benchmark of a benchmark job).
pub fn submit_text<V: JobOutput>(sig: SimSignals<V>, query: String, text: String, lang: &str) {
    V::register(sig);
    if sig.progress.get_untracked().is_some() {
        sig.progress.set(None);
    }
    start();
    let id = NEXT_ID.with(|n| {
        let mut n = n.borrow_mut();
        *n += 1;
        *n
    });
    let job = ServingJob {
        id,
        query,
        lang: lang.to_string(),
        kind: V::KIND,
        text,
    };
    let now = with_client(|c| {
        let slot = c.slot(V::KIND);
        slot.newest = id;
        slot.waiting = Some(job);
        pump(c);
        match &c.failed {
            Some(why) => Status::Failed(why.clone()),
            None if c.ready => Status::Running,
            None => Status::Loading,
        }
    });
    if let Some(now) = now {
        if sig.status.get_untracked() != now {
            sig.status.set(now);
        }
    }
}

/// Sends the waiting job when the worker is ready and idle; whether one was sent.
fn pump(c: &mut Client) -> bool {
    if !c.ready || c.busy {
        return false;
    }
    // The kind whose waiting job was queued first (ids rise with every job).
    let kind = KINDS
        .into_iter()
        .filter_map(|k| c.slot(k).waiting.as_ref().map(|j| (j.id, k)))
        .min()
        .map(|(_, k)| k);
    let Some((kind, job)) = kind.and_then(|k| c.slot(k).waiting.take().map(|j| (k, j))) else {
        return false;
    };
    let Ok(text) = serde_json::to_string(&job) else {
        return false;
    };
    c.busy = c.worker.post_message(&JsValue::from_str(&text)).is_ok();
    if c.busy {
        mark(SENT_MARK);
        mark(&kind_mark("sent", kind));
    }
    c.busy
}

/// Performance marks for `bench/sim_worker.mjs`: a job sent; the worker started and ready.
const SENT_MARK: &str = "llmcalc-sim-sent";
const START_MARK: &str = "llmcalc-sim-start";

/// A mark or measure of one job kind (`llmcalc-sim-sent-plan`, `llmcalc-sim-job-sweep`, …):
/// the bench times each kind on its own even when jobs of two kinds overlap.
fn kind_mark(what: &str, kind: JobKind) -> String {
    let k = match kind {
        JobKind::Sweep => "sweep",
        JobKind::Plan => "plan",
        JobKind::Bench => "bench",
        JobKind::Search => "search",
    };
    format!("llmcalc-sim-{what}-{k}")
}

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

fn on_reply(text: &str) {
    let reply = serde_json::from_str::<WorkerReply>(text).unwrap_or_else(|_| unreadable(text));
    let id = match &reply {
        WorkerReply::Ready => {
            measure("llmcalc-sim-ready", START_MARK);
            let sent = with_client(|c| {
                c.ready = true;
                pump(c)
            });
            // Every section's job waits until now; the first is on its way.
            let running = sent == Some(true);
            for s in sinks().statuses() {
                if s.get_untracked() == Status::Loading {
                    s.set(if running {
                        Status::Running
                    } else {
                        Status::Done
                    });
                }
            }
            return;
        }
        WorkerReply::Progress {
            id,
            done,
            total,
            stage,
        } => {
            // Still running: the job stays in flight; shown only for the newest job.
            let kind = with_client(|c| c.newest_kind(*id)).flatten();
            if let Some(p) = kind.and_then(|k| sinks().progress(k)) {
                p.set(Some(JobProgress {
                    stage: stage.clone(),
                    done: *done,
                    total: *total,
                }));
            }
            return;
        }
        WorkerReply::Done { id, .. }
        | WorkerReply::Planned { id, .. }
        | WorkerReply::Benched { id, .. }
        | WorkerReply::Searched { id, .. }
        | WorkerReply::Failed { id, .. } => *id,
    };
    let kind = with_client(|c| {
        c.busy = false;
        let kind = c.newest_kind(id);
        pump(c);
        kind
    })
    .flatten();
    let Some(kind) = kind else {
        // A stale reply: a newer job of its kind is on its way.
        return;
    };
    // Read in this task (the message's), handed to the page in a task of its own: the
    // section's tables and charts follow in that one, so neither task holds the main thread
    // for both (bench/sim_worker.mjs times the longest task during a sweep).
    set_timeout(
        move || hand_over(reply, id, kind),
        std::time::Duration::ZERO,
    );
}

/// Hands a worker's reply (already read) to its section's signals, and marks the job done,
/// unless a newer job of its kind was queued while the reply waited for this task (an input
/// may run in between): then that job's reply is the one to show, and its status stays.
fn hand_over(reply: WorkerReply, id: u64, kind: JobKind) {
    if with_client(|c| c.newest_kind(id)).flatten() != Some(kind) {
        return;
    }
    let sinks = sinks();
    match reply {
        WorkerReply::Done { view, .. } => {
            if let Some(s) = sinks.sweep {
                s.job_error.set(None);
                s.view.set(Some(*view));
            }
        }
        WorkerReply::Planned { plan, .. } => {
            if let Some(s) = sinks.plan {
                s.job_error.set(None);
                s.view.set(Some(*plan));
            }
        }
        WorkerReply::Benched { bench, .. } => {
            if let Some(s) = sinks.bench {
                s.job_error.set(None);
                s.view.set(Some(*bench));
            }
        }
        WorkerReply::Searched { view, .. } => {
            if let Some(s) = sinks.search {
                s.job_error.set(None);
                s.view.set(Some(*view));
            }
        }
        WorkerReply::Failed { message, .. } => {
            if let Some(e) = sinks.error(kind) {
                e.set(Some(message));
            }
        }
        WorkerReply::Ready | WorkerReply::Progress { .. } => {}
    }
    if let Some(p) = sinks.progress(kind) {
        p.set(None);
    }
    if let Some(s) = sinks.status(kind) {
        s.set(Status::Done);
    }
    // Sent to received, parsed and handed to the page (the charts draw in this task).
    measure("llmcalc-sim-job", SENT_MARK);
    measure(&kind_mark("job", kind), &kind_mark("sent", kind));
}

/// A reply the page cannot read (a number JSON cannot carry, say) fails its job, when its id
/// can be read, with a sentence.
fn unreadable(text: &str) -> WorkerReply {
    let id = serde_json::from_str::<serde_json::Value>(text)
        .ok()
        .and_then(|v| v.get("id").and_then(serde_json::Value::as_u64))
        .unwrap_or(0);
    WorkerReply::Failed {
        id,
        message: crate::core::base::tr(crate::core::base::Lang::En, "sv_bad_message").to_string(),
    }
}

fn with_client<T>(f: impl FnOnce(&mut Client) -> T) -> Option<T> {
    CLIENT.with(|c| c.try_borrow_mut().ok().and_then(|mut c| c.as_mut().map(f)))
}

fn fail(why: String) {
    with_client(|c| {
        c.worker.terminate();
        c.busy = false;
        c.ready = false;
        c.failed = Some(why.clone());
    });
    for s in sinks().statuses() {
        s.set(Status::Failed(why.clone()));
    }
}

fn js_text(v: &JsValue) -> String {
    v.as_string()
        .or_else(|| {
            v.dyn_ref::<js_sys::Error>()
                .map(|e| String::from(e.message()))
        })
        .unwrap_or_else(|| WORKER_URL.to_string())
}

/// The scenario reduced to what the simulator reads (model, GPUs, TP, precisions, lengths,
/// efficiencies, targets, the serving inputs): other edits do not rerun the sweep (the pasted
/// benchmark's job reads less still: `core::present::bench_scenario`).
pub fn sim_query(s: &Scenario) -> String {
    let d = Scenario::default();
    let mut views = d.views.clone();
    views.eff = s.views.eff;
    views.plan.ttft_ms = s.views.plan.ttft_ms;
    views.plan.tpot_ms = s.views.plan.tpot_ms;
    // The router is the planner's (its simulated fleet), not the section's sweep's.
    views.serving = ServingInputs {
        router: d.views.serving.router,
        ..s.views.serving
    };
    reduced_query(s, views, true)
}

/// The query of a worker job's scenario: `s`'s model, GPUs, precisions, MTP choice and
/// lengths, the given view inputs and, when `parallel`, its TP and interconnect; everything
/// else at its default, so that edits the job does not read send no new job.
pub fn reduced_query(s: &Scenario, views: ViewInputs, parallel: bool) -> String {
    let d = Scenario::default();
    let (tp, interconnect) = if parallel {
        (s.tp, s.interconnect)
    } else {
        (d.tp, d.interconnect)
    };
    Scenario {
        model: s.model.clone(),
        gpus: s.gpus.clone(),
        tp,
        interconnect,
        weight_dtype: s.weight_dtype,
        kv_dtype: s.kv_dtype,
        include_mtp: s.include_mtp,
        perf: PerfInputs {
            input_len: s.perf.input_len,
            output_len: s.perf.output_len,
            ..d.perf
        },
        views,
        ..d
    }
    .to_query()
}
