//! "Serving under load", chart 1: a latency statistic against request rate for every compared
//! GPU, the P50 as a line and the band up to the P99 shaded, the knee (the simulated
//! saturation rate) marked with a dashed line and a label, and the P99 target when there is
//! one. Rate linear from 0; latency on a log axis (it grows by orders of magnitude past the
//! knee).

use super::axis::{self, AxisSpec, PlotRect, Scale};
use super::{chart, draw_legend, prepare, text_style, DataTable, DrawError, HitMap, Swatch, Theme};
use crate::core::base::fmt_sig;
use crate::core::present::LatencyRateChart;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// The latency range shown: decades around every finite positive P50 and P99 (and the
/// target).
fn y_range(data: &LatencyRateChart) -> Option<(i32, i32)> {
    let vals = data
        .series
        .iter()
        .flat_map(|s| s.points.iter().flat_map(|p| [p.1, p.2]))
        .chain(data.target_ms)
        .filter(|v| v.is_finite() && *v > 0.0);
    let (lo, hi) = vals.fold((f64::INFINITY, 0.0_f64), |(l, h), v| (l.min(v), h.max(v)));
    (hi > 0.0).then(|| {
        let lo = lo.log10().floor() as i32;
        let hi = (hi.log10().ceil() as i32).max(lo + 1);
        (lo, hi)
    })
}

/// Draws the chart.
pub fn draw<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    data: &LatencyRateChart,
    theme: &Theme,
) -> Result<HitMap, DrawError> {
    let (w, h) = prepare(area, theme)?;
    let Some((dlo, dhi)) = y_range(data) else {
        return super::draw_message(area, theme, &data.empty_label);
    };
    let mut legend: Vec<(Swatch, String)> = data
        .series
        .iter()
        .enumerate()
        .map(|(i, s)| {
            (
                Swatch::Line(theme.gpu(i)),
                format!("{} {}", s.name, data.p50_label),
            )
        })
        .collect();
    legend.push((
        Swatch::Box(theme.grid),
        format!("{} – {}", data.p50_label, data.p99_label),
    ));
    if data.target_ms.is_some() {
        legend.push((Swatch::Dashed(theme.bad), data.target_label.clone()));
    }
    let top = draw_legend(area, theme, &legend, 8, 4, w - 8)?;
    let xmax_data = data
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0).chain([s.knee]))
        .filter(|v| v.is_finite())
        .fold(1e-9, f64::max);
    let xmax = axis::nice_max(xmax_data * 1.05, 6);
    let x_axis = AxisSpec {
        ticks: axis::plain_ticks(xmax, 6),
        minor: vec![],
        title: &data.x_title,
    };
    let y_axis = AxisSpec {
        ticks: axis::decade_ticks(dlo, dhi)
            .into_iter()
            .map(|v| (v, axis::fmt_decade(v)))
            .collect(),
        minor: axis::decade_minor_ticks(dlo, dhi),
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
    let xs = Scale::linear(0.0, xmax, rect.left, rect.right);
    let ys = Scale::log(10f64.powi(dlo), 10f64.powi(dhi), rect.bottom, rect.top);
    axis::draw_frame(area, theme, rect, (&xs, &x_axis), (&ys, &y_axis))?;
    let mut hits = HitMap::default();
    if let Some(t) = data.target_ms.filter(|t| *t > 0.0) {
        let y = ys.map(t);
        axis::dashed(
            area,
            &[(rect.left, y), (rect.right, y)],
            (6.0, 4.0),
            theme.bad.stroke_width(1),
        )?;
    }
    draw_series(area, data, theme, (&xs, &ys), rect, &mut hits)?;
    Ok(hits)
}

fn draw_series<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    data: &LatencyRateChart,
    theme: &Theme,
    (xs, ys): (&Scale, &Scale),
    rect: PlotRect,
    hits: &mut HitMap,
) -> Result<(), DrawError> {
    let ok = |v: f64| v.is_finite() && v > 0.0;
    for (i, s) in data.series.iter().enumerate() {
        let col = theme.gpu(i);
        let pts: Vec<&(f64, f64, f64)> = s.points.iter().filter(|p| ok(p.1) && ok(p.2)).collect();
        // The P50–P99 band: the P99 edge left to right, then the P50 edge back.
        let mut band: Vec<(i32, i32)> = pts.iter().map(|p| (xs.map(p.0), ys.map(p.2))).collect();
        band.extend(pts.iter().rev().map(|p| (xs.map(p.0), ys.map(p.1))));
        if band.len() >= 3 {
            area.draw(&Polygon::new(band, col.mix(0.18).filled()))
                .map_err(DrawError::backend)?;
        }
        let p99: Vec<(i32, i32)> = pts.iter().map(|p| (xs.map(p.0), ys.map(p.2))).collect();
        area.draw(&PathElement::new(p99, col.mix(0.6).stroke_width(1)))
            .map_err(DrawError::backend)?;
        let p50: Vec<(i32, i32)> = pts.iter().map(|p| (xs.map(p.0), ys.map(p.1))).collect();
        area.draw(&PathElement::new(p50.clone(), col.stroke_width(2)))
            .map_err(DrawError::backend)?;
        for (j, (p, px)) in pts.iter().zip(&p50).enumerate() {
            area.draw(&Circle::new(*px, 3, col.filled()))
                .map_err(DrawError::backend)?;
            hits.point(
                format!("{}/{j}", s.name),
                *px,
                5,
                vec![
                    s.name.clone(),
                    format!("{} req/s", fmt_sig(p.0)),
                    format!("{} {} ms", data.p50_label, fmt_sig(p.1)),
                    format!("{} {} ms", data.p99_label, fmt_sig(p.2)),
                ],
            );
        }
        draw_knee(area, data, theme, (xs, i), rect, s, hits)?;
    }
    Ok(())
}

