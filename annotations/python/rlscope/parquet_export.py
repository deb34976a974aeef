"""`rlscope export --format parquet`: a fleet of traces as Parquet files that DuckDB, Spark or
Trino query with plain SQL (docs/fleet.md).

    python -m rlscope.parquet_export -o OUT TRACE_OR_DIRECTORY...

Every table of every trace keeps its columns (docs/trace-format.md) and gains `trace`, the trace's
file name (ids such as `StringIds.id` are per trace: join on it too). Its rows go to

    OUT/TABLE/job=JOB/host=HOST/rank=RANK/TRACE.parquet   tables with a process column
    OUT/TABLE/job=JOB/host=HOST/TRACE.parquet             the others (StringIds, rlscope_meta, ...)

Hive-style partitions: JOB is rlscope_meta.job (rlscope-prof --job) or the trace's file name
without its suffix, HOST and RANK come from rlscope_process_identity per process (a rank-less
process is __HIVE_DEFAULT_PARTITION__, which every engine reads as NULL). A row's process is its
globalPid, or the process of its globalTid. Files are written under a temporary name and renamed
when complete.
"""

import argparse
import concurrent.futures
import os
import sys
import time
from pathlib import Path
from urllib.parse import quote

from ._tools import ToolError, meta, open_trace, progress, require, run_tool, trace_files

NULL_PARTITION = "__HIVE_DEFAULT_PARTITION__"
BATCH_ROWS = 65536
PID_MASK = ~0xFFFFFF  # globalTid & PID_MASK is the thread's globalPid (docs/trace-format.md)


def _partition_value(value):
    return NULL_PARTITION if value is None else quote(str(value), safe="")


def _identifier(name):
    """A table or column name as an SQL identifier, whatever it holds."""
    return '"' + name.replace('"', '""') + '"'


def _path_component(name):
    """A table name as one directory name of its own: "/" and "%" escaped, and the names that
    would mean another directory ("", ".", "..") spelled out. rlscope's and nsys's table names
    stay as they are."""
    escaped = quote(name, safe="")
    if escaped in ("", ".", ".."):
        escaped = "%2E" * len(name) or "%00"
    return escaped


def _arrow_type(pa, declared):
    declared = (declared or "").upper()
    if "INT" in declared:
        return pa.int64()
    if any(t in declared for t in ("REAL", "FLOA", "DOUB")):
        return pa.float64()
    if "BLOB" in declared:
        return pa.binary()
    return pa.string()  # TEXT, and untyped columns (rlscope_events.pid holds ints or text)


def _column_array(pa, table, name, arrow_type, column):
    try:
        return pa.array(column, type=arrow_type)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError) as error:
        if arrow_type == pa.string():  # an untyped column: numbers among the text
            text = [v if v is None or isinstance(v, str) else str(v) for v in column]
            return pa.array(text, type=arrow_type)
        raise ToolError(
            f"table {table}, column {name}: a value does not fit its declared type "
            f"{arrow_type} ({error})"
        ) from None


