//! KV-cache memory against tokens per request: one line per batch size (a neutral ramp,
//! labelled at its end), one KV-budget line per GPU (GPU colours), and a cross where each
//! batch runs out of memory on each GPU.

use super::axis::{self, AxisSpec, Frame, Marks, PlotRect, Scale};
use super::{
    chart, draw_legend, fmt, prepare, text_style, DataTable, DrawError, HitMap, Labels, Swatch,
    Theme,
};
use crate::core::base::group;
use crate::core::base::{Bytes, GIB};
use crate::core::present::KvSeries;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Draws the KV chart.
pub fn draw<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    data: &KvSeries,
    theme: &Theme,
    labels: &Labels,
) -> Result<HitMap, DrawError> {
    let (w, h) = prepare(area, theme)?;
    let max_t = data.max_tokens().0 as f64;
    if data.lines.is_empty() || max_t <= 0.0 {
        return super::draw_empty(area, theme, labels);
    }
    let top = legend(area, data, theme, labels, w)?;
    let end_labels: Vec<String> = data
        .lines
        .iter()
        .map(|l| format!("{} {}", labels.batch, l.batch))
        .collect();
    let right_w = axis::widest(area, theme, end_labels.iter().cloned())? + 12;
    let frame = frame(area, data, (theme, labels), (w, h, top, right_w), max_t)?;
    let rect = frame.rect;
    let plot = Plot {
        area,
        data,
        theme,
        labels,
        frame,
    };
    plot.current_context(max_t)?;
    let mut m = Marks::new((rect.left, rect.top, rect.right + right_w, rect.bottom));
    plot.budget_lines(&mut m)?;
    let ends = plot.batch_lines(&mut m)?;
    plot.oom_crosses(&mut m)?;
    let ends = (&end_labels[..], &ends[..], right_w);
    batch_labels(area, theme, rect, ends, &mut m.placer)?;
    plot.budget_labels(&mut m.placer)?;
    Ok(m.hits)
}

/// Draws the legend (one KV-budget line per GPU), if any; returns its bottom.
fn legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    data: &KvSeries,
    theme: &Theme,
    labels: &Labels,
    w: i32,
) -> Result<i32, DrawError> {
    let legend: Vec<(Swatch, String)> = data
        .capacities
        .iter()
        .enumerate()
        .map(|(i, c)| {
            (
                Swatch::Line(theme.gpu(i)),
                format!("{} {}", c.gpu, labels.kv_budget),
            )
        })
        .collect();
    if legend.is_empty() {
        Ok(8)
    } else {
        draw_legend(area, theme, &legend, 8, 4, w - 8)
    }
}

/// Lays out and draws the axes (tokens 0…`max_t`, GiB from 0), leaving `right_w` on the
/// right for the batch labels.
fn frame<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    data: &KvSeries,
    (theme, labels): (&Theme, &Labels),
    (w, h, top, right_w): (i32, i32, i32, i32),
    max_t: f64,
) -> Result<Frame, DrawError> {
    let top_line = data
        .lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.1))
        .max();
    let top_budget = data.capacities.iter().map(|c| c.kv_budget).max();
    // Keep the budgets readable: lines of big batches leave through the top (clipped) rather
    // than squashing every budget line against the axis.
    let line_gib = top_line.unwrap_or(Bytes::ZERO).gib();
    let budget_gib = top_budget.unwrap_or(Bytes::ZERO).gib();
    let shown = if budget_gib > 0.0 {
        line_gib.min(budget_gib * 1.6).max(budget_gib)
    } else {
        line_gib
    };
    let ymax = axis::nice_max(shown.max(1.0) * 1.05, 6);
    let y_axis = AxisSpec {
        ticks: axis::plain_ticks(ymax, 6),
        minor: vec![],
        title: labels.kv_axis,
    };
    let x_axis = AxisSpec {
        ticks: axis::plain_ticks(max_t, 6),
        minor: vec![],
        title: labels.tokens_axis,
    };
    let rect = PlotRect {
        left: axis::left_margin(area, theme, &y_axis)?,
        top: top + 8,
        right: w - right_w.clamp(40, w / 4),
        bottom: h - axis::bottom_margin(theme),
    };
    if rect.width() < 80 || rect.height() < 60 {
        return Err(DrawError::TooSmall);
    }
    let xs = Scale::linear(0.0, max_t, rect.left, rect.right);
    let ys = Scale::linear(0.0, ymax, rect.bottom, rect.top);
    axis::draw_frame(area, theme, rect, (&xs, &x_axis), (&ys, &y_axis))?;
    Ok(Frame { rect, xs, ys })
}

