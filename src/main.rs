//! The browser app's entry point (built by Trunk for wasm32).

#[cfg(target_arch = "wasm32")]
fn main() {
    llm_serving_calculator::ui::mount();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!("This binary is the web app; build it with `trunk build`. The CLI is `llmcalc`.");
    std::process::exit(2);
}
