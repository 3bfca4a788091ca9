#!/usr/bin/env bash
# Runs the test suite and, when it fails, repeats each failing test's messages at the end, where
# a log that keeps only its last lines still shows them.
set -uo pipefail
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
timeout 1800 swift test --skip-build --disable-swift-testing "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
if [ "$status" -ne 0 ]; then
  echo "== failed tests (exit $status)"
  grep -E ": error: |' failed \(" "$log" | tail -40
fi
exit "$status"
