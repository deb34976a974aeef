"""`rlscope analyze --ray ADDRESS`: analyse a job's traces as Ray tasks, each on the node where it
lies, and combine the analyses as `rlscope analyze DIRECTORY` does (docs/fleet.md).

    python -m rlscope.fleet --ray ADDRESS [-f FORMAT] [-o OUT] TRACE_OR_DIRECTORY... \\
        [-- OPTIONS OF EACH TRACE'S rlscope analyze]

A trace's node is the Ray node whose host name is the trace's host: rlscope_meta.host when this
machine can open the trace, else the host in its name (`rlscope-prof --job NAME` writes
NAME.HOST.sqlite). The task runs `rlscope analyze --format json TRACE` there, so rlscope must be
installed at the same path on every node (--rlscope). A trace of no known node goes to any node
(a shared file system). The driver combines the documents with `rlscope analyze DOCUMENTS`.
"""

import argparse
import json
import logging
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ._tools import ToolError, meta, open_trace, progress, require, run_tool, trace_files


def _analyse(rlscope, trace, options):
    """One trace, on the node it was sent to: its analysis document, or why there is none."""
    started = time.monotonic()
    result = subprocess.run(
        [rlscope, "analyze", "--format", "json", str(trace), *options],
        capture_output=True,
        text=True,
        env={**os.environ, "RLSCOPE_PROGRESS": "0"},
    )
    lines = result.stderr.strip().splitlines()
    return {
        "trace": str(trace),
        "node": socket.gethostname(),
        "seconds": time.monotonic() - started,
        "document": result.stdout if result.returncode == 0 else None,
        "error": None if result.returncode == 0 else (lines[-1] if lines else f"exit {result.returncode}"),
    }


def _trace_host(path, hosts):
    """The host the trace was recorded on, when one of `hosts` (the cluster's nodes)."""
    try:
        connection = open_trace(path)
        try:
            host = meta(connection).get("host")
        finally:
            connection.close()
        if host in hosts:
            return host
    except ToolError:
        pass  # on another node's disk, or not a trace: its task will say which
    name = Path(path).stem
    return next((h for h in sorted(hosts, key=len, reverse=True) if name.endswith("." + h)), None)


def _nodes(ray):
    """Host name -> node id of every live node."""
    return {n["NodeManagerHostname"]: n["NodeID"] for n in ray.nodes() if n.get("Alive")}


def _check_reachable(address):
    """A head given as HOST:PORT must answer at once: ray.init would retry for minutes."""
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit() or "://" in address:
        return  # auto, local, ray://... : Ray resolves those itself
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
    except OSError as error:
        raise ToolError(
            f"--ray {address}: no Ray head answers there ({error.strerror or error}); start one "
            "with `ray start --head` or give its address"
        ) from None


def run_on_ray(address, rlscope, traces, options):
    """Analyses every trace as a Ray task where it lies; returns the tasks' results in order."""
    ray = require("ray", "--ray")
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    _check_reachable(address)
    init = {"log_to_driver": False, "include_dashboard": False, "logging_level": logging.ERROR}
    if address != "local":
        init["address"] = address
    try:
        ray.init(**init)
    except (ConnectionError, RuntimeError, ValueError) as error:
        lines = str(error).strip().splitlines()
        raise ToolError(f"--ray {address}: {lines[0] if lines else type(error).__name__}") from None
    try:
        nodes = _nodes(ray)
        analyse = ray.remote(num_cpus=1)(_analyse)
        index = {}  # task -> its trace's place in `traces`
        for i, trace in enumerate(traces):
            host = _trace_host(trace, nodes)
            task = analyse
            if host is not None:
                strategy = NodeAffinitySchedulingStrategy(node_id=nodes[host], soft=False)
                task = analyse.options(scheduling_strategy=strategy)
            index[task.remote(rlscope, str(trace), options)] = i
        results, refs = [None] * len(traces), list(index)
        while refs:
            done, refs = ray.wait(refs, num_returns=1)
            result = results[index[done[0]]] = ray.get(done[0])
            progress(
                f"analysed {result['trace']} on {result['node']} in {result['seconds']:.2f} s "
                f"[{len(traces) - len(refs)}/{len(traces)}]"
            )
        return results, len(nodes)
    finally:
        ray.shutdown()


def combine(rlscope, results, format, output, top_operations):
    """Writes the documents (an error document for a failed trace) and lets rlscope combine
    them; returns its exit status."""
    with tempfile.TemporaryDirectory(prefix="rlscope-fleet-") as directory:
        documents = []
        for i, result in enumerate(results):
            path = Path(directory) / f"{i:06d}.json"
            text = result["document"]
            if text is None:
                text = json.dumps(
                    {"schema": "rlscope.analysis/1", "trace": result["trace"], "error": result["error"]}
                )
            path.write_text(text)
            documents.append(str(path))
        command = [rlscope, "analyze", "--format", format, "--top-operations", str(top_operations)]
        if output:
            command += ["--output", output]
        command += documents
        return subprocess.run(command, env={**os.environ, "RLSCOPE_PROGRESS": "0"}).returncode


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    options = []
    if "--" in argv:
        options = argv[argv.index("--") + 1 :]
        argv = argv[: argv.index("--")]
    parser = argparse.ArgumentParser(
        prog="python -m rlscope.fleet",
        description="Analyse traces as Ray tasks, each on the node where it lies, and combine the "
        "analyses (docs/fleet.md). Options after -- go to each trace's rlscope analyze.",
    )
    parser.add_argument("traces", nargs="+", metavar="TRACE", help="traces, or directories of them")
    parser.add_argument(
        "--ray",
        required=True,
        metavar="ADDRESS",
        help="the cluster: host:port of its head, ray://..., auto, or local (start one here)",
    )
    parser.add_argument(
        "--rlscope",
        default=shutil.which("rlscope") or "rlscope",
        help="the rlscope command, at the same path on every node (default: the one on PATH)",
    )
    parser.add_argument("-f", "--format", default="table", choices=["table", "json", "csv"])
    parser.add_argument("-o", "--output", help="write here instead of standard output")
    parser.add_argument(
        "--top-operations", type=int, default=20, help="operations listed, longest in total first"
    )
    args = parser.parse_args(argv)

    traces = trace_files(args.traces)
    started = time.monotonic()
    results, nodes = run_on_ray(args.ray, args.rlscope, traces, options)
    progress(
        f"analysed {len(results)} traces on {nodes} Ray node{'s' if nodes != 1 else ''} in "
        f"{time.monotonic() - started:.2f} s"
    )
    return combine(args.rlscope, results, args.format, args.output, args.top_operations)


if __name__ == "__main__":
    run_tool(main)
