//! Every chart of the app, drawn from prepared data ([`crate::core::present::series`]): the
//! `llmcalc-charts` crate, on the core and plotters only, so the shell, the late module and the
//! embeds' first-answer module draw with one code; in wasm, [`canvas`] draws on a canvas.
//!
//! Drawing functions are generic over the plotters [`DrawingBackend`], so the same code paints
//! the canvas in the browser and writes SVG natively (tests) and in the browser (exports).
//! Each takes the prepared data, a [`Theme`] and already-translated [`Labels`], lays it out in
//! CSS pixels, and returns a [`HitMap`] (screen regions → tooltips) for hover. Nothing here
//! panics: a backend failure becomes a [`DrawError`].

pub mod accuracy;
pub mod axis;
pub mod batch_chart;
pub mod cost_bar;
pub mod either;
pub mod kv_chart;
pub mod latency_rate;
pub mod latency_throughput;
pub mod memory_bar;
pub mod pareto;
pub mod plan_cost;
pub mod roofline;
pub mod serving_series;
pub mod theme;

/// Drawing on a `<canvas>` (wasm only): the HiDPI backend and the chart labels per language.
#[cfg(target_arch = "wasm32")]
pub mod canvas;

pub use theme::Theme;

/// The calculation core, under the name the charts (and the app) use for it.
pub use llmcalc_core as core;

use crate::core::base::{tr, Lang};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::{FontDesc, FontFamily, FontStyle};

/// Why a chart could not be drawn.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DrawError {
    /// The drawing backend failed (canvas or SVG); the backend's description.
    #[error("The chart could not be drawn ({0}).")]
    Backend(String),
    /// The area is too small to lay the chart out.
    #[error("The chart area is too small to draw in.")]
    TooSmall,
}

impl DrawError {
    /// Converts any plotters drawing-area error.
    pub fn backend<E: std::error::Error>(e: E) -> DrawError {
        DrawError::Backend(e.to_string())
    }

    /// The user-facing sentence in the labels' language.
    pub fn message(&self, labels: &Labels) -> String {
        match self {
            DrawError::Backend(d) => format!("{} ({d})", labels.error_draw),
            DrawError::TooSmall => labels.error_too_small.to_string(),
        }
    }
}

/// A screen region with its tooltip.
#[derive(Debug, Clone, PartialEq)]
pub struct HitRegion {
    /// Stable identifier (`decode`, `A10G/kv`, `ridge/L40S/bf16`), for tests and the UI.
    pub id: String,
    /// Left, top, right, bottom in CSS pixels.
    pub rect: (i32, i32, i32, i32),
    /// Tooltip lines (already translated).
    pub lines: Vec<String>,
}

/// The area of a (left, top, right, bottom) rectangle, 0 when it is empty.
fn area_of((l, t, r, b): (i32, i32, i32, i32)) -> i64 {
    ((r - l) as i64).max(0) * ((b - t) as i64).max(0)
}

/// Makes a region's id and tooltip lines when they are asked for (see [`HitMap::point_with`]).
type MakeHit = std::sync::Arc<dyn Fn() -> (String, Vec<String>) + Send + Sync>;

/// One region of a [`HitMap`]: made, or to be made when asked for.
#[derive(Clone)]
enum Hit {
    Made(HitRegion),
    Deferred((i32, i32, i32, i32), MakeHit),
}

impl Hit {
    fn rect(&self) -> (i32, i32, i32, i32) {
        match self {
            Hit::Made(r) => r.rect,
            Hit::Deferred(rect, _) => *rect,
        }
    }

    fn region(&self) -> HitRegion {
        match self {
            Hit::Made(r) => r.clone(),
            Hit::Deferred(rect, make) => {
                let (id, lines) = make();
                HitRegion {
                    id,
                    rect: *rect,
                    lines,
                }
            }
        }
    }
}

/// Screen regions → tooltips, returned by every draw function.
///
/// A region's id and lines may be made only when asked for ([`HitMap::point_with`]): a chart
/// with hundreds of points would otherwise format every tooltip on each redraw, though the
/// pointer rests on one at most (the KV chart's 165 points took most of its drawing time).
#[derive(Clone, Default)]
pub struct HitMap {
    /// Regions in drawing order.
    hits: Vec<Hit>,
}

