"""One WebSocket connection: authentication, command dispatch, ordered delivery of events.

Every frame from the network is hostile until validated: it is decoded with bounds, checked by
``protocol.messages`` and only then turned into a room command. A refused message gets an error
with a stable code and changes nothing; no exception reaches a client as a stack trace.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from protocol.codec import MAX_FRAME_BYTES, PROTOCOL_VERSION, Codec
from protocol.errors import HeartsError, ProtocolError, error_frame
from protocol.messages import Command, command_id, parse_command
from server.accounts.identity import Identity
from server.core.room.commands import (
    Boot,
    CallRevoke,
    ChooseMoon,
    CommitSecret,
    Connect,
    Disconnect,
    EndGame,
    Event,
    FillBots,
    Join,
    Leave,
    PassCards,
    PlayCard,
    Rematch,
    RevealSecret,
    RoomError,
    Start,
)
from server.core.room.commands import Command as RoomCommand
from server.core.room.state import RoomState, parse_options
from server.core.room.views import room_view, visible
from server.fanout.commit_frames import CommitFrames
from server.net.extensions import RoundTrip
from server.ops import metrics
from server.play.rooms import decode_event
from server.ports import NodeServices
from server.store import StoreError

log = logging.getLogger(__name__)

CLOSE_RETRY_SECONDS = 30.0  # how long a closed socket's leaving is retried while the store is down
STORE_TROUBLE = frozenset({"store_unavailable", "outcome_unknown"})
OUTBOX_LIMIT = 2000  # a client this far behind is dropped; it resumes from its last seq
RATE_PER_SECOND = 50.0
RATE_BURST = 200.0  # a fast scripted client stays under it; a flood does not
# Seconds of the rate let through beyond the documented burst: a client that keeps to the limit
# by its own clock sees its frames read here a little bunched (the network, this loop's lag).
RATE_SLACK = 0.5
RATE_ROOM = RATE_BURST / RATE_PER_SECOND + RATE_SLACK  # how far ahead of the rate a client may be
POLICY_VIOLATION = 1008
MESSAGE_TOO_BIG = 1009


class Closing(Exception):
    def __init__(self, code: int, reason: str) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason


class Connection:
    # A node holds thousands: no per-instance dict.
    __slots__ = (
        "__weakref__",
        "_full_at",
        "_held",
        "closed",
        "codec",
        "dropped",
        "id",
        "identity",
        "last_seq",
        "node",
        "pending",
        "room",
        "round_trip",
        "seat",
        "wake",
    )

    def __init__(self, node: NodeServices, codec: Codec) -> None:
        self.node = node
        self.codec = codec
        self.id = f"{node.id}/{secrets.token_hex(8)}"  # the node prefix lets DropNode find it
        self.identity: Identity | None = None
        self.room: str | None = None
        self.seat: int | None = None
        self.last_seq = 0
        # The socket's ping round trip, kept by the WebSocket protocol (server/net/ws_protocol.py).
        self.round_trip = RoundTrip()
        # Encoded frames waiting for the socket's writer (server/net/socket_writer.py), which
        # sets ``wake`` and is called by the first frame that waits.
        self.pending: list[bytes | str] = []
        self.wake: Callable[[], None] = no_writer
        self.dropped = False  # fell OUTBOX_LIMIT frames behind: closed once they are sent
        self._held: list[tuple[int, Event]] | None = None
        self._full_at = 0.0  # the rate limit's state (``rate_limit``): a whole burst to spend
        self.closed = False

    # -- outgoing --------------------------------------------------------------------------

    def push(self, message: dict[str, Any]) -> None:
        self.send_frame(self.codec.encode(message))

    def send_frame(self, frame: bytes | str) -> None:
        """Queue an encoded frame for the writer (a client too far behind is dropped)."""
        if self.closed:
            return
        pending = self.pending
        if len(pending) >= OUTBOX_LIMIT:
            log.warning("connection %s is %d frames behind: closing it", self.id, OUTBOX_LIMIT)
            self.closed = self.dropped = True
            self.wake()  # the writer sends what is queued, then closes the socket
            return
        pending.append(frame)
        if len(pending) == 1:
            self.wake()

    def send_frames(self, frames: Sequence[bytes | str]) -> None:
        """``send_frame`` for each of ``frames``."""
        pending = self.pending
        if self.closed or len(pending) + len(frames) > OUTBOX_LIMIT:
            for frame in frames:
                self.send_frame(frame)
            return
        pending.extend(frames)
        if len(pending) == len(frames) and frames:
            self.wake()

    def deliver(self, out: CommitFrames) -> None:
        """Events ``out.first_seq``… of the room's stream; held back while a view is being
        prepared. One call per socket per commit, not per event: a card is three or four."""
        if out.room != self.room:
            return
        if self._held is not None:
            self._held.extend((out.first_seq + k, e) for k, e in enumerate(out.events))
            return
        self._deliver(out)

    def _deliver(self, out: CommitFrames) -> None:
        first_seq = out.first_seq
        if first_seq == self.last_seq + 1 and self.seat not in out.replaced:
            # The common case: next in order, the seat unchanged by them. The frames are the
            # ones every socket of this seat and subprotocol gets.
            self.last_seq = first_seq + len(out.events) - 1
            self.send_frames(out.frames_for(self.codec, self.seat))
            return
        for k, event in enumerate(out.events):
            seq = first_seq + k
            if seq <= self.last_seq:
                continue
            self.last_seq = seq
            if visible(event.audience, self.seat):
                self.send_frame(out.frame(k, self.codec))
            if event.type == "replaced" and event.data.get("seat") == self.seat:
                self.seat = None  # the seat went to a bot: this connection watches from now on

    @property
    def entering(self) -> bool:
        """Between ``hold`` and ``release``: its view is being prepared."""
        return self._held is not None

    def hold(self) -> None:
        self._held = []

    def release(self) -> None:
        held, self._held = self._held or [], None
        for seq, event in held:
            self._deliver(CommitFrames(self.room or "", seq, (event,)))

    # -- incoming --------------------------------------------------------------------------

    def check_rate(self, arrived: float) -> None:
        full_at = rate_limit(self._full_at, arrived)
        if full_at is None:
            # The documented code first, then the close: a client sees why (docs/protocol.md).
            self.push(error_frame(None, "rate_limited"))
            log.warning("connection %s sent a flood: closing it", self.id)
            raise Closing(POLICY_VIOLATION, "flood")
        self._full_at = full_at

    async def on_frame(self, frame: bytes | str, arrived: float | None = None) -> None:
        """Take one frame, read from the socket at ``arrived`` (``time.monotonic()``; now if
        None): a frame that waited behind slower commands is judged by when it came."""
        self.check_rate(time.monotonic() if arrived is None else arrived)
        if len(frame) > MAX_FRAME_BYTES:
            raise Closing(MESSAGE_TOO_BIG, "frame too large")
        re: object = None
        kind = "invalid"
        outcome = "ok"
        started = time.perf_counter()
        try:
            message = self.codec.decode(frame)
            re = command_id(message)
            command = parse_command(message)
            kind = command.type
            reply = await self.dispatch(command)
            self.push({"type": "ok", "re": command.id, **reply})
        except HeartsError as e:  # refused wherever it was decided: the frame, the room, the rules
            outcome = e.code
            self.push(e.frame(re))
        except StoreError:
            outcome = "store_unavailable"  # a read failed: nothing was written
            self.push(error_frame(re, "store_unavailable"))
        except Closing:
            raise
        except Exception:
            outcome = "internal_error"
            log.exception("command failed on connection %s", self.id)
            self.push(error_frame(re, "internal_error"))
        metrics.command_done(kind, outcome, time.perf_counter() - started)

    async def dispatch(self, c: Command) -> dict[str, Any]:
        """Run a validated command through the dispatch table (``ROUTES``)."""
        route = ROUTES[c.type]
        needs = route.needs
        if needs >= AUTHENTICATED and self.identity is None:
            raise ProtocolError("not_authenticated")
        if needs >= IN_ROOM and self.room is None:
            raise ProtocolError("not_in_room")
        return await route.handler(self, c)

    # -- the handlers (see ROUTES) -----------------------------------------------------------

    async def _ping(self, c: Command) -> dict[str, Any]:
        return {"t": c.args.get("t"), "server_time": self.node.rooms.clock()}

    async def _auth(self, c: Command) -> dict[str, Any]:
        if self.identity is not None:
            raise ProtocolError("already_authenticated")
        identity = await self.node.accounts.verify(c.args["token"], holder=self)
        if identity is None:
            raise ProtocolError("bad_token")
        self.identity = identity
        return {
            "player": identity.player,
            "name": identity.name,
            "account": identity.account,
            "protocol": PROTOCOL_VERSION,
            "server_time": self.node.rooms.clock(),
        }

    async def _queue(self, c: Command) -> dict[str, Any]:
        if self.room is not None:
            await self.exit_room()
        return await self.node.quickplay.join(self, c.args["target"])

    async def _unqueue(self, c: Command) -> dict[str, Any]:
        if not await self.node.quickplay.leave(self):
            raise ProtocolError("not_in_queue")
        return {}

    async def _ladder(self, c: Command) -> dict[str, Any]:
        return {"ladder": await self.node.standings.ladder(self._player, c.args.get("limit", 20))}

    async def _open_room(self, c: Command) -> dict[str, Any]:
        node = self.node
        assert self.identity is not None
        options = parse_options(
            c.args.get("options") or {}, clocks=node.settings.clocks, kind="friends"
        )
        state = await node.rooms.create(
            kind="friends", host=self._player, host_name=self.identity.name, options=options
        )
        return await self.enter(state.id, resume_from=None) | {"link": node.invite_link(state.id)}

    async def _join(self, c: Command) -> dict[str, Any]:
        return await self.enter(c.args["room"], resume_from=None)

    async def _resume(self, c: Command) -> dict[str, Any]:
        return await self.enter(c.args["room"], resume_from=c.args["seq"])

    async def _view_command(self, c: Command) -> dict[str, Any]:
        # Fresh from the store: a client asks for a view when it doubts what it was sent.
        state = await self.node.rooms.load(self._room, fresh=True)
        if state is None:
            raise ProtocolError("room_not_found")
        return {"view": await self._view(state)}

    async def _leave(self, c: Command) -> dict[str, Any]:
        await self.node.rooms.apply(self._room, Leave(self._player))
        await self.exit_room()
        return {}

    async def _audit(self, c: Command) -> dict[str, Any]:
        audit = await self.node.rooms.audit(await self._load(self._room), c.args["hand"])
        if audit is None:
            raise ProtocolError("audit_not_found")
        return {"audit": audit}

    async def _hint(self, c: Command) -> dict[str, Any]:
        return {"hint": await self.node.hint(self._room, self._player)}

    async def _move(self, c: Command) -> dict[str, Any]:
        """A command the room's state machine takes (its ``ROUTES`` entry builds it)."""
        build = ROUTES[c.type].room
        assert build is not None  # only room routes name this handler
        # The lag credit: half the round trip (the room caps it).
        command = build(self._player, c.args, self.round_trip.seconds / 2)
        state, events = await self.node.rooms.apply(self._room, command)
        # The step's events are first_seq..seq: a prompt before first_seq is already answered.
        return {"seq": state.seq, "first_seq": state.seq - len(events) + 1}

    @property
    def _player(self) -> str:
        assert self.identity is not None  # the dispatch table checked it
        return self.identity.player

    @property
    def _room(self) -> str:
        assert self.room is not None  # the dispatch table checked it
        return self.room

    async def enter(self, room: str, resume_from: int | None) -> dict[str, Any]:
        """Join or resume a room: watch it, sit if a seat is free, get a view or missed events."""
        assert self.identity is not None
        node = self.node
        # Refused before anything changes: the socket stays in the room it was in.
        if await node.rooms.load(room) is None:
            raise ProtocolError("room_not_found")
        if self.room is not None and self.room != room:
            await self.exit_room()
        self.hold()
        try:
            self.room = room
            await node.hub.watch(self, room)
            # Watching first, then a fresh load: the view below is never older than the first
            # event this socket is sent (the subscriber's contract, store/rooms.py).
            await node.rooms.load(room, fresh=True)
            ident = self.identity
            state, _ = await node.rooms.apply(room, Join(ident.player, ident.name, self.id))
            self.seat = state.seat_of(ident.player)
            if self.seat is not None:
                state, _ = await node.rooms.apply(room, Connect(ident.player, self.id))
            reply: dict[str, Any] = {"room": room, "seat": self.seat}
            missed = None
            if resume_from is not None and resume_from <= state.seq:
                missed = await node.rooms.store.events_since(room, resume_from)
            if missed is not None and resume_from is not None:
                self.last_seq = resume_from
                reply["resumed"] = True
                reply["missed"] = len(missed)
                for stored in missed:
                    self._deliver(CommitFrames(room, stored.seq, (decode_event(stored.data),)))
            else:
                self.last_seq = state.seq
                reply["view"] = await self._view(state)
            return reply
        finally:
            self.release()

    async def exit_room(self, retry_for: float = 0.0) -> None:
        """Stop watching the room; a seat this socket held counts it as closed. With the store
        unreachable, that is tried again for ``retry_for`` seconds (a socket that closed: else
        its seat would read connected for good, and never go away for the clocks)."""
        room, self.room = self.room, None
        self.seat = None
        if room is None:
            return
        await self.node.hub.unwatch(self, room)
        if self.identity is None:
            return
        left = Disconnect(self.identity.player, self.id)  # applied twice, it changes nothing
        delay, waited = 0.25, 0.0
        while True:
            try:
                await self.node.rooms.apply(room, left)
                return
            except RoomError as e:
                if e.code not in STORE_TROUBLE or waited + delay > retry_for:
                    log.warning("could not record that %s left room %s: %s", self.id, room, e.code)
                    return
            except Exception:
                log.exception("could not record that %s left room %s", self.id, room)
                return
            await asyncio.sleep(delay)
            waited += delay
            delay = min(2 * delay, 4.0)

    async def on_close(self) -> None:
        self.closed = True
        try:
            await self.node.quickplay.leave(self)  # a dropped connection leaves the queue
        except Exception:
            log.warning("could not take %s out of the queue", self.id)
        await self.exit_room(retry_for=CLOSE_RETRY_SECONDS)

    async def _view(self, state: RoomState) -> dict[str, Any]:
        player = self.identity.player if self.identity is not None else None
        return room_view(state, self.seat, player, await self.node.rooms.hand_log(state))

    async def _load(self, room: str) -> RoomState:
        state = await self.node.rooms.load(room)
        if state is None:
            raise ProtocolError("room_not_found")
        return state


