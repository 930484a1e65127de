//! Maximum concurrent requests against context length, one staircase per GPU: practical
//! (solid) and the textbook's theoretical (dashed), with "theoretical → practical" labelled
//! at the current context (5 → 4 on A10G, 17 → 16 on L40S for Llama-2-7b at 4,096 tokens).

use super::axis::{self, AxisSpec, PlotRect, Scale};
use super::{
    draw_legend, marker, prepare, Chart, DataTable, DrawError, HitMap, Labels, Marker, Swatch,
    Theme,
};
use crate::core::base::derivation::group;
use crate::core::present::series::BatchSeries;
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
    let top = draw_legend(area, theme, &legend, 8, 4, w - 8)?;

    let ymax_v = data
        .lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.theoretical))
        .max()
        .unwrap_or(1)
        .max(1) as f64;
    let ymax = axis::nice_max(ymax_v * 1.05, 6);
    let yticks: Vec<(f64, String)> = axis::linear_ticks(0.0, ymax, 6)
        .into_iter()
        .map(|v| (v, axis::fmt_plain(v)))
        .collect();
    let y_axis = AxisSpec {
        ticks: yticks,
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
    let rect = PlotRect {
        left: axis::left_margin(area, theme, &y_axis)?,
        top: top + 8,
        right: w - axis::right_pad(area, theme, &x_axis)?,
        bottom: h - axis::bottom_margin(theme),
    };
    if rect.width() < 80 || rect.height() < 60 {
        return Err(DrawError::TooSmall);
    }
    let xs = Scale::log(cmin as f64, cmax as f64, rect.left, rect.right);
    let ys = Scale::linear(0.0, ymax, rect.bottom, rect.top);
    axis::draw_frame(area, theme, rect, (&xs, &x_axis), (&ys, &y_axis))?;
    let mut hits = HitMap::default();

    // A vertical strip per context for hovering anywhere in the plot.
    if let Some(first) = data.lines.first() {
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

    let mut currents: Vec<((i32, i32), String, RGBColor)> = Vec::new();
    for (i, line) in data.lines.iter().enumerate() {
        let col = theme.gpu(i);
        let stairs =
            |f: &dyn Fn(&crate::core::present::series::BatchPoint) -> u64| -> Vec<(i32, i32)> {
                let mut v = Vec::with_capacity(line.points.len() * 2);
                for (k, p) in line.points.iter().enumerate() {
                    let x = xs.map(p.context.0 as f64);
                    let y = ys.map(f(p) as f64);
                    if k > 0 {
                        if let Some(&(_, py)) = v.last() {
                            v.push((x, py));
                        }
                    }
                    v.push((x, y));
                }
                v
            };
        let theo = stairs(&|p| p.theoretical);
        axis::dashed(area, &theo, (5.0, 4.0), col.mix(0.85).stroke_width(1))?;
        let prac = stairs(&|p| p.practical);
        area.draw(&PathElement::new(prac, col.stroke_width(2)))
            .map_err(DrawError::backend)?;

        // The current context: marker and "theoretical → practical".
        let c = line.current;
        if xs.contains(c.context.0 as f64) {
            let p = (xs.map(c.context.0 as f64), ys.map(c.practical as f64));
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
    // "theoretical → practical" beside each marker, moved apart when GPUs are close.
    let mut placer = axis::Placer::new((rect.left + 2, rect.top, rect.right, rect.bottom - 2));
    for (p, _, _) in &currents {
        placer.block((p.0 - 6, p.1 - 6, p.0 + 6, p.1 + 6));
    }
    for ((x, y), label, col) in &currents {
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
    Ok(hits)
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

impl Chart for BatchSeries {
    fn draw<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        theme: &Theme,
        labels: &Labels,
    ) -> Result<HitMap, DrawError> {
        draw(area, self, theme, labels)
    }

    fn table(&self, labels: &Labels) -> DataTable {
        table(self, labels)
    }
}
