//! "Does it fit?": one horizontal stacked bar per GPU (weights, KV cache, activations,
//! overhead, free) against its capacity, with the verdict under the GPU's name.

use super::axis::{self, AxisSpec, PlotRect, Scale};
use super::{
    chart, draw_legend, fmt, prepare, text_style, DataTable, DrawError, HitMap, Labels, Swatch,
    Theme,
};
use crate::core::base::{Bytes, GIB};
use crate::core::present::{MemoryBar, MemoryBars};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

const BAR_H: i32 = 26;
const ROW_H: i32 = 50;

/// Draws the memory bars. Layout: legend on top, one row per GPU (name and verdict on the
/// left, bar on the right), GiB axis at the bottom.
pub fn draw<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    data: &MemoryBars,
    theme: &Theme,
    labels: &Labels,
) -> Result<HitMap, DrawError> {
    let (w, h) = prepare(area, theme)?;
    if data.bars.is_empty() {
        return super::draw_empty(area, theme, labels);
    }
    let top = legend(area, data, theme, labels, w)?;
    let (rect, xs, stacked) = frame(area, data, (theme, labels), (w, h, top))?;
    let mut hits = HitMap::default();
    let row_h = (rect.height() / data.bars.len() as i32).min(ROW_H + 50);
    for (i, bar) in data.bars.iter().enumerate() {
        let cy = rect.top + row_h * i as i32 + row_h / 2 + if stacked { 16 } else { 0 };
        let row = Row {
            cy,
            y0: cy - BAR_H / 2,
            y1: cy + BAR_H / 2,
            stacked,
        };
        draw_names(area, bar, (theme, labels), rect.left, &row)?;
        draw_segments(area, bar, (theme, labels), &xs, &row, &mut hits)?;
        draw_capacity(area, bar, (theme, labels), (rect, &xs), &row, &mut hits)?;
    }
    Ok(hits)
}

/// Where one GPU's row sits: its centre, the bar's top and bottom, names above or beside.
struct Row {
    /// Vertical centre.
    cy: i32,
    /// Top of the bar.
    y0: i32,
    /// Bottom of the bar.
    y1: i32,
    /// Names above the bar (narrow screens) rather than to its left.
    stacked: bool,
}

/// Draws the legend (the parts, and "over" when a GPU does not fit); returns its bottom.
fn legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    data: &MemoryBars,
    theme: &Theme,
    labels: &Labels,
    w: i32,
) -> Result<i32, DrawError> {
    let legend = [
        (Swatch::Box(theme.weights), labels.weights.to_string()),
        (Swatch::Box(theme.kv), labels.kv.to_string()),
        (
            Swatch::Box(theme.activations),
            labels.activations.to_string(),
        ),
        (Swatch::Box(theme.overhead), labels.overhead.to_string()),
        (Swatch::Box(theme.free), labels.free.to_string()),
    ];
    let mut legend = legend.to_vec();
    if data.bars.iter().any(|b| !b.fits()) {
        legend.push((Swatch::Box(theme.bad), labels.over.to_string()));
    }
    draw_legend(area, theme, &legend, 8, 4, w - 8)
}

/// Lays out and draws the GiB axis; returns the plot rectangle, the x scale and whether
/// the names go above the bars.
fn frame<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    data: &MemoryBars,
    (theme, labels): (&Theme, &Labels),
    (w, h, top): (i32, i32, i32),
) -> Result<(PlotRect, Scale, bool), DrawError> {
    let names = data
        .bars
        .iter()
        .flat_map(|b| [b.gpu.clone(), verdict(b, labels)]);
    let name_w = axis::widest(area, theme, names)?;
    // Narrow screens: names go above the bars, which then use the full width.
    let stacked = w < 520 || name_w > w / 2;
    let max_gib = axis::nice_max(data.max_bytes().gib().max(1.0) * 1.02, 6);
    let x_axis = AxisSpec {
        ticks: axis::plain_ticks(max_gib, 6),
        minor: vec![],
        title: labels.memory_axis,
    };
    let rect = PlotRect {
        left: if stacked { 12 } else { 8 + name_w + 10 },
        top: top + 6,
        right: w - axis::right_pad(area, theme, &x_axis)?,
        bottom: h - axis::bottom_margin(theme),
    };
    if rect.width() < 60 || rect.height() < ROW_H * data.bars.len() as i32 / 2 {
        return Err(DrawError::TooSmall);
    }
    let xs = Scale::linear(0.0, max_gib, rect.left, rect.right);
    let ys = Scale::linear(0.0, 1.0, rect.bottom, rect.top);
    let y_axis = AxisSpec {
        ticks: vec![],
        minor: vec![],
        title: "",
    };
    axis::draw_frame(area, theme, rect, (&xs, &x_axis), (&ys, &y_axis))?;
    Ok((rect, xs, stacked))
}

