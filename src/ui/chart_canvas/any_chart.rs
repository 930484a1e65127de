//! A chart of any type behind one trait object, so the canvas component is compiled once
//! instead of once per chart type.

use crate::charts::canvas::{draw_on_canvas, HiDpiCanvas};
use crate::charts::{render_svg_via, Chart, DrawError, HitMap, Labels, Theme};
use web_sys::HtmlCanvasElement;

/// What the canvas component needs from a chart, without the chart's type: the component is
/// compiled once instead of once per chart type (which cost about 60 KB of wasm).
pub(super) trait CanvasChart: Send + Sync {
    fn draw_canvas(
        &self,
        canvas: &HtmlCanvasElement,
        css: (u32, u32),
        theme: &Theme,
        labels: &Labels,
    ) -> Result<HitMap, DrawError>;
    fn svg(&self, theme: &Theme, labels: &Labels, width: u32) -> Result<String, DrawError>;
    fn table(&self, labels: &Labels) -> crate::charts::DataTable;
    fn height_for_width(&self, width: u32) -> u32;
    fn as_any(&self) -> &dyn std::any::Any;
    /// Same type and equal data.
    fn same(&self, other: &dyn CanvasChart) -> bool;
}

impl<C: Chart + Send + Sync> CanvasChart for C {
    fn draw_canvas(
        &self,
        canvas: &HtmlCanvasElement,
        css: (u32, u32),
        theme: &Theme,
        labels: &Labels,
    ) -> Result<HitMap, DrawError> {
        draw_on_canvas(canvas, self, css, theme, labels)
    }
    fn svg(&self, theme: &Theme, labels: &Labels, width: u32) -> Result<String, DrawError> {
        // The export draws as Either::Right, the canvas as Either::Left: every chart's drawing
        // code is compiled once for both (charts::either).
        render_svg_via::<HiDpiCanvas, _>(self, theme, labels, (width, self.height_for_width(width)))
            .map(|(s, _)| s)
    }
    fn table(&self, labels: &Labels) -> crate::charts::DataTable {
        Chart::table(self, labels)
    }
    fn height_for_width(&self, width: u32) -> u32 {
        Chart::height_for_width(self, width)
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn same(&self, other: &dyn CanvasChart) -> bool {
        other.as_any().downcast_ref::<C>() == Some(self)
    }
}

/// A chart of any type, shared: cloning it is cheap, and equal means "same data".
#[derive(Clone)]
pub(super) struct AnyChart(pub(super) std::sync::Arc<dyn CanvasChart>);

impl PartialEq for AnyChart {
    fn eq(&self, other: &Self) -> bool {
        self.0.same(other.0.as_ref())
    }
}
