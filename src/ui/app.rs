//! The page layout: header, input panels, results; or one widget in embed mode.

use crate::core::present::{LatePiece, Module, PageSection};
use crate::core::scenario::ViewMode;
use crate::ui::charts_panel::ChartsPanel;
use crate::ui::embed::EmbedView;
use crate::ui::export_bar::ExportBarPlaceholder;
use crate::ui::fit_table::FitTable;
use crate::ui::gpu_picker::GpuPicker;
use crate::ui::header::Header;
use crate::ui::in_view::LazySection;
use crate::ui::late::{LatePart, LateSlot};
use crate::ui::model_input::ModelInput;
use crate::ui::notice::NoticeBar;
use crate::ui::section_index::SectionIndex;
use crate::ui::state::{AppState, Outcome};
use crate::ui::summary_cards::SummaryCards;
use crate::ui::workload::Workload;
use leptos::ev;
use leptos::prelude::*;

pub use crate::ui::late::start_mark;

/// The whole app. Reads the scenario from the URL, provides [`AppState`] as context, keeps the
/// URL in step with Back/Forward, and applies the language and theme to `<html>`.
#[component]
pub fn App() -> impl IntoView {
    remove_prerendered();
    let state = AppState::from_location();
    // The first report is computed here, on its own, so a trace of the start tells it apart
    // from the page's mount (its memo would compute it on the first read in any case).
    state.outcome.with_untracked(|_| ());
    start_mark("llmcalc:report");
    provide_context(state);
    crate::ui::in_view::provide_printing();
    crate::ui::late::provide_late(state);

    // Back/Forward: the URL is the source of truth for the scenario.
    let handle = window_event_listener(ev::popstate, move |_| state.reload_from_location());
    on_cleanup(move || handle.remove());
    // Leaving or reloading the page: a continuous edit still waiting is written first.
    let leave = window_event_listener(ev::pagehide, |_| crate::ui::state::flush_pending_url());
    on_cleanup(move || leave.remove());

    // Talking to the outside world: <html lang> and <html data-theme>.
    Effect::new(move |_| {
        let lang = state.lang.get();
        let theme = state.theme.get();
        if let Some(el) = document().document_element() {
            let _ = el.set_attribute("lang", lang.code());
        }
        // Remembers the choice and writes the resolved "light"/"dark" into data-theme.
        crate::ui::state::store_theme(theme);
        document().set_title(crate::core::base::tr(lang, "app_title"));
    });

    // A memo, so the page is rebuilt only when the view mode itself changes (not on every
    // edit of the scenario, which would drop focus and dispose the inputs being typed in).
    let view_mode = Memo::new(move |_| state.scenario.with(|s| s.view));
    view! {
        <div class="app-root" data-testid="app-root">
            {move || match view_mode.get() {
                ViewMode::Embed(w) => view! { <EmbedView widget=w /> }.into_any(),
                ViewMode::Full => view! { <FullPage /> }.into_any(),
            }}
        </div>
    }
}

/// The hand-over from the prerendered first screen (`#prerendered` in index.html, written by
/// scripts/prerender.mjs and shown only for the default scenario, in English or, for a Korean
/// browser, in Korean from `<template id="prerendered-ko">`): it is removed here, in the mount's
/// task and right before the live page is attached, so no frame shows neither or both; so is the
/// template, should the gate not have run. An embedded widget's copy (public/loader.js puts it
/// in place of the page's) is `#prerendered` too. The live page's first screen is the same DOM
/// (e2e "prerender" and "fast path" check it).
fn remove_prerendered() {
    for id in ["prerendered", "prerendered-ko"] {
        if let Some(el) = document().get_element_by_id(id) {
            el.remove();
        }
    }
}

/// A slot for each section the late module draws, in page order (`core::present::sections`).
fn late_slots() -> impl IntoView {
    PageSection::ALL
        .iter()
        .filter(|s| s.module() == Module::Late)
        .map(|s| view! { <LateSlot name=*s /> })
        .collect_view()
}

/// The full calculator: header, inputs on the left, results on the right.
#[component]
fn FullPage() -> impl IntoView {
    let state = crate::ui::state::use_app();
    crate::ui::late::load_after_first_paint();
    // The answer first: what comes below the fit table (the charts, the late sections' slots)
    // is built two frames after the one that paints the first answer (ui::late::FILL_FRAMES
    // says why), so neither that frame nor a task posted from it has their building or the
    // charts' first drawing (a chart near the screen draws in the frame that lays it out).
    // They are below the fold, after everything the first screen shows; a slot made then is
    // announced to the late module like any new slot (ui::late::EVT_SLOT).
    // The steps after the answer: one chain of frames, shared by the input column's fill
    // (ui::gpu_picker, ui::model_input) and the part below the fold here.
    crate::ui::late::provide_steps();
    let below = crate::ui::late::after_below();
    let error = move || {
        state
            .outcome
            .with(|o: &Outcome| o.error.as_ref().map(|e| e.message(state.lang.get())))
    };
    view! {
        <Header />
        <NoticeBar />
        <main class="layout">
            <section class="inputs">
                <ModelInput />
                <GpuPicker />
                <Workload />
            </section>
            <section class="results" aria-labelledby="results-title">
                <h2 id="results-title" class="visually-hidden">{move || state.tr("ui_section_results")}</h2>
                <SectionIndex />
                {move || error().map(|m| view! {
                    <div class="calc-error" role="alert" data-testid="calc-error">
                        <p>{m}</p>
                        <p class="muted">{state.tr("model_error_kept")}</p>
                    </div>
                })}
                // The export bar comes with the late module (its file writers are not needed
                // for the first answer); the same buttons, disabled, keep its place.
                <LatePart name=LatePiece::Export><ExportBarPlaceholder /></LatePart>
                <SummaryCards />
                <FitTable />
                {move || below.get().then(|| view! {
                    // Below the fold: each section draws and recomputes only while on screen.
                    <LazySection><ChartsPanel /></LazySection>
                    // The analysis sections come with the late module, after the first answer
                    // (ui::late): each slot keeps the section's place until then. One per late
                    // section of the sections' list, in its order.
                    {late_slots()}
                })}
            </section>
        </main>
        <footer class="footer">
            <p>{move || state.tr("ui_privacy")}</p>
        </footer>
    }
}
