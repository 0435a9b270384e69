"""Live quick play end to end: queue, seated by rating into rated games, ratings on the ladder."""

from __future__ import annotations

import asyncio
import json
import urllib.request

import pytest

from protocol.client import CommandError, HeartsClient
from tests.support.client_bots import new_player, play_to_the_end
from tests.support.server_process import ServerProcess

pytestmark = pytest.mark.e2e


def get_json(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=10) as resp:
        return json.loads(resp.read())


async def queue_and_play(client: HeartsClient, seed: int) -> dict:
    reply = await client.request("queue", target=50)
    if "matched" not in reply:
        assert reply["queued"] and reply["status"]["window"] >= 100
        await client.next_event("matched", timeout=60)
    assert client.room is not None and client.seat is not None
    return await play_to_the_end(client, seed=seed, timeout=180)


async def test_sixteen_players_queue_play_rated_games_and_climb(clean_redis: str) -> None:
    one = ServerProcess(redis_url=clean_redis).start()
    two = ServerProcess(redis_url=clean_redis, HEARTS_MATCHMAKER="0").start()
    try:
        clients = [await new_player(one if k % 2 else two, f"Q{k}") for k in range(16)]
        results = await asyncio.gather(*(queue_and_play(c, k) for k, c in enumerate(clients)))
        rooms: dict[str, set[int]] = {}
        for c in clients:
            rooms.setdefault(c.room, set()).add(c.seat)
        # Four tables of four humans: nobody seated twice, no seat given to two players.
        assert len(rooms) == 4 and all(seats == {0, 1, 2, 3} for seats in rooms.values())
        for c, over in zip(clients, results, strict=True):
            ratings = await c.next_event("ratings", timeout=30)
            mine = ratings["seats"][c.seat]
            assert mine["after"]["games"] == 1
            low = min(over["scores"])
            if over["scores"][c.seat] == low and over["scores"].count(low) == 1:
                assert mine["change"] > 0, "the lone winner gains"
            if (
                over["scores"][c.seat] == max(over["scores"])
                and over["scores"].count(max(over["scores"])) == 1
            ):
                assert mine["change"] < 0, "the lone last loses"
            info = get_json(f"{one.base}/api/players/{c.identity['player']}")  # type: ignore[attr-defined]
            assert info["games"] == 1 and info["provisional"] is True
            assert info["display"] == mine["after"]["display"]
            assert len(info["history"]) == 1 and len(info["recent_games"]) == 1
        ladder = (await clients[0].request("ladder"))["ladder"]
        assert ladder["you"]["games"] == 1 and ladder["you"]["rank"] is None  # provisional
        for c in clients:
            await c.close()
    finally:
        one.stop()
        two.stop()


async def test_a_lone_player_gets_bots_after_the_wait_and_can_leave_the_queue(
    clean_redis: str,
) -> None:
    server = ServerProcess(redis_url=clean_redis, HEARTS_BOT_FILL_AFTER="1").start()
    try:
        leaver = await new_player(server, "Changes mind")
        await leaver.request("queue", target=100)
        await leaver.request("unqueue")
        with pytest.raises(CommandError) as e:
            await leaver.request("unqueue")
        assert e.value.code == "not_in_queue"
        solo = await new_player(server, "Solo")
        await solo.request("queue", target=100)
        status = await solo.next_event("queue_status", timeout=10)
        assert status["target"] == 100 and status["waited"] >= 0
        matched = await solo.next_event("matched", timeout=20)
        view = matched["view"]
        assert [s["bot"] for s in view["seats"]].count(True) == 3
        assert view["options"]["rated"] is True
        await asyncio.sleep(1.5)
        assert leaver.room is None  # left the queue: never seated
        await leaver.close()
        await solo.close()
    finally:
        server.stop()
