//! The shell's side of the late module ("first answer first").
//!
//! The page ships as two main-thread wasm modules. The shell (`src/main.rs`, this crate's
//! `ui::mount`) holds what the first answer needs: header, notices, inputs, section index,
//! summary cards, the fit table and the memory/KV charts. The late module
//! (`src/bin/sections.rs`, `ui::late_app`) holds the analysis sections (roofline, matmul,
//! performance, accuracy, planner, serving); `public/loader.js` imports it once the shell asks
//! ([`request_load`]): after the first answer is painted, or at once for an embedded widget
//! that lives in it. Trunk builds it as a `data-type="worker"` rust asset with
//! `data-bindgen-target="web"`: nothing is injected into the page and its files keep their
//! plain names (`sections.js`, `sections_bg.wasm`), which `sw.js` caches.
//!
//! The two modules share no memory; they talk with window events:
//! - the shell publishes its scenario as a canonical query (and the theme) when it changed
//!   ([`EVT_SCENARIO`], also kept in `window[SHARED_KEY]` for a module that starts later):
//!   never in the task of the input, but after the next frame while a late section is on or
//!   near the screen, and otherwise once the inputs settle (or a late section comes near or is
//!   touched); an unchanged query is not sent again, and the late module drops a query equal
//!   to the last it applied before reading it;
//! - an edit made in a late section comes back as [`EVT_EDIT`] (the query and whether it is a
//!   new history entry), and the shell applies it like its own edit (`AppState::apply_query`
//!   compares canonical queries, so an echo changes nothing);
//! - each place a late section goes is a [`LateSlot`] (`data-late-slot`): the late module
//!   mounts into every slot it finds, and into new ones when told ([`EVT_SLOT`]); a slot that
//!   goes away tells it to unmount ([`EVT_UNSLOT`]).
//!
//! Until the late module is there, each slot shows a placeholder of the section's height
//! (`core::present::PageSection::reserved_heights`, read by style/late.css) saying what is
//! loading; if it cannot load, a sentence says so and the first answer stays.

use crate::core::present::LatePiece;
use crate::ui::state::{use_app, AppState};
use leptos::prelude::*;
use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};

/// The shell asks `public/loader.js` to import the late module.
pub const EVT_LOAD: &str = "llmcalc:load-late";
/// The late module has started and mounted into the slots present.
pub const EVT_READY: &str = "llmcalc:late-ready";
/// The late module could not be loaded (`detail`: the reason).
pub const EVT_FAILED: &str = "llmcalc:late-failed";
/// The shell's scenario changed (`detail`: `{query, theme}`).
pub const EVT_SCENARIO: &str = "llmcalc:scenario";
/// An edit made in the late module (`detail`: `{query, push}`).
pub const EVT_EDIT: &str = "llmcalc:edit";
/// A new slot is in the page.
pub const EVT_SLOT: &str = "llmcalc:slot";
/// A slot left the page (`detail`: its id).
pub const EVT_UNSLOT: &str = "llmcalc:unslot";
/// A config fetched from the Hub by the late module's Hub fetch (`detail`: the text); the
/// shell's model panel applies it like a paste.
pub const EVT_HUB_CONFIG: &str = "llmcalc:hub-config";
/// Where the shell keeps its newest `{query, theme}` on `window`.
pub const SHARED_KEY: &str = "llmcalcScenario";

/// How far the late module has come.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LateStatus {
    /// Not asked for yet.
    Waiting,
    /// Being fetched and started.
    Loading,
    /// Started.
    Ready,
    /// Could not be loaded.
    Failed,
}

/// The late module's status, provided as context by [`provide_late`].
#[derive(Clone, Copy)]
pub struct Late(pub RwSignal<LateStatus>);

fn window_listen(name: &str, f: impl FnMut(web_sys::Event) + 'static) {
    let cb = Closure::<dyn FnMut(web_sys::Event)>::new(f);
    if let Some(w) = web_sys::window() {
        let _ = w.add_event_listener_with_callback(name, cb.as_ref().unchecked_ref());
    }
    // The listeners live as long as the page (one shell app per page).
    cb.forget();
}

/// Dispatches `name` on `window` with `detail`.
pub fn dispatch(name: &str, detail: &JsValue) {
    let init = web_sys::CustomEventInit::new();
    init.set_detail(detail);
    if let (Some(w), Ok(ev)) = (
        web_sys::window(),
        web_sys::CustomEvent::new_with_event_init_dict(name, &init),
    ) {
        let _ = w.dispatch_event(&ev);
    }
}

