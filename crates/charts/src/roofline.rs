//! The roofline (log–log): per GPU the bandwidth slope and one ceiling per supported
//! precision with the ridge points labelled; workload points by phase (shape and colour),
//! each with a dashed trail back to where it sat at batch 1.

use super::axis::{self, AxisSpec, Frame, Marks, PlotRect, Scale};
use super::{
    chart, draw_legend, fmt, marker, prepare, DataTable, DrawError, HitMap, Labels, Marker, Swatch,
    Theme,
};
use crate::core::base::fmt_sig;
use crate::core::present::{Bound, PointKind, RooflineData, WorkPoint};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

/// All points are named when there are at most this many; beyond, only totals and reference
/// points (hover shows the rest).
const MAX_NAMED_POINTS: usize = 8;

fn phase_style(p: PointKind, theme: &Theme) -> (Marker, RGBColor) {
    match p {
        PointKind::Prefill => (Marker::Square, theme.prefill),
        PointKind::Decode => (Marker::Circle, theme.decode),
        PointKind::Matmul => (Marker::Diamond, theme.matmul),
        PointKind::Reference => (Marker::Triangle, theme.reference),
    }
}

fn phase_name(p: PointKind, labels: &Labels) -> &'static str {
    match p {
        PointKind::Prefill => labels.phase_prefill,
        PointKind::Decode => labels.phase_decode,
        PointKind::Matmul => labels.phase_matmul,
        PointKind::Reference => labels.phase_reference,
    }
}

/// Tooltip lines of a workload point.
pub fn point_lines(p: &WorkPoint, labels: &Labels) -> Vec<String> {
    let mut v = vec![format!("{} · {}", p.name, phase_name(p.phase, labels))];
    if let Some(f) = p.flops {
        v.push(format!("{}: {}", labels.flops, axis::fmt_si(f.0)));
    }
    if let Some(b) = p.bytes {
        v.push(format!("{}: {}", labels.bytes, fmt::bytes(b)));
    }
    v.push(format!(
        "{}: {} FLOP/B",
        labels.intensity,
        fmt_sig(p.intensity_flop_per_byte)
    ));
    v.push(format!(
        "{}: {}FLOP/s",
        labels.attainable,
        axis::fmt_si(p.attainable.0)
    ));
    v.push(
        match p.bound {
            Bound::Memory => labels.bound_memory,
            Bound::Compute => labels.bound_compute,
        }
        .to_string(),
    );
    v
}

/// The ridge label: "ridge 419 FLOP/B".
pub fn ridge_label(ridge_flop_per_byte: f64, labels: &Labels) -> String {
    format!("{} {} FLOP/B", labels.ridge, fmt_sig(ridge_flop_per_byte))
}

/// Draws the roofline.
pub fn draw<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    data: &RooflineData,
    theme: &Theme,
    labels: &Labels,
) -> Result<HitMap, DrawError> {
    let (w, h) = prepare(area, theme)?;
    if data.gpus.is_empty() {
        return super::draw_empty(area, theme, labels);
    }
    let top = legend(area, data, theme, labels, w)?;
    let frame = frame(area, data, theme, labels, (w, h, top))?;
    let rect = frame.rect;
    let tl = (theme, labels);
    let mut m = Marks::new((rect.left + 2, rect.top, rect.right, rect.bottom - 2));
    let roofs = draw_roofs(area, data, tl, &frame, &mut m)?;
    draw_trails(area, data, tl, &frame, &mut m)?;
    let at_points = draw_points(area, data, tl, &frame, &mut m)?;
    label_roofs(area, theme, rect, &roofs, &mut m.placer)?;
    label_points(area, data, theme, &at_points, &mut m.placer)?;
    Ok(m.hits)
}

/// A label anchored at a pixel: the pixel, the text and its colour.
type Anchored = ((i32, i32), String, RGBColor);

/// A drawn workload point: pixel, name, colour and whether it is always named.
type DrawnPoint = ((i32, i32), String, RGBColor, bool);

/// The labels of the roofs: ridges (at the foot of their drop lines) and ceilings.
struct RoofLabels {
    /// "ridge 419 FLOP/B (bf16)" at each ridge point.
    ridges: Vec<Anchored>,
    /// "bf16 989 TFLOP/s" at each ridge point.
    ceilings: Vec<Anchored>,
}

