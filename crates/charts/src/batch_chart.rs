//! Maximum concurrent requests against context length, one staircase per GPU: practical
//! (solid) and the textbook's theoretical (dashed), with "theoretical → practical" labelled
//! at the current context (5 → 4 on A10G, 17 → 16 on L40S for Llama-2-7b at 4,096 tokens).

use super::axis::{self, AxisSpec, Frame, PlotRect, Scale};
use super::{
    chart, draw_legend, marker, prepare, DataTable, DrawError, HitMap, Labels, Marker, Swatch,
    Theme,
};
use crate::core::base::group;
use crate::core::present::{BatchLine, BatchPoint, BatchSeries};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

/// Draws the batch chart (x: context, log₂; y: requests, linear).
pub fn draw<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    data: &BatchSeries,
    theme: &Theme,
    labels: &Labels,
) -> Result<HitMap, DrawError> {
    let (w, h) = prepare(area, theme)?;
    let contexts = data
        .lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.context.0));
    let (cmin, cmax) = contexts.fold((u64::MAX, 0), |(a, b), c| (a.min(c), b.max(c)));
    if data.lines.is_empty() || cmax == 0 || cmin >= cmax {
        return super::draw_empty(area, theme, labels);
    }
    let top = legend(area, data, theme, labels, w)?;
    let frame = frame(area, data, theme, labels, (w, h, top), (cmin, cmax))?;
    let mut hits = HitMap::default();
    context_strips(data, labels, &frame, &mut hits);
    let currents = draw_lines(area, data, (theme, labels), &frame, &mut hits)?;
    label_currents(area, theme, frame.rect, &currents)?;
    Ok(hits)
}

/// A marker at the current context: its pixel, "theoretical → practical" and its colour.
type Current = ((i32, i32), String, RGBColor);

/// Draws the legend (a practical line per GPU, the dashed theoretical); returns its bottom.
fn legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    data: &BatchSeries,
    theme: &Theme,
    labels: &Labels,
    w: i32,
) -> Result<i32, DrawError> {
    let mut legend: Vec<(Swatch, String)> = data
        .lines
        .iter()
        .enumerate()
        .map(|(i, l)| {
            (
                Swatch::Line(theme.gpu(i)),
                format!("{} · {}", l.gpu, labels.practical),
            )
        })
        .collect();
    legend.push((Swatch::Dashed(theme.muted), labels.theoretical.to_string()));
    draw_legend(area, theme, &legend, 8, 4, w - 8)
}

/// Lays out and draws the axes: contexts `cmin`…`cmax` on a log₂ x axis, requests from 0.
fn frame<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    data: &BatchSeries,
    theme: &Theme,
    labels: &Labels,
    (w, h, top): (i32, i32, i32),
    (cmin, cmax): (u64, u64),
) -> Result<Frame, DrawError> {
    let ymax_v = data
        .lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.theoretical))
        .max()
        .unwrap_or(1)
        .max(1) as f64;
    let ymax = axis::nice_max(ymax_v * 1.05, 6);
    let y_axis = AxisSpec {
        ticks: axis::plain_ticks(ymax, 6),
        minor: vec![],
        title: labels.requests_axis,
    };
    let max_labels = (w / 60).max(3) as usize;
    let xticks: Vec<(f64, String)> = axis::pow2_ticks(cmin as f64, cmax as f64, max_labels)
        .into_iter()
        .map(|v| (v, axis::fmt_tokens(v)))
        .collect();
    let x_axis = AxisSpec {
        ticks: xticks,
        minor: vec![],
        title: labels.context_axis,
    };
    let rect = axis::plot_rect(area, theme, (w, h, top), (&x_axis, &y_axis), (80, 60))?;
    let xs = Scale::log(cmin as f64, cmax as f64, rect.left, rect.right);
    let ys = Scale::linear(0.0, ymax, rect.bottom, rect.top);
    axis::draw_frame(area, theme, rect, (&xs, &x_axis), (&ys, &y_axis))?;
    Ok(Frame { rect, xs, ys })
}

/// A vertical strip per context for hovering anywhere in the plot.
fn context_strips(data: &BatchSeries, labels: &Labels, frame: &Frame, hits: &mut HitMap) {
    let Some(first) = data.lines.first() else {
        return;
    };
    let (xs, rect) = (&frame.xs, frame.rect);
    let xsx: Vec<i32> = first
        .points
        .iter()
        .map(|p| xs.map(p.context.0 as f64))
        .collect();
    for (i, p) in first.points.iter().enumerate() {
        let x = xsx.get(i).copied().unwrap_or(rect.left);
        let l = if i == 0 {
            rect.left
        } else {
            (x + xsx.get(i - 1).copied().unwrap_or(x)) / 2
        };
        let r = xsx.get(i + 1).map(|n| (x + n) / 2).unwrap_or(rect.right);
        let mut lines = vec![format!("{} {}", group(p.context.0), labels.tokens_axis)];
        for line in &data.lines {
            if let Some(q) = line.points.get(i) {
                lines.push(format!(
                    "{}: {} ({} {})",
                    line.gpu, q.practical, labels.theoretical, q.theoretical
                ));
            }
        }
        hits.push(
            format!("ctx/{}", p.context.0),
            (l, rect.top, r, rect.bottom),
            lines,
        );
    }
}

