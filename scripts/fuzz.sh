#!/usr/bin/env bash
# A short coverage-guided fuzz run (cargo fuzz / libFuzzer) of the three parsers that read
# untrusted text: config.json, model.safetensors.index.json and the URL scenario query.
#
#   usage: bash scripts/fuzz.sh [SECONDS_PER_TARGET]      (default 20)
#
# FUZZ_JOBS: targets run at once (default: the cores; the test command runs all three at once,
# each on two thirds of a core, so the stage takes one run's time).
# The targets run as many at once as the machine has cores (one libFuzzer process each, one
# core each: the same executions per target, in less wall time). Prints the executions per
# target and in total, and exits non-zero when any target crashes
# (a panic, an overflow, a broken invariant, a timeout or running out of memory). A crash
# input is saved under fuzz/artifacts/<target>/ and the command that replays it is printed.
#
# Works on the stable toolchain: cargo fuzz passes -Z flags to rustc, which a stable compiler
# accepts with RUSTC_BOOTSTRAP=1. Builds are release with debug assertions and overflow checks.
# No sanitizer by default: the crate forbids unsafe code, and without AddressSanitizer a short
# run does 7-8 times more executions. FUZZ_SANITIZER=address also works on stable
# (rustup ships the ASan runtime with the standard library). Builds go to FUZZ_TARGET_DIR
# (default: fuzz/target); the corpus grown by a run is kept there too, so later runs start
# where this one stopped; fuzz/corpus/ holds only the committed seeds and is never written to.
set -euo pipefail

secs="${1:-20}"
case "$secs" in '' | *[!0-9]*) echo "fuzz.sh: seconds per target must be a whole number, not \"$secs\"" >&2; exit 2 ;; esac

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

cargo_fuzz_version="0.13.2"
installed="$(cargo fuzz --version 2>/dev/null || true)"
if [ "$installed" != "cargo-fuzz ${cargo_fuzz_version}" ]; then
  echo "fuzz.sh: installing cargo-fuzz ${cargo_fuzz_version} (about 3 minutes on 2 cores)"
  cargo install cargo-fuzz --version "${cargo_fuzz_version}" --locked
fi

export RUSTC_BOOTSTRAP=1
export CARGO_TARGET_DIR="${FUZZ_TARGET_DIR:-$root/fuzz/target}"
sanitizer="${FUZZ_SANITIZER:-none}"
targets=(config safetensors_index url_scenario)

build() {
  cargo fuzz build --fuzz-dir fuzz --sanitizer "$1"
}
start=$(date +%s)
if ! build "$sanitizer"; then
  if [ "$sanitizer" = "none" ]; then
    echo "fuzz.sh: the fuzz targets do not build" >&2
    exit 1
  fi
  echo "fuzz.sh: the build with --sanitizer $sanitizer failed; retrying with --sanitizer none" >&2
  sanitizer=none
  build "$sanitizer"
fi
echo "fuzz.sh: fuzz targets built in $(($(date +%s) - start)) s (sanitizer: $sanitizer)"

logs="$CARGO_TARGET_DIR/fuzz-logs"
mkdir -p "$logs"

# One target's run: its log, then "status execs" in its result file. libFuzzer runs one
# process per target on one core, so the targets run as many at once as there are cores (the
# same executions per target as one after the other, in less wall time).
run_target() {
  local t="$1" work dict max_len log status execs
  work="$CARGO_TARGET_DIR/fuzz-corpus/$t"
  mkdir -p "$work" "fuzz/artifacts/$t"
  case "$t" in
    url_scenario) dict=fuzz/dict/url.dict; max_len=8192 ;;
    *)
      dict=fuzz/dict/config.dict; max_len=65536
      # Small JSON fixtures of the test suite are seeds too (copied: the run adds files).
      if [ -d tests/fixtures ]; then
        find tests/fixtures -type f -name '*.json' -size -64k -print0 |
          while IFS= read -r -d '' f; do cp "$f" "$work/fixture-$(basename "$f")"; done
      fi
      ;;
  esac
  log="$logs/$t.log"
  set +e
  cargo fuzz run --fuzz-dir fuzz --sanitizer "$sanitizer" "$t" "$work" "fuzz/corpus/$t" -- \
    -max_total_time="$secs" -print_final_stats=1 -dict="$dict" -max_len="$max_len" \
    -timeout=10 -rss_limit_mb=2048 >"$log" 2>&1
  status=$?
  set -e
  execs=$(sed -n 's/^stat::number_of_executed_units: *\([0-9]*\).*/\1/p' "$log" | tail -n 1)
  if [ -z "$execs" ]; then
    # No final stats (a crash): take the last "#N" progress line.
    execs=$(sed -n 's/^#\([0-9][0-9]*\).*/\1/p' "$log" | tail -n 1)
  fi
  echo "$status ${execs:-0}" >"$logs/$t.result"
}

jobs_at_once="${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 1)}"
running=0
for t in "${targets[@]}"; do
  rm -f "$logs/$t.result"
  run_target "$t" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs_at_once" ]; then
    wait -n || true
    running=$((running - 1))
  fi
done
wait || true

total=0
failed=()
for t in "${targets[@]}"; do
  log="$logs/$t.log"
  read -r status execs <"$logs/$t.result" 2>/dev/null || { status=1; execs=0; }
  total=$((total + execs))
  if [ "$status" -ne 0 ]; then
    failed+=("$t")
    echo "fuzz $t: CRASH after $execs executions (exit $status); log: $log"
    grep -E "panicked at|^thread '|ERROR: libFuzzer|SUMMARY|Test unit written to|assertion" "$log" | head -n 20 || tail -n 30 "$log"
    artifact=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n 1)
    if [ -n "$artifact" ]; then
      echo "  replay: RUSTC_BOOTSTRAP=1 cargo fuzz run --fuzz-dir fuzz --sanitizer $sanitizer $t $artifact"
    fi
  else
    echo "fuzz $t: $execs executions in ${secs} s, no crash"
  fi
done
echo "fuzz executions total: $total"
mkdir -p artifacts
echo "fuzz executions total: $total (${#targets[@]} targets x ${secs} s, sanitizer $sanitizer)" >artifacts/fuzz-summary.txt
if [ "${#failed[@]}" -gt 0 ]; then
  echo "fuzz.sh: crashes in: ${failed[*]}" >&2
  exit 1
fi
