//! The planner's search: every configuration's cost per million output tokens against the
//! tokens per second each user sees (both axes logarithmic), the Pareto front as a line, the
//! points meeting the P99 targets filled and the others rings, the best a large diamond.
//! Strings come translated inside the data (`core::present::ParetoChart`).

use super::axis::{self, AxisSpec, Frame, PlotRect, Scale};
use super::{
    chart, draw_legend, marker, prepare, text_style, DataTable, DrawError, HitMap, Marker, Swatch,
    Theme,
};
use crate::core::base::fmt_sig;
use crate::core::present::{ParetoChart, ParetoPoint};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Whether a point can sit on log axes.
fn drawable(p: &ParetoPoint) -> bool {
    p.tokens_per_s_user.is_finite()
        && p.tokens_per_s_user > 0.0
        && p.usd_per_m_output.is_finite()
        && p.usd_per_m_output > 0.0
}

/// A log axis around `lo ..= hi`: whole decades at the ends, ticks at 1, 2 and 5 × each
/// decade (1 × only beyond three decades), the rest of 2 … 9 as the minor grid.
fn log_axis(lo: f64, hi: f64, usd: bool) -> (f64, f64, Vec<(f64, String)>, Vec<f64>) {
    let a = lo.log10().floor() as i32;
    let b = (hi.log10().ceil() as i32).max(a + 1);
    let steps: &[f64] = if b - a > 3 { &[1.0] } else { &[1.0, 2.0, 5.0] };
    let label = |v: f64| {
        if usd {
            format!("${}", fmt_sig(v))
        } else {
            axis::fmt_plain(v)
        }
    };
    let mut ticks = Vec::new();
    for e in a..=b {
        for m in steps {
            let v = m * 10f64.powi(e);
            if v <= 10f64.powi(b) * 1.000_001 {
                ticks.push((v, label(v)));
            }
        }
    }
    let minor = axis::decade_minor_ticks(a, b)
        .into_iter()
        .filter(|v| !ticks.iter().any(|t| (t.0 - v).abs() < 1e-9 * v))
        .collect();
    (10f64.powi(a), 10f64.powi(b), ticks, minor)
}

/// Lays out and draws the axes (x: tokens/s per user, y: $ per million output tokens).
fn frame<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    data: &ParetoChart,
    theme: &Theme,
    (w, h, top): (i32, i32, i32),
) -> Result<Frame, DrawError> {
    let pts = || data.points.iter().filter(|p| drawable(p));
    let range = |f: fn(&ParetoPoint) -> f64| {
        pts().map(f).fold((f64::INFINITY, 0.0f64), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        })
    };
    let (x_lo, x_hi) = range(|p| p.tokens_per_s_user);
    let (y_lo, y_hi) = range(|p| p.usd_per_m_output);
    let (x0, x1, x_ticks, x_minor) = log_axis(x_lo, x_hi, false);
    let (y0, y1, y_ticks, y_minor) = log_axis(y_lo, y_hi, true);
    let x_axis = AxisSpec {
        ticks: x_ticks,
        minor: x_minor,
        title: &data.x_title,
    };
    let y_axis = AxisSpec {
        ticks: y_ticks,
        minor: y_minor,
        title: &data.y_title,
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
    let xs = Scale::log(x0, x1, rect.left, rect.right);
    let ys = Scale::log(y0, y1, rect.bottom, rect.top);
    axis::draw_frame(area, theme, rect, (&xs, &x_axis), (&ys, &y_axis))?;
    Ok(Frame { rect, xs, ys })
}

/// The tooltip of point `i`: its configuration, its two figures and its verdict.
fn tooltip(data: &ParetoChart, i: usize) -> (String, Vec<String>) {
    let Some(p) = data.points.get(i) else {
        return (format!("p{i}"), Vec::new());
    };
    let verdict = if p.meets {
        &data.meets_label
    } else {
        &data.misses_label
    };
    let id = if data.best == Some(i) {
        "best".to_string()
    } else {
        format!("p{i}")
    };
    (
        id,
        vec![
            p.label.clone(),
            format!("{}: {}", data.x_title, fmt_sig(p.tokens_per_s_user)),
            format!("{}: ${}", data.y_title, fmt_sig(p.usd_per_m_output)),
            verdict.clone(),
        ],
    )
}

