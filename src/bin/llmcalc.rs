//! `llmcalc`: the command-line interface over the calculation core.

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let code =
        llm_serving_calculator::cli::run(&args, &mut std::io::stdout(), &mut std::io::stderr());
    std::process::exit(code);
}

#[cfg(target_arch = "wasm32")]
fn main() {}