impl HitMap {
    /// Adds a region.
    pub fn push(&mut self, id: impl Into<String>, rect: (i32, i32, i32, i32), lines: Vec<String>) {
        self.hits.push(Hit::Made(HitRegion {
            id: id.into(),
            rect,
            lines,
        }));
    }

    /// Adds a square region of half-size `r` around a point.
    pub fn point(&mut self, id: impl Into<String>, p: (i32, i32), r: i32, lines: Vec<String>) {
        self.push(id, square(p, r), lines);
    }

    /// Adds a square region of half-size `r` around a point whose id and tooltip lines
    /// `make` returns when they are asked for (hover, lookup), not now.
    pub fn point_with(
        &mut self,
        p: (i32, i32),
        r: i32,
        make: impl Fn() -> (String, Vec<String>) + Send + Sync + 'static,
    ) {
        self.hits
            .push(Hit::Deferred(square(p, r), std::sync::Arc::new(make)));
    }

    /// The number of regions.
    pub fn len(&self) -> usize {
        self.hits.len()
    }

    /// Whether there is no region.
    pub fn is_empty(&self) -> bool {
        self.hits.is_empty()
    }

    /// Every region in drawing order, each made.
    pub fn regions(&self) -> Vec<HitRegion> {
        self.hits.iter().map(Hit::region).collect()
    }

    /// The smallest region under (x, y) in CSS pixels: points win over the bars or strips
    /// behind them (the first drawn of equal ones).
    pub fn at(&self, x: i32, y: i32) -> Option<HitRegion> {
        self.hits
            .iter()
            .filter(|h| {
                let r = h.rect();
                x >= r.0 && x <= r.2 && y >= r.1 && y <= r.3
            })
            .min_by_key(|h| area_of(h.rect()))
            .map(Hit::region)
    }

    /// The region with this id.
    pub fn get(&self, id: &str) -> Option<HitRegion> {
        self.hits.iter().map(Hit::region).find(|r| r.id == id)
    }
}

/// Two maps are equal when their regions, made, are.
impl PartialEq for HitMap {
    fn eq(&self, other: &Self) -> bool {
        self.regions() == other.regions()
    }
}

impl std::fmt::Debug for HitMap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.regions()).finish()
    }
}

/// The square of half-size `r` around `p`.
fn square(p: (i32, i32), r: i32) -> (i32, i32, i32, i32) {
    (p.0 - r, p.1 - r, p.0 + r, p.1 + r)
}

/// A data table: the accessible alternative to a chart.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DataTable {
    /// Column headers (with units).
    pub headers: Vec<String>,
    /// Rows of formatted cells.
    pub rows: Vec<Vec<String>>,
}

macro_rules! labels {
    ($($field:ident),* $(,)?) => {
        /// Already-translated chart strings (from [`crate::core::base::tr`]); each field is the
        /// translation of the key `chart_<field>`.
        #[derive(Debug, Clone, PartialEq)]
        pub struct Labels {
            $(
                #[doc = concat!("Translation of `chart_", stringify!($field), "`.")]
                pub $field: &'static str,
            )*
        }

        impl Labels {
            /// Every translation key the charts use.
            pub const KEYS: &'static [&'static str] = &[$(concat!("chart_", stringify!($field))),*];

            /// The labels in `lang`.
            pub fn new(lang: Lang) -> Labels {
                Labels { $($field: tr(lang, concat!("chart_", stringify!($field))),)* }
            }
        }
    };
}

labels!(
    no_data,
    error_draw,
    error_too_small,
    gpu,
    weights,
    kv,
    activations,
    overhead,
    free,
    over,
    capacity,
    used,
    fits,
    does_not_fit,
    memory_axis,
    tokens_axis,
    kv_axis,
    batch,
    kv_budget,
    runs_out_at,
    current_context,
    context_axis,
    requests_axis,
    theoretical,
    practical,
    requests,
    intensity_axis,
    attainable_axis,
    ridge,
    bound_memory,
    bound_compute,
    phase_prefill,
    phase_decode,
    phase_matmul,
    phase_reference,
    flops,
    bytes,
    intensity,
    attainable,
    bandwidth,
    batch1,
    total_tps_axis,
    user_tps_axis,
    operating_point,
    memory_full,
    tpot,
    cost_request_hour_axis,
    cost_mtok_axis,
    price_per_hour,
    no_price,
    nothing_fits,
);

