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

use crate::charts::either::Either;
use crate::charts::{render_svg_via, Chart, DrawError, HitMap, Labels, Theme};
use crate::core::base::{tr, Lang};
use crate::ui::in_view::{in_view, on_screen};
use crate::ui::keep_alive::keep_observer;
use leptos::html::{Canvas, Div};
use leptos::prelude::*;
use plotters::prelude::*;
use plotters_backend::text_anchor::{HPos, VPos};
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingErrorKind, FontTransform,
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
    /// The font last set on `ctx` (setting it is costly; labels repeat it).
    font: std::cell::RefCell<String>,
    /// The stroke being gathered: lines and paths of one colour and width go into one canvas
    /// path, stroked once when something else is drawn (a chart's grid, dashes and series
    /// would otherwise be hundreds of separate strokes, each rasterized on its own).
    pending: Option<((u8, u8, u8), u64, u32)>,
    /// The fill colour last set on `ctx` by this backend (setting it parses a CSS colour:
    /// bars, swatches and markers repeat a few colours many times).
    fill: Option<((u8, u8, u8), u64)>,
    /// Labels, drawn together when the chart is presented: grouped by font and colour, so the
    /// font (the costliest context setting: Chrome parses it) is set once per font, not at
    /// every switch between tick labels, titles and legends. Text is drawn over everything
    /// else, which is where a chart's labels belong anyway.
    texts: Vec<TextOp>,
}

/// A label waiting to be drawn.
struct TextOp {
    font: String,
    color: String,
    baseline: &'static str,
    align: &'static str,
    quarter_turns: u8,
    x: f64,
    y: f64,
    text: String,
}

type CanvasErr = <CanvasBackend as DrawingBackend>::ErrorType;

impl HiDpiCanvas {
    /// Sets the context's font unless it is already `font`.
    fn use_font(&self, font: &str) {
        match self.font.try_borrow_mut() {
            Ok(last) if *last == font => {}
            Ok(mut last) => {
                self.ctx.set_font(font);
                font.clone_into(&mut last);
            }
            Err(_) => self.ctx.set_font(font),
        }
    }

    /// Strokes the gathered lines, if any.
    fn flush(&mut self) {
        if self.pending.take().is_some() {
            self.ctx.stroke();
        }
    }

    /// Continues the gathered path when `color` and `width` match it; else strokes it and
    /// starts a new one in this style.
    fn stroke_in(&mut self, color: BackendColor, width: u32) {
        let key = (color.rgb, color.alpha.to_bits(), width);
        if self.pending == Some(key) {
            return;
        }
        self.flush();
        let (r, g, b) = color.rgb;
        self.ctx
            .set_stroke_style_str(&format!("rgba({r},{g},{b},{})", color.alpha));
        self.ctx.set_line_width(f64::from(width));
        self.ctx.begin_path();
        self.pending = Some(key);
    }

    /// Sets the fill colour unless it is already `color`.
    fn fill_in(&mut self, color: BackendColor) {
        let key = (color.rgb, color.alpha.to_bits());
        if self.fill == Some(key) {
            return;
        }
        let (r, g, b) = color.rgb;
        self.ctx
            .set_fill_style_str(&format!("rgba({r},{g},{b},{})", color.alpha));
        self.fill = Some(key);
    }

    /// Fills a shape in `color` as plotters-canvas fills it, with the colour set only when it
    /// changes: ends the gathered stroke, then `shape` draws and fills on the context. Nothing
    /// for a transparent colour.
    fn fill_shape(&mut self, color: BackendColor, shape: impl FnOnce(&CanvasRenderingContext2d)) {
        if color.alpha == 0.0 {
            return;
        }
        self.flush();
        self.fill_in(color);
        shape(&self.ctx);
    }

    /// Draws a shape that may be filled: filled, `filled` draws it on the context
    /// ([`Self::fill_shape`]); else `outline` draws its outline as plotters-canvas does, after
    /// the gathered stroke.
    fn shape(
        &mut self,
        (fill, color): (bool, BackendColor),
        outline: impl FnOnce(&mut CanvasBackend) -> Result<(), DrawingErrorKind<CanvasErr>>,
        filled: impl FnOnce(&CanvasRenderingContext2d),
    ) -> Result<(), DrawingErrorKind<CanvasErr>> {
        if fill {
            self.fill_shape(color, filled);
            Ok(())
        } else {
            self.flush();
            outline(&mut self.inner)
        }
    }

