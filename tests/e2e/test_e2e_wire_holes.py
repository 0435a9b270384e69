"""The wire keeps its word, through real sockets: presence by sockets, refused joins change
nothing, deep nesting and bad UTF-8 are plain errors, ids are echoed, options in words."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import pytest
import websockets

from protocol.client import HeartsClient
from tests.support.client_bots import new_player, two_humans_and_bots
from tests.support.server_process import ServerProcess

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def server() -> Iterator[ServerProcess]:
    proc = ServerProcess(HEARTS_RECONNECT="1", HEARTS_GRACE_PASS="30").start()
    yield proc
    proc.stop()


async def seated_pair(server: ServerProcess) -> tuple[HeartsClient, HeartsClient, str]:
    host, guest, room = await two_humans_and_bots(server, "Hana", "Gina")
    return host, guest, room


async def test_a_second_tab_closing_does_not_disconnect_the_seat(server: ServerProcess) -> None:
    host, guest, room = await seated_pair(server)
    tab = await HeartsClient.connect(server.ws, guest.identity["token"])  # type: ignore[attr-defined]
    assert (await tab.request("join", room=room))["seat"] == 1
    await tab.close()
    await asyncio.sleep(1.5)  # past the reconnect grace of 1 s
    view = (await host.request("view"))["view"]
    assert view["seats"][1]["connected"] is True
    with pytest.raises(Exception) as e:
        await host.request("boot", seat=1)
    assert getattr(e.value, "code", None) == "not_bootable"
    assert not [
        f for f in host.frames if f.get("event") == "connection" and f.get("connected") is False
    ]
    await guest.close()  # the last socket: now the seat is away
    event = await host.next_event(lambda e: e["event"] == "connection")
    assert event == {**event, "seat": 1, "connected": False}
    await host.close()


@pytest.mark.parametrize("code", ["nosuchroom", None])
async def test_a_refused_join_leaves_the_socket_in_its_room(
    server: ServerProcess, code: str | None
) -> None:
    host, guest, room = await seated_pair(server)
    wrong = code or (room.swapcase() if room.swapcase() != room else room + "x")
    for kind, fields in (("join", {}), ("resume", {"seq": 0})):
        with pytest.raises(Exception) as e:
            await guest.request(kind, room=wrong, **fields)
        assert getattr(e.value, "code", None) == "room_not_found"
    view = (await guest.request("view"))["view"]  # not "not_in_room"
    assert view["room"] == room and view["you"] == 1
    # Still hooked up: the guest still gets its prompts.
    prompt = await guest.next_event("your_turn")
    await guest.request("pass", cards=prompt["legal"][:3])
    await host.close()
    await guest.close()


async def test_deep_nesting_and_bad_utf8_are_errors_without_tracebacks(
    server: ServerProcess,
) -> None:
    client = await HeartsClient.connect(server.ws, binary=False)
    deep = '{"type":"ping","id":1,"t":' + "[" * 1000 + "]" * 1000 + "}"
    assert len(deep) < 4096
    for _ in range(3):
        await client.send_raw(deep)
        error = await client.next_event("error")
        assert error["code"] == "malformed_frame" and error["re"] is None
    assert (await client.request("ping", t=1.0))["server_time"] > 0
    await client.close()
    async with websockets.connect(server.ws, subprotocols=["hearts.v1.json"]) as ws:
        await ws.send(b'{"type":"ping","id":"\xff\xfe"}', text=True)
        with pytest.raises(websockets.ConnectionClosed) as closed:
            await asyncio.wait_for(ws.recv(), 5)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1007
    await asyncio.sleep(0.3)
    assert "Traceback" not in server.log()


async def test_every_readable_id_is_echoed(server: ServerProcess) -> None:
    client = await HeartsClient.connect(server.ws, binary=False)
    for cid in ("", 2**53 + 7, -5, "z" * 64):
        await client.send_raw(json.dumps({"type": "ping", "id": cid}))
        await client.send_raw(json.dumps({"type": "play", "id": cid, "card": "2C"}))
        error = await client.next_event("error")  # frames are answered in order
        assert error["re"] == cid and error["code"] == "not_authenticated"
        assert [f["type"] for f in client.frames[-2:]] == ["ok", "error"]
        assert client.frames[-2]["re"] == cid
    await client.send_raw(json.dumps({"type": "ping", "id": 2**64}))
    assert (await client.next_event("error"))["re"] is None
    await client.close()


async def test_a_bad_option_says_which_and_what_it_allows(server: ServerProcess) -> None:
    host = await new_player(server, "Picky")
    with pytest.raises(Exception) as e:
        await host.request("open_room", options={"moon": "x"})
    assert getattr(e.value, "code", None) == "bad_option"
    message = str(getattr(e.value, "message", ""))
    assert "moon" in message and "shooter_chooses" in message and "valid Moon" not in message
    await host.close()
