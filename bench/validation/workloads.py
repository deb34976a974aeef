#!/usr/bin/env python3
"""Real RL workloads for validating rlscope's overhead correction (bench/validation/README.md).

    python bench/validation/workloads.py NAME [--scale X] [--seed N]
    python bench/validation/workloads.py --list          # name, requirements, one per line
    python bench/validation/workloads.py --check NAME    # "ok", or the first missing package

Each workload is one script run in one of two modes, with the same code:

- annotated (the default): the algorithm's functions run inside `rlscope.operation(...)`; under
  `rlscope-prof` they are recorded, run alone they are no-ops (rlscope's package must be
  importable: `build/python` on PYTHONPATH; rlscope-prof adds it itself).
- plain (`RLSCOPE_VALIDATION_PLAIN=out.json` in the environment): `rlscope` is replaced by a
  stand-in whose `operation` accumulates `time.perf_counter_ns()` per operation name, and at exit
  writes `{"total_ns": ..., "operations": {name: ns}}` to out.json.

An operation's time is its *own* time, as in rlscope's analysis (docs/analysis.md, "The sweep":
for nested operations the innermost owns each instant): time inside a nested operation counts
for the nested one only. It is wall time, waiting included.

The Stable-Baselines3 workloads are stock SB3; the operations are added from outside:
`simulation` is the vectorised environment's `step` (a VecEnvWrapper), `inference` the policy's
forward pass while collecting experience (`policy.forward` and `policy.predict_values` for the
on-policy algorithms, `policy.predict` for the off-policy ones), `backpropagation` the
algorithm's `train()` (sampling minibatches, losses, gradients, optimiser steps, target updates).
torch runs on the CPU with one thread; seeds and step counts are fixed.
"""

import argparse
import atexit
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PLAIN_ENV = "RLSCOPE_VALIDATION_PLAIN"


# --- The plain-timer stand-in for rlscope ------------------------------------------------------


class _PlainTimer:
    """Own time per operation name: the innermost open operation is charged for each instant.
    Also counts each name's instances and the operations opened directly inside it, and measures
    its own cost per operation, so that validate.py can tell the rows whose time this timer
    itself distorts."""

    OUTSIDE = "(outside operations)"

    def __init__(self):
        self.stack = []
        self.totals = {}
        self.instances = {}
        self.children = {}
        self.start = time.perf_counter_ns()
        self.last = self.start

    def push(self, name):
        now = time.perf_counter_ns()
        if self.stack:
            top = self.stack[-1]
            self.totals[top] = self.totals.get(top, 0) + now - self.last
        parent = self.stack[-1] if self.stack else self.OUTSIDE
        self.children[parent] = self.children.get(parent, 0) + 1
        self.instances[name] = self.instances.get(name, 0) + 1
        self.stack.append(name)
        self.last = now

    def pop(self):
        now = time.perf_counter_ns()
        name = self.stack.pop()
        self.totals[name] = self.totals.get(name, 0) + now - self.last
        self.last = now

    def own_cost(self, n=20000):
        """What one operation costs this timer (enter + exit through the stand-in's context
        manager, ns), and how much of it lands inside the operation: the best of 5 loops of empty
        operations against 5 bare loops. `workloads.py --timer-cost` prints it; it is measured
        apart from the timed runs, whose wall time it would lengthen."""
        op = _plain_module(self).operation("(timer)")
        inside, total = [], []
        for _ in range(5):
            t = time.perf_counter_ns()
            for _ in range(n):
                pass
            bare = time.perf_counter_ns() - t
            self.totals["(timer)"] = 0
            t = time.perf_counter_ns()
            for _ in range(n):
                with op:
                    pass
            total.append((time.perf_counter_ns() - t - bare) / n)
            inside.append(self.totals["(timer)"] / n)
        return {"inside_ns": min(inside), "total_ns": min(total)}

    def write(self, path, pid):
        if os.getpid() != pid:  # a forked child that ran atexit handlers: not ours to write
            return
        doc = {"total_ns": time.perf_counter_ns() - self.start, "operations": self.totals,
               "instances": self.instances, "children": self.children}
        with open(path + ".tmp", "w") as f:
            json.dump(doc, f)
        os.replace(path + ".tmp", path)


