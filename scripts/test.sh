#!/usr/bin/env bash
# README command 2: installs what is missing (scripts/setup.sh), then runs every check in order:
#
#   fmt            cargo fmt --check
#   clippy         cargo clippy --all-targets -- -D warnings                     (native)
#   clippy-wasm    cargo clippy --target wasm32-unknown-unknown --lib --bins --examples
#                    --test <each tests/*.rs that uses wasm_bindgen_test> -- -D warnings
#   test           cargo test --no-fail-fast   (unit, integration, doc tests)
#   test-wasm      cargo test --target wasm32-unknown-unknown --test <those files> (headless
#                    Chromium via wasm-bindgen-test-runner + chromedriver; only when they exist)
#   fuzz           bash scripts/fuzz.sh 20   short libFuzzer run per parser (when present)
#   build          trunk build --release --public-url ./       (dist/ for any sub-path)
#   late-keys      cargo test --test late_keys -- --ignored   data/i18n/late against the
#                    translation keys the fresh dist's shell wasm names (its data-wasm file)
#   bench-size     node bench/size.mjs      shipped bytes: raw, gzip, brotli (report only)
#   bench-load     node bench/load.mjs      cold load to the first answer (parameter count and
#                    the GPUs' verdicts painted) from a gzip/brotli static server, on loopback
#                    and at 10 Mbit/s 40 ms, in English and Korean, bytes before/after it, what
#                    the static copy needs (other requests held), offline reload (report only)
#   bench-load-cdp node bench/load_cdp.mjs  bench-load's cold loads over CDP, no Playwright (report only)
#   bench-paint    node bench/paint.mjs     input-to-paint in the page (report only)
#   bench-paint-top  node bench/paint.mjs --at top   the same with the page at the top (report only)
#   bench-typing   node bench/typing.mjs    long tasks (over 50 ms) while typing, page scrolled to
#                    the top, each section and the bottom (report only)
#   bench-sim-worker node bench/sim_worker.mjs  the serving simulator's sweep in its Web Worker:
#                    wall time and the longest main-thread task meanwhile (report only)
#   bench-core     cargo run --release --example bench_core   core evaluation time (report only)
#   bench-sim      cargo run --release --example bench_sim    serving simulator: 10,000 requests
#                    and a 12-rate x 2,000-request sweep (report only)
#   e2e            node e2e/run.mjs         end-to-end tests, headless Chromium, dist/ served
#                                           under a sub-path
#
# Every stage runs even if an earlier one failed (except those that need the build), each
# under a time limit. Logs go to artifacts/logs/, screenshots to artifacts/screenshots/.
# The last line is `N passed, N failed[, N skipped]`, counting each test of the test stages
# (cargo's and the e2e runner's own counts) and each other stage as one; the exit status is
# non-zero if anything failed.
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

export PATH="$HOME/.cargo/bin:$ROOT/e2e/node_modules/.bin:$PATH"
export TRUNK_SKIP_VERSION_CHECK=true
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
export WASM_BINDGEN_TEST_TIMEOUT="${WASM_BINDGEN_TEST_TIMEOUT:-60}"

LOGS="$ROOT/artifacts/logs"
mkdir -p "$LOGS"

passed=0
failed=0
skipped=0
table=()
t_start=$(date +%s)

note() { printf '\n=== %s ===\n' "$*"; }

# cargo's per-binary result lines: "test result: ok. 12 passed; 0 failed; 1 ignored; ..."
cargo_counts() {
    awk '/^test result:/ {
            for (i = 1; i <= NF; i++) {
                if ($(i + 1) ~ /^passed/) p += $i
                if ($(i + 1) ~ /^failed/) f += $i
            }
         }
         END { printf "%d %d\n", p, f }' "$1"
}

# The e2e runner's closing line: "N passed, N failed".
plain_counts() {
    local line
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$1" | tail -n 1)
    if [ -n "$line" ]; then
        echo "$line" | awk '{ printf "%d %d\n", $1, $3 }'
    else
        echo "0 0"
    fi
}

