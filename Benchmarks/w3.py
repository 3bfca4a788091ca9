#!/usr/bin/env python3
"""W3: an event-time aggregation, timed from outside in one run.

1,000,000 JSON Lines records {"key": "k<0..9999>", "v": n, "ts": ms} over 10 minutes of event time,
5% of them up to 10 s out of order, counted and summed per key per 1-minute window on event time
with a 10 s allowance (exact windows, nothing late), five ways:

- Rivulet: `eventTime: {time: .ts, maxDelay: 10s}` then `aggregate: {by: .key, every: 1m, ...}`,
  with `parallel: 1` (one thread, as the loop), and as written (`default_s`: split by key over
  every core, as an aggregate by key is by default);
- the hand-written Swift loop (same JSON code, a dictionary per open window, the same watermark);
- the same loop in C++ on simdjson's On-Demand API (Benchmarks/simdjson/w3.cpp): the reference at
  the hardware's limit;
- Bytewax (PyPI `bytewax`, one worker): `EventClock` with a 10 s wait and a `TumblingWindower` of
  1 minute aligned to the epoch, `fold_window`; installed into Benchmarks/.venv on first use. Its
  clock is held still (`now_getter`) and never wakes on system time (`to_system_utc`): Bytewax's
  watermark otherwise grows with the system time a run takes, so its output depended on its
  speed (see Benchmarks/w3_bytewax.py);
- DuckDB's batch `GROUP BY` over the same file, the reference of what two cores can do;
- Rivulet again with the aggregate inside `partitionBy: {key: .key, partitions: 16}`, on one
  thread and on two (the keyed parallelism of several cores).

Rivulet and the loop run five times, interleaved, and keep their best (this machine's times
vary by a third from run to run); DuckDB five times after them, best kept, each run a whole
process as Rivulet's are (Python importing duckdb is about 0.10 s of it), and the query alone as
timed inside that process (`duckdb_query_s`: the figure for DuckDB's own work); Bytewax once
(it takes about half a minute here). Peak RSS is printed for each. The four outputs are compared as
sets of {key, start, count, sum}. The last line is the one to read.
"""
import json, os, subprocess, sys, time

import common
from common import bench, data, rivulet, root

# The reference at the hardware's limit: the loop's work in C++ on simdjson's On-Demand API.
simdjson = os.path.join(root, "Benchmarks", ".build", "w3-simdjson")
venv = os.path.join(root, "Benchmarks", ".venv")
lines = 1_000_000


def timed(command, stdout=None):
    return common.timed(command, stdout, name="w3")


def python_with(*packages):
    """The virtualenv's python, with `packages` (each NAME==VERSION) installed into it."""
    python = os.path.join(venv, "bin", "python")
    if not os.path.exists(python):
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    # The version is checked, not only the import: DuckDB's time is the figure W3 is read against,
    # and a virtualenv left from an earlier run may hold another release.
    check = "from importlib.metadata import version; import sys; sys.exit(any(version(n) != v for n, v in %r))" % (
        [tuple(p.split("==")) for p in packages],)
    missing = subprocess.run([python, "-c", check], capture_output=True).returncode != 0
    if missing:
        print("installing " + " ".join(packages) + " into Benchmarks/.venv ...", file=sys.stderr)
        subprocess.run([python, "-m", "pip", "install", "-q", *packages], check=True)
    return python


def rows(path):
    """The output as a sorted list of (key, start, count, sum)."""
    result = []
    with open(path) as f:
        for line in f:
            if line.strip():
                o = json.loads(line)
                result.append((o["key"], int(o["start"]), int(o["count"]), float(o["sum"])))
    return sorted(result)


source = os.path.join(data, f"w3-late-{lines}.jsonl")
if not os.path.exists(source):
    subprocess.run([bench, "w3-generate", str(lines), source], check=True)
spec = os.path.join(data, "w3.yaml")
default_spec = os.path.join(data, "w3-default.yaml")
# Against the loop on one thread (`parallel: 1`: an aggregate by key would otherwise be split over
# the cores by default); and as written, by default, on every core.
for path, parallel, output in [(spec, "parallel: 1\n", "w3-rivulet.jsonl"), (default_spec, "", "w3-default.jsonl")]:
    with open(path, "w") as f:
        f.write(f"{parallel}source: {{ fixture: {os.path.basename(source)} }}\n"
                "eventTime: { time: .ts, maxDelay: 10s }\n"
                "ops:\n  - aggregate: { by: .key, every: 1m, fields: { count: count, sum: { sum: .v } } }\n"
                f"sink: {{ file: {output} }}\n")
partitioned = {}
for threads in (1, 2):
    partitioned[threads] = os.path.join(data, f"w3-threads{threads}.yaml")
    with open(partitioned[threads], "w") as f:
        f.write(f"source: {{ fixture: {os.path.basename(source)} }}\n"
                "eventTime: { time: .ts, maxDelay: 10s }\n"
                "ops:\n"
                f"  - partitionBy:\n      key: .key\n      partitions: 16\n      threads: {threads}\n"
                "      ops:\n"
                "        - aggregate: { by: .key, every: 1m, fields: { count: count, sum: { sum: .v } } }\n"
                f"sink: {{ file: w3-threads{threads}.jsonl }}\n")