def _plain_module(timer):
    """A module with rlscope's annotation API whose operations are timed by `timer`."""
    import contextlib
    import types

    class operation(contextlib.ContextDecorator):
        __slots__ = ("name",)

        def __init__(self, name):
            self.name = name

        def __enter__(self):
            timer.push(self.name)
            return self

        def __exit__(self, *exc):
            timer.pop()
            return False

    module = types.ModuleType("rlscope")
    module.operation = operation
    module.set_phase = lambda name: None
    module.report_progress = lambda step, total=None: None
    module.enabled = lambda: False
    module.__file__ = __file__
    return module


def install_rlscope():
    """Returns the `rlscope` module the workload uses: the real one, or the plain stand-in."""
    path = os.environ.get(PLAIN_ENV)
    if path:
        timer = _PlainTimer()
        module = _plain_module(timer)
        sys.modules["rlscope"] = module
        atexit.register(timer.write, path, os.getpid())
        return module
    try:
        import rlscope
    except ImportError:
        sys.exit(
            "workloads.py: the rlscope package cannot be imported: put build/python on "
            f"PYTHONPATH, or set {PLAIN_ENV} for the plain mode"
        )
    return rlscope


# --- Stable-Baselines3 workloads ---------------------------------------------------------------


def _wrap(obj, attribute, name, rlscope):
    """Replaces obj.attribute (a bound method) with one that runs inside operation `name`."""
    original = getattr(obj, attribute)
    op = rlscope.operation

    def wrapped(*args, **kwargs):
        with op(name):
            return original(*args, **kwargs)

    # nn.Module.__setattr__ stores plain functions in the instance dict, which attribute lookup
    # (and so nn.Module.__call__'s self.forward) finds before the class's method.
    setattr(obj, attribute, wrapped)


def _simulation_wrapper(venv, rlscope):
    """venv with `step` (step_async + step_wait, auto-resets included) inside "simulation"."""
    from stable_baselines3.common.vec_env import VecEnvWrapper

    op = rlscope.operation

    class SimulationOperation(VecEnvWrapper):
        def reset(self):
            return self.venv.reset()

        def step_async(self, actions):
            self.venv.step_async(actions)

        def step_wait(self):
            return self.venv.step_wait()

        def step(self, actions):
            with op("simulation"):
                self.venv.step_async(actions)
                return self.venv.step_wait()

    return SimulationOperation(venv)


def _sb3_setup(seed):
    import torch

    torch.set_num_threads(1)
    torch.manual_seed(seed)


def _make_env(env_id, n_envs, seed, subproc=False):
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import SubprocVecEnv

    kwargs = {}
    if subproc:
        kwargs = {"vec_env_cls": SubprocVecEnv, "vec_env_kwargs": {"start_method": "forkserver"}}
    return make_vec_env(env_id, n_envs=n_envs, seed=seed, **kwargs)


def _annotate_on_policy(model, rlscope):
    _wrap(model.policy, "forward", "inference", rlscope)
    _wrap(model.policy, "predict_values", "inference", rlscope)
    _wrap(model, "train", "backpropagation", rlscope)


def _annotate_off_policy(model, rlscope):
    _wrap(model.policy, "predict", "inference", rlscope)
    _wrap(model, "train", "backpropagation", rlscope)


def _learn(model, timesteps, venv, name):
    start = time.perf_counter()
    model.learn(total_timesteps=timesteps, progress_bar=False)
    elapsed = time.perf_counter() - start
    venv.close()
    print(f"{name}: {model.num_timesteps} steps in {elapsed:.2f} s", flush=True)


def sb3_ppo_hopper(args, rlscope):
    """PPO (SB3 defaults: 2048 steps per rollout, 10 epochs of 64-sample minibatches), Hopper-v5."""
    from stable_baselines3 import PPO

    _sb3_setup(args.seed)
    venv = _simulation_wrapper(_make_env("Hopper-v5", 1, args.seed), rlscope)
    model = PPO("MlpPolicy", venv, seed=args.seed, device="cpu", verbose=0)
    _annotate_on_policy(model, rlscope)
    _learn(model, int(2048 * 4 * args.scale), venv, "sb3_ppo_hopper")


def sb3_ppo_subproc(args, rlscope):
    """PPO on Hopper-v5 in 2 SubprocVecEnv workers (1024 steps each per rollout)."""
    from stable_baselines3 import PPO

    _sb3_setup(args.seed)
    venv = _simulation_wrapper(_make_env("Hopper-v5", 2, args.seed, subproc=True), rlscope)
    model = PPO("MlpPolicy", venv, n_steps=1024, seed=args.seed, device="cpu", verbose=0)
    _annotate_on_policy(model, rlscope)
    _learn(model, int(2048 * 4 * args.scale), venv, "sb3_ppo_subproc")


