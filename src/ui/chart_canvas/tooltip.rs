//! `ChartTooltip`: the tooltip of the hover region under the pointer, and where it goes.

use leptos::prelude::*;

/// Where the tooltip goes for a pointer at (`x`, `y`) on a chart of `w` × `h` CSS pixels: beside
/// the pointer, on the side towards the chart's centre, so it stays inside the chart's section
/// (which clips what overflows it, style/results.css).
pub(super) fn tooltip_position(x: i32, y: i32, w: u32, h: u32) -> String {
    let (w, h) = (w as i32, h as i32);
    let across = if x > w / 2 {
        format!("right:{}px", (w - x + 12).max(0))
    } else {
        format!("left:{}px", x + 12)
    };
    let down = if y > h / 2 {
        format!("bottom:{}px", (h - y + 12).max(0))
    } else {
        format!("top:{}px", y + 12)
    };
    format!("position:absolute;{across};{down};pointer-events:none")
}

/// The tooltip of the hover region under the pointer: its first line in bold.
#[component]
pub(super) fn ChartTooltip(
    /// The tooltip's CSS position and its lines, while the pointer is over a region.
    tooltip: RwSignal<Option<(String, Vec<String>)>>,
) -> impl IntoView {
    move || {
        tooltip.get().map(|(position, lines)| {
            view! {
                <div class="chart-tooltip" role="status" style=position>
                    {lines
                        .into_iter()
                        .enumerate()
                        .map(|(i, l)| {
                            if i == 0 {
                                view! { <strong>{l}</strong> }.into_any()
                            } else {
                                view! { <span>{l}</span> }.into_any()
                            }
                        })
                        .collect_view()}
                </div>
            }
        })
    }
}