outputs = {name: os.path.join(data, f"w3-{name}.jsonl")
           for name in ["rivulet", "loop", "simdjson", "bytewax", "duckdb", "threads1", "threads2", "default"]}
times = {"rivulet": [], "loop": [], "simdjson": [], "threads1": [], "threads2": [], "default": []}
rss = {name: 0.0 for name in times}
for _ in range(5):
    for name, command in [("rivulet", [rivulet, "run", spec]), ("loop", [bench, "w3-loop", source, outputs["loop"]]),
                          ("simdjson", [simdjson, source, outputs["simdjson"]]),
                          ("threads1", [rivulet, "run", partitioned[1]]), ("threads2", [rivulet, "run", partitioned[2]]),
                          ("default", [rivulet, "run", default_spec])]:
        elapsed, peak = timed(command)
        times[name].append(elapsed)
        rss[name] = max(rss[name], peak)
best = {name: min(values) for name, values in times.items()}

python = python_with("bytewax==0.21.1", "duckdb==2.0.1")
script = os.path.join(root, "Benchmarks", "w3_bytewax.py")
best["bytewax"], rss["bytewax"] = timed([python, script, source, outputs["bytewax"]])
# DuckDB five times, each a whole process like every other run here (best kept, as for Rivulet:
# one cold run read 0.32-0.35 s where the next ones read 0.27 s), and the query alone, timed inside
# that process (its first query: about 0.10 s of each process is Python importing duckdb).
duckdb_runs, duckdb_queries = [], []
query_time = os.path.join(data, "w3-duckdb-query.txt")
for _ in range(5):
    elapsed, peak = timed([python, "-c", f"""
import time, duckdb
started = time.perf_counter()
duckdb.sql('''COPY (SELECT key, (ts // 60000) * 60000 AS start, count(*) AS count, sum(v) AS sum
  FROM read_json('{source}', format = 'newline_delimited', columns = {{key: 'VARCHAR', v: 'BIGINT', ts: 'BIGINT'}})
  GROUP BY ALL) TO '{outputs["duckdb"]}' (FORMAT json)''')
open('{query_time}', 'w').write(str(time.perf_counter() - started))
"""])
    duckdb_runs.append(elapsed)
    rss["duckdb"] = max(rss.get("duckdb", 0.0), peak)
    with open(query_time) as f:
        duckdb_queries.append(float(f.read()))
best["duckdb"] = min(duckdb_runs)
best["duckdb_query"] = min(duckdb_queries)

expected = rows(outputs["loop"])
# Threads never change what a run writes: the default (split) output is the one-thread output's bytes.
with open(outputs["default"], "rb") as split, open(outputs["rivulet"], "rb") as one:
    default_equal = split.read() == one.read()
equal = {name: rows(path) == expected for name, path in outputs.items()}
print(f"w3 lines={lines} keys=10000 windows=10 objects={len(expected)} late_allowance=10s out_of_order=5%")
print("w3 equal_to_loop " + " ".join(f"{name}={'yes' if same else 'NO'}" for name, same in equal.items()))
print("w3 peak_rss_mb " + " ".join(f"{name}={value:.1f}" for name, value in rss.items()))
print(f"w3 rivulet_vs_loop={best['rivulet'] / best['loop']:.2f} bytewax_vs_rivulet={best['bytewax'] / best['rivulet']:.1f}")
print(f"w3 rivulet_s={best['rivulet']:.3f} loop_s={best['loop']:.3f} bytewax_s={best['bytewax']:.3f} "
      f"duckdb_s={best['duckdb']:.3f} equal={'true' if all(equal.values()) else 'false'}")
print(f"w3-parallel one_s={best['threads1']:.3f} two_s={best['threads2']:.3f} "
      f"speedup={best['threads1'] / best['threads2']:.2f} duckdb_s={best['duckdb']:.3f} "
      f"two_vs_duckdb={best['threads2'] / best['duckdb']:.2f} default_s={best['default']:.3f} "
      f"equal={'true' if equal['threads1'] and equal['threads2'] and equal['default'] else 'false'} "
      f"default_equal={'true' if default_equal else 'false'}")
print(f"w3-duckdb duckdb_s={best['duckdb']:.3f} duckdb_first_run_s={duckdb_runs[0]:.3f} "
      f"duckdb_query_s={best['duckdb_query']:.3f} default_s={best['default']:.3f} "
      f"default_vs_duckdb={best['default'] / best['duckdb']:.2f} "
      f"default_vs_duckdb_query={best['default'] / best['duckdb_query']:.2f}")
# The line to read: Rivulet (one thread, and as written) against the simdjson reference (one
# thread), and the bytes a second each moves.
megabytes = os.path.getsize(source) / 1e6
print(f"w3 rivulet_s={best['rivulet']:.3f} default_s={best['default']:.3f} simdjson_s={best['simdjson']:.3f} "
      f"rivulet_over_simdjson={best['rivulet'] / best['simdjson']:.2f} "
      f"default_over_simdjson={best['default'] / best['simdjson']:.2f} "
      f"rivulet_mb_s={megabytes / best['rivulet']:.0f} simdjson_mb_s={megabytes / best['simdjson']:.0f} "
      f"equal={'true' if equal['simdjson'] and equal['rivulet'] else 'false'}")
