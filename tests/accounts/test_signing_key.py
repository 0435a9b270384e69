"""The key that signs guest tokens: kept in the store of record unless HEARTS_SECRET names one,
so a restarted node, or another node on the same database, accepts the guests it signed."""

from __future__ import annotations

import asyncio

import pytest

from server.accounts.keys import KEY_NAME, FixedKey, KeptKey, signing_key
from server.accounts.service import Accounts
from server.config import Settings
from server.record.store import RecordStore
from server.store.memory.league import MemoryLeagueStore
from tests.accounts.conftest import Clock, cheap_hasher, started


async def test_a_restarted_node_accepts_the_guests_it_signed(
    record_store: RecordStore, clock: Clock
) -> None:
    before = await started(
        record_store, MemoryLeagueStore(), clock, key=KeptKey(record_store, clock)
    )
    guest, token = await before.new_guest("Olga", "10.0.0.1")
    kept = await record_store.server_key(KEY_NAME)
    assert kept is not None and len(kept) == 32
    # A new process: new objects, a new session store, the same database.
    after = await started(
        record_store, MemoryLeagueStore(), clock, key=KeptKey(record_store, clock)
    )
    assert await after.verify(token) == guest
    assert await record_store.server_key(KEY_NAME) == kept


async def test_nodes_starting_at_once_agree_on_one_key(
    record_store: RecordStore, record_url: str, clock: Clock
) -> None:
    other_node = RecordStore.open(record_url)
    try:
        nodes = await asyncio.gather(
            *(
                started(store, MemoryLeagueStore(), clock, key=KeptKey(store, clock))
                for store in (record_store, other_node, record_store, other_node)
            )
        )
        _, token = await nodes[0].new_guest("Piet", "10.0.0.2")
        assert all([await node.verify(token) is not None for node in nodes])
    finally:
        await other_node.close()


async def test_an_explicit_secret_wins_and_nothing_is_kept(
    record_store: RecordStore, clock: Clock
) -> None:
    source = signing_key(b"from HEARTS_SECRET", record_store, clock)
    assert isinstance(source, FixedKey)
    node = await started(record_store, MemoryLeagueStore(), clock, key=source)
    _, token = await node.new_guest("Quin", "10.0.0.3")
    assert await record_store.server_key(KEY_NAME) is None
    # A node with another key refuses it; one with the same key accepts it.
    kept = await started(record_store, MemoryLeagueStore(), clock, key=KeptKey(record_store, clock))
    assert await kept.verify(token) is None
    same = await started(
        record_store, MemoryLeagueStore(), clock, key=FixedKey(b"from HEARTS_SECRET")
    )
    assert await same.verify(token) is not None
    assert isinstance(signing_key(b"", record_store, clock), KeptKey)


async def test_guest_tokens_wait_for_the_key(record_store: RecordStore, clock: Clock) -> None:
    accounts = Accounts(
        record_store, MemoryLeagueStore(), KeptKey(record_store, clock), clock, None, cheap_hasher()
    )
    with pytest.raises(RuntimeError):
        await accounts.new_guest("Rita", "10.0.0.4")
    await accounts.start()
    assert (await accounts.new_guest("Rita", "10.0.0.4"))[1]


def test_without_hearts_secret_the_settings_name_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HEARTS_SECRET", raising=False)
    assert Settings.from_env().secret == b""  # not a random key of this process: the kept one
    monkeypatch.setenv("HEARTS_SECRET", "")
    assert Settings.from_env().secret == b""
    monkeypatch.setenv("HEARTS_SECRET", "shared by every node")
    assert Settings.from_env().secret == b"shared by every node"