/// A text style at `rel` × the theme's base size.
pub fn text_style(theme: &Theme, rel: f64, color: RGBColor, pos: Pos) -> TextStyle<'static> {
    TextStyle {
        font: FontDesc::new(
            FontFamily::Name(theme.font_family),
            theme.font_px * rel * theme.font_scale,
            FontStyle::Normal,
        ),
        color: color.to_backend_color(),
        pos,
    }
}

/// Fills the background and returns the drawing size, or `TooSmall` below 120 × 80 px.
pub fn prepare<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    theme: &Theme,
) -> Result<(i32, i32), DrawError> {
    area.fill(&theme.background).map_err(DrawError::backend)?;
    let (w, h) = area.dim_in_pixel();
    if w < 120 || h < 80 {
        return Err(DrawError::TooSmall);
    }
    Ok((w as i32, h as i32))
}

/// Writes the "nothing to draw" message in the middle of the area.
pub fn draw_empty<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    theme: &Theme,
    labels: &Labels,
) -> Result<HitMap, DrawError> {
    draw_message(area, theme, labels.no_data)
}

/// Writes `text` (a chart's own "nothing to draw" sentence) in the middle of the area.
pub fn draw_message<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    theme: &Theme,
    text: &str,
) -> Result<HitMap, DrawError> {
    let (w, h) = area.dim_in_pixel();
    let s = text_style(
        theme,
        1.0,
        theme.muted,
        Pos::new(HPos::Center, VPos::Center),
    );
    area.draw_text(text, &s, (w as i32 / 2, h as i32 / 2))
        .map_err(DrawError::backend)?;
    Ok(HitMap::default())
}

/// How a legend entry is drawn.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Swatch {
    /// A filled square.
    Box(RGBColor),
    /// A solid line.
    Line(RGBColor),
    /// A dashed line.
    Dashed(RGBColor),
    /// A marker.
    Marker(Marker, RGBColor),
}

/// Lays out a legend in rows across the top of the area, starting at (x0, y0) and wrapping
/// at `max_x`. Returns the y just below the legend.
pub fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    theme: &Theme,
    items: &[(Swatch, String)],
    x0: i32,
    y0: i32,
    max_x: i32,
) -> Result<i32, DrawError> {
    let style = text_style(theme, 0.92, theme.text, Pos::new(HPos::Left, VPos::Center));
    let row_h = (theme.font_px * 1.5) as i32;
    let sw = 18;
    let (mut x, mut y) = (x0, y0 + row_h / 2);
    for (swatch, label) in items {
        let (tw, _) = area
            .estimate_text_size(label, &style)
            .map_err(DrawError::backend)?;
        let item_w = sw + 5 + tw as i32 + 14;
        if x > x0 && x + item_w > max_x {
            x = x0;
            y += row_h;
        }
        match swatch {
            Swatch::Box(c) => {
                area.draw(&Rectangle::new(
                    [(x + 3, y - 5), (x + sw - 3, y + 5)],
                    c.filled(),
                ))
                .map_err(DrawError::backend)?;
            }
            Swatch::Line(c) => {
                axis::line(area, (x, y), (x + sw, y), c.stroke_width(2))?;
            }
            Swatch::Dashed(c) => {
                axis::dashed(area, &[(x, y), (x + sw, y)], (4.0, 3.0), c.stroke_width(2))?;
            }
            Swatch::Marker(m, c) => {
                marker(area, *m, (x + sw / 2, y), 5, *c, theme.background)?;
            }
        }
        area.draw_text(label, &style, (x + sw + 5, y))
            .map_err(DrawError::backend)?;
        x += item_w;
    }
    Ok(y + row_h / 2 + 4)
}

/// Point marker shapes (shape as well as colour tells series apart).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marker {
    /// Filled circle.
    Circle,
    /// Filled square.
    Square,
    /// Filled diamond.
    Diamond,
    /// Hollow circle.
    Ring,
    /// Filled triangle.
    Triangle,
}

