#!/usr/bin/env python3
"""W2: the whole record path, timed from outside in one run.

A JSON Lines file of {"id": i, "name": "item-i", "stars": i % 5000} goes through
filter .stars >= 2500 -> map {id, name} -> a JSON Lines file, four ways: `rivulet run` (release;
without `parallel:` such a pipeline runs its stateless stretch on every core),
a hand-written Swift loop with the same JSON code, a C++ loop on simdjson (the reference at the
hardware's limit, Benchmarks/simdjson/w2.cpp), and jq. Rivulet and the loop are run five times,
each rivulet run beside a loop run, jq three times, and the best wall time kept (and five times with --state, checkpoints every second, each beside a run without); peak RSS of `rivulet run` is measured at 1M and 4M lines. Outputs are compared.

Two variants, so the gain is not only for pass-through: one where the map computes a new value
(`{id: .id, stars2: .stars * 2}`), and one reading nested fields of records with an owner
(`filter: .owner.stars >= 2500`, `map: {id: .id, login: .owner.login}`); each against the loop
doing the same with whole-parsed records and jq, outputs compared. And the main pipeline with
`parallel: 2` against the same on one thread, interleaved seven times.
"""
import os, subprocess, sys, time, resource

import common
from common import bench, data, rivulet, root

# The reference at the hardware's limit: the same work in C++ on simdjson's On-Demand API.
simdjson = os.path.join(root, "Benchmarks", ".build", "w2-simdjson")
simdjson_out = os.path.join(data, "w2-1000000-simdjson.jsonl")

def timed(command, stdout=None):
    return common.timed(command, stdout, name="w2")

def pipeline(lines, output, header="", name=None):
    path = os.path.join(data, name or f"w2-{lines}.yaml")
    with open(path, "w") as f:
        f.write(f"{header}source: {{ fixture: w2-{lines}.jsonl }}\n"
                "ops:\n  - filter: .stars >= 2500\n  - map: { id: .id, name: .name }\n"
                f"sink: {{ file: {os.path.basename(output)} }}\n")
    return path

def generate(lines):
    path = os.path.join(data, f"w2-{lines}.jsonl")
    if not os.path.exists(path):
        subprocess.run([bench, "w2-generate", str(lines), path], check=True)
    return path

best = {}
rss = {}
source = os.path.join(data, "w2-1000000.jsonl")
loop_out = os.path.join(data, "w2-1000000-loop.jsonl")
for lines in (1_000_000, 4_000_000):
    generate(lines)
    out = os.path.join(data, f"w2-{lines}-rivulet.jsonl")
    spec = pipeline(lines, out)
    # At 1M lines, each run of rivulet beside one of the loop: on a shared machine, runs far
    # apart in time differ by more than what is compared.
    rounds = 5 if lines == 1_000_000 else 1
    times, loop_times, simdjson_times = [], [], []
    for _ in range(rounds):
        elapsed, peak = timed([rivulet, "run", spec])
        times.append(elapsed)
        rss[lines] = max(rss.get(lines, 0), peak)
        if lines == 1_000_000:
            loop_times.append(timed([bench, "w2-loop", source, loop_out])[0])
            simdjson_times.append(timed([simdjson, source, simdjson_out])[0])
    if lines == 1_000_000:
        best["rivulet"] = min(times)
        best["loop"] = min(loop_times)
        best["simdjson"] = min(simdjson_times)

# The same run keeping checkpoints (`--state`, the default 1 s interval), on a fresh store each time,
# interleaved with runs without: on a shared machine, runs far apart in time differ by more than
# the overhead being measured. A run keeping checkpoints reads on one thread, so both are on one.
state = os.path.join(data, "w2-state.db")
serial_out = os.path.join(data, "w2-1000000-serial.jsonl")
spec = pipeline(1_000_000, serial_out, header="parallel: 1\n", name="w2-serial.yaml")
state_times, plain_times = [], []
for _ in range(5):
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(state + suffix):
            os.remove(state + suffix)
    state_times.append(timed([rivulet, "run", spec, "--state", state])[0])
    plain_times.append(timed([rivulet, "run", spec])[0])
best["rivulet_state"] = min(state_times)
best["rivulet_plain_interleaved"] = min(plain_times)

# `parallel: 2` against the same pipeline on one thread (`parallel: 1`), interleaved: the stateless
# stretch (and the parsing) on two cores. Its output is compared below with the others'. (Without
# `parallel:`, as in the runs above, a source -> stateless -> sink pipeline uses every core.)
parallel_spec = os.path.join(data, "w2-parallel.yaml")
with open(parallel_spec, "w") as f:
    f.write("parallel: 2\nsource: { fixture: w2-1000000.jsonl }\n"
            "ops:\n  - filter: .stars >= 2500\n  - map: { id: .id, name: .name }\n"
            "sink: { file: w2-1000000-parallel.jsonl }\n")
parallel_times, serial_times = [], []
for _ in range(7):
    parallel_times.append(timed([rivulet, "run", parallel_spec])[0])
    serial_times.append(timed([rivulet, "run", spec])[0])
best["rivulet_parallel"] = min(parallel_times)
best["rivulet_serial_interleaved"] = min(serial_times)

jq_out = os.path.join(data, "w2-1000000-jq.jsonl")
def run_jq():
    with open(jq_out, "w") as f:
        return timed(["jq", "-c", "select(.stars >= 2500) | {id, name}", source], stdout=f)[0]
best["jq"] = min(run_jq() for _ in range(3))

