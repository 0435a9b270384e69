"""A small asyncio client for the Hearts service (tests, load tests, scripts, bots-as-clients).

    async with await HeartsClient.connect("ws://127.0.0.1:8000/ws", token) as client:
        reply = await client.request("join", room=code)
        event = await client.next_event("your_turn")
        await client.request("play", card=event["legal"][0])

It answers the server's pings (the server measures round trips for the lag credit), keeps the
room's last sequence number for ``resume``, and queues every event in arrival order.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

import websockets

from .codec import JSON, MSGPACK, Codec
from .shuffle import deal_context, new_secret, seat_commitment
from .verify import verify_audit

CLIENT_MAX_FRAME = 2**22  # views and audits are larger than any command


class CommandError(Exception):
    def __init__(self, code: str, message: str, frame: dict[str, Any]) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.frame = frame


def http_json(url: str, body: dict[str, Any] | None = None, token: str | None = None) -> Any:
    """A blocking JSON request (POST when there is a body); for set-up, not for the hot path."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method="POST" if data is not None else "GET")
    req.add_header("content-type", "application/json")
    if token:
        req.add_header("authorization", f"Bearer {token}")
    with urllib.request.urlopen(req, timeout=10) as resp:
        return json.loads(resp.read())


async def guest(base_url: str, name: str) -> dict[str, Any]:
    """A guest identity from the HTTP API: {"player", "name", "token"}."""
    return await asyncio.to_thread(http_json, f"{base_url}/api/guest", {"name": name})


def account_call(url: str, body: dict[str, Any], token: str | None = None) -> dict[str, Any]:
    """POST to an account endpoint; a refusal raises CommandError with the server's code."""
    try:
        return dict(http_json(url, body, token))
    except urllib.error.HTTPError as e:
        frame = json.loads(e.read() or b"{}")
        code, message = frame.get("code", "http_error"), frame.get("message", str(e))
        raise CommandError(code, message, frame) from None


async def login(base_url: str, name: str, password: str) -> dict[str, Any]:
    """Log in to an account: {"player", "name", "account": True, "token"} (a session token,
    for ``HeartsClient.connect``). Raises CommandError (``wrong_credentials``,
    ``too_many_attempts``…)."""
    body = {"name": name, "password": password}
    return await asyncio.to_thread(account_call, f"{base_url}/api/login", body)


async def sign_up(
    base_url: str, name: str, password: str, guest_token: str | None = None
) -> dict[str, Any]:
    """Make an account (keeping a guest's rating if its token is given) and log in."""
    body = {"name": name, "password": password, "guest_token": guest_token}
    return await asyncio.to_thread(account_call, f"{base_url}/api/signup", body)


async def logout(base_url: str, token: str) -> bool:
    """End this session on every node."""
    reply = await asyncio.to_thread(account_call, f"{base_url}/api/logout", {}, token)
    return bool(reply.get("revoked"))


