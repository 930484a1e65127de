//! Latency against throughput: per GPU, tokens/s per user against total tokens/s as the batch
//! grows until memory runs out, with the chosen operating point. The flat start of each curve
//! is where a little latency buys a lot of throughput.

use super::axis::{self, AxisSpec, Frame, Marks, Scale};
use super::{
    chart, draw_legend, marker, prepare, DataTable, DrawError, HitMap, Labels, Marker, Swatch,
    Theme,
};
use crate::core::base::fmt_sig;
use crate::core::present::{LatencyThroughput, LtCurve, LtPoint};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

fn lines(gpu: &str, p: &LtPoint, labels: &Labels) -> Vec<String> {
    vec![
        format!("{gpu} · {} {}", labels.batch, p.batch),
        format!(
            "{}: {}",
            labels.user_tps_axis,
            fmt_sig(p.per_user_tokens_per_s)
        ),
        format!(
            "{}: {}",
            labels.total_tps_axis,
            fmt_sig(p.total_tokens_per_s)
        ),
        format!("{}: {} ms", labels.tpot, fmt_sig(p.tpot.ms())),
    ]
}

/// Draws the latency–throughput chart (both axes linear from 0).
pub fn draw<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    data: &LatencyThroughput,
    theme: &Theme,
    labels: &Labels,
) -> Result<HitMap, DrawError> {
    let (w, h) = prepare(area, theme)?;
    if data.curves.iter().all(|c| c.points.is_empty()) {
        return super::draw_empty(area, theme, labels);
    }
    let top = legend(area, data, theme, labels, w)?;
    let frame = frame(area, data, theme, labels, (w, h, top))?;
    let rect = frame.rect;
    let mut m = Marks::new((rect.left + 2, rect.top, rect.right, rect.bottom - 2));
    let mut to_label = Vec::new();
    for (i, c) in data.curves.iter().enumerate() {
        let col = theme.gpu(i);
        draw_curve(area, c, (col, labels), &frame, &mut m)?;
        mark_ends(area, c, (col, theme, labels), &frame, &mut m, &mut to_label)?;
    }
    for ((x, y), text, col, rel) in &to_label {
        let (x, y) = (*x, *y);
        let cands = [
            (x + 10, y - 6, HPos::Left, VPos::Bottom),
            (x - 10, y - 6, HPos::Right, VPos::Bottom),
            (x + 10, y + 6, HPos::Left, VPos::Top),
            (x - 10, y + 6, HPos::Right, VPos::Top),
            (x, y - 11, HPos::Center, VPos::Bottom),
            (x, y + 11, HPos::Center, VPos::Top),
        ];
        m.placer
            .place(area, theme, (text, *rel, *col), &cands, false)?;
    }
    Ok(m.hits)
}

/// A label to place beside a marker: pixel, text, colour and relative size.
type ToLabel = ((i32, i32), String, RGBColor, f64);

/// The pixel of a point: total tokens/s across, per-user tokens/s up.
fn px(frame: &Frame, p: &LtPoint) -> (i32, i32) {
    frame.px(p.total_tokens_per_s, p.per_user_tokens_per_s)
}

/// Draws the legend (a line per GPU, the two markers); returns its bottom.
fn legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    data: &LatencyThroughput,
    theme: &Theme,
    labels: &Labels,
    w: i32,
) -> Result<i32, DrawError> {
    let mut legend: Vec<(Swatch, String)> = data
        .curves
        .iter()
        .enumerate()
        .map(|(i, c)| (Swatch::Line(theme.gpu(i)), c.gpu.clone()))
        .collect();
    legend.push((
        Swatch::Marker(Marker::Ring, theme.text),
        labels.operating_point.to_string(),
    ));
    legend.push((
        Swatch::Marker(Marker::Square, theme.text),
        labels.memory_full.to_string(),
    ));
    draw_legend(area, theme, &legend, 8, 4, w - 8)
}