    /// Draws the gathered labels, grouped by font and colour (their order within a group is
    /// kept). A label the context refuses is skipped: nothing else depends on it.
    fn draw_texts(&mut self) {
        // The labels set the fill colour themselves.
        self.fill = None;
        let mut texts = std::mem::take(&mut self.texts);
        // core::order: the project's one (stable) sort, so no sort code is compiled for this.
        crate::core::base::sort_by(&mut texts, &|a, b| {
            (&a.font, &a.color).cmp(&(&b.font, &b.color))
        });
        let (mut color, mut baseline, mut align) = ("", "", "");
        for t in &texts {
            self.use_font(&t.font);
            if t.color != color {
                self.ctx.set_fill_style_str(&t.color);
                color = &t.color;
            }
            if t.baseline != baseline {
                self.ctx.set_text_baseline(t.baseline);
                baseline = t.baseline;
            }
            if t.align != align {
                self.ctx.set_text_align(t.align);
                align = t.align;
            }
            if t.quarter_turns == 0 {
                let _ = self.ctx.fill_text(&t.text, t.x, t.y);
            } else {
                // save/restore around the rotation only: font and style stay in effect.
                self.ctx.save();
                let _ = self
                    .ctx
                    .translate(t.x, t.y)
                    .and_then(|_| {
                        self.ctx
                            .rotate(f64::from(t.quarter_turns) * std::f64::consts::FRAC_PI_2)
                    })
                    .and_then(|_| self.ctx.fill_text(&t.text, 0.0, 0.0));
                self.ctx.restore();
            }
        }
    }
}

impl DrawingBackend for HiDpiCanvas {
    type ErrorType = CanvasErr;

    fn get_size(&self) -> (u32, u32) {
        self.css_size
    }

    fn ensure_prepared(&mut self) -> Result<(), DrawingErrorKind<CanvasErr>> {
        self.inner.ensure_prepared()
    }

    fn present(&mut self) -> Result<(), DrawingErrorKind<CanvasErr>> {
        self.flush();
        self.draw_texts();
        self.inner.present()
    }

    fn draw_pixel(
        &mut self,
        point: BackendCoord,
        color: BackendColor,
    ) -> Result<(), DrawingErrorKind<CanvasErr>> {
        self.fill_shape(color, |ctx| {
            ctx.fill_rect(f64::from(point.0), f64::from(point.1), 1.0, 1.0)
        });
        Ok(())
    }

    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Result<(), DrawingErrorKind<CanvasErr>> {
        let color = style.color();
        if color.alpha == 0.0 {
            return Ok(());
        }
        // Horizontal and vertical lines on the pixel grid's half step, as plotters-canvas
        // draws them, so one-pixel lines stay sharp.
        let (mut a, mut b) = (
            (f64::from(from.0), f64::from(from.1)),
            (f64::from(to.0), f64::from(to.1)),
        );
        if from.0 == to.0 {
            a.0 -= 0.5;
            b.0 -= 0.5;
        }
        if from.1 == to.1 {
            a.1 -= 0.5;
            b.1 -= 0.5;
        }
        self.stroke_in(color, style.stroke_width());
        self.ctx.move_to(a.0, a.1);
        self.ctx.line_to(b.0, b.1);
        Ok(())
    }

    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<CanvasErr>> {
        self.shape(
            (fill, style.color()),
            |inner| inner.draw_rect(upper_left, bottom_right, style, fill),
            |ctx| {
                ctx.fill_rect(
                    f64::from(upper_left.0),
                    f64::from(upper_left.1),
                    f64::from(bottom_right.0 - upper_left.0),
                    f64::from(bottom_right.1 - upper_left.1),
                )
            },
        )
    }

    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<CanvasErr>> {
        let color = style.color();
        if color.alpha == 0.0 {
            return Ok(());
        }
        let mut points = path.into_iter().peekable();
        if points.peek().is_some() {
            self.stroke_in(color, style.stroke_width());
            trace(&self.ctx, points);
        }
        Ok(())
    }

    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<CanvasErr>> {
        self.fill_shape(style.color(), |ctx| {
            ctx.begin_path();
            if trace(ctx, vert) {
                ctx.close_path();
            }
            ctx.fill();
        });
        Ok(())
    }

    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<CanvasErr>> {
        self.shape(
            (fill, style.color()),
            |inner| inner.draw_circle(center, radius, style, fill),
            |ctx| {
                ctx.begin_path();
                // `arc` refuses only a negative radius, which a u32 cannot be.
                let _ = ctx.arc(
                    f64::from(center.0),
                    f64::from(center.1),
                    f64::from(radius),
                    0.0,
                    std::f64::consts::TAU,
                );
                ctx.fill();
            },
        )
    }