/// Draws the legend (a line per GPU, a marker per phase present); returns its bottom.
fn legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    data: &RooflineData,
    theme: &Theme,
    labels: &Labels,
    w: i32,
) -> Result<i32, DrawError> {
    let mut legend: Vec<(Swatch, String)> = data
        .gpus
        .iter()
        .enumerate()
        .map(|(i, g)| (Swatch::Line(theme.gpu(i)), g.gpu.clone()))
        .collect();
    for ph in [
        PointKind::Prefill,
        PointKind::Decode,
        PointKind::Matmul,
        PointKind::Reference,
    ] {
        if data.points.iter().any(|p| p.phase == ph) {
            let (m, c) = phase_style(ph, theme);
            legend.push((Swatch::Marker(m, c), phase_name(ph, labels).to_string()));
        }
    }
    draw_legend(area, theme, &legend, 8, 4, w - 8)
}

/// Lays out and draws the log–log axes on whole decades.
fn frame<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    data: &RooflineData,
    theme: &Theme,
    labels: &Labels,
    size: (i32, i32, i32),
) -> Result<Frame, DrawError> {
    let (x0, x1) = data.x_decades();
    let (y0, y1) = data.y_decades();
    let x_axis = AxisSpec {
        ticks: axis::decade_ticks(x0, x1)
            .into_iter()
            .map(|v| (v, axis::fmt_decade(v)))
            .collect(),
        minor: axis::decade_minor_ticks(x0, x1),
        title: labels.intensity_axis,
    };
    let y_axis = AxisSpec {
        ticks: axis::decade_ticks(y0, y1)
            .into_iter()
            .map(|v| (v, axis::fmt_si(v)))
            .collect(),
        minor: axis::decade_minor_ticks(y0, y1),
        title: labels.attainable_axis,
    };
    let rect = axis::plot_rect(area, theme, size, (&x_axis, &y_axis), (100, 80))?;
    // Room above the highest ceiling for its label; decades below.
    let top_peak = data
        .gpus
        .iter()
        .flat_map(|g| g.ceilings.iter().map(|c| c.peak.0))
        .fold(10f64.powi(y0 + 1), f64::max);
    let xs = Scale::log(10f64.powi(x0), 10f64.powi(x1), rect.left, rect.right);
    let ys = Scale::log(10f64.powi(y0), top_peak * 2.2, rect.bottom, rect.top);
    axis::draw_frame(area, theme, rect, (&xs, &x_axis), (&ys, &y_axis))?;
    Ok(Frame { rect, xs, ys })
}

/// Roofs. The roof for the points' precision is solid (slope up to its ridge, then its
/// ceiling); other precisions' ceilings, and the slope above that ridge, are dashed.
fn draw_roofs<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    data: &RooflineData,
    (theme, labels): (&Theme, &Labels),
    frame: &Frame,
    m: &mut Marks,
) -> Result<RoofLabels, DrawError> {
    let (xs, ys) = (&frame.xs, &frame.ys);
    let mut roofs = RoofLabels {
        ridges: Vec::new(),
        ceilings: Vec::new(),
    };
    for (gi, g) in data.gpus.iter().enumerate() {
        let col = theme.gpu(gi);
        let Some(top_c) = g.ceilings.last() else {
            // No published peak: only the bandwidth slope, dashed, to the top of the plot.
            let x_end = xs.max.min(ys.max / g.bandwidth.0.max(1.0));
            let pts = [
                frame.px(xs.min, xs.min * g.bandwidth.0),
                frame.px(x_end, x_end * g.bandwidth.0),
            ];
            axis::dashed(area, &pts, (6.0, 4.0), col.stroke_width(2))?;
            continue;
        };
        let main = data
            .compute_dtype
            .and_then(|d| g.ceiling(d))
            .unwrap_or(top_c);
        let start = frame.px(xs.min, xs.min * g.bandwidth.0);
        let knee = frame.px(main.ridge_flop_per_byte, main.peak.0);
        area.draw(&PathElement::new(vec![start, knee], col.stroke_width(2)))
            .map_err(DrawError::backend)?;
        if top_c.peak.0 > main.peak.0 {
            let top_knee = frame.px(top_c.ridge_flop_per_byte, top_c.peak.0);
            axis::dashed(area, &[knee, top_knee], (6.0, 4.0), col.stroke_width(1))?;
        }
        for c in &g.ceilings {
            let a = frame.px(c.ridge_flop_per_byte, c.peak.0);
            draw_ceiling(area, (a, frame.rect), col, c.dtype == main.dtype)?;
            marker(area, Marker::Circle, a, 3, col, theme.background)?;
            m.placer.block((a.0 - 4, a.1 - 4, a.0 + 4, a.1 + 4));
            let label = ridge_label(c.ridge_flop_per_byte, labels);
            roofs
                .ridges
                .push((a, format!("{label} ({})", c.dtype.id()), col));
            roofs.ceilings.push((
                a,
                format!("{} {}FLOP/s", c.dtype.id(), axis::fmt_si(c.peak.0)),
                col,
            ));
            m.hits.point(
                format!("ridge/{}/{}", g.gpu, c.dtype.id()),
                a,
                6,
                vec![
                    format!("{} · {} ({})", g.gpu, labels.ridge, c.dtype.id()),
                    format!("{} FLOP/B", fmt_sig(c.ridge_flop_per_byte)),
                    format!(
                        "{} {}FLOP/s / {} GB/s",
                        c.dtype.id(),
                        axis::fmt_si(c.peak.0),
                        fmt_sig(g.bandwidth.gbps())
                    ),
                ],
            );
        }
    }
    Ok(roofs)
}

