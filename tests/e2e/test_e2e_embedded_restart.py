"""The embedded node (no Redis) stopped or killed mid-hand and started again on its data
folder: the room is there at the same point, and the game goes on to its end; an account's
session token still works, and one logged out stays refused.

``ServerProcess`` gives the node a data folder of its own and keeps it across a stop and a
start of the same object, as a user's ``make run`` keeps ``~/.local/share/hearts-live``.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Callable
from typing import Any

import pytest

from protocol.account_api import login, logout, sign_up
from protocol.client import HeartsClient
from tests.e2e.test_e2e_accounts import auth_code
from tests.e2e.test_e2e_durability import act_on_view, reconnect
from tests.support.client_bots import play_to_the_end, two_humans_and_bots
from tests.support.server_process import ServerProcess

pytestmark = pytest.mark.e2e


async def play_some(client: HeartsClient, moves: int) -> None:
    """Answer this seat's next ``moves`` prompts (the pass, then cards)."""
    for _ in range(moves):
        prompt = await client.next_event("your_turn")
        if prompt["phase"] == "passing":
            reply = await client.request("pass", cards=prompt["legal"][:3])
        else:
            reply = await client.request("play", card=prompt["legal"][0])
        client.acted_seq = reply["first_seq"]  # type: ignore[attr-defined]


async def seat_connected(client: HeartsClient, seat: int) -> bool:
    view = (await client.request("view"))["view"]
    return bool(view["seats"][seat]["connected"])


async def wait_until(check: Callable[[], Any], timeout: float = 15.0) -> None:
    async with asyncio.timeout(timeout):
        while not await check():
            await asyncio.sleep(0.1)


@pytest.mark.parametrize("how", ["sigterm", "sigkill"])
async def test_a_game_in_play_resumes_after_the_embedded_node_restarts(how: str) -> None:
    # A node's sockets are reaped 1 s after it died: the restarted node drops its predecessor's.
    server = ServerProcess(HEARTS_NODE_TTL="1").start()
    try:
        a, b, room = await two_humans_and_bots(server, "A", "B")
        await asyncio.gather(play_some(a, 3), play_some(b, 3))
        await asyncio.sleep(0.3)  # the bots' moves after the last human one
        before = (await a.request("view"))["view"]
        assert len(before["game"]["tricks"]) >= 1, "no trick was played before the restart"
        if how == "sigterm":
            server.stop()  # a clean shutdown: Ctrl-C, systemctl stop
        else:
            server.kill()  # no shutdown code at all
        for client in (a, b):
            await client.close()
        server.start()

        a2 = await reconnect(server, a)
        assert a2.room == room
        after = (await a2.request("view"))["view"]
        game, was = after["game"], before["game"]
        assert game["hand_number"] == was["hand_number"]
        assert game["tricks"] == was["tricks"]
        assert game["trick"] == was["trick"]
        assert game["hand"] == was["hand"]
        assert after["seq"] >= before["seq"]  # plus the seats' connection events
        # B has not come back: the dead node's socket is dropped from the room, A's stays.
        await wait_until(lambda: _not(seat_connected(a2, 1)))
        assert await seat_connected(a2, 0)
        b2 = await reconnect(server, b)
        assert await seat_connected(a2, 1)

        await act_on_view(a2)
        await act_on_view(b2)
        results = await asyncio.gather(play_to_the_end(a2), play_to_the_end(b2, seed=1))
        assert results[0]["scores"] == results[1]["scores"]
        assert max(results[0]["scores"]) >= 50
        for client in (a2, b2):
            await client.close()
    finally:
        server.stop()


async def _not(check: Any) -> bool:
    return not await check


async def test_sessions_outlive_a_killed_embedded_node() -> None:
    server = ServerProcess().start()
    name, password = f"Kip{secrets.token_hex(3)}x", "kept across a kill"
    try:
        kept = (await sign_up(server.base, name, password))["token"]
        ended = (await login(server.base, name, password))["token"]
        assert await logout(server.base, ended)
        server.kill()
        server.start()
        assert await auth_code(server, kept) == "ok"
        assert await auth_code(server, ended) == "bad_token"
    finally:
        server.stop()
