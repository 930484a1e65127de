#!/usr/bin/env bash
# README command 2: installs what is missing (scripts/setup.sh), then runs every check in order:
#
#   fmt            cargo fmt --all --check   (the app and crates/core)
#   clippy         cargo clippy --all-targets -- -D warnings                     (native)
#   clippy-wasm    cargo clippy --target wasm32-unknown-unknown --lib --bins --examples
#                    --test <each tests/*.rs that uses wasm_bindgen_test> -- -D warnings
#   test           cargo test --no-fail-fast   (unit, integration, doc tests)
#   test-wasm      cargo test --target wasm32-unknown-unknown --test <those files> (headless
#                    Chromium via wasm-bindgen-test-runner + chromedriver; only when they exist)
#   fuzz           bash scripts/fuzz.sh 20   short libFuzzer run per parser (when present)
#   build          bash scripts/build.sh: trunk build --release --public-url ./ (dist/ for any
#                    sub-path), its cargo builds done two bins at a time
#   late-keys      cargo test --test late_keys -- --ignored   data/i18n/late against the
#                    translation keys the fresh dist's shell wasm names (its data-wasm file)
#   bench-size     node bench/size.mjs      shipped bytes: raw, gzip, brotli (report only; the
#                    short form of scripts/bench.sh, which runs every benchmark)
#   e2e            node e2e/run.mjs         end-to-end tests, headless Chromium, dist/ served
#                                           under a sub-path
#
# Every stage runs even if an earlier one failed (except those that need the build), each
# under a time limit. Logs go to artifacts/logs/, screenshots to artifacts/screenshots/.
# The last line is `N passed, N failed[, N skipped]`, counting the tests of the test stages
# (cargo's and the e2e runner's own counts); a stage that is a check, not a test (fmt, clippy,
# the build), counts only as a failure when it fails. The exit status is non-zero if anything
# failed.
#
# Usage: bash scripts/test.sh [--no-setup] [--only STAGE[,STAGE...]]
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

run_setup=1
only=""
while [ $# -gt 0 ]; do
    case "$1" in
        --no-setup) run_setup=0 ;;
        --only) only=",$2,"; shift ;;
        *) echo "usage: bash scripts/test.sh [--no-setup] [--only STAGE[,STAGE...]]" >&2; exit 2 ;;
    esac
    shift
done

export WASM_BINDGEN_TEST_TIMEOUT="${WASM_BINDGEN_TEST_TIMEOUT:-60}"

# The tools on PATH, stage, skip, summary and the counters.
. "$ROOT/scripts/stages.sh"

if [ "$run_setup" = "1" ]; then
    note "setup: bash scripts/setup.sh"
    t0=$(date +%s)
    bash scripts/setup.sh </dev/null 2>&1 | tee "$LOGS/setup.log"
    if [ "${PIPESTATUS[0]}" != "0" ]; then
        echo "setup failed after $(($(date +%s) - t0))s: see artifacts/logs/setup.log"
        failed=$((failed + 1))
        table+=("$(printf '%-12s %-18s %5ss' setup FAILED "$(($(date +%s) - t0))")")
        summary
        exit 1
    fi
    table+=("$(printf '%-12s %-18s %5ss' setup ok "$(($(date +%s) - t0))")")
fi

stage fmt plain 300 cargo fmt --all --check -- --color never
stage clippy plain 1800 cargo clippy --all-targets -- -D warnings
# For wasm: the lib, the bins, the examples and the integration tests written for the browser
# (tests/*.rs that use wasm_bindgen_test). Native-only test files need not compile for wasm.
wasm_tests=()
for f in tests/*.rs; do
    [ -f "$f" ] && grep -q 'wasm_bindgen_test' "$f" && wasm_tests+=(--test "$(basename "$f" .rs)")
done
stage clippy-wasm plain 1800 cargo clippy --target wasm32-unknown-unknown --lib --bins --examples \
    "${wasm_tests[@]}" -- -D warnings
stage test cargo 2400 cargo test --no-fail-fast

wasm_lib=()
grep -rq 'wasm_bindgen_test' src 2>/dev/null && wasm_lib=(--lib)
if [ "${#wasm_tests[@]}" -gt 0 ] || [ "${#wasm_lib[@]}" -gt 0 ]; then
    stage test-wasm cargo 1800 cargo test --target wasm32-unknown-unknown "${wasm_lib[@]}" "${wasm_tests[@]}"
else
    skip test-wasm "no #[wasm_bindgen_test] in src/ or tests/"
fi

# A short coverage-guided fuzz run (scripts/fuzz.sh installs cargo-fuzz itself and
# prints the executions per target); seconds per target from FUZZ_SECONDS.
if [ -f scripts/fuzz.sh ]; then
    FUZZ_JOBS="${FUZZ_JOBS:-3}" stage fuzz plain 1500 bash scripts/fuzz.sh "${FUZZ_SECONDS:-20}"
fi

# Trunk rewrites dist/ (and `trunk serve` leaves a debug build there): always build fresh.
if [ -z "$only" ] || [[ "$only" == *",build,"* ]]; then rm -rf dist; fi
if stage build plain 1800 bash scripts/build.sh; then
    built=1
else
    built=0
fi
if [ "$built" = "1" ]; then
    # tests/late_keys.rs is #[ignore]d in `cargo test` (it needs a release build of the shell):
    # here it reads the shell's wasm that dist/index.html loads.
    shell_wasm="dist/$(sed -n 's/.*data-wasm="\.\/\([^"]*\.wasm\)".*/\1/p' dist/index.html 2>/dev/null | head -n 1)"
    LLMCALC_SHELL_WASM="$ROOT/$shell_wasm" stage late-keys cargo 900 \
        cargo test --test late_keys -- --ignored
    stage bench-size plain 300 node bench/size.mjs dist
    E2E_TIMEOUT_MS=1500000 stage e2e counted 1800 node e2e/run.mjs --dist dist --artifacts artifacts
else
    skip late-keys "needs the release build"
    skip bench-size "needs the release build"
    if [ -z "$only" ] || [[ "$only" == *",e2e,"* ]]; then
        failed=$((failed + 1))
        table+=("$(printf '%-12s %-18s %5s   %s' e2e FAILED - "not run: the release build failed")")
    fi
fi

summary
[ "$failed" = "0" ]