/// The GPU's name and verdict: above the bar when stacked, else right-aligned to its left.
fn draw_names<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    bar: &MemoryBar,
    (theme, labels): (&Theme, &Labels),
    left: i32,
    row: &Row,
) -> Result<(), DrawError> {
    let (cy, y0) = (row.cy, row.y0);
    let vcol = if bar.fits() { theme.good } else { theme.bad };
    if row.stacked {
        let st = text_style(theme, 1.0, theme.text, Pos::new(HPos::Left, VPos::Bottom));
        let lh = (theme.font_px * 1.25) as i32;
        area.draw_text(&bar.gpu, &st, (left, y0 - 6 - lh))
            .map_err(DrawError::backend)?;
        let vs = text_style(theme, 0.92, vcol, Pos::new(HPos::Left, VPos::Bottom));
        area.draw_text(&verdict(bar, labels), &vs, (left, y0 - 5))
            .map_err(DrawError::backend)?;
    } else {
        let name_style = text_style(theme, 1.0, theme.text, Pos::new(HPos::Right, VPos::Bottom));
        area.draw_text(&bar.gpu, &name_style, (left - 10, cy - 1))
            .map_err(DrawError::backend)?;
        let vstyle = text_style(theme, 0.92, vcol, Pos::new(HPos::Right, VPos::Top));
        area.draw_text(&verdict(bar, labels), &vstyle, (left - 10, cy + 2))
            .map_err(DrawError::backend)?;
    }
    Ok(())
}

/// The stacked parts of one bar, then the outline of the part beyond the capacity.
fn draw_segments<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    bar: &MemoryBar,
    (theme, labels): (&Theme, &Labels),
    xs: &Scale,
    row: &Row,
    hits: &mut HitMap,
) -> Result<(), DrawError> {
    let (y0, y1) = (row.y0, row.y1);
    let segments = [
        ("weights", labels.weights, bar.weights, theme.weights),
        ("kv", labels.kv, bar.kv, theme.kv),
        (
            "activations",
            labels.activations,
            bar.activations,
            theme.activations,
        ),
        ("overhead", labels.overhead, bar.overhead, theme.overhead),
        ("free", labels.free, bar.free, theme.free),
    ];
    let mut acc = Bytes::ZERO;
    for (id, name, size, color) in segments {
        if size.0 == 0 {
            continue;
        }
        let (a, b) = (xs.map(acc.gib()), xs.map((acc + size).gib()));
        acc = acc + size;
        area.draw(&Rectangle::new(
            [(a, y0), (b.max(a + 1), y1)],
            color.filled(),
        ))
        .map_err(DrawError::backend)?;
        hits.push(
            format!("{}/{id}", bar.gpu),
            (a, y0, b.max(a + 2), y1),
            vec![
                format!("{} · {name}", bar.gpu),
                fmt::bytes(size),
                format!("{:.1}% {}", share(size, bar.capacity), labels.capacity),
            ],
        );
    }
    // Over capacity: outline the part beyond the capacity line.
    if bar.over.0 > 0 {
        let (a, b) = (xs.map(bar.capacity.gib()), xs.map(bar.used().gib()));
        area.draw(&Rectangle::new(
            [(a, y0 - 3), (b, y1 + 3)],
            theme.bad.stroke_width(2),
        ))
        .map_err(DrawError::backend)?;
        hits.push(
            format!("{}/over", bar.gpu),
            (a, y0 - 3, b, y1 + 3),
            vec![
                format!("{} · {}", bar.gpu, labels.over),
                fmt::bytes(bar.over),
            ],
        );
    }
    Ok(())
}