class HeartsClient:
    def __init__(self, ws: Any, codec: Codec) -> None:
        self.ws = ws
        self.codec = codec
        self.events: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.frames: list[dict[str, Any]] = []  # every frame received, for inspection
        self.room: str | None = None
        self.seat: int | None = None
        self.seq = 0
        # The fair deal: this seat's shuffle secrets and what it was shown, per hand, and the
        # verifier's verdict on each finished hand's audit ([] means verified).
        self.own: dict[int, dict[str, Any]] = {}
        self.verdicts: dict[int, list[str]] = {}
        self._hand = 0
        self._tasks: set[asyncio.Task[Any]] = set()
        self.closed: asyncio.Future[tuple[int | None, str]] = (
            asyncio.get_running_loop().create_future()
        )
        self._ids = itertools.count(1)
        self._pending: dict[Any, asyncio.Future[dict[str, Any]]] = {}
        self._reader = asyncio.create_task(self._read())

    @classmethod
    async def connect(
        cls, url: str, token: str | None = None, *, binary: bool = True, **kwargs: Any
    ) -> HeartsClient:
        name = MSGPACK if binary else JSON
        ws = await websockets.connect(url, subprotocols=[name], max_size=CLIENT_MAX_FRAME, **kwargs)
        client = cls(ws, Codec(name, max_frame=CLIENT_MAX_FRAME))
        if token is not None:
            await client.request("auth", token=token)
        return client

    async def __aenter__(self) -> HeartsClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        await self.ws.close()
        self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self._reader

    async def send_raw(self, frame: bytes | str) -> None:
        await self.ws.send(frame)

    async def request(self, kind: str, timeout: float = 30.0, **fields: Any) -> dict[str, Any]:
        """Send a command and wait for its ok (returned) or error (raised as CommandError)."""
        cid = next(self._ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[cid] = future
        await self.ws.send(self.codec.encode({"type": kind, "id": cid, **fields}))
        try:
            reply = await asyncio.wait_for(future, timeout)
        finally:
            self._pending.pop(cid, None)
        if reply["type"] == "error":
            raise CommandError(reply["code"], reply["message"], reply)
        if kind in ("join", "resume", "open_room") and "room" in reply:
            self.room = reply["room"]
            self.seat = reply.get("seat")
            if "view" in reply:
                self.seq = reply["view"]["seq"]
                self._fair_deal_from_view(reply["view"])
        return reply

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
        name = event["event"]
        if name == "replaced" and event.get("seat") == self.seat:
            self.seat = None
        elif name == "shuffle_commit" and self.seat is not None:
            hand = event["hand"]
            secret = new_secret()
            self._hand = hand
            self.own[hand] = {
                "seat": self.seat,
                "secret": secret.hex(),
                "server_commitment": event["server_commitment"],
            }
            ctx = deal_context(event["game"], hand)
            commitment = seat_commitment(ctx, self.seat, secret).hex()
            self._background(self.request("commit", commitment=commitment))
        elif name == "commitments" and event["hand"] in self.own:
            record = self.own[event["hand"]]
            record["commitments"] = event["commitments"]
            self._background(self.request("reveal", secret=record["secret"]))
        elif name == "dealt" and self._hand in self.own:
            self.own[self._hand]["dealt"] = event["cards"]
        elif name == "received" and self._hand in self.own:
            self.own[self._hand]["received"] = event["cards"]
        elif name == "passed" and self._hand in self.own:
            self.own[self._hand]["passed"] = event["cards"]
        elif name == "hand_audit":
            self.verdicts[event["hand"]] = verify_audit(event["audit"], self.own.get(event["hand"]))

    def _fair_deal_from_view(self, view: dict[str, Any]) -> None:
        """Arriving while a shuffle waits: commit now (a lost secret cannot be revealed)."""
        pending = view.get("shuffle")
        seat = self.seat
        if pending is None or seat is None:
            return
        if pending["phase"] == "commit" and not pending["committed"][seat]:
            self._fair_deal({"event": "shuffle_commit", **pending})
        elif pending["phase"] == "reveal" and pending["hand"] in self.own:
            self._fair_deal({"event": "commitments", **pending})

    def _background(self, coro: Any) -> None:
        task = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        # A refused commit or reveal only makes this seat absent for the hand.
        task.add_done_callback(lambda t: t.cancelled() or t.exception())

    async def _read(self) -> None:
        try:
            async for frame in self.ws:
                message = self.codec.decode(frame)
                self.frames.append(message)
                kind = message.get("type")
                if kind == "ping":
                    await self.ws.send(
                        self.codec.encode({"type": "pong", "id": 0, "t": message["t"]})
                    )
                elif kind in ("ok", "error"):
                    future = self._pending.get(message.get("re"))
                    if future is not None and not future.done():
                        future.set_result(message)
                    elif kind == "error":  # an error for a frame sent raw, or none at all
                        self.events.put_nowait({"event": "error", **message})
                elif kind == "matched":  # the matchmaker seated this player: now in a room
                    self.room, self.seat = message["room"], message["seat"]
                    if "view" in message:
                        self.seq = message["view"]["seq"]
                        self._fair_deal_from_view(message["view"])
                    self.events.put_nowait({"event": "matched", **message})
                elif kind == "queue":
                    self.events.put_nowait({"event": "queue_status", **message["status"]})
                elif kind == "event":
                    self.seq = max(self.seq, message["seq"])
                    self._fair_deal(message)
                    self.events.put_nowait(message)
        except websockets.ConnectionClosed:
            pass
        finally:
            code = getattr(self.ws, "close_code", None)
            reason = getattr(self.ws, "close_reason", "") or ""
            if not self.closed.done():
                self.closed.set_result((code, reason))
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(ConnectionError(f"connection closed ({code})"))
