#!/usr/bin/env python3
"""W3: an aggregation, timed from outside in one run.

1,000,000 JSON Lines records {"key": "k<0..9999>", "v": n, "ts": ms} over 10 minutes of event time
go through `aggregate: {by: .key, every: 1m, time: .ts, fields: {count: count, sum: {sum: .v}}}` into a
JSON Lines file, two ways: `rivulet run` (release) and a hand-written Swift dictionary loop with the
same JSON code. Each is run three times, interleaved, and the best wall time kept; peak RSS is
printed for both. Outputs are compared. The last line is the one to read.
"""
import os, subprocess, sys, time

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
data = os.path.join(root, "Benchmarks", "data")
os.makedirs(data, exist_ok=True)
rivulet = os.path.join(root, ".build", "release", "rivulet")
bench = os.path.join(root, "Benchmarks", ".build", "release", "RivuletBenchmarks")
lines = 1_000_000

def timed(command):
    start = time.monotonic()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.monotonic() - start
    if status != 0:
        sys.exit(f"w3: {' '.join(command)} failed with status {status}")
    return elapsed, usage.ru_maxrss / 1024.0

source = os.path.join(data, f"w3-{lines}.jsonl")
if not os.path.exists(source):
    subprocess.run([bench, "w3-generate", str(lines), source], check=True)
spec = os.path.join(data, "w3.yaml")
with open(spec, "w") as f:
    f.write(f"source: {{ fixture: {os.path.basename(source)} }}\n"
            "ops:\n  - aggregate: { by: .key, every: 1m, time: .ts, fields: { count: count, sum: { sum: .v } } }\n"
            "sink: { file: w3-rivulet.jsonl }\n")
rivulet_out = os.path.join(data, "w3-rivulet.jsonl")
loop_out = os.path.join(data, "w3-loop.jsonl")
times = {"rivulet": [], "loop": []}
rss = {"rivulet": 0.0, "loop": 0.0}
for _ in range(3):
    elapsed, peak = timed([rivulet, "run", spec])
    times["rivulet"].append(elapsed)
    rss["rivulet"] = max(rss["rivulet"], peak)
    elapsed, peak = timed([bench, "w3-loop", source, loop_out])
    times["loop"].append(elapsed)
    rss["loop"] = max(rss["loop"], peak)
# The file sink pads a line with spaces where it would cross a page boundary (whole lines after a
# crash), so lines are compared without their trailing white space.
with open(rivulet_out) as a, open(loop_out) as b:
    identical = [line.rstrip() for line in a] == [line.rstrip() for line in b]
with open(loop_out) as f:
    objects = sum(1 for _ in f)
best = {name: min(values) for name, values in times.items()}
print(f"w3 lines={lines} keys=10000 windows=10 objects={objects} outputs_identical={'yes' if identical else 'NO'}")
print(f"w3 peak_rss_mb rivulet={rss['rivulet']:.1f} loop={rss['loop']:.1f}")
print(f"w3 rivulet_s={best['rivulet']:.3f} loop_s={best['loop']:.3f} rivulet_vs_loop={best['rivulet'] / best['loop']:.2f}")