def rate_limit(full_at: float, now: float) -> float | None:
    """The rate limit of docs/protocol.md, "Limits", for one more frame at ``now``: a token
    bucket of RATE_BURST tokens that refills at RATE_PER_SECOND, kept as the time it would be
    full again (``full_at``, 0 for a full one). Returns the new ``full_at``, or None when the
    frame is over the limit by more than RATE_SLACK seconds of the rate."""
    full_at = max(full_at, now) + 1 / RATE_PER_SECOND
    if full_at - now > RATE_ROOM + 1e-9:  # not refused at the limit exactly by a rounding
        return None
    return full_at


def no_writer() -> None:
    """A connection's ``wake`` while no writer serves it (before it starts, after it stops)."""


Handler = Callable[[Connection, Command], Awaitable[dict[str, Any]]]
RoomCommandOf = Callable[[str, dict[str, Any], float], RoomCommand]
"""(player, the message's fields, lag credit) -> the room command it stands for."""
ANYONE, AUTHENTICATED, IN_ROOM = 0, 1, 2  # what a command needs of its connection


@dataclass(frozen=True, slots=True)
class Route:
    """What one client command needs of its connection, and who runs it: a handler of the
    connection, or (``room``) the room's state machine, through ``Connection._move``."""

    needs: int
    handler: Handler
    room: RoomCommandOf | None = None


