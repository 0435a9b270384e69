"""The Python client survives a dropped socket: against a scripted stand-in server, so each drop
lands exactly where the test wants it (in flight, between commit and answer, after a refusal)."""

from __future__ import annotations

import asyncio
import gc
import random
from collections.abc import Awaitable, Callable
from typing import Any

import msgpack
import pytest
from websockets.asyncio.server import ServerConnection, serve

from protocol.client import Backoff, CommandError, HeartsClient, OutcomeUnknown
from protocol.codec import MSGPACK
from protocol.reconnect import survivable, with_room

FAST = Backoff(first=0.01, longest=0.05, give_up_after=3)
ROOM = "ROOM1"
SHUFFLE = {
    "type": "event",
    "room": ROOM,
    "seq": 6,
    "event": "shuffle_commit",
    "game": "g1",
    "hand": 1,
    "server_commitment": "ab" * 32,
    "deadline": 0,
}

Script = Callable[["Peer"], Awaitable[None]]


class Peer:
    """One connection to the stand-in server, as its script sees it."""

    def __init__(self, ws: ServerConnection) -> None:
        self.ws = ws
        self.path = ws.request.path if ws.request is not None else ""
        self.received: list[dict[str, Any]] = []

    async def recv(self) -> dict[str, Any]:
        message = msgpack.unpackb(await self.ws.recv())
        self.received.append(message)
        return message

    async def send(self, message: dict[str, Any]) -> None:
        await self.ws.send(msgpack.packb(message))

    async def answer(self, expect: str, **reply: Any) -> dict[str, Any]:
        command = await self.recv()
        assert command["type"] == expect, command
        await self.send({"type": "ok", "re": command["id"], **reply})
        return command

    async def enter(self) -> None:
        await self.answer("auth", player="p", name="P")
        await self.answer("join", room=ROOM, seat=0, view={"seq": 5})

    def drop(self) -> None:
        """The node dies: no close frame, the client sees 1006."""
        assert self.ws.transport is not None
        self.ws.transport.abort()


class StandIn:
    """A WebSocket server that plays one script per connection, in order."""

    def __init__(self, *scripts: Script) -> None:
        self.scripts = list(scripts)
        self.peers: list[Peer] = []
        self.done = asyncio.Event()

    async def __aenter__(self) -> StandIn:
        self.server = await serve(self._handle, "127.0.0.1", 0, subprotocols=[MSGPACK])
        port = next(iter(self.server.sockets)).getsockname()[1]
        self.url = f"ws://127.0.0.1:{port}/ws"
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.server.close()
        await self.server.wait_closed()

    async def _handle(self, ws: ServerConnection) -> None:
        peer = Peer(ws)
        number = len(self.peers)
        self.peers.append(peer)
        if number >= len(self.scripts):
            await ws.close(1013)
            return
        await self.scripts[number](peer)
        if number == len(self.scripts) - 1:
            self.done.set()
        await ws.wait_closed()


@pytest.fixture
async def unretrieved() -> Any:
    """Collects every "exception was never retrieved" the event loop reports."""
    loop = asyncio.get_running_loop()
    seen: list[str] = []
    previous = loop.get_exception_handler()
    loop.set_exception_handler(lambda _loop, context: seen.append(context["message"]))
    yield seen
    gc.collect()
    loop.set_exception_handler(previous)


def no_unretrieved(seen: list[str]) -> None:
    gc.collect()
    assert not [m for m in seen if "never retrieved" in m], seen


async def test_an_in_flight_commit_is_sent_again_with_the_same_commitment(
    unretrieved: list[str],
) -> None:
    async def first(peer: Peer) -> None:
        await peer.enter()
        await peer.send(SHUFFLE)
        assert (await peer.recv())["type"] == "commit"
        peer.drop()  # the commit may have been applied: the answer never comes

    async def second(peer: Peer) -> None:
        await peer.answer("auth", player="p", name="P")
        resume = await peer.answer("resume", room=ROOM, seat=0, resumed=True, missed=0)
        assert resume["room"] == ROOM and resume["seq"] == 6
        await peer.answer("commit", seq=7, first_seq=7)

    async with StandIn(first, second) as node:
        client = await HeartsClient.connect(node.url, "token", reconnect=FAST)
        await client.request("join", room=ROOM)
        reconnected = await client.next_event("reconnected", timeout=5)
        await asyncio.wait_for(node.done.wait(), 5)
        one, two = node.peers
        commits = [m["commitment"] for p in (one, two) for m in p.received if m["type"] == "commit"]
        assert len(commits) == 2 and commits[0] == commits[1]
        assert two.path == f"/ws?room={ROOM}"  # routed by room once it knows its room
        assert reconnected["unknown"] == [] and reconnected["resumed"]["resumed"] is True
        assert client.reconnects == 1 and client.unknown_outcomes == []
        await client.close()
    no_unretrieved(unretrieved)


