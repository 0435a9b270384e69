"""Call nonces: an id for each store call that a retry of the same call repeats.

A script that must tell its own retry from another writer (the commit, the heartbeat, a league
post) is given a nonce that no other call, on this process or any other, is given. It needs to
be unique, not secret: a random prefix drawn once per process, and a counter (``os.urandom``
per call would be a ``getrandom`` system call on every card).
"""

from __future__ import annotations

import itertools
import os

_prefix = os.urandom(8)
_counter = itertools.count()


def call_nonce() -> bytes:
    """16 bytes no other call has: this process's random prefix and its next count."""
    return _prefix + next(_counter).to_bytes(8, "big")


def _reseed() -> None:
    # A forked child would repeat its parent's nonces from the same prefix and count.
    global _prefix, _counter
    _prefix = os.urandom(8)
    _counter = itertools.count()


os.register_at_fork(after_in_child=_reseed)
