#!/usr/bin/env bash
# Runs release benchmarks from the repository root: Benchmarks/run.sh w1
# Each benchmark prints its figures; its last line is the one to read (`w1 events_per_s=... vs_loop=...`).
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -gt 0 ] || set -- w1
echo "building benchmarks (release)..." >&2
# The core is a path dependency whose file list this package's build plan keeps: a file added to
# or removed from the core is missed ("cannot find ... in scope", "missing inputs") unless the
# plan is made again.
rm -f Benchmarks/.build/release.yaml Benchmarks/.build/release/description.json Benchmarks/.build/build.db
swift build -c release --package-path Benchmarks --product RivuletBenchmarks >&2
if [ "$1" = "plugins" ]; then
  echo "building rivulet and the example plugin (release)..." >&2
  swift build -c release --product rivulet-engine >&2 && swift build -c release --product rivulet >&2
  swift build -c release --package-path Examples/TextPlugin >&2
  mkdir -p Benchmarks/.build
  clang --target=wasm32 -O2 -nostdlib -fno-builtin -mbulk-memory -Wl,--no-entry -I Examples/WasmPlugin \
    -o Benchmarks/.build/wordcount.wasm Benchmarks/wasm/wordcount.c >&2
  exec python3 Benchmarks/plugins.py
fi
if [ "$1" = "images" ]; then
  echo "building rivulet (release)..." >&2
  swift build -c release --product rivulet-engine >&2 && swift build -c release --product rivulet >&2
  exec python3 Benchmarks/images.py
fi
if [ "$1" = "w2" ] || [ "$1" = "w3" ] || [ "$1" = "w3-scale" ]; then
  # Rivulet, and the same work in C++ on simdjson: the reference at the hardware's limit.
  echo "building rivulet (release) and the simdjson reference..." >&2
  swift build -c release --product rivulet-engine >&2 && swift build -c release --product rivulet >&2
  scripts/install-deps.sh bench
  mkdir -p Benchmarks/.build
  reference="${1%-scale}"
  c++ -O2 -std=c++17 -o "Benchmarks/.build/$reference-simdjson" "Benchmarks/simdjson/$reference.cpp" \
    $(pkg-config --cflags --libs simdjson) >&2
  exec python3 "Benchmarks/${1//-/_}.py"
fi
if [ "$1" = "postgres" ]; then
  # A cluster of its own (PostgreSQL's programs from the postgresql package, as the tests use).
  echo "building rivulet (release)..." >&2
  swift build -c release --product rivulet-engine >&2 && swift build -c release --product rivulet >&2
  exec python3 Benchmarks/postgres.py
fi
if [ "$1" = "nats" ] || [ "$1" = "nats-keyed" ]; then
  echo "building rivulet (release) and the hand-written NATS loop..." >&2
  swift build -c release --product rivulet-engine >&2 && swift build -c release --product rivulet >&2
  mkdir -p Benchmarks/.build
  cc -O2 -o Benchmarks/.build/nats-loop Benchmarks/nats/loop.c Benchmarks/nats/keyed.c \
    $(pkg-config --cflags --libs libnats) >&2
  [ "$1" = "nats" ] && exec python3 Benchmarks/nats.py
  exec python3 Benchmarks/nats_keyed.py
fi
Benchmarks/.build/release/RivuletBenchmarks "$@"
