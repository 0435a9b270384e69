"""Whole games on a real Redis Cluster (3 primaries, 3 replicas): across nodes, and through a
failover of the primary that owns the room's slot."""

from __future__ import annotations

import asyncio
import random
import time
from typing import Any

import pytest

from protocol.client import CommandError, HeartsClient
from server.store.redis.keys import RoomKeys, shard_of
from tests.support.client_bots import new_player, open_table, play_to_the_end, two_humans_and_bots
from tests.support.redis_cluster import LocalCluster
from tests.support.server_process import ServerProcess

pytestmark = pytest.mark.e2e

# A failover makes the store refuse or lose track of a command for a second or two.
STORE_TROUBLE = ("store_unavailable", "outcome_unknown", "busy", "internal_error")


async def test_a_game_across_two_nodes_on_a_cluster(clean_cluster: str) -> None:
    """Seats on two nodes: each node hears the other's commits through sharded pub/sub."""
    nodes = [ServerProcess(redis_url=clean_cluster).start() for _ in range(2)]
    try:
        players = [await new_player(nodes[k % 2], f"P{k}") for k in range(4)]
        room = await open_table(nodes[0], players[0])
        for k, client in enumerate(players[1:], start=1):
            assert (await client.request("join", room=room))["seat"] == k
        # As a host's screen would: start once the seats are seen filled. (A join acked by
        # another node can outrun that node's event to this one; the host's node then still
        # refuses a start on its cached copy. Waiting for the events is what a client does.)
        for _ in range(3):
            await players[0].next_event("seated")
        await players[0].request("start")
        results = await asyncio.gather(
            *(play_to_the_end(x, seed=i) for i, x in enumerate(players))
        )
        assert all(r["scores"] == results[0]["scores"] for r in results)
        assert max(results[0]["scores"]) >= 50
        for x in players:
            assert x.verdicts and all(v == [] for v in x.verdicts.values()), x.verdicts
            await x.close()
    finally:
        for n in nodes:
            n.stop()


async def _act(client: HeartsClient, rng: random.Random) -> dict[str, Any] | None:
    """Act on the current view if this seat must decide; the game_over view ends the game."""
    view = (await client.request("view"))["view"]
    game = view.get("game")
    if view["status"] == "finished" and game is not None:
        return {"event": "game_over", "scores": game["scores"]}
    if game is None or view["you"] not in view["deciding"]:
        return None
    if game["phase"] == "passing" and not game["passed"]:
        return await client.request("pass", cards=rng.sample(game["hand"], 3))
    if game["phase"] == "playing" and game["turn"] == view["you"]:
        return await client.request("play", card=rng.choice(game["legal"]))
    return None


async def play_through_trouble(client: HeartsClient, seed: int, timeout: float) -> dict[str, Any]:
    """Play to the end like ``play_to_the_end``, but a failed command or a missing prompt is
    met the way a real client meets it: look at the view again and act on it."""
    rng = random.Random(seed)
    async with asyncio.timeout(timeout):
        while True:
            try:
                event = await client.next_event(
                    lambda e: e["event"] in ("your_turn", "game_over"), timeout=2.0
                )
            except TimeoutError:
                event = None
            if event is not None and event["event"] == "game_over":
                return event
            try:
                acted = await _act(client, rng)
                if acted is not None and acted.get("event") == "game_over":
                    return acted  # the game_over event itself was lost in the failover
            except CommandError as e:
                assert e.code in (*STORE_TROUBLE, "wrong_phase", "not_your_turn"), e
                await asyncio.sleep(0.2)


async def test_the_primary_of_a_rooms_slot_is_killed_mid_hand_and_the_game_finishes(
    own_cluster: LocalCluster,
) -> None:
    env = {"HEARTS_NODE_TTL": "5"}
    nodes = [ServerProcess(redis_url=own_cluster.url, **env).start() for _ in range(2)]
    try:
        a, b, room = await two_humans_and_bots(nodes[0], "A", "B", guest_server=nodes[1])
        for c in (a, b):
            prompt = await c.next_event("your_turn")
            await c.request("pass", cards=prompt["legal"][:3])
        await asyncio.sleep(0.5)  # a few plays in
        before = (await a.request("view"))["view"]
        assert before["game"]["phase"] == "playing"
        primary = own_cluster.owner_of_key(RoomKeys("hearts").tag(shard_of(room)))
        killed_at = time.monotonic()
        own_cluster.kill(primary)
        results = await asyncio.gather(
            play_through_trouble(a, 0, 180), play_through_trouble(b, 1, 180)
        )
        assert results[0]["scores"] == results[1]["scores"]
        assert max(results[0]["scores"]) >= 50
        new_primary = own_cluster.owner_of_key(RoomKeys("hearts").tag(shard_of(room)))
        assert new_primary != primary, "the replica did not take over"
        print(f"failover: game finished {time.monotonic() - killed_at:.1f}s after the kill")
        for c in (a, b):
            await c.close()
    finally:
        for n in nodes:
            n.stop()
