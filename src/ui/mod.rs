//! The Leptos single-page app (wasm only). One component per file.

/// Mounts the app on `<body>`.
pub fn mount() {}
