"""What the package's command-line tools (rlscope.fleet, rlscope.parquet_export) share: one-line
errors, the optional packages they need, and opening traces from strangers read-only."""

import importlib
import os
import sqlite3
import sys
from pathlib import Path
from urllib.parse import quote


class ToolError(Exception):
    """A one-line error for the user; the tools print it as `rlscope: error: ...` and exit 1."""


def run_tool(main):
    """Runs main() and turns a ToolError into one line and exit status 1."""
    try:
        sys.exit(main())
    except ToolError as error:
        print(f"rlscope: error: {error}", file=sys.stderr)
        sys.exit(1)
    except KeyboardInterrupt:
        sys.exit(130)


def require(package, purpose):
    """Imports an optional package, or says in one line which one is missing and for what."""
    try:
        return importlib.import_module(package)
    except ImportError:
        top = package.split(".")[0]
        raise ToolError(
            f"{purpose} needs the Python package {top}, which {sys.executable} cannot import "
            f"(pip install {top})"
        ) from None


def progress(line):
    """Progress lines go to stderr, only when stderr is a terminal or RLSCOPE_PROGRESS=1 (as the
    rlscope command does)."""
    if os.environ.get("RLSCOPE_PROGRESS") == "1" or sys.stderr.isatty():
        print(f"rlscope: {line}", file=sys.stderr, flush=True)


def trace_files(inputs, suffixes=(".sqlite",)):
    """The files named, and in each directory named the files with one of `suffixes` (sorted)."""
    files = []
    for name in inputs:
        path = Path(name)
        if path.is_dir():
            found = sorted(p for p in path.iterdir() if p.suffix in suffixes and p.is_file())
            if not found:
                raise ToolError(f"{name}: no {' or '.join(suffixes)} files in this directory")
            files.extend(found)
        elif path.exists():
            files.append(path)
        else:
            raise ToolError(f"{name}: no such file or directory")
    return files


def open_trace(path):
    """A read-only connection to an rlscope trace that refuses to run anything the file's schema
    asks for (a stranger's file: triggers, views with functions). Raises ToolError when the file
    is not an rlscope trace."""
    uri = "file:" + quote(str(Path(path).resolve())) + "?mode=ro"
    try:
        connection = sqlite3.connect(uri, uri=True)
        connection.execute("PRAGMA query_only = ON")
        connection.execute("PRAGMA trusted_schema = OFF")
        version = connection.execute(
            "SELECT value FROM rlscope_meta WHERE key = 'schema_version'"
        ).fetchone()
    except sqlite3.DatabaseError as error:
        raise ToolError(f"{path}: not an rlscope trace ({error})") from None
    if version is None:
        raise ToolError(f"{path}: not an rlscope trace (rlscope_meta has no schema_version)")
    return connection


def meta(connection):
    """The trace's rlscope_meta as a dict."""
    return dict(connection.execute("SELECT key, value FROM rlscope_meta"))
