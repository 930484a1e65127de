//! An embedded widget's first answer, before the shell (`?embed=memory`, `kv`, `batch`): the
//! first-answer module of `main.rs` plus the widget's chart, drawn on the prerendered copy's
//! canvas by the live widget's own drawing code (`llmcalc-charts`). Its own binary so a scenario
//! link's module carries no chart code; built by Trunk the same way (index.html) and started by
//! `public/loader.js` alone.

// No `main` in the wasm: nothing starts the module but its exports (std's runtime start is bytes
// for nothing).
#![cfg_attr(target_arch = "wasm32", no_main)]

/// A free-list allocator instead of std's dlmalloc: smaller code for what a first answer
/// allocates (about 2.5 kB brotli less per module; its lock costs nothing on wasm's one thread).
#[cfg(target_arch = "wasm32")]
#[global_allocator]
static ALLOC: lol_alloc::LockedAllocator<lol_alloc::FreeListAllocator> =
    lol_alloc::LockedAllocator::new(lol_alloc::FreeListAllocator::new());

#[cfg(target_arch = "wasm32")]
mod glue {
    use llmcalc_charts::canvas::{draw_on_canvas_only, labels_in};
    use llmcalc_charts::{Chart, Theme};
    use llmcalc_core::base::Lang;
    use llmcalc_core::present::{EmbedChart, EmbedScreen};
    use std::cell::RefCell;
    use wasm_bindgen::prelude::wasm_bindgen;
    use web_sys::HtmlCanvasElement;

    thread_local! {
        /// The last widget answered, for [`draw_embed_chart`].
        static LAST: RefCell<Option<EmbedScreen>> = const { RefCell::new(None) };
    }

    /// The widget of the page at `path` + `query` (`location.pathname`, `location.search`)
    /// for a browser whose language is `browser` (`navigator.language`), as JSON; "" when
    /// the copy cannot show it.
    #[wasm_bindgen]
    pub fn embed_screen(path: &str, query: &str, browser: &str) -> String {
        llmcalc_core::present::link_embed();
        let (json, screen) =
            EmbedScreen::json(path, query, Lang::from_code(browser).unwrap_or_default());
        LAST.with(|l| *l.borrow_mut() = screen);
        json
    }

    /// Draws the last widget's chart on `canvas` at `width` CSS pixels, as the live widget
    /// draws it; false when there is none or the drawing failed (the live widget then draws).
    #[wasm_bindgen]
    pub fn draw_embed_chart(canvas: &HtmlCanvasElement, width: u32, dark: bool) -> bool {
        LAST.with(|l| {
            let last = l.borrow();
            let Some(e) = last.as_ref() else {
                return false;
            };
            let (theme, labels) = (Theme::for_dark(dark), labels_in(e.lang()));
            match &e.chart {
                EmbedChart::Memory(c) => draw(canvas, c, width, &theme, &labels),
                EmbedChart::Kv(c) => draw(canvas, c, width, &theme, &labels),
                EmbedChart::Batch(c) => draw(canvas, c, width, &theme, &labels),
            }
        })
    }

    fn draw<C: Chart>(
        canvas: &HtmlCanvasElement,
        chart: &C,
        width: u32,
        theme: &Theme,
        labels: &llmcalc_charts::Labels,
    ) -> bool {
        let height = chart.height_for_width(width);
        draw_on_canvas_only(canvas, chart, (width, height), theme, labels).is_ok()
    }
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!(
        "This binary is the web app's first-answer module for embeds; build it with `trunk build`."
    );
    std::process::exit(2);
}
