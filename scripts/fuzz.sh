#!/usr/bin/env bash
# Fuzzes each target for SECONDS (default 60) with libFuzzer, seeded with the pipelines, the lint
# corpus and Tests/Fuzz/Seeds. A crash is saved under Tests/Fuzz/Regressions/TARGET/ (commit it: the
# tests replay every file there) and fails the run. Usage: scripts/fuzz.sh [SECONDS] [TARGET...]
# With FUZZ_RUNS=N each target runs N inputs from a fixed seed instead, on a fresh corpus: the same
# inputs every time, so CI cannot fail on a crash that chance found first there.
# With FUZZ_NO_BUILD=1 the binary already built is used: an hour-long run goes on while the tree
# is being edited (a build from a tree in mid-edit fails and fuzzes nothing).
# Targets run FUZZ_JOBS (default 2) at a time, each on one core. FUZZ_BUILD_ONLY=1 builds and stops.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(pipeline testfile expression json marbles html webhook sqlite operators wasm storedstate pgoutput)
if [ -z "${FUZZ_NO_BUILD:-}" ]; then
  echo "building the fuzz targets (-sanitize=fuzzer)..." >&2
  swift build --build-path .build/fuzz --product RivuletFuzz -Xswiftc -sanitize=fuzzer -Xswiftc -DFUZZING >&2
fi
[ -z "${FUZZ_BUILD_ONLY:-}" ] || exit 0
binary=.build/fuzz/debug/RivuletFuzz
# Targets run two at a time (FUZZ_JOBS): each libFuzzer process uses one core.
jobs_max="${FUZZ_JOBS:-2}"

# Fuzzes one target; its summary line goes to .build/fuzz-corpus/TARGET.result.
fuzz_target() {
  local target=$1
  local corpus=.build/fuzz-corpus/$target
  local budget=(-max_total_time="$seconds")
  if [ -n "${FUZZ_RUNS:-}" ]; then
    corpus=.build/fuzz-corpus/fixed-$target
    rm -rf "$corpus"
    budget=(-runs="$FUZZ_RUNS" -seed=1)
  fi
  mkdir -p "$corpus" "Tests/Fuzz/Regressions/$target"
  local seeds=("Tests/Fuzz/Regressions/$target")
  case "$target" in
    pipeline) seeds+=(Pipelines Tests/RivuletCLITests/LintCorpus) ;;
    testfile) seeds+=(Pipelines) ;;
    *) seeds+=("Tests/Fuzz/Seeds/$target") ;;
  esac
  local log=.build/fuzz-corpus/$target.log
  # libFuzzer, not Swift's backtracer, must see a crash, so it saves the input.
  if SWIFT_BACKTRACE=enable=no RIVULET_FUZZ_TARGET=$target "$binary" "$corpus" "${seeds[@]}" "${budget[@]}" -timeout=10 \
    -rss_limit_mb=4096 -max_len=65536 -print_final_stats=1 -artifact_prefix="Tests/Fuzz/Regressions/$target/" \
    > "$log" 2>&1; then
    local runs rate
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
    rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
    echo "fuzz $target: $runs runs, $rate exec/s, no crash" > ".build/fuzz-corpus/$target.result"
  else
    echo "fuzz $target: FAILED — see $log; the input is in Tests/Fuzz/Regressions/$target/" \
      > ".build/fuzz-corpus/$target.result"
  fi
}

mkdir -p .build/fuzz-corpus
for target in "${targets[@]}"; do
  rm -f ".build/fuzz-corpus/$target.result"
  while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n || true; done
  fuzz_target "$target" &
done
wait
status=0
for target in "${targets[@]}"; do
  result=$(cat ".build/fuzz-corpus/$target.result" 2>/dev/null || echo "fuzz $target: FAILED — no result")
  echo "$result"
  if [[ "$result" != *"no crash" ]]; then
    tail -40 ".build/fuzz-corpus/$target.log" 2>/dev/null || true
    status=1
  fi
done
exit $status
