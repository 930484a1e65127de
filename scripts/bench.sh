#!/usr/bin/env bash
# The benchmarks: reports, not tests (nothing here fails on a slow number; a stage fails only
# if its script cannot run). Installs what is missing (scripts/setup.sh), builds dist/ in
# release mode unless --no-build, then prints:
#
#   bench-size       node bench/size.mjs      shipped bytes: raw, gzip, brotli
#   bench-load       node bench/load.mjs      cold load to the first answer (parameter count and
#                      the GPUs' verdicts painted) from a gzip/brotli static server, on loopback
#                      and at 10 Mbit/s 40 ms, in English and Korean, bytes before/after it, what
#                      the static copy needs (other requests held), offline reload
#   bench-load-paths node bench/load.mjs --paths …  the first answer on screen for each way
#                      people arrive: the default page, a scenario link, the Korean page by
#                      link, a remembered theme, an embed; brotli, on loopback, at 10 Mbit/s and
#                      with 4× CPU throttling, against the link targets
#   bench-embeds     node bench/embeds.mjs    a course page with three embedded widgets: time to
#                      all three answers and the bytes fetched, loopback / 10 Mbit/s / 4× CPU
#   bench-load-cdp   node bench/load_cdp.mjs  bench-load's cold loads over CDP, no Playwright
#   bench-paint      node bench/paint.mjs     input-to-paint in the page
#   bench-paint-top  node bench/paint.mjs --at top   the same with the page at the top
#   bench-typing     node bench/typing.mjs    long tasks (over 50 ms) while typing, page scrolled
#                      to the top, each section and the bottom
#   bench-sim-worker node bench/sim_worker.mjs  the serving simulator's sweep in its Web Worker:
#                      wall time and the longest main-thread task meanwhile
#   bench-core       cargo run --release --example bench_core   core evaluation time
#   bench-sim        cargo run --release --example bench_sim    serving simulator: 10,000
#                      requests and a 12-rate x 2,000-request sweep
#
# scripts/test.sh runs bench-size as the short form. Logs go to artifacts/logs/; the last line
# is `N passed, N failed` (one per stage that ran).
#
# Usage: bash scripts/bench.sh [--no-setup] [--no-build] [--only STAGE[,STAGE...]]
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

run_setup=1
run_build=1
only=""
while [ $# -gt 0 ]; do
    case "$1" in
        --no-setup) run_setup=0 ;;
        --no-build) run_build=0 ;;
        --only) only=",$2,"; shift ;;
        *)
            echo "usage: bash scripts/bench.sh [--no-setup] [--no-build] [--only STAGE[,STAGE...]]" >&2
            exit 2
            ;;
    esac
    shift
done


# The tools on PATH, stage, skip, summary and the counters.
. "$ROOT/scripts/stages.sh"

if [ "$run_setup" = "1" ]; then
    bash scripts/setup.sh </dev/null 2>&1 | tee "$LOGS/setup.log"
    [ "${PIPESTATUS[0]}" = "0" ] || { echo "setup failed: see artifacts/logs/setup.log"; exit 1; }
fi

built=1
if [ "$run_build" = "1" ]; then
    rm -rf dist
    stage build plain 1800 bash scripts/build.sh || built=0
elif [ ! -f dist/index.html ]; then
    echo "bench: no dist/index.html (run without --no-build)"
    built=0
fi

if [ "$built" = "1" ]; then
    stage bench-size plain 300 node bench/size.mjs dist
    stage bench-load plain 1500 node bench/load.mjs --dist dist --runs 7
    stage bench-load-paths plain 1800 node bench/load.mjs --dist dist --runs 7 --encodings br \
        --profiles loopback,10mbit,cpu4x --paths default,link,ko,theme,embed --locales en-US \
        --held-runs 0 --offline-runs 0 --scroll no
    stage bench-embeds plain 900 node bench/embeds.mjs --dist dist --runs 7
    stage bench-load-cdp plain 600 node bench/load_cdp.mjs --dist dist --runs 7
    stage bench-paint plain 600 node bench/paint.mjs --dist dist --changes 100
    stage bench-paint-top plain 600 node bench/paint.mjs --dist dist --changes 60 --at top
    stage bench-typing plain 600 node bench/typing.mjs --dist dist
    stage bench-sim-worker plain 600 node bench/sim_worker.mjs --dist dist
else
    for s in bench-size bench-load bench-load-paths bench-embeds bench-load-cdp bench-paint bench-paint-top bench-typing \
        bench-sim-worker; do
        skip "$s" "needs the release build"
    done
fi
stage bench-core plain 1200 cargo run --quiet --release --example bench_core
stage bench-sim plain 1200 cargo run --quiet --release --example bench_sim

summary
[ "$failed" = "0" ]