def _identities(connection, default_host):
    """globalPid -> (host, rank) of every process with an identity (trace format v2)."""
    tables = {r[0] for r in connection.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if "rlscope_process_identity" not in tables:
        return {}
    return {
        gpid: (host or default_host, rank)
        for gpid, host, rank in connection.execute(
            "SELECT globalPid, host, rank FROM rlscope_process_identity"
        )
    }


class _PartitionedWriter:
    """One Parquet writer per partition of one table of one trace, written under a temporary name
    and renamed on close()."""

    def __init__(self, pq, schema, table_dir, file_name):
        self.pq, self.schema, self.table_dir, self.file_name = pq, schema, table_dir, file_name
        self.writers = {}  # partition path -> (writer, temporary path, final path)
        self.rows = 0

    def write(self, partition, batch):
        entry = self.writers.get(partition)
        if entry is None:
            directory = self.table_dir / partition
            directory.mkdir(parents=True, exist_ok=True)
            final = directory / self.file_name
            temporary = directory / f".{self.file_name}.tmp"
            entry = (self.pq.ParquetWriter(temporary, self.schema), temporary, final)
            self.writers[partition] = entry
        entry[0].write_table(batch)
        self.rows += batch.num_rows

    def close(self):
        """Returns the files written."""
        for writer, temporary, final in self.writers.values():
            writer.close()
            os.replace(temporary, final)
        return [final for _, _, final in self.writers.values()]

    def abandon(self):
        for writer, temporary, _ in self.writers.values():
            writer.close()
            temporary.unlink(missing_ok=True)


def _export_table(pa, pc, pq, connection, table, out, trace_name, job, host, identities):
    columns = connection.execute(f"PRAGMA table_info({_identifier(table)})").fetchall()
    names = [c[1] for c in columns]
    types = [_arrow_type(pa, c[2]) for c in columns]
    schema = pa.schema(
        [pa.field(n, t) for n, t in zip(names, types)] + [pa.field("trace", pa.string())]
    )
    process_column = next((c for c in ("globalPid", "globalTid") if c in names), None)
    job_host = f"job={_partition_value(job)}/host={_partition_value(host)}"

    def partition_of(global_pid):  # a row without a process (None) has the trace's host
        process_host, rank = identities.get(global_pid, (host, None))
        return (
            f"job={_partition_value(job)}/host={_partition_value(process_host)}"
            f"/rank={_partition_value(rank)}"
        )

    file_name = f"{trace_name}.parquet"
    # A stranger's trace names its tables and columns: quoted as SQL identifiers, and the table a
    # single escaped path component (no "..", no "/"), so nothing is written outside `out`.
    writer = _PartitionedWriter(pq, schema, out / _path_component(table), file_name)
    quoted = ", ".join(_identifier(n) for n in names)
    cursor = connection.execute(f"SELECT {quoted} FROM {_identifier(table)}")
    try:
        while rows := cursor.fetchmany(BATCH_ROWS):
            arrays = [
                _column_array(pa, table, name, arrow_type, column)
                for name, arrow_type, column in zip(names, types, zip(*rows))
            ]
            arrays.append(pa.array([trace_name] * len(rows), type=pa.string()))
            batch = pa.Table.from_arrays(arrays, schema=schema)
            if process_column is None:
                writer.write(job_host, batch)
                continue
            # The rows' processes, then one partition per distinct process (few per batch).
            processes = arrays[names.index(process_column)]
            if process_column == "globalTid":
                processes = pc.bit_wise_and(processes, pa.scalar(PID_MASK, pa.int64()))
            distinct = processes.unique().to_pylist()
            if len(distinct) == 1:
                writer.write(partition_of(distinct[0]), batch)
                continue
            for process in distinct:
                rows_of = pc.is_null(processes) if process is None else pc.equal(processes, process)
                writer.write(partition_of(process), batch.filter(rows_of))
        files = writer.close()
    except BaseException:
        writer.abandon()
        raise
    return writer.rows, files


def _arrow():
    purpose = "export --format parquet"
    return (
        require("pyarrow", purpose),
        require("pyarrow.compute", purpose),
        require("pyarrow.parquet", purpose),
    )


def export_trace(path, out):
    """Writes every table of one trace under `out`; returns (tables, rows, files written)."""
    pa, pc, pq = _arrow()
    connection = open_trace(path)
    try:
        info = meta(connection)
        trace_name = Path(path).stem
        job = info.get("job") or trace_name
        host = info.get("host")
        identities = _identities(connection, host)
        tables = [
            r[0]
            for r in connection.execute(
                "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%' "
                "ORDER BY name"
            )
        ]
        rows, files = 0, []
        for table in tables:
            table_rows, table_files = _export_table(
                pa, pc, pq, connection, table, out, trace_name, job, host, identities
            )
            rows += table_rows
            files += table_files
        return len(tables), rows, files
    finally:
        connection.close()


class _Inline:
    """A pool of one that runs each job as it is submitted (no worker process for one trace)."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def submit(self, function, *args):
        future = concurrent.futures.Future()
        try:
            future.set_result(function(*args))
        except BaseException as error:  # noqa: B036 - handed to the caller through the future
            future.set_exception(error)
        return future


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="rlscope export --format parquet",
        description="Write traces' tables as Parquet files partitioned by job, host and rank "
        "(hive style), for DuckDB, Spark or Trino (docs/fleet.md).",
    )
    parser.add_argument("traces", nargs="+", metavar="TRACE", help="traces, or directories of them")
    parser.add_argument("-o", "--output", required=True, help="directory to write into")
    parser.add_argument(
        "-j", "--jobs", type=int, default=os.cpu_count() or 1, help="traces exported at once"
    )
    args = parser.parse_args(argv)
    if args.jobs < 1:
        raise ToolError("--jobs must be at least 1")
    _arrow()  # says which package is missing before any work
    files = trace_files(args.traces)
    names = [f.stem for f in files]
    if len(set(names)) != len(names):
        raise ToolError("two traces have the same file name; their Parquet files would collide")
    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    total_rows, written = 0, []
    jobs = min(args.jobs, len(files))
    # One process per trace at a time: reading SQLite rows into Python is what takes the time.
    with concurrent.futures.ProcessPoolExecutor(jobs) if jobs > 1 else _Inline() as pool:
        futures = {pool.submit(export_trace, path, out): path for path in files}
        for i, future in enumerate(concurrent.futures.as_completed(futures), 1):
            tables, rows, trace_files_written = future.result()
            total_rows += rows
            written += trace_files_written
            progress(f"exported {futures[future]} ({rows} rows, {tables} tables) [{i}/{len(files)}]")
    elapsed = time.monotonic() - started
    size = sum(f.stat().st_size for f in written)
    print(
        f"exported {total_rows} rows from {len(files)} trace{'s' if len(files) != 1 else ''} "
        f"to {out} ({size / 1e6:.1f} MB of Parquet) in {elapsed:.2f} s"
    )
    return 0


if __name__ == "__main__":
    run_tool(main)
