"""Call nonces are unique in a process and across a fork."""

from __future__ import annotations

import os

from server.store.redis.nonces import call_nonce


def test_nonces_are_distinct_and_sized() -> None:
    nonces = [call_nonce() for _ in range(10_000)]
    assert len(set(nonces)) == len(nonces)
    assert {len(n) for n in nonces} == {16}


def test_a_forked_child_draws_its_own_nonces() -> None:
    before = call_nonce()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its next nonce, to the parent
        try:
            os.write(write, call_nonce())
        finally:
            os._exit(0)
    os.close(write)
    child = os.read(read, 16)
    os.close(read)
    os.waitpid(pid, 0)
    after = call_nonce()
    assert len(child) == 16
    assert child[:8] != before[:8]  # a new prefix, so no count of the parent's can meet it
    assert after[:8] == before[:8]  # the parent's own are unchanged
