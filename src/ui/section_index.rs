//! The section index: a bar of buttons that jump to each part of the page (the inputs first)
//! and marks the section being read as the page scrolls.
//!
//! Jumping scrolls the heading into view and never touches the URL (no `#fragment`), so the
//! scenario in the link is unchanged by navigation and Back/Forward keep meaning "the previous
//! scenario". The bar is sticky (style/nav.css): on a wide screen above the results, on a
//! narrow one at the top of the page, where its "Inputs" button brings the model back. One
//! button per `PageSection`, in page order: the heading to jump to is its anchor.

use crate::core::present::PageSection;
use crate::ui::state::use_app;
use leptos::ev;
use leptos::prelude::*;

/// How far below the top of the window a heading counts as "being read" (the sticky bar's
/// height plus a margin), in CSS pixels.
const READING_LINE_PX: f64 = 96.0;

/// The index bar.
#[component]
pub fn SectionIndex() -> impl IntoView {
    let state = use_app();
    let current = RwSignal::new(0_usize);
    follow_scroll(current);
    let buttons = PageSection::ALL
        .iter()
        .enumerate()
        .map(|(i, section)| {
            let id = section.anchor();
            let key = section.label_key();
            view! {
                <li>
                    <button
                        type="button"
                        class="nav-link"
                        data-testid=format!("nav-{id}")
                        aria-current=move || (current.get() == i).then_some("true")
                        on:click=move |_| jump_to(id)
                    >
                        {move || state.tr(key)}
                    </button>
                </li>
            }
        })
        .collect_view();
    view! {
        <nav class="section-index" aria-label=move || state.tr("nav_label") data-testid="section-index">
            <ul>{buttons}</ul>
        </nav>
    }
}

/// Scrolls the heading `id` to the top of the window and moves the keyboard focus there.
fn jump_to(id: &str) {
    let Some(el) = document().get_element_by_id(id) else {
        return;
    };
    el.scroll_into_view();
    if let Ok(h) = wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlElement>(el) {
        let _ = h.set_attribute("tabindex", "-1");
        let _ = h.focus();
    }
}

/// Keeps `current` on the last section whose heading has passed the reading line; checked at
/// most once per frame while the page scrolls (a few rectangle reads).
fn follow_scroll(current: RwSignal<usize>) {
    let pending = StoredValue::new(false);
    let update = move || {
        pending.set_value(false);
        let now = reading_section();
        if current.get_untracked() != now {
            current.set(now);
        }
    };
    let handle = window_event_listener(ev::scroll, move |_| {
        if !pending.get_value() {
            pending.set_value(true);
            request_animation_frame(update);
        }
    });
    on_cleanup(move || handle.remove());
}

/// The index of the section being read: the last heading above the reading line.
fn reading_section() -> usize {
    let doc = document();
    let mut at = 0;
    for (i, section) in PageSection::ALL.iter().enumerate() {
        match doc.get_element_by_id(section.anchor()) {
            Some(el) if el.get_bounding_client_rect().top() <= READING_LINE_PX => at = i,
            Some(_) => break,
            None => {}
        }
    }
    at
}
