//! Axes: linear and logarithmic scales, readable ticks, and the frame every chart draws.
//!
//! Log axes put ticks on whole decades (1, 10, 100 … FLOP/B; 1 T, 10 T … FLOP/s) with faint
//! minor grid lines at 2–9 × each decade; token axes use powers of two (1k, 2k, 4k …);
//! linear axes use 1–2–5 steps.

use super::{text_style, DrawError, HitMap, Theme};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// How values map to pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScaleKind {
    /// Proportional.
    Linear,
    /// Logarithmic (any base; ticks chosen by the caller).
    Log,
}

/// A value → pixel mapping along one axis.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scale {
    /// Linear or log.
    pub kind: ScaleKind,
    /// Value at `px0`.
    pub min: f64,
    /// Value at `px1`.
    pub max: f64,
    /// Pixel of `min`.
    pub px0: i32,
    /// Pixel of `max`.
    pub px1: i32,
}

impl Scale {
    /// A linear scale.
    pub fn linear(min: f64, max: f64, px0: i32, px1: i32) -> Scale {
        let max = if max > min { max } else { min + 1.0 };
        Scale {
            kind: ScaleKind::Linear,
            min,
            max,
            px0,
            px1,
        }
    }

    /// A logarithmic scale; `min` and `max` must be positive (fixed up if not).
    pub fn log(min: f64, max: f64, px0: i32, px1: i32) -> Scale {
        let min = if min.is_finite() && min > 0.0 {
            min
        } else {
            1.0
        };
        let max = if max.is_finite() && max > min {
            max
        } else {
            min * 10.0
        };
        Scale {
            kind: ScaleKind::Log,
            min,
            max,
            px0,
            px1,
        }
    }

    /// Fraction 0…1 of the way from `min` to `max` (not clamped).
    pub fn frac(&self, v: f64) -> f64 {
        match self.kind {
            ScaleKind::Linear => (v - self.min) / (self.max - self.min),
            ScaleKind::Log => {
                if v <= 0.0 {
                    -1.0
                } else {
                    (v / self.min).ln() / (self.max / self.min).ln()
                }
            }
        }
    }

    /// Pixel of a value, clamped a little outside the axis so off-scale values stay drawable.
    pub fn map(&self, v: f64) -> i32 {
        self.map_f(v).round() as i32
    }

    /// Unrounded pixel of a value (for straight-line detection), clamped like [`Scale::map`].
    pub fn map_f(&self, v: f64) -> f64 {
        let f = self.frac(v);
        let f = if f.is_finite() {
            f.clamp(-0.5, 1.5)
        } else {
            0.0
        };
        self.px0 as f64 + f * (self.px1 - self.px0) as f64
    }

    /// Value at a pixel (inverse of [`Scale::map`]).
    pub fn value_at(&self, px: i32) -> f64 {
        let span = (self.px1 - self.px0) as f64;
        let f = if span == 0.0 {
            0.0
        } else {
            (px - self.px0) as f64 / span
        };
        match self.kind {
            ScaleKind::Linear => self.min + f * (self.max - self.min),
            ScaleKind::Log => self.min * (self.max / self.min).powf(f),
        }
    }

    /// Whether `v` lies within the axis range.
    pub fn contains(&self, v: f64) -> bool {
        let f = self.frac(v);
        (-1e-9..=1.0 + 1e-9).contains(&f)
    }
}

/// A "nice" step (1, 2 or 5 × 10^k) giving about `target` intervals over `span`.
pub fn nice_step(span: f64, target: usize) -> f64 {
    if !(span.is_finite() && span > 0.0) {
        return 1.0;
    }
    let raw = span / target.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let r = raw / mag;
    let m = if r <= 1.0 {
        1.0
    } else if r <= 2.0 {
        2.0
    } else if r <= 5.0 {
        5.0
    } else {
        10.0
    };
    m * mag
}

/// Rounds `max` up to a whole number of nice steps (so the top tick is labelled).
pub fn nice_max(max: f64, target: usize) -> f64 {
    let step = nice_step(max, target);
    (max / step).ceil().max(1.0) * step
}

/// Ticks 0, step, 2·step, … ≤ max (1–2–5 steps, about `target` of them).
pub fn linear_ticks(min: f64, max: f64, target: usize) -> Vec<f64> {
    let step = nice_step(max - min, target);
    let first = (min / step).ceil() as i64;
    let last = (max / step + 1e-9).floor() as i64;
    (first..=last.min(first + 100))
        .map(|i| i as f64 * step)
        .collect()
}