/// Draws a marker of half-size `r` at `p`, outlined with `halo` so it stands out on lines.
pub fn marker<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    m: Marker,
    p: (i32, i32),
    r: i32,
    color: RGBColor,
    halo: RGBColor,
) -> Result<(), DrawError> {
    let (x, y) = p;
    let poly = |pts: Vec<(i32, i32)>| -> Result<(), DrawError> {
        area.draw(&Polygon::new(pts.clone(), color.filled()))
            .map_err(DrawError::backend)?;
        let mut closed = pts;
        if let Some(f) = closed.first().copied() {
            closed.push(f);
        }
        area.draw(&PathElement::new(closed, halo.stroke_width(1)))
            .map_err(DrawError::backend)
    };
    match m {
        Marker::Circle => {
            area.draw(&Circle::new(p, r as u32 + 1, halo.filled()))
                .map_err(DrawError::backend)?;
            area.draw(&Circle::new(p, r as u32, color.filled()))
                .map_err(DrawError::backend)
        }
        Marker::Ring => {
            area.draw(&Circle::new(p, r as u32, halo.filled()))
                .map_err(DrawError::backend)?;
            area.draw(&Circle::new(p, r as u32, color.stroke_width(2)))
                .map_err(DrawError::backend)
        }
        Marker::Square => poly(vec![
            (x - r, y - r),
            (x + r, y - r),
            (x + r, y + r),
            (x - r, y + r),
        ]),
        Marker::Diamond => {
            let q = r + 1;
            poly(vec![(x, y - q), (x + q, y), (x, y + q), (x - q, y)])
        }
        Marker::Triangle => poly(vec![(x, y - r - 1), (x + r + 1, y + r), (x - r - 1, y + r)]),
    }
}

/// Chart data that knows how to draw itself and how to be a table.
pub trait Chart: Clone + PartialEq + 'static {
    /// Draws into `area` (CSS pixels) and returns the hover regions.
    fn draw<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        theme: &Theme,
        labels: &Labels,
    ) -> Result<HitMap, DrawError>;

    /// The same data as a table (the accessible alternative).
    fn table(&self, labels: &Labels) -> DataTable;

    /// A good height in CSS pixels for a given width.
    fn height_for_width(&self, width: u32) -> u32 {
        if width < 520 {
            (width * 4 / 5).max(260)
        } else {
            (width * 9 / 16).clamp(300, 440)
        }
    }
}

/// Implements [`Chart`] for a chart's data type with its module's `draw` and `table`
/// functions, so the trait's plumbing lives here once instead of in every chart file.
///
/// `chart!(Data)` for a chart whose `draw(area, data, theme)` and `table(data)` need no labels;
/// `chart!(Data, labelled)` for `draw(area, data, theme, labels)` and `table(data, labels)`.
/// `height = f` (after either) takes `f(&Data, width) -> u32` instead of the trait's default
/// height.
macro_rules! chart {
    ($ty:ty, labelled $(, height = $height:path)?) => {
        $crate::chart!(@impl $ty, labels, [labels] $(, $height)?);
    };
    ($ty:ty $(, height = $height:path)?) => {
        $crate::chart!(@impl $ty, labels, [] $(, $height)?);
    };
    // `$l` names the labels parameter and `[$($pass)?]` passes it on or not; both come from
    // the same expansion so that the name resolves (macro hygiene).
    (@impl $ty:ty, $l:ident, [$($pass:ident)?] $(, $height:path)?) => {
        impl $crate::Chart for $ty {
            fn draw<DB: ::plotters::prelude::DrawingBackend>(
                &self,
                area: &::plotters::prelude::DrawingArea<DB, ::plotters::coord::Shift>,
                theme: &$crate::Theme,
                $l: &$crate::Labels,
            ) -> Result<$crate::HitMap, $crate::DrawError> {
                let _ = $l;
                draw(area, self, theme $(, $pass)?)
            }

            fn table(&self, $l: &$crate::Labels) -> $crate::DataTable {
                let _ = $l;
                table(self $(, $pass)?)
            }

            $(
                fn height_for_width(&self, width: u32) -> u32 {
                    $height(self, width)
                }
            )?
        }
    };
}
pub(crate) use chart;

/// Renders a chart to an SVG document string of `size` CSS pixels (exports and native tests).
pub fn render_svg<C: Chart>(
    chart: &C,
    theme: &Theme,
    labels: &Labels,
    size: (u32, u32),
) -> Result<(String, HitMap), DrawError> {
    let mut out = String::new();
    let hits = draw_svg(&mut out, chart, theme, labels, size, |svg| svg)?;
    Ok((out, hits))
}