/// The staircase of one line: a step at each context, `f` giving the requests.
fn stairs(line: &BatchLine, frame: &Frame, f: fn(&BatchPoint) -> u64) -> Vec<(i32, i32)> {
    let mut v = Vec::with_capacity(line.points.len() * 2);
    for (k, p) in line.points.iter().enumerate() {
        let (x, y) = frame.px(p.context.0 as f64, f(p) as f64);
        if k > 0 {
            if let Some(&(_, py)) = v.last() {
                v.push((x, py));
            }
        }
        v.push((x, y));
    }
    v
}

/// Draws each GPU's theoretical (dashed) and practical staircases and the marker at the
/// current context; returns the markers for their labels.
fn draw_lines<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    data: &BatchSeries,
    (theme, labels): (&Theme, &Labels),
    frame: &Frame,
    hits: &mut HitMap,
) -> Result<Vec<Current>, DrawError> {
    let mut currents: Vec<Current> = Vec::new();
    for (i, line) in data.lines.iter().enumerate() {
        let col = theme.gpu(i);
        let theo = stairs(line, frame, |p| p.theoretical);
        axis::dashed(area, &theo, (5.0, 4.0), col.mix(0.85).stroke_width(1))?;
        let prac = stairs(line, frame, |p| p.practical);
        area.draw(&PathElement::new(prac, col.stroke_width(2)))
            .map_err(DrawError::backend)?;

        // The current context: marker and "theoretical → practical".
        let c = line.current;
        if frame.xs.contains(c.context.0 as f64) {
            let p = frame.px(c.context.0 as f64, c.practical as f64);
            marker(area, Marker::Circle, p, 5, col, theme.background)?;
            currents.push((p, format!("{} → {}", c.theoretical, c.practical), col));
            hits.point(
                format!("current/{}", line.gpu),
                p,
                7,
                vec![
                    format!(
                        "{} · {} {}",
                        line.gpu,
                        group(c.context.0),
                        labels.tokens_axis
                    ),
                    format!("{}: {}", labels.practical, c.practical),
                    format!("{}: {}", labels.theoretical, c.theoretical),
                ],
            );
        }
    }
    Ok(currents)
}

/// "theoretical → practical" beside each marker, moved apart when GPUs are close.
fn label_currents<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    theme: &Theme,
    rect: PlotRect,
    currents: &[Current],
) -> Result<(), DrawError> {
    let mut placer = axis::Placer::new((rect.left + 2, rect.top, rect.right, rect.bottom - 2));
    for (p, _, _) in currents {
        placer.block((p.0 - 6, p.1 - 6, p.0 + 6, p.1 + 6));
    }
    for ((x, y), label, col) in currents {
        let (x, y) = (*x, *y);
        let cands = [
            (x + 9, y - 4, HPos::Left, VPos::Bottom),
            (x + 9, y + 4, HPos::Left, VPos::Top),
            (x - 9, y - 4, HPos::Right, VPos::Bottom),
            (x - 9, y + 4, HPos::Right, VPos::Top),
            (x + 9, y - 20, HPos::Left, VPos::Bottom),
            (x - 9, y - 20, HPos::Right, VPos::Bottom),
        ];
        placer.place(area, theme, (label, 1.0, *col), &cands, true)?;
    }
    Ok(())
}

/// Table: context, then practical and theoretical requests per GPU.
pub fn table(data: &BatchSeries, labels: &Labels) -> DataTable {
    let mut headers = vec![labels.context_axis.to_string()];
    for l in &data.lines {
        headers.push(format!("{} · {}", l.gpu, labels.practical));
        headers.push(format!("{} · {}", l.gpu, labels.theoretical));
    }
    let rows = data
        .lines
        .first()
        .map(|first| {
            first
                .points
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    let mut row = vec![group(p.context.0)];
                    for l in &data.lines {
                        let q = l.points.get(i);
                        row.push(q.map(|q| q.practical.to_string()).unwrap_or_default());
                        row.push(q.map(|q| q.theoretical.to_string()).unwrap_or_default());
                    }
                    row
                })
                .collect()
        })
        .unwrap_or_default();
    DataTable { headers, rows }
}

chart!(BatchSeries, labelled);
