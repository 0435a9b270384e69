"""A small asyncio client for the Hearts service (tests, load tests, scripts, bots-as-clients).

    async with await HeartsClient.connect("ws://127.0.0.1:8000/ws", token) as client:
        reply = await client.request("join", room=code)
        event = await client.next_event("your_turn")
        await client.request("play", card=event["legal"][0])

It answers the server's pings (the server measures round trips for the lag credit), keeps the
room's last sequence number for ``resume``, takes part in every shuffle, and queues every event
in arrival order.

With ``reconnect=Backoff()`` it survives a dropped socket by itself: it dials its URL again (or
the next of a list) with backoff, authenticates, resumes the room from its last ``seq``, sends
again what is safe to send again (reads, ``commit``, ``reveal``), and raises ``OutcomeUnknown``
for any other command that was in flight; ``client.unknown_outcomes`` lists them all. A
``{"event": "reconnected", ...}`` made by the client (no ``seq``) marks each reconnection.

Beside it: ``client_errors`` (what ``request`` raises), ``dialing`` (where it dials and how
patiently), ``reconnect`` (which closes it survives, what it sends again) and ``account_api``
(its HTTP calls: a guest identity, accounts). Their public names are importable from here too.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import websockets

from .account_api import guest, http_json
from .client_errors import CommandError, OutcomeUnknown, unknown_frame
from .codec import JSON, MSGPACK, Codec
from .dialing import dial_first, redial
from .fair_deal_seat import FairDealSeat
from .reconnect import (
    OUTCOME_UNKNOWN,
    RETRYABLE,
    Backoff,
    UnknownOutcome,
    survivable,
)

__all__ = [
    "Backoff",
    "CommandError",
    "HeartsClient",
    "OutcomeUnknown",
    "UnknownOutcome",
    "guest",
    "http_json",
]

CLIENT_MAX_FRAME = 2**22  # views and audits are larger than any command

_SEND_AGAIN = object()  # a pending command's future gets this to be sent on the new socket


@dataclass(slots=True)
class _Sent:
    kind: str
    fields: dict[str, Any]
    future: asyncio.Future[Any]
    internal: bool  # the client's own auth/resume while reconnecting: never sent again


def _fail(future: asyncio.Future[Any], error: BaseException) -> None:
    """Fail a future and mark its exception seen: its awaiter, if any, still gets it raised."""
    if not future.done():
        future.set_exception(error)
        future.exception()


class HeartsClient:
    def __init__(
        self,
        ws: Any,
        codec: Codec,
        *,
        urls: Sequence[str] = (),
        token: str | None = None,
        reconnect: Backoff | None = None,
        dial_options: dict[str, Any] | None = None,
    ) -> None:
        self.ws = ws
        self.codec = codec
        self.events: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.frames: list[dict[str, Any]] = []  # every frame received, for inspection
        self.room: str | None = None
        self.seat: int | None = None
        self.seq = 0  # the last seq seen of ``room``
        # The fair deal: this seat's secrets and what it saw, and each hand's verdict.
        self.fair_deal = FairDealSeat()
        self.own = self.fair_deal.own
        self.verdicts = self.fair_deal.verdicts
        # Reconnecting: where to dial, how patiently, and what was learnt on the way.
        self.urls = list(urls)
        self.url_index = 0
        self.token = token
        self.reconnect = reconnect
        self.reconnects = 0
        self.unknown_outcomes: list[UnknownOutcome] = []
        self._dial_options = dial_options or {}
        self._seen: dict[str, int] = {}  # last seq per room: a resume may replay what came
        self._tasks: set[asyncio.Task[Any]] = set()
        loop = asyncio.get_running_loop()
        self.closed: asyncio.Future[tuple[int | None, str]] = loop.create_future()
        self._ids = itertools.count(1)
        self._pending: dict[int, _Sent] = {}
        self._unsettled: list[_Sent] = []  # in flight when the socket dropped; told after resume
        self._ready = asyncio.Event()  # set while a usable (authenticated, resumed) socket is up
        self._ready.set()
        self._lost_at: float | None = None
        self._closing = False
        self._final = False  # a refusal (bad token) that reconnecting cannot cure
        self._runner = asyncio.create_task(self._run())

    @classmethod
    async def connect(
        cls,
        url: str | Sequence[str],
        token: str | None = None,
        *,
        binary: bool = True,
        reconnect: Backoff | bool | None = None,
        room: str | None = None,
        **kwargs: Any,
    ) -> HeartsClient:
        """Dial ``url`` (or the first of a list that answers) and authenticate with ``token``.

        ``reconnect``: a ``Backoff`` (or True for the default one) to survive dropped sockets.
        ``room``: add ``?room=CODE`` to the URL so a load balancer can route by room; after a
        ``join`` the client does this by itself when it reconnects.
        """
        urls = [url] if isinstance(url, str) else list(url)
        if not urls:
            raise ValueError("no URL to connect to")
        name = MSGPACK if binary else JSON
        options = {"subprotocols": [name], "max_size": CLIENT_MAX_FRAME, **kwargs}
        ws, index = await dial_first(urls, room, options)
        policy = Backoff() if reconnect is True else reconnect or None
        client = cls(
            ws,
            Codec(name, max_frame=CLIENT_MAX_FRAME),
            urls=urls,
            token=token,
            reconnect=policy,
            dial_options=options,
        )
        client.url_index = index
        if token is not None:
            try:
                await client.request("auth", token=token)
            except BaseException:
                await client.close()
                raise
        return client

    async def __aenter__(self) -> HeartsClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Close the socket and stop every task of the client.

        A cancellation of the caller is never swallowed: it propagates out of ``close``.
        """
        self._closing = True
        with contextlib.suppress(websockets.ConnectionClosed, OSError):
            await self.ws.close()
        tasks = {self._runner, *self._tasks}
        for task in tasks:
            task.cancel()
        # wait() neither raises the tasks' own CancelledError nor hides the caller's.
        await asyncio.wait(tasks)

    async def send_raw(self, frame: bytes | str) -> None:
        await self.ws.send(frame)

    async def request(self, kind: str, timeout: float = 30.0, **fields: Any) -> dict[str, Any]:
        """Send a command and wait for its ok (returned) or error (raised as CommandError).

        While reconnecting it waits for the new socket (within ``timeout``). ``OutcomeUnknown``
        (a CommandError) means the command may or may not have been applied; ConnectionError
        means the client is closed for good.
        """
        async with asyncio.timeout(timeout):
            return await self._command(kind, fields, internal=False)

    async def _command(self, kind: str, fields: dict[str, Any], internal: bool) -> dict[str, Any]:
        loop = asyncio.get_running_loop()
        while True:
            if not internal:
                await self._ready.wait()
            if self.closed.done():
                raise ConnectionError(f"connection closed ({self.closed.result()[0]})")
            cid = next(self._ids)
            sent = _Sent(kind, fields, loop.create_future(), internal)
            self._pending[cid] = sent
            # On a dropped socket the runner settles this command's future.
            with contextlib.suppress(websockets.ConnectionClosed):
                await self.ws.send(self.codec.encode({"type": kind, "id": cid, **fields}))
            try:
                reply = await sent.future
            finally:
                self._pending.pop(cid, None)
            if reply is _SEND_AGAIN:
                continue
            if reply["type"] == "error":
                raise CommandError(reply["code"], reply["message"], reply)
            return dict(reply)

    def _entered(self, kind: str, fields: dict[str, Any], reply: dict[str, Any]) -> None:
        """After ``join``, ``resume`` or ``open_room``: the room, the seat and where its log is."""
        if kind not in ("join", "resume", "open_room") or "room" not in reply:
            return
        room = reply["room"]
        self.room = room
        self.seat = reply.get("seat")
        if "view" in reply:
            base = reply["view"]["seq"]
        else:  # resumed: the missed events came before this answer
            base = fields.get("seq", 0) if kind == "resume" else 0
        self._seen[room] = max(self._seen.get(room, 0), base)
        self.seq = self._seen[room]
        if "view" in reply:
            self._fair_deal_from_view(reply["view"])

    async def next_event(
        self,
        kind: str | Callable[[dict[str, Any]], bool] | None = None,
        timeout: float = 30.0,
    ) -> dict[str, Any]:
        """The next event (of a type, or matching a predicate); earlier others are skipped."""
        async with asyncio.timeout(timeout):
            while True:
                event = await self.events.get()
                if kind is None or (
                    event["event"] == kind if isinstance(kind, str) else kind(event)
                ):
                    return event

    def _fair_deal(self, event: dict[str, Any]) -> None:
        """Take part in every hand's commit-reveal shuffle and verify each hand's audit."""
        if event["event"] == "replaced" and event.get("seat") == self.seat:
            self.seat = None
        self._send_in_background(self.fair_deal.on_event(event, self.seat))

    def _fair_deal_from_view(self, view: dict[str, Any]) -> None:
        self._send_in_background(self.fair_deal.on_view(view, self.seat))

    def _send_in_background(self, command: tuple[str, dict[str, Any]] | None) -> None:
        if command is not None:
            self._background(self.request(command[0], **command[1]))

    def _background(self, coro: Any) -> None:
        task = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        # A refused commit or reveal only makes this seat absent for the hand (and one sent
        # again after a reconnect is refused if the first copy was applied).
        task.add_done_callback(lambda t: t.cancelled() or t.exception())

    # -- the socket and its replacements ---------------------------------------------------

    async def _run(self) -> None:
        """Read the socket; when it drops, dial again if the policy says so, else end."""
        code: int | None = None
        reason = ""
        try:
            while True:
                await self._read(self.ws)
                code = getattr(self.ws, "close_code", None)
                reason = getattr(self.ws, "close_reason", "") or ""
                if (
                    self.reconnect is None
                    or self._closing
                    or self._final
                    or not survivable(code, reason)
                ):
                    return
                self._lose()
                ws = await self._dial()
                if ws is None:
                    return
                self.ws = ws
                self._background(self._rejoin())
        finally:
            self._end(code, reason)

    def _lose(self) -> None:
        """The socket dropped: sort out the commands that were waiting for an answer."""
        self._ready.clear()
        loop = asyncio.get_running_loop()
        if self._lost_at is None:
            self._lost_at = loop.time()
        for cid, sent in list(self._pending.items()):
            if sent.future.done():
                continue
            if sent.internal:
                _fail(sent.future, ConnectionError("connection lost while reconnecting"))
            elif sent.kind in RETRYABLE:
                sent.future.set_result(_SEND_AGAIN)
            else:
                del self._pending[cid]
                self._unsettled.append(sent)

    async def _dial(self) -> Any:
        """A new socket, to the current URL or the next ones in turn; None after giving up."""
        assert self.reconnect is not None and self._lost_at is not None
        ws, self.url_index = await redial(
            self.urls, self.url_index, self.room, self.reconnect, self._lost_at, self._dial_options
        )
        return ws

    async def _rejoin(self) -> None:
        """On a new socket: authenticate, resume the room, tell what is unknown, carry on."""
        ws = self.ws
        resumed: dict[str, Any] | None = None
        try:
            if self.token is not None:
                await self._command("auth", {"token": self.token}, internal=True)
            if self.room is not None:
                resumed = await self._resume()
        except CommandError as e:
            if e.code in ("bad_token", "not_authenticated"):
                self._final = True  # the token is no longer good: stop for good
                await ws.close()
                return
            # The room is gone (a lost store, or the room closed): carry on outside it.
            self.room, self.seat = None, None
        except ConnectionError:
            return  # this socket dropped too; the runner dials again
        self._lost_at = None
        self.reconnects += 1
        unknown = []
        for sent in self._unsettled:
            command = UnknownOutcome(sent.kind, dict(sent.fields), "connection_lost")
            unknown.append(command)
            _fail(sent.future, OutcomeUnknown(command, unknown_frame(command), resumed))
        self._unsettled.clear()
        self.unknown_outcomes.extend(unknown)
        self.events.put_nowait(
            {
                "event": "reconnected",
                "url": self.urls[self.url_index],
                "room": self.room,
                "resumed": resumed,
                "unknown": unknown,
            }
        )
        self._ready.set()

    async def _resume(self) -> dict[str, Any]:
        assert self.room is not None
        fields = {"room": self.room, "seq": self.seq}
        reply = await self._command("resume", fields, internal=True)
        return reply

    async def _settle(self, cid: int, sent: _Sent, frame: dict[str, Any]) -> None:
        """The server answered ``outcome_unknown``: resume to learn the truth, then either send
        the command again (if that is safe) or raise OutcomeUnknown to its caller."""
        resumed: dict[str, Any] | None = None
        while self.room is not None and not self.closed.done():
            try:
                resumed = await self._resume()
                break
            except ConnectionError:
                await self._ready.wait()  # reconnecting resumes anyway; then resume again
            except CommandError:
                break
        if sent.kind in RETRYABLE:
            if not sent.future.done():
                sent.future.set_result(_SEND_AGAIN)
            return
        command = UnknownOutcome(sent.kind, dict(sent.fields), OUTCOME_UNKNOWN)
        self.unknown_outcomes.append(command)
        _fail(sent.future, OutcomeUnknown(command, frame, resumed))

    def _end(self, code: int | None, reason: str) -> None:
        """No more sockets: every waiting command fails, and ``closed`` says how it ended."""
        if not self.closed.done():
            self.closed.set_result((code, reason))
        error = ConnectionError(f"connection closed ({code})")
        for sent in [*self._pending.values(), *self._unsettled]:
            if not sent.internal and sent.kind not in RETRYABLE:
                self.unknown_outcomes.append(UnknownOutcome(sent.kind, dict(sent.fields)))
            _fail(sent.future, error)
        self._pending.clear()
        self._unsettled.clear()
        self._ready.set()  # waiters wake up and find the client closed

    async def _read(self, ws: Any) -> None:
        try:
            async for frame in ws:
                message = self.codec.decode(frame)
                self.frames.append(message)
                kind = message.get("type")
                if kind in ("ok", "error"):
                    self._answer(message)
                elif kind == "matched":  # the matchmaker seated this player: now in a room
                    self.room, self.seat = message["room"], message["seat"]
                    if "view" in message:
                        self._seen[self.room] = self.seq = message["view"]["seq"]
                        self._fair_deal_from_view(message["view"])
                    self.events.put_nowait({"event": "matched", **message})
                elif kind == "queue":
                    self.events.put_nowait({"event": "queue_status", **message["status"]})
                elif kind == "event":
                    room, seq = message.get("room"), message["seq"]
                    if isinstance(room, str):
                        if seq <= self._seen.get(room, 0):
                            continue  # a resume replayed what this client already had
                        self._seen[room] = seq
                    if room == self.room or self.room is None:
                        self.seq = max(self.seq, seq)
                    self._fair_deal(message)
                    self.events.put_nowait(message)
        except websockets.ConnectionClosed:
            pass

    def _answer(self, message: dict[str, Any]) -> None:
        cid = message.get("re")
        sent = self._pending.get(cid) if type(cid) is int else None
        if sent is None or sent.future.done() or type(cid) is not int:
            if message["type"] == "error":  # an error for a frame sent raw, or none at all
                self.events.put_nowait({"event": "error", **message})
            return
        if message["type"] == "error" and message.get("code") == OUTCOME_UNKNOWN:
            del self._pending[cid]
            self._background(self._settle(cid, sent, message))
            return
        if message["type"] == "ok":
            # In frame order, so the events that follow see the room and seat it gave.
            self._entered(sent.kind, sent.fields, message)
        sent.future.set_result(message)
