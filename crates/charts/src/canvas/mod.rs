//! Drawing a chart on a `<canvas>`: the HiDPI backend ([`HiDpiCanvas`]) and the chart labels of
//! a language ([`labels_in`]), shared by the app's canvas component and the embeds' first
//! answer.

mod backend;
mod labels;

pub use backend::{draw_on_canvas, draw_on_canvas_only, rehearse, HiDpiCanvas};
pub use labels::labels_in;
