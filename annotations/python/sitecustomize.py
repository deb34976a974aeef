# rlscope-prof puts this directory first on PYTHONPATH: Python runs this file at start-up in every
# process of the profiled run. It starts rlscope's Python tracking, then runs the sitecustomize
# module this one hides, if there is one, so that the program starts as it would without rlscope.
import importlib.machinery
import importlib.util
import os
import sys


def _start_rlscope():
    if "RLSCOPE_PART_DIR" not in os.environ:
        return
    from rlscope import _autostart

    _autostart.start_or_warn()


def _run_hidden_sitecustomize():
    here = os.path.dirname(os.path.abspath(__file__))
    path = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)


_start_rlscope()
_run_hidden_sitecustomize()
