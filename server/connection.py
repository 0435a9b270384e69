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
from typing import TYPE_CHECKING, Any

from protocol.codec import MAX_FRAME_BYTES, PROTOCOL_VERSION, Codec
from protocol.errors import ERRORS, ProtocolError, error_frame
from protocol.messages import Command, command_id, parse_command
from server import metrics
from server.identity import Identity
from server.room.machine import (
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
from server.room.state import RoomState, parse_options
from server.room.views import event_message, room_view, visible
from server.rooms import decode_event

if TYPE_CHECKING:
    from server.app import Node

log = logging.getLogger(__name__)

OUTBOX_LIMIT = 2000  # a client this far behind is dropped; it resumes from its last seq
RATE_PER_SECOND = 50.0
RATE_BURST = 200.0  # a fast scripted client stays under it; a flood does not
POLICY_VIOLATION = 1008
MESSAGE_TOO_BIG = 1009


class Closing(Exception):
    def __init__(self, code: int, reason: str) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason


class Connection:
    def __init__(self, node: Node, codec: Codec) -> None:
        self.node = node
        self.codec = codec
        self.id = secrets.token_hex(8)
        self.identity: Identity | None = None
        self.room: str | None = None
        self.seat: int | None = None
        self.last_seq = 0
        self.rtt = 0.0
        self.outbox: asyncio.Queue[bytes | str | None] = asyncio.Queue()
        self._held: list[tuple[int, Event]] | None = None
        self._tokens = RATE_BURST
        self._refill = time.monotonic()
        self.closed = False

    # -- outgoing --------------------------------------------------------------------------

    def push(self, message: dict[str, Any]) -> None:
        if self.closed:
            return
        if self.outbox.qsize() >= OUTBOX_LIMIT:
            self.closed = True
            self.outbox.put_nowait(None)  # the writer closes the socket
            return
        self.outbox.put_nowait(self.codec.encode(message))
        metrics.FRAMES_OUT.inc()

    def deliver(self, room: str, seq: int, event: Event) -> None:
        """An event from the room's stream; held back while a view is being prepared."""
        if room != self.room:
            return
        if self._held is not None:
            self._held.append((seq, event))
            return
        self._deliver(room, seq, event)

    def _deliver(self, room: str, seq: int, event: Event) -> None:
        if seq <= self.last_seq:
            return
        self.last_seq = seq
        if visible(event.audience, self.seat):
            self.push(event_message(room, seq, event))
        if event.type == "replaced" and event.data.get("seat") == self.seat:
            self.seat = None  # the seat went to a bot: this connection watches from now on

    def hold(self) -> None:
        self._held = []

    def release(self) -> None:
        held, self._held = self._held or [], None
        for seq, event in held:
            self._deliver(self.room or "", seq, event)

    # -- incoming --------------------------------------------------------------------------

    def check_rate(self) -> None:
        now = time.monotonic()
        self._tokens = min(RATE_BURST, self._tokens + (now - self._refill) * RATE_PER_SECOND)
        self._refill = now
        if self._tokens < 1:
            raise Closing(POLICY_VIOLATION, "flood")
        self._tokens -= 1

    async def on_frame(self, frame: bytes | str) -> None:
        self.check_rate()
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
        except ProtocolError as e:
            outcome = e.code
            self.push(error_frame(re, e.code, e.message))
        except RoomError as e:
            outcome = e.code if e.code in ERRORS else "internal_error"
            self.push(error_frame(re, outcome, e.message))
        except ValueError as e:
            outcome = "bad_option"
            self.push(error_frame(re, "bad_option", str(e)))
        except Closing:
            raise
        except Exception:
            outcome = "internal_error"
            log.exception("command failed on connection %s", self.id)
            self.push(error_frame(re, "internal_error"))
        metrics.COMMANDS.labels(kind, outcome).inc()
        metrics.COMMAND_SECONDS.labels(kind).observe(time.perf_counter() - started)

    async def dispatch(self, c: Command) -> dict[str, Any]:
        node = self.node
        if c.type == "ping":
            return {"t": c.args.get("t"), "server_time": node.rooms.clock()}
        if c.type == "pong":
            # The server's own ping came back: RTT for the lag credit (capped by the room).
            self.rtt = max(0.0, min(10.0, node.rooms.clock() - c.args["t"]))
            return {}
        if self.identity is None:
            if c.type != "auth":
                raise ProtocolError("not_authenticated")
            identity = await node.accounts.verify(c.args["token"], holder=self)
            if identity is None:
                raise ProtocolError("bad_token")
            self.identity = identity
            return {
                "player": identity.player,
                "name": identity.name,
                "account": identity.account,
                "protocol": PROTOCOL_VERSION,
                "server_time": node.rooms.clock(),
            }
        player = self.identity.player
        if c.type == "auth":
            raise ProtocolError("already_authenticated")
        if c.type == "queue":
            if self.room is not None:
                await self.exit_room()
            return await node.quickplay.join(self, c.args["target"])
        if c.type == "unqueue":
            if not await node.quickplay.leave(self):
                raise ProtocolError("not_in_queue")
            return {}
        if c.type == "ladder":
            return {"ladder": await node.quickplay.ladder(player, c.args.get("limit", 20))}
        if c.type == "open_room":
            options = parse_options(
                c.args.get("options") or {}, clocks=node.settings.clocks, kind="friends"
            )
            state = await node.rooms.create(
                kind="friends", host=player, host_name=self.identity.name, options=options
            )
            return await self.enter(state.id, resume_from=None) | {
                "link": node.invite_link(state.id)
            }
        if c.type == "join":
            return await self.enter(c.args["room"], resume_from=None)
        if c.type == "resume":
            return await self.enter(c.args["room"], resume_from=c.args["seq"])
        if self.room is None:
            raise ProtocolError("not_in_room")
        room = self.room
        lag = self.rtt / 2
        if c.type == "view":
            state = await self._load(room)
            return {"view": room_view(state, self.seat, player)}
        if c.type == "leave":
            await node.rooms.apply(room, Leave(player))
            await self.exit_room()
            return {}
        if c.type == "audit":
            state = await self._load(room)
            audits = {a["hand"]: a for a in state.audits}
            if c.args["hand"] not in audits:
                raise ProtocolError("audit_not_found")
            return {"audit": audits[c.args["hand"]]}
        if c.type == "hint":
            return {"hint": await node.hint(room, player)}
        commands = {
            "fill_bots": lambda: FillBots(player, c.args.get("level")),
            "start": lambda: Start(player),
            "rematch": lambda: Rematch(player),
            "end_game": lambda: EndGame(player),
            "pass": lambda: PassCards(player, c.args["cards"], lag),
            "play": lambda: PlayCard(player, c.args["card"], lag),
            "moon": lambda: ChooseMoon(player, c.args["choice"], lag),
            "revoke": lambda: CallRevoke(player, c.args["seat"]),
            "boot": lambda: Boot(player, c.args["seat"]),
            "commit": lambda: CommitSecret(player, c.args["commitment"]),
            "reveal": lambda: RevealSecret(player, c.args["secret"]),
        }
        state, events = await node.rooms.apply(room, commands[c.type]())
        # The step's events are first_seq..seq: a prompt before first_seq is already answered.
        return {"seq": state.seq, "first_seq": state.seq - len(events) + 1}

    async def enter(self, room: str, resume_from: int | None) -> dict[str, Any]:
        """Join or resume a room: watch it, sit if a seat is free, get a view or missed events."""
        assert self.identity is not None
        if self.room is not None and self.room != room:
            await self.exit_room()
        node = self.node
        if await node.rooms.load(room) is None:
            raise ProtocolError("room_not_found")
        self.hold()
        try:
            self.room = room
            await node.hub.watch(self, room)
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
                    self._deliver(room, stored.seq, decode_event(stored.data))
            else:
                self.last_seq = state.seq
                reply["view"] = room_view(state, self.seat, ident.player)
            return reply
        finally:
            self.release()

    async def exit_room(self) -> None:
        if self.room is not None:
            await self.node.hub.unwatch(self, self.room)
        self.room = None
        self.seat = None

    async def on_close(self) -> None:
        self.closed = True
        try:
            await self.node.quickplay.leave(self)  # a dropped connection leaves the queue
        except Exception:
            log.exception("could not take %s out of the queue", self.id)
        if self.room is not None and self.identity is not None and self.seat is not None:
            try:
                await self.node.rooms.apply(self.room, Disconnect(self.identity.player, self.id))
            except Exception:
                log.exception("could not record the disconnect of %s", self.id)
        await self.exit_room()

    async def _load(self, room: str) -> RoomState:
        state = await self.node.rooms.load(room)
        if state is None:
            raise ProtocolError("room_not_found")
        return state