/// An event's `detail` (`undefined` for an event that is not a `CustomEvent`).
pub fn detail_of(ev: &web_sys::Event) -> JsValue {
    ev.dyn_ref::<web_sys::CustomEvent>()
        .map_or(JsValue::UNDEFINED, web_sys::CustomEvent::detail)
}

/// A property of an event's `detail` object.
pub fn detail_field(ev: &web_sys::Event, key: &str) -> JsValue {
    ev.dyn_ref::<web_sys::CustomEvent>()
        .map(|c| js_sys::Reflect::get(&c.detail(), &key.into()).unwrap_or(JsValue::UNDEFINED))
        .unwrap_or(JsValue::UNDEFINED)
}

/// Sets up the shell's side: the status, the scenario published to the late module, edits
/// from the late module applied. Call once, in the root component, after the state is provided.
pub fn provide_late(state: AppState) {
    let status = RwSignal::new(LateStatus::Waiting);
    provide_context(Late(status));
    window_listen(EVT_READY, move |_| {
        let _ = status.try_set(LateStatus::Ready);
        // It started from `window[SHARED_KEY]`: a change still waiting goes now.
        flush(state);
    });
    window_listen(EVT_FAILED, move |_| {
        let _ = status.try_set(LateStatus::Failed);
    });
    window_listen(EVT_EDIT, move |ev| {
        let Some(query) = detail_field(&ev, "query").as_string() else {
            return;
        };
        let push = detail_field(&ev, "push").as_bool().unwrap_or(false);
        let history = if push {
            crate::ui::state::History::Push
        } else {
            crate::ui::state::History::Replace
        };
        // The late module holds this scenario already: publishing it back is skipped unless
        // the shell reads it differently.
        PUBLISHED.with(|p| {
            if let Ok(mut p) = p.try_borrow_mut() {
                p.0.clone_from(&query);
            }
        });
        state.apply_query(&query, Some(history));
    });
    // Printing shows every section: with the newest scenario.
    window_listen("beforeprint", move |_| flush(state));
    // Talking to the late module: the canonical scenario and the theme. The first time at
    // once (`window[SHARED_KEY]` is what the late module starts from); then off the path from
    // an input to the next frame ([`publish_soon`]).
    Effect::new(move |ran: Option<()>| {
        state.scenario.track();
        state.theme.track();
        if ran.is_some() {
            publish_soon(state);
        } else {
            publish_now(state);
        }
    });
}

thread_local! {
    /// The `(query, theme)` the late module holds: the last published, or the query of the
    /// last edit it sent.
    static PUBLISHED: RefCell<(String, &'static str)> = const { RefCell::new((String::new(), "")) };
    /// The scenario or theme changed since the last publish.
    static DIRTY: Cell<bool> = const { Cell::new(false) };
    /// A publish after the next frame has been asked for.
    static FRAME_ASKED: Cell<bool> = const { Cell::new(false) };
    /// The publish waiting for the inputs to settle (no late section near the screen).
    static SETTLE_PUBLISH: RefCell<Option<gloo::timers::callback::Timeout>> =
        const { RefCell::new(None) };
    /// How many late slots are on or near the screen.
    static NEAR: Cell<u32> = const { Cell::new(0) };
}

/// Sends the scenario and theme to the late module now, unless it holds them already: kept in
/// `window[SHARED_KEY]` and dispatched as [`EVT_SCENARIO`].
fn publish_now(state: AppState) {
    DIRTY.set(false);
    cancel_settle_publish();
    let Some(query) = state.scenario.try_with_untracked(|s| s.to_query()) else {
        return;
    };
    let theme = state.theme.try_get_untracked().unwrap_or_default().attr();
    let fresh = PUBLISHED.with(|p| match p.try_borrow_mut() {
        Ok(p) if p.0 == query && p.1 == theme => false,
        Ok(mut p) => {
            p.0.clone_from(&query);
            p.1 = theme;
            true
        }
        Err(_) => true,
    });
    if !fresh {
        return;
    }
    let detail = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&detail, &"query".into(), &query.into());
    let _ = js_sys::Reflect::set(&detail, &"theme".into(), &theme.into());
    if let Some(w) = web_sys::window() {
        let _ = js_sys::Reflect::set(&w, &SHARED_KEY.into(), &detail);
    }
    dispatch(EVT_SCENARIO, &detail);
}