/// Lays out and draws the axes, both linear from 0 to a round value above the data.
fn frame<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    data: &LatencyThroughput,
    theme: &Theme,
    labels: &Labels,
    size: (i32, i32, i32),
) -> Result<Frame, DrawError> {
    let all = || data.curves.iter().flat_map(|c| c.points.iter());
    let xmax = axis::nice_max(
        all().map(|p| p.total_tokens_per_s).fold(1.0, f64::max) * 1.05,
        6,
    );
    let ymax = axis::nice_max(
        all().map(|p| p.per_user_tokens_per_s).fold(1.0, f64::max) * 1.1,
        5,
    );
    let y_axis = AxisSpec {
        ticks: axis::plain_ticks(ymax, 5),
        minor: vec![],
        title: labels.user_tps_axis,
    };
    let x_axis = AxisSpec {
        ticks: axis::plain_ticks(xmax, 6),
        minor: vec![],
        title: labels.total_tps_axis,
    };
    let rect = axis::plot_rect(area, theme, size, (&x_axis, &y_axis), (80, 60))?;
    let xs = Scale::linear(0.0, xmax, rect.left, rect.right);
    let ys = Scale::linear(0.0, ymax, rect.bottom, rect.top);
    axis::draw_frame(area, theme, rect, (&xs, &x_axis), (&ys, &y_axis))?;
    Ok(Frame { rect, xs, ys })
}

/// One GPU's curve: the line and a dot (with its tooltip) at each batch.
fn draw_curve<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    c: &LtCurve,
    (col, labels): (RGBColor, &Labels),
    frame: &Frame,
    m: &mut Marks,
) -> Result<(), DrawError> {
    let (xs, ys) = (&frame.xs, &frame.ys);
    let fpts: Vec<(f64, f64)> = c
        .points
        .iter()
        .map(|p| {
            (
                xs.map_f(p.total_tokens_per_s),
                ys.map_f(p.per_user_tokens_per_s),
            )
        })
        .collect();
    area.draw(&PathElement::new(
        axis::polyline(&fpts),
        col.stroke_width(2),
    ))
    .map_err(DrawError::backend)?;
    for p in &c.points {
        let at = px(frame, p);
        area.draw(&Circle::new(at, 2, col.filled()))
            .map_err(DrawError::backend)?;
        m.placer.block((at.0 - 3, at.1 - 3, at.0 + 3, at.1 + 3));
        m.hits.point(
            format!("{}/{}", c.gpu, p.batch),
            at,
            5,
            lines(&c.gpu, p, labels),
        );
    }
    Ok(())
}

/// The markers of one curve: memory full (the last batch that fits) and the operating
/// point; their labels go into `to_label`, the operating point's first.
fn mark_ends<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    c: &LtCurve,
    (col, theme, labels): (RGBColor, &Theme, &Labels),
    frame: &Frame,
    m: &mut Marks,
    to_label: &mut Vec<ToLabel>,
) -> Result<(), DrawError> {
    let op_batch = c.operating.map(|o| o.batch);
    if let Some(last) = c.points.last() {
        let at = px(frame, last);
        marker(area, Marker::Square, at, 4, col, theme.background)?;
        m.placer.block((at.0 - 5, at.1 - 5, at.0 + 5, at.1 + 5));
        if op_batch != Some(last.batch) {
            to_label.push((at, format!("{} {}", labels.batch, last.batch), col, 0.85));
        }
    }
    if let Some(op) = &c.operating {
        let at = px(frame, op);
        marker(area, Marker::Ring, at, 7, col, theme.background)?;
        m.placer.block((at.0 - 8, at.1 - 8, at.0 + 8, at.1 + 8));
        to_label.insert(0, (at, format!("{} {}", labels.batch, op.batch), col, 0.92));
        let mut l = lines(&c.gpu, op, labels);
        l.insert(1, labels.operating_point.to_string());
        m.hits.point(format!("operating/{}", c.gpu), at, 9, l);
    }
    Ok(())
}

/// Table: one row per GPU and batch.
pub fn table(data: &LatencyThroughput, labels: &Labels) -> DataTable {
    DataTable {
        headers: vec![
            labels.gpu.to_string(),
            labels.batch.to_string(),
            format!("{} (ms)", labels.tpot),
            labels.user_tps_axis.to_string(),
            labels.total_tps_axis.to_string(),
        ],
        rows: data
            .curves
            .iter()
            .flat_map(|c| {
                c.points.iter().map(move |p| {
                    vec![
                        c.gpu.clone(),
                        p.batch.to_string(),
                        fmt_sig(p.tpot.ms()),
                        fmt_sig(p.per_user_tokens_per_s),
                        fmt_sig(p.total_tokens_per_s),
                    ]
                })
            })
            .collect(),
    }
}

chart!(LatencyThroughput, labelled);
