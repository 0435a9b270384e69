"""Clocks through real sockets with short settings: booting idle and vanished players."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from protocol.client import CommandError
from tests.support.client_bots import new_player, open_table, play_to_the_end, two_humans_and_bots
from tests.support.server_process import ServerProcess

pytestmark = pytest.mark.e2e

SHORT = {
    "HEARTS_GRACE_PASS": "0.4",
    "HEARTS_GRACE_PLAY": "0.4",
    "HEARTS_BANK": "0.6",
    "HEARTS_LAG_CAP": "0.1",
    "HEARTS_BOOT_WINDOW": "30",
    "HEARTS_RECONNECT": "0.8",
}


@pytest.fixture(scope="module")
def server() -> Iterator[ServerProcess]:
    proc = ServerProcess(**SHORT).start()
    yield proc
    proc.stop()


async def test_an_idle_player_is_booted_by_another_and_a_bot_finishes(
    server: ServerProcess,
) -> None:
    active, idle, _ = await two_humans_and_bots(server, "Active", "Idle")
    prompt = await active.next_event("your_turn")
    await active.request("pass", cards=prompt["legal"][:3])
    with pytest.raises(CommandError) as e:
        await active.request("boot", seat=1)  # the idle seat still has bank left
    assert e.value.code == "not_bootable"
    out = await active.next_event("out_of_time", timeout=10)
    assert out["seat"] == 1
    await active.request("boot", seat=1)
    replaced = await active.next_event("replaced")
    assert replaced == {**replaced, "seat": 1, "reason": "booted", "by": 0}
    over = await play_to_the_end(active)
    assert max(over["scores"]) >= 50
    # The booted player may watch, but never act for the seat again.
    view = (await idle.request("view"))["view"]
    assert view["you"] is None and view["seats"][1]["bot"] is True
    with pytest.raises(CommandError) as e:
        await idle.request("play", card="2C")
    assert e.value.code == "not_seated"
    await active.close()
    await idle.close()


async def test_an_idle_player_alone_with_bots_is_booted_when_the_host_turned_the_clock_on(
    server: ServerProcess,
) -> None:
    idle = await new_player(server, "Alone")
    room = await open_table(server, idle, {"target": 50, "solo_clock": True})
    await idle.request("fill_bots", level="random")
    await idle.request("start")
    replaced = await idle.next_event("replaced", timeout=10)
    assert replaced["seat"] == 0 and replaced["reason"] == "silent"
    over = await idle.next_event("game_over", timeout=60)
    assert max(over["scores"]) >= 50 and room == idle.room
    await idle.close()


async def test_a_disconnected_player_can_be_booted_after_the_reconnect_grace(
    server: ServerProcess,
) -> None:
    active = await new_player(server, "Stays")
    gone = await new_player(server, "Drops")
    room = await open_table(server, active)
    await gone.request("join", room=room)
    await active.request("fill_bots", level="random")
    await gone.close()
    dropped = await active.next_event("connection")
    assert dropped["seat"] == 1 and dropped["connected"] is False
    with pytest.raises(CommandError):
        await active.request("boot", seat=1)  # the game has not started: nothing to boot
    await active.request("start")
    await asyncio.sleep(0.9)  # past the reconnect grace, the bank may still have time
    await active.request("boot", seat=1)
    replaced = await active.next_event("replaced")
    assert replaced["seat"] == 1 and replaced["reason"] == "booted"
    await active.close()
