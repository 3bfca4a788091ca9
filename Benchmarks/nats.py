#!/usr/bin/env python3
"""nats: a JetStream stream through filter -> map -> a nats sink, timed from outside in one run.

A nats-server of its own (127.0.0.1, a free port, a temporary store) holds BENCH_IN with
MESSAGES orders {"id", "qty", "price"}. Each run reads all of them through a new durable
consumer, keeps those with qty > 0 and publishes {id, total} to BENCH_OUT, three ways:
`rivulet run` (release), the hand-written C loop (Benchmarks/nats/loop.c, the same C client),
and two `rivulet run`s sharing one durable. A run is timed from its start until BENCH_OUT holds
every expected message; runs are interleaved and the best of each kept.
"""
import os, signal, subprocess, sys, time

from nats_server import Server

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
rivulet = os.path.join(root, ".build", "release", "rivulet")
loop = os.path.join(root, "Benchmarks", ".build", "nats-loop")
messages = int(os.environ.get("NATS_BENCH_MESSAGES", "1000000"))
rounds = int(os.environ.get("NATS_BENCH_ROUNDS", "3"))
batch = 500
expected = sum(1 for i in range(1, messages + 1) if i % 7 != 0)

server = Server("nats")
url, store = server.url, server.store

def measure(start_runners, name):
    """Seconds from the runners' start until BENCH_OUT holds every expected message; what the
    runners and the server used of the cores is noted."""
    elapsed, server_cores, runners_cpu = server.measure(loop, "BENCH_OUT", expected, start_runners)
    cores[name].append((server_cores, runners_cpu / elapsed))
    return elapsed

def pipeline(durable):
    path = os.path.join(store, f"{durable}.yaml")
    with open(path, "w") as f:
        f.write(f'source: {{ nats: {{ url: "{url}", stream: BENCH_IN, subject: "bench.in.>", durable: {durable}, batch: {batch} }} }}\n'
                "ops:\n  - filter: .qty > 0\n  - map: { id: .id, total: .qty * .price }\n"
                f'sink: {{ nats: {{ url: "{url}", subject: bench.out.orders }} }}\n')
    return path

def rivulets(durable, count):
    spec = pipeline(durable)
    return lambda: [subprocess.Popen([rivulet, "run", spec], stderr=subprocess.DEVNULL) for _ in range(count)]

try:
    subprocess.run([loop, "setup", url], check=True)
    start = time.monotonic()
    subprocess.run([loop, "publish", url, str(messages)], check=True)
    print(f"published {messages} orders in {time.monotonic() - start:.2f}s; {expected} pass the filter")
    best = {"rivulet": [], "loop": [], "two": []}
    cores = {"rivulet": [], "loop": [], "two": []}
    for round in range(rounds):
        best["rivulet"].append(measure(rivulets(f"rivulet{round}", 1), "rivulet"))
        best["loop"].append(measure(
            lambda: [subprocess.Popen([loop, "run", url, f"loop{round}", str(messages), str(batch)])], "loop"))
        best["two"].append(measure(rivulets(f"two{round}", 2), "two"))
        print(f"round {round + 1}: rivulet {best['rivulet'][-1]:.2f}s  loop {best['loop'][-1]:.2f}s  "
              f"two runners {best['two'][-1]:.2f}s")
    for name, label in (("rivulet", "rivulet"), ("loop", "loop"), ("two", "two runners")):
        server_cores, runner_cores = cores[name][-1]
        print(f"cores busy in the last {label} run: server {server_cores:.2f}, runners {runner_cores:.2f}")
finally:
    server.stop()

rate = {name: messages / min(times) for name, times in best.items()}
print(f"rivulet/loop = {rate['rivulet'] / rate['loop']:.2f} (target >= 0.7); "
      f"two runners/one = {rate['two'] / rate['rivulet']:.2f} (target >= 1.6); "
      f"{os.cpu_count()} cores, the server on the same ones")
print(f"nats rivulet_msgs_per_s={rate['rivulet']:.0f} loop_msgs_per_s={rate['loop']:.0f} "
      f"two_runners_speedup={rate['two'] / rate['rivulet']:.2f}")
