"""The one thing pyproject.toml cannot say: the optional C extension of the bots' tree walks.

``optional=True``: where no C compiler is at hand the install goes on without it, and
``server/core/bots/walks.py`` runs the same walks in Python (slower, the same results).
"""

import platform

from setuptools import Extension, setup

# The walks count cards with popcount; without this flag GCC calls a slow library routine.
# Every x86-64 CPU of the last fifteen years has the instruction.
POPCOUNT = ["-mpopcnt"] if platform.machine().lower() in ("x86_64", "amd64") else []

setup(
    ext_modules=[
        Extension(
            "server.core.bots._walks",
            ["server/core/bots/_walks.c"],
            extra_compile_args=["-O3", *POPCOUNT],
            optional=True,
        )
    ]
)
