"""The one thing pyproject.toml cannot say: the optional C extension of the bots' tree walks.

``optional=True``: where no C compiler is at hand the install goes on without it, and
``server/bots/walks.py`` runs the same walks in Python (slower, the same results).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "server.bots._walks",
            ["server/bots/_walks.c"],
            extra_compile_args=["-O3"],
            optional=True,
        )
    ]
)
