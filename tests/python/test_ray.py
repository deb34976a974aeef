"""Ray under rlscope-prof: `ray.init()` in the profiled program starts Ray's daemons and workers,
and every one of them is a process of the trace; the actors' numpy work is Backend time in the
processes the raylet started (launcher `ray`). Also a cluster of two nodes on one machine, and one
of two hosts (simulated with namespaces) merged onto one clock."""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from conftest import BACKEND, PYTHON, Trace, child_environment
from hosts import two_hosts

pytest.importorskip("ray", reason="ray is not in this environment (pip install ray)")

# The actor every test's program runs: numpy matrix products, Backend time in its process.
LEARNER = textwrap.dedent(
    """
    import time

    import numpy as np
    import ray
    import rlscope


    @ray.remote(num_cpus=1)
    class Learner:
        def work(self, n):
            a = np.random.rand(200, 200)
            for _ in range(n):
                a = a @ a
                a /= np.linalg.norm(a)
            return float(a.sum())
    """
)


def test_ray_actors_are_processes_of_the_trace(build, run_traced, tmp_path):
    r = run_traced(
        LEARNER
        + textwrap.dedent(
            """
            ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
            learners = [Learner.options(name=f"learner{i}").remote() for i in range(2)]
            with rlscope.operation("rollouts"):
                for _ in range(3):
                    ray.get([learner.work.remote(40) for learner in learners])
            # ray.shutdown() kills the workers (SIGKILL): what they did after their last flush
            # (--flush-ms, 25 ms) is lost. Leave them time to flush it.
            time.sleep(0.5)
            ray.shutdown()
            """
        ),
        timeout=240,
    )
    t = r.trace
    names = {row[0] for row in t.query("SELECT name FROM rlscope_processes")}
    assert {"raylet", "gcs_server"} <= names, names
    # The actors' processes: started by the raylet, their matrix products recorded as Backend.
    matmul = t.query(
        "SELECT i.launcher, COUNT(*), SUM(c.end - c.start) FROM rlscope_cpu_intervals c "
        "JOIN StringIds s ON s.id = c.nameId "
        "JOIN rlscope_process_identity i ON i.globalPid = (c.globalTid >> 24) << 24 "
        "WHERE s.value = 'numpy.ndarray.__matmul__' AND c.category = 2 "
        "GROUP BY (c.globalTid >> 24)"
    )
    assert len(matmul) == 2, matmul
    for launcher, calls, _ in matmul:
        assert launcher == "ray" and calls == 3 * 40, matmul
    # Ray renames a worker after its actor once it is one (setproctitle): the trace names it so.
    actors = t.query(
        "SELECT p.name FROM rlscope_processes p WHERE p.globalPid IN "
        "(SELECT DISTINCT (c.globalTid >> 24) << 24 FROM rlscope_cpu_intervals c "
        "JOIN StringIds s ON s.id = c.nameId WHERE s.value = 'numpy.ndarray.__matmul__')"
    )
    assert sorted(name for (name,) in actors) == ["ray::Learner", "ray::Learner"], actors
    # The driver's operation spans the actors' work.
    assert t.scalar(
        "SELECT COUNT(*) FROM rlscope_operations o JOIN StringIds s ON s.id = o.nameId "
        "WHERE s.value = 'rollouts'") == 1
    info = subprocess.run([str(build.root / "bin" / "rlscope"), "info", "--format", "json",
                           str(tmp_path / "trace1.sqlite")], capture_output=True, text=True)
    assert info.returncode == 0, info.stderr
    launchers = [p["launcher"] for p in json.loads(info.stdout)["processes"]]
    assert launchers.count("ray") >= 2, launchers


