//! The app's shared state: the scenario (one signal), the report (one memo that keeps the last
//! good result), the language, the theme and the notices; plus the URL and browser glue. What
//! is not the browser's (the theme's cycle, the outcome's rule, the link's address, the link
//! notice) is `core::present::page`, tested natively.

use crate::core::base::CalcError;
use crate::core::base::{tr, Lang};
use crate::core::hardware::Catalog;
use crate::core::model::ModelDesc;
use crate::core::present::{
    evaluate_with_gpus, gpu_parts, link_query, model_of, page_url, read_query, replace_link_notice,
    same_scenario, GpuPart, ModelChoices, ModelPart,
};
pub use crate::core::present::{History, Outcome, Theme};
use crate::core::scenario::{ModelSource, Notice, Scenario};
use leptos::prelude::*;

/// The media query of the system's dark preference.
const DARK_QUERY: &str = "(prefers-color-scheme: dark)";

/// Whether the system prefers a dark palette now (false when it cannot be asked).
fn system_prefers_dark() -> bool {
    web_sys::window()
        .and_then(|w| w.match_media(DARK_QUERY).ok().flatten())
        .is_some_and(|m| m.matches())
}

/// Writes the resolved theme into `<html data-theme>`.
fn apply_theme_attr(t: Theme, system_dark: bool) {
    if let Some(el) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.document_element())
    {
        let _ = el.set_attribute("data-theme", t.resolved_attr(system_dark));
    }
}

/// Follows the system's dark preference: `system_dark` tracks it, and while the theme is
/// "Auto" `<html data-theme>` is switched with it. The listener lives as long as the owner.
fn watch_system_theme(theme: RwSignal<Theme>, system_dark: RwSignal<bool>) {
    use wasm_bindgen::closure::Closure;
    use wasm_bindgen::JsCast;
    let Some(mql) = web_sys::window().and_then(|w| w.match_media(DARK_QUERY).ok().flatten()) else {
        return;
    };
    let cb = Closure::<dyn FnMut(web_sys::Event)>::new(move |_| {
        let dark = system_prefers_dark();
        let _ = system_dark.try_set(dark);
        if let Some(t) = theme.try_get_untracked() {
            apply_theme_attr(t, dark);
        }
    });
    if mql
        .add_event_listener_with_callback("change", cb.as_ref().unchecked_ref())
        .is_ok()
    {
        crate::ui::keep_alive::keep_until_cleanup((mql, cb), |(mql, cb)| {
            let _ = mql.remove_event_listener_with_callback("change", cb.as_ref().unchecked_ref());
        });
    }
}

/// The model-level part of the report ([`ModelPart`]: weight bytes, KV per token, the
/// parameter derivation, the weights at FP8 and INT4) with what it was made from: the model's
/// source (read from it again only when it changes: an edit of the workload does not parse
/// the config again) and the model-level choices (TP, precisions, MTP).
struct ModelLevel {
    source: ModelSource,
    model: Result<ModelDesc, CalcError>,
    choices: ModelChoices,
    part: Result<ModelPart, CalcError>,
    /// Counts the parts made, so that a part kept for this one ([`GpuLevel`]) knows it.
    serial: u64,
}

/// The model-level part of the report, made again only when the model or a model-level
/// choice changes: an edit of the workload (context length, concurrency, GPUs, budget rule)
/// keeps it, and only the workload part is evaluated ([`evaluate_with_gpus`]).
fn model_level_memo(reported: Memo<Scenario>) -> Memo<ModelLevel> {
    Memo::new_owning(move |prev: Option<ModelLevel>| {
        reported.with(|s| {
            let choices = ModelChoices::of(s);
            let serial = prev.as_ref().map_or(0, |p| p.serial.wrapping_add(1));
            let model = match prev {
                Some(p) if p.source == s.model => {
                    if p.choices == choices {
                        return (p, false);
                    }
                    p.model
                }
                _ => model_of(&s.model),
            };
            let part = match &model {
                Ok(desc) => ModelPart::new(desc.clone(), choices),
                Err(e) => Err(e.clone()),
            };
            let next = ModelLevel {
                source: s.model.clone(),
                model,
                choices,
                part,
                serial,
            };
            (next, true)
        })
    })
}

/// The per-GPU parts of the report ([`GpuPart`]: the accelerator, its activation reserve,
/// what vLLM starts from), one per compared GPU, for the model-level part numbered `serial`.
struct GpuLevel {
    serial: u64,
    parts: Vec<GpuPart>,
}

