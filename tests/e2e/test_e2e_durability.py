"""Rooms held in Redis: a node killed mid-hand loses nothing; nodes share rooms; clocks survive."""

from __future__ import annotations

import asyncio

import pytest

from protocol.client import HeartsClient
from tests.support.client_bots import new_player, open_table, play_to_the_end, two_humans_and_bots
from tests.support.server_process import ServerProcess

pytestmark = pytest.mark.e2e


def node(clean_redis: str, **env: str) -> ServerProcess:
    return ServerProcess(redis_url=clean_redis, **env).start()


async def reconnect(server: ServerProcess, client: HeartsClient) -> HeartsClient:
    token = client.identity["token"]  # type: ignore[attr-defined]
    for _ in range(100):
        try:
            back = await HeartsClient.connect(server.ws, token)
            break
        except OSError:
            await asyncio.sleep(0.1)
    back.identity = client.identity  # type: ignore[attr-defined]
    await back.request("resume", room=client.room, seq=client.seq)
    # The missed events came before the answer; their prompts are stale now: act on the view.
    while not back.events.empty():
        back.events.get_nowait()
    return back


async def act_on_view(client: HeartsClient) -> None:
    """After a resume, answer a decision that was already pending."""
    view = (await client.request("view"))["view"]
    seat, game = view["you"], view["game"]
    if seat not in view["deciding"]:
        return
    if game["phase"] == "passing" and not game["passed"]:
        reply = await client.request("pass", cards=game["hand"][:3])
    elif game["phase"] == "playing" and game["turn"] == seat:
        reply = await client.request("play", card=game["legal"][0])
    else:
        return
    client.acted_seq = reply["first_seq"]  # type: ignore[attr-defined]


async def test_sigkill_mid_hand_then_restart_the_game_goes_on(clean_redis: str) -> None:
    first = node(clean_redis)
    try:
        a, b, _ = await two_humans_and_bots(first, "A", "B")
        # Play a few tricks, then kill the node without warning.
        for c in (a, b):
            p = await c.next_event("your_turn")
            await c.request("pass", cards=p["legal"][:3])
        await asyncio.sleep(0.3)
        before = (await a.request("view"))["view"]
        first.kill()
        second = ServerProcess(redis_url=clean_redis, port=first.port).start()
        try:
            a2 = await reconnect(second, a)
            b2 = await reconnect(second, b)
            after = (await a2.request("view"))["view"]
            # Every acknowledged move is there: same hand, same cards played.
            assert (
                after["game"]["tricks"][: len(before["game"]["tricks"])] == before["game"]["tricks"]
            )
            assert after["game"]["hand_number"] == before["game"]["hand_number"]
            await act_on_view(a2)
            await act_on_view(b2)
            results = await asyncio.gather(play_to_the_end(a2), play_to_the_end(b2, seed=1))
            assert results[0]["scores"] == results[1]["scores"]
            assert max(results[0]["scores"]) >= 50
        finally:
            second.stop()
    finally:
        first.stop()


async def test_a_room_whose_seats_are_spread_over_three_nodes_plays_a_whole_game(
    clean_redis: str,
) -> None:
    """Routing only saves round trips: each node's actor reloads on the others' commits."""
    nodes = [node(clean_redis) for _ in range(3)]
    try:
        a = await new_player(nodes[0], "On one")
        b = await new_player(nodes[1], "On two")
        c = await new_player(nodes[2], "On three")
        d = await new_player(nodes[1], "Also two")
        room = await open_table(nodes[0], a)
        for k, client in enumerate((b, c, d), start=1):
            assert (await client.request("join", room=room))["seat"] == k
        await a.request("start")
        results = await asyncio.gather(
            *(play_to_the_end(x, seed=i) for i, x in enumerate((a, b, c, d)))
        )
        assert all(r["scores"] == results[0]["scores"] for r in results)
        for x in (a, b, c, d):
            assert x.verdicts and all(v == [] for v in x.verdicts.values()), x.verdicts
            absent = [f["absent"] for f in x.frames if f.get("event") == "hand_started"]
            assert all(not seats for seats in absent), "a seat was dealt a stand-in secret"
            await x.close()
    finally:
        for n in nodes:
            n.stop()


async def test_a_clock_fires_on_another_node_after_its_node_is_killed(clean_redis: str) -> None:
    clocks = {
        "HEARTS_GRACE_PASS": "0.3",
        "HEARTS_GRACE_PLAY": "0.3",
        "HEARTS_BANK": "0.5",
        "HEARTS_BOOT_WINDOW": "0.5",
        "HEARTS_LAG_CAP": "0.1",
    }
    one = node(clean_redis, **clocks)
    two = node(clean_redis, **clocks)
    try:
        idle = await new_player(one, "Idle")
        # Alone with bots the clock boots nobody unless the host turned it on: turn it on.
        room = await open_table(one, idle, {"target": 50, "solo_clock": True})
        await idle.request("fill_bots", level="random")
        await idle.request("start")
        watcher = await new_player(two, "Watcher")
        await watcher.request("join", room=room)
        one.kill()  # the node that served the idle player dies while its clock runs
        replaced = await watcher.next_event("replaced", timeout=20)
        assert replaced["seat"] == 0 and replaced["reason"] == "silent"
        over = await watcher.next_event("game_over", timeout=60)
        assert max(over["scores"]) >= 50
        await watcher.close()
    finally:
        one.stop()
        two.stop()


async def test_after_a_whole_service_outage_nobody_is_booted_for_the_downtime(
    clean_redis: str,
) -> None:
    clocks = {"HEARTS_GRACE_PASS": "1", "HEARTS_BANK": "1", "HEARTS_OUTAGE_AFTER": "1"}
    first = node(clean_redis, **clocks)
    player = await new_player(first, "Patient")
    room = await open_table(first, player, {"target": 50, "solo_clock": True})  # a clock that boots
    await player.request("fill_bots", level="random")
    await player.request("start")
    prompt = await player.next_event("your_turn")
    first.kill()
    await asyncio.sleep(3.5)  # longer than grace + bank: the clock would have run out
    second = ServerProcess(redis_url=clean_redis, port=first.port, **clocks).start()
    try:
        back = await reconnect(second, player)
        view = (await back.request("view"))["view"]
        assert view["seats"][0]["bot"] is False, "booted for the server's outage"
        assert view["seats"][0]["out_of_time"] is False
        await back.request("pass", cards=prompt["legal"][:3])
        assert room == back.room
        await back.close()
    finally:
        second.stop()


async def test_a_killed_nodes_sockets_stop_counting_as_present(clean_redis: str) -> None:
    """Presence counts sockets; a node killed with -9 never says its sockets closed."""
    env = {"HEARTS_NODE_TTL": "1", "HEARTS_GRACE_PASS": "60"}
    doomed, survivor = node(clean_redis, **env), node(clean_redis, **env)
    try:
        a = await new_player(survivor, "A")
        room = await open_table(survivor, a)
        b_ident = await new_player(survivor, "B")
        token = b_ident.identity["token"]  # type: ignore[attr-defined]
        await b_ident.close()
        b = await HeartsClient.connect(doomed.ws, token)
        await b.request("join", room=room)
        await a.request("fill_bots", level="random")
        await a.request("start")
        assert (await a.request("view"))["view"]["seats"][1]["connected"] is True
        doomed.kill()
        event = await a.next_event(
            lambda e: e["event"] == "connection" and e["seat"] == 1, timeout=15
        )
        assert event["connected"] is False
        assert (await a.request("view"))["view"]["seats"][0]["connected"] is True
        await a.close()
    finally:
        doomed.stop()
        survivor.stop()