    fn draw_text<TStyle: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &TStyle,
        pos: BackendCoord,
    ) -> Result<(), DrawingErrorKind<CanvasErr>> {
        // Drawn here rather than by plotters-canvas, which sets the context's font for every
        // label: parsing a CSS font is the costliest call of a redraw, and labels repeat it.
        let color = style.color();
        if color.alpha == 0.0 {
            return Ok(());
        }
        let (r, g, b) = color.rgb;
        self.texts.push(TextOp {
            font: font_of(style),
            color: format!("rgba({r},{g},{b},{})", color.alpha),
            baseline: match style.anchor().v_pos {
                VPos::Top => "top",
                VPos::Center => "middle",
                VPos::Bottom => "bottom",
            },
            align: match style.anchor().h_pos {
                HPos::Left => "start",
                HPos::Right => "end",
                HPos::Center => "center",
            },
            quarter_turns: match style.transform() {
                FontTransform::None => 0,
                FontTransform::Rotate90 => 1,
                FontTransform::Rotate180 => 2,
                FontTransform::Rotate270 => 3,
            },
            x: f64::from(pos.0),
            y: f64::from(pos.1),
            text: text.to_string(),
        });
        Ok(())
    }

    /// Measures with the 2D context in the same font the canvas backend draws with.
    fn estimate_text_size<TStyle: BackendTextStyle>(
        &self,
        text: &str,
        style: &TStyle,
    ) -> Result<(u32, u32), DrawingErrorKind<CanvasErr>> {
        let font = font_of(style);
        let width = text_width(&font, text).unwrap_or_else(|| {
            // No canvas of its own to measure with: measure on the chart's.
            self.use_font(&font);
            self.ctx
                .measure_text(text)
                .map(|m| m.width())
                .unwrap_or(0.0)
                .ceil()
                .max(0.0) as u32
        });
        Ok((width, style.size().ceil().max(0.0) as u32))
    }
}

/// Adds `points` to the context's current path as one polyline (a move to the first, lines
/// to the others); whether there was any point.
fn trace(ctx: &CanvasRenderingContext2d, points: impl IntoIterator<Item = BackendCoord>) -> bool {
    let mut points = points.into_iter();
    let Some(start) = points.next() else {
        return false;
    };
    ctx.move_to(f64::from(start.0), f64::from(start.1));
    for p in points {
        ctx.line_to(f64::from(p.0), f64::from(p.1));
    }
    true
}

thread_local! {
    /// Widths already measured, by (CSS font, text): tick labels and legends repeat on every
    /// redraw, and each `measureText` call (with the font switches it needs) costs more than
    /// the drawing itself. Emptied when it grows past [`WIDTHS_KEPT`].
    static WIDTHS: std::cell::RefCell<std::collections::HashMap<(String, String), u32>> =
        std::cell::RefCell::new(std::collections::HashMap::new());
    /// A canvas context used only for measuring, with the font last set on it.
    static MEASURER: std::cell::RefCell<Option<(CanvasRenderingContext2d, String)>> =
        std::cell::RefCell::new(measuring_context().map(|c| (c, String::new())));
}

/// A 2D context on a detached canvas (never shown).
fn measuring_context() -> Option<CanvasRenderingContext2d> {
    let canvas: HtmlCanvasElement = web_sys::window()?
        .document()?
        .create_element("canvas")
        .ok()?
        .dyn_into()
        .ok()?;
    canvas.get_context("2d").ok()??.dyn_into().ok()
}