/// The per-GPU parts of the report, kept while the model-level part and the GPU list stay:
/// an edit of the context length, the concurrency or the budget rule keeps them, and a GPU
/// added or removed keeps the parts of the others.
fn gpu_level_memo(reported: Memo<Scenario>, model: Memo<ModelLevel>) -> Memo<GpuLevel> {
    Memo::new_owning(move |prev: Option<GpuLevel>| {
        model.with(|m| {
            reported.with(|s| {
                let kept = match prev {
                    Some(p) if p.serial == m.serial => {
                        if p.parts.iter().map(GpuPart::choice).eq(s.gpus.iter()) {
                            return (p, false);
                        }
                        p.parts
                    }
                    _ => Vec::new(),
                };
                let parts = match &m.part {
                    Ok(part) => gpu_parts(part, &s.gpus, Catalog::builtin(), kept),
                    Err(_) => Vec::new(),
                };
                let next = GpuLevel {
                    serial: m.serial,
                    parts,
                };
                (next, true)
            })
        })
    })
}

/// The scenario the report reads: all of it but the serving simulator's inputs (`sv_*`, read
/// only by the worker's jobs), so that an edit of those neither evaluates the report again nor
/// wakes every section that reads it (nor their catch-up once the inputs settle). The
/// scenario is compared with the kept copy in place (lending the copy the serving inputs for
/// the comparison) and copied only when something the report reads changed.
fn reported_memo(scenario: RwSignal<Scenario>) -> Memo<Scenario> {
    Memo::new_owning(move |prev: Option<Scenario>| {
        scenario.with(|s| {
            if let Some(mut p) = prev {
                p.views.serving.clone_from(&s.views.serving);
                let same = p == *s;
                p.views.serving = Default::default();
                if same {
                    return (p, false);
                }
            }
            let mut next = s.clone();
            next.views.serving = Default::default();
            (next, true)
        })
    })
}

/// The language in effect: the scenario's choice, or the browser's. Every translated text on
/// the page follows it, so it is behind a [`Selector`]: an edit of anything else in the
/// scenario does not wake those hundreds of texts to check whether the language changed (a
/// memo of the scenario would mark each of them on every keystroke); only a change of
/// language does.
fn lang_memo(scenario: RwSignal<Scenario>, browser: Lang) -> Memo<Lang> {
    let choice = Selector::new(move || scenario.with(|s| s.lang).unwrap_or(browser));
    Memo::new(move |_| {
        Lang::ALL
            .iter()
            .copied()
            .find(|l| choice.selected(l))
            .unwrap_or(browser)
    })
}

/// Everything the components share, provided as context. `Copy`: signals and memos only.
#[derive(Debug, Clone, Copy)]
pub struct AppState {
    /// What the user chose.
    pub scenario: RwSignal<Scenario>,
    /// The scenario the report reads: all of it but the serving simulator's inputs
    /// ([`reported_memo`]); a view that reads no serving input derives its own from this one,
    /// so a serving edit does not wake it.
    pub reported: Memo<Scenario>,
    /// The evaluated scenario (the one memo of the app).
    pub outcome: Memo<Outcome>,
    /// The UI language in effect.
    pub lang: Memo<Lang>,
    /// Messages about the link (bad parameters) and sharing.
    pub notices: RwSignal<Vec<Notice>>,
    /// Colour theme as chosen (Auto, Light, Dark).
    pub theme: RwSignal<Theme>,
    /// False while the user is changing inputs, true [`SETTLE_MS`] after the last change:
    /// sections off screen catch up then (ui::in_view), not on every keystroke or drag step.
    pub settled: RwSignal<bool>,
    /// How many results sections (`ui::in_view::LazySection`, numbered in the order they are
    /// made) have caught up since the inputs settled: off screen, they catch up one per task
    /// (the first with the settling, each next one in a task of its own), so no single task
    /// does the work of every section out of sight.
    pub caught_up: RwSignal<u32>,
    /// How many results sections there are (each takes the next number when it is made).
    pub sections: StoredValue<u32>,
    /// Whether the system prefers dark (followed live, for "Auto").
    pub system_dark: RwSignal<bool>,
}

impl AppState {
    /// Builds the state from the page's URL.
    pub fn from_location() -> AppState {
        let (scenario, notices) = read_location();
        AppState::from_scenario(scenario, notices)
    }

    /// Builds the state from a scenario query (the late module, `ui::late_app`, starts from
    /// the page's current scenario, which the URL may not show yet).
    pub fn from_query(query: &str) -> AppState {
        let (scenario, notices) = read_query(query);
        AppState::from_scenario(scenario, notices)
    }

