//! The page header: title, language toggle, theme toggle (the copy-link button is in the
//! export bar).

use crate::core::base::Lang;
use crate::ui::state::{use_app, History};
use leptos::prelude::*;

/// Title, tagline and the global toggles.
#[component]
pub fn Header() -> impl IntoView {
    let state = use_app();
    let toggle_lang = move |_| {
        let next = match state.lang.get_untracked() {
            Lang::En => Lang::Ko,
            Lang::Ko => Lang::En,
        };
        state.edit(History::Replace, |s| s.lang = Some(next));
    };
    let toggle_theme = move |_| state.theme.update(|t| *t = t.next());
    view! {
        <header class="header">
            <div class="header-title">
                <h1>{move || state.tr("app_title")}</h1>
                <p class="tagline">{move || state.tr("app_tagline")}</p>
            </div>
            <div class="header-actions">
                <button
                    type="button"
                    class="btn"
                    data-testid="lang-toggle"
                    aria-label=move || state.tr("ui_lang_toggle_label")
                    on:click=toggle_lang
                >
                    {move || state.tr("ui_lang_toggle")}
                </button>
                <button
                    type="button"
                    class="btn"
                    data-testid="theme-toggle"
                    title=move || state.tr("ui_theme_toggle")
                    on:click=toggle_theme
                >
                    {move || state.tr(state.theme.get().key())}
                </button>
            </div>
        </header>
    }
}