/// Publishes a change waiting, now (the late module starts, a late section is touched, the
/// page is printed).
fn flush(state: AppState) {
    if DIRTY.get() {
        publish_now(state);
    }
}

fn cancel_settle_publish() {
    SETTLE_PUBLISH.with(|t| {
        if let Some(old) = t.try_borrow_mut().ok().and_then(|mut t| t.take()) {
            old.cancel();
        }
    });
}

/// A change to publish. The late module's work (reading the query, its sections following)
/// never runs in the task of the input: with a late section on or near the screen, it goes in
/// a task after the next frame (changes within one frame coalesce); with none, once the inputs
/// settle (`state::SETTLE_MS` after the last change), or when a late section comes near, or is
/// touched, first.
fn publish_soon(state: AppState) {
    DIRTY.set(true);
    if NEAR.get() > 0 {
        publish_after_frame(state);
    } else {
        let timer = gloo::timers::callback::Timeout::new(crate::ui::state::SETTLE_MS, move || {
            SETTLE_PUBLISH.with(|t| {
                if let Ok(mut t) = t.try_borrow_mut() {
                    *t = None;
                }
            });
            flush(state);
        });
        SETTLE_PUBLISH.with(|t| {
            if let Some(old) = t.try_borrow_mut().ok().and_then(|mut t| t.replace(timer)) {
                old.cancel();
            }
        });
    }
}

/// Runs `f` inside the `n`th animation frame from now (the next one for 0 or 1), before that
/// frame is rendered: what `f` changes is painted in it.
pub fn in_frame(n: u32, f: impl FnOnce() + 'static) {
    request_animation_frame(move || {
        if n <= 1 {
            f();
        } else {
            in_frame(n - 1, f);
        }
    });
}

/// Runs `f` in a task queued from the next animation frame: after the frame that paints what
/// the current task builds.
pub fn after_next_frame(f: impl FnOnce() + 'static) {
    after_frames(1, f);
}

/// Runs `f` in a task queued from the `frames`th animation frame from now (0 and 1: after the
/// next frame; 2: after the frame that follows it; …), so every frame until then is rendered
/// before `f` runs.
pub fn after_frames(frames: u32, f: impl FnOnce() + 'static) {
    in_frame(frames, move || set_timeout(f, std::time::Duration::ZERO));
}

/// After the first answer's frame, the page is built in steps, each one frame after the last,
/// so the frame that paints the answer (and a task posted from it: a paint-timing probe's, a
/// first input) waits for none of them:
/// 1. the answer (in the mount's task): header, inputs, summary cards, fit table;
/// 2. the input column's fill ([`FILL_FRAMES`]): the GPU picker's catalog list (inside a box of
///    its final height) and the model panel's hidden modes;
/// 3. below the fold ([`BELOW_FRAMES`]): the charts panel and the late sections' slots.
///
/// A step is a task after the frame that paints the step before it, so even a slow step never
/// delays the one above it on screen.
pub const FILL_FRAMES: u32 = 2;
/// See [`FILL_FRAMES`].
pub const BELOW_FRAMES: u32 = 3;

/// The first screen's later steps as signals (false until the step's task, then true), made
/// once per page by [`provide_steps`]: one chain of frames for all the parts of a step, and each
/// step's mark set once.
#[derive(Clone, Copy)]
struct Steps {
    fill: ReadSignal<bool>,
    below: ReadSignal<bool>,
}

/// Starts the first screen's steps ([`FILL_FRAMES`], [`BELOW_FRAMES`]) as one chain of frames
/// and provides them to the components below: call once, in the component that builds the
/// first screen, before its children. The below-the-fold step follows the fill step's task by
/// `BELOW_FRAMES - FILL_FRAMES` frames. Each step sets its mark in the page's performance
/// timeline (`llmcalc:fill`, `llmcalc:below`; bench/start_trace.mjs prints them).
pub fn provide_steps() {
    let (fill, set_fill) = signal(false);
    let (below, set_below) = signal(false);
    after_frames(FILL_FRAMES, move || {
        start_mark("llmcalc:fill");
        let _ = set_fill.try_set(true);
        after_frames(BELOW_FRAMES - FILL_FRAMES, move || {
            start_mark("llmcalc:below");
            let _ = set_below.try_set(true);
        });
    });
    provide_context(Steps { fill, below });
}

