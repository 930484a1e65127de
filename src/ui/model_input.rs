//! The model panel: a preset, a pasted / dropped / uploaded config (or one fetched from the
//! Hugging Face Hub on request: `ui::hub_fetch::HubFetch`, which comes with the late module),
//! or a parameter count.

use crate::core::base::fill;
use crate::core::base::CalcError;
use crate::core::base::Dtype;
use crate::core::model::parse_model_text;
use crate::core::present::LatePiece;
use crate::core::scenario::{limits, parse_count, ModelSource, Scenario};
use crate::ui::hub_fetch::HubFetchPlaceholder;
use crate::ui::late::{LatePart, EVT_HUB_CONFIG};
use crate::ui::model_details::ModelDetails;
use crate::ui::preset_select::PresetSelect;
use crate::ui::state::{use_app, AppState, History};
use gloo::file::callbacks::FileReader;
use gloo::file::File;
use leptos::prelude::*;
use std::cell::RefCell;
use wasm_bindgen::JsCast;

/// Largest file read from a drop or an upload (bytes).
const MAX_FILE_BYTES: u64 = 2 * 1024 * 1024;

thread_local! {
    /// The file being read (dropping a reader cancels it, so it is kept until the next one).
    static READER: RefCell<Option<FileReader>> = const { RefCell::new(None) };
}

/// How the model is described.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// A built-in preset.
    Preset,
    /// A pasted or dropped config.
    Paste,
    /// A parameter count and a precision.
    Quick,
}

impl Mode {
    /// Every mode, in display order.
    pub const ALL: &'static [Mode] = &[Mode::Preset, Mode::Paste, Mode::Quick];

    fn key(self) -> &'static str {
        match self {
            Mode::Preset => "model_mode_preset",
            Mode::Paste => "model_mode_paste",
            Mode::Quick => "model_mode_quick",
        }
    }

    fn testid(self) -> &'static str {
        match self {
            Mode::Preset => "model-mode-preset",
            Mode::Paste => "model-mode-paste",
            Mode::Quick => "model-mode-quick",
        }
    }

    fn of(m: &ModelSource) -> Mode {
        match m {
            ModelSource::Preset(_) => Mode::Preset,
            ModelSource::Pasted(_) => Mode::Paste,
            ModelSource::Quick { .. } => Mode::Quick,
        }
    }
}

