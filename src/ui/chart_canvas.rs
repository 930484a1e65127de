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

use crate::charts::{render_svg, Chart, DrawError, HitMap, Labels, Theme};
use crate::core::i18n::{tr, Lang};
use leptos::html::{Canvas, Div};
use leptos::prelude::*;
use plotters::prelude::*;
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingErrorKind,
};
use plotters_canvas::CanvasBackend;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};

/// The plotters canvas backend drawing in CSS pixels on a backing store scaled by the device
/// pixel ratio.
pub struct HiDpiCanvas {
    inner: CanvasBackend,
    ctx: CanvasRenderingContext2d,
    css_size: (u32, u32),
}

type CanvasErr = <CanvasBackend as DrawingBackend>::ErrorType;

impl DrawingBackend for HiDpiCanvas {
    type ErrorType = CanvasErr;

    fn get_size(&self) -> (u32, u32) {
        self.css_size
    }

    fn ensure_prepared(&mut self) -> Result<(), DrawingErrorKind<CanvasErr>> {
        self.inner.ensure_prepared()
    }

    fn present(&mut self) -> Result<(), DrawingErrorKind<CanvasErr>> {
        self.inner.present()
    }

    fn draw_pixel(
        &mut self,
        point: BackendCoord,
        color: BackendColor,
    ) -> Result<(), DrawingErrorKind<CanvasErr>> {
        self.inner.draw_pixel(point, color)
    }

    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Result<(), DrawingErrorKind<CanvasErr>> {
        self.inner.draw_line(from, to, style)
    }

    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<CanvasErr>> {
        self.inner.draw_rect(upper_left, bottom_right, style, fill)
    }

    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<CanvasErr>> {
        self.inner.draw_path(path, style)
    }

    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<CanvasErr>> {
        self.inner.fill_polygon(vert, style)
    }

    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<CanvasErr>> {
        self.inner.draw_circle(center, radius, style, fill)
    }

    fn draw_text<TStyle: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &TStyle,
        pos: BackendCoord,
    ) -> Result<(), DrawingErrorKind<CanvasErr>> {
        self.inner.draw_text(text, style, pos)
    }

    /// Measures with the 2D context in the same font the canvas backend draws with.
    fn estimate_text_size<TStyle: BackendTextStyle>(
        &self,
        text: &str,
        style: &TStyle,
    ) -> Result<(u32, u32), DrawingErrorKind<CanvasErr>> {
        self.ctx.set_font(&format!(
            "{} {}px {}",
            style.style().as_str(),
            style.size(),
            style.family().as_str()
        ));
        let width = self
            .ctx
            .measure_text(text)
            .map(|m| m.width())
            .unwrap_or(0.0);
        Ok((
            width.ceil().max(0.0) as u32,
            style.size().ceil().max(0.0) as u32,
        ))
    }
}

fn js_err(what: &str, e: JsValue) -> DrawError {
    DrawError::Backend(format!("{what}: {}", e.as_string().unwrap_or_default()))
}

