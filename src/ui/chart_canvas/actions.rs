//! `ChartActions`: the PNG and SVG export buttons, and the download they start.

use super::any_chart::AnyChart;
use crate::charts::{Labels, Theme};
use crate::core::base::{tr, Lang};
use leptos::html::Canvas;
use leptos::prelude::*;
use wasm_bindgen::{JsCast, JsValue};

/// The PNG and SVG export buttons.
#[component]
pub(super) fn ChartActions(
    /// The canvas (the PNG is its pixels).
    canvas_ref: NodeRef<Canvas>,
    /// The chart (the SVG is drawn again from it).
    data: Memo<AnyChart>,
    /// The chart's CSS width (the SVG's, at least 320).
    width: RwSignal<u32>,
    /// Whether the dark theme is in effect.
    dark: Signal<bool>,
    /// The UI language.
    lang: Signal<Lang>,
    /// Set to the message when the SVG cannot be drawn.
    error: RwSignal<Option<String>>,
    /// The chart's `data-testid`, also the exported file's name.
    test_id: &'static str,
) -> impl IntoView {
    let export_png = move |_| {
        let Some(canvas) = canvas_ref.get_untracked() else {
            return;
        };
        if let Ok(url) = canvas.to_data_url() {
            let _ = download(&url, &format!("{test_id}.png"));
        }
    };
    let export_svg = move |_| {
        let w = width.get_untracked().max(320);
        let theme = Theme::for_dark(dark.get_untracked());
        let labels = Labels::new(lang.get_untracked());
        let svg = data.with_untracked(|d| d.0.svg(&theme, &labels, w));
        match svg {
            Ok(svg) => {
                if let Ok(url) = svg_blob_url(&svg) {
                    let _ = download(&url, &format!("{test_id}.svg"));
                    gloo::timers::callback::Timeout::new(5_000, move || {
                        let _ = web_sys::Url::revoke_object_url(&url);
                    })
                    .forget();
                }
            }
            Err(e) => error.set(Some(e.message(&labels))),
        }
    };
    let t = move |key: &'static str| move || tr(lang.get(), key);
    view! {
        <div class="chart-actions">
            <button type="button" class="chart-export" on:click=export_png data-testid=format!("{test_id}-png")>
                {t("chart_export_png")}
            </button>
            <button type="button" class="chart-export" on:click=export_svg data-testid=format!("{test_id}-svg")>
                {t("chart_export_svg")}
            </button>
        </div>
    }
}

/// Starts a download of `href` as `file_name`.
fn download(href: &str, file_name: &str) -> Result<(), JsValue> {
    let doc = web_sys::window()
        .and_then(|w| w.document())
        .ok_or_else(|| JsValue::from_str("no document"))?;
    let a: web_sys::HtmlAnchorElement = doc.create_element("a")?.dyn_into()?;
    a.set_href(href);
    a.set_download(file_name);
    a.click();
    Ok(())
}

fn svg_blob_url(svg: &str) -> Result<String, JsValue> {
    let parts = js_sys::Array::of1(&JsValue::from_str(svg));
    let opts = web_sys::BlobPropertyBag::new();
    opts.set_type("image/svg+xml");
    let blob = web_sys::Blob::new_with_str_sequence_and_options(&parts, &opts)?;
    web_sys::Url::create_object_url_with_blob(&blob)
}