    fn from_scenario(scenario: Scenario, notices: Vec<Notice>) -> AppState {
        let browser = browser_lang();
        let scenario = RwSignal::new(scenario);
        let reported = reported_memo(scenario);
        let model = model_level_memo(reported);
        let gpus = gpu_level_memo(reported, model);
        let outcome = Memo::new_owning(move |prev: Option<Outcome>| {
            let res = model.with(|m| match &m.part {
                Ok(part) => {
                    Ok(gpus.with(|g| reported.with(|s| evaluate_with_gpus(s, part, &g.parts))))
                }
                Err(e) => Err(e.clone()),
            });
            Outcome::next(prev, res)
        });
        let lang = lang_memo(scenario, browser);
        let theme = RwSignal::new(stored_theme());
        let system_dark = RwSignal::new(system_prefers_dark());
        watch_system_theme(theme, system_dark);
        AppState {
            scenario,
            reported,
            outcome,
            lang,
            notices: RwSignal::new(notices),
            theme,
            system_dark,
            settled: RwSignal::new(true),
            caught_up: RwSignal::new(u32::MAX),
            sections: StoredValue::new(0),
        }
    }

    /// Whether the dark palette is in effect (reactive: the toggle and the system).
    pub fn is_dark(&self) -> bool {
        self.theme.get().is_dark(self.system_dark.get())
    }

    /// Applies an edit to the scenario and records it in the URL.
    pub fn edit(&self, history: History, f: impl FnOnce(&mut Scenario)) {
        self.unsettle();
        self.scenario.update(f);
        self.write_url(history);
    }

    /// Reloads the scenario from the URL (Back / Forward).
    pub fn reload_from_location(&self) {
        // A pending write would overwrite the entry Back/Forward just restored.
        cancel_pending_url();
        let (s, n) = read_location();
        self.unsettle();
        self.scenario.set(s);
        self.notices.set(n);
    }

    /// Replaces the scenario with the one a query describes, unless it is the same scenario
    /// (compared as canonical queries, so two modules that tell each other never loop). With a
    /// `history`, the change is recorded in the URL like an edit; without, only followed.
    /// Returns whether the scenario changed.
    pub fn apply_query(&self, query: &str, history: Option<History>) -> bool {
        let (next, _) = read_query(query);
        let same = self.scenario.with_untracked(|s| same_scenario(s, &next));
        if same {
            return false;
        }
        self.unsettle();
        self.scenario.set(next);
        if let Some(h) = history {
            self.write_url(h);
        }
        true
    }

    /// Marks the inputs as changing (before the scenario changes, so off-screen sections skip
    /// this change) and moves the moment they count as settled to [`SETTLE_MS`] from now.
    fn unsettle(&self) {
        if self.settled.get_untracked() {
            self.settled.set(false);
        }
        if self.caught_up.get_untracked() != 0 {
            self.caught_up.set(0);
        }
        // A burst of keystrokes only moves the deadline: the timer already waiting waits out
        // the rest when it fires (no timer and closure made and cancelled per keystroke).
        let due = now_ms() + f64::from(SETTLE_MS);
        let waiting = SETTLE.with(|s| {
            s.try_borrow_mut().is_ok_and(|mut s| {
                s.due = due;
                s.waiting && s.timer.is_some()
            })
        });
        if !waiting {
            self.wait_settle(SETTLE_MS);
        }
    }

    /// Waits `ms`, then marks the inputs settled and starts the catch-up, unless the deadline
    /// moved meanwhile (then it waits out the rest).
    fn wait_settle(self, ms: u32) {
        let timer = gloo::timers::callback::Timeout::new(ms, move || {
            let left = SETTLE.with(|s| s.try_borrow().map_or(0.0, |s| s.due - now_ms()));
            if left >= 1.0 {
                // `as` saturates; `left` is at most SETTLE_MS here.
                self.wait_settle(left.ceil() as u32);
                return;
            }
            let _ = self.settled.try_set(true);
            self.catch_up(1);
        });
        set_settle_timer(timer, true);
    }

    /// Lets the first `n` results sections catch up now, and the next one in a task of its own
    /// (a new change cancels the rest: `unsettle`).
    fn catch_up(self, n: u32) {
        let _ = self.caught_up.try_set(n);
        if self.sections.try_get_value().is_some_and(|count| n < count) {
            let timer = gloo::timers::callback::Timeout::new(0, move || {
                self.catch_up(n + 1);
            });
            set_settle_timer(timer, false);
        } else {
            set_settle_timer_done();
        }
    }