def sb3_a2c_cartpole(args, rlscope):
    """A2C (SB3 defaults: 5 steps per update) on CartPole-v1, 4 environments in one process."""
    from stable_baselines3 import A2C

    _sb3_setup(args.seed)
    venv = _simulation_wrapper(_make_env("CartPole-v1", 4, args.seed), rlscope)
    model = A2C("MlpPolicy", venv, seed=args.seed, device="cpu", verbose=0)
    _annotate_on_policy(model, rlscope)
    _learn(model, int(20000 * args.scale), venv, "sb3_a2c_cartpole")


def sb3_sac_pendulum(args, rlscope):
    """SAC (SB3 defaults: one 256-sample gradient step per environment step) on Pendulum-v1."""
    from stable_baselines3 import SAC

    _sb3_setup(args.seed)
    venv = _simulation_wrapper(_make_env("Pendulum-v1", 1, args.seed), rlscope)
    model = SAC("MlpPolicy", venv, learning_starts=500, seed=args.seed, device="cpu", verbose=0)
    _annotate_off_policy(model, rlscope)
    _learn(model, int(1000 * args.scale), venv, "sb3_sac_pendulum")


def sb3_dqn_cartpole(args, rlscope):
    """DQN (SB3 defaults: a 32-sample gradient step every 4 environment steps) on CartPole-v1."""
    from stable_baselines3 import DQN

    _sb3_setup(args.seed)
    venv = _simulation_wrapper(_make_env("CartPole-v1", 1, args.seed), rlscope)
    model = DQN("MlpPolicy", venv, learning_starts=1000, seed=args.seed, device="cpu", verbose=0)
    _annotate_off_policy(model, rlscope)
    _learn(model, int(20000 * args.scale), venv, "sb3_dqn_cartpole")


# --- The bundled samples -----------------------------------------------------------------------


def sample_ppo(args, rlscope):
    """samples/python_rl/ppo.py: PPO in numpy on Hopper-v5, annotated by the sample itself."""
    import runpy

    sample = os.path.join(ROOT, "samples", "python_rl")
    sys.path.insert(0, sample)
    iterations = max(1, round(30 * args.scale))
    sys.argv = [os.path.join(sample, "ppo.py"), "--iterations", str(iterations), "--quiet",
                "--seed", str(args.seed), "--env", "hopper"]
    runpy.run_path(sys.argv[0], run_name="__main__")


# name: (function, packages it needs)
WORKLOADS = {
    "sb3_ppo_hopper": (sb3_ppo_hopper, ["torch", "stable_baselines3", "gymnasium", "mujoco"]),
    "sb3_a2c_cartpole": (sb3_a2c_cartpole, ["torch", "stable_baselines3", "gymnasium"]),
    "sb3_sac_pendulum": (sb3_sac_pendulum, ["torch", "stable_baselines3", "gymnasium"]),
    "sb3_dqn_cartpole": (sb3_dqn_cartpole, ["torch", "stable_baselines3", "gymnasium"]),
    "sb3_ppo_subproc": (sb3_ppo_subproc, ["torch", "stable_baselines3", "gymnasium", "mujoco"]),
    "sample_ppo": (sample_ppo, ["numpy", "gymnasium", "mujoco"]),
}


def missing_package(name):
    """The first package workload `name` needs that cannot be imported, or None."""
    import importlib.util

    for package in WORKLOADS[name][1]:
        if importlib.util.find_spec(package) is None:
            return package
    return None


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("workload", nargs="?", choices=sorted(WORKLOADS))
    p.add_argument("--scale", type=float, default=1.0,
                   help="multiplies the workload's step count (default 1: about 5-15 s)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--list", action="store_true", help="print the workloads and exit")
    p.add_argument("--check", metavar="NAME", choices=sorted(WORKLOADS),
                   help='print "ok" or the first missing package of workload NAME, and exit')
    p.add_argument("--timer-cost", action="store_true",
                   help="print the plain timer's own cost per operation (JSON) and exit")
    a = p.parse_args()
    if a.timer_cost:
        print(json.dumps(_PlainTimer().own_cost()))
        return
    if a.list:
        for name, (_, packages) in WORKLOADS.items():
            print(name, " ".join(packages))
        return
    if a.check:
        print(missing_package(a.check) or "ok")
        return
    if not a.workload:
        p.error("a workload name is required")
    rlscope = install_rlscope()
    WORKLOADS[a.workload][0](a, rlscope)


if __name__ == "__main__":
    main()
