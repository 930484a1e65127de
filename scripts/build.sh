#!/usr/bin/env bash
# The release build of the web app into dist/ (or DIST): `trunk build --release`, after the same
# cargo builds done two bins at a time.
#
#   usage: bash scripts/build.sh [--dist DIR]
#
# Trunk builds each wasm module with its own `cargo build --bin X`, one after another (they
# share the target directory's lock), and each ends in a single-threaded link-time
# optimisation. Building the top-level package's three bins in one cargo call, and the
# first-answer crate's two in another, runs those links side by side on two cores; Trunk then
# finds every module fresh. Same flags, same package selection, so the same artefacts. Then
# dist/loader.js loses its comments (scripts/strip_comments.mjs; `trunk serve` keeps them).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
dist=()
out=dist
if [ "${1:-}" = "--dist" ] && [ -n "${2:-}" ]; then dist=(--dist "$2"); out="$2"; fi
wasm=(--release --target wasm32-unknown-unknown)
cargo build "${wasm[@]}" --manifest-path crates/first/Cargo.toml --bin first --bin first_embed
cargo build "${wasm[@]}" --bin app --bin sections --bin sim_worker
trunk build --release --public-url ./ "${dist[@]}"
# The loader without its comments and indentation (it comes before every first answer).
node scripts/strip_comments.mjs "$out/loader.js"