/// What each drawing step after the axes reads: the area, the data, the theme and labels,
/// and the laid-out frame.
struct Plot<'a, DB: DrawingBackend> {
    area: &'a DrawingArea<DB, Shift>,
    data: &'a KvSeries,
    theme: &'a Theme,
    labels: &'a Labels,
    frame: Frame,
}

impl<DB: DrawingBackend> Plot<'_, DB> {
    /// The current context: a dotted vertical line with its label.
    fn current_context(&self, max_t: f64) -> Result<(), DrawError> {
        let (data, theme) = (self.data, self.theme);
        let ct = data.current_tokens.0 as f64;
        if ct > 0.0 && ct <= max_t {
            let rect = self.frame.rect;
            let x = self.frame.xs.map(ct);
            axis::dashed(
                self.area,
                &[(x, rect.top), (x, rect.bottom)],
                (2.0, 3.0),
                theme.muted.stroke_width(1),
            )?;
            let s = text_style(theme, 0.85, theme.muted, Pos::new(HPos::Left, VPos::Top));
            let label = format!(
                "{} {}",
                self.labels.current_context,
                group(data.current_tokens.0)
            );
            self.area
                .draw_text(&label, &s, (x + 4, rect.top + 2))
                .map_err(DrawError::backend)?;
        }
        Ok(())
    }

    /// The pixel row of a KV budget.
    fn budget_y(&self, budget: Bytes) -> i32 {
        self.frame.ys.map(budget.gib())
    }

    /// Budget lines across the plot, in GPU colours.
    fn budget_lines(&self, m: &mut Marks) -> Result<(), DrawError> {
        let (rect, labels) = (self.frame.rect, self.labels);
        for (i, c) in self.data.capacities.iter().enumerate() {
            let y = self.budget_y(c.kv_budget);
            axis::line(
                self.area,
                (rect.left, y),
                (rect.right, y),
                self.theme.gpu(i).stroke_width(2),
            )?;
            m.hits.push(
                format!("budget/{}", c.gpu),
                (rect.left, y - 3, rect.right, y + 3),
                vec![
                    format!("{} · {}", c.gpu, labels.kv_budget),
                    fmt::bytes(c.kv_budget),
                    format!("{}: {}", labels.capacity, fmt::bytes(c.capacity)),
                ],
            );
        }
        Ok(())
    }

    /// Batch lines (neutral ramp), clipped at the top; returns where each ends for its label.
    fn batch_lines(&self, m: &mut Marks) -> Result<Vec<(i32, i32)>, DrawError> {
        let (xs, ys, rect) = (&self.frame.xs, &self.frame.ys, self.frame.rect);
        let n = self.data.lines.len();
        let mut ends = Vec::with_capacity(n);
        let (batch_word, tokens_word) = (self.labels.batch, self.labels.tokens_axis);
        for (i, l) in self.data.lines.iter().enumerate() {
            let col = self.theme.ramp(i, n);
            let fpts: Vec<(f64, f64)> = l
                .points
                .iter()
                .map(|(t, b)| (xs.map_f(t.0 as f64), ys.map_f(b.gib())))
                .collect();
            let pts = axis::polyline(&fpts);
            // A line leaving the top of the plot stops at its edge.
            let clipped = clip_top(&pts, rect.top);
            self.area
                .draw(&PathElement::new(clipped.clone(), col.stroke_width(2)))
                .map_err(DrawError::backend)?;
            ends.push(clipped.last().copied().unwrap_or((rect.right, rect.bottom)));
            for (t, b) in &l.points {
                let p = (xs.map(t.0 as f64), ys.map(b.gib()));
                if rect.contains(p) && t.0 > 0 {
                    // Made on hover: formatting 165 tooltips took most of this chart's drawing.
                    let (batch, tokens, bytes) = (l.batch, t.0, *b);
                    m.hits.point_with(p, 5, move || {
                        (
                            format!("kv/{batch}/{tokens}"),
                            vec![
                                format!("{batch_word} {batch} · {} {tokens_word}", group(tokens)),
                                fmt::bytes(bytes),
                            ],
                        )
                    });
                }
            }
        }
        Ok(ends)
    }

    /// Out-of-memory crosses where a batch line meets a budget line.
    fn oom_crosses(&self, m: &mut Marks) -> Result<(), DrawError> {
        let labels = self.labels;
        for o in &self.data.oom {
            let Some(c) = self.data.capacities.get(o.gpu) else {
                continue;
            };
            let p = self.frame.px(o.tokens.0 as f64, c.kv_budget.gib());
            cross(self.area, p, 5, self.theme.gpu(o.gpu).stroke_width(2))?;
            m.placer.block((p.0 - 6, p.1 - 6, p.0 + 6, p.1 + 6));
            m.hits.point(
                format!("oom/{}/{}", c.gpu, o.batch),
                p,
                6,
                vec![
                    format!("{} {} · {}", labels.batch, o.batch, c.gpu),
                    format!("{}: {}", labels.runs_out_at, group(o.tokens.0)),
                ],
            );
        }
        Ok(())
    }

    /// Budget labels: above the line at the left, else below, else further right.
    fn budget_labels(&self, placer: &mut axis::Placer) -> Result<(), DrawError> {
        let rect = self.frame.rect;
        for (i, c) in self.data.capacities.iter().enumerate() {
            let y = self.budget_y(c.kv_budget);
            let label = format!(
                "{} {}: {}",
                c.gpu,
                self.labels.kv_budget,
                c.kv_budget.fmt_gib()
            );
            let x = rect.left + 6;
            let mid = (rect.left + rect.right) / 2;
            let cands = [
                (x, y - 3, HPos::Left, VPos::Bottom),
                (x, y + 3, HPos::Left, VPos::Top),
                (mid, y - 3, HPos::Center, VPos::Bottom),
                (mid, y + 3, HPos::Center, VPos::Top),
                (rect.right - 4, y - 3, HPos::Right, VPos::Bottom),
                (rect.right - 4, y + 3, HPos::Right, VPos::Top),
            ];
            let text = (&label[..], 0.85, self.theme.gpu(i));
            placer.place(self.area, self.theme, text, &cands, true)?;
        }
        Ok(())
    }
}

