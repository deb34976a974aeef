#!/usr/bin/env python3
"""Bytes per event of rlscope traces (docs/performance.md, "Trace size"): the file's size over
the events it holds, and where the bytes go (each table and index, from SQLite's dbstat).

    python3 bench/trace_size/trace_size.py TRACE.sqlite [TRACE.sqlite ...] [--parts 6]

An event is something that happened, counted once however the trace stores it: an operation, a
phase, a CPU interval, a CUDA API call, a GPU activity, an imported event, and the NVTX rows that
are no operation (marks, domains, categories). So B/event compares two ways of storing the same
run: a trace that repeats a range in two tables has more bytes for as many events.
"""

import argparse
import sqlite3
import sys
from pathlib import Path

# Tables whose every row is an event (docs/trace-format.md).
EVENT_TABLES = (
    "rlscope_operations", "rlscope_phases", "rlscope_cpu_intervals", "rlscope_events",
    "CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_DRIVER", "CUPTI_ACTIVITY_KIND_KERNEL",
    "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET",
    "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
)
# NVTX ranges (push/pop 59, start/end 60) are operations or phases, counted there.
NVTX_NOT_RANGES = "SELECT COUNT(*) FROM NVTX_EVENTS WHERE eventType NOT IN (59, 60)"


def connect(path):
    # Read-only and immutable: a trace being measured is never written.
    return sqlite3.connect(f"file:{Path(path).resolve()}?mode=ro&immutable=1", uri=True)


def events(db):
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    n = sum(db.execute(f'SELECT COUNT(*) FROM "{t}"').fetchone()[0]
            for t in EVENT_TABLES if t in tables)
    if "NVTX_EVENTS" in tables:
        n += db.execute(NVTX_NOT_RANGES).fetchone()[0]
    return n


def parts(db):
    """(name, bytes) of every table and index, largest first; None when SQLite lacks dbstat."""
    try:
        rows = db.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name "
                          "ORDER BY 2 DESC").fetchall()
    except sqlite3.OperationalError:
        return None
    return rows


def measure(path):
    """The figures of one trace: bytes, events, bytes per event, and the parts."""
    with connect(path) as db:
        n = events(db)
        size = Path(path).stat().st_size
        return {"bytes": size, "events": n, "bytes_per_event": size / n if n else None,
                "parts": parts(db)}


def describe(path, m, top):
    per = f"{m['bytes_per_event']:.1f}" if m["bytes_per_event"] is not None else "-"
    lines = [f"{path}: {m['bytes'] / 1e6:.1f} MB, {m['events'] / 1e6:.3f} M events, "
             f"{per} B/event (MB per M events)"]
    if m["parts"] and m["events"]:
        for name, size in m["parts"][:top]:
            lines.append(f"  {name:40} {size / 1e6:8.1f} MB {size / m['events']:7.1f} B/event")
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("traces", nargs="+", type=Path)
    p.add_argument("--parts", type=int, default=6, help="largest tables and indexes to list")
    args = p.parse_args()
    status = 0
    for path in args.traces:
        try:
            print(describe(path, measure(path), args.parts))
        except (OSError, sqlite3.Error) as e:
            print(f"trace_size: {path}: {e}", file=sys.stderr)
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