/// Whole decades 10^lo … 10^hi.
pub fn decade_ticks(lo: i32, hi: i32) -> Vec<f64> {
    (lo..=hi.min(lo + 40)).map(|e| 10f64.powi(e)).collect()
}

/// 2…9 × each decade strictly inside 10^lo … 10^hi (minor grid of a log axis).
pub fn decade_minor_ticks(lo: i32, hi: i32) -> Vec<f64> {
    (lo..hi.min(lo + 40))
        .flat_map(|e| (2..=9).map(move |m| m as f64 * 10f64.powi(e)))
        .collect()
}

/// Powers of two in [min, max] (token axes), thinned to at most `max_count` labels.
pub fn pow2_ticks(min: f64, max: f64, max_count: usize) -> Vec<f64> {
    let lo = min.max(1.0).log2().ceil() as i32;
    let hi = max.max(1.0).log2().floor() as i32;
    let n = (hi - lo + 1).max(0) as usize;
    let stride = n.div_ceil(max_count.max(1)).max(1);
    (lo..=hi)
        .filter(|e| ((e - lo) as usize).is_multiple_of(stride))
        .map(|e| 2f64.powi(e))
        .collect()
}

/// "1k", "4k", "128k", "1M" for token counts that are powers of two; plain otherwise.
pub fn fmt_tokens(v: f64) -> String {
    let n = v.round() as u64;
    if n >= 1 << 20 && n.is_multiple_of(1 << 20) {
        format!("{}M", n >> 20)
    } else if n >= 1024 && n.is_multiple_of(1024) {
        format!("{}k", n >> 10)
    } else {
        crate::core::base::group(n)
    }
}

/// SI-prefixed number for rate axes: 1 T, 10 T, 100 T, 1 P (unit in the axis title).
pub fn fmt_si(v: f64) -> String {
    const P: &[(f64, &str)] = &[
        (1e18, "E"),
        (1e15, "P"),
        (1e12, "T"),
        (1e9, "G"),
        (1e6, "M"),
        (1e3, "k"),
    ];
    for (s, p) in P {
        if v.abs() >= *s {
            return format!("{} {p}", crate::core::base::fmt_sig(v / s));
        }
    }
    crate::core::base::fmt_sig(v)
}

/// Decade labels for intensity axes: 0.001 … 0.1, 1, 10, …, 1,000,000, then 1e7….
pub fn fmt_decade(v: f64) -> String {
    if (1.0..1e7).contains(&v) {
        crate::core::base::group(v.round() as u64)
    } else if (1e-3..1.0).contains(&v) {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        format!("1e{}", v.log10().round() as i32)
    }
}

/// Plain number with thousands separators for linear axes (integers) or up to 2 decimals.
pub fn fmt_plain(v: f64) -> String {
    if v.fract().abs() < 1e-9 && v.abs() < 1e15 {
        let s = crate::core::base::group(v.abs().round() as u64);
        if v < 0.0 {
            format!("−{s}")
        } else {
            s
        }
    } else {
        crate::core::base::fmt_sig(v)
    }
}

/// The plot rectangle in pixels (inside the axes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlotRect {
    /// Left edge.
    pub left: i32,
    /// Top edge.
    pub top: i32,
    /// Right edge.
    pub right: i32,
    /// Bottom edge.
    pub bottom: i32,
}

impl PlotRect {
    /// Width in pixels.
    pub fn width(&self) -> i32 {
        self.right - self.left
    }
    /// Height in pixels.
    pub fn height(&self) -> i32 {
        self.bottom - self.top
    }
    /// Whether a point is inside.
    pub fn contains(&self, p: (i32, i32)) -> bool {
        p.0 >= self.left && p.0 <= self.right && p.1 >= self.top && p.1 <= self.bottom
    }
}

/// One axis to draw: its ticks (value, label), optional minor ticks and its title.
pub struct AxisSpec<'a> {
    /// Major ticks: value and label.
    pub ticks: Vec<(f64, String)>,
    /// Minor grid values (no label).
    pub minor: Vec<f64>,
    /// Title with unit, e.g. "Arithmetic intensity (FLOP/B)".
    pub title: &'a str,
}

