#!/usr/bin/env bash
# The stage runner scripts/test.sh and scripts/bench.sh share (sourced, not run): each stage
# runs under a time limit with its log in artifacts/logs/NAME.log, and `summary` prints one
# row per stage and the closing line `N passed, N failed[, N skipped]`, counting the tests of
# the test stages (cargo's and the e2e runner's own counts); a check that is not a test (fmt,
# clippy, a build, a benchmark) adds nothing when it passes and one failure when it fails.
#
# The caller sets ROOT and `only` (",a,b," or empty) before sourcing.

export PATH="$HOME/.cargo/bin:$ROOT/e2e/node_modules/.bin:$PATH"
export TRUNK_SKIP_VERSION_CHECK=true
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"

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
        *) p=0; f=0 ;;
    esac
    # A failing command whose own counts show no failure (build error, crash, time-out)
    # still counts as one failure.
    if [ "$rc" != "0" ] && [ "$f" = "0" ]; then f=1; fi
    passed=$((passed + p))
    failed=$((failed + f))
    if [ "$rc" = "0" ]; then status="ok"; else status="FAILED (exit $rc)"; fi
    if [ "$kind" = "plain" ]; then
        table+=("$(printf '%-12s %-18s %5ss  a check, not a test' "$name" "$status" "$secs")")
    else
        table+=("$(printf '%-12s %-18s %5ss  %s passed, %s failed' "$name" "$status" "$secs" "$p" "$f")")
    fi
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

