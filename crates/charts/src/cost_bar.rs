//! Cost per GPU: one horizontal bar per GPU ($ per request-hour or $ per million output
//! tokens), the value at the bar's end and the price and concurrency under the GPU's name.

use super::axis::{self, AxisSpec, PlotRect, Scale};
use super::{chart, fmt, prepare, text_style, DataTable, DrawError, HitMap, Labels, Theme};
use crate::core::present::{CostBar, CostBars, CostMetric};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

const ROW_H: i32 = 48;

fn axis_title(m: CostMetric, labels: &Labels) -> &'static str {
    match m {
        CostMetric::PerRequestHour => labels.cost_request_hour_axis,
        CostMetric::PerMillionTokens => labels.cost_mtok_axis,
    }
}

fn sub(b: &CostBar, labels: &Labels) -> String {
    format!(
        "{}/h · {} {}",
        fmt::usd(b.usd_per_hour),
        b.concurrent_requests,
        labels.requests
    )
}

/// Draws the cost bars.
pub fn draw<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    data: &CostBars,
    theme: &Theme,
    labels: &Labels,
) -> Result<HitMap, DrawError> {
    let (w, h) = prepare(area, theme)?;
    if data.bars.is_empty() {
        return super::draw_empty(area, theme, labels);
    }
    let texts = data
        .bars
        .iter()
        .flat_map(|b| [b.gpu.clone(), sub(b, labels)]);
    let name_w = axis::widest(area, theme, texts)?.min(w / 3);
    let vmax = data
        .bars
        .iter()
        .filter_map(|b| b.value(data.metric))
        .fold(0.0, f64::max);
    let xmax = axis::nice_max(if vmax > 0.0 { vmax * 1.25 } else { 1.0 }, 5);
    // Tick labels with as many decimals as the step needs: $0, $0.05, $0.1 …
    let step = axis::nice_step(xmax, 5);
    let decimals = (-step.log10().floor()).clamp(0.0, 6.0) as usize;
    let x_axis = AxisSpec {
        ticks: axis::linear_ticks(0.0, xmax, 5)
            .into_iter()
            .map(|v| (v, format!("${v:.decimals$}")))
            .collect(),
        minor: vec![],
        title: axis_title(data.metric, labels),
    };
    let y_axis = AxisSpec {
        ticks: vec![],
        minor: vec![],
        title: "",
    };
    let rect = PlotRect {
        left: 8 + name_w + 10,
        top: 10,
        right: w - axis::right_pad(area, theme, &x_axis)?,
        bottom: h - axis::bottom_margin(theme),
    };
    if rect.width() < 60 || rect.height() < 30 {
        return Err(DrawError::TooSmall);
    }
    let xs = Scale::linear(0.0, xmax, rect.left, rect.right);
    let ys = Scale::linear(0.0, 1.0, rect.bottom, rect.top);
    axis::draw_frame(area, theme, rect, (&xs, &x_axis), (&ys, &y_axis))?;
    let mut hits = HitMap::default();
    let row_h = (rect.height() / data.bars.len() as i32).min(ROW_H + 16);
    let bar_h = (row_h / 2).clamp(8, 24);
    for (i, b) in data.bars.iter().enumerate() {
        let col = theme.gpu(i);
        let cy = rect.top + row_h * i as i32 + row_h / 2;
        let ns = text_style(theme, 1.0, theme.text, Pos::new(HPos::Right, VPos::Bottom));
        area.draw_text(&b.gpu, &ns, (rect.left - 10, cy - 1))
            .map_err(DrawError::backend)?;
        let ss = text_style(theme, 0.85, theme.muted, Pos::new(HPos::Right, VPos::Top));
        area.draw_text(&sub(b, labels), &ss, (rect.left - 10, cy + 2))
            .map_err(DrawError::backend)?;
        let mut tip = vec![b.gpu.clone(), sub(b, labels)];
        match b.value(data.metric) {
            Some(v) => {
                let x1 = xs.map(v).max(rect.left + 1);
                area.draw(&Rectangle::new(
                    [(rect.left, cy - bar_h / 2), (x1, cy + bar_h / 2)],
                    col.filled(),
                ))
                .map_err(DrawError::backend)?;
                let vs = text_style(theme, 0.92, theme.text, Pos::new(HPos::Left, VPos::Center));
                area.draw_text(&fmt::usd(v), &vs, (x1 + 6, cy))
                    .map_err(DrawError::backend)?;
                tip.push(format!(
                    "{}: {}",
                    axis_title(data.metric, labels),
                    fmt::usd(v)
                ));
                hits.push(
                    b.gpu.clone(),
                    (rect.left, cy - bar_h / 2, x1, cy + bar_h / 2),
                    tip,
                );
            }
            None => {
                let why = if b.concurrent_requests == 0 {
                    labels.nothing_fits
                } else {
                    labels.no_price
                };
                let vs = text_style(theme, 0.92, theme.muted, Pos::new(HPos::Left, VPos::Center));
                area.draw_text(why, &vs, (rect.left + 6, cy))
                    .map_err(DrawError::backend)?;
                tip.push(why.to_string());
                hits.push(
                    b.gpu.clone(),
                    (rect.left, cy - bar_h / 2, rect.right, cy + bar_h / 2),
                    tip,
                );
            }
        }
    }
    Ok(hits)
}

/// Table: GPU, price, requests, $/request-hour, $/M tokens.
pub fn table(data: &CostBars, labels: &Labels) -> DataTable {
    let opt = |v: Option<f64>| v.map(fmt::usd).unwrap_or_else(|| "—".to_string());
    DataTable {
        headers: vec![
            labels.gpu.to_string(),
            labels.price_per_hour.to_string(),
            labels.requests.to_string(),
            labels.cost_request_hour_axis.to_string(),
            labels.cost_mtok_axis.to_string(),
        ],
        rows: data
            .bars
            .iter()
            .map(|b| {
                vec![
                    b.gpu.clone(),
                    fmt::usd(b.usd_per_hour),
                    b.concurrent_requests.to_string(),
                    opt(b.usd_per_request_hour),
                    opt(b.usd_per_million_tokens),
                ]
            })
            .collect(),
    }
}

/// A good height in CSS pixels for a given width.
fn height(data: &CostBars, _width: u32) -> u32 {
    20 + ROW_H as u32 * data.bars.len().max(1) as u32 + 56
}

chart!(CostBars, labelled, height = height);
