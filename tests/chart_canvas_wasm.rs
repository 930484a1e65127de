//! `ChartCanvas` in a real browser (headless Chromium through wasm-bindgen-test-runner):
//! the canvas is sized CSS × devicePixelRatio and has drawn pixels, the data table mirrors the
//! data, the language switch reaches the labels, and a too-small container shows a message
//! instead of a chart (no panic); a chart off screen keeps its place and draws only when it
//! scrolls in, and a gated memo waits off screen and catches up.
//!
//! Run: `cargo test --target wasm32-unknown-unknown --test chart_canvas_wasm`.
#![cfg(target_arch = "wasm32")]

use leptos::prelude::*;
use llm_serving_calculator::core::base::dtype::Dtype;
use llm_serving_calculator::core::base::i18n::Lang;
use llm_serving_calculator::core::hardware::catalog::Catalog;
use llm_serving_calculator::core::present::series::{
    roofline, PointSpec, RooflineData, RooflineGpu,
};
use llm_serving_calculator::ui::chart_canvas::ChartCanvas;
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement, HtmlElement};

wasm_bindgen_test_configure!(run_in_browser);

fn data() -> RooflineData {
    let l40s = Catalog::builtin()
        .get("l40s")
        .map(RooflineGpu::from_accelerator);
    let w = [
        PointSpec::at_intensity("210 FLOP/B", 210.0),
        PointSpec::at_intensity("1,000 FLOP/B", 1000.0),
    ];
    roofline(l40s.into_iter().collect(), Dtype::Bf16, &w)
}

/// Waits `ms` milliseconds (lets ResizeObserver callbacks and redraws run).
async fn sleep(ms: i32) {
    let p = js_sys::Promise::new(&mut |resolve, _| {
        if let Some(w) = web_sys::window() {
            let _ = w.set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, ms);
        }
    });
    let _ = leptos::__reexports::wasm_bindgen_futures::JsFuture::from(p).await;
}

fn host(width_px: u32) -> HtmlElement {
    // The translation rows and configuration classes, as the page's shell links them
    // (`ui::mount`).
    llm_serving_calculator::core::present::link_page();
    let doc = web_sys::window()
        .and_then(|w| w.document())
        .expect("document");
    let el: HtmlElement = doc
        .create_element("div")
        .expect("div")
        .dyn_into()
        .expect("html element");
    el.style()
        .set_property("width", &format!("{width_px}px"))
        .expect("style");
    doc.body().expect("body").append_child(&el).expect("append");
    el
}

#[wasm_bindgen_test]
async fn draws_sharp_with_table_and_language() {
    let el = host(600);
    let lang = RwSignal::new(Lang::En);
    let d = RwSignal::new(data());
    let _handle = leptos::mount::mount_to(el.clone(), move || {
        view! {
            <ChartCanvas<RooflineData>
                data=d
                lang=lang
                dark=false
                title="Roofline".to_string()
                test_id="chart-roofline"
            />
        }
    });
    sleep(100).await;

    let canvas: HtmlCanvasElement = el
        .query_selector("[data-testid=chart-roofline] canvas")
        .ok()
        .flatten()
        .and_then(|c| c.dyn_into().ok())
        .expect("canvas");
    let dpr = web_sys::window()
        .map(|w| w.device_pixel_ratio())
        .unwrap_or(1.0)
        .max(1.0);
    assert_eq!(
        canvas.width(),
        (600.0 * dpr).round() as u32,
        "backing store = CSS × DPR"
    );
    assert!(canvas.height() > 0);

    // Drawn pixels: something other than the white background.
    let inked = inked(&el);
    assert!(inked > 1000, "only {inked} drawn pixels");

    // The table (built when its <details> opens): one row per ceiling and per point.
    let details: web_sys::HtmlDetailsElement = el
        .query_selector("details")
        .ok()
        .flatten()
        .and_then(|d| d.dyn_into().ok())
        .expect("details");
    details.set_open(true);
    sleep(50).await;
    let rows = el
        .query_selector("details tbody")
        .ok()
        .flatten()
        .map(|b| b.child_element_count() as usize)
        .unwrap_or(0);
    let expected = d.with_untracked(|r| {
        r.gpus.iter().map(|g| g.ceilings.len()).sum::<usize>() + r.points.len()
    });
    assert_eq!(rows, expected);

    // Korean labels after switching the language.
    lang.set(Lang::Ko);
    sleep(50).await;
    let summary = el
        .query_selector("details summary")
        .ok()
        .flatten()
        .and_then(|s| s.text_content());
    assert_eq!(summary.as_deref(), Some("데이터를 표로 보기"));
}

#[wasm_bindgen_test]
async fn too_small_shows_a_message_not_a_panic() {
    let el = host(60);
    let d = RwSignal::new(data());
    let _handle = leptos::mount::mount_to(el.clone(), move || {
        view! {
            <ChartCanvas<RooflineData> data=d lang=Lang::En dark=true title="Roofline".to_string() test_id="chart-small" />
        }
    });
    sleep(100).await;
    let alert = el
        .query_selector("[role=alert]")
        .ok()
        .flatten()
        .and_then(|a| a.text_content());
    assert_eq!(
        alert.as_deref(),
        Some("The chart area is too small to draw in.")
    );
}

