"""No-op stand-ins for rlscope's annotation API, used when the rlscope package is not installed.

Same names and signatures as the package, so an annotated script runs unchanged without it.
"""

import contextlib


class operation(contextlib.ContextDecorator):
    """`with operation("inference"): ...` or `@operation("inference")`; does nothing here."""

    def __init__(self, name):
        self.name = name

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def set_phase(name):
    """Would start the phase `name` (ending the previous one); does nothing here."""


def report_progress(step, total=None):
    """Would record that `step` of `total` steps are done; does nothing here."""