    /// The number of a new results section (0 for the first), in the order they are made.
    pub fn next_section(&self) -> u32 {
        self.sections
            .try_update_value(|n| {
                let i = *n;
                *n = n.saturating_add(1);
                i
            })
            .unwrap_or(0)
    }

    /// Translates a key in the current language (reactive).
    pub fn tr(&self, key: &str) -> &'static str {
        tr(self.lang.get(), key)
    }

    /// Records the scenario in the URL: a new entry at once for a discrete choice; for a
    /// continuous edit (typing, dragging) one replaced entry [`URL_SETTLE_MS`] after the last
    /// change, so a drag costs one `history.replaceState` instead of one per frame (each takes
    /// milliseconds, and Chrome ignores more than a few hundred in ten seconds). Leaving the
    /// page writes a pending change at once ([`flush_pending_url`]).
    fn write_url(&self, history: History) {
        if let Some(sink) = URL_SINK.with(std::cell::Cell::get) {
            sink(*self, history);
            return;
        }
        match history {
            History::Push => {
                // The entry being left keeps the edits made just before the choice.
                flush_pending_url();
                self.write_url_now(History::Push);
            }
            History::Replace => {
                // A write already waiting only has its deadline moved (it waits out the rest).
                let due = now_ms() + f64::from(URL_SETTLE_MS);
                let waiting = PENDING_URL.with(|p| {
                    p.try_borrow_mut().is_ok_and(|mut p| match p.as_mut() {
                        Some(w) => {
                            w.due = due;
                            true
                        }
                        None => false,
                    })
                });
                if !waiting {
                    self.wait_url(URL_SETTLE_MS, due);
                }
            }
        }
    }

    /// Writes the scenario to the URL (replacing the entry) in `ms`, or later if the deadline
    /// moves meanwhile.
    fn wait_url(self, ms: u32, due: f64) {
        let timer = gloo::timers::callback::Timeout::new(ms, move || {
            let left = PENDING_URL.with(|p| {
                p.try_borrow()
                    .ok()
                    .and_then(|p| p.as_ref().map(|w| w.due - now_ms()))
            });
            match left {
                // Flushed or cancelled meanwhile.
                None => {}
                Some(left) if left >= 1.0 => {
                    let due = left + now_ms();
                    // `as` saturates; `left` is at most URL_SETTLE_MS here.
                    self.wait_url(left.ceil() as u32, due);
                }
                Some(_) => {
                    PENDING_URL.with(|p| {
                        if let Ok(mut p) = p.try_borrow_mut() {
                            *p = None;
                        }
                    });
                    self.write_url_now(History::Replace);
                }
            }
        });
        PENDING_URL.with(|p| {
            if let Ok(mut p) = p.try_borrow_mut() {
                // The timer being replaced (if any) is the one running now: dropping it is a no-op.
                *p = Some(PendingUrl {
                    timer,
                    state: self,
                    due,
                });
            }
        });
    }

    fn write_url_now(&self, history: History) {
        let (query, notice) = self.scenario.with_untracked(|s| s.share_query());
        // The "config not in the link" notice, replaced only when it changes: an update with
        // the same notices would still re-render the notice bar after every edit.
        self.notices
            .maybe_update(|ns| replace_link_notice(ns, notice));
        let Some(window) = web_sys::window() else {
            return;
        };
        let path = window.location().pathname().unwrap_or_default();
        let url = page_url(&path, &query);
        if let Ok(h) = window.history() {
            let none = wasm_bindgen::JsValue::NULL;
            let _ = match history {
                History::Push => h.push_state_with_url(&none, "", Some(&url)),
                History::Replace => h.replace_state_with_url(&none, "", Some(&url)),
            };
        }
    }

    /// The current page address (for the copy-link button and the embed back-link).
    pub fn full_link(&self, drop_embed: bool) -> String {
        let query = self.scenario.with(|s| link_query(s, drop_embed));
        let path = web_sys::window()
            .and_then(|w| w.location().pathname().ok())
            .unwrap_or_default();
        page_url(&path, &query)
    }
}

/// How long a continuous edit waits before it is written to the URL, in milliseconds.
pub const URL_SETTLE_MS: u32 = 150;

/// How long after the last change the inputs count as settled, in milliseconds.
pub const SETTLE_MS: u32 = 250;

/// Where a module sends its edits instead of writing the URL itself ([`set_url_sink`]).
pub type UrlSink = fn(AppState, History);

