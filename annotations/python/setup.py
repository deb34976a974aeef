"""The C extension of the rlscope package (pyproject.toml has the rest)."""

import os
from pathlib import Path

from setuptools import Extension, setup

here = Path(__file__).resolve().parent
root = here.parent.parent


def nvtx_include():
    for base in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if base and (Path(base) / "include" / "nvtx3" / "nvToolsExt.h").exists():
            return str(Path(base) / "include")
    raise SystemExit("rlscope: the CUDA toolkit's nvtx3 headers were not found (set CUDA_HOME)")


sources = ["category_stack.cpp", "collector_link.cpp", "module.cpp", "native_hooks.cpp",
           "transitions.cpp"]
setup(
    ext_modules=[
        Extension(
            "rlscope._rlscope",
            sources=[os.path.relpath(here / "src" / s, here) for s in sources],
            include_dirs=[str(root / "annotations" / "include"),
                          str(root / "collector" / "core" / "include"), nvtx_include()],
            extra_compile_args=["-std=c++20", "-fvisibility=hidden"],
            libraries=["dl"],
            language="c++",
        )
    ]
)
