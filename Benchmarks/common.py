"""What the benchmark scripts share: where the programs and data are, and timing a command from
outside."""
import os, subprocess, sys, time

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
data = os.path.join(root, "Benchmarks", "data")
os.makedirs(data, exist_ok=True)
rivulet = os.path.join(root, ".build", "release", "rivulet")
bench = os.path.join(root, "Benchmarks", ".build", "release", "RivuletBenchmarks")


def timed(command, stdout=None, name="benchmark"):
    """Runs `command` (its standard output to `stdout`, else discarded) and returns its wall time in
    seconds and its peak RSS in MB; a failure ends the benchmark, named `name`. Peak RSS counts the
    child's memory before its exec too: keep the calling script small while it times."""
    start = time.monotonic()
    process = subprocess.Popen(command, stdout=stdout or subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.monotonic() - start
    if status != 0:
        sys.exit(f"{name}: {' '.join(command)} failed with status {status}")
    return elapsed, usage.ru_maxrss / 1024.0