/// False until the input column's fill step ([`FILL_FRAMES`]), then true: the page's step
/// ([`provide_steps`]), or a chain of its own for a component used outside the page.
pub fn after_fill() -> ReadSignal<bool> {
    use_context::<Steps>().map_or_else(|| true_after_frames(FILL_FRAMES), |s| s.fill)
}

/// False until the below-the-fold step ([`BELOW_FRAMES`]), then true: the page's step
/// ([`provide_steps`]), or a chain of its own outside the page.
pub fn after_below() -> ReadSignal<bool> {
    use_context::<Steps>().map_or_else(|| true_after_frames(BELOW_FRAMES), |s| s.below)
}

/// False until the task `frames` frames after now ([`after_frames`]), then true.
fn true_after_frames(frames: u32) -> ReadSignal<bool> {
    let (done, set_done) = signal(false);
    after_frames(frames, move || {
        let _ = set_done.try_set(true);
    });
    done
}

/// Publishes in a task queued from the next animation frame (after that frame is painted).
fn publish_after_frame(state: AppState) {
    if FRAME_ASKED.replace(true) {
        return;
    }
    after_next_frame(move || {
        FRAME_ASKED.set(false);
        flush(state);
    });
}

/// A slot came near the screen (`near`) or left it; `counted` is whether it is counted in
/// [`NEAR`]. A change waiting is published once the first comes near.
fn slot_near(state: AppState, counted: &AtomicBool, near: bool) {
    if counted.swap(near, Ordering::Relaxed) == near {
        return;
    }
    let n = NEAR.get();
    NEAR.set(if near {
        n.saturating_add(1)
    } else {
        n.saturating_sub(1)
    });
    if near && DIRTY.get() {
        publish_after_frame(state);
    }
}

/// Asks for the late module (once; later calls do nothing). `late` is the context, read where
/// the reactive owner is known (a callback runs outside it).
pub fn request_load(late: Option<Late>) {
    let Some(Late(status)) = late else {
        return;
    };
    if status.get_untracked() == LateStatus::Waiting {
        status.set(LateStatus::Loading);
        dispatch(EVT_LOAD, &JsValue::UNDEFINED);
    }
}

/// Asks for the late module once the first answer is on screen: when the report first exists,
/// after the frame that paints it (a task queued from the next animation frame).
pub fn load_after_first_paint() {
    let state = use_app();
    let late = use_context::<Late>();
    Effect::new(move |done: Option<bool>| {
        if done == Some(true) {
            return true;
        }
        if !state.outcome.with(|o| o.report.is_some()) {
            return false;
        }
        after_next_frame(move || request_load(late));
        true
    });
}

thread_local! {
    static NEXT_SLOT: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// A fresh slot id (`late-N`).
fn next_slot_id() -> String {
    NEXT_SLOT.with(|n| {
        let i = n.get();
        n.set(i.wrapping_add(1));
        format!("late-{i}")
    })
}

/// What a [`LateSlot`] and a [`LatePart`] open with: a fresh id, the element that the late
/// module is told about ([`EVT_SLOT`] once it is in the page, after `arrived`; [`EVT_UNSLOT`] with
/// the id when it goes, after `leaving`), and whether the late module failed to load.
struct Opening<F> {
    id: String,
    node: NodeRef<leptos::html::Div>,
    failed: F,
}

fn open_slot(
    status: Option<RwSignal<LateStatus>>,
    arrived: impl FnOnce() + 'static,
    leaving: impl FnOnce() + Send + Sync + 'static,
) -> Opening<impl Fn() -> bool + Copy + Send + Sync + 'static> {
    let id = next_slot_id();
    let node = NodeRef::<leptos::html::Div>::new();
    node.on_load(move |_| {
        arrived();
        // Only a running late module listens; when it starts, it mounts into every slot in the
        // page. Not asked for yet (the first screen's mount), there is nobody to tell.
        let asked = status.is_none_or(|s| s.try_get_untracked() != Some(LateStatus::Waiting));
        if asked {
            dispatch(EVT_SLOT, &JsValue::UNDEFINED);
        }
    });
    let gone = id.clone();
    on_cleanup(move || {
        leaving();
        dispatch(EVT_UNSLOT, &JsValue::from_str(&gone));
    });
    let failed = move || status.is_some_and(|s| s.get() == LateStatus::Failed);
    Opening { id, node, failed }
}