/// Width in pixels of the widest label among `labels` at the tick font size.
pub fn widest<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    theme: &Theme,
    labels: impl IntoIterator<Item = String>,
) -> Result<i32, DrawError> {
    let style = text_style(theme, 0.92, theme.muted, Pos::new(HPos::Left, VPos::Top));
    let mut w = 0;
    for l in labels {
        let (tw, _) = area
            .estimate_text_size(&l, &style)
            .map_err(DrawError::backend)?;
        w = w.max(tw as i32);
    }
    Ok(w)
}

/// Left margin for a y axis with these tick labels (labels + gap + rotated title).
pub fn left_margin<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    theme: &Theme,
    y: &AxisSpec<'_>,
) -> Result<i32, DrawError> {
    let w = widest(area, theme, y.ticks.iter().map(|t| t.1.clone()))?;
    Ok(w + 8 + (theme.font_px * 1.9) as i32)
}

/// Bottom margin for an x axis (tick labels + title).
pub fn bottom_margin(theme: &Theme) -> i32 {
    (theme.font_px * 3.4) as i32
}

/// Draws grid, axis lines, ticks, tick labels and titles around `rect`.
pub fn draw_frame<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    theme: &Theme,
    rect: PlotRect,
    (xs, x): (&Scale, &AxisSpec<'_>),
    (ys, y): (&Scale, &AxisSpec<'_>),
) -> Result<(), DrawError> {
    let minor = ShapeStyle::from(theme.grid_minor).stroke_width(1);
    let major = ShapeStyle::from(theme.grid).stroke_width(1);
    for v in x.minor.iter().filter(|v| xs.contains(**v)) {
        let px = xs.map(*v);
        line(area, (px, rect.top), (px, rect.bottom), minor)?;
    }
    for v in y.minor.iter().filter(|v| ys.contains(**v)) {
        let py = ys.map(*v);
        line(area, (rect.left, py), (rect.right, py), minor)?;
    }
    for (v, _) in x.ticks.iter().filter(|t| xs.contains(t.0)) {
        let px = xs.map(*v);
        line(area, (px, rect.top), (px, rect.bottom), major)?;
    }
    for (v, _) in y.ticks.iter().filter(|t| ys.contains(t.0)) {
        let py = ys.map(*v);
        line(area, (rect.left, py), (rect.right, py), major)?;
    }
    let axis = ShapeStyle::from(theme.axis).stroke_width(1);
    line(
        area,
        (rect.left, rect.bottom),
        (rect.right, rect.bottom),
        axis,
    )?;
    line(area, (rect.left, rect.top), (rect.left, rect.bottom), axis)?;

    let xl = text_style(theme, 0.92, theme.muted, Pos::new(HPos::Center, VPos::Top));
    let mut last_right = i32::MIN;
    for (v, label) in x.ticks.iter().filter(|t| xs.contains(t.0)) {
        let px = xs.map(*v);
        line(area, (px, rect.bottom), (px, rect.bottom + 4), axis)?;
        // Skip a label that would overlap the previous one.
        let (w, _) = area
            .estimate_text_size(label, &xl)
            .map_err(DrawError::backend)?;
        let half = w as i32 / 2;
        if px - half < last_right + 6 {
            continue;
        }
        last_right = px + half;
        area.draw_text(label, &xl, (px, rect.bottom + 6))
            .map_err(DrawError::backend)?;
    }
    let yl = text_style(
        theme,
        0.92,
        theme.muted,
        Pos::new(HPos::Right, VPos::Center),
    );
    let mut last_top = i32::MAX;
    let lh = (theme.font_px * 1.1) as i32;
    for (v, label) in y.ticks.iter().filter(|t| ys.contains(t.0)) {
        let py = ys.map(*v);
        line(area, (rect.left - 4, py), (rect.left, py), axis)?;
        if py + lh / 2 > last_top - 2 {
            continue;
        }
        last_top = py - lh / 2;
        area.draw_text(label, &yl, (rect.left - 6, py))
            .map_err(DrawError::backend)?;
    }
    let xt = text_style(theme, 1.0, theme.text, Pos::new(HPos::Center, VPos::Bottom));
    let (_, h) = area.dim_in_pixel();
    area.draw_text(x.title, &xt, ((rect.left + rect.right) / 2, h as i32 - 4))
        .map_err(DrawError::backend)?;
    let yt = text_style(theme, 1.0, theme.text, Pos::new(HPos::Center, VPos::Top))
        .transform(FontTransform::Rotate270);
    area.draw_text(y.title, &yt, (4, (rect.top + rect.bottom) / 2))
        .map_err(DrawError::backend)?;
    Ok(())
}

/// Rounds a polyline to pixels, dropping points that lie on the straight line between their
/// neighbours (within ¼ px), so straight series are not drawn with rounding kinks.
pub fn polyline(pts: &[(f64, f64)]) -> Vec<(i32, i32)> {
    let mut keep: Vec<(f64, f64)> = Vec::with_capacity(pts.len());
    for (i, &p) in pts.iter().enumerate() {
        let next = pts.get(i + 1);
        let (Some(&a), Some(&b)) = (keep.last(), next) else {
            keep.push(p);
            continue;
        };
        // Distance of p from the segment a→b.
        let (dx, dy) = (b.0 - a.0, b.1 - a.1);
        let len = (dx * dx + dy * dy).sqrt();
        let d = if len == 0.0 {
            0.0
        } else {
            ((p.0 - a.0) * dy - (p.1 - a.1) * dx).abs() / len
        };
        if d > 0.25 {
            keep.push(p);
        }
    }
    keep.into_iter()
        .map(|(x, y)| (x.round() as i32, y.round() as i32))
        .collect()
}

/// A straight line.
pub fn line<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    a: (i32, i32),
    b: (i32, i32),
    style: ShapeStyle,
) -> Result<(), DrawError> {
    area.draw(&PathElement::new(vec![a, b], style))
        .map_err(DrawError::backend)
}

