//! `ChartCanvas`: the one component that owns all canvas glue for every chart.
//!
//! - The canvas is reached through a `NodeRef` (no string ids), so two charts never race.
//! - The backing store is the CSS size × `devicePixelRatio` and the context is scaled by the
//!   same factor; plotters draws in CSS pixels through [`HiDpiCanvas`], which reports the CSS
//!   size (plotters-canvas alone ignores the ratio, plotters#164) and measures text with
//!   `measureText` instead of a DOM span per label.
//! - A `ResizeObserver` follows the container's width; the height comes from the chart
//!   ([`Chart::height_for_width`]).
//! - One `Effect` redraws when the prepared data, the width, the theme or the language
//!   changes. A drawing error replaces the chart with a sentence; nothing panics.
//! - Hovering shows the tooltip of the [`HitMap`] region under the pointer.
//! - A `<details>` data table is the accessible alternative; PNG (`toDataURL`) and SVG (the same
//!   drawing code on plotters' SVG backend) export buttons download the chart.

mod actions;
mod any_chart;
mod table;
mod tooltip;

use crate::charts::canvas::labels_in;
use crate::charts::{Chart, HitMap, Theme};
use crate::core::base::Lang;
use crate::ui::in_view::{in_view, on_screen};
use crate::ui::keep_alive::keep_observer;
use actions::ChartActions;
use any_chart::AnyChart;
use leptos::html::{Canvas, Div};
use leptos::prelude::*;
use table::ChartTable;
use tooltip::{tooltip_position, ChartTooltip};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use web_sys::HtmlCanvasElement;

pub use crate::charts::canvas::{rehearse, HiDpiCanvas};

/// A chart on a canvas, with hover tooltips, a data table and PNG/SVG export.
///
/// Place it where the chart goes; it fills its container's width and takes the height the
/// chart asks for. `data` should come from a `Memo` so the chart redraws only when the
/// prepared data really changes.
#[component]
pub fn ChartCanvas<C>(
    /// The prepared chart data (`MemoryBars`, `KvSeries`, `BatchSeries`, `RooflineData`,
    /// `LatencyThroughput`, `CostBars`).
    #[prop(into)]
    data: Signal<C>,
    /// The UI language: labels, tooltips and the table follow it.
    #[prop(into)]
    lang: Signal<Lang>,
    /// Whether the dark theme is in effect (after resolving "follow the system").
    #[prop(into)]
    dark: Signal<bool>,
    /// Accessible name of the chart, already translated (also the table's caption).
    #[prop(into)]
    title: Signal<String>,
    /// `data-testid` of the chart's wrapper (`chart-memory`, `chart-kv`, `chart-batch`,
    /// `chart-roofline`, `chart-latency`, `chart-cost`); also the exported file's name.
    test_id: &'static str,
    /// Called with the id of the hover region clicked (a point's name), when given.
    #[prop(optional, into)]
    on_pick: Option<Callback<String>>,
    /// While true, the chart is not drawn and only keeps its place, as off screen: a section
    /// can draw its charts in tasks of their own (`ui::serving_view`'s first result).
    #[prop(optional, into)]
    hold: Option<Signal<bool>>,
    /// Drawn from the first frame, without waiting to be seen: an embedded widget's chart,
    /// which is the widget (the embeds' first answer drew it already: no blank frame at the
    /// hand-over).
    #[prop(optional)]
    eager: bool,
) -> impl IntoView
where
    C: Chart + Send + Sync + 'static,
{
    // The only typed step: the data, shared and type-erased; the rest is compiled once.
    let data = Memo::new(move |_| AnyChart(std::sync::Arc::new(data.get())));
    chart_canvas(data, lang, dark, title, test_id, on_pick, (hold, eager))
}

