//! The first answer of a link, before the shell: built by Trunk like the late module (a
//! `data-type="worker"` rust asset with `data-bindgen-target="web"`, so nothing starts it but
//! `public/loader.js`), it links the core and no UI framework. Glue only:
//! `core::present::FirstScreen`, whose JSON `public/loader.js` writes into the prerendered
//! copy of the first screen.

// No `main` in the wasm: nothing starts the module but its export (std's runtime start is bytes
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
    use llmcalc_core::base::Lang;
    use llmcalc_core::present::FirstScreen;
    use wasm_bindgen::prelude::wasm_bindgen;

    /// The first screen of the page at `query` (`location.search`) for a browser whose
    /// language is `browser` (`navigator.language`), as JSON; "" when the copy cannot show it.
    #[wasm_bindgen]
    pub fn first_screen(query: &str, browser: &str) -> String {
        // Only the first screen's translation rows (`present::link_first`).
        llmcalc_core::present::link_first();
        FirstScreen::json(query, Lang::from_code(browser).unwrap_or_default())
    }
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!("This binary is the web app's first-answer module; build it with `trunk build`.");
    std::process::exit(2);
}