/// An x of half-size `r` centred on `p`.
fn cross<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    p: (i32, i32),
    r: i32,
    style: ShapeStyle,
) -> Result<(), DrawError> {
    axis::line(area, (p.0 - r, p.1 - r), (p.0 + r, p.1 + r), style)?;
    axis::line(area, (p.0 - r, p.1 + r), (p.0 + r, p.1 - r), style)
}

/// Batch labels at the line ends, spread apart vertically.
fn batch_labels<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    theme: &Theme,
    rect: PlotRect,
    (end_labels, ends, right_w): (&[String], &[(i32, i32)], i32),
    placer: &mut axis::Placer,
) -> Result<(), DrawError> {
    let n = ends.len();
    let ys_end: Vec<i32> = ends.iter().map(|p| p.1).collect();
    let gap = (theme.font_px * 1.15) as i32;
    let placed = axis::spread(&ys_end, gap, rect.top, rect.bottom);
    for (i, (label, y)) in end_labels.iter().zip(placed).enumerate() {
        let x = ends.get(i).map(|p| p.0).unwrap_or(rect.right);
        let s = text_style(
            theme,
            0.85,
            theme.ramp(i, n),
            Pos::new(HPos::Left, VPos::Center),
        );
        area.draw_text(label, &s, (x + 5, y))
            .map_err(DrawError::backend)?;
        placer.block((x + 5, y - gap / 2, x + 5 + right_w, y + gap / 2));
    }
    Ok(())
}

/// Cuts a polyline where it first crosses `top` (pixel y grows downwards).
fn clip_top(pts: &[(i32, i32)], top: i32) -> Vec<(i32, i32)> {
    let mut out = Vec::with_capacity(pts.len());
    for w in pts.windows(2) {
        let (a, b) = (w[0], w[1]);
        if out.is_empty() {
            out.push(a);
        }
        if b.1 >= top {
            out.push(b);
        } else {
            let f = if a.1 == b.1 {
                0.0
            } else {
                (a.1 - top) as f64 / (a.1 - b.1) as f64
            };
            out.push(((a.0 as f64 + f * (b.0 - a.0) as f64).round() as i32, top));
            return out;
        }
    }
    if out.is_empty() {
        out.extend(pts.first().copied());
    }
    out
}

/// Table: tokens, then KV memory (GiB) for each batch size.
pub fn table(data: &KvSeries, labels: &Labels) -> DataTable {
    let mut headers = vec![labels.tokens_axis.to_string()];
    headers.extend(
        data.lines
            .iter()
            .map(|l| format!("{} {} (GiB)", labels.batch, l.batch)),
    );
    let rows = data
        .lines
        .first()
        .map(|first| {
            first
                .points
                .iter()
                .enumerate()
                .map(|(i, (t, _))| {
                    let mut row = vec![group(t.0)];
                    row.extend(data.lines.iter().map(|l| {
                        l.points
                            .get(i)
                            .map(|p| format!("{:.2}", p.1 .0 as f64 / GIB as f64))
                            .unwrap_or_default()
                    }));
                    row
                })
                .collect()
        })
        .unwrap_or_default();
    DataTable { headers, rows }
}

chart!(KvSeries, labelled);