def test_ray_cluster_nodes_and_their_workers(build, run_traced):
    """Several Ray nodes on one machine (`ray.cluster_utils.Cluster`: a head and a second node,
    each its own raylet): every raylet and every worker is a process of the trace, and each actor's
    worker is recorded with the raylet that started it (RAY_RAYLET_PID among its launcher
    variables), so that the trace says which node each actor ran on."""
    r = run_traced(
        LEARNER
        + textwrap.dedent(
            """
            from ray.cluster_utils import Cluster

            cluster = Cluster(initialize_head=True,
                              head_node_args={"num_cpus": 1, "resources": {"node0": 1},
                                              "include_dashboard": False})
            cluster.add_node(num_cpus=1, resources={"node1": 1})
            ray.init(address=cluster.address, log_to_driver=False)
            learners = [Learner.options(resources={f"node{i}": 1}).remote() for i in range(2)]
            with rlscope.operation("rollouts"):
                ray.get([learner.work.remote(30) for learner in learners])
            time.sleep(0.5)  # the workers' last flush before Ray kills them (see above)
            ray.shutdown()
            cluster.shutdown()
            """
        ),
        timeout=240,
    )
    t = r.trace
    raylets = {pid for (pid,) in t.query("SELECT pid FROM rlscope_processes WHERE name = 'raylet'")}
    assert len(raylets) == 2, raylets
    workers = t.query(
        "SELECT i.variables, COUNT(*) FROM rlscope_cpu_intervals c "
        "JOIN StringIds s ON s.id = c.nameId "
        "JOIN rlscope_process_identity i ON i.globalPid = (c.globalTid >> 24) << 24 "
        "WHERE s.value = 'numpy.ndarray.__matmul__' AND c.category = 2 "
        "GROUP BY (c.globalTid >> 24)"
    )
    assert len(workers) == 2, workers
    started_by = {int(json.loads(variables)["RAY_RAYLET_PID"]) for variables, _ in workers}
    assert started_by == raylets, (started_by, raylets)  # one actor on each node
    assert all(calls == 30 for _, calls in workers), workers


AHEAD_NS = 5_123_457  # the second host's CLOCK_MONOTONIC ahead of the first's


@pytest.fixture
def hosts(tmp_path):
    yield from two_hosts(tmp_path, AHEAD_NS)


def wait_for_text(path, text, process, timeout_s=90):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if text in path.read_text(errors="replace"):
            return
        assert process.poll() is None, path.read_text(errors="replace")
        time.sleep(0.2)
    raise AssertionError(f"no {text!r} in {path} after {timeout_s} s: {path.read_text()[-2000:]}")