/// One ceiling from its ridge point `a` to the right edge (solid for the points'
/// precision, else dashed) and the dotted drop line from the ridge to the x axis.
fn draw_ceiling<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    (a, rect): ((i32, i32), PlotRect),
    col: RGBColor,
    main: bool,
) -> Result<(), DrawError> {
    if main {
        axis::line(area, a, (rect.right, a.1), col.stroke_width(2))?;
    } else {
        axis::dashed(
            area,
            &[a, (rect.right, a.1)],
            (6.0, 4.0),
            col.stroke_width(1),
        )?;
    }
    axis::dashed(
        area,
        &[a, (a.0, rect.bottom)],
        (2.0, 3.0),
        col.mix(0.7).stroke_width(1),
    )
}

/// Trails (drawn before the points, so under them) back to where each point sat at batch 1.
fn draw_trails<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    data: &RooflineData,
    (theme, labels): (&Theme, &Labels),
    frame: &Frame,
    m: &mut Marks,
) -> Result<(), DrawError> {
    for p in &data.points {
        if let Some((i1, a1)) = p.batch1 {
            let from = frame.px(i1, a1.0);
            let to = frame.px(p.intensity_flop_per_byte, p.attainable.0);
            let (_, col) = phase_style(p.phase, theme);
            axis::dashed(area, &[from, to], (4.0, 3.0), col.mix(0.8).stroke_width(1))?;
            marker(area, Marker::Ring, from, 4, col, theme.background)?;
            m.placer
                .block((from.0 - 5, from.1 - 5, from.0 + 5, from.1 + 5));
            m.hits.point(
                format!("{}/batch1", p.name),
                from,
                5,
                vec![
                    format!("{} · {}", p.name, labels.batch1),
                    format!("{}: {} FLOP/B", labels.intensity, fmt_sig(i1)),
                ],
            );
        }
    }
    Ok(())
}

/// The workload points, reference points last (on top: they are the fixed landmarks of the
/// lesson); returns them for their labels.
fn draw_points<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    data: &RooflineData,
    (theme, labels): (&Theme, &Labels),
    frame: &Frame,
    m: &mut Marks,
) -> Result<Vec<DrawnPoint>, DrawError> {
    let mut at_points = Vec::with_capacity(data.points.len());
    let mut order: Vec<&WorkPoint> = data.points.iter().collect();
    crate::core::base::sort_by(&mut order, &|a, b| {
        (a.phase == PointKind::Reference).cmp(&(b.phase == PointKind::Reference))
    });
    for p in order {
        let at = frame.px(p.intensity_flop_per_byte, p.attainable.0);
        let (shape, col) = phase_style(p.phase, theme);
        marker(area, shape, at, 5, col, theme.background)?;
        m.placer.block((at.0 - 6, at.1 - 6, at.0 + 6, at.1 + 6));
        m.hits.point(p.name.clone(), at, 7, point_lines(p, labels));
        at_points.push((at, p.name.clone(), col, p.named));
    }
    Ok(at_points)
}