/// How many measured widths are kept.
const WIDTHS_KEPT: usize = 4096;

/// The width of `text` in `font`, in CSS pixels (rounded up), measured once; `None` when
/// there is no measuring context.
fn text_width(font: &str, text: &str) -> Option<u32> {
    let key = (font.to_string(), text.to_string());
    if let Some(w) = WIDTHS.with(|m| m.try_borrow().ok().and_then(|m| m.get(&key).copied())) {
        return Some(w);
    }
    let w = MEASURER.with(|m| {
        let mut m = m.try_borrow_mut().ok()?;
        let (ctx, set) = m.as_mut()?;
        if set != font {
            ctx.set_font(font);
            font.clone_into(set);
        }
        let w = ctx.measure_text(text).ok()?.width();
        Some(w.ceil().max(0.0) as u32)
    })?;
    WIDTHS.with(|m| {
        if let Ok(mut m) = m.try_borrow_mut() {
            if m.len() >= WIDTHS_KEPT {
                m.clear();
            }
            m.insert(key, w);
        }
    });
    Some(w)
}

thread_local! {
    /// The CSS fonts already written, with what they were written from (style, size, family):
    /// a chart uses a few fonts for all its labels, and formatting the size (a float) for each
    /// label and each measurement cost more than the lookup.
    static FONTS: std::cell::RefCell<Vec<(String, u64, String, String)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// How many written fonts are kept.
const FONTS_KEPT: usize = 32;

/// The CSS font of a text style, as plotters-canvas writes it.
fn font_of<S: BackendTextStyle>(style: &S) -> String {
    let (kind, size, family) = (style.style(), style.size(), style.family());
    let (kind, family) = (kind.as_str(), family.as_str());
    let found = FONTS.with(|f| {
        f.try_borrow().ok().and_then(|f| {
            f.iter()
                .find(|(k, s, fam, _)| k == kind && *s == size.to_bits() && fam == family)
                .map(|(.., font)| font.clone())
        })
    });
    found.unwrap_or_else(|| {
        let font = format!("{kind} {size}px {family}");
        FONTS.with(|f| {
            if let Ok(mut f) = f.try_borrow_mut() {
                if f.len() >= FONTS_KEPT {
                    f.clear();
                }
                f.push((
                    kind.to_string(),
                    size.to_bits(),
                    family.to_string(),
                    font.clone(),
                ));
            }
        });
        font
    })
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
    let (bw, bh) = (
        (w as f64 * dpr).round() as u32,
        (h as f64 * dpr).round() as u32,
    );
    let ctx: CanvasRenderingContext2d = canvas
        .get_context("2d")
        .map_err(|e| js_err("getContext", e))?
        .and_then(|c| c.dyn_into().ok())
        .ok_or_else(|| DrawError::Backend("no 2D context".to_string()))?;
    if canvas.width() != bw || canvas.height() != bh {
        // A new size reallocates the backing store (and clears it): only when it changed.
        canvas.set_width(bw);
        canvas.set_height(bh);
        web_sys::HtmlElement::style(canvas)
            .set_property("height", &format!("{h}px"))
            .map_err(|e| js_err("style", e))?;
    } else {
        ctx.reset_transform()
            .map_err(|e| js_err("resetTransform", e))?;
        ctx.clear_rect(0.0, 0.0, f64::from(bw), f64::from(bh));
    }
    ctx.set_transform(dpr, 0.0, 0.0, dpr, 0.0, 0.0)
        .map_err(|e| js_err("setTransform", e))?;
    let inner = CanvasBackend::with_canvas_object(canvas.clone())
        .ok_or_else(|| DrawError::Backend("no canvas backend".to_string()))?;
    let area = Either::<_, SVGBackend>::Left(HiDpiCanvas {
        inner,
        ctx,
        css_size: (w, h),
        font: std::cell::RefCell::new(String::new()),
        pending: None,
        fill: None,
        texts: Vec::new(),
    })
    .into_drawing_area();
    let hits = chart.draw(&area, theme, labels)?;
    area.present().map_err(DrawError::backend)?;
    Ok(hits)
}

/// Draws `chart` on `canvas`, a canvas of `css` pixels that is never shown. V8 compiles wasm
/// lazily, on a function's first call: the first drawing of a chart type in a module compiles
/// its drawing code in the task that draws it. A section can rehearse its charts in idle tasks
/// of their own before its first result (`ui::serving_view`).
pub fn rehearse<C: Chart>(
    canvas: &HtmlCanvasElement,
    chart: &C,
    css: (u32, u32),
    dark: bool,
    lang: Lang,
) {
    let _ = draw_on_canvas(canvas, chart, css, &Theme::for_dark(dark), &labels_in(lang));
}

/// Where the tooltip goes for a pointer at (`x`, `y`) on a chart of `w` × `h` CSS pixels: beside
/// the pointer, on the side towards the chart's centre, so it stays inside the chart's section
/// (which clips what overflows it, style/results.css).
fn tooltip_position(x: i32, y: i32, w: u32, h: u32) -> String {
    let (w, h) = (w as i32, h as i32);
    let across = if x > w / 2 {
        format!("right:{}px", (w - x + 12).max(0))
    } else {
        format!("left:{}px", x + 12)
    };
    let down = if y > h / 2 {
        format!("bottom:{}px", (h - y + 12).max(0))
    } else {
        format!("top:{}px", y + 12)
    };
    format!("position:absolute;{across};{down};pointer-events:none")
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

/// What the canvas component needs from a chart, without the chart's type: the component is
/// compiled once instead of once per chart type (which cost about 60 KB of wasm).
trait CanvasChart: Send + Sync {
    fn draw_canvas(
        &self,
        canvas: &HtmlCanvasElement,
        css: (u32, u32),
        theme: &Theme,
        labels: &Labels,
    ) -> Result<HitMap, DrawError>;
    fn svg(&self, theme: &Theme, labels: &Labels, width: u32) -> Result<String, DrawError>;
    fn table(&self, labels: &Labels) -> crate::charts::DataTable;
    fn height_for_width(&self, width: u32) -> u32;
    fn as_any(&self) -> &dyn std::any::Any;
    /// Same type and equal data.
    fn same(&self, other: &dyn CanvasChart) -> bool;
}

impl<C: Chart + Send + Sync> CanvasChart for C {
    fn draw_canvas(
        &self,
        canvas: &HtmlCanvasElement,
        css: (u32, u32),
        theme: &Theme,
        labels: &Labels,
    ) -> Result<HitMap, DrawError> {
        draw_on_canvas(canvas, self, css, theme, labels)
    }
    fn svg(&self, theme: &Theme, labels: &Labels, width: u32) -> Result<String, DrawError> {
        // The export draws as Either::Right, the canvas as Either::Left: every chart's drawing
        // code is compiled once for both (charts::either).
        render_svg_via::<HiDpiCanvas, _>(self, theme, labels, (width, self.height_for_width(width)))
            .map(|(s, _)| s)
    }
    fn table(&self, labels: &Labels) -> crate::charts::DataTable {
        Chart::table(self, labels)
    }
    fn height_for_width(&self, width: u32) -> u32 {
        Chart::height_for_width(self, width)
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn same(&self, other: &dyn CanvasChart) -> bool {
        other.as_any().downcast_ref::<C>() == Some(self)
    }
}

/// A chart of any type, shared: cloning it is cheap, and equal means "same data".
#[derive(Clone)]
struct AnyChart(std::sync::Arc<dyn CanvasChart>);

impl PartialEq for AnyChart {
    fn eq(&self, other: &Self) -> bool {
        self.0.same(other.0.as_ref())
    }
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
    /// While true, the chart is not drawn and only keeps its place, as off screen: a section
    /// can draw its charts in tasks of their own (`ui::serving_view`'s first result).
    #[prop(optional, into)]
    hold: Option<Signal<bool>>,
) -> impl IntoView
where
    C: Chart + Send + Sync + 'static,
{
    // The only typed step: the data, shared and type-erased; the rest is compiled once.
    let data = Memo::new(move |_| AnyChart(std::sync::Arc::new(data.get())));
    chart_canvas(data, lang, dark, title, test_id, on_pick, hold)
}

fn chart_canvas(
    data: Memo<AnyChart>,
    lang: Signal<Lang>,
    dark: Signal<bool>,
    title: Signal<String>,
    test_id: &'static str,
    on_pick: Option<Callback<String>>,
    hold: Option<Signal<bool>>,
) -> AnyView {
    let canvas_ref: NodeRef<Canvas> = NodeRef::new();
    let wrap_ref: NodeRef<Div> = NodeRef::new();
    // CSS width of the container, kept by the ResizeObserver (outside world → signal).
    let width = RwSignal::new(0u32);
    let hits = StoredValue::new(HitMap::default());
    let error = RwSignal::new(None::<String>);
    // The tooltip's CSS position and its lines.
    let tooltip = RwSignal::new(None::<(String, Vec<String>)>);

    wrap_ref.on_load(move |el| observe_width(&el, width));

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
            && (seen.get() || (near.get() && settled.is_none_or(|s| s.get())))
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
/// per chart: 176-270 ms of a cold start, docs/SIZE.md).
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

thread_local! {
    /// The chart labels of the language last drawn in: making them looks up every label's
    /// translation, and each redraw of each chart needs them.
    static LABELS: std::cell::RefCell<Option<(Lang, Labels)>> =
        const { std::cell::RefCell::new(None) };
}

/// The chart labels in `lang`, kept once every label has its translation (a label from the
/// late module's part of the table is missing until that module is linked).
fn labels_in(lang: Lang) -> Labels {
    let kept = LABELS.with(|l| {
        l.try_borrow().ok().and_then(|l| {
            l.as_ref()
                .filter(|(kl, _)| *kl == lang)
                .map(|(_, k)| k.clone())
        })
    });
    kept.unwrap_or_else(|| {
        let labels = Labels::new(lang);
        if Labels::KEYS.iter().all(|k| crate::core::base::has(k)) {
            LABELS.with(|l| {
                if let Ok(mut l) = l.try_borrow_mut() {
                    *l = Some((lang, labels.clone()));
                }
            });
        }
        labels
    })
}

/// The tooltip of the hover region under the pointer: its first line in bold.
#[component]
fn ChartTooltip(
    /// The tooltip's CSS position and its lines, while the pointer is over a region.
    tooltip: RwSignal<Option<(String, Vec<String>)>>,
) -> impl IntoView {
    move || {
        tooltip.get().map(|(position, lines)| {
            view! {
                <div class="chart-tooltip" role="status" style=position>
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
    }
}

/// The PNG and SVG export buttons.
#[component]
fn ChartActions(
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

/// The chart's data as a table inside a `<details>`, built only while it is open.
#[component]
fn ChartTable(
    /// The chart.
    data: Memo<AnyChart>,
    /// The UI language.
    lang: Signal<Lang>,
    /// Accessible name of the chart, already translated (the table's caption).
    title: Signal<String>,
) -> impl IntoView {
    // The data table is built only while its <details> is open.
    let table_open = RwSignal::new(false);
    // A memo: the header and the rows read it, and it is built once per change.
    let table = Memo::new(move |_| {
        if table_open.get() {
            data.with(|d| d.0.table(&Labels::new(lang.get())))
        } else {
            Default::default()
        }
    });
    let t = move |key: &'static str| move || tr(lang.get(), key);
    view! {
        <details
            class="chart-table"
            on:toggle=move |ev| {
                table_open.set(crate::ui::view_common::details_opened(&ev));
            }
        >
            <summary>{t("chart_data_table")}</summary>
            <table>
                <caption>{move || title.get()}</caption>
                <thead>
                    <tr>
                        {move || {
                            table.with(|t| {
                                t.headers
                                    .iter()
                                    .map(|h| view! { <th scope="col">{h.clone()}</th> })
                                    .collect_view()
                            })
                        }}
                    </tr>
                </thead>
                <tbody>
                    {move || {
                        table
                            .with(|t| t.rows.clone())
                            .into_iter()
                            .map(|row| {
                                view! {
                                    <tr>
                                        {row
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
                                }
                            })
                            .collect_view()
                    }}
                </tbody>
            </table>
        </details>
    }
}