/// What is wrong with the model input.
#[derive(Debug, Clone, PartialEq)]
enum InputError {
    /// The parser's error.
    Calc(CalcError),
    /// A message from the translation table.
    Key(&'static str),
}

/// The model panel. The pasted text is validated as it is typed; only a config that parses
/// becomes the scenario's model, so a broken paste shows its error in `model-error` while the
/// results of the last good model stay on screen.
#[component]
pub fn ModelInput() -> impl IntoView {
    let state = use_app();
    let mode = RwSignal::new(state.scenario.with_untracked(|s| Mode::of(&s.model)));
    let text = RwSignal::new(state.scenario.with_untracked(|s| match &s.model {
        ModelSource::Pasted(t) => t.clone(),
        _ => String::new(),
    }));
    let error: RwSignal<Option<InputError>> = RwSignal::new(None);
    // The paste zone and the quick fields are hidden in preset mode (the default): they are
    // built in the page's fill step (ui::late::provide_steps), at once when the page
    // opens in their mode.
    let hidden_modes = if mode.get_untracked() == Mode::Preset {
        crate::ui::late::after_fill()
    } else {
        signal(true).0
    };

    view! {
        <section class="panel model-panel" aria-labelledby="model-title">
            <h2 id="model-title">{move || state.tr("ui_section_model")}</h2>
            <ModeSwitch mode=mode text=text error=error />

            <div class="field" class:hidden=move || mode.get() != Mode::Preset>
                <PresetSelect id="model-preset" on_pick=move |()| error.set(None) />
            </div>

            {move || hidden_modes.get().then(|| view! {
                <PasteZone mode=mode text=text error=error />
                <QuickFields mode=mode />
            })}

            <ModelError error=error />

            <ModelDetails />
        </section>
    }
}

/// The quick mode's parameter count and precision: the scenario's when it is in quick mode,
/// else 7B in bf16.
fn quick_of(state: AppState) -> (u64, Dtype) {
    state.scenario.with(|s| match s.model {
        ModelSource::Quick { params, dtype } => (params, dtype),
        _ => (7_000_000_000, Dtype::Bf16),
    })
}

/// The segmented choice of how the model is described; choosing a mode applies what it holds.
#[component]
fn ModeSwitch(
    /// The mode shown.
    mode: RwSignal<Mode>,
    /// The text pasted (kept across modes).
    text: RwSignal<String>,
    /// What is wrong with the input (cleared on a mode change).
    error: RwSignal<Option<InputError>>,
) -> impl IntoView {
    let state = use_app();
    let choose_mode = move |m: Mode| {
        mode.set(m);
        error.set(None);
        match m {
            Mode::Preset => {
                if !matches!(state.scenario.get_untracked().model, ModelSource::Preset(_)) {
                    state.edit(History::Push, |s| s.model = Scenario::default().model);
                }
            }
            Mode::Paste => {
                let t = text.get_untracked();
                if !t.trim().is_empty() {
                    apply_text(state, text, error, t);
                }
            }
            Mode::Quick => {
                let (params, dtype) = quick_of(state);
                state.edit(History::Push, |s| {
                    s.model = ModelSource::Quick { params, dtype }
                });
            }
        }
    };
    view! {
        <div class="segmented" role="radiogroup" aria-label=move || state.tr("model_mode_label")>
            {Mode::ALL
                .iter()
                .map(|m| {
                    let m = *m;
                    view! {
                        <button
                            type="button"
                            role="radio"
                            class="seg"
                            data-testid=m.testid()
                            aria-checked=move || (mode.get() == m).to_string()
                            on:click=move |_| choose_mode(m)
                        >
                            {move || state.tr(m.key())}
                        </button>
                    }
                })
                .collect_view()}
        </div>
    }
}

/// The paste mode: a text area that is also a drop zone, and an upload button.
#[component]
fn PasteZone(
    /// The mode shown (the zone is hidden outside paste mode; a drop switches to it).
    mode: RwSignal<Mode>,
    /// The text pasted.
    text: RwSignal<String>,
    /// What is wrong with the input.
    error: RwSignal<Option<InputError>>,
) -> impl IntoView {
    let state = use_app();
    let dragging = RwSignal::new(false);
    // A config fetched by the Hub fetch (in the late module): validated and applied like a paste.
    let hub = window_event_listener_untyped(EVT_HUB_CONFIG, move |ev| {
        if let Some(t) = crate::ui::late::detail_of(&ev).as_string() {
            apply_text(state, text, error, t);
        }
    });
    on_cleanup(move || hub.remove());
    let on_paste_input = move |ev: leptos::ev::Event| {
        apply_text(state, text, error, event_target_value(&ev));
    };
    let on_drop = move |ev: leptos::ev::DragEvent| {
        ev.prevent_default();
        dragging.set(false);
        let file = ev
            .data_transfer()
            .and_then(|dt| dt.files())
            .and_then(|fl| fl.get(0));
        if let Some(f) = file {
            mode.set(Mode::Paste);
            read_file(state, text, error, f);
        }
    };
    let on_upload = move |ev: leptos::ev::Event| {
        let file = ev
            .target()
            .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok())
            .and_then(|i| i.files())
            .and_then(|fl| fl.get(0));
        if let Some(f) = file {
            read_file(state, text, error, f);
        }
    };
    view! {
        <div
            class="field dropzone"
            class:hidden=move || mode.get() != Mode::Paste
            class:dragging=move || dragging.get()
            on:dragover=move |ev: leptos::ev::DragEvent| {
                ev.prevent_default();
                dragging.set(true);
            }
            on:dragleave=move |_| dragging.set(false)
            on:drop=on_drop
        >
            <LatePart name=LatePiece::Hub><HubFetchPlaceholder /></LatePart>
            <label for="model-paste">{move || state.tr("model_paste_label")}</label>
            <textarea
                id="model-paste"
                data-testid="model-paste"
                rows="10"
                spellcheck="false"
                autocomplete="off"
                placeholder=move || state.tr("model_paste_placeholder")
                aria-invalid=move || error.with(|e| e.is_some()).to_string()
                aria-describedby="model-error"
                prop:value=move || text.get()
                on:input=on_paste_input
            ></textarea>
            <div class="row">
                <label class="btn btn-small file-btn">
                    {move || state.tr("model_upload")}
                    <input
                        type="file"
                        accept=".json,application/json"
                        data-testid="model-upload"
                        class="visually-hidden"
                        on:change=on_upload
                    />
                </label>
                <span class="muted">{move || state.tr("model_drop_hint")}</span>
            </div>
        </div>
    }
}

