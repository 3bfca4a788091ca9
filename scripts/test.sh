#!/usr/bin/env bash
# Runs the test suite and, when it fails, repeats each failing test's messages at the end, where
# a log that keeps only its last lines still shows them.
#
# With no arguments the suite runs as four processes side by side, on two cores about six minutes
# each: the NATS and PostgreSQL tests (runner groups, clusters, server faults: mostly waiting on
# servers and leases) with the few that build a plugin or replay recordings, in two halves, and all
# the others in two halves; each line is prefixed with its shard. Then what needs the machine to
# itself runs alone: the tests that measure time under load (a client answered within a second
# beside 20,000 idle connections, signals within 100 ms) and the two full-scale runner groups
# (90,000 events, a cluster losing nodes), whose server once fell minutes behind beside the others.
# With arguments (`--filter X`), one process runs what they select. TEST_SHARDS_ONLY=1 checks that
# the shards hold every test once and says how many classes or tests each runs, running none.
set -uo pipefail
log="$(mktemp -d)"
trap 'rm -rf "$log"' EXIT

run() {
  timeout 1800 swift test --skip-build --ignore-lock --disable-swift-testing "$@"
}

if [ "$#" -gt 0 ]; then
  run "$@" 2>&1 | tee "$log/all"
  status=${PIPESTATUS[0]}
else
  # The shards run the test bundle itself, each with the tests of its own (whole classes where it
  # can, to keep the list short): one `swift test` a shard took up to a minute to start beside
  # the others, and two opening the build's database at once failed ("database is locked").
  bundle=.build/debug/RivuletPackageTests.xctest
  "$bundle" --list-tests 2>/dev/null | grep -E '^[A-Za-z]+\.[A-Za-z]+/' > "$log/tests"
  if [ ! -s "$log/tests" ]; then
    echo "error: $bundle lists no tests (build them first: swift build --build-tests)" >&2
    exit 1
  fi
  # Writes $log/NAME.list, the tests whose names match $2 and not $3 ("" matches nothing), comma
  # separated (whole classes where it can, to keep the list short), and adds them to $log/chosen.
  plan() {
    awk -F/ -v take="$2" -v leave="$3" -v chosen="$log/chosen" '
      { count[$1]++; if ($0 ~ take && (leave == "" || $0 !~ leave)) { taken[$1]++; names[$1] = names[$1] "," $0; print $0 >> chosen } }
      END {
        for (class in taken) list = list "," (taken[class] == count[class] ? class : substr(names[class], 2))
        print substr(list, 2)
      }' "$log/tests" > "$log/$1.list"
  }
  shard() {
    local name="$1"
    # Unbuffered, as `swift test` runs it: a shard killed by its timeout keeps its last lines.
    NSUnbufferedIO=YES timeout 1800 "$bundle" "$(cat "$log/$name.list")" \
      > >(sed -u "s/^/[$name] /" | tee "$log/$name") 2>&1
    echo $? > "$log/$name.status"
  }
  alone="HTTPConnectionLimitsTests|SignalUnderLoadTests|testAtFullScale"
  beside_nats="NATS|Postgres|PluginTests|ReadmeCommandTests|APIPipelineTests"
  # The NATS and PostgreSQL tests mostly wait (servers, leases, acknowledgement timeouts): two
  # halves run side by side, beside the rest in two halves (the kill-at-random checkpoint tests
  # are a third of it), so the four take about as long each.
  nats_first="NATS(Fault|Group|StoredState|ScaleOut|LeaseBucket|Command)Tests|PluginTests"
  rest_first="CheckpointCommandTests|LauncherTests|HTTPServerSourceTests|ConsistentChecksTests"
  plan rest1 "$rest_first" "$beside_nats|$alone"
  plan rest2 "." "$beside_nats|$alone|$rest_first"
  plan nats1 "$nats_first" "$alone"
  plan nats2 "$beside_nats" "$alone|$nats_first"
  plan alone "$alone" ""
  # Every test in exactly one shard (an empty list would run them all), or nothing runs.
  if ! cmp -s <(sort "$log/tests") <(sort "$log/chosen"); then
    echo "error: the shards do not hold every test once; left out or twice:" >&2
    diff <(sort "$log/tests") <(sort "$log/chosen") | grep '^[<>]' | head -20 >&2
    exit 1
  fi
  for name in rest1 rest2 nats1 nats2 alone; do
    [ -s "$log/$name.list" ] || { echo "error: shard $name selects no test" >&2; exit 1; }
  done
  if [ -n "${TEST_SHARDS_ONLY:-}" ]; then
    for name in rest1 rest2 nats1 nats2 alone; do
      echo "$name: $(grep -c . <(tr ',' '\n' < "$log/$name.list")) classes or tests"
    done
    exit 0
  fi
  shard rest1 &
  shard rest2 &
  shard nats1 &
  shard nats2 &
  wait
  shard alone
  # The sed of each shard may still be writing its last lines.
  sleep 1
  names="rest1 rest2 nats1 nats2 alone"
  for name in $names; do cat "$log/$name"; done > "$log/all"
  status=0
  for name in $names; do
    shard_status="$(cat "$log/$name.status" 2>/dev/null || echo 1)"
    echo "== shard $name: exit $shard_status, $(grep -E 'Executed [0-9]+ tests' "$log/$name" | tail -1 | sed 's/^\[[a-z0-9]*\] *//')"
    [ "$shard_status" -ne 0 ] && status="$shard_status"
  done
fi
if [ "$status" -ne 0 ]; then
  echo "== failed tests (exit $status)"
  grep -E ": error: |' failed \(" "$log/all" | tail -40
fi
exit "$status"
