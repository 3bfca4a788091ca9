#!/usr/bin/env bash
# Runs the test suite and, when it fails, repeats each failing test's messages at the end, where
# a log that keeps only its last lines still shows them.
#
# With no arguments the suite runs as two processes side by side, on two cores about ten minutes
# each: the NATS and PostgreSQL tests (runner groups, clusters, server faults: mostly waiting on servers and
# leases) with the few that build a plugin or replay recordings, and all the others; each line is
# prefixed with its shard. Then what needs the machine to itself runs alone: the tests that measure
# time under load (a client answered within a second beside 20,000 idle connections, signals
# within 100 ms) and the two full-scale runner groups (90,000 events, a cluster losing nodes),
# whose server once fell minutes behind beside the other shard.
# With arguments (`--filter X`), one process runs what they select.
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
  shard() {
    local name="$1"
    shift
    run "$@" > >(sed -u "s/^/[$name] /" | tee "$log/$name") 2>&1
    echo $? > "$log/$name.status"
  }
  alone="HTTPConnectionLimitsTests|SignalUnderLoadTests|testAtFullScale"
  beside_nats="NATS|Postgres|PluginTests|ReadmeCommandTests|APIPipelineTests"
  shard rest --skip "$beside_nats|$alone" &
  # Two `swift test`s opening the build's database at once fail ("database is locked"): the
  # second starts once the first runs its tests.
  for _ in $(seq 1 120); do
    grep -q "Test Suite" "$log/rest" 2>/dev/null && break
    sleep 0.5
  done
  shard nats --filter "$beside_nats" --skip "$alone" &
  wait
  shard alone --filter "$alone"
  # The sed of each shard may still be writing its last lines.
  sleep 1
  cat "$log/nats" "$log/rest" "$log/alone" > "$log/all"
  status=0
  for name in nats rest alone; do
    shard_status="$(cat "$log/$name.status" 2>/dev/null || echo 1)"
    echo "== shard $name: exit $shard_status, $(grep -E 'Executed [0-9]+ tests' "$log/$name" | tail -1 | sed 's/^\[[a-z]*\] *//')"
    [ "$shard_status" -ne 0 ] && status="$shard_status"
  done
fi
if [ "$status" -ne 0 ]; then
  echo "== failed tests (exit $status)"
  grep -E ": error: |' failed \(" "$log/all" | tail -40
fi
exit "$status"
