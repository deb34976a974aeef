"""Ray under rlscope-prof: `ray.init()` in the profiled program starts Ray's daemons and workers,
and every one of them is a process of the trace; the actors' numpy work is Backend time in the
processes the raylet started (launcher `ray`)."""

import json
import subprocess

import pytest

pytest.importorskip("ray", reason="ray is not in this environment (pip install ray)")


def test_ray_actors_are_processes_of_the_trace(build, run_traced, tmp_path):
    r = run_traced(
        """
        import time

        import numpy as np
        import ray
        import rlscope

        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)

        @ray.remote
        class Learner:
            def work(self, n):
                a = np.random.rand(200, 200)
                for _ in range(n):
                    a = a @ a
                    a /= np.linalg.norm(a)
                return float(a.sum())

        learners = [Learner.options(name=f"learner{i}").remote() for i in range(2)]
        with rlscope.operation("rollouts"):
            for _ in range(3):
                ray.get([learner.work.remote(40) for learner in learners])
        # ray.shutdown() kills the workers (SIGKILL): what they did after their last flush
        # (--flush-ms, 100 ms) is lost. Leave them time to flush it.
        time.sleep(0.5)
        ray.shutdown()
        """,
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
        """
        import time

        import numpy as np
        import ray
        from ray.cluster_utils import Cluster
        import rlscope

        cluster = Cluster(initialize_head=True,
                          head_node_args={"num_cpus": 1, "resources": {"node0": 1},
                                          "include_dashboard": False})
        cluster.add_node(num_cpus=1, resources={"node1": 1})
        ray.init(address=cluster.address, log_to_driver=False)

        @ray.remote(num_cpus=1)
        class Learner:
            def work(self, n):
                a = np.random.rand(200, 200)
                for _ in range(n):
                    a = a @ a
                    a /= np.linalg.norm(a)
                return float(a.sum())

        learners = [Learner.options(resources={f"node{i}": 1}).remote() for i in range(2)]
        with rlscope.operation("rollouts"):
            ray.get([learner.work.remote(30) for learner in learners])
        time.sleep(0.5)  # the workers' last flush before Ray kills them (see above)
        ray.shutdown()
        cluster.shutdown()
        """,
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