# stage NAME KIND LIMIT_SECONDS COMMAND...   KIND: plain | cargo | counted
stage() {
    local name="$1" kind="$2" limit="$3"
    shift 3
    if [ -n "$only" ] && [[ "$only" != *",$name,"* ]]; then
        return 0
    fi
    note "$name: $*"
    local log="$LOGS/$name.log" t0 rc secs p f status
    t0=$(date +%s)
    timeout --kill-after=20 "$limit" "$@" </dev/null 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
    secs=$(($(date +%s) - t0))
    [ "$rc" = "124" ] && echo "$name: stopped after its limit of ${limit}s" | tee -a "$log"
    case "$kind" in
        cargo) read -r p f < <(cargo_counts "$log") ;;
        counted) read -r p f < <(plain_counts "$log") ;;
        *) if [ "$rc" = "0" ]; then p=1; f=0; else p=0; f=1; fi ;;
    esac
    # A failing command whose own counts show no failure (build error, crash, time-out)
    # still counts as one failure; a passing one that ran nothing counts as one pass.
    if [ "$rc" != "0" ] && [ "$f" = "0" ]; then f=1; fi
    if [ "$rc" = "0" ] && [ "$p" = "0" ] && [ "$f" = "0" ]; then p=1; fi
    passed=$((passed + p))
    failed=$((failed + f))
    if [ "$rc" = "0" ]; then status="ok"; else status="FAILED (exit $rc)"; fi
    table+=("$(printf '%-12s %-18s %5ss  %s passed, %s failed' "$name" "$status" "$secs" "$p" "$f")")
    return "$rc"
}

skip() {
    local name="$1" why="$2"
    if [ -n "$only" ] && [[ "$only" != *",$name,"* ]]; then
        return 0
    fi
    note "$name: skipped ($why)"
    skipped=$((skipped + 1))
    table+=("$(printf '%-12s %-18s %5s   %s' "$name" "skipped" "-" "$why")")
}

summary() {
    note "summary ($(($(date +%s) - t_start))s in all)"
    for row in "${table[@]}"; do echo "$row"; done
    echo "logs: artifacts/logs/  screenshots: artifacts/screenshots/"
    if [ "$skipped" -gt 0 ]; then
        echo "${passed} passed, ${failed} failed, ${skipped} skipped"
    else
        echo "${passed} passed, ${failed} failed"
    fi
}

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

stage fmt plain 300 cargo fmt --check -- --color never
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

# Issue 7's short coverage-guided fuzz run (scripts/fuzz.sh installs cargo-fuzz itself and
# prints the executions per target); seconds per target from FUZZ_SECONDS.
if [ -f scripts/fuzz.sh ]; then
    stage fuzz plain 1500 bash scripts/fuzz.sh "${FUZZ_SECONDS:-20}"
fi

# Trunk rewrites dist/ (and `trunk serve` leaves a debug build there): always build fresh.
if [ -z "$only" ] || [[ "$only" == *",build,"* ]]; then rm -rf dist; fi
if stage build plain 1800 trunk build --release --public-url ./; then
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
    stage bench-load plain 1500 node bench/load.mjs --dist dist --runs 7
    stage bench-load-cdp plain 600 node bench/load_cdp.mjs --dist dist --runs 7
    stage bench-paint plain 600 node bench/paint.mjs --dist dist --changes 100
    stage bench-paint-top plain 600 node bench/paint.mjs --dist dist --changes 60 --at top
    stage bench-typing plain 600 node bench/typing.mjs --dist dist
    stage bench-sim-worker plain 600 node bench/sim_worker.mjs --dist dist
else
    skip late-keys "needs the release build"
    skip bench-size "needs the release build"
    skip bench-load "needs the release build"
    skip bench-load-cdp "needs the release build"
    skip bench-paint "needs the release build"
    skip bench-paint-top "needs the release build"
    skip bench-typing "needs the release build"
    skip bench-sim-worker "needs the release build"
fi
stage bench-core plain 1200 cargo run --quiet --release --example bench_core
stage bench-sim plain 1200 cargo run --quiet --release --example bench_sim
if [ "$built" = "1" ]; then
    E2E_TIMEOUT_MS=1500000 stage e2e counted 1800 node e2e/run.mjs --dist dist --artifacts artifacts
elif [ -z "$only" ] || [[ "$only" == *",e2e,"* ]]; then
    failed=$((failed + 1))
    table+=("$(printf '%-12s %-18s %5s   %s' e2e FAILED - "not run: the release build failed")")
fi

summary
[ "$failed" = "0" ]
