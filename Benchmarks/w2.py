#!/usr/bin/env python3
"""W2: the whole record path, timed from outside in one run.

A JSON Lines file of {"id": i, "name": "item-i", "stars": i % 5000} goes through
filter .stars >= 2500 -> map {id, name} -> a JSON Lines file, three ways: `rivulet run` (release),
a hand-written Swift loop with the same JSON code, and jq. Each is run three times and the best
wall time kept (and five times with --state, checkpoints every second, each beside a run without); peak RSS of `rivulet run` is measured at 1M and 4M lines. Outputs are compared.
"""
import os, subprocess, sys, time, resource

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
data = os.path.join(root, "Benchmarks", "data")
os.makedirs(data, exist_ok=True)
rivulet = os.path.join(root, ".build", "release", "rivulet")
bench = os.path.join(root, "Benchmarks", ".build", "release", "RivuletBenchmarks")

def timed(command, stdout=None):
    start = time.monotonic()
    process = subprocess.Popen(command, stdout=stdout or subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.monotonic() - start
    if status != 0:
        sys.exit(f"w2: {' '.join(command)} failed with status {status}")
    return elapsed, usage.ru_maxrss / 1024.0

def pipeline(lines, output):
    path = os.path.join(data, f"w2-{lines}.yaml")
    with open(path, "w") as f:
        f.write(f"source: {{ fixture: w2-{lines}.jsonl }}\n"
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
for lines in (1_000_000, 4_000_000):
    generate(lines)
    out = os.path.join(data, f"w2-{lines}-rivulet.jsonl")
    spec = pipeline(lines, out)
    rounds = 3 if lines == 1_000_000 else 1
    times = []
    for _ in range(rounds):
        elapsed, peak = timed([rivulet, "run", spec])
        times.append(elapsed)
        rss[lines] = max(rss.get(lines, 0), peak)
    if lines == 1_000_000:
        best["rivulet"] = min(times)

# The same run keeping checkpoints (`--state`, the default 1 s interval), on a fresh store each time,
# interleaved with runs without: on a shared machine, runs far apart in time differ by more than
# the overhead being measured.
state = os.path.join(data, "w2-state.db")
spec = pipeline(1_000_000, os.path.join(data, "w2-1000000-rivulet.jsonl"))
state_times, plain_times = [], []
for _ in range(5):
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(state + suffix):
            os.remove(state + suffix)
    state_times.append(timed([rivulet, "run", spec, "--state", state])[0])
    plain_times.append(timed([rivulet, "run", spec])[0])
best["rivulet_state"] = min(state_times)
best["rivulet_plain_interleaved"] = min(plain_times)

source = os.path.join(data, "w2-1000000.jsonl")
loop_out = os.path.join(data, "w2-1000000-loop.jsonl")
jq_out = os.path.join(data, "w2-1000000-jq.jsonl")
best["loop"] = min(timed([bench, "w2-loop", source, loop_out])[0] for _ in range(3))
def run_jq():
    with open(jq_out, "w") as f:
        return timed(["jq", "-c", "select(.stars >= 2500) | {id, name}", source], stdout=f)[0]
best["jq"] = min(run_jq() for _ in range(3))

# Rivulet pads a line that would cross a 4 KiB page boundary with spaces (so a killed run leaves whole
# lines); compare the records, line by line, without trailing white space.
def records(path):
    return [line.rstrip() for line in open(path, "rb").read().split(b"\n") if line.strip()]
rivulet_records = records(os.path.join(data, "w2-1000000-rivulet.jsonl"))
if rivulet_records != records(loop_out) or rivulet_records != records(jq_out):
    sys.exit("w2: the three outputs differ")
count = len(rivulet_records)
print(f"w2 lines=1000000 kept={count} outputs_identical=yes")
print(f"w2 rivulet_vs_loop={best['rivulet'] / best['loop']:.2f} jq_vs_rivulet={best['jq'] / best['rivulet']:.2f}")
print(f"w2 peak_rss_mb_1m={rss[1_000_000]:.1f} peak_rss_mb_4m={rss[4_000_000]:.1f} growth={(rss[4_000_000] / rss[1_000_000] - 1) * 100:.1f}%")
print(f"w2 rivulet_s={best['rivulet']:.3f} loop_s={best['loop']:.3f} jq_s={best['jq']:.3f}")
print(f"w2 with_state_s={best['rivulet_state']:.3f} without_s={best['rivulet_plain_interleaved']:.3f} "
      f"state_overhead={(best['rivulet_state'] / best['rivulet_plain_interleaved'] - 1) * 100:.1f}%")