# Rivulet pads a line that would cross a 4 KiB page boundary with spaces (so a killed run leaves whole
# lines); compare the records, line by line, without trailing white space.
def records(path):
    return [line.rstrip() for line in open(path, "rb").read().split(b"\n") if line.strip()]
rivulet_records = records(os.path.join(data, "w2-1000000-rivulet.jsonl"))
if (rivulet_records != records(loop_out) or rivulet_records != records(jq_out)
        or rivulet_records != records(os.path.join(data, "w2-1000000-parallel.jsonl"))
        or rivulet_records != records(serial_out) or rivulet_records != records(simdjson_out)):
    sys.exit("w2: the outputs differ")
count = len(rivulet_records)

# The variants: a computed value, and nested fields of records with an owner.
nested_source = os.path.join(data, "w2n-1000000.jsonl")
if not os.path.exists(nested_source):
    subprocess.run([bench, "w2-generate-nested", "1000000", nested_source], check=True)
variants = {
    "compute": ("w2-1000000.jsonl", ".stars >= 2500", "{ id: .id, stars2: .stars * 2 }",
                "select(.stars >= 2500) | {id, stars2: (.stars * 2)}"),
    "nested": ("w2n-1000000.jsonl", ".owner.stars >= 2500", "{ id: .id, login: .owner.login }",
               "select(.owner.stars >= 2500) | {id, login: .owner.login}"),
}
variant_lines = []
for name, (fixture, condition, mapping, jq_program) in variants.items():
    spec = os.path.join(data, f"w2-{name}.yaml")
    out = os.path.join(data, f"w2-{name}-rivulet.jsonl")
    with open(spec, "w") as f:
        f.write(f"source: {{ fixture: {fixture} }}\nops:\n  - filter: {condition}\n  - map: {mapping}\n"
                f"sink: {{ file: {os.path.basename(out)} }}\n")
    source_path = os.path.join(data, fixture)
    loop_path = os.path.join(data, f"w2-{name}-loop.jsonl")
    jq_path = os.path.join(data, f"w2-{name}-jq.jsonl")
    simdjson_path = os.path.join(data, f"w2-{name}-simdjson.jsonl")
    riv_times, loop_times, simd_times = [], [], []
    for _ in range(3):
        riv_times.append(timed([rivulet, "run", spec])[0])
        loop_times.append(timed([bench, "w2-loop", source_path, loop_path, name])[0])
        simd_times.append(timed([simdjson, source_path, simdjson_path, name])[0])
    riv, loop, simd = min(riv_times), min(loop_times), min(simd_times)
    with open(jq_path, "w") as f:
        jq = timed(["jq", "-c", jq_program, source_path], stdout=f)[0]
    outputs = [records(p) for p in (out, loop_path, jq_path, simdjson_path)]
    if any(output != outputs[0] for output in outputs[1:]) or not outputs[0]:
        sys.exit(f"w2 {name}: the outputs differ")
    variant_lines.append(
        f"w2 {name} kept={len(outputs[0])} rivulet_s={riv:.3f} loop_s={loop:.3f} jq_s={jq:.3f} "
        f"simdjson_s={simd:.3f} rivulet_vs_loop={riv / loop:.2f} jq_vs_rivulet={jq / riv:.2f} "
        f"rivulet_over_simdjson={riv / simd:.2f}")

print(f"w2 lines=1000000 kept={count} outputs_identical=yes")
for line in variant_lines:
    print(line)
print(f"w2 rivulet_vs_loop={best['rivulet'] / best['loop']:.2f} jq_vs_rivulet={best['jq'] / best['rivulet']:.2f}")
print(f"w2 peak_rss_mb_1m={rss[1_000_000]:.1f} peak_rss_mb_4m={rss[4_000_000]:.1f} growth={(rss[4_000_000] / rss[1_000_000] - 1) * 100:.1f}%")
print(f"w2 rivulet_s={best['rivulet']:.3f} loop_s={best['loop']:.3f} jq_s={best['jq']:.3f}")
print(f"w2 parallel_2_s={best['rivulet_parallel']:.3f} serial_s={best['rivulet_serial_interleaved']:.3f} "
      f"parallel_speedup={best['rivulet_serial_interleaved'] / best['rivulet_parallel']:.2f} "
      f"parallel_vs_loop={best['rivulet_parallel'] / best['loop']:.2f} "
      f"serial_vs_loop={best['rivulet_serial_interleaved'] / best['loop']:.2f}")
print(f"w2 with_state_s={best['rivulet_state']:.3f} without_s={best['rivulet_plain_interleaved']:.3f} "
      f"state_overhead={(best['rivulet_state'] / best['rivulet_plain_interleaved'] - 1) * 100:.1f}%")
# The line to read: Rivulet against the simdjson reference, and the bytes a second each moves.
megabytes = os.path.getsize(source) / 1e6
# (Rivulet as written runs on every core; `one_thread` is `parallel: 1`, against simdjson's one.)
print(f"w2 rivulet_s={best['rivulet']:.3f} simdjson_s={best['simdjson']:.3f} "
      f"rivulet_over_simdjson={best['rivulet'] / best['simdjson']:.2f} "
      f"one_thread_s={best['rivulet_serial_interleaved']:.3f} "
      f"one_thread_over_simdjson={best['rivulet_serial_interleaved'] / best['simdjson']:.2f} "
      f"rivulet_mb_s={megabytes / best['rivulet']:.0f} simdjson_mb_s={megabytes / best['simdjson']:.0f}")
