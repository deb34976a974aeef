"""A real torch.distributed job (torchrun, gloo, two ranks) under rlscope-prof: each rank's identity
is recorded, and `rlscope analyze --by rank` finds the rank that a slow step holds back."""

import json
import socket
import sqlite3
import subprocess
import sys

import pytest

from conftest import child_environment

torch = pytest.importorskip("torch", reason="torch is not in this environment (setup.sh --bench)")

COLLECTIVES = 10
# Rank 1's extra work before every all_reduce: long enough that rank 0, descheduled on a busy
# 2-core machine, still enters first (at 30 ms it once entered last, with a compiler beside it).
SLOW_S = 0.08


def test_torchrun_ranks_and_the_straggler(build, run_traced, write_script, tmp_path):
    worker = write_script(
        f"""
        import rlscope
        import torch
        import torch.distributed as dist
        from workload import busy

        dist.init_process_group("gloo")
        rank = dist.get_rank()
        x = torch.ones(1000)
        dist.all_reduce(x)  # every rank has joined before the measured collectives
        for step in range({COLLECTIVES}):
            with rlscope.operation("simulate"):
                busy({SLOW_S} if rank == 1 else 0.001)
            with rlscope.operation("sync"):
                dist.all_reduce(x)
        dist.destroy_process_group()
        """,
        "worker.py",
    )
    r = run_traced(
        f"""
        from torch.distributed.run import main
        main(["--standalone", "--nproc-per-node", "2", {str(worker)!r}])
        """,
        timeout=180,
    )
    ranks = r.trace.query(
        "SELECT launcher, rank, worldSize, localRank FROM rlscope_process_identity "
        "WHERE rank IS NOT NULL ORDER BY rank"
    )
    assert ranks == [("torchrun", 0, 2, 0), ("torchrun", 1, 2, 1)], ranks

    analyze = subprocess.run(
        [str(build.root / "bin" / "rlscope"), "analyze", "--by", "rank", "--format", "json",
         str(tmp_path / "trace1.sqlite")],
        capture_output=True, text=True, timeout=120,
    )
    assert analyze.returncode == 0, analyze.stderr
    doc = json.loads(analyze.stdout)
    assert doc["collectives"]["source"] == "c10d calls", doc["collectives"]
    assert doc["collectives"]["matched"] == COLLECTIVES + 1, doc["collectives"]
    by_rank = {s["rank"]: s for s in doc["stragglers"]}
    slow, fast = by_rank[1], by_rank[0]
    # Rank 1 entered every measured all_reduce last; rank 0 waited about SLOW_S each time.
    assert slow["collectives_last"] >= COLLECTIVES, doc["stragglers"]
    waited_s = slow["others_waited_us"] / 1e6
    assert 0.8 * COLLECTIVES * SLOW_S <= waited_s <= 2 * COLLECTIVES * SLOW_S + 1, waited_s
    assert fast["others_waited_us"] < slow["others_waited_us"] / 10, doc["stragglers"]
    # What it did meanwhile: the slow step, in Python.
    top = slow["doing"][0]
    assert (top["operation"], top["category"]) == ("simulate", "Python"), slow["doing"]
    assert top["time_us"] / 1e6 >= 0.8 * COLLECTIVES * SLOW_S, slow["doing"]
    # Rank 0's time in the collectives is mostly waiting for rank 1.
    summary = {s["rank"]: s for s in doc["ranks"]}
    assert summary[0]["collectives"]["waiting_us"] >= 0.8 * slow["others_waited_us"], summary
    assert summary[0]["collectives"]["count"] == COLLECTIVES + 1


