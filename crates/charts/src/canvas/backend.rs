//! The HiDPI canvas backend: plotters draws in CSS pixels on a backing store scaled by the
//! device pixel ratio ([`HiDpiCanvas`] reports the CSS size, which plotters-canvas alone does
//! not), strokes gathered into one path per colour and width, labels drawn together and measured
//! with `measureText` instead of a DOM span per label; and drawing a chart on a canvas with it.

use super::labels::labels_in;
use crate::core::base::Lang;
use crate::either::Either;
use crate::{Chart, DrawError, HitMap, Labels, Theme};
use plotters::prelude::*;
use plotters_backend::text_anchor::{HPos, VPos};
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingErrorKind, FontTransform,
};
use plotters_canvas::CanvasBackend;
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

/// Sizes the canvas for `css` pixels at the device pixel ratio and draws `chart` on it, through
/// [`Either`] (the app exports the same drawing code to SVG: compiled once for both).
pub fn draw_on_canvas<C: Chart>(
    canvas: &HtmlCanvasElement,
    chart: &C,
    css: (u32, u32),
    theme: &Theme,
    labels: &Labels,
) -> Result<HitMap, DrawError> {
    let area = Either::<_, SVGBackend>::Left(sized(canvas, css)?).into_drawing_area();
    let hits = chart.draw(&area, theme, labels)?;
    area.present().map_err(DrawError::backend)?;
    Ok(hits)
}

/// [`draw_on_canvas`] without the SVG backend beside the canvas: the same calls on the same
/// backend, so the same pixels, for a module that exports nothing (the embeds' first answer).
pub fn draw_on_canvas_only<C: Chart>(
    canvas: &HtmlCanvasElement,
    chart: &C,
    css: (u32, u32),
    theme: &Theme,
    labels: &Labels,
) -> Result<HitMap, DrawError> {
    let area = sized(canvas, css)?.into_drawing_area();
    let hits = chart.draw(&area, theme, labels)?;
    area.present().map_err(DrawError::backend)?;
    Ok(hits)
}

/// The backend on `canvas`, sized for `css` pixels at the device pixel ratio and cleared.
fn sized(canvas: &HtmlCanvasElement, css: (u32, u32)) -> Result<HiDpiCanvas, DrawError> {
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
    Ok(HiDpiCanvas {
        inner,
        ctx,
        css_size: (w, h),
        font: std::cell::RefCell::new(String::new()),
        pending: None,
        fill: None,
        texts: Vec::new(),
    })
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