/// Sizes the canvas for `css` pixels at the device pixel ratio and draws `chart` on it.
fn draw_on_canvas<C: Chart>(
    canvas: &HtmlCanvasElement,
    chart: &C,
    css: (u32, u32),
    theme: &Theme,
    labels: &Labels,
) -> Result<HitMap, DrawError> {
    let dpr = web_sys::window()
        .map(|w| w.device_pixel_ratio())
        .filter(|r| r.is_finite() && *r > 0.0)
        .unwrap_or(1.0)
        .clamp(1.0, 4.0);
    let (w, h) = css;
    // Setting the size clears the canvas and resets the context's transform.
    canvas.set_width((w as f64 * dpr).round() as u32);
    canvas.set_height((h as f64 * dpr).round() as u32);
    web_sys::HtmlElement::style(canvas)
        .set_property("height", &format!("{h}px"))
        .map_err(|e| js_err("style", e))?;
    let ctx: CanvasRenderingContext2d = canvas
        .get_context("2d")
        .map_err(|e| js_err("getContext", e))?
        .and_then(|c| c.dyn_into().ok())
        .ok_or_else(|| DrawError::Backend("no 2D context".to_string()))?;
    ctx.set_transform(dpr, 0.0, 0.0, dpr, 0.0, 0.0)
        .map_err(|e| js_err("setTransform", e))?;
    let inner = CanvasBackend::with_canvas_object(canvas.clone())
        .ok_or_else(|| DrawError::Backend("no canvas backend".to_string()))?;
    let area = HiDpiCanvas {
        inner,
        ctx,
        css_size: (w, h),
    }
    .into_drawing_area();
    let hits = chart.draw(&area, theme, labels)?;
    area.present().map_err(DrawError::backend)?;
    Ok(hits)
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
) -> impl IntoView
where
    C: Chart + Send + Sync + 'static,
{
    let canvas_ref: NodeRef<Canvas> = NodeRef::new();
    let wrap_ref: NodeRef<Div> = NodeRef::new();
    // CSS width of the container, kept by the ResizeObserver (outside world → signal).
    let width = RwSignal::new(0u32);
    let hits = StoredValue::new(HitMap::default());
    let error = RwSignal::new(None::<String>);
    let tooltip = RwSignal::new(None::<(i32, i32, Vec<String>)>);

    wrap_ref.on_load(move |el| {
        let measure = {
            let el = el.clone();
            move || {
                let w = el.client_width().max(0) as u32;
                if w != width.get_untracked() {
                    width.set(w);
                }
            }
        };
        measure();
        let cb = Closure::<dyn FnMut()>::new(measure);
        if let Ok(obs) = web_sys::ResizeObserver::new(cb.as_ref().unchecked_ref()) {
            obs.observe(&el);
            let keep = StoredValue::new_local(Some((obs, cb)));
            on_cleanup(move || {
                keep.try_update_value(|k| {
                    if let Some((obs, _)) = k.take() {
                        obs.disconnect();
                    }
                });
            });
        }
    });

    // The one redraw: data, width, theme and language.
    Effect::new(move |_| {
        let w = width.get();
        let theme = Theme::for_dark(dark.get());
        let labels = Labels::new(lang.get());
        let Some(canvas) = canvas_ref.get() else {
            return;
        };
        if w == 0 {
            return;
        }
        let result = data.with(|d| {
            let h = d.height_for_width(w);
            draw_on_canvas(&canvas, d, (w, h), &theme, &labels)
        });
        match result {
            Ok(h) => {
                hits.set_value(h);
                error.set(None);
            }
            Err(e) => {
                hits.set_value(HitMap::default());
                error.set(Some(e.message(&labels)));
            }
        }
    });

    let on_move = move |ev: leptos::ev::MouseEvent| {
        let (x, y) = (ev.offset_x(), ev.offset_y());
        let tip = hits.with_value(|h| h.at(x, y).map(|r| r.lines.clone()));
        tooltip.set(tip.map(|lines| (x, y, lines)));
    };
    let on_leave = move |_| tooltip.set(None);
    let on_click = move |ev: leptos::ev::MouseEvent| {
        let id = hits.with_value(|h| h.at(ev.offset_x(), ev.offset_y()).map(|r| r.id.clone()));
        if let (Some(cb), Some(id)) = (on_pick, id) {
            cb.run(id);
        }
    };

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
        let svg = data.with_untracked(|d| {
            render_svg(d, &theme, &labels, (w, d.height_for_width(w))).map(|(s, _)| s)
        });
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

    let table = move || data.with(|d| d.table(&Labels::new(lang.get())));
    let t = move |key: &'static str| move || tr(lang.get(), key);

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
                {move || {
                    tooltip
                        .get()
                        .map(|(x, y, lines)| {
                            view! {
                                <div
                                    class="chart-tooltip"
                                    role="status"
                                    style=format!(
                                        "position:absolute;left:{}px;top:{}px;pointer-events:none",
                                        x + 12,
                                        y + 12,
                                    )
                                >
                                    {lines
                                        .into_iter()
                                        .enumerate()
                                        .map(|(i, l)| {
                                            if i == 0 {
                                                view! { <strong>{l}</strong> }.into_any()
                                            } else {
                                                view! { <span>{l}</span> }.into_any()
                                            }
                                        })
                                        .collect_view()}
                                </div>
                            }
                        })
                }}
            </div>
            <div class="chart-actions">
                <button type="button" class="chart-export" on:click=export_png data-testid=format!("{test_id}-png")>
                    {t("chart_export_png")}
                </button>
                <button type="button" class="chart-export" on:click=export_svg data-testid=format!("{test_id}-svg")>
                    {t("chart_export_svg")}
                </button>
            </div>
            <details class="chart-table">
                <summary>{t("chart_data_table")}</summary>
                <table>
                    <caption>{move || title.get()}</caption>
                    <thead>
                        <tr>
                            {move || {
                                table()
                                    .headers
                                    .into_iter()
                                    .map(|h| view! { <th scope="col">{h}</th> })
                                    .collect_view()
                            }}
                        </tr>
                    </thead>
                    <tbody>
                        <For
                            each=move || table().rows.into_iter().enumerate()
                            key=|(i, row)| (*i, row.join("\u{1f}"))
                            let:item
                        >
                            <tr>
                                {item
                                    .1
                                    .into_iter()
                                    .enumerate()
                                    .map(|(j, cell)| {
                                        if j == 0 {
                                            view! { <th scope="row">{cell}</th> }.into_any()
                                        } else {
                                            view! { <td>{cell}</td> }.into_any()
                                        }
                                    })
                                    .collect_view()}
                            </tr>
                        </For>
                    </tbody>
                </table>
            </details>
        </figure>
    }
}
