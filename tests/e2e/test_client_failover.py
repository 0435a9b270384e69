"""The Python client carries a game across the death of its node by itself: real nodes, real
Redis; the client is given both nodes' URLs and nothing else is done by hand."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest

from protocol.client import Backoff, HeartsClient, OutcomeUnknown, guest
from tests.support.server_process import ServerProcess

pytestmark = pytest.mark.e2e

REFUSED_IN_A_RACE = ("wrong_phase", "not_your_turn", "already_passed")


async def decide(client: HeartsClient, rng: random.Random) -> int | None:
    """Make this seat's pending decision, read from a fresh view; the seq it reached, if any."""
    view = (await client.request("view"))["view"]
    seat, game = view["you"], view["game"]
    if seat is None or seat not in view["deciding"]:
        return None
    if game["phase"] == "passing":
        fields: dict[str, Any] = {"cards": rng.sample(game["hand"], 3)}
        kind = "pass"
    elif game["phase"] == "playing":
        kind, fields = "play", {"card": rng.choice(game["legal"])}
    else:
        kind, fields = "moon", {"choice": "others_26"}
    return await act(client, rng, kind, fields)


async def act(client: HeartsClient, rng: random.Random, kind: str, fields: dict[str, Any]) -> int:
    try:
        return int((await client.request(kind, **fields))["first_seq"])
    except OutcomeUnknown:
        # The client has resumed: the view says whether the move was made.
        return await decide(client, rng) or 0
    except Exception as e:
        assert getattr(e, "code", None) in REFUSED_IN_A_RACE, e
        return 0


async def play_through_failures(client: HeartsClient, seed: int = 0) -> dict[str, Any]:
    rng = random.Random(seed)
    acted = 0
    while True:
        event = await client.next_event(
            lambda e: e["event"] in ("your_turn", "game_over", "reconnected"), timeout=60
        )
        if event["event"] == "game_over":
            return event
        if event["event"] == "reconnected":
            acted = max(acted, await decide(client, rng) or 0)
        elif event["seq"] >= acted:  # a prompt below `acted` was answered (a resume replays it)
            if event["phase"] == "passing":
                kind, fields = "pass", {"cards": rng.sample(event["legal"], 3)}
            elif event["phase"] == "playing":
                kind, fields = "play", {"card": rng.choice(event["legal"])}
            else:
                kind, fields = "moon", {"choice": "others_26"}
            acted = max(acted, await act(client, rng, kind, fields))


@pytest.mark.parametrize("death", ["kill", "drain"])
async def test_a_game_survives_its_node_and_every_deal_still_verifies(
    clean_redis: str, death: str
) -> None:
    one = ServerProcess(redis_url=clean_redis).start()
    two = ServerProcess(redis_url=clean_redis).start()
    try:
        me = await guest(one.base, "Survivor")
        client = await HeartsClient.connect(
            [one.ws, two.ws], me["token"], reconnect=Backoff(first=0.05, give_up_after=20)
        )
        await client.request("open_room", options={"target": 100})
        await client.request("fill_bots", level="random")
        await client.request("start")
        game = asyncio.create_task(play_through_failures(client))
        async with asyncio.timeout(60):
            while not client.verdicts:  # let a hand finish first (the player reads the events)
                await asyncio.sleep(0.05)
        # At once: alone with random bots, actors finish a hand in a few milliseconds.
        one.kill() if death == "kill" else one.stop()
        over = await asyncio.wait_for(game, 120)
        assert max(over["scores"]) >= 100
        assert client.reconnects >= 1 and client.url_index == 1
        assert client.verdicts and all(v == [] for v in client.verdicts.values()), client.verdicts
        await client.close()
    finally:
        one.stop()
        two.stop()
