//! "Serving under load", chart 2: one simulated run over time: the running batch and the
//! engine's queue (requests, left axis) and the share of KV blocks in use (%, right axis).

use super::axis::{self, AxisSpec, PlotRect, Scale};
use super::{chart, draw_legend, prepare, text_style, DataTable, DrawError, HitMap, Swatch, Theme};
use crate::core::base::fmt_sig;
use crate::core::present::TimeSeriesChart;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// One point: t (s), batch, waiting, KV occupancy (0–1).
type Pt = (f64, f64, f64, f64);

/// Draws the chart.
pub fn draw<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    data: &TimeSeriesChart,
    theme: &Theme,
) -> Result<HitMap, DrawError> {
    let (w, h) = prepare(area, theme)?;
    if data.points.is_empty() {
        return super::draw_message(area, theme, &data.empty_label);
    }
    let colors = [theme.gpu(0), theme.bad, theme.kv];
    let legend: Vec<(Swatch, String)> = vec![
        (Swatch::Line(colors[0]), data.names[0].clone()),
        (Swatch::Line(colors[1]), data.names[1].clone()),
        (Swatch::Dashed(colors[2]), data.names[2].clone()),
    ];
    let top = draw_legend(area, theme, &legend, 8, 4, w - 8)?;
    let tmax = axis::nice_max(data.points.iter().map(|p| p.0).fold(1e-9, f64::max), 6);
    let nmax = axis::nice_max(
        data.points.iter().map(|p| p.1.max(p.2)).fold(1.0, f64::max) * 1.05,
        5,
    );
    let x_axis = AxisSpec {
        ticks: axis::plain_ticks(tmax, 6),
        minor: vec![],
        title: &data.x_title,
    };
    let y_axis = AxisSpec {
        ticks: axis::plain_ticks(nmax, 5),
        minor: vec![],
        title: &data.y_title,
    };
    let right_title_px = (theme.font_px * theme.font_scale * 4.0) as i32;
    // Room above the plot for the right axis' title, clear of its "100%" label.
    let title_room = (theme.font_px * theme.font_scale * 1.4) as i32;
    let rect = PlotRect {
        left: axis::left_margin(area, theme, &y_axis)?,
        top: top + 8 + title_room,
        right: w - axis::right_pad(area, theme, &x_axis)?.max(right_title_px),
        bottom: h - axis::bottom_margin(theme),
    };
    if rect.width() < 80 || rect.height() < 60 {
        return Err(DrawError::TooSmall);
    }
    let xs = Scale::linear(0.0, tmax, rect.left, rect.right);
    let ys = Scale::linear(0.0, nmax, rect.bottom, rect.top);
    let kv = Scale::linear(0.0, 100.0, rect.bottom, rect.top);
    axis::draw_frame(area, theme, rect, (&xs, &x_axis), (&ys, &y_axis))?;
    // Right axis: KV occupancy, 0–100 %.
    let st = text_style(theme, 0.85, colors[2], Pos::new(HPos::Left, VPos::Center));
    for v in [0.0, 25.0, 50.0, 75.0, 100.0] {
        area.draw_text(&format!("{v:.0}%"), &st, (rect.right + 4, kv.map(v)))
            .map_err(DrawError::backend)?;
    }
    let st = text_style(theme, 0.85, colors[2], Pos::new(HPos::Right, VPos::Bottom));
    area.draw_text(
        &data.y2_title,
        &st,
        (rect.right + right_title_px, rect.top - title_room / 2 - 2),
    )
    .map_err(DrawError::backend)?;
    let path = |f: &dyn Fn(&Pt) -> (f64, Scale)| -> Vec<(i32, i32)> {
        data.points
            .iter()
            .map(|p| {
                let (v, s) = f(p);
                (xs.map(p.0), s.map(v))
            })
            .collect()
    };
    area.draw(&PathElement::new(
        path(&|p| (p.1, ys)),
        colors[0].stroke_width(2),
    ))
    .map_err(DrawError::backend)?;
    area.draw(&PathElement::new(
        path(&|p| (p.2, ys)),
        colors[1].stroke_width(2),
    ))
    .map_err(DrawError::backend)?;
    axis::dashed(
        area,
        &path(&|p| (p.3 * 100.0, kv)),
        (5.0, 3.0),
        colors[2].stroke_width(2),
    )?;
    let mut hits = HitMap::default();
    let step = (data.points.len() / 40).max(1);
    for (j, p) in data.points.iter().enumerate().step_by(step) {
        hits.point(
            format!("t/{j}"),
            (xs.map(p.0), ys.map(p.1)),
            4,
            vec![
                format!("{} s", fmt_sig(p.0)),
                format!("{}: {}", data.names[0], fmt_sig(p.1)),
                format!("{}: {}", data.names[1], fmt_sig(p.2)),
                format!("{}: {}%", data.names[2], fmt_sig(p.3 * 100.0)),
            ],
        );
    }
    Ok(hits)
}

/// Table: one row per point (at most 200, evenly spaced).
pub fn table(data: &TimeSeriesChart) -> DataTable {
    let step = (data.points.len() / 200).max(1);
    DataTable {
        headers: vec![
            data.x_title.clone(),
            data.names[0].clone(),
            data.names[1].clone(),
            data.y2_title.clone(),
        ],
        rows: data
            .points
            .iter()
            .step_by(step)
            .map(|p| {
                vec![
                    fmt_sig(p.0),
                    fmt_sig(p.1),
                    fmt_sig(p.2),
                    fmt_sig(p.3 * 100.0),
                ]
            })
            .collect(),
    }
}

chart!(TimeSeriesChart);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::base::Lang;
    use crate::Labels;

    #[test]
    fn renders_three_series_and_both_axes() {
        let points: Vec<(f64, f64, f64, f64)> = (0..300)
            .map(|i| {
                let t = i as f64 * 0.1;
                let batch = (t * 4.0).min(64.0);
                (t, batch, (t - 10.0).max(0.0), batch / 64.0)
            })
            .collect();
        let c = TimeSeriesChart {
            points,
            x_title: "time (s)".into(),
            y_title: "requests".into(),
            y2_title: "KV blocks in use (%)".into(),
            names: ["batch".into(), "queue".into(), "KV".into()],
            empty_label: "none".into(),
        };
        let (svg, hits) =
            super::super::render_svg(&c, &Theme::light(), &Labels::new(Lang::En), (720, 360))
                .unwrap_or_else(|e| panic!("{e}"));
        for t in ["time (s)", "requests", "KV blocks in use (%)", "100%"] {
            assert!(svg.contains(t), "{t}");
        }
        assert_eq!(hits.len(), c.points.len().div_ceil(c.points.len() / 40));
        assert_eq!(table(&c).rows.len(), c.points.len().div_ceil(1));
    }
}
