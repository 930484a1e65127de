//! Notices about the link: parameters that could not be used, configs too large to share.

use crate::ui::state::use_app;
use leptos::prelude::*;

/// The list of notices, each one sentence naming its parameter; dismissible.
#[component]
pub fn NoticeBar() -> impl IntoView {
    let state = use_app();
    let has = Memo::new(move |_| state.notices.with(|n| !n.is_empty()));
    view! {
        {move || has.get().then(|| view! {
            <div class="notices" role="status" data-testid="notices">
                <ul>
                    {move || {
                        let lang = state.lang.get();
                        state
                            .notices
                            .with(|ns| {
                                ns.iter()
                                    .map(|n| view! { <li data-testid="notice">{n.message(lang)}</li> })
                                    .collect_view()
                            })
                    }}
                </ul>
                <button
                    type="button"
                    class="btn btn-small"
                    data-testid="notice-dismiss"
                    on:click=move |_| state.notices.set(Vec::new())
                >
                    {move || state.tr("notice_dismiss")}
                </button>
            </div>
        })}
    }
}
