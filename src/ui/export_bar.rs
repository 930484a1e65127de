//! Export buttons: the results as CSV and JSON files, the page's link to the clipboard, and
//! printing (with `style/print.css`). Files are made in the page (Blob + object URL + a
//! temporary `<a download>`): nothing is sent anywhere.
//!
//! The bar comes with the late module (`ui::late::LatePart` "export"): the files'
//! writers are not needed for the first answer. Until it arrives the shell shows
//! [`ExportBarPlaceholder`], the same buttons disabled, in the same place.

use crate::core::present::Report;
use crate::core::present::{to_csv, to_json};
use crate::ui::state::use_app;
use leptos::prelude::*;
use std::time::Duration;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};

/// What the last copy-link attempt did.
#[derive(Debug, Clone, PartialEq, Eq)]
enum CopyStatus {
    /// Not tried yet.
    Idle,
    /// The link is on the clipboard.
    Copied,
    /// The clipboard was refused or is unavailable; the link is shown to copy by hand.
    Failed(String),
}

/// A file name from untrusted text: ASCII letters, digits, `.`, `_`, `-`; at most 60 chars.
fn file_stem(model: &str) -> String {
    let s: String = model
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '_' || c == '-' {
                c
            } else {
                '-'
            }
        })
        .take(60)
        .collect();
    let s = s.trim_matches(|c| c == '-' || c == '.').to_string();
    if s.is_empty() {
        "llm-serving".to_string()
    } else {
        format!("llm-serving-{s}")
    }
}

/// Offers `text` as a download named `name` with MIME type `mime`.
fn download(name: &str, mime: &str, text: &str) -> Result<(), JsValue> {
    let parts = js_sys::Array::of1(&JsValue::from_str(text));
    let opts = web_sys::BlobPropertyBag::new();
    opts.set_type(mime);
    let blob = web_sys::Blob::new_with_str_sequence_and_options(&parts, &opts)?;
    let url = web_sys::Url::create_object_url_with_blob(&blob)?;
    let doc = document();
    let a: web_sys::HtmlAnchorElement = doc.create_element("a")?.dyn_into()?;
    a.set_href(&url);
    a.set_download(name);
    a.set_hidden(true);
    if let Some(body) = doc.body() {
        body.append_child(&a)?;
    }
    a.click();
    a.remove();
    // Revoke later: the download may read the blob after click() returns.
    set_timeout(
        move || {
            let _ = web_sys::Url::revoke_object_url(&url);
        },
        Duration::from_secs(10),
    );
    Ok(())
}

/// The clipboard, when this page may use it (secure context and the API present).
fn clipboard() -> Option<web_sys::Clipboard> {
    let w = web_sys::window()?;
    if !w.is_secure_context() {
        return None;
    }
    let nav = w.navigator();
    let c = js_sys::Reflect::get(&nav, &JsValue::from_str("clipboard")).ok()?;
    if c.is_undefined() || c.is_null() {
        return None;
    }
    c.dyn_into::<web_sys::Clipboard>().ok()
}

/// Download CSV, download JSON, copy link and print, for the current report.
#[component]
pub fn ExportBar() -> impl IntoView {
    let state = use_app();
    let status = RwSignal::new(CopyStatus::Idle);
    let has_report = move || state.outcome.with(|o| o.report.is_some());
    let export = move |ext: &'static str| {
        state.outcome.with_untracked(|o| {
            if let Some(r) = o.report.as_ref() {
                let (text, mime) = file_of(r, ext);
                let name = format!("{}.{ext}", file_stem(&r.model.name));
                if let Err(e) = download(&name, mime, &text) {
                    leptos::logging::warn!("download failed: {e:?}");
                }
            }
        })
    };
    let copy = move |_| {
        let href = web_sys::window()
            .and_then(|w| w.location().href().ok())
            .unwrap_or_default();
        let Some(cb) = clipboard() else {
            status.set(CopyStatus::Failed(href));
            return;
        };
        status.set(CopyStatus::Idle);
        // A permission prompt that never resolves (headless, embedded) falls back too.
        let late_href = href.clone();
        set_timeout(
            move || {
                if status.get_untracked() == CopyStatus::Idle {
                    status.set(CopyStatus::Failed(late_href));
                }
            },
            Duration::from_secs(2),
        );
        let ok =
            Closure::<dyn FnMut(JsValue)>::new(move |_: JsValue| status.set(CopyStatus::Copied));
        let failed_href = href.clone();
        let err = Closure::<dyn FnMut(JsValue)>::new(move |_: JsValue| {
            status.set(CopyStatus::Failed(failed_href.clone()))
        });
        let _ = cb.write_text(&href).then2(&ok, &err);
        // One small pair of callbacks per click; JS owns them from here.
        ok.forget();
        err.forget();
    };
    let print = move |_| {
        if let Some(w) = web_sys::window() {
            let _ = w.print();
        }
    };
    view! {
        <nav class="export-bar" aria-label=move || state.tr("export_title") data-testid="export-bar">
            <button
                type="button"
                class="btn"
                data-testid="export-csv"
                disabled=move || !has_report()
                on:click=move |_| export("csv")
            >
                {move || state.tr("export_csv")}
            </button>
            <button
                type="button"
                class="btn"
                data-testid="export-json"
                disabled=move || !has_report()
                on:click=move |_| export("json")
            >
                {move || state.tr("export_json")}
            </button>
            <button type="button" class="btn" data-testid="copy-link" on:click=copy>
                {move || state.tr("ui_copy_link")}
            </button>
            <button type="button" class="btn" data-testid="print" on:click=print>
                {move || state.tr("export_print")}
            </button>
            <p class="export-status" role="status" aria-live="polite" data-testid="export-status">
                {move || match status.get() {
                    CopyStatus::Idle => None,
                    CopyStatus::Copied => Some(state.tr("ui_link_copied").into_any()),
                    CopyStatus::Failed(href) => Some(
                        view! {
                            <span>{state.tr("export_copy_failed")}</span>
                            " "
                            <input
                                type="text"
                                readonly=true
                                class="export-link"
                                aria-label=state.tr("ui_copy_link")
                                prop:value=href
                                on:focus=|ev| {
                                    if let Some(el) = ev
                                        .target()
                                        .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok())
                                    {
                                        el.select();
                                    }
                                }
                            />
                        }
                            .into_any(),
                    ),
                }}
            </p>
        </nav>
    }
}

/// The export bar's place until the late module brings it: the same four buttons, disabled, so
/// the results below do not move when it arrives; a status line (read by screen readers, hidden
/// like the bar's own empty one) says it is loading.
#[component]
pub fn ExportBarPlaceholder() -> impl IntoView {
    let state = use_app();
    let button = move |key: &'static str| {
        view! {
            <button type="button" class="btn" disabled=true>{move || state.tr(key)}</button>
        }
    };
    view! {
        <nav class="export-bar" aria-label=move || state.tr("export_title")>
            {button("export_csv")}
            {button("export_json")}
            {button("ui_copy_link")}
            {button("export_print")}
            <p class="visually-hidden" role="status">{move || state.tr("late_part_loading")}</p>
        </nav>
    }
}

/// The file text and MIME type for an extension (`csv` or `json`).
fn file_of(r: &Report, ext: &str) -> (String, &'static str) {
    match ext {
        "csv" => (to_csv(r), "text/csv;charset=utf-8"),
        _ => (to_json(r), "application/json"),
    }
}
