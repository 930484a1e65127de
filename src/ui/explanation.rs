//! The explanation beside a section: what it shows and why, in the chapter's terms, with the
//! live numbers of the current report (text from [`crate::core::present::explain_section`]).

use crate::core::present::{explain_section, Section};
use crate::ui::in_view::{gated_memo, live_when_seen};
use crate::ui::state::use_app;
use leptos::html::Div;
use leptos::prelude::*;

/// A short "why" note for one section, in the current language, recomputed when the report or
/// the language changes. Renders nothing until a report exists.
#[component]
pub fn Explanation(
    /// Which section this note explains.
    section: Section,
) -> impl IntoView {
    let state = use_app();
    let heading_id = format!("explain-{}-title", section.id());
    let labelled_by = heading_id.clone();
    // Rewritten only while the note itself is on the screen, or once the inputs have settled
    // (ui::in_view): prose out of sight is not re-laid out on every change.
    let node: NodeRef<Div> = NodeRef::new();
    let paragraphs = gated_memo(live_when_seen(node), move || {
        let lang = state.lang.get();
        state.outcome.with(|o| {
            o.report
                .as_ref()
                .map(|r| explain_section(section, r, lang))
                .unwrap_or_default()
        })
    });
    let count = Memo::new(move |_| paragraphs.with(Vec::len));
    view! {
        <aside
            class="explanation"
            data-testid=format!("explain-{}", section.id())
            aria-labelledby=labelled_by
        >
            <div node_ref=node>
                <h3 class="explanation-title" id=heading_id>{move || state.tr(section.title_key())}</h3>
                // One paragraph element per position, built when the count changes: a changed
                // number rewrites its paragraph's text in place.
                {move || {
                    (0..count.get())
                        .map(|i| {
                            view! { <p>{move || paragraphs.with(|p| p.get(i).cloned().unwrap_or_default())}</p> }
                        })
                        .collect_view()
                }}
            </div>
        </aside>
    }
}