/// Draws the chart.
pub fn draw<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    data: &ParetoChart,
    theme: &Theme,
) -> Result<HitMap, DrawError> {
    let (w, h) = prepare(area, theme)?;
    if !data.points.iter().any(drawable) {
        return super::draw_message(area, theme, &data.empty_label);
    }
    let front_col = theme.gpus[0];
    let best_col = theme.gpus[1];
    let legend = [
        (Swatch::Line(front_col), data.front_label.clone()),
        (
            Swatch::Marker(Marker::Circle, theme.good),
            data.meets_label.clone(),
        ),
        (
            Swatch::Marker(Marker::Ring, theme.bad),
            data.misses_label.clone(),
        ),
        (
            Swatch::Marker(Marker::Diamond, best_col),
            data.best_label.clone(),
        ),
    ];
    let top = draw_legend(area, theme, &legend, 8, 4, w - 8)?;
    let f = frame(area, data, theme, (w, h, top))?;
    let mut hits = HitMap::default();
    let px = |p: &ParetoPoint| f.px(p.tokens_per_s_user, p.usd_per_m_output);
    // The cloud first, the front's line over it, the front's points, then the best on top.
    let on_front = |i: usize| data.front.contains(&i);
    for (i, p) in data.points.iter().enumerate() {
        if !drawable(p) || on_front(i) || data.best == Some(i) {
            continue;
        }
        let (m, col) = if p.meets {
            (Marker::Circle, theme.good)
        } else {
            (Marker::Ring, theme.bad)
        };
        let r = if p.simulated { 4 } else { 3 };
        marker(area, m, px(p), r, col, theme.background)?;
    }
    let line: Vec<(i32, i32)> = data
        .front
        .iter()
        .filter_map(|&i| data.points.get(i))
        .filter(|p| drawable(p))
        .map(px)
        .collect();
    if line.len() > 1 {
        area.draw(&PathElement::new(line, front_col.stroke_width(2)))
            .map_err(DrawError::backend)?;
    }
    for &i in &data.front {
        let Some(p) = data.points.get(i).filter(|p| drawable(p)) else {
            continue;
        };
        if data.best == Some(i) {
            continue;
        }
        let (m, col) = if p.meets {
            (Marker::Circle, front_col)
        } else {
            (Marker::Ring, front_col)
        };
        marker(area, m, px(p), 4, col, theme.background)?;
    }
    if let Some(p) = data
        .best
        .and_then(|i| data.points.get(i))
        .filter(|p| drawable(p))
    {
        let at = px(p);
        marker(area, Marker::Diamond, at, 8, best_col, theme.text)?;
        let s = text_style(theme, 0.92, theme.text, Pos::new(HPos::Left, VPos::Bottom));
        area.draw_text(&data.best_label, &s, (at.0 + 11, at.1 - 6))
            .map_err(DrawError::backend)?;
    }
    // Hover regions, the best's largest; each tooltip made only when asked for (from one
    // shared copy of the data).
    let shared = std::sync::Arc::new(data.clone());
    for (i, p) in data.points.iter().enumerate() {
        if !drawable(p) {
            continue;
        }
        let r = if data.best == Some(i) { 9 } else { 5 };
        let d = shared.clone();
        hits.point_with(px(p), r, move || tooltip(&d, i));
    }
    Ok(hits)
}

/// Table: one row per point (the configuration, the two figures, the verdict).
pub fn table(data: &ParetoChart) -> DataTable {
    DataTable {
        headers: vec![
            String::new(),
            data.x_title.clone(),
            data.y_title.clone(),
            String::new(),
        ],
        rows: (0..data.points.len())
            .map(|i| {
                let (_, lines) = tooltip(data, i);
                let p = &data.points[i];
                vec![
                    lines.first().cloned().unwrap_or_default(),
                    fmt_sig(p.tokens_per_s_user),
                    format!("${}", fmt_sig(p.usd_per_m_output)),
                    lines.get(3).cloned().unwrap_or_default(),
                ]
            })
            .collect(),
    }
}

chart!(ParetoChart);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_axes_tick_decades_and_their_halves() {
        let (lo, hi, ticks, minor) = log_axis(0.6, 73.0, true);
        assert_eq!((lo, hi), (0.1, 100.0));
        let labels: Vec<&str> = ticks.iter().map(|t| t.1.as_str()).collect();
        assert!(
            labels.contains(&"$1") && labels.contains(&"$50"),
            "{labels:?}"
        );
        assert!(!minor.contains(&2.0) && minor.contains(&3.0));
        // Beyond three decades, decades only.
        let (_, _, ticks, _) = log_axis(0.01, 900.0, false);
        assert_eq!(ticks.len(), 6);
    }
}
