#!/usr/bin/env bash
# Installs everything the app's build, serve and test commands need, on a machine that has
# only Rust (rustup), Node.js/npm and Debian's apt. Every step checks first and is skipped
# when the right version is already there, so a re-run takes a second.
#
#   wasm32-unknown-unknown target   rustup
#   trunk 0.21.14                   cargo install --locked (0.22 needs a newer rustc)
#   wasm-bindgen-cli                cargo install, the exact version Cargo.lock pins
#                                   (without --locked: its own lockfile names a crate version
#                                   the registry mirror lacks)
#   chromium + chromium-driver      Debian packages (headless browser tests)
#   fonts-noto-cjk                  Debian package: Hangul glyphs, so the Korean UI in the
#                                   screenshots shows text, not boxes
#   binaryen (wasm-opt)             npm ci in e2e/ (npm's binaryen 132: Debian's wasm-opt 108
#                                   silently breaks the module)
#   playwright-core, axe-core       the same npm ci (its devDependencies: test tools)
#
# With --serve (scripts/serve.sh) only what building and serving need: no Chromium, no fonts,
# no npm test tools (npm ci --omit=dev brings binaryen alone).
#
# Usage: bash scripts/setup.sh [--serve]   (scripts/serve.sh, test.sh and bench.sh call it)
set -euo pipefail

serve_only=0
case "${1:-}" in
    --serve) serve_only=1 ;;
    "") ;;
    *) echo "usage: bash scripts/setup.sh [--serve]" >&2; exit 2 ;;
esac

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

TRUNK_VERSION="0.21.14"
WASM_OPT_VERSION="132"
export PATH="$HOME/.cargo/bin:$ROOT/e2e/node_modules/.bin:$PATH"

log() { printf 'setup: %s\n' "$*"; }
die() { printf 'setup: error: %s\n' "$*" >&2; exit 1; }

# Runs a command as root: directly when we are root, else through sudo when it is available.
as_root() {
    if [ "$(id -u)" = "0" ]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo -n "$@" || die "needs root for: $* (run as root or allow sudo)"
    else
        die "needs root for: $* (run as root or install sudo)"
    fi
}

apt_updated=0
apt_install() {
    if [ "$apt_updated" = "0" ]; then
        as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q
        apt_updated=1
    fi
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@"
}

# Prints the version of the `wasm-bindgen` package recorded in Cargo.lock (the one that is
# linked into the app; wasm-bindgen-cli must be the same version, to the patch level).
wasm_bindgen_lock_version() {
    awk '
        /^\[\[package\]\]/ { in_pkg = 0 }
        /^name = "wasm-bindgen"$/ { in_pkg = 1; next }
        in_pkg && /^version = "/ { v = $3; gsub(/"/, "", v); print v; exit }
    ' Cargo.lock
}

# --- Rust toolchain pieces -----------------------------------------------------------------
command -v cargo >/dev/null 2>&1 || die "cargo not found: install Rust with rustup first"
if command -v rustup >/dev/null 2>&1; then
    if ! rustup target list --installed | grep -qx 'wasm32-unknown-unknown'; then
        log "adding rust target wasm32-unknown-unknown"
        rustup target add wasm32-unknown-unknown
    fi
    for component in rustfmt clippy; do
        if ! rustup component list --installed | grep -q "^${component}"; then
            log "adding rust component ${component}"
            rustup component add "$component"
        fi
    done
else
    log "rustup not found; assuming the wasm32 target, rustfmt and clippy are installed"
fi

# --- trunk ---------------------------------------------------------------------------------
if [ "$(trunk --version 2>/dev/null || true)" != "trunk ${TRUNK_VERSION}" ]; then
    log "installing trunk ${TRUNK_VERSION} (cargo install, about 6-7 minutes)"
    cargo install trunk --version "$TRUNK_VERSION" --locked --force
fi

# --- wasm-bindgen-cli (bindgen + test runner), same version as Cargo.lock ------------------
[ -f Cargo.lock ] || cargo generate-lockfile
WB_VERSION="$(wasm_bindgen_lock_version)"
[ -n "$WB_VERSION" ] || die "could not read the wasm-bindgen version from Cargo.lock"
if [ "$(wasm-bindgen --version 2>/dev/null || true)" != "wasm-bindgen ${WB_VERSION}" ] ||
    ! command -v wasm-bindgen-test-runner >/dev/null 2>&1; then
    log "installing wasm-bindgen-cli ${WB_VERSION} (cargo install, about 2-3 minutes)"
    cargo install wasm-bindgen-cli --version "$WB_VERSION" --force
fi

# --- Chromium and ChromeDriver (Debian; tests and benchmarks only) --------------------------
if [ "$serve_only" = "0" ]; then
    if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then
        log "installing chromium and chromium-driver (apt)"
        apt_install chromium chromium-driver
    fi
    if ! fc-list 2>/dev/null | grep -qi "Noto Sans CJK"; then
        log "installing fonts-noto-cjk (apt)"
        apt_install fonts-noto-cjk
    fi
fi

# --- Node.js tools (npm ci from the lockfile) ----------------------------------------------
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    log "installing nodejs and npm (apt)"
    apt_install nodejs npm
fi
# npm writes node_modules/.package-lock.json on install; if it is older than the lockfile, or
# wasm-opt is not the expected version, reinstall exactly what the lockfile says.
# The test tools are checked only when they are wanted (a --serve install has none).
if [ ! -f e2e/node_modules/.package-lock.json ] ||
    [ e2e/package-lock.json -nt e2e/node_modules/.package-lock.json ] ||
    [ e2e/package.json -nt e2e/node_modules/.package-lock.json ] ||
    ! (wasm-opt --version 2>/dev/null | grep -q "version ${WASM_OPT_VERSION}") ||
    { [ "$serve_only" = "0" ] && [ ! -f e2e/node_modules/playwright-core/package.json ]; }; then
    if [ "$serve_only" = "1" ]; then
        log "installing wasm-opt (npm ci --omit=dev in e2e/: binaryen only)"
        (cd e2e && npm ci --omit=dev --no-audit --no-fund --loglevel=error)
    else
        log "installing e2e/bench tools (npm ci in e2e/)"
        (cd e2e && npm ci --no-audit --no-fund --loglevel=error)
    fi
fi

# --- Report --------------------------------------------------------------------------------
log "ready: $(rustc --version), $(trunk --version), $(wasm-bindgen --version), \
wasm-opt $(wasm-opt --version | awk '{print $3}'), $(chromium --version 2>/dev/null | head -n1 || true), \
node $(node --version)"
