//! The browser app's entry point (built by Trunk for wasm32).

#[cfg(target_arch = "wasm32")]
fn main() {
    // Named marks of the start, read by bench/start_trace.mjs (a mark costs microseconds).
    llm_serving_calculator::ui::app::start_mark("llmcalc:main");
    llm_serving_calculator::ui::mount();
    llm_serving_calculator::ui::app::start_mark("llmcalc:mounted");
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!("This binary is the web app; build it with `trunk build`. The CLI is `llmcalc`.");
    std::process::exit(2);
}