async def test_a_view_after_the_resume_commits_the_same_secret_again() -> None:
    pending = {k: SHUFFLE[k] for k in ("game", "hand", "server_commitment", "deadline")}
    view = {"seq": 6, "shuffle": {"phase": "commit", "committed": [False] * 4, **pending}}

    async def first(peer: Peer) -> None:
        await peer.enter()
        await peer.send(SHUFFLE)
        assert (await peer.recv())["type"] == "commit"
        peer.drop()

    async def second(peer: Peer) -> None:
        await peer.answer("auth", player="p", name="P")
        await peer.answer("resume", room=ROOM, seat=0, view=view)  # events were trimmed
        await peer.answer("commit", seq=7, first_seq=7)
        again = await peer.recv()
        await peer.send({"type": "error", "re": again["id"], "code": "wrong_phase", "message": "."})

    async with StandIn(first, second) as node:
        client = await HeartsClient.connect(node.url, "token", reconnect=FAST)
        await client.request("join", room=ROOM)
        await asyncio.wait_for(node.done.wait(), 5)
        commits = {m["commitment"] for p in node.peers for m in p.received if m["type"] == "commit"}
        assert len(commits) == 1, "a second secret for the same hand could never be revealed"
        await client.close()


async def test_a_move_in_flight_raises_outcome_unknown_after_the_resume(
    unretrieved: list[str],
) -> None:
    async def first(peer: Peer) -> None:
        await peer.enter()
        assert (await peer.recv())["type"] == "play"
        peer.drop()

    async def second(peer: Peer) -> None:
        await peer.answer("auth", player="p", name="P")
        await peer.answer("resume", room=ROOM, seat=0, view={"seq": 9})
        await peer.answer("view", view={"seq": 9})

    async with StandIn(first, second) as node:
        client = await HeartsClient.connect(node.url, "token", reconnect=FAST)
        await client.request("join", room=ROOM)
        with pytest.raises(OutcomeUnknown) as e:
            await client.request("play", card="2C")
        assert e.value.code == "outcome_unknown" and e.value.message
        assert e.value.command.type == "play" and e.value.command.fields == {"card": "2C"}
        assert e.value.command.reason == "connection_lost"
        assert e.value.resumed is not None and e.value.resumed["view"]["seq"] == 9
        assert client.seq == 9
        assert [u.type for u in client.unknown_outcomes] == ["play"]
        # A read in flight is just sent again; the client is usable at once.
        assert (await client.request("view"))["view"]["seq"] == 9
        await client.close()
    no_unretrieved(unretrieved)


async def test_the_server_s_outcome_unknown_is_resolved_by_resuming(
    unretrieved: list[str],
) -> None:
    async def only(peer: Peer) -> None:
        await peer.enter()
        await peer.send(SHUFFLE)
        commit = await peer.recv()
        await peer.send(
            {"type": "error", "re": commit["id"], "code": "outcome_unknown", "message": "Resume."}
        )
        resume = await peer.answer("resume", room=ROOM, seat=0, resumed=True, missed=0)
        assert resume["seq"] == 6
        again = await peer.answer("commit", seq=7, first_seq=7)
        assert again["commitment"] == commit["commitment"]
        play = await peer.recv()
        await peer.send(
            {"type": "error", "re": play["id"], "code": "outcome_unknown", "message": "Resume."}
        )
        await peer.answer("resume", room=ROOM, seat=0, resumed=True, missed=0)

    async with StandIn(only) as node:
        client = await HeartsClient.connect(node.url, "token", reconnect=FAST)
        await client.request("join", room=ROOM)
        await asyncio.sleep(0.2)  # the commit is retried in the background
        with pytest.raises(OutcomeUnknown) as e:
            await client.request("play", card="2C")
        assert e.value.command.reason == "outcome_unknown"
        await asyncio.wait_for(node.done.wait(), 5)
        assert [u.type for u in client.unknown_outcomes] == ["play"]
        await client.close()
    no_unretrieved(unretrieved)


async def test_it_moves_on_to_the_next_url_when_its_node_dies() -> None:
    async def first(peer: Peer) -> None:
        await peer.enter()
        peer.drop()

    async def second(peer: Peer) -> None:
        await peer.answer("auth", player="p", name="P")
        await peer.answer("resume", room=ROOM, seat=0, resumed=True, missed=0)

    async with StandIn(first) as one, StandIn(second) as two:
        client = await HeartsClient.connect([one.url, two.url], "token", reconnect=FAST)
        await client.request("join", room=ROOM)
        event = await client.next_event("reconnected", timeout=5)
        assert event["url"] == two.url and client.url_index == 1
        await client.close()