/// The quick mode: a typed parameter count and a precision.
#[component]
fn QuickFields(
    /// The mode shown (the fields are hidden outside quick mode).
    mode: RwSignal<Mode>,
) -> impl IntoView {
    let state = use_app();
    // A memo: an edit of anything else in the scenario does not write the fields' values
    // (the same text) nor poll the precision's nine options.
    let quick = Memo::new(move |_| quick_of(state));
    let quick_raw: RwSignal<Option<String>> = RwSignal::new(None);
    let quick_err: RwSignal<Option<&'static str>> = RwSignal::new(None);
    let on_quick_params = move |ev: leptos::ev::Event| {
        let v = event_target_value(&ev);
        quick_raw.set(Some(v.clone()));
        match parse_count(&v) {
            Some(n) if n >= limits::PARAMS.0 && n <= limits::PARAMS.1 => {
                quick_err.set(None);
                let dtype = quick.get_untracked().1;
                state.edit(History::Replace, |s| {
                    s.model = ModelSource::Quick { params: n, dtype }
                });
            }
            Some(_) => quick_err.set(Some("err_range")),
            None => quick_err.set(Some("err_not_a_number")),
        }
    };
    let on_quick_dtype = move |ev: leptos::ev::Event| {
        if let Ok(d) = Dtype::parse(&event_target_value(&ev)) {
            let params = quick.get_untracked().0;
            state.edit(History::Replace, |s| {
                s.model = ModelSource::Quick { params, dtype: d }
            });
        }
    };
    view! {
        <div class="field-row" class:hidden=move || mode.get() != Mode::Quick>
            <div class="field">
                <label for="quick-params">{move || state.tr("model_quick_params")}</label>
                <input
                    id="quick-params"
                    data-testid="quick-params"
                    type="text"
                    inputmode="decimal"
                    autocomplete="off"
                    placeholder=move || state.tr("model_quick_params_hint")
                    prop:value=move || quick_raw.get().unwrap_or_else(|| quick.get().0.to_string())
                    on:input=on_quick_params
                    on:change=move |_| {
                        if quick_err.try_get_untracked() == Some(None) {
                            let _ = quick_raw.try_set(None);
                        }
                    }
                />
                {move || quick_err.get().map(|k| view! {
                    <p class="field-error" role="alert" data-testid="quick-params-error">
                        {fill(
                            state.tr(k),
                            &[
                                ("min", &crate::core::base::group(limits::PARAMS.0)),
                                ("max", &crate::core::base::group(limits::PARAMS.1)),
                            ],
                        )}
                    </p>
                })}
            </div>
            <div class="field">
                <label for="quick-dtype">{move || state.tr("model_quick_dtype")}</label>
                <select
                    id="quick-dtype"
                    data-testid="quick-dtype"
                    prop:value=move || quick.get().1.id()
                    on:change=on_quick_dtype
                >
                    {Dtype::ALL
                        .iter()
                        .map(|d| {
                            let d = *d;
                            view! {
                                <option value=d.id() selected=move || quick.with(|q| q.1 == d)>
                                    {d.id()}
                                </option>
                            }
                        })
                        .collect_view()}
                </select>
            </div>
        </div>
    }
}

/// The input's error, in the page's language, with a note that the last good model is kept.
#[component]
fn ModelError(
    /// What is wrong with the input, if anything.
    error: RwSignal<Option<InputError>>,
) -> impl IntoView {
    let state = use_app();
    let error_text = move || {
        let lang = state.lang.get();
        error.with(|e| {
            e.as_ref().map(|e| match e {
                InputError::Calc(c) => c.message(lang),
                InputError::Key(k) => crate::core::base::tr(lang, k).to_string(),
            })
        })
    };
    view! {
        {move || error_text().map(|m| view! {
            <div class="model-error" role="alert">
                <p id="model-error" data-testid="model-error">{m}</p>
                <p class="muted">{state.tr("model_error_kept")}</p>
            </div>
        })}
    }
}

/// Validates pasted text and, when it parses, makes it the scenario's model.
fn apply_text(
    state: AppState,
    text: RwSignal<String>,
    error: RwSignal<Option<InputError>>,
    t: String,
) {
    let parsed = parse_model_text(&t);
    match parsed {
        Ok(_) => {
            error.set(None);
            let history = if state
                .scenario
                .with_untracked(|s| matches!(s.model, ModelSource::Pasted(_)))
            {
                History::Replace
            } else {
                History::Push
            };
            state.edit(history, |s| s.model = ModelSource::Pasted(t.clone()));
        }
        Err(e) => error.set(Some(InputError::Calc(e))),
    }
    text.set(t);
}

/// Reads a dropped or uploaded file as text, then validates it like a paste.
fn read_file(
    state: AppState,
    text: RwSignal<String>,
    error: RwSignal<Option<InputError>>,
    f: web_sys::File,
) {
    let file = File::from(f);
    if file.size() > MAX_FILE_BYTES {
        error.set(Some(InputError::Key("model_file_too_large")));
        return;
    }
    let reader = gloo::file::callbacks::read_as_text(&file, move |res| match res {
        Ok(t) => apply_text(state, text, error, t),
        Err(_) => error.set(Some(InputError::Key("model_file_unreadable"))),
    });
    READER.with(|r| {
        if let Ok(mut slot) = r.try_borrow_mut() {
            *slot = Some(reader);
        }
    });
}