/// A polyline drawn with dashes `on` px long separated by `off` px gaps.
pub fn dashed<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    pts: &[(i32, i32)],
    (on, off): (f64, f64),
    style: ShapeStyle,
) -> Result<(), DrawError> {
    for seg in dash_segments(pts, on, off) {
        area.draw(&PathElement::new(seg, style))
            .map_err(DrawError::backend)?;
    }
    Ok(())
}

/// Splits a polyline into dashes (pure geometry, tested).
pub fn dash_segments(pts: &[(i32, i32)], on: f64, off: f64) -> Vec<Vec<(i32, i32)>> {
    let (on, off) = (on.max(1.0), off.max(1.0));
    let mut out = Vec::new();
    let mut cur: Vec<(i32, i32)> = Vec::new();
    let mut drawing = true;
    let mut left = on;
    for w in pts.windows(2) {
        let (a, b) = (w[0], w[1]);
        let (dx, dy) = ((b.0 - a.0) as f64, (b.1 - a.1) as f64);
        let len = (dx * dx + dy * dy).sqrt();
        if len == 0.0 {
            continue;
        }
        let mut t = 0.0;
        let at = |t: f64| {
            (
                (a.0 as f64 + dx * t / len).round() as i32,
                (a.1 as f64 + dy * t / len).round() as i32,
            )
        };
        if drawing && cur.is_empty() {
            cur.push(at(0.0));
        }
        while t < len {
            let step = left.min(len - t);
            t += step;
            left -= step;
            if drawing {
                cur.push(at(t));
            }
            if left <= 1e-9 {
                if drawing {
                    out.push(std::mem::take(&mut cur));
                    left = off;
                } else {
                    cur.push(at(t));
                    left = on;
                }
                drawing = !drawing;
            }
        }
    }
    if cur.len() >= 2 {
        out.push(cur);
    }
    out
}

/// Moves label positions apart so consecutive ones are at least `gap` px apart, keeping them
/// within [lo, hi] where possible. Returns new positions in the input order.
pub fn spread(ys: &[i32], gap: i32, lo: i32, hi: i32) -> Vec<i32> {
    let key = |i: usize| ys.get(i).copied().unwrap_or(0);
    let idx = crate::core::base::order_by(ys.len(), &|a, b| key(a).cmp(&key(b)));
    let mut placed: Vec<i32> = idx
        .iter()
        .map(|i| ys.get(*i).copied().unwrap_or(0))
        .collect();
    for i in 1..placed.len() {
        if placed[i] < placed[i - 1] + gap {
            placed[i] = placed[i - 1] + gap;
        }
    }
    // Shift back up if the last one went past `hi`.
    if let Some(last) = placed.last().copied() {
        if last > hi {
            let d = last - hi;
            for p in placed.iter_mut() {
                *p -= d;
            }
            for i in (0..placed.len().saturating_sub(1)).rev() {
                if placed[i] > placed[i + 1] - gap {
                    placed[i] = placed[i + 1] - gap;
                }
            }
        }
    }
    let mut out = vec![0; ys.len()];
    for (k, i) in idx.iter().enumerate() {
        if let (Some(o), Some(p)) = (out.get_mut(*i), placed.get(k)) {
            *o = (*p).max(lo);
        }
    }
    out
}