async def test_the_first_url_that_answers_is_used() -> None:
    async def only(peer: Peer) -> None:
        await peer.answer("auth", player="p", name="P")

    async with StandIn(only) as node:
        client = await HeartsClient.connect(["ws://127.0.0.1:1/ws", node.url], "token")
        assert client.url_index == 1
        await client.close()


async def test_without_a_policy_a_drop_ends_the_client_and_fails_what_waits(
    unretrieved: list[str],
) -> None:
    async def only(peer: Peer) -> None:
        await peer.enter()
        await peer.recv()
        peer.drop()

    async with StandIn(only) as node:
        client = await HeartsClient.connect(node.url, "token")
        await client.request("join", room=ROOM)
        with pytest.raises(ConnectionError):
            await client.request("play", card="2C")
        code, _ = await asyncio.wait_for(client.closed, 5)
        assert code == 1006
        with pytest.raises(ConnectionError):
            await client.request("view")
        assert [u.type for u in client.unknown_outcomes] == ["play"]
        await client.close()
    no_unretrieved(unretrieved)


async def test_a_flood_close_is_not_reconnected() -> None:
    async def only(peer: Peer) -> None:
        await peer.enter()
        await peer.ws.close(1008, "flood")

    async with StandIn(only) as node:
        client = await HeartsClient.connect(node.url, "token", reconnect=FAST)
        await client.request("join", room=ROOM)
        code, reason = await asyncio.wait_for(client.closed, 5)
        assert (code, reason) == (1008, "flood") and len(node.peers) == 1
        await client.close()


async def test_a_refused_token_on_reconnect_stops_for_good() -> None:
    async def first(peer: Peer) -> None:
        await peer.enter()
        peer.drop()

    async def second(peer: Peer) -> None:
        auth = await peer.recv()
        await peer.send({"type": "error", "re": auth["id"], "code": "bad_token", "message": "No."})

    async with StandIn(first, second) as node:
        client = await HeartsClient.connect(node.url, "token", reconnect=FAST)
        await client.request("join", room=ROOM)
        await asyncio.wait_for(client.closed, 5)
        assert len(node.peers) == 2
        with pytest.raises(ConnectionError):
            await client.request("view")
        await client.close()


async def test_it_gives_up_after_the_policy_s_time() -> None:
    async def only(peer: Peer) -> None:
        await peer.enter()

    async with StandIn(only) as node:
        client = await HeartsClient.connect(
            node.url, "token", reconnect=Backoff(first=0.01, give_up_after=0.3)
        )
        await client.request("join", room=ROOM)
    # The stand-in server is gone: every dial fails until the client gives up.
    code, _ = await asyncio.wait_for(client.closed, 5)
    assert code is not None
    await client.close()


async def test_close_never_swallows_the_caller_s_cancellation() -> None:
    async def only(peer: Peer) -> None:
        await peer.answer("auth", player="p", name="P")

    async with StandIn(only) as node:
        client = await HeartsClient.connect(node.url, "token", reconnect=FAST)
        closing = asyncio.create_task(client.close())
        await asyncio.sleep(0)
        closing.cancel()
        with pytest.raises(asyncio.CancelledError):
            await closing
        assert closing.cancelled()
        await client.close()  # closing twice is fine
        assert client.closed.done()


def test_which_closes_are_survived() -> None:
    assert survivable(1006, "") and survivable(1012, "") and survivable(1013, "")
    assert survivable(1008, "too far behind")
    assert not survivable(1008, "flood") and not survivable(1009, "frame too large")
    assert not survivable(1000, "") and not survivable(1002, "")


def test_backoff_grows_to_its_cap_with_bounded_jitter() -> None:
    policy = Backoff(first=0.1, factor=2, longest=1, jitter=0.2)
    rng = random.Random(1)
    assert policy.delay(0, rng) == 0
    for attempt, base in [(1, 0.1), (2, 0.2), (3, 0.4), (4, 0.8), (5, 1), (9, 1)]:
        assert base * 0.8 <= policy.delay(attempt, rng) <= base * 1.2


def test_the_room_goes_into_the_url() -> None:
    assert with_room("ws://h/ws", None) == "ws://h/ws"
    assert with_room("ws://h/ws", "AbC1") == "ws://h/ws?room=AbC1"
    assert with_room("wss://h/ws?x=1&room=old", "new") == "wss://h/ws?x=1&room=new"


async def test_a_refusal_is_still_a_command_error() -> None:
    async def only(peer: Peer) -> None:
        await peer.answer("auth", player="p", name="P")
        play = await peer.recv()
        await peer.send({"type": "error", "re": play["id"], "code": "not_in_room", "message": "x"})

    async with StandIn(only) as node:
        client = await HeartsClient.connect(node.url, "token", reconnect=FAST)
        with pytest.raises(CommandError) as e:
            await client.request("play", card="2C")
        assert e.value.code == "not_in_room" and not isinstance(e.value, OutcomeUnknown)
        await client.close()
