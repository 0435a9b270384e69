"""A restarted server keeps its accounts and its guests: accounts live in the store of record
(a SQLite file in the data folder), and without HEARTS_SECRET guest tokens are signed with a
key kept there too, not one made anew by each process."""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest

from protocol.account_api import guest, login, sign_up
from server.record.engine import DATABASE_FILE
from tests.e2e.test_e2e_accounts import auth_code, call
from tests.support.server_process import ServerProcess

pytestmark = pytest.mark.e2e


async def test_a_restart_keeps_accounts_and_guest_tokens(tmp_path: Path) -> None:
    data = tmp_path / "data"
    server = ServerProcess(HEARTS_SECRET="", HEARTS_DATA_DIR=str(data))
    name, password = f"Ren{secrets.token_hex(3)}x", "kept across restarts"
    try:
        server.start()
        made = await sign_up(server.base, name, password)
        visitor = await guest(server.base, f"Gil{secrets.token_hex(3)}x")
        assert await auth_code(server, visitor["token"]) == "ok"
        server.stop()
        assert (data / DATABASE_FILE).exists()

        server.start()  # a new process, the same data folder
        again = await login(server.base, name, password)
        assert again["player"] == made["player"] and again["account"] is True
        assert await auth_code(server, again["token"]) == "ok"
        # The guest's token, signed by the first process, still stands for the same guest.
        assert await auth_code(server, visitor["token"]) == "ok"
        status, me, _ = call(server, "/api/me", token=visitor["token"])
        assert (status, me["player"], me["account"]) == (200, visitor["player"], False)
    finally:
        server.stop()


async def test_an_explicit_secret_still_wins(tmp_path: Path) -> None:
    data = str(tmp_path / "data")
    first = ServerProcess(HEARTS_SECRET="one explicit key", HEARTS_DATA_DIR=data)
    try:
        first.start()
        visitor = await guest(first.base, f"Hal{secrets.token_hex(3)}x")
    finally:
        first.stop()
    # The same data folder with another explicit key: the token is not this key's.
    second = ServerProcess(HEARTS_SECRET="another key", HEARTS_DATA_DIR=data)
    try:
        second.start()
        assert await auth_code(second, visitor["token"]) == "bad_token"
    finally:
        second.stop()
    # Without one, the kept key (never the explicit one) signs: still not that token's.
    kept = ServerProcess(HEARTS_SECRET="", HEARTS_DATA_DIR=data)
    try:
        kept.start()
        assert await auth_code(kept, visitor["token"]) == "bad_token"
    finally:
        kept.stop()