/// How many pixels of the chart's canvas are drawn (neither transparent nor near-white).
fn inked(el: &HtmlElement) -> usize {
    let Some(canvas) = el
        .query_selector("canvas")
        .ok()
        .flatten()
        .and_then(|c| c.dyn_into::<HtmlCanvasElement>().ok())
    else {
        return 0;
    };
    if canvas.width() == 0 || canvas.height() == 0 {
        return 0;
    }
    let ctx: CanvasRenderingContext2d = canvas
        .get_context("2d")
        .ok()
        .flatten()
        .and_then(|c| c.dyn_into().ok())
        .expect("2d");
    let img = ctx
        .get_image_data(0.0, 0.0, canvas.width() as f64, canvas.height() as f64)
        .expect("image data");
    img.data()
        .chunks(4)
        .filter(|p| p[3] > 0 && (p[0] < 200 || p[1] < 200 || p[2] < 200))
        .count()
}

#[wasm_bindgen_test]
async fn off_screen_charts_draw_when_they_scroll_in() {
    // A chart far below the viewport: its place is kept, nothing is drawn.
    let el = host(500);
    el.style()
        .set_property("margin-top", "6000px")
        .expect("style");
    let d = RwSignal::new(data());
    let _handle = leptos::mount::mount_to(el.clone(), move || {
        view! {
            <ChartCanvas<RooflineData> data=d lang=Lang::En dark=false title="Roofline".to_string() test_id="chart-lazy" />
        }
    });
    sleep(150).await;
    assert_eq!(inked(&el), 0, "an off-screen chart was drawn");
    let reserved = el
        .query_selector("canvas")
        .ok()
        .flatten()
        .and_then(|c| c.dyn_into::<HtmlElement>().ok())
        .map(|c| c.offset_height())
        .unwrap_or(0);
    let expected = d.with_untracked(|r| {
        use llm_serving_calculator::charts::Chart;
        r.height_for_width(500)
    });
    assert_eq!(
        reserved, expected as i32,
        "the canvas keeps the chart's height"
    );

    // Scrolled in: drawn.
    el.scroll_into_view();
    sleep(200).await;
    assert!(inked(&el) > 1000, "the chart did not draw on screen");
    el.remove();
}

#[wasm_bindgen_test]
fn gated_memo_waits_off_screen_and_catches_up() {
    use llm_serving_calculator::ui::in_view::gated_memo;
    let owner = Owner::new();
    owner.with(|| {
        let visible = RwSignal::new(true);
        let input = RwSignal::new(1);
        let runs = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counter = runs.clone();
        let m = gated_memo(visible.into(), move || {
            counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            input.get() * 2
        });
        assert_eq!(m.get_untracked(), 2);
        visible.set(false);
        input.set(5);
        assert_eq!(m.get_untracked(), 2, "off screen: the last value stays");
        input.set(6);
        assert_eq!(m.get_untracked(), 2);
        let before = runs.load(std::sync::atomic::Ordering::SeqCst);
        visible.set(true);
        assert_eq!(m.get_untracked(), 12, "on screen again: the newest inputs");
        assert_eq!(runs.load(std::sync::atomic::Ordering::SeqCst), before + 1);
        // Hidden and shown again with no input changed meanwhile: nothing to catch up.
        let before = runs.load(std::sync::atomic::Ordering::SeqCst);
        visible.set(false);
        assert_eq!(m.get_untracked(), 12);
        visible.set(true);
        assert_eq!(m.get_untracked(), 12);
        assert_eq!(
            runs.load(std::sync::atomic::Ordering::SeqCst),
            before,
            "recomputed on showing again although no input changed"
        );
        // On screen, each input change recomputes.
        input.set(7);
        assert_eq!(m.get_untracked(), 14);
        assert_eq!(runs.load(std::sync::atomic::Ordering::SeqCst), before + 1);
    });
}

#[wasm_bindgen_test]
async fn a_chart_only_near_the_screen_draws_once_the_inputs_settle() {
    use llm_serving_calculator::ui::state::AppState;
    // Just below the viewport: inside the margin that draws charts before they scroll in,
    // but not on the screen itself.
    let below = web_sys::window()
        .and_then(|w| w.inner_height().ok())
        .and_then(|h| h.as_f64())
        .unwrap_or(800.0) as i32
        + 100;
    let el = host(500);
    el.style()
        .set_property("margin-top", &format!("{below}px"))
        .expect("style");
    let state = AppState::from_location();
    let settled = state.settled;
    settled.set(false);
    let d = RwSignal::new(data());
    let _handle = leptos::mount::mount_to(el.clone(), move || {
        provide_context(state);
        view! {
            <ChartCanvas<RooflineData> data=d lang=Lang::En dark=false title="Roofline".to_string() test_id="chart-near" />
        }
    });
    sleep(150).await;
    assert_eq!(
        inked(&el),
        0,
        "a chart only near the screen was drawn while the inputs were changing"
    );
    settled.set(true);
    sleep(150).await;
    assert!(
        inked(&el) > 1000,
        "the chart near the screen did not draw once the inputs settled"
    );
    el.remove();
}