/// [`render_svg`] drawn through [`either::Either<A, SVGBackend>`](either::Either): the same
/// document and hover regions. An app that draws its canvas `A` as `Either::Left` and exports
/// through this compiles every chart's drawing code once instead of once per backend.
pub fn render_svg_via<A: DrawingBackend, C: Chart>(
    chart: &C,
    theme: &Theme,
    labels: &Labels,
    size: (u32, u32),
) -> Result<(String, HitMap), DrawError> {
    let mut out = String::new();
    let hits = draw_svg(
        &mut out,
        chart,
        theme,
        labels,
        size,
        either::Either::<A, _>::Right,
    )?;
    Ok((out, hits))
}

/// Draws `chart` as an SVG document into `out`, on the SVG backend wrapped by `wrap`.
fn draw_svg<'a, DB: DrawingBackend + 'a, C: Chart>(
    out: &'a mut String,
    chart: &C,
    theme: &Theme,
    labels: &Labels,
    size: (u32, u32),
    wrap: impl FnOnce(SVGBackend<'a>) -> DB,
) -> Result<HitMap, DrawError> {
    let area = wrap(SVGBackend::with_string(out, size)).into_drawing_area();
    let hits = chart.draw(&area, &theme.for_svg(), labels)?;
    area.present().map_err(DrawError::backend)?;
    Ok(hits)
}

/// Tooltip / table number helpers shared by the charts.
pub mod fmt {
    use crate::core::base::{fmt_sig, Bytes};

    /// "8 GiB (8.59 GB)": both units, binary first.
    pub fn bytes(b: Bytes) -> String {
        b.fmt_both(true)
    }

    /// "$0.2515".
    pub fn usd(v: f64) -> String {
        if v >= 100.0 {
            format!("${v:.0}")
        } else if v >= 1.0 {
            format!("${v:.2}")
        } else {
            format!("${v:.4}")
        }
    }

    /// Significant-digit number with a unit: "419 FLOP/B".
    pub fn with_unit(v: f64, unit: &str) -> String {
        format!("{} {unit}", fmt_sig(v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_label_key_is_translated() {
        for k in Labels::KEYS {
            assert!(crate::core::base::has(k), "missing translation key {k}");
        }
        let ko = Labels::new(Lang::Ko);
        assert_ne!(ko.weights, Labels::new(Lang::En).weights);
    }

    #[test]
    fn hit_map_prefers_the_smallest_region() {
        let mut h = HitMap::default();
        h.push("bar", (0, 0, 100, 100), vec![]);
        h.point("dot", (50, 50), 4, vec![]);
        assert_eq!(h.at(50, 50).map(|r| r.id), Some("dot".to_string()));
        assert_eq!(h.at(10, 10).map(|r| r.id), Some("bar".to_string()));
        assert!(h.at(200, 10).is_none());
    }

    #[test]
    fn deferred_regions_are_made_only_when_asked_for() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        use std::sync::Arc;
        let made = Arc::new(AtomicUsize::new(0));
        let mut h = HitMap::default();
        h.push("bar", (0, 0, 100, 100), vec!["bar".into()]);
        let count = made.clone();
        h.point_with((50, 50), 4, move || {
            count.fetch_add(1, Ordering::SeqCst);
            ("dot".into(), vec!["a dot".into()])
        });
        assert_eq!(made.load(Ordering::SeqCst), 0, "made while drawing");
        assert_eq!(h.len(), 2);
        let dot = h.at(50, 50);
        assert_eq!(made.load(Ordering::SeqCst), 1);
        assert_eq!(
            dot.map(|r| (r.id, r.rect, r.lines)),
            Some(("dot".into(), (46, 46, 54, 54), vec!["a dot".into()]))
        );
        // The same map with the region made at once is equal to it.
        let mut eager = HitMap::default();
        eager.push("bar", (0, 0, 100, 100), vec!["bar".into()]);
        eager.point("dot", (50, 50), 4, vec!["a dot".into()]);
        assert_eq!(h, eager);
        assert!(h.get("dot").is_some() && h.get("nothing").is_none());
    }
}
