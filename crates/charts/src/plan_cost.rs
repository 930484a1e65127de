//! The planner's cost against load: per viable option, US dollars per hour as the request
//! rate grows (replicas step up), with the average and peak rates marked. Strings come
//! translated inside the data.

use super::axis::{self, AxisSpec, PlotRect, Scale};
use super::{
    chart, draw_legend, fmt, prepare, text_style, DataTable, DrawError, HitMap, Swatch, Theme,
};
use crate::core::base::fmt_sig;
use crate::core::present::PlanCostChart;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Draws the chart (both axes linear from 0).
pub fn draw<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    data: &PlanCostChart,
    theme: &Theme,
) -> Result<HitMap, DrawError> {
    let (w, h) = prepare(area, theme)?;
    let all = || data.series.iter().flat_map(|s| s.points.iter());
    if all().next().is_none() {
        return super::draw_message(area, theme, &data.empty_label);
    }
    let legend: Vec<(Swatch, String)> = data
        .series
        .iter()
        .enumerate()
        .map(|(i, s)| (Swatch::Line(theme.gpu(i)), s.name.clone()))
        .collect();
    let top = draw_legend(area, theme, &legend, 8, 4, w - 8)?;
    let xmax = axis::nice_max(all().map(|p| p.0).fold(1e-9, f64::max), 6);
    let ymax = axis::nice_max(
        all()
            .map(|p| p.1)
            .filter(|v| v.is_finite())
            .fold(1.0, f64::max)
            * 1.1,
        5,
    );
    let ticks = |max: f64, n: usize, usd: bool| -> Vec<(f64, String)> {
        axis::linear_ticks(0.0, max, n)
            .into_iter()
            .map(|v| {
                let label = if !usd {
                    axis::fmt_plain(v)
                } else if v == 0.0 {
                    "$0".to_string()
                } else {
                    fmt::usd(v)
                };
                (v, label)
            })
            .collect()
    };
    let x_axis = AxisSpec {
        ticks: ticks(xmax, 6, false),
        minor: vec![],
        title: &data.x_title,
    };
    let y_axis = AxisSpec {
        ticks: ticks(ymax, 5, true),
        minor: vec![],
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
    let ys = Scale::linear(0.0, ymax, rect.bottom, rect.top);
    axis::draw_frame(area, theme, rect, (&xs, &x_axis), (&ys, &y_axis))?;
    let mut hits = HitMap::default();
    // Average and peak markers.
    for (rate, label) in [
        (data.avg_rate, &data.avg_label),
        (data.peak_rate, &data.peak_label),
    ] {
        if rate.is_finite() && rate > 0.0 && rate <= xmax {
            let x = xs.map(rate);
            axis::dashed(
                area,
                &[(x, rect.top), (x, rect.bottom)],
                (4.0, 4.0),
                theme.muted.stroke_width(1),
            )?;
            let s = text_style(theme, 0.85, theme.muted, Pos::new(HPos::Left, VPos::Top));
            area.draw_text(
                &format!("{label} {} req/s", fmt_sig(rate)),
                &s,
                (x + 4, rect.top + 2),
            )
            .map_err(DrawError::backend)?;
        }
    }
    for (i, s) in data.series.iter().enumerate() {
        let col = theme.gpu(i);
        // Steps: the cost holds until the next replica is needed.
        let mut path: Vec<(i32, i32)> = Vec::with_capacity(s.points.len() * 2);
        for (j, (r, c)) in s.points.iter().enumerate() {
            if !c.is_finite() {
                continue;
            }
            let p = (xs.map(*r), ys.map(*c));
            if let Some(last) = path.last().copied() {
                path.push((p.0, last.1));
            }
            path.push(p);
            hits.point(
                format!("{}/{j}", s.name),
                p,
                4,
                vec![
                    s.name.clone(),
                    format!("{} req/s", fmt_sig(*r)),
                    format!("{}/h", fmt::usd(*c)),
                ],
            );
        }
        let width = if s.best { 3 } else { 2 };
        area.draw(&PathElement::new(path, col.stroke_width(width)))
            .map_err(DrawError::backend)?;
    }
    Ok(hits)
}

/// Table: one row per option and rate.
pub fn table(data: &PlanCostChart) -> DataTable {
    DataTable {
        headers: vec![String::new(), data.x_title.clone(), data.y_title.clone()],
        rows: data
            .series
            .iter()
            .flat_map(|s| {
                s.points
                    .iter()
                    .map(move |(r, c)| vec![s.name.clone(), fmt_sig(*r), fmt::usd(*c)])
            })
            .collect(),
    }
}

chart!(PlanCostChart);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::base::Lang;
    use crate::core::hardware::Catalog;
    use crate::core::present::model_of;
    use crate::core::present::planner_view;
    use crate::core::scenario::{GpuChoice, Scenario};
    use crate::Labels;

    #[test]
    fn renders_to_svg() {
        let s = Scenario {
            gpus: vec![
                GpuChoice::Catalog("l40s".into()),
                GpuChoice::Catalog("h100-sxm".into()),
            ],
            ..Scenario::default()
        };
        let m = model_of(&s.model).unwrap_or_else(|e| panic!("{e}"));
        let v = planner_view(&m, &s, Catalog::builtin(), Lang::En);
        let labels = Labels::new(Lang::En);
        let (svg, hits) = super::super::render_svg(&v.chart, &Theme::light(), &labels, (640, 400))
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(svg.contains(&v.chart.x_title));
        assert!(!hits.is_empty());
    }
}
