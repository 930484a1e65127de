#!/usr/bin/env bash
# README command 1: installs what building needs if missing (scripts/setup.sh --serve: no
# browser, fonts or test tools), then builds the app in
# release mode and serves it on http://127.0.0.1:8080 with the default scenario (Llama-2-7b on
# A10G and L40S at 4,096 tokens), rebuilding when a file changes (reload the page to see it:
# Trunk's auto-reload is an inline script, which the page's Content-Security-Policy blocks).
# Stop with Ctrl-C.
#
# Usage: bash scripts/serve.sh [extra trunk serve flags]
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

bash scripts/setup.sh --serve

export PATH="$HOME/.cargo/bin:$ROOT/e2e/node_modules/.bin:$PATH"
export TRUNK_SKIP_VERSION_CHECK=true
echo "serve: http://127.0.0.1:8080/"
exec trunk serve --release --address 127.0.0.1 --port 8080 --no-autoreload "$@"