/// Greedy label placement: each label tries its candidate anchors in order and takes the
/// first whose box stays inside the bounds and clear of everything placed or blocked so far.
/// Placed labels get a background box so lines crossing them do not hurt legibility.
#[derive(Debug, Clone, Default)]
pub struct Placer {
    taken: Vec<(i32, i32, i32, i32)>,
    bounds: (i32, i32, i32, i32),
}

/// A candidate anchor: point and which side of the text sits on it.
pub type Anchor = (i32, i32, HPos, VPos);

impl Placer {
    /// A placer for labels inside (left, top, right, bottom).
    pub fn new(bounds: (i32, i32, i32, i32)) -> Placer {
        Placer {
            taken: Vec::new(),
            bounds,
        }
    }

    /// Marks a region (a marker, a legend) as occupied.
    pub fn block(&mut self, r: (i32, i32, i32, i32)) {
        self.taken.push(r);
    }

    fn free(&self, r: (i32, i32, i32, i32)) -> bool {
        let (l, t, rr, b) = self.bounds;
        let inside = r.0 >= l && r.1 >= t && r.2 <= rr && r.3 <= b;
        inside
            && !self
                .taken
                .iter()
                .any(|o| r.0 < o.2 + 2 && r.2 + 2 > o.0 && r.1 < o.3 + 1 && r.3 + 1 > o.1)
    }

    /// Places `text` at the first free candidate (or, when `force`, at the first candidate
    /// anyway). Returns the box used, or `None` when the label was left out.
    /// `label` is (text, size relative to the theme's base size, colour).
    pub fn place<DB: DrawingBackend>(
        &mut self,
        area: &DrawingArea<DB, Shift>,
        theme: &Theme,
        (text, rel, color): (&str, f64, RGBColor),
        candidates: &[Anchor],
        force: bool,
    ) -> Result<Option<(i32, i32, i32, i32)>, DrawError> {
        let probe = text_style(theme, rel, color, Pos::new(HPos::Left, VPos::Top));
        let (tw, th) = area
            .estimate_text_size(text, &probe)
            .map_err(DrawError::backend)?;
        let (tw, th) = (tw as i32, th as i32);
        let boxed = |&(x, y, hp, vp): &Anchor| {
            let x0 = match hp {
                HPos::Left => x,
                HPos::Center => x - tw / 2,
                HPos::Right => x - tw,
            };
            let y0 = match vp {
                VPos::Top => y,
                VPos::Center => y - th / 2,
                VPos::Bottom => y - th,
            };
            (x0, y0, x0 + tw, y0 + th)
        };
        let inside = |r: (i32, i32, i32, i32)| {
            let (l, t, rr, b) = self.bounds;
            r.0 >= l && r.1 >= t && r.2 <= rr && r.3 <= b
        };
        // Clear of everything; else (when forced) at least inside; else the first.
        let chosen = candidates
            .iter()
            .find(|c| self.free(boxed(c)))
            .or(if force {
                candidates
                    .iter()
                    .find(|c| inside(boxed(c)))
                    .or(candidates.first())
            } else {
                None
            });
        let Some(c) = chosen else { return Ok(None) };
        let r = boxed(c);
        area.draw(&Rectangle::new(
            [(r.0 - 2, r.1 - 1), (r.2 + 2, r.3 + 1)],
            theme.background.mix(0.85).filled(),
        ))
        .map_err(DrawError::backend)?;
        let style = text_style(theme, rel, color, Pos::new(c.2, c.3));
        area.draw_text(text, &style, (c.0, c.1))
            .map_err(DrawError::backend)?;
        self.taken.push(r);
        Ok(Some(r))
    }
}

/// Right padding so the last x tick label is not cut off.
pub fn right_pad<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    theme: &Theme,
    x: &AxisSpec<'_>,
) -> Result<i32, DrawError> {
    let w = widest(area, theme, x.ticks.last().map(|t| t.1.clone()))?;
    Ok((w * 3 / 5 + 8).max(16))
}

/// Ticks 0 … `max` (about `target` of them) labelled as plain numbers.
pub fn plain_ticks(max: f64, target: usize) -> Vec<(f64, String)> {
    linear_ticks(0.0, max, target)
        .into_iter()
        .map(|v| (v, fmt_plain(v)))
        .collect()
}