def run_cluster(build, tmp_path, hosts, env, nodes):
    """Starts each host's Ray node under its own rlscope-prof (appended to `nodes`), runs the
    driver on the first host under a third, then stops the nodes (SIGTERM, which rlscope-prof
    passes on to `ray start`); returns the three traces."""
    host_a, _ = hosts
    ray_bin = Path(sys.executable).with_name("ray")
    clock = f"{host_a.address}:29612"
    for host, start in (
            (host_a, ["--head", "--port", "6379", "--include-dashboard", "false"]),
            (hosts[1], ["--address", f"{host_a.address}:6379"])):
        out = tmp_path / host.name
        out.mkdir()
        log = tmp_path / f"{host.name}.log"
        prof = [build.prof, "--job", "cluster", "-o", out, "--clock-sync", clock, "--",
                ray_bin, "start", "--block", "--node-ip-address", host.address,
                "--num-cpus", "1", "--resources", json.dumps({host.name: 1}), *start]
        with open(log, "w") as f:
            nodes.append((log, subprocess.Popen(host.command(prof), env=env, stdout=f,
                                                stderr=subprocess.STDOUT,
                                                start_new_session=True)))
        wait_for_text(log, "Ray runtime started", nodes[-1][1])

    driver = tmp_path / "driver.py"
    driver.write_text(LEARNER + textwrap.dedent(
        f"""
        ray.init(address="{host_a.address}:6379", log_to_driver=False)
        learners = [Learner.options(resources={{h: 1}}).remote() for h in ("hosta", "hostb")]
        ray.get([learner.work.remote(1) for learner in learners])  # both started
        with rlscope.operation("rollouts"):
            ray.get([learner.work.remote(30) for learner in learners])
        time.sleep(0.5)  # the workers' last flush before Ray kills them
        """))
    driver_trace = tmp_path / "driver.sqlite"
    r = subprocess.run(host_a.command([build.prof, "-q", "-o", driver_trace, "--", sys.executable,
                                       driver]), env=env, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    for log, process in reversed(nodes):
        process.terminate()
        process.wait(timeout=60)  # `ray start` exits 1 on SIGTERM
        assert "rlscope-prof: trace written to" in log.read_text(), log.read_text()[-3000:]
    assert "clock measured against" in (tmp_path / "hostb.log").read_text()
    return [tmp_path / "hosta" / "cluster.hosta.sqlite",
            tmp_path / "hostb" / "cluster.hostb.sqlite", driver_trace]


def test_ray_cluster_across_hosts_merges_onto_one_clock(build, tmp_path, hosts):
    """A Ray cluster of two hosts (simulated: network, UTS and time namespaces, the second host's
    clock 5.123 ms ahead), each node's `ray start --block` under its own rlscope-prof --job
    --clock-sync, as the user guide says a cluster is profiled; a driver on the head host under a
    third. `rlscope merge` of the three traces: the second host aligned by the clock exchange
    within 50 µs, each actor's numpy work on the host whose raylet started it, and inside the
    driver's operation on the merged clock."""
    # Ray's files of this cluster apart (its sockets' paths must stay short): a later ray.init()
    # would otherwise find the cluster in /tmp/ray/ray_current_cluster and join it.
    ray_dir = tempfile.mkdtemp(prefix="rlsray")
    env = child_environment([build.modules_dir],
                            {"RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0",
                             "RAY_TMPDIR": ray_dir,
                             # SIGTERM ends a node now, not after Ray's 30 s drain.
                             "RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S": "0"})
    nodes = []
    try:
        traces = run_cluster(build, tmp_path, hosts, env, nodes)
    finally:  # a failed test leaves no node running (each in a session of its own)
        for _, process in nodes:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
        shutil.rmtree(ray_dir, ignore_errors=True)

    job = tmp_path / "job.sqlite"
    merge = subprocess.run([str(build.root / "bin" / "rlscope"), "merge", *traces, "-o", job],
                           capture_output=True, text=True, timeout=120)
    assert merge.returncode == 0, merge.stderr
    t = Trace(job)
    merged = json.loads(t.meta("merged_traces"))
    assert [m["method"] for m in merged] == ["reference", "clock exchange", "same host"], merged
    assert abs(merged[1]["offset_ns"] + AHEAD_NS) <= 50_000, merged

    hosts_of_raylets = t.query(
        "SELECT i.host FROM rlscope_processes p JOIN rlscope_process_identity i "
        "ON i.globalPid = p.globalPid WHERE p.name = 'raylet' ORDER BY i.host")
    assert hosts_of_raylets == [("hosta",), ("hostb",)], hosts_of_raylets
    rollouts = t.query("SELECT o.start, o.end FROM rlscope_operations o "
                       "JOIN StringIds s ON s.id = o.nameId WHERE s.value = 'rollouts'")
    assert len(rollouts) == 1, rollouts
    work = t.query(
        "SELECT i.host, COUNT(*), MIN(c.start), MAX(c.end) FROM rlscope_cpu_intervals c "
        "JOIN StringIds s ON s.id = c.nameId "
        "JOIN rlscope_process_identity i ON i.globalPid = (c.globalTid >> 24) << 24 "
        "WHERE s.value = 'numpy.ndarray.__matmul__' AND c.category = 2 GROUP BY i.host "
        "ORDER BY i.host")
    assert [(h, n) for h, n, _, _ in work] == [("hosta", 31), ("hostb", 31)], work
    # The 30 products of each host inside the driver's operation: its last product ends after
    # the operation started and before it ended, on the merged clock.
    start, end = rollouts[0]
    for host, _, _, last in work:
        assert start < last <= end, (host, start, last, end)
    t.close()


def test_rllib_ppo_runs_profiled(build, run_traced):
    """RLlib's PPO (new API stack) on CartPole with one env runner actor: the driver's training
    iterations are operations, and the env runner's process, started by the raylet, has its
    environment stepping as Python time and its torch inference as Backend time. Skipped where
    RLlib or torch is not installed (`pip install "ray[rllib]"` beside torch: setup.sh --bench)."""
    pytest.importorskip("ray.rllib", reason="RLlib is not installed (setup.sh --bench)")
    pytest.importorskip("torch", reason="torch is not installed (setup.sh --bench)")
    r = run_traced(
        """
        import time

        import ray
        from ray.rllib.algorithms.ppo import PPOConfig
        import rlscope

        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        config = (PPOConfig()
                  .environment("CartPole-v1")
                  .env_runners(num_env_runners=1, rollout_fragment_length=200)
                  .training(train_batch_size_per_learner=400, minibatch_size=100, num_epochs=2)
                  .learners(num_learners=0))
        algo = config.build_algo()
        for _ in range(2):
            with rlscope.operation("train_iteration"):
                result = algo.train()
        assert result["env_runners"]["num_env_steps_sampled_lifetime"] >= 800, result
        algo.stop()
        time.sleep(0.5)  # the workers' last flush before Ray kills them
        ray.shutdown()
        """,
        env={"RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0"},
        timeout=240,
    )
    t = r.trace
    assert len(t.operations("train_iteration")) == 2
    runner = t.query(
        "SELECT c.category, COUNT(*) FROM rlscope_cpu_intervals c "
        "JOIN rlscope_processes p ON p.globalPid = (c.globalTid >> 24) << 24 "
        "JOIN rlscope_process_identity i ON i.globalPid = p.globalPid "
        "WHERE p.name = 'ray::SingleAgentEnvRunner' AND i.launcher = 'ray' GROUP BY c.category")
    counts = dict(runner)
    assert counts.get(PYTHON, 0) > 1000 and counts.get(BACKEND, 0) > 1000, counts
