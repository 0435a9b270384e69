"""Hostile input through a real socket: every error code, nothing changed, policy closes."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator

import msgpack
import pytest
import websockets
from websockets.typing import Subprotocol

from protocol.client import CommandError, HeartsClient
from tests.support.client_bots import new_player, open_table, play_to_the_end
from tests.support.server_process import ServerProcess

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def server() -> Iterator[ServerProcess]:
    proc = ServerProcess().start()
    yield proc
    proc.stop()


async def error_of(client: HeartsClient, kind: str, **fields: object) -> str:
    with pytest.raises(CommandError) as e:
        await client.request(kind, **fields)
    assert e.value.message  # a sentence for people, never a stack trace
    assert "Traceback" not in e.value.message
    return e.value.code


async def raw_error(client: HeartsClient, frame: bytes | str) -> dict[str, object]:
    await client.send_raw(frame)
    return await client.next_event("error")


async def view_of(client: HeartsClient) -> dict[str, object]:
    view = (await client.request("view"))["view"]
    view.pop("seats")  # clocks inside move with time; everything else must not change
    return view


async def test_before_auth_only_auth_is_accepted(server: ServerProcess) -> None:
    client = await HeartsClient.connect(server.ws)
    assert await error_of(client, "join", room="abcdefgh") == "not_authenticated"
    assert await error_of(client, "auth", token="forged.token") == "bad_token"
    await client.close()


async def test_every_error_code_is_answered_and_changes_nothing(server: ServerProcess) -> None:
    host = await new_player(server, "Host")
    other = await new_player(server, "Other")
    assert await error_of(host, "play", card="2C") == "not_in_room"
    assert await error_of(host, "join", room="nosuchroom") == "room_not_found"
    assert await error_of(host, "auth", token=host.identity["token"]) == "already_authenticated"  # type: ignore[attr-defined]
    room = await open_table(server, host)
    await other.request("join", room=room)
    assert await error_of(other, "fill_bots") == "not_host"
    assert await error_of(host, "start") == "not_ready"
    await host.request("fill_bots", level="random")
    assert await error_of(host, "rematch") == "game_not_over"
    await host.request("start")
    prompt = await host.next_event("your_turn")
    watcher = await new_player(server, "Watcher")
    assert (await watcher.request("join", room=room))["seat"] is None
    before = await view_of(host)
    hand = prompt["legal"]
    assert await error_of(host, "play", card=hand[0]) == "wrong_phase"
    assert await error_of(host, "pass", cards=hand[:2]) == "bad_field"
    assert await error_of(host, "pass", cards=[hand[0], hand[0], hand[1]]) == "bad_field"
    missing = next(c for c in ("2C", "3C", "AS", "AH", "QS", "KD") if c not in hand)
    assert await error_of(host, "pass", cards=[missing, hand[0], hand[1]]) == "card_not_in_hand"
    assert await error_of(host, "play", card="ZZ") == "bad_field"
    assert await error_of(host, "boot", seat=1) == "not_bootable"
    assert await error_of(host, "boot", seat=7) == "bad_field"
    assert await error_of(host, "revoke", seat=1) == "wrong_phase"
    assert await error_of(host, "moon", choice="shooter_minus_26") == "wrong_phase"
    assert await error_of(host, "start") == "game_in_progress"
    assert await error_of(watcher, "pass", cards=hand[:3]) == "not_seated"
    assert await view_of(host) == before
    await watcher.close()
    await host.request("pass", cards=hand[:3])
    assert await error_of(host, "pass", cards=hand[3:6]) in ("already_passed", "wrong_phase")
    other_task = asyncio.create_task(play_to_the_end(other))
    # Now in play: wait for the host's turn and try the rules' refusals.
    turn = await host.next_event(lambda e: e["event"] == "your_turn" and e["phase"] == "playing")
    view = (await host.request("view"))["view"]
    mine = view["game"]["hand"]
    illegal = [c for c in mine if c not in turn["legal"]]
    before = await view_of(host)
    if illegal:
        code = await error_of(host, "play", card=illegal[0])
        assert code in (
            "must_follow_suit",
            "must_lead_two_of_clubs",
            "no_points_on_first_trick",
            "hearts_not_broken",
        )
    assert await view_of(host) == before
    other_task.cancel()
    await host.close()
    await other.close()


async def test_malformed_frames_are_errors_not_crashes(server: ServerProcess) -> None:
    client = await new_player(server, "Fuzzy")
    for frame in [b"\xc1\xff\x00garbage", b"\x93\x01\x02", msgpack.packb([1, 2, 3]), b""]:
        error = await raw_error(client, frame)
        assert error["code"] == "malformed_frame" and error["re"] is None
    error = await raw_error(client, msgpack.packb({"type": "dance", "id": 5}))
    assert error == {
        "event": "error",
        "type": "error",
        "re": 5,
        "code": "unknown_type",
        "message": error["message"],
    }
    error = await raw_error(client, msgpack.packb({"type": "play", "id": 6, "card": "2C", "x": 1}))
    assert error["code"] == "bad_field" and error["re"] == 6
    error = await raw_error(client, msgpack.packb({"type": "play"}))
    assert error["code"] == "bad_field" and error["re"] is None
    error = await raw_error(client, "a text frame on the binary subprotocol")
    assert error["code"] == "malformed_frame"
    assert (await client.request("ping", t=1.0))["server_time"] > 0  # still alive and well
    await client.close()


async def test_json_subprotocol_rejects_non_json(server: ServerProcess) -> None:
    client = await HeartsClient.connect(server.ws, binary=False)
    for frame in ["{not json", "[1,2]", "null"]:
        assert (await raw_error(client, frame))["code"] == "malformed_frame"
    await client.close()


async def test_an_oversize_frame_closes_with_a_policy_code(server: ServerProcess) -> None:
    client = await new_player(server, "Big")
    await client.send_raw(msgpack.packb({"type": "ping", "id": 1, "t": 1, "pad": "x" * 100_000}))
    code, _ = await asyncio.wait_for(client.closed, 10)
    assert code == 1009
    await client.close()


async def test_a_flood_closes_with_a_policy_code(server: ServerProcess) -> None:
    client = await new_player(server, "Flood")
    frame = msgpack.packb({"type": "ping", "id": 1})
    with contextlib.suppress(websockets.ConnectionClosed):
        for _ in range(2000):
            await client.send_raw(frame)
    code, reason = await asyncio.wait_for(client.closed, 10)
    assert (code, reason) == (1008, "flood")


async def closing_error(
    url: str, frames: list[bytes]
) -> tuple[list[dict[str, object]], int | None, str]:
    """Send ``frames`` on a fresh msgpack socket; the errors it got, then its close."""
    errors: list[dict[str, object]] = []
    async with websockets.connect(url, subprotocols=[Subprotocol("hearts.v1.msgpack")]) as ws:
        with contextlib.suppress(websockets.ConnectionClosed):
            for frame in frames:
                await ws.send(frame)
        with contextlib.suppress(websockets.ConnectionClosed):
            while True:
                answer = msgpack.unpackb(await asyncio.wait_for(ws.recv(), 10))
                if answer.get("type") == "error":
                    errors.append(answer)
        return errors, ws.close_code, ws.close_reason or ""


async def test_a_flood_is_told_before_the_close_and_a_frame_too_large_is_closed(
    server: ServerProcess,
) -> None:
    """docs/protocol.md, "Limits": a flood gets the error ``rate_limited``, then the close 1008
    "flood"; a frame over 4096 bytes is closed with 1009 by the WebSocket layer, unread."""
    errors, code, reason = await closing_error(
        server.ws, [msgpack.packb({"type": "ping", "id": 1})] * 400
    )
    assert (code, reason) == (1008, "flood")
    assert [e["code"] for e in errors] == ["not_authenticated"] * (len(errors) - 1) + [
        "rate_limited"
    ]
    assert errors[-1]["re"] is None and errors[-1]["message"]
    big = msgpack.packb({"type": "ping", "id": 2, "pad": "x" * 5000})
    errors, code, reason = await closing_error(server.ws, [big])
    assert code == 1009 and errors == []


async def test_an_unknown_subprotocol_is_refused(server: ServerProcess) -> None:
    with pytest.raises(websockets.InvalidHandshake):
        async with websockets.connect(server.ws, subprotocols=["chat.v9"]) as ws:
            await ws.recv()


async def test_health_readiness_and_metrics(server: ServerProcess) -> None:
    import urllib.request

    with urllib.request.urlopen(server.base + "/healthz") as resp:
        assert resp.read() == b"ok"
    with urllib.request.urlopen(server.base + "/readyz") as resp:
        assert resp.read() == b"ready"
    client = await new_player(server, "Counted")
    await client.request("ping", t=1.0)
    with urllib.request.urlopen(server.base + "/metrics") as resp:
        text = resp.read().decode()
    gauge = next(line for line in text.splitlines() if line.startswith("hearts_connections "))
    assert float(gauge.split()[1]) >= 1
    assert 'hearts_commands_total{outcome="ok",type="auth"}' in text
    assert "hearts_command_seconds_bucket" in text
    # The node's loop-lag timer has been running since start-up, 20 samples a second.
    count = next(
        line for line in text.splitlines() if line.startswith("hearts_event_loop_lag_seconds_count")
    )
    assert float(count.split()[1]) >= 1
    # The node's memory, for leaks (server/ops/metrics.py: not a walk of the frozen objects).
    rss = next(line for line in text.splitlines() if line.startswith("process_resident_memory"))
    assert float(rss.split()[1]) > 10_000_000
    assert "hearts_gc_frozen_objects" not in text
    await client.close()
