//! Notices about the link: parameters that could not be used, configs too large to share.
//!
//! One line per parameter name (the core coalesces repeats into a count), and at most
//! [`SHOWN`] lines before a "show all" button, so a garbled link never pushes the answer
//! below the first screen.

use crate::core::base::fill;
use crate::ui::state::use_app;
use leptos::prelude::*;

/// How many notice lines show before "show all".
const SHOWN: usize = 5;

/// The list of notices, each one sentence naming its parameter; dismissible.
#[component]
pub fn NoticeBar() -> impl IntoView {
    let state = use_app();
    let has = Memo::new(move |_| state.notices.with(|n| !n.is_empty()));
    let all = RwSignal::new(false);
    view! {
        {move || has.get().then(|| view! {
            <div class="notices" role="status" data-testid="notices">
                <ul>
                    {move || {
                        let lang = state.lang.get();
                        let limit = if all.get() { usize::MAX } else { SHOWN };
                        state
                            .notices
                            .with(|ns| {
                                ns.iter()
                                    .take(limit)
                                    .map(|n| view! { <li data-testid="notice">{n.message(lang)}</li> })
                                    .collect_view()
                            })
                    }}
                </ul>
                <MoreButton all=all />
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

/// "Show all N" / "Show fewer", only when there are more than [`SHOWN`] notices.
#[component]
fn MoreButton(all: RwSignal<bool>) -> impl IntoView {
    let state = use_app();
    let total = Memo::new(move |_| state.notices.with(Vec::len));
    move || {
        (total.get() > SHOWN).then(|| {
            let label = move || {
                if all.get() {
                    state.tr("notice_show_fewer").to_string()
                } else {
                    fill(
                        state.tr("notice_show_all"),
                        &[("count", &total.get().to_string())],
                    )
                }
            };
            view! {
                <button
                    type="button"
                    class="btn btn-small"
                    data-testid="notice-more"
                    aria-expanded=move || all.get().to_string()
                    on:click=move |_| all.update(|a| *a = !*a)
                >
                    {label}
                </button>
            }
        })
    }
}
