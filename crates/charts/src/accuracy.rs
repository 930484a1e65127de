//! "How accurate is this?": predicted against measured for the calibration rows of one metric
//! (log–log), with the y = x line and a ±25 % band; training rows as circles, held-out rows as
//! diamonds. Strings come translated inside the data.

use super::axis::{self, AxisSpec, PlotRect, Scale};
use super::{
    chart, draw_legend, marker, prepare, DataTable, DrawError, HitMap, Marker, Swatch, Theme,
};
use crate::core::base::fmt_sig;
use crate::core::present::AccuracyScatter;
use plotters::coord::Shift;
use plotters::prelude::*;

/// Half-width of the shaded agreement band (25 %).
const BAND: f64 = 0.25;

/// Draws the scatter.
pub fn draw<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    data: &AccuracyScatter,
    theme: &Theme,
) -> Result<HitMap, DrawError> {
    let (w, h) = prepare(area, theme)?;
    if data.points.is_empty() {
        return super::draw_message(area, theme, &data.empty_label);
    }
    let legend = vec![
        (
            Swatch::Marker(Marker::Circle, theme.gpu(0)),
            data.train_label.clone(),
        ),
        (
            Swatch::Marker(Marker::Diamond, theme.gpu(1)),
            data.test_label.clone(),
        ),
        (Swatch::Line(theme.muted), data.exact_label.clone()),
        (Swatch::Dashed(theme.muted), data.band_label.clone()),
    ];
    let top = draw_legend(area, theme, &legend, 8, 4, w - 8)?;
    let (lo, hi) = data
        .points
        .iter()
        .flat_map(|p| [p.measured, p.predicted])
        .fold((f64::INFINITY, 0.0f64), |(a, b), v| (a.min(v), b.max(v)));
    let d0 = (lo / 1.5).log10().floor().clamp(-300.0, 300.0) as i32;
    let d1 = (hi * 1.5).log10().ceil().clamp(-300.0, 300.0) as i32;
    let d1 = d1.max(d0 + 1);
    let ticks = || -> Vec<(f64, String)> {
        axis::decade_ticks(d0, d1)
            .into_iter()
            .map(|v| (v, axis::fmt_si(v)))
            .collect()
    };
    let x_axis = AxisSpec {
        ticks: ticks(),
        minor: axis::decade_minor_ticks(d0, d1),
        title: &data.x_title,
    };
    let y_axis = AxisSpec {
        ticks: ticks(),
        minor: axis::decade_minor_ticks(d0, d1),
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
    let (vmin, vmax) = (10f64.powi(d0), 10f64.powi(d1));
    let xs = Scale::log(vmin, vmax, rect.left, rect.right);
    let ys = Scale::log(vmin, vmax, rect.bottom, rect.top);
    axis::draw_frame(area, theme, rect, (&xs, &x_axis), (&ys, &y_axis))?;
    let px = |x: f64, y: f64| (xs.map(x), ys.map(y));
    axis::line(
        area,
        px(vmin, vmin),
        px(vmax, vmax),
        theme.muted.stroke_width(1),
    )?;
    for f in [1.0 - BAND, 1.0 + BAND] {
        // Each band line y = f·x, clipped to the square [vmin, vmax]².
        let (a, b) = if f < 1.0 {
            ((vmin / f, vmin), (vmax, vmax * f))
        } else {
            ((vmin, vmin * f), (vmax / f, vmax))
        };
        axis::dashed(
            area,
            &[px(a.0, a.1), px(b.0, b.1)],
            (5.0, 4.0),
            theme.muted.mix(0.8).stroke_width(1),
        )?;
    }
    let mut hits = HitMap::default();
    // Training rows first, held-out rows on top.
    let mut order: Vec<_> = data.points.iter().enumerate().collect();
    crate::core::base::sort_by(&mut order, &|a, b| a.1.test.cmp(&b.1.test));
    for (i, p) in order {
        let at = px(p.measured, p.predicted);
        let (m, col) = if p.test {
            (Marker::Diamond, theme.gpu(1))
        } else {
            (Marker::Circle, theme.gpu(0))
        };
        marker(area, m, at, 4, col, theme.background)?;
        let kind = if p.test {
            &data.test_label
        } else {
            &data.train_label
        };
        hits.point(
            format!("row/{i}"),
            at,
            6,
            vec![kind.clone(), p.label.clone()],
        );
    }
    Ok(hits)
}

/// Table: one row per calibration row.
pub fn table(data: &AccuracyScatter) -> DataTable {
    DataTable {
        headers: vec![
            String::new(),
            data.x_title.clone(),
            data.y_title.clone(),
            String::new(),
        ],
        rows: data
            .points
            .iter()
            .map(|p| {
                vec![
                    p.label.clone(),
                    fmt_sig(p.measured),
                    fmt_sig(p.predicted),
                    if p.test {
                        data.test_label.clone()
                    } else {
                        data.train_label.clone()
                    },
                ]
            })
            .collect(),
    }
}

/// A good height in CSS pixels for a given width.
fn height(_data: &AccuracyScatter, width: u32) -> u32 {
    width.clamp(300, 520)
}

chart!(AccuracyScatter, height = height);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::base::Lang;
    use crate::core::calc::{accuracy_table, Metric};
    use crate::core::present::accuracy_scatter;
    use crate::Labels;

    #[test]
    fn renders_to_svg_with_one_region_per_row() {
        let r = accuracy_table();
        let data = accuracy_scatter(&r, Metric::Tpot, Lang::En);
        let labels = Labels::new(Lang::En);
        let out = super::super::render_svg(&data, &Theme::light(), &labels, (640, 480));
        let (svg, hits) = out.unwrap_or_else(|e| panic!("{e}"));
        assert!(svg.starts_with("<svg"));
        assert_eq!(hits.len(), data.points.len());
        assert!(svg.contains(&data.x_title));
        // Empty data draws the message, not a panic.
        let empty = AccuracyScatter {
            points: Vec::new(),
            ..data
        };
        let (svg, hits) = super::super::render_svg(&empty, &Theme::dark(), &labels, (300, 200))
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(hits.is_empty());
        assert!(svg.contains(&empty.empty_label));
    }
}
