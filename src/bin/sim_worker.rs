//! The serving simulator's Web Worker (built by Trunk as a `data-type="worker"` rust asset,
//! `index.html`): glue only. It tells the page it is ready, then answers each message (a
//! `core::present::ServingJob` as JSON text) with the reply of
//! `core::present::run_job_json`. The page's main module never links the simulator; this
//! binary does.

#[cfg(target_arch = "wasm32")]
fn main() {
    use llm_serving_calculator::core::present::run_job_json_with;
    use wasm_bindgen::closure::Closure;
    use wasm_bindgen::{JsCast, JsValue};

    // Every translation row (the shell's, and those the page's shell does not carry: the
    // simulator's sentences) and configuration class.
    llm_serving_calculator::core::present::link_page();
    llm_serving_calculator::core::base::link_late();
    let scope: web_sys::DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let out = scope.clone();
    let on_message =
        Closure::<dyn FnMut(web_sys::MessageEvent)>::new(move |ev: web_sys::MessageEvent| {
            let text = ev.data().as_string().unwrap_or_default();
            let mut post = |m: &str| {
                let _ = out.post_message(&JsValue::from_str(m));
            };
            let reply = run_job_json_with(&text, &mut post);
            post(&reply);
        });
    scope.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    // The worker lives as long as the page: the handler is never dropped.
    on_message.forget();
    let _ = scope.post_message(&JsValue::from_str(r#"{"kind":"ready"}"#));
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!("This binary is the app's serving-simulator worker; build it with `trunk build`.");
    std::process::exit(2);
}