fn chart_canvas(
    data: Memo<AnyChart>,
    lang: Signal<Lang>,
    dark: Signal<bool>,
    title: Signal<String>,
    test_id: &'static str,
    on_pick: Option<Callback<String>>,
    (hold, eager): (Option<Signal<bool>>, bool),
) -> AnyView {
    let canvas_ref: NodeRef<Canvas> = NodeRef::new();
    let wrap_ref: NodeRef<Div> = NodeRef::new();
    // CSS width of the container, kept by the ResizeObserver (outside world → signal).
    let width = RwSignal::new(0u32);
    let hits = StoredValue::new(HitMap::default());
    let error = RwSignal::new(None::<String>);
    // The tooltip's CSS position and its lines.
    let tooltip = RwSignal::new(None::<(String, Vec<String>)>);

    wrap_ref.on_load(move |el| {
        // An embedded widget's chart is the widget: its width is read at once (one layout of a
        // small page), so it is drawn before the first frame is laid out and nothing below it
        // moves (after a ResizeObserver's first report, the page would be laid out twice).
        if eager {
            let w = el.get_bounding_client_rect().width().round().max(0.0) as u32;
            if w > 0 {
                width.set(w);
            }
        }
        observe_width(&el, width);
    });

    // The one redraw: data, width, theme and language, only while the chart is on (or near)
    // the screen. Off screen the effect listens to nothing but its visibility, so the chart's
    // data memo is not even recomputed; scrolling back in draws the newest data once. What
    // was drawn last is remembered, so scrolling in and out redraws nothing.
    // On screen: drawn with the change, in the same frame. Only near the screen (the margin
    // that draws a chart before it scrolls in): drawn once the inputs settle, so a burst of
    // edits redraws just the charts that can be seen.
    let near = in_view(wrap_ref);
    let seen = on_screen(wrap_ref);
    let settled = use_context::<crate::ui::state::AppState>().map(|s| s.settled);
    let visible = Memo::new(move |_| {
        !hold.is_some_and(|h| h.get())
            && (eager || seen.get() || (near.get() && settled.is_none_or(|s| s.get())))
    });
    let drawn = StoredValue::new(None::<Drawn>);
    Effect::new(move |_| {
        let w = width.get();
        if !visible.get() {
            // Keep the place the chart will take, so the page does not jump when it draws.
            if let (Some(canvas), true) = (canvas_ref.get(), w > 0) {
                reserve_height(&canvas, data, w);
            }
            return;
        }
        let is_dark = dark.get();
        let lang_now = lang.get();
        let Some(canvas) = canvas_ref.get() else {
            return;
        };
        if w == 0 {
            return;
        }
        match draw_if_changed(&canvas, data, drawn, (w, is_dark, lang_now)) {
            None => {}
            Some(Ok(h)) => {
                hits.set_value(h);
                error.set(None);
            }
            Some(Err(msg)) => {
                hits.set_value(HitMap::default());
                error.set(Some(msg));
            }
        }
    });

    let on_move = move |ev: leptos::ev::MouseEvent| {
        let (x, y) = (ev.offset_x(), ev.offset_y());
        let tip = hits.with_value(|h| h.at(x, y).map(|r| r.lines));
        let w = width.get_untracked();
        let h = data.with_untracked(|d| d.0.height_for_width(w));
        tooltip.set(tip.map(|lines| (tooltip_position(x, y, w, h), lines)));
    };
    let on_leave = move |_| tooltip.set(None);
    let on_click = move |ev: leptos::ev::MouseEvent| {
        let id = hits.with_value(|h| h.at(ev.offset_x(), ev.offset_y()).map(|r| r.id));
        if let (Some(cb), Some(id)) = (on_pick, id) {
            cb.run(id);
        }
    };

    view! {
        <figure class="chart" data-testid=test_id style="margin:0">
            <div class="chart-canvas-wrap" node_ref=wrap_ref style="position:relative">
                <canvas
                    node_ref=canvas_ref
                    role="img"
                    aria-label=move || title.get()
                    style:display=move || if error.with(Option::is_some) { "none" } else { "block" }
                    style="width:100%"
                    on:mousemove=on_move
                    on:mouseleave=on_leave
                    on:click=on_click
                ></canvas>
                {move || error.get().map(|msg| view! { <p class="chart-error" role="alert">{msg}</p> })}
                <ChartTooltip tooltip=tooltip />
            </div>
            <ChartActions
                canvas_ref=canvas_ref
                data=data
                width=width
                dark=dark
                lang=lang
                error=error
                test_id=test_id
            />
            <ChartTable data=data lang=lang title=title />
        </figure>
    }
    .into_any()
}

/// What was drawn last: the data, the width, the theme (dark or not) and the language.
type Drawn = (AnyChart, u32, bool, Lang);

/// Keeps `width` at the CSS width of `el`, as a `ResizeObserver` reports it (kept for the
/// element's life). Its first report comes after the frame's layout, before that frame is
/// painted, so the chart takes its height before anything is shown; nothing is measured while
/// the app mounts (reading `clientWidth` there forced a layout of the half-built page once
/// per chart: 176-270 ms of a cold start, docs/history/SIZE.md).
fn observe_width(el: &web_sys::HtmlDivElement, width: RwSignal<u32>) {
    let cb = Closure::<dyn FnMut(js_sys::Array)>::new(move |entries: js_sys::Array| {
        // The last entry is the newest size of the one observed element; its content box is
        // its client width (the wrapper has no padding), read without a layout.
        if let Some(e) = entries
            .iter()
            .last()
            .and_then(|e| e.dyn_into::<web_sys::ResizeObserverEntry>().ok())
        {
            // `max` drops a NaN, and `as` saturates.
            let w = e.content_rect().width().round().max(0.0) as u32;
            if w != width.get_untracked() {
                width.set(w);
            }
        }
    });
    if let Ok(obs) = web_sys::ResizeObserver::new(cb.as_ref().unchecked_ref()) {
        obs.observe(el);
        keep_observer(obs, cb, web_sys::ResizeObserver::disconnect);
    }
}

/// Gives the canvas the CSS height the chart will take at width `w` (when it differs).
fn reserve_height(canvas: &HtmlCanvasElement, data: Memo<AnyChart>, w: u32) {
    let h = data.with(|d| d.0.height_for_width(w));
    let style = web_sys::HtmlElement::style(canvas);
    let want = format!("{h}px");
    if style.get_property_value("height").ok().as_deref() != Some(want.as_str()) {
        let _ = style.set_property("height", &want);
    }
}

/// Draws the chart at `(width, dark, lang)` unless that very drawing is the one on the canvas
/// (`None`); the hover regions, or the drawing error in `lang`.
fn draw_if_changed(
    canvas: &HtmlCanvasElement,
    data: Memo<AnyChart>,
    drawn: StoredValue<Option<Drawn>>,
    (w, is_dark, lang_now): (u32, bool, Lang),
) -> Option<Result<HitMap, String>> {
    data.with(|d| {
        let same = drawn.with_value(|last| {
            last.as_ref().is_some_and(|(ld, lw, ldark, llang)| {
                *lw == w && *ldark == is_dark && *llang == lang_now && ld == d
            })
        });
        if same {
            return None;
        }
        drawn.set_value(Some((d.clone(), w, is_dark, lang_now)));
        let labels = labels_in(lang_now);
        let h = d.0.height_for_width(w);
        Some(
            d.0.draw_canvas(canvas, (w, h), &Theme::for_dark(is_dark), &labels)
                .map_err(|e| e.message(&labels)),
        )
    })
}
