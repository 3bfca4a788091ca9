#!/usr/bin/env python3
"""postgres: change data capture and the postgres sink, each beside PostgreSQL's own client, in one run.

A throwaway cluster of its own (initdb, 127.0.0.1, a free port, wal_level=logical, fsync off).

CDC: CHANGES single-row inserts into `orders`, each its own transaction, are written while two
slots wait: one pgoutput slot read by `rivulet run` (the postgres source, `take: CHANGES`, into a
JSON Lines file), one test_decoding slot read by `pg_recvlogical` into a file. Rivulet is timed
from its start to its exit, pg_recvlogical until its file ends with the last transaction; the changes are already in the server's log, so both read at
their own pace.

Sink: ROWS rows of a JSON Lines file written by `rivulet run` (file source, postgres sink) into a
table, beside `psql`'s `\\copy` of the same rows as CSV into a table of the same shape. Each is
timed from its start to its exit; the table is emptied between rounds.

Rounds are interleaved (every CDC round before the sink's, whose rows the slots would decode
too) and the best of ROUNDS kept.
"""
import os, pwd, shutil, socket, subprocess, sys, tempfile, time

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
rivulet = os.path.join(root, ".build", "release", "rivulet")
changes = int(os.environ.get("PG_BENCH_CHANGES", "200000"))
rows = int(os.environ.get("PG_BENCH_ROWS", "1000000"))
rounds = int(os.environ.get("PG_BENCH_ROUNDS", "3"))