/// The plot rectangle of an `(w, h)` area below a legend ending at `top`: room on the left
/// for the y labels, on the right for the last x label, at the bottom for the x axis.
/// `TooSmall` when narrower or lower than `min` (width, height).
pub fn plot_rect<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    theme: &Theme,
    (w, h, top): (i32, i32, i32),
    (x, y): (&AxisSpec<'_>, &AxisSpec<'_>),
    min: (i32, i32),
) -> Result<PlotRect, DrawError> {
    let rect = PlotRect {
        left: left_margin(area, theme, y)?,
        top: top + 8,
        right: w - right_pad(area, theme, x)?,
        bottom: h - bottom_margin(theme),
    };
    if rect.width() < min.0 || rect.height() < min.1 {
        return Err(DrawError::TooSmall);
    }
    Ok(rect)
}

/// What a chart's drawing steps leave behind: the hover regions, and the places taken that
/// labels must avoid.
pub struct Marks {
    /// Places taken (markers, labels).
    pub placer: Placer,
    /// Hover regions.
    pub hits: HitMap,
}

impl Marks {
    /// Nothing taken yet inside `bounds` (left, top, right, bottom).
    pub fn new(bounds: (i32, i32, i32, i32)) -> Marks {
        Marks {
            placer: Placer::new(bounds),
            hits: HitMap::default(),
        }
    }
}

/// A plot's rectangle and the scales of its two axes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Frame {
    /// The plot rectangle.
    pub rect: PlotRect,
    /// The x scale.
    pub xs: Scale,
    /// The y scale.
    pub ys: Scale,
}

impl Frame {
    /// The pixel of the data point (x, y).
    pub fn px(&self, x: f64, y: f64) -> (i32, i32) {
        (self.xs.map(x), self.ys.map(y))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_scale_maps_decades_evenly() {
        let s = Scale::log(1.0, 1e4, 0, 400);
        assert_eq!(s.map(1.0), 0);
        assert_eq!(s.map(10.0), 100);
        assert_eq!(s.map(1e3), 300);
        assert!((s.value_at(200) - 100.0).abs() < 1e-9);
        assert_eq!(decade_ticks(-1, 2), vec![0.1, 1.0, 10.0, 100.0]);
        assert_eq!(decade_minor_ticks(0, 1).len(), 8);
    }

    #[test]
    fn ticks_are_readable() {
        assert_eq!(
            linear_ticks(0.0, 10.0, 5),
            vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]
        );
        assert_eq!(nice_max(43.0, 5), 50.0);
        assert_eq!(fmt_si(1e12), "1 T");
        assert_eq!(fmt_si(362.05e12), "362.1 T");
        assert_eq!(fmt_decade(1000.0), "1,000");
        assert_eq!(fmt_decade(0.1), "0.1");
        assert_eq!(fmt_tokens(4096.0), "4k");
        assert_eq!(fmt_tokens(131072.0), "128k");
        assert_eq!(
            pow2_ticks(1000.0, 40000.0, 10),
            vec![1024.0, 2048.0, 4096.0, 8192.0, 16384.0, 32768.0]
        );
        assert_eq!(pow2_ticks(1.0, 1024.0, 4).len(), 4);
    }

    #[test]
    fn straight_runs_collapse() {
        let pts: Vec<(f64, f64)> = (0..10).map(|i| (i as f64 * 3.3, i as f64 * 1.7)).collect();
        assert_eq!(polyline(&pts), vec![(0, 0), (30, 15)]);
        let bent = [(0.0, 0.0), (10.0, 0.0), (10.0, 10.0)];
        assert_eq!(polyline(&bent).len(), 3);
    }

    #[test]
    fn dashes_cover_the_line() {
        let d = dash_segments(&[(0, 0), (100, 0)], 10.0, 5.0);
        assert_eq!(d.len(), 7); // 0-10, 15-25, …, 90-100
        assert_eq!(d.first().and_then(|s| s.first()), Some(&(0, 0)));
        assert!(dash_segments(&[(0, 0)], 4.0, 4.0).is_empty());
    }

    #[test]
    fn spread_separates_labels() {
        let s = spread(&[100, 102, 50], 14, 0, 200);
        assert_eq!(s[2], 50);
        assert!(s[1] - s[0] >= 14);
        let t = spread(&[195, 198], 14, 0, 200);
        assert!(t[1] <= 200 && t[1] - t[0] >= 14);
    }
}