fn draw_knee<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    data: &LatencyRateChart,
    theme: &Theme,
    (xs, i): (&Scale, usize),
    rect: PlotRect,
    s: &crate::core::present::LatencyRateSeries,
    hits: &mut HitMap,
) -> Result<(), DrawError> {
    if !(s.knee.is_finite() && s.knee > 0.0 && xs.contains(s.knee)) {
        return Ok(());
    }
    let col = theme.gpu(i);
    let x = xs.map(s.knee);
    axis::dashed(
        area,
        &[(x, rect.top), (x, rect.bottom)],
        (4.0, 4.0),
        col.stroke_width(2),
    )?;
    // Labels stacked one line per GPU so that two knees close together stay legible.
    let line = (theme.font_px * theme.font_scale * 1.2) as i32;
    let y = rect.top + 2 + line * i as i32;
    let text = format!("{} {} req/s", data.knee_label, fmt_sig(s.knee));
    let right_half = x > (rect.left + rect.right) / 2;
    let pos = if right_half {
        Pos::new(HPos::Right, VPos::Top)
    } else {
        Pos::new(HPos::Left, VPos::Top)
    };
    let st = text_style(theme, 0.85, col, pos);
    let tx = if right_half { x - 4 } else { x + 4 };
    area.draw_text(&text, &st, (tx, y))
        .map_err(DrawError::backend)?;
    hits.push(
        format!("knee/{}", s.name),
        (x - 4, rect.top, x + 4, rect.bottom),
        vec![s.name.clone(), text],
    );
    Ok(())
}

/// Table: one row per GPU and rate.
pub fn table(data: &LatencyRateChart) -> DataTable {
    DataTable {
        headers: vec![
            String::new(),
            data.x_title.clone(),
            format!("{} {}", data.p50_label, data.y_title),
            format!("{} {}", data.p99_label, data.y_title),
        ],
        rows: data
            .series
            .iter()
            .flat_map(|s| {
                s.points
                    .iter()
                    .map(move |p| vec![s.name.clone(), fmt_sig(p.0), fmt_sig(p.1), fmt_sig(p.2)])
            })
            .collect(),
    }
}

chart!(LatencyRateChart);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::base::Lang;
    use crate::core::present::{LatencyMetric, LatencyRateSeries};
    use crate::Labels;

    fn chart() -> LatencyRateChart {
        let series = (0..2)
            .map(|g| LatencyRateSeries {
                name: format!("GPU {g}"),
                // Latency rising steeply near each GPU's knee (computed, not copied).
                points: (1..=12)
                    .map(|k| {
                        let knee = 10.0 * (g + 1) as f64;
                        let r = knee * 0.125 * k as f64;
                        let p50 = 50.0 / (1.0 - (r / knee).min(0.95));
                        (r, p50, p50 * 3.0)
                    })
                    .collect(),
                knee: 10.0 * (g + 1) as f64,
            })
            .collect();
        LatencyRateChart {
            series,
            target_ms: Some(2000.0),
            x_title: "request rate (req/s)".into(),
            y_title: "TTFT (ms)".into(),
            knee_label: "saturation".into(),
            target_label: "P99 target".into(),
            p50_label: "P50".into(),
            p99_label: "P99".into(),
            empty_label: "nothing".into(),
        }
    }

    #[test]
    fn renders_lines_bands_and_knees() {
        let c = chart();
        let labels = Labels::new(Lang::En);
        let (svg, hits) = super::super::render_svg(&c, &Theme::light(), &labels, (720, 420))
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(svg.contains("request rate (req/s)") && svg.contains("TTFT (ms)"));
        assert!(svg.contains("saturation 10 req/s") && svg.contains("saturation 20 req/s"));
        let knees = hits
            .regions()
            .iter()
            .filter(|r| r.id.starts_with("knee/"))
            .count();
        assert_eq!(knees, 2);
        let points = hits.len() - knees;
        assert_eq!(
            points,
            c.series.iter().map(|s| s.points.len()).sum::<usize>()
        );
        assert_eq!(table(&c).rows.len(), points);
        let _ = LatencyMetric::Ttft;
    }

    #[test]
    fn empty_chart_says_so() {
        let mut c = chart();
        c.series.clear();
        c.target_ms = None;
        let (svg, hits) =
            super::super::render_svg(&c, &Theme::dark(), &Labels::new(Lang::En), (400, 300))
                .unwrap_or_else(|e| panic!("{e}"));
        assert!(svg.contains("nothing"));
        assert!(hits.is_empty());
    }
}
