#!/usr/bin/env bash
# Runs a build command with its output kept in a log, not on the screen: a line every 30 s while it
# runs, then one line of summary (or, when it fails, its errors and its last lines).
#   scripts/quiet-build.sh LOG COMMAND...
set -uo pipefail
log="$1"
shift
mkdir -p "$(dirname "$log")"
started=$(date +%s)
echo "building: $* (output in $log)"
"$@" > "$log" 2>&1 &
build=$!
while kill -0 "$build" 2>/dev/null; do
  for _ in $(seq 1 60); do
    kill -0 "$build" 2>/dev/null || break
    sleep 0.5
  done
  kill -0 "$build" 2>/dev/null && echo "  … $(( $(date +%s) - started ))s: $(grep -cE '^\[[0-9]+/[0-9]+\]' "$log") steps so far"
done
wait "$build"
status=$?
seconds=$(( $(date +%s) - started ))
if [ "$status" -ne 0 ]; then
  echo "build failed (exit $status) after ${seconds}s:"
  grep -E "error:" "$log" | sort -u | head -20
  echo "… its last lines:"
  tail -n 15 "$log"
  exit "$status"
fi
# The project's own: a file of its own named (not a dependency's, nor a package-level note).
warnings=$(grep -E "^$PWD/(Sources|Core|Tests|Plugins|Examples)/[^ ]*: warning:" "$log" | sort -u | wc -l)
echo "built in ${seconds}s, $(grep -cE '^\[[0-9]+/[0-9]+\]' "$log") steps, $warnings warning(s) in the project's own code"
