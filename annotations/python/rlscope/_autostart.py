"""Started by rlscope-prof's sitecustomize in every Python process of a profiled run: turns on
Python <-> native transition tracking (unless rlscope-prof ran with --no-python)."""

import os
import sys
import threading

# Native code of these top-level modules (and their submodules) is Backend / Simulator time.
DEFAULT_BACKEND_MODULES = ("torch", "tensorflow", "jax", "jaxlib", "numpy")
DEFAULT_SIMULATOR_MODULES = ("mujoco", "pybullet", "Box2D", "ale_py")
# Native calls in which a thread waits rather than computes: no CPU category.
WAITING_FUNCTIONS = (
    "time.sleep",
    "select.select",
    "select.poll.poll",
    "select.epoll.poll",
    "_thread.lock.acquire",
    "_thread.RLock.acquire",
    "posix.waitpid",
    "posix.wait",
    "posix.wait4",
    "posix.read",
    "_socket.socket.recv",
    "_socket.socket.recv_into",
    "_socket.socket.accept",
    "_queue.SimpleQueue.get",
    "_multiprocessing.SemLock.acquire",
)


def _modules(variable, defaults):
    """The modules rlscope-prof passed: "+a,b" adds a and b to the defaults, "a,b" replaces them."""
    value = os.environ.get(variable, "+")
    extend = value.startswith("+")
    named = [m.strip() for m in value.lstrip("+").split(",") if m.strip()]
    return (list(defaults) if extend else []) + named


def start():
    from . import _rlscope

    if not _rlscope.tracking_available():
        return False
    started = _rlscope.start_tracking(
        _modules("RLSCOPE_BACKEND_MODULES", DEFAULT_BACKEND_MODULES),
        _modules("RLSCOPE_SIMULATOR_MODULES", DEFAULT_SIMULATOR_MODULES),
        list(WAITING_FUNCTIONS),
    )
    if started:
        threading.setprofile(_rlscope._thread_bootstrap)
        os.register_at_fork(after_in_child=_rlscope._after_fork_child)
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
