"""rlscope: annotate a Python program's operations and phases for the rlscope profiler.

    import rlscope

    rlscope.set_phase("training")
    for step in range(steps):
        with rlscope.operation("inference"):
            action = policy(obs)
        with rlscope.operation("simulation"):
            obs, reward, *_ = env.step(action)
        rlscope.report_progress(step, total=steps)

    @rlscope.operation("backpropagation")
    def update(batch): ...

Under ``rlscope-prof -- python train.py`` these are recorded into the trace, together with the
time the program spends in Python, in its ML backend and in its simulator (tracked without any
change to the program; see docs/python.md). Run any other way, every call returns at once.
"""

import contextlib
import functools
import inspect
import threading

try:
    from . import _rlscope
except ImportError as _error:  # built for another Python, or not built: annotations are no-ops
    _rlscope = None
    _import_error = _error
else:
    _import_error = None

__all__ = ["operation", "set_phase", "report_progress", "enabled"]


def enabled():
    """True when this process records into an rlscope trace (it runs under rlscope-prof)."""
    return _rlscope is not None and _rlscope.recording()


if _rlscope is not None:
    operation = _rlscope.operation
    set_phase = _rlscope.set_phase
    report_progress = _rlscope.report_progress
else:

    class operation:
        """An operation of the program, as a context manager or a decorator (a no-op here: the
        rlscope extension could not be imported)."""

        __slots__ = ("name",)

        def __init__(self, name):
            if not isinstance(name, str):
                raise TypeError("operation name must be a str")
            self.name = name

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        async def __aenter__(self):
            return await _aenter(self)

        async def __aexit__(self, *exc):
            return await _aexit(self, *exc)

        def __call__(self, fn):
            return _decorate(self.name, fn)

        def _start(self):
            return 0

        def _end(self, range_id):
            pass

    def set_phase(name):
        """The process enters phase ``name`` (None leaves the current phase)."""
        if name is not None and not isinstance(name, str):
            raise TypeError("set_phase(name): name must be a str or None")

    def report_progress(step, total=None):
        """Marks how far the run is: ``step`` of ``total``."""


# The ranges `async with` opened, per (operation object, task): one object may be in the blocks
# of several tasks at once.
_async_ranges = {}


async def _aenter(op):
    _async_ranges.setdefault(_async_key(op), []).append(op._start())
    return op


async def _aexit(op, *exc):
    key = _async_key(op)
    ranges = _async_ranges[key]
    op._end(ranges.pop())
    if not ranges:
        del _async_ranges[key]
    return False


def _async_key(op):
    try:
        import asyncio

        task = asyncio.current_task()
    except RuntimeError:  # no running loop (another async framework): the thread decides
        task = None
    return (id(op), id(task) if task is not None else threading.get_ident())


@contextlib.contextmanager
def _start_end_range(name):
    """The operation as an NVTX start/end range: it may span code other code interleaves with."""
    op = operation(name)
    range_id = op._start()
    try:
        yield
    finally:
        op._end(range_id)


def _decorate(name, fn):
    if inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def coroutine(*args, **kwargs):
            with _start_end_range(name):
                return await fn(*args, **kwargs)

        return coroutine
    if inspect.isasyncgenfunction(fn):

        @functools.wraps(fn)
        async def async_generator(*args, **kwargs):
            with _start_end_range(name):
                async for item in fn(*args, **kwargs):
                    yield item

        return async_generator
    if inspect.isgeneratorfunction(fn):

        @functools.wraps(fn)
        def generator(*args, **kwargs):
            with _start_end_range(name):
                return (yield from fn(*args, **kwargs))

        return generator

    @functools.wraps(fn)
    def function(*args, **kwargs):
        with operation(name):
            return fn(*args, **kwargs)

    return function


if _rlscope is not None:
    _rlscope._bind(_aenter, _aexit, _decorate)
