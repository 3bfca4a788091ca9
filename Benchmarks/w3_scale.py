#!/usr/bin/env python3
"""W3 as the work grows, timed from outside: the W3 pipeline (event time, 10 s allowance, count and
sum per key per minute) on one thread (`parallel: 1`) and the simdjson reference, over

- 1,000,000 records of 10,000, 100,000 and 1,000,000 keys (a window holds 10,000, 100,000 and
  100,000 keys: 100,000 records fall in each of the ten minutes);
- 10,000,000 records of 10,000 keys (ten times the records, the same keys a window) and of
  1,000,000 keys (a window then holds 1,000,000).

Each is the best of three; peak RSS the largest. (`maxKeys` is raised: an operator's bound counts
every open window, and a window of 1,000,000 keys is still open when the next one's first element
comes.) Printed per run: time, time per record, peak RSS;
then the figures to read: memory per key held in a window (the slope of peak RSS between windows
of 10,000 and 1,000,000 keys, both over 10,000,000 records) and how time and memory grow from
1,000,000 to 10,000,000 records of 10,000 keys (linear time, flat memory).
"""
import os, subprocess, sys, time

import common
from common import bench, data, rivulet, root

simdjson = os.path.join(root, "Benchmarks", ".build", "w3-simdjson")


def timed(command, stdout=None):
    return common.timed(command, stdout, name="w3-scale")


def same_lines(first, second):
    """Whether the two files hold the same lines in any order, compared by `sort` in a child: this
    process stays small, as a child forked from it starts with its memory (peak RSS counts it)."""
    digest = lambda path: subprocess.run(f"LC_ALL=C sort '{path}' | md5sum", shell=True, check=True,
                                         capture_output=True, text=True).stdout
    return digest(first) == digest(second)


results = {}
for records, keys in [(1_000_000, 10_000), (1_000_000, 100_000), (1_000_000, 1_000_000),
                      (10_000_000, 10_000), (10_000_000, 1_000_000)]:
    source = os.path.join(data, f"w3-scale-{records}-{keys}.jsonl")
    if not os.path.exists(source):
        subprocess.run([bench, "w3-generate", str(records), str(keys), source], check=True)
    spec = os.path.join(data, f"w3-scale-{records}-{keys}.yaml")
    output = os.path.join(data, f"w3-scale-{records}-{keys}-rivulet.jsonl")
    with open(spec, "w") as f:
        f.write(f"parallel: 1\nsource: {{ fixture: {os.path.basename(source)} }}\n"
                "eventTime: { time: .ts, maxDelay: 10s }\n"
                "ops:\n  - aggregate: { by: .key, every: 1m, maxKeys: 3000000, maxMemoryMiB: 4096,\n"
                "      fields: { count: count, sum: { sum: .v } } }\n"
                f"sink: {{ file: {os.path.basename(output)} }}\n")
    reference = os.path.join(data, f"w3-scale-{records}-{keys}-simdjson.jsonl")
    figures = {"rivulet": [], "simdjson": []}
    for _ in range(3):
        figures["rivulet"].append(timed([rivulet, "run", spec]))
        figures["simdjson"].append(timed([simdjson, source, reference]))
    equal = same_lines(output, reference)
    best = {name: (min(t for t, _ in runs), max(m for _, m in runs)) for name, runs in figures.items()}
    results[(records, keys)] = best
    window_keys = min(keys, records // 10)
    print(f"w3-scale records={records} keys={keys} window_keys={window_keys} "
          f"rivulet_s={best['rivulet'][0]:.3f} rivulet_ns_per_record={best['rivulet'][0] / records * 1e9:.0f} "
          f"rivulet_rss_mb={best['rivulet'][1]:.1f} simdjson_s={best['simdjson'][0]:.3f} "
          f"simdjson_rss_mb={best['simdjson'][1]:.1f} equal={'true' if equal else 'false'}", flush=True)

small, large = results[(10_000_000, 10_000)], results[(10_000_000, 1_000_000)]
per_key = (large["rivulet"][1] - small["rivulet"][1]) * 1024 * 1024 / (1_000_000 - 10_000)
simd_per_key = (large["simdjson"][1] - small["simdjson"][1]) * 1024 * 1024 / (1_000_000 - 10_000)
one, ten = results[(1_000_000, 10_000)], results[(10_000_000, 10_000)]
print(f"w3-scale bytes_per_window_key={per_key:.0f} simdjson_bytes_per_window_key={simd_per_key:.0f} "
      f"time_10m_over_1m={ten['rivulet'][0] / one['rivulet'][0]:.2f} "
      f"rss_10m_over_1m={ten['rivulet'][1] / one['rivulet'][1]:.2f}")