/// The capacity marker: a tick through the bar and its label, kept inside the plot.
fn draw_capacity<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    bar: &MemoryBar,
    (theme, labels): (&Theme, &Labels),
    (rect, xs): (PlotRect, &Scale),
    row: &Row,
    hits: &mut HitMap,
) -> Result<(), DrawError> {
    let (y0, y1) = (row.y0, row.y1);
    let cx = xs.map(bar.capacity.gib());
    axis::line(area, (cx, y0 - 6), (cx, y1 + 6), theme.text.stroke_width(2))?;
    let cap = format!("{} {}", labels.capacity, bar.capacity.fmt_gib());
    let (tw, _) = area
        .estimate_text_size(&cap, &text_style(theme, 0.85, theme.muted, Pos::default()))
        .map_err(DrawError::backend)?;
    let anchor = if cx + tw as i32 / 2 > rect.right {
        HPos::Right
    } else {
        HPos::Center
    };
    let cap_x = if matches!(anchor, HPos::Right) {
        rect.right
    } else {
        cx
    };
    let (vpos, cap_y) = if row.stacked {
        (VPos::Top, y1 + 7)
    } else {
        (VPos::Bottom, y0 - 7)
    };
    let cstyle = text_style(theme, 0.85, theme.muted, Pos::new(anchor, vpos));
    area.draw_text(&cap, &cstyle, (cap_x, cap_y))
        .map_err(DrawError::backend)?;
    hits.push(
        format!("{}/capacity", bar.gpu),
        (cx - 3, y0 - 6, cx + 3, y1 + 6),
        vec![
            format!("{} · {}", bar.gpu, labels.capacity),
            fmt::bytes(bar.capacity),
        ],
    );
    Ok(())
}

/// "fits · 9.8 GiB free" or "does not fit · 3.2 GiB over".
fn verdict(b: &MemoryBar, labels: &Labels) -> String {
    if b.fits() {
        format!("{} · {}: {}", labels.fits, labels.free, b.free.fmt_gib())
    } else {
        format!(
            "{} · {}: +{}",
            labels.does_not_fit,
            labels.over,
            b.over.fmt_gib()
        )
    }
}

fn share(part: Bytes, whole: Bytes) -> f64 {
    if whole.0 == 0 {
        0.0
    } else {
        part.0 as f64 / whole.0 as f64 * 100.0
    }
}

/// The table alternative: one row per GPU, all parts in GiB.
pub fn table(data: &MemoryBars, labels: &Labels) -> DataTable {
    let gib = |b: Bytes| format!("{:.2}", b.0 as f64 / GIB as f64);
    DataTable {
        headers: [
            labels.gpu,
            labels.weights,
            labels.kv,
            labels.activations,
            labels.overhead,
            labels.free,
            labels.over,
            labels.capacity,
        ]
        .iter()
        .enumerate()
        .map(|(i, h)| {
            if i == 0 {
                h.to_string()
            } else {
                format!("{h} (GiB)")
            }
        })
        .collect(),
        rows: data
            .bars
            .iter()
            .map(|b| {
                vec![
                    b.gpu.clone(),
                    gib(b.weights),
                    gib(b.kv),
                    gib(b.activations),
                    gib(b.overhead),
                    gib(b.free),
                    gib(b.over),
                    gib(b.capacity),
                ]
            })
            .collect(),
    }
}

/// Legend + one row per GPU (taller on narrow screens, where names sit above) + axis.
fn height(data: &MemoryBars, width: u32) -> u32 {
    let (legend, row) = if width < 520 {
        (64, ROW_H as u32 + 46)
    } else {
        (40, ROW_H as u32)
    };
    legend + row * data.bars.len().max(1) as u32 + 56
}

chart!(MemoryBars, labelled, height = height);
