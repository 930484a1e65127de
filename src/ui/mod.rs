//! The Leptos single-page app (wasm only). One component per file; the shared state and the
//! browser glue are in [`state`].

pub mod accuracy_view;
pub mod app;
pub mod chart_canvas;
pub mod charts_panel;
pub mod custom_gpu_form;
pub mod dtype_select;
pub mod embed;
pub mod embed_inputs;
pub mod explanation;
pub mod export_bar;
pub mod fit_table;
pub mod float_field;
pub mod gpu_picker;
pub mod gpu_select;
pub mod header;
pub mod hub_fetch;
pub mod in_view;
pub mod keep_alive;
pub mod largest_model;
pub mod late;
pub mod late_app;
pub mod math_panel;
pub mod matmul_explorer;
pub mod model_details;
pub mod model_input;
pub mod notice;
pub mod number_field;
pub mod offline;
pub mod perf_notes;
pub mod perf_view;
pub mod plan_search_view;
pub mod planner_sim_view;
pub mod planner_view;
pub mod preset_select;
pub mod roofline_view;
pub mod section_index;
pub mod serving_bench_view;
pub mod serving_controls;
pub mod serving_disagg_table;
pub mod serving_view;
pub mod sim_client;
pub mod sim_status;
pub mod state;
pub mod summary_cards;
pub mod tp_sweep;
pub mod view_common;
pub mod workload;

/// Mounts the app on `<body>`: a panic hook that logs to the console, then the [`app::App`]
/// component, which reads the scenario from the URL.
pub fn mount() {
    console_error_panic_hook::set_once();
    // Every shell translation row and configuration class (the first-answer module links only
    // its own).
    crate::core::present::link_page();
    leptos::mount::mount_to_body(app::App);
    offline::register_for_location();
}
