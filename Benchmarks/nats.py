#!/usr/bin/env python3
"""nats: a JetStream stream through filter -> map -> a nats sink, timed from outside in one run.

A nats-server of its own (127.0.0.1, a free port, a temporary store) holds BENCH_IN with
MESSAGES orders {"id", "qty", "price"}. Each run reads all of them through a new durable
consumer, keeps those with qty > 0 and publishes {id, total} to BENCH_OUT, three ways:
`rivulet run` (release), the hand-written C loop (Benchmarks/nats/loop.c, the same C client),
and two `rivulet run`s sharing one durable. A run is timed from its start until BENCH_OUT holds
every expected message; runs are interleaved and the best of each kept.
"""
import os, re, shutil, signal, subprocess, sys, tempfile, time

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
rivulet = os.path.join(root, ".build", "release", "rivulet")
loop = os.path.join(root, "Benchmarks", ".build", "nats-loop")
messages = int(os.environ.get("NATS_BENCH_MESSAGES", "1000000"))
rounds = int(os.environ.get("NATS_BENCH_ROUNDS", "3"))
batch = 500
expected = sum(1 for i in range(1, messages + 1) if i % 7 != 0)

store = tempfile.mkdtemp(prefix="rivulet-nats-bench-")
log_path = os.path.join(store, "server.log")
server = subprocess.Popen(
    ["nats-server", "-js", "-a", "127.0.0.1", "-p", "-1", "-sd", os.path.join(store, "js"), "-l", log_path],
    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

def stop_server():
    server.terminate()
    server.wait()
    shutil.rmtree(store, ignore_errors=True)

url = None
deadline = time.monotonic() + 10
while time.monotonic() < deadline and url is None:
    text = open(log_path).read() if os.path.exists(log_path) else ""
    found = re.search(r"client connections on 127\.0\.0\.1:(\d+)", text)
    if found and "Server is ready" in text:
        url = f"nats://127.0.0.1:{found.group(1)}"
    time.sleep(0.05)
if url is None:
    stop_server()
    sys.exit("nats: nats-server did not start")

def server_cpu():
    """CPU seconds the server has used so far."""
    fields = open(f"/proc/{server.pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

def measure(start_runners, name):
    """Seconds from the runners' start until BENCH_OUT holds every expected message; what the
    runners and the server used of the cores is noted."""
    server_before = server_cpu()
    waiter = subprocess.Popen([loop, "wait", url, "BENCH_OUT", str(expected)], stdout=subprocess.PIPE, text=True)
    if waiter.stdout.readline().strip() != "ready":
        sys.exit("nats: the waiter did not start")
    runners = start_runners()
    elapsed = float(waiter.stdout.readline())
    waiter.wait()
    for runner in runners:
        os.kill(runner.pid, signal.SIGTERM)  # not terminate(): it reaps an ended loop, rusage lost
    runners_cpu = 0.0
    for runner in runners:
        _, status, usage = os.wait4(runner.pid, 0)
        runner.returncode = status
        runners_cpu += usage.ru_utime + usage.ru_stime
        if not (os.WIFSIGNALED(status) or os.WEXITSTATUS(status) in (0, 143)):
            sys.exit(f"nats: a runner ended with status {status}")
    cores[name].append(((server_cpu() - server_before) / elapsed, runners_cpu / elapsed))
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
    stop_server()

rate = {name: messages / min(times) for name, times in best.items()}
print(f"rivulet/loop = {rate['rivulet'] / rate['loop']:.2f} (target >= 0.7); "
      f"two runners/one = {rate['two'] / rate['rivulet']:.2f} (target >= 1.6); "
      f"{os.cpu_count()} cores, the server on the same ones")
print(f"nats rivulet_msgs_per_s={rate['rivulet']:.0f} loop_msgs_per_s={rate['loop']:.0f} "
      f"two_runners_speedup={rate['two'] / rate['rivulet']:.2f}")
