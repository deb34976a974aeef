"""A real torch.distributed job (torchrun, gloo, two ranks) under rlscope-prof: each rank's identity
is recorded, and `rlscope analyze --by rank` finds the rank that a slow step holds back."""

import json
import subprocess

import pytest

torch = pytest.importorskip("torch", reason="torch is not in this environment (setup.sh --bench)")

COLLECTIVES = 10
SLOW_S = 0.03  # rank 1's extra work before every all_reduce


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