thread_local! {
    /// Where edits go instead of the URL (the late module sends them to the page's shell,
    /// which owns the URL: `ui::late_app`); `None` in the shell itself.
    static URL_SINK: std::cell::Cell<Option<UrlSink>> =
        const { std::cell::Cell::new(None) };
    /// The timer that marks the inputs settled, then lets the sections catch up one by one.
    static SETTLE: std::cell::RefCell<Settle> = const {
        std::cell::RefCell::new(Settle { timer: None, waiting: false, due: 0.0 })
    };
    /// The URL write waiting for a continuous edit to settle.
    static PENDING_URL: std::cell::RefCell<Option<PendingUrl>> =
        const { std::cell::RefCell::new(None) };
}

/// The settling step waiting: the wait for the inputs to settle, or a section's catch-up.
struct Settle {
    timer: Option<gloo::timers::callback::Timeout>,
    /// Whether `timer` is the wait for the inputs to settle (not a catch-up step).
    waiting: bool,
    /// When the inputs count as settled ([`now_ms`]'s clock), [`SETTLE_MS`] after the last
    /// change.
    due: f64,
}

/// A URL write waiting for a continuous edit to settle: its timer, the state to write, and
/// when it is due ([`now_ms`]'s clock).
struct PendingUrl {
    timer: gloo::timers::callback::Timeout,
    state: AppState,
    due: f64,
}

/// Milliseconds on the clock the settling deadlines are kept in.
fn now_ms() -> f64 {
    js_sys::Date::now()
}

/// Sends every later edit to `sink` instead of the URL (called once by the late module).
pub fn set_url_sink(sink: UrlSink) {
    URL_SINK.with(|s| s.set(Some(sink)));
}

/// Makes `timer` the one settling step waiting (a step still waiting is cancelled);
/// `waiting`: it is the wait for the inputs to settle, not a catch-up step.
fn set_settle_timer(timer: gloo::timers::callback::Timeout, waiting: bool) {
    SETTLE.with(|s| {
        if let Ok(mut s) = s.try_borrow_mut() {
            s.waiting = waiting;
            // The old timer is the one running now (a step arms the next) or one that a new
            // change cancels.
            if let Some(old) = s.timer.replace(timer) {
                old.cancel();
            }
        }
    });
}

/// The last catch-up step has run: nothing is waiting.
fn set_settle_timer_done() {
    SETTLE.with(|s| {
        if let Ok(mut s) = s.try_borrow_mut() {
            s.waiting = false;
            s.timer = None;
        }
    });
}

/// Drops a pending URL write.
fn cancel_pending_url() {
    PENDING_URL.with(|p| {
        if let Ok(mut p) = p.try_borrow_mut() {
            if let Some(w) = p.take() {
                w.timer.cancel();
            }
        }
    });
}

/// Writes a pending URL change now (the page is being left or reloaded).
pub fn flush_pending_url() {
    let pending = PENDING_URL.with(|p| p.try_borrow_mut().ok().and_then(|mut p| p.take()));
    if let Some(w) = pending {
        w.timer.cancel();
        w.state.write_url_now(History::Replace);
    }
}

/// Where the theme choice is remembered.
const THEME_KEY: &str = "llmcalc-theme";

fn storage() -> Option<web_sys::Storage> {
    web_sys::window().and_then(|w| w.local_storage().ok().flatten())
}

/// The theme remembered from an earlier visit (Auto when none or storage is unavailable).
fn stored_theme() -> Theme {
    Theme::from_stored(
        storage()
            .and_then(|s| s.get_item(THEME_KEY).ok().flatten())
            .as_deref(),
    )
}

/// Remembers the theme choice (ignored when storage is unavailable, e.g. a sandboxed frame)
/// and applies it, resolved against the system's preference, to `<html data-theme>` (so the
/// attribute is always "light" or "dark", never empty).
pub fn store_theme(t: Theme) {
    if let Some(s) = storage() {
        let _ = s.set_item(THEME_KEY, t.attr());
    }
    apply_theme_attr(t, system_prefers_dark());
}

/// Reads and sanitises the scenario in the page's URL.
fn read_location() -> (Scenario, Vec<Notice>) {
    let search = web_sys::window()
        .and_then(|w| w.location().search().ok())
        .unwrap_or_default();
    read_query(&search)
}

/// The browser's preferred language, English when it is neither Korean nor English.
pub fn browser_lang() -> Lang {
    web_sys::window()
        .and_then(|w| w.navigator().language())
        .and_then(|l| Lang::from_code(&l))
        .unwrap_or_default()
}

/// The application state from context (provided by [`crate::ui::app::App`]).
pub fn use_app() -> AppState {
    match use_context::<AppState>() {
        Some(s) => s,
        None => AppState::from_location(),
    }
}
