#!/usr/bin/env python3
"""nats-keyed: count and sum per key per event-time minute over a partitioned stream, timed from
outside in one run.

A nats-server of its own holds BENCH_KEYED with MESSAGES events {"key", "t", "v"} of KEYS keys,
STEP ms apart in event time, on subjects keyed.P (PARTITIONS partitions, FNV-1a of the key, as
the nats sink's partitionBy places them), and one event an hour later in each partition that
closes every window. Each run reads them all through new durable consumers and publishes one
result per (key, minute) to BENCH_KOUT with msgId RUN-KEY-START, two ways: one `rivulet run` of a
group (release) and the hand-written C loop (Benchmarks/nats/keyed.c, the same C client). A run
is timed from its start until BENCH_KOUT holds every result; runs are interleaved and the best
of each kept. CPU seconds per million events are printed for each.
"""
import os, subprocess, sys, time

from nats_server import Server

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
rivulet = os.path.join(root, ".build", "release", "rivulet")
loop = os.path.join(root, "Benchmarks", ".build", "nats-loop")
messages = int(os.environ.get("NATS_KEYED_MESSAGES", "200000"))
keys = int(os.environ.get("NATS_KEYED_KEYS", "2000"))
partitions = int(os.environ.get("NATS_KEYED_PARTITIONS", "12"))
rounds = int(os.environ.get("NATS_KEYED_ROUNDS", "2"))
step = 3  # ms between events: 200,000 events are 10 minutes
batch = 500
expected = len({(i % keys, (i * step) // 60000) for i in range(messages)})

server = Server("nats-keyed")
url = server.url


def pipeline(group):
    path = os.path.join(server.store, f"{group}.yaml")
    with open(path, "w") as f:
        f.write(
            f'source: {{ nats: {{ url: "{url}", stream: BENCH_KEYED, subject: keyed, group: {group}, '
            f"partitions: {partitions}, batch: {batch}, maxAckPending: 60000 }} }}\n"
            "ops:\n"
            "  - eventTime: { time: .t, maxDelay: 10s }\n"
            "  - aggregate: { by: .key, every: 1m, fields: { n: count, sum: { sum: .v } } }\n"
            f'sink: {{ nats: {{ url: "{url}", subject: kout.results, msgId: "{group}-{{{{ .key }}}}-{{{{ .start }}}}" }} }}\n')
    return path


best = {"rivulet": [], "loop": []}
cpu = {"rivulet": [], "loop": []}
try:
    subprocess.run([loop, "setup-keyed", url], check=True)
    start = time.monotonic()
    subprocess.run([loop, "publish-keyed", url, str(messages), str(keys), str(partitions), str(step)], check=True)
    print(f"published {messages} events of {keys} keys in {partitions} partitions in "
          f"{time.monotonic() - start:.2f}s; {expected} results per run")
    for round in range(rounds):
        spec = pipeline(f"rivulet{round}")
        for name, start_runner in (
            ("rivulet", lambda: [subprocess.Popen([rivulet, "run", spec], stderr=open(spec + ".log", "w"))]),
            ("loop", lambda: [subprocess.Popen(
                [loop, "run-keyed", url, f"loop{round}", str(messages), str(partitions), str(batch)])]),
        ):
            elapsed, _, runner_cpu = server.measure(loop, "BENCH_KOUT", expected, start_runner)
            best[name].append(elapsed)
            cpu[name].append(runner_cpu)
        print(f"round {round + 1}: rivulet {best['rivulet'][-1]:.2f}s  loop {best['loop'][-1]:.2f}s")
except SystemExit:
    for log in sorted(f for f in os.listdir(server.store) if f.endswith(".log") and f != "server.log"):
        print(f"{log}:", open(os.path.join(server.store, log)).read()[-2000:], file=sys.stderr)
    raise
finally:
    server.stop()

rate = {name: messages / min(times) for name, times in best.items()}
per_million = {name: min(seconds) / messages * 1e6 for name, seconds in cpu.items()}
print(f"rivulet/loop = {rate['rivulet'] / rate['loop']:.2f} (target >= 0.7); CPU s per million events: "
      f"rivulet {per_million['rivulet']:.2f}, loop {per_million['loop']:.2f}; "
      f"{os.cpu_count()} cores, the server on the same ones")
print(f"nats-keyed rivulet_msgs_per_s={rate['rivulet']:.0f} loop_msgs_per_s={rate['loop']:.0f} "
      f"rivulet_cpu_s_per_million={per_million['rivulet']:.2f} loop_cpu_s_per_million={per_million['loop']:.2f}")
