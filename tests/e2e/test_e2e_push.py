"""Web Push end to end: real server processes, real sockets, the test suite's push service.

A correspondence game whose seat has no socket gets exactly one push per turn; the push API
refuses bad subscriptions; a 410 deletes the device; a push service that fails for a while
delays pushes and loses none; a node killed between the commit and the push does not lose it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import pytest

from protocol.account_api import (
    CommandError,
    account_call,
    push_devices,
    push_key,
    set_push_settings,
    subscribe_push,
    unsubscribe_push,
)
from protocol.client import HeartsClient
from tests.support.client_bots import new_player, open_table, play_to_the_end
from tests.support.push_service import PushService, Subscription
from tests.support.server_process import ServerProcess

pytestmark = pytest.mark.e2e

PUSH_ENV = {
    "HEARTS_PUSH_ALLOW_LOOPBACK": "1",  # the test push service is on 127.0.0.1
    "HEARTS_PUSH_INTERVAL": "0",  # every turn pushed, however fast the bots play
    "HEARTS_PUSH_RETRY": "1",  # retries 1, 2, 4 … s apart
}


@pytest.fixture
def push_service() -> Iterator[PushService]:
    with PushService() as service:
        yield service


@pytest.fixture
def server() -> Iterator[ServerProcess]:
    node = ServerProcess(**PUSH_ENV).start()
    yield node
    node.stop()


async def wait_for(test: Any, timeout: float = 30.0, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not test():
        assert time.monotonic() < deadline, f"timed out waiting for {what or test}"
        await asyncio.sleep(0.05)


async def correspondence_table(
    server: ServerProcess, push_service: PushService, devices: int = 1
) -> tuple[HeartsClient, dict[str, Any], str, list[Subscription]]:
    """Ann at the table; Bob seated, his devices subscribed, his socket closed; two bots."""
    ann = await new_player(server, "Ann")
    bob = await new_player(server, "Bob")
    room = await open_table(server, ann, {"target": 50, "pace": "correspondence"})
    await bob.request("join", room=room)
    token = bob.identity["token"]  # type: ignore[attr-defined]
    key = await push_key(server.base)
    subs = [push_service.subscribe(application_server_key=key) for _ in range(devices)]
    for sub in subs:
        await subscribe_push(server.base, token, sub.to_json(), label="Bob's phone")
    identity = bob.identity  # type: ignore[attr-defined]
    await bob.close()
    await ann.request("fill_bots", level="random")
    await ann.request("start")
    return ann, identity, room, subs


async def bob_moves(server: ServerProcess, identity: dict[str, Any], room: str) -> None:
    """Bob opens the table, makes the decision it waits for, and closes it again."""
    bob = await HeartsClient.connect(server.ws, identity["token"])
    try:
        await bob.request("join", room=room)
        view = (await bob.request("view"))["view"]
        seat, game = view["you"], view["game"]
        assert seat in view["deciding"], view["deciding"]
        if game["phase"] == "passing":
            await bob.request("pass", cards=game["hand"][:3])
        elif game["phase"] == "playing":
            await bob.request("play", card=game["legal"][0])
        else:
            await bob.request("moon", choice="others_26")
    finally:
        await bob.close()


async def test_an_away_correspondence_seat_gets_exactly_one_push_per_turn(
    server: ServerProcess, push_service: PushService
) -> None:
    ann, bob, room, [phone] = await correspondence_table(server, push_service)
    playing = asyncio.create_task(play_to_the_end(ann, timeout=300))
    try:
        for turn in range(1, 6):
            await wait_for(lambda t=turn: len(phone.delivered()) >= t, what=f"push {turn}")
            await asyncio.sleep(0.5)  # ... and no second one for the same turn
            assert len(phone.delivered()) == turn, [r.payload for r in phone.received()]
            push = phone.delivered()[-1]
            assert push.payload == {
                "title": "Your turn at Ann's table",
                "body": "The table is waiting for you.",
                "kind": "turn",
                "room": room,
                "url": f"/r/{room}",
                "tag": f"room-{room}",
            }
            assert push.headers["urgency"] == "normal" and int(push.headers["ttl"]) > 0
            await bob_moves(server, bob, room)
        assert all(r.status == 201 for r in phone.received()), [r.error for r in phone.received()]
    finally:
        playing.cancel()
        await ann.close()


async def test_a_410_deletes_the_device_and_the_other_still_gets_its_push(
    server: ServerProcess, push_service: PushService
) -> None:
    ann, bob, _room, [kept, gone] = await correspondence_table(server, push_service, devices=2)
    gone.respond(410)
    await wait_for(lambda: kept.delivered() and gone.received(), what="the first pushes")
    for _ in range(50):
        devices = await push_devices(server.base, bob["token"])
        if len(devices["devices"]) == 1:
            break
        await asyncio.sleep(0.1)
    assert [d["label"] for d in devices["devices"]] == ["Bob's phone"]
    assert devices["settings"]["turn_correspondence"] is True
    await ann.close()


async def test_a_push_service_failing_for_a_while_delays_the_push_and_loses_none(
    server: ServerProcess, push_service: PushService
) -> None:
    push_service.respond(500, times=3)  # three failures, then 201 (retries 1, 2, 4 s apart)
    ann, _bob, _room, [phone] = await correspondence_table(server, push_service)
    await wait_for(lambda: phone.delivered(), timeout=60, what="the push after the failures")
    await asyncio.sleep(2.0)
    statuses = [r.status for r in phone.received()]
    assert statuses == [500, 500, 500, 201], statuses
    waits = [b.at - a.at for a, b in zip(phone.received(), phone.received()[1:], strict=False)]
    assert waits[1] > waits[0] * 1.5, waits  # backing off
    await ann.close()


async def test_the_push_api_refuses_bad_subscriptions_and_keeps_settings(
    server: ServerProcess, push_service: PushService
) -> None:
    player = await new_player(server, "Cleo")
    token = player.identity["token"]  # type: ignore[attr-defined]
    good = push_service.subscribe().to_json()
    bad: list[dict[str, Any]] = [
        {**good, "endpoint": "http://push.example.org/x"},
        {**good, "endpoint": "https://10.0.0.8/x"},
        {**good, "endpoint": "https://push.example.org/" + "x" * 2100},
        {**good, "endpoint": "https://user:pw@push.example.org/x"},
        {**good, "keys": {"p256dh": good["keys"]["p256dh"][:-4], "auth": good["keys"]["auth"]}},
        {**good, "keys": {"p256dh": "BA" + "A" * 85, "auth": good["keys"]["auth"]}},  # not a point
        {**good, "keys": {"p256dh": good["keys"]["p256dh"], "auth": "AAAA"}},
        {"endpoint": good["endpoint"]},
    ]
    for subscription in bad:
        with pytest.raises(CommandError) as refused:
            await subscribe_push(server.base, token, subscription)
        assert refused.value.code == "bad_subscription" and refused.value.args[0].endswith(".")
    with pytest.raises(CommandError) as no_token:
        await subscribe_push(server.base, "nonsense", good)
    assert no_token.value.code == "bad_token"
    for _ in range(10):
        await subscribe_push(server.base, token, push_service.subscribe().to_json())
    with pytest.raises(CommandError) as eleventh:
        await subscribe_push(server.base, token, good)
    assert eleventh.value.code == "too_many_devices"
    listed = (await push_devices(server.base, token))["devices"]
    assert len(listed) == 10 and all("endpoint" not in d for d in listed)
    first = push_service.subscriptions[next(iter(push_service.subscriptions))]
    assert not await unsubscribe_push(server.base, token, first.endpoint)  # never kept
    assert await set_push_settings(server.base, token, game_end=False) == {
        "turn_correspondence": True,
        "turn_live": True,
        "waited": True,
        "game_end": False,
    }
    with pytest.raises(CommandError) as unknown:
        await set_push_settings(server.base, token, lunch=True)
    assert unknown.value.code == "bad_field"
    key = account_call(f"{server.base}/api/push/key", None)["key"]
    assert len(key) == 87
    await player.close()


async def test_a_node_killed_between_the_commit_and_the_push_does_not_lose_it(
    clean_redis: str, push_service: PushService
) -> None:
    first = ServerProcess(redis_url=clean_redis, **PUSH_ENV).start()
    second = None
    try:
        push_service.hold()  # the first node's push never gets an answer
        ann, _bob, _room, [phone] = await correspondence_table(first, push_service)
        await wait_for(lambda: push_service.held > 0, what="the first node's push")
        first.kill()
        push_service.release(drop=True)
        second = ServerProcess(redis_url=clean_redis, **PUSH_ENV).start()
        await wait_for(lambda: phone.delivered(), what="the second node's push")
        [push] = phone.delivered()
        assert push.payload is not None and push.payload["title"] == "Your turn at Ann's table"
        await ann.close()
    finally:
        first.kill()
        if second is not None:
            second.stop()


async def test_your_games_lists_every_seat_your_turn_first(
    server: ServerProcess, push_service: PushService
) -> None:
    from protocol.account_api import my_games

    ann, bob, room, _ = await correspondence_table(server, push_service)
    second = await open_table(server, ann, {"target": 50})  # open, not started
    for _ in range(100):  # the shuffle: Bob's seat is absent from it, then the pass
        games = await my_games(server.base, bob["token"])
        if games and games[0]["your_turn"]:
            break
        await asyncio.sleep(0.1)
    [entry] = games
    assert entry["room"] == room and entry["link"] == f"/r/{room}"
    assert entry["pace"] == "correspondence" and entry["table"] == "Ann"
    assert entry["your_turn"] and entry["waited"] >= 0 and "hand" not in entry
    assert entry["seats"][entry["seat"]]["away"] is True
    ann_games = await my_games(server.base, ann.identity["token"])  # type: ignore[attr-defined]
    assert [g["room"] for g in ann_games] == [room, second]  # the game in play, then the open one
    with pytest.raises(CommandError) as refused:
        await my_games(server.base, "nonsense")
    assert refused.value.code == "bad_token"
    await ann.request("leave")  # Ann leaves the open table she is in now: its seat is freed
    for _ in range(50):
        ann_games = await my_games(server.base, ann.identity["token"])  # type: ignore[attr-defined]
        if len(ann_games) == 1:
            break
        await asyncio.sleep(0.1)
    assert [g["room"] for g in ann_games] == [room]
    await ann.close()
