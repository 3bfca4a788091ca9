"""W3 in Bytewax (one worker): count and sum of .v per .key per 1-minute event-time window, with
a 10 s allowance for elements out of order. Run by Benchmarks/w3.py: w3_bytewax.py INPUT OUTPUT."""
import json
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import bytewax.operators as op
import bytewax.operators.windowing as win
from bytewax.connectors.files import FileSink, FileSource
from bytewax.dataflow import Dataflow
from bytewax.operators.windowing import EventClock, TumblingWindower
from bytewax.run import cli_main

source, target = sys.argv[1], sys.argv[2]
epoch = datetime(1970, 1, 1, tzinfo=timezone.utc)

flow = Dataflow("w3")
records = op.map("parse", op.input("in", flow, FileSource(Path(source))), json.loads)
keyed = op.key_on("key", records, lambda record: record["key"])
# The watermark on event time alone, as Rivulet's: Bytewax's EventClock adds the system time since
# the latest element to it (`now_getter`), so a slow run closes windows early and drops elements
# that a fast one counts; and it wakes to close a window at the system time of its end
# (`to_system_utc`), which for times in 1970 is always past, so it never stops waking. A clock
# that stands still and no wake-ups leave windows to close on elements and at the end of input.
clock = EventClock(
    lambda record: epoch + timedelta(milliseconds=record["ts"]),
    wait_for_system_duration=timedelta(seconds=10),
    now_getter=lambda: epoch,
    to_system_utc=lambda _: None,
)
windows = win.fold_window(
    "sum",
    keyed,
    clock,
    TumblingWindower(length=timedelta(minutes=1), align_to=epoch),
    lambda: (0, 0),
    lambda acc, record: (acc[0] + 1, acc[1] + record["v"]),
    lambda a, b: (a[0] + b[0], a[1] + b[1]),
)
lines = op.map(
    "line",
    windows.down,
    lambda item: (
        item[0],
        json.dumps({"key": item[0], "start": item[1][0] * 60_000, "count": item[1][1][0], "sum": item[1][1][1]}),
    ),
)
# One partition: the file sink routes by key, and its partition is the one file.
op.output("out", op.map("route", lines, lambda item: ("w3", item[1])), FileSink(Path(target)))

if __name__ == "__main__":
    cli_main(flow, workers_per_process=1)