/// Ridge and ceiling labels, always placed (moved until they fit).
fn label_roofs<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    theme: &Theme,
    rect: PlotRect,
    roofs: &RoofLabels,
    placer: &mut axis::Placer,
) -> Result<(), DrawError> {
    let lh = (theme.font_px * 1.2) as i32;
    // Ceiling labels sit just above the flat part, starting at the ridge.
    for (a, text, col) in &roofs.ceilings {
        let x = rect.right - 4;
        let cands = [
            (a.0 + 8, a.1 - 7, HPos::Left, VPos::Bottom),
            (x, a.1 - 7, HPos::Right, VPos::Bottom),
            (a.0 + 8, a.1 + 7, HPos::Left, VPos::Top),
            (x, a.1 + 7, HPos::Right, VPos::Top),
        ];
        placer.place(area, theme, (text, 0.85, *col), &cands, true)?;
    }
    // Ridge labels go at the foot of their drop lines: under the roof, right of the ridge,
    // the plot is always empty.
    for (a, text, col) in &roofs.ridges {
        let mut cands = Vec::new();
        for k in 0..8 {
            let y = rect.bottom - 4 - k * lh;
            cands.push((a.0 + 4, y, HPos::Left, VPos::Bottom));
            cands.push((a.0 - 4, y, HPos::Right, VPos::Bottom));
        }
        placer.place(area, theme, (text, 0.85, *col), &cands, true)?;
    }
    Ok(())
}

/// Point names where there is room; beyond `MAX_NAMED_POINTS` points only the named ones.
fn label_points<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    data: &RooflineData,
    theme: &Theme,
    at_points: &[DrawnPoint],
    placer: &mut axis::Placer,
) -> Result<(), DrawError> {
    let lh = (theme.font_px * 1.2) as i32;
    let crowded = data.points.len() > MAX_NAMED_POINTS;
    for (at, name, col, named) in at_points {
        if crowded && !named {
            continue;
        }
        let (x, y) = *at;
        let cands = [
            (x - 8, y - 5, HPos::Right, VPos::Bottom),
            (x + 8, y - 5, HPos::Left, VPos::Bottom),
            (x - 9, y, HPos::Right, VPos::Center),
            (x + 9, y, HPos::Left, VPos::Center),
            (x, y + 9, HPos::Center, VPos::Top),
            (x, y - 9, HPos::Center, VPos::Bottom),
            (x - 8, y + 6, HPos::Right, VPos::Top),
            (x + 8, y + 6, HPos::Left, VPos::Top),
            (x, y - 9 - lh, HPos::Center, VPos::Bottom),
            (x, y + 9 + lh, HPos::Center, VPos::Top),
            (x - 8, y - 5 - lh, HPos::Right, VPos::Bottom),
            (x + 8, y + 6 + lh, HPos::Left, VPos::Top),
        ];
        placer.place(area, theme, (name, 0.92, *col), &cands, false)?;
    }
    Ok(())
}

/// Table: one row per ceiling (ridge) and one per workload point.
pub fn table(data: &RooflineData, labels: &Labels) -> DataTable {
    let mut rows = Vec::new();
    for g in &data.gpus {
        for c in &g.ceilings {
            rows.push(vec![
                format!("{} · {} ({})", g.gpu, labels.ridge, c.dtype.id()),
                fmt_sig(c.ridge_flop_per_byte),
                format!("{}FLOP/s", axis::fmt_si(c.peak.0)),
                String::new(),
            ]);
        }
    }
    for p in &data.points {
        rows.push(vec![
            format!("{} · {}", p.name, phase_name(p.phase, labels)),
            fmt_sig(p.intensity_flop_per_byte),
            format!("{}FLOP/s", axis::fmt_si(p.attainable.0)),
            match p.bound {
                Bound::Memory => labels.bound_memory,
                Bound::Compute => labels.bound_compute,
            }
            .to_string(),
        ]);
    }
    DataTable {
        headers: vec![
            String::new(),
            format!("{} (FLOP/B)", labels.intensity),
            labels.attainable.to_string(),
            String::new(),
        ],
        rows,
    }
}

/// A good height in CSS pixels for a given width.
fn height(_data: &RooflineData, width: u32) -> u32 {
    if width < 520 {
        (width * 9 / 10).max(300)
    } else {
        (width * 5 / 8).clamp(360, 520)
    }
}

chart!(RooflineData, labelled, height = height);