def _room(room: RoomCommandOf) -> Route:
    """A command the room's state machine takes, from a seat or a watcher of the room."""
    return Route(IN_ROOM, Connection._move, room)


# Every command of protocol.messages.COMMANDS (which validates its fields), once.
ROUTES: dict[str, Route] = {
    "ping": Route(ANYONE, Connection._ping),
    "auth": Route(ANYONE, Connection._auth),
    "queue": Route(AUTHENTICATED, Connection._queue),
    "unqueue": Route(AUTHENTICATED, Connection._unqueue),
    "ladder": Route(AUTHENTICATED, Connection._ladder),
    "open_room": Route(AUTHENTICATED, Connection._open_room),
    "join": Route(AUTHENTICATED, Connection._join),
    "resume": Route(AUTHENTICATED, Connection._resume),
    "view": Route(IN_ROOM, Connection._view_command),
    "leave": Route(IN_ROOM, Connection._leave),
    "audit": Route(IN_ROOM, Connection._audit),
    "hint": Route(IN_ROOM, Connection._hint),
    "fill_bots": _room(lambda p, a, lag: FillBots(p, a.get("level"))),
    "start": _room(lambda p, a, lag: Start(p)),
    "rematch": _room(lambda p, a, lag: Rematch(p)),
    "end_game": _room(lambda p, a, lag: EndGame(p)),
    "pass": _room(lambda p, a, lag: PassCards(p, a["cards"], lag)),
    "play": _room(lambda p, a, lag: PlayCard(p, a["card"], lag)),
    "moon": _room(lambda p, a, lag: ChooseMoon(p, a["choice"], lag)),
    "revoke": _room(lambda p, a, lag: CallRevoke(p, a["seat"])),
    "boot": _room(lambda p, a, lag: Boot(p, a["seat"])),
    "commit": _room(lambda p, a, lag: CommitSecret(p, a["commitment"])),
    "reveal": _room(lambda p, a, lag: RevealSecret(p, a["secret"])),
}
