"""Started by rlscope-prof's sitecustomize in every Python process of a profiled run: turns on
Python <-> native transition tracking (unless rlscope-prof ran with --no-python)."""

import os
import sys
import threading

# Native code of these top-level modules (and their submodules) is Backend / Simulator time.
DEFAULT_BACKEND_MODULES = ("torch", "tensorflow", "jax", "jaxlib", "numpy")
DEFAULT_SIMULATOR_MODULES = ("mujoco", "pybullet", "Box2D", "ale_py")
# Native calls in which a thread waits rather than computes: recorded as Waiting, not CPU time.
# What RL code blocks in: sleeps; lock, condition, event and queue waits (threading and queue
# end in a lock acquire, multiprocessing's queues in a SemLock and a pipe); pipe reads
# (multiprocessing.Connection.recv, so SubprocVecEnv workers and their learner); select/poll
# (Connection.poll, subprocess.communicate, selectors); process waits; socket receives; a
# torch.distributed collective's completion (Work.wait: blocks until every rank took part).
WAITING_FUNCTIONS = (
    "time.sleep",
    "select.select",
    "select.poll.poll",
    "select.epoll.poll",
    "_thread.lock.acquire",
    "_thread.lock.acquire_lock",
    "_thread.RLock.acquire",
    "posix.waitpid",
    "posix.waitid",
    "posix.wait",
    "posix.wait3",
    "posix.wait4",
    "posix.read",
    "posix.readv",
    "signal.pause",
    "signal.sigwait",
    "signal.sigtimedwait",
    "signal.sigwaitinfo",
    "_socket.socket.recv",
    "_socket.socket.recv_into",
    "_socket.socket.recvfrom",
    "_socket.socket.recvfrom_into",
    "_socket.socket.recvmsg",
    "_socket.socket.accept",
    "_queue.SimpleQueue.get",
    "_multiprocessing.SemLock.acquire",
    "torch._C._distributed_c10d.wait",
)


def _modules(variable, defaults):
    """The modules rlscope-prof passed: "+a,b" adds a and b to the defaults, "a,b" replaces them."""
    value = os.environ.get(variable, "+")
    extend = value.startswith("+")
    named = [m.strip() for m in value.lstrip("+").split(",") if m.strip()]
    return (list(defaults) if extend else []) + named


BACKEND, SIMULATOR = 2, 3  # rlscope_cpu_intervals.category


class _InstrumentOnImport:
    """A meta path finder that lets every other finder find the module, then has its loader
    hook the module's native callables and operators once it has run (native_hooks.cpp): the
    profile function alone does not see calls of numpy's ufuncs or ndarray operators."""

    def __init__(self, categories):
        self.categories = categories  # top-level module name -> category

    def find_spec(self, fullname, path, target=None):
        category = self.categories.get(fullname.partition(".")[0])
        if category is None:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        # Loaders that are classes (built-in, frozen modules) are shared: left alone.
        if loader is None or isinstance(loader, type) or not hasattr(loader, "exec_module"):
            return spec
        exec_module = loader.exec_module

        def exec_and_instrument(module):
            exec_module(module)
            _instrument(module, category)

        loader.exec_module = exec_and_instrument
        return spec


def _instrument(module, category):
    from . import _rlscope

    try:
        _rlscope._instrument(module, category)
    except Exception as error:  # never break the import of the program's module
        print(f"rlscope: warning: {module.__name__} is not instrumented: {error}", file=sys.stderr)


def start():
    from . import _rlscope

    if not _rlscope.tracking_available():
        return False
    backend = _modules("RLSCOPE_BACKEND_MODULES", DEFAULT_BACKEND_MODULES)
    simulator = _modules("RLSCOPE_SIMULATOR_MODULES", DEFAULT_SIMULATOR_MODULES)
    started = _rlscope.start_tracking(backend, simulator, list(WAITING_FUNCTIONS))
    if started:
        # sys.monitoring (Python 3.12+) tracks every thread; a profile function needs each new
        # thread bootstrapped (and setprofile would re-instrument all code at every thread start).
        if getattr(_rlscope, "_tracker", "profile") == "profile":
            threading.setprofile(_rlscope._thread_bootstrap)
        os.register_at_fork(after_in_child=_rlscope._after_fork_child)
        categories = {m.partition(".")[0]: BACKEND for m in backend}
        categories.update({m.partition(".")[0]: SIMULATOR for m in simulator})
        for name, module in list(sys.modules.items()):  # imported before rlscope started
            category = categories.get(name.partition(".")[0])
            if category is not None and module is not None:
                _instrument(module, category)
        sys.meta_path.insert(0, _InstrumentOnImport(categories))
    return started


def start_or_warn():
    """start(), with one warning line instead of an exception."""
    try:
        return start()
    except ImportError as error:
        print(
            f"rlscope: warning: Python categories are not recorded in this process: the rlscope "
            f"package cannot be loaded by Python {sys.version.split()[0]} ({error})",
            file=sys.stderr,
        )
    except Exception as error:  # never break the program being profiled
        print(f"rlscope: warning: Python categories are not recorded: {error}", file=sys.stderr)
    return False
