//! The late module: the analysis sections, loaded after the first answer is painted
//! (built by Trunk as a `data-type="worker"` rust asset with `data-bindgen-target="web"`, so
//! nothing starts it but `public/loader.js`, when the shell asks). Glue only: `ui::late_app`.

#[cfg(target_arch = "wasm32")]
fn main() {
    llm_serving_calculator::ui::late_app::mount_late();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!("This binary is the web app's late module; build it with `trunk build`.");
    std::process::exit(2);
}
