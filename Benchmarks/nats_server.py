"""A nats-server of a benchmark's own: 127.0.0.1, a free port, a temporary store."""
import os, re, select, shutil, signal, subprocess, sys, tempfile, time


class Server:
    def __init__(self, name):
        self.name = name
        self.store = tempfile.mkdtemp(prefix=f"rivulet-{name}-bench-")
        log_path = os.path.join(self.store, "server.log")
        self.process = subprocess.Popen(
            ["nats-server", "-js", "-a", "127.0.0.1", "-p", "-1", "-sd", os.path.join(self.store, "js"), "-l", log_path],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.url = None
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and self.url is None:
            text = open(log_path).read() if os.path.exists(log_path) else ""
            found = re.search(r"client connections on 127\.0\.0\.1:(\d+)", text)
            if found and "Server is ready" in text:
                self.url = f"nats://127.0.0.1:{found.group(1)}"
            time.sleep(0.05)
        if self.url is None:
            self.stop()
            sys.exit(f"{name}: nats-server did not start")

    def cpu(self):
        """CPU seconds the server has used so far."""
        fields = open(f"/proc/{self.process.pid}/stat").read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self):
        self.process.terminate()
        self.process.wait()
        shutil.rmtree(self.store, ignore_errors=True)

    def measure(self, loop, stream, expected, start_runners):
        """Seconds from the runners' start until `stream` holds `expected` messages (the C loop's
        `wait` purges it first and polls), the server's cores busy meanwhile, and the CPU seconds
        the runners used (read when they are stopped with SIGTERM)."""
        server_before = self.cpu()
        waiter = subprocess.Popen([loop, "wait", self.url, stream, str(expected)], stdout=subprocess.PIPE, text=True)
        if waiter.stdout.readline().strip() != "ready":
            sys.exit(f"{self.name}: the waiter did not start")
        runners = start_runners()
        # A runner that ends before the stream is full (a failed run) ends the benchmark.
        while not select.select([waiter.stdout], [], [], 0.5)[0]:
            if all(runner.poll() is not None for runner in runners):
                waiter.kill()
                sys.exit(f"{self.name}: the runners ended before {stream} held {expected} messages "
                         f"(status {[runner.returncode for runner in runners]})")
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
                sys.exit(f"{self.name}: a runner ended with status {status}")
        return elapsed, (self.cpu() - server_before) / elapsed, runners_cpu