def binary(name):
    base = "/usr/lib/postgresql"
    versions = sorted(int(v) for v in os.listdir(base) if v.isdigit())
    return os.path.join(base, str(versions[-1]), "bin", name)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="rivulet-pg-bench-")
        self.port = free_port()
        self.data = os.path.join(self.dir, "data")
        if os.getuid() == 0:
            os.chown(self.dir, pwd.getpwnam("postgres").pw_uid, -1)
        self.owner(binary("initdb"), "-D", self.data, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-sync",
                   "--no-instructions")
        options = (f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.dir} -c wal_level=logical "
                   "-c max_wal_senders=10 -c max_replication_slots=10 -c fsync=off -c synchronous_commit=off "
                   "-c max_wal_size=4GB")
        self.owner(binary("pg_ctl"), "-D", self.data, "-l", os.path.join(self.dir, "log"), "-w", "-o", options,
                   "start")
        self.url = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def owner(self, *command):
        if os.getuid() == 0:
            command = ("/usr/sbin/runuser", "-u", "postgres", "--") + command
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)

    def psql(self, sql):
        return subprocess.run(["psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", self.url, "-c", sql], check=True,
                              capture_output=True, text=True).stdout.strip()

    def stop(self):
        subprocess.run(("/usr/sbin/runuser", "-u", "postgres", "--") if os.getuid() == 0 else ()
                       + (binary("pg_ctl"), "-D", self.data, "-m", "immediate", "-w", "stop"),
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        shutil.rmtree(self.dir, ignore_errors=True)


def timed(command):
    start = time.monotonic()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return time.monotonic() - start


def received(path, slot):
    """Seconds from pg_recvlogical's start until its file ends with the last change's transaction
    (its --endpos stops at the server's end of log as a keepalive gives it, before the last
    transactions are written)."""
    last = f"id[bigint]:{changes} ".encode()
    start = time.monotonic()
    reader = subprocess.Popen(["pg_recvlogical", "-d", cluster.url, "--slot", slot, "--start", "--no-loop",
                               "-f", path])
    try:
        while True:
            try:
                with open(path, "rb") as f:
                    f.seek(max(0, os.path.getsize(path) - 200))
                    tail = f.read()
                if last in tail and tail.endswith(b"\n") and tail.rsplit(b"\n", 2)[-2].startswith(b"COMMIT"):
                    return time.monotonic() - start
            except FileNotFoundError:
                pass
            if reader.poll() is not None:
                raise RuntimeError(f"pg_recvlogical ended with {reader.returncode}")
            if time.monotonic() - start > 300:
                raise RuntimeError("pg_recvlogical did not write the last change within 300 s")
            time.sleep(0.01)
    finally:
        reader.terminate()
        reader.wait()


def lines(path):
    with open(path, "rb") as f:
        return sum(1 for _ in f)


cluster = Cluster()
work = cluster.dir
try:
    cluster.psql("CREATE TABLE orders (id bigint PRIMARY KEY, customer text NOT NULL, amount numeric(10,2) NOT NULL, "
                 "placed timestamptz NOT NULL DEFAULT now())")
    cluster.psql("CREATE PUBLICATION bench FOR TABLE orders")
    cluster.psql("CREATE TABLE totals (id bigint PRIMARY KEY, customer text NOT NULL, amount numeric(10,2) NOT NULL)")
    cluster.psql("CREATE TABLE copied (id bigint PRIMARY KEY, customer text NOT NULL, amount numeric(10,2) NOT NULL)")
    for round in range(rounds):
        cluster.psql(f"SELECT pg_create_logical_replication_slot('rivulet{round}', 'pgoutput')")
        cluster.psql(f"SELECT pg_create_logical_replication_slot('recv{round}', 'test_decoding')")
    start = time.monotonic()
    cluster.psql(f"DO $$ BEGIN FOR i IN 1..{changes} LOOP "
                 "INSERT INTO orders (id, customer, amount) VALUES (i, 'c' || (i % 97), (i % 1000) / 10.0); "
                 "COMMIT; END LOOP; END $$")
    print(f"wrote {changes} single-row transactions in {time.monotonic() - start:.2f}s")

    with open(os.path.join(work, "rows.jsonl"), "w") as jsonl, open(os.path.join(work, "rows.csv"), "w") as csv:
        for i in range(1, rows + 1):
            jsonl.write(f'{{"id":{i},"customer":"c{i % 97}","amount":{(i % 1000) / 10}}}\n')
            csv.write(f"{i},c{i % 97},{(i % 1000) / 10}\n")

    times = {"cdc": [], "recvlogical": [], "sink": [], "copy": []}
    # Every CDC round first: a slot decodes the whole database's log, the sink's rows included.
    for round in range(rounds):
        cdc_spec = os.path.join(work, f"cdc{round}.yaml")
        cdc_out = os.path.join(work, f"cdc{round}.jsonl")
        with open(cdc_spec, "w") as f:
            f.write(f'source: {{ postgres: {{ url: "{cluster.url}", slot: rivulet{round}, publication: bench }} }}\n'
                    f"ops:\n  - take: {changes}\n"
                    f"sink: {{ file: {cdc_out} }}\n")
        times["cdc"].append(timed([rivulet, "run", cdc_spec]))
        recv_out = os.path.join(work, f"recv{round}.txt")
        times["recvlogical"].append(received(recv_out, f"recv{round}"))
        assert lines(cdc_out) == changes, f"rivulet wrote {lines(cdc_out)} changes of {changes}"
        assert lines(recv_out) >= 3 * changes, f"pg_recvlogical wrote {lines(recv_out)} lines"
        os.remove(cdc_out)
        os.remove(recv_out)
        print(f"cdc round {round + 1}: rivulet {times['cdc'][-1]:.2f}s  pg_recvlogical {times['recvlogical'][-1]:.2f}s",
              flush=True)
    for round in range(rounds):
        cluster.psql("TRUNCATE totals")
        sink_spec = os.path.join(work, "sink.yaml")
        with open(sink_spec, "w") as f:
            f.write(f"source: {{ file: {os.path.join(work, 'rows.jsonl')} }}\n"
                    f'sink: {{ postgres: {{ url: "{cluster.url}", table: totals, batch: {{ count: 10000 }} }} }}\n')
        times["sink"].append(timed([rivulet, "run", sink_spec]))
        assert cluster.psql("SELECT count(*) FROM totals") == str(rows)
        cluster.psql("TRUNCATE copied")
        times["copy"].append(timed(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", cluster.url, "-c",
                                    f"\\copy copied FROM '{os.path.join(work, 'rows.csv')}' WITH (FORMAT csv)"]))
        assert cluster.psql("SELECT count(*) FROM copied") == str(rows)
        print(f"sink round {round + 1}: rivulet {times['sink'][-1]:.2f}s  \\copy {times['copy'][-1]:.2f}s", flush=True)
finally:
    cluster.stop()

rate = {name: (changes if name in ("cdc", "recvlogical") else rows) / min(values) for name, values in times.items()}
print(f"cdc rivulet/pg_recvlogical = {rate['cdc'] / rate['recvlogical']:.2f} (target >= 0.7); "
      f"sink rivulet/\\copy = {rate['sink'] / rate['copy']:.2f} (target >= 0.5); "
      f"{os.cpu_count()} cores, the server on the same ones")
print(f"postgres cdc_rows_per_s={rate['cdc']:.0f} recvlogical_rows_per_s={rate['recvlogical']:.0f} "
      f"sink_rows_per_s={rate['sink']:.0f} copy_rows_per_s={rate['copy']:.0f}")
