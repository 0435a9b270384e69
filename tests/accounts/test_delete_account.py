"""Deleting an account through the service: the password again, then the account is gone at once
from the store of record, every session ends (and the sockets open on them are closed), the
name is free again, and finished games keep the seat as "a deleted player"."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from protocol.errors import ProtocolError
from server.accounts import service as service_module
from server.accounts.service import AccountPolicy, Limit
from server.record.store import ArchiveResult, RecordStore
from tests.accounts.conftest import MakeService
from tests.support.game_records import finished_game

PASSWORD = "delete me for good"


class Socket:
    """Stands for a connection: ``verify`` remembers it with its session (weakly)."""


async def code_of(call: Any) -> str:
    try:
        await call
        return "ok"
    except ProtocolError as e:
        return e.code


async def test_deleting_ends_every_session_and_closes_their_sockets(
    make_service: MakeService, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(service_module, "WATCH_EVERY", 0.01)
    accounts = await make_service()
    made, laptop = await accounts.sign_up("Rosa", PASSWORD, "10.1.0.1")
    _, phone = await accounts.log_in("Rosa", PASSWORD, "10.1.0.2")
    other, others_token = await accounts.sign_up("Tomas", PASSWORD, "10.1.0.3")
    sockets = {"laptop": Socket(), "phone": Socket(), "other": Socket()}
    assert await accounts.verify(laptop, holder=sockets["laptop"]) == made
    assert await accounts.verify(phone, holder=sockets["phone"]) == made
    assert await accounts.verify(others_token, holder=sockets["other"]) == other
    closed: list[Socket] = []

    async def close(holder: Socket) -> None:
        closed.append(holder)

    watcher = asyncio.create_task(accounts.watch_revocations(close))
    try:
        await asyncio.sleep(0.05)  # the watcher has read the log's position
        assert await accounts.delete_account(phone, PASSWORD, "10.1.0.2") == made
        for _ in range(200):
            if len(closed) == 2:
                break
            await asyncio.sleep(0.01)
    finally:
        watcher.cancel()
    assert sorted(map(id, closed)) == sorted([id(sockets["laptop"]), id(sockets["phone"])])
    assert await accounts.verify(laptop) is None and await accounts.verify(phone) is None
    assert await accounts.verify(others_token) == other
    assert await code_of(accounts.log_in("Rosa", PASSWORD, "10.1.0.4")) == "wrong_credentials"
    assert await accounts.records.account(made.player) is None


async def test_the_name_is_free_again_and_games_keep_a_deleted_player(
    make_service: MakeService, record_store: RecordStore
) -> None:
    accounts = await make_service()
    gone, token = await accounts.sign_up("Ines", PASSWORD, "10.2.0.1")
    stay, _ = await accounts.sign_up("Joao", PASSWORD, "10.2.0.1")
    players = [gone.player, stay.player, "g_x", "g_y"]
    game = finished_game("g-ines", players, ["Ines", "Joao", "X", "Y"])
    assert await record_store.archive_game(game) is ArchiveResult.ARCHIVED
    await accounts.delete_account(token, PASSWORD, "10.2.0.1")
    kept = await record_store.game("g-ines")
    assert kept is not None
    assert (kept.seats[0].participant, kept.seats[0].name) == (None, None)
    assert kept.seats[1:] == game.seats[1:]
    assert [g.game_id for g in await record_store.player_games(stay.player)] == ["g-ines"]
    # Anyone may take the name now: a new player, with nothing of the old one's.
    again, _ = await accounts.sign_up("INES", PASSWORD, "10.2.0.2")
    assert again.player != gone.player
    assert await record_store.player_games(again.player) == []
    _, guest_token = await accounts.new_guest("Joana", "10.2.0.3")
    assert await accounts.verify(guest_token) is not None


async def test_a_wrong_password_a_guest_or_a_stranger_deletes_nothing(
    make_service: MakeService, record_store: RecordStore
) -> None:
    accounts = await make_service()
    made, token = await accounts.sign_up("Vera", PASSWORD, "10.3.0.1")
    _, guest_token = await accounts.new_guest("Walt", "10.3.0.1")
    assert await code_of(accounts.delete_account(token, "not my password", "10.3.0.1")) == (
        "wrong_credentials"
    )
    assert await code_of(accounts.delete_account(token, None, "10.3.0.1")) == "wrong_credentials"
    assert await code_of(accounts.delete_account(guest_token, PASSWORD, "10.3.0.1")) == "bad_token"
    assert await code_of(accounts.delete_account("hs1.forged", PASSWORD, "10.3.0.1")) == (
        "bad_token"
    )
    assert await record_store.account(made.player) is not None
    assert await accounts.verify(token) == made


async def test_deleting_is_throttled_like_a_log_in(make_service: MakeService) -> None:
    policy = AccountPolicy(login_per_pair=Limit(3, 900.0))
    accounts = await make_service(policy)
    _, token = await accounts.sign_up("Yara", PASSWORD, "10.4.0.1")
    # A stolen session guessing the password through the delete route meets the pair limit...
    codes = [
        await code_of(accounts.delete_account(token, f"guess {k}", "10.4.0.9")) for k in range(4)
    ]
    assert codes == ["wrong_credentials"] * 3 + ["too_many_attempts"]
    assert await code_of(accounts.delete_account(token, PASSWORD, "10.4.0.9")) == (
        "too_many_attempts"
    )
    # ... and so does a log-in from there: the two count together.
    assert await code_of(accounts.log_in("Yara", PASSWORD, "10.4.0.9")) == "too_many_attempts"
    assert await code_of(accounts.delete_account(token, PASSWORD, "10.4.0.1")) == "ok"


async def test_a_claimed_guest_that_deleted_its_account_stays_gone(
    make_service: MakeService, record_store: RecordStore
) -> None:
    accounts = await make_service()
    guest, guest_token = await accounts.new_guest("Zeno", "10.5.0.1")
    made, token = await accounts.sign_up("Zeno", PASSWORD, "10.5.0.1", guest_token=guest_token)
    assert made.player == guest.player
    await accounts.delete_account(token, PASSWORD, "10.5.0.1")
    # The guest token it carried before does not bring the deleted player back, as a guest or
    # as a new account (its later games stay "a deleted player", with no rating).
    assert await accounts.verify(guest_token) is None
    claim = accounts.sign_up("Zenon", PASSWORD, "10.5.0.1", guest_token=guest_token)
    assert await code_of(claim) == "bad_token"
    assert await record_store.account_by_name("zenon") is None


async def test_a_new_password_ends_every_session_of_the_account_only(
    make_service: MakeService,
) -> None:
    accounts = await make_service()
    _, first = await accounts.sign_up("Kai", PASSWORD, "10.6.0.1")
    _, second = await accounts.log_in("Kai", PASSWORD, "10.6.0.2")
    other, others_token = await accounts.sign_up("Lou", PASSWORD, "10.6.0.3")
    _, fresh = await accounts.change_password(first, PASSWORD, "a new passphrase", "10.6.0.1")
    assert await accounts.verify(first) is None and await accounts.verify(second) is None
    assert await accounts.verify(fresh) is not None
    assert await accounts.verify(others_token) == other
    assert await code_of(accounts.log_in("Kai", PASSWORD, "10.6.0.1")) == "wrong_credentials"
    assert await code_of(accounts.log_in("Kai", "a new passphrase", "10.6.0.1")) == "ok"


async def test_verify_sees_an_account_deleted_on_another_node(
    make_service: MakeService, record_store: RecordStore
) -> None:
    accounts = await make_service()
    made, token = await accounts.sign_up("Noor", PASSWORD, "10.7.0.1")
    # Another node deleted the row (its revocations have not reached this session store):
    # the session alone no longer opens anything.
    assert await record_store.delete_account(made.player)
    assert await accounts.verify(token) is None