impl<F> Opening<F> {
    /// The slot's element (`class`, named for the late module by `piece`; the heights its
    /// placeholder reserves are rules of `style/late.css`) around `inner`. Touched (a press, or focus
    /// arriving by keyboard), it publishes a change still waiting, so the late part has it
    /// before its own edit is made from it.
    fn frame(
        &self,
        state: AppState,
        class: &'static str,
        piece: LatePiece,
        inner: impl IntoView + 'static,
    ) -> impl IntoView {
        view! {
            <div
                class=class
                data-late-slot=piece.name()
                data-late-id=self.id.clone()
                node_ref=self.node
                on:pointerdown=move |_| flush(state)
                on:focusin=move |_| flush(state)
            >
                {inner}
            </div>
        }
    }
}

/// Where one late section goes: a placeholder of its height until the late module mounts it
/// (`data-late-ready` then hides the placeholder, in the same task, so nothing moves), or a
/// sentence if the late module cannot load. The placeholder's heading has the section's anchor
/// id (`LatePiece::anchor`), so the section index jumps to a section and follows the scroll
/// before the late module is there; the late module takes it away in the task that mounts the
/// section, whose own heading has it (one element per id at any time).
#[component]
pub fn LateSlot(
    /// The section, or a widget's part (`core::present::sections`).
    #[prop(into)]
    name: LatePiece,
    /// Ask for the late module as soon as the slot is in the page (an embedded widget).
    #[prop(optional)]
    eager: bool,
) -> impl IntoView {
    let state = use_app();
    let late = use_context::<Late>();
    let counted = Arc::new(AtomicBool::new(false));
    let c = Arc::clone(&counted);
    let arrived = move || {
        if eager {
            request_load(late);
        }
    };
    let leaving = move || slot_near(state, &c, false);
    let slot = open_slot(late.map(|l| l.0), arrived, leaving);
    // Counted in NEAR while on or near the screen: the scenario reaches the late module after
    // each frame then, and only once the inputs settle while no late section can be seen.
    let near = crate::ui::in_view::in_view(slot.node);
    Effect::new(move |_| slot_near(state, &counted, near.get()));
    let failed = slot.failed;
    slot.frame(
        state,
        "late-slot",
        name,
        view! {
            <div class="late-placeholder panel" data-testid=format!("late-placeholder-{}", name.name())>
                <h2 class="late-placeholder-title" id=name.anchor()>
                    {move || state.tr(name.label_key())}
                </h2>
                <p
                    class="muted"
                    role="status"
                    data-testid=move || if failed() { "late-failed" } else { "late-loading" }
                >
                    {move || if failed() { state.tr("late_failed") } else { state.tr("late_loading") }}
                </p>
            </div>
            <div class="late-body"></div>
        },
    )
}

/// A part of one of the shell's own panels that comes with the late module (the Hub fetch, the
/// export bar, the custom accelerator form: code and texts the first answer does not need).
/// Until it is mounted, `children` stand in its place: a copy of the part's frame with its
/// controls disabled, of the same size, so nothing moves when it arrives (the late module mounts
/// the part and sets `data-late-ready` in one task, as for a [`LateSlot`]), saying that it loads.
/// If the late module cannot load, a sentence below says so and the rest of the page works.
/// Unlike a section's slot it does not make the scenario reach the late module after each frame
/// while on screen (the inputs are always on screen, and these parts do not follow the
/// scenario): the late module gets a change once the inputs settle, or at once when the part is
/// touched.
#[component]
pub fn LatePart(
    /// The part (`core::present::sections`).
    name: LatePiece,
    /// What stands in its place until it arrives.
    children: Children,
) -> impl IntoView {
    let state = use_app();
    let part = open_slot(use_context::<Late>().map(|l| l.0), || {}, || {});
    let failed = part.failed;
    part.frame(
        state,
        "late-part",
        name,
        view! {
            <div class="late-part-placeholder" aria-busy="true" data-testid=format!("late-part-{}", name.name())>
                {children()}
            </div>
            <div class="late-body"></div>
            {move || failed().then(|| view! {
                <p class="muted late-part-failed" role="status" data-testid="late-part-failed">
                    {state.tr("late_part_failed")}
                </p>
            })}
        },
    )
}

/// Adds a named mark to the page's performance timeline (`performance.mark`), for the trace of
/// a cold start (bench/start_trace.mjs); nothing when the browser has no `performance`.
pub fn start_mark(name: &str) {
    if let Some(p) = web_sys::window().and_then(|w| w.performance()) {
        let _ = p.mark(name);
    }
}
