"""Deleting an account through a real server: ``POST /api/account/delete`` with the password
typed again. The account is gone at once: its open sockets close with 4001 (on another node too),
its tokens are refused, its name is free again; a wrong password, a guest or no token delete
nothing, and guessing through the route is throttled like a log-in."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Iterator

import pytest

from protocol.account_api import login, sign_up
from protocol.client import CommandError, HeartsClient
from tests.e2e.test_e2e_accounts import auth_code, call, unique
from tests.support.server_process import ServerProcess

pytestmark = pytest.mark.e2e

PASSWORD = "a password to delete"


@pytest.fixture(scope="module")
def server() -> Iterator[ServerProcess]:
    proc = ServerProcess(HEARTS_TRUST_PROXY="1", HEARTS_LOGIN_LIMIT="3").start()
    yield proc
    proc.stop()


def delete(
    server: ServerProcess, token: str | None, password: object, address: str | None = None
) -> tuple[int, dict[str, object]]:
    status, answer, _ = call(
        server, "/api/account/delete", {"password": password}, token=token, address=address
    )
    return status, answer


async def test_deleting_closes_the_sockets_and_frees_the_name(server: ServerProcess) -> None:
    name = unique("Ulla")
    made = await sign_up(server.base, name, PASSWORD)
    other = await login(server.base, name, PASSWORD)
    async with await HeartsClient.connect(server.ws, other["token"]) as open_socket:
        assert delete(server, made["token"], PASSWORD) == (200, {"deleted": True})
        code, _ = await asyncio.wait_for(open_socket.closed, 5)
        assert code == 4001
    for token in (made["token"], other["token"]):
        assert await auth_code(server, token) == "bad_token"
        assert call(server, "/api/me", token=token)[0] == 401
    with pytest.raises(CommandError) as e:
        await login(server.base, name, PASSWORD)
    assert e.value.code == "wrong_credentials"
    again = await sign_up(server.base, name.upper(), "someone else now")
    assert again["player"] != made["player"]
    status, page, _ = call(server, f"/api/players/{made['player']}")
    assert status == 200 and page["name"] == "" and page["games"] == 0


async def test_a_wrong_password_a_guest_or_no_token_delete_nothing(server: ServerProcess) -> None:
    name = unique("Vik")
    made = await sign_up(server.base, name, PASSWORD)
    status, answer = delete(server, made["token"], "not the password")
    assert (status, answer["code"]) == (401, "wrong_credentials")
    status, answer = delete(server, made["token"], None)
    assert (status, answer["code"]) == (401, "wrong_credentials")
    _, visitor, _ = call(server, "/api/guest", {"name": unique("Wes")})
    status, answer = delete(server, visitor["token"], PASSWORD)
    assert (status, answer["code"]) == (401, "bad_token")
    status, answer = delete(server, None, PASSWORD)
    assert (status, answer["code"]) == (401, "bad_token")
    assert await auth_code(server, made["token"]) == "ok"
    assert (await login(server.base, name, PASSWORD))["player"] == made["player"]


async def test_guessing_through_delete_is_throttled_like_a_log_in(server: ServerProcess) -> None:
    made = await sign_up(server.base, unique("Xia"), PASSWORD)
    thief = f"192.0.2.{secrets.randbelow(250)}"
    for k in range(3):  # HEARTS_LOGIN_LIMIT=3
        status, answer = delete(server, made["token"], f"guess {k}", address=thief)
        assert (status, answer["code"]) == (401, "wrong_credentials")
    status, answer = delete(server, made["token"], PASSWORD, address=thief)
    assert (status, answer["code"]) == (429, "too_many_attempts")
    assert await auth_code(server, made["token"]) == "ok"


async def test_a_deletion_on_one_node_closes_the_socket_on_another(clean_redis: str) -> None:
    one = ServerProcess(clean_redis).start()
    two = ServerProcess(clean_redis, HEARTS_MATCHMAKER="0").start()
    try:
        made = await sign_up(one.base, unique("Yves"), PASSWORD)
        on_two = await HeartsClient.connect(two.ws, made["token"])
        assert delete(one, made["token"], PASSWORD) == (200, {"deleted": True})
        code, _ = await asyncio.wait_for(on_two.closed, 5)
        assert code == 4001
        await on_two.close()
        assert await auth_code(two, made["token"]) == "bad_token"
    finally:
        one.stop()
        two.stop()