def shift_to_another_host(path, host, monotonic_ns, wall_error_ns):
    """Rewrites a trace as if recorded on `host`, whose CLOCK_MONOTONIC is `monotonic_ns` ahead of
    this one's and whose wall clock (NTP) is `wall_error_ns` off."""
    db = sqlite3.connect(path)
    tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    for t in tables:
        columns = [r[1] for r in db.execute(f"PRAGMA table_info({t})")]
        moved = [c for c in ("start", "end") if c in columns]
        if moved:  # rlscope_processes: 0 is unknown
            db.execute(f"UPDATE {t} SET " + ", ".join(
                f'"{c}" = CASE WHEN "{c}" = 0 AND \'{t}\' = \'rlscope_processes\' THEN 0 '
                f'ELSE "{c}" + {monotonic_ns} END' for c in moved))
    db.execute("UPDATE rlscope_meta SET value = CAST(value AS INTEGER) + ? "
               "WHERE key = 'start_monotonic_ns'", (monotonic_ns,))
    db.execute("UPDATE rlscope_meta SET value = CAST(value AS INTEGER) + ? "
               "WHERE key = 'start_wall_ns'", (wall_error_ns,))
    db.execute("UPDATE rlscope_meta SET value = ? WHERE key = 'host'", (host,))
    db.execute("UPDATE rlscope_process_identity SET host = ?", (host,))
    db.commit()
    db.close()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_two_nodes_merge_onto_one_clock(build, write_script, tmp_path):
    """Two 'nodes' (torchrun --nnodes 2, one rank each), each under its own rlscope-prof; the second
    node's trace is rewritten as another host's (monotonic clock 1000 s ahead, wall clock 5 ms
    off). rlscope merge puts it back on the first one's clock from their collectives. The ranks
    sleep rather than spin between collectives: with more busy threads than this machine's two
    cores, a rank sees a collective complete a scheduler period (about 1.2 ms here) late, and no
    clock alignment from completions is better than that (docs/user-guide.md)."""
    worker = write_script(
        f"""
        import time
        import rlscope
        import torch
        import torch.distributed as dist

        dist.init_process_group("gloo")
        rank = dist.get_rank()
        x = torch.ones(1000)
        for step in range(4 * {COLLECTIVES}):
            with rlscope.operation("simulate"):
                time.sleep(0.004 if rank == 1 else 0.001)
            dist.all_reduce(x)
        dist.destroy_process_group()
        """,
        "worker.py",
    )
    port = free_port()
    env = child_environment([build.modules_dir])
    nodes = []
    for node in (0, 1):
        trace = tmp_path / f"node{node}.sqlite"
        command = [str(build.prof), "-q", "-o", str(trace), "--", sys.executable, "-m",
                   "torch.distributed.run", "--nnodes", "2", "--node-rank", str(node),
                   "--nproc-per-node", "1", "--master-addr", "127.0.0.1",
                   "--master-port", str(port), str(worker)]
        nodes.append((trace, subprocess.Popen(command, cwd=tmp_path, env=env, text=True,
                                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)))
    for trace, proc in nodes:
        out, err = proc.communicate(timeout=180)
        assert proc.returncode == 0, err

    ahead, wall_error = 1000 * 10**9 + 123457, 5 * 10**6
    shift_to_another_host(nodes[1][0], "node1", ahead, wall_error)
    rlscope = str(build.root / "bin" / "rlscope")

    def merge(*options):
        out = tmp_path / "job.sqlite"
        r = subprocess.run([rlscope, "merge", str(nodes[0][0]), str(nodes[1][0]), "-o", str(out),
                            *options], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        db = sqlite3.connect(out)
        merged = json.loads(db.execute(
            "SELECT value FROM rlscope_meta WHERE key = 'merged_traces'").fetchone()[0])
        hosts = db.execute("SELECT DISTINCT host FROM rlscope_process_identity WHERE rank IS NOT "
                           "NULL ORDER BY rank").fetchall()
        db.close()
        return out, merged[1], hosts, r.stdout

    # The wall clocks alone: off by the injected NTP error (to the few ns between the two
    # rlscope-prof's readings of their wall and monotonic clocks).
    _, wall, _, _ = merge("--align", "wall-clock")
    assert wall["method"] == "wall clock"
    assert abs(wall["offset_ns"] - (-ahead + wall_error)) < 1000, wall

    job, aligned, hosts, stdout = merge()
    assert aligned["method"] == "collectives", stdout
    assert aligned["collectives"] >= 4 * COLLECTIVES
    error_us = (aligned["offset_ns"] + ahead) / 1000
    assert abs(error_us) <= 50, f"aligned to {error_us:.1f} µs: {stdout}"
    assert len(hosts) == 2 and hosts[1] == ("node1",), hosts

    analyze = subprocess.run([rlscope, "analyze", "--by", "rank", "--format", "json", str(job)],
                             capture_output=True, text=True, timeout=120)
    assert analyze.returncode == 0, analyze.stderr
    doc = json.loads(analyze.stdout)
    assert [r["host"] for r in doc["ranks"]][1] == "node1"
    assert doc["collectives"]["matched"] == 4 * COLLECTIVES
    slow = {s["rank"]: s for s in doc["stragglers"]}[1]
    assert slow["collectives_last"] >= 4 * COLLECTIVES - 2, doc["stragglers"]
