"""Lean paced players: one raw WebSocket per seat, four per table, thinking like people.

``protocol.client.HeartsClient`` keeps every frame, a queue and a reader task per socket; at
12,000 sockets in a few processes that costs more than the server under test. A ``Seat`` here
runs on ``load_tests.lean_socket`` (a callback per message, no task per socket or per send)
and keeps only what a real client needs: it answers the server's pings, takes part in every
hand's commit-reveal shuffle (a fresh secret per hand, committed on ``shuffle_commit``, revealed
on ``commitments``) and verifies each hand's audit with ``protocol.verify``, as HeartsClient
does (the checks that hold for every seat alike once per table and audit, ``Table.checked``;
those against its own secret and commitments by each seat); and it answers each ``your_turn``
after a human-like pause (``load_tests.think``) with a random legal choice.

What it measures, into the process' ``PacedStats``: send → ok of every move, and for a play
send → the moment the last socket of the table received that ``card_played``.
"""

from __future__ import annotations

import asyncio
import itertools
import random
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from load_tests.lean_socket import LeanSocket
from load_tests.scenarios import Endpoint
from load_tests.think import Thinking
from protocol.audit import parse_own
from protocol.client import CLIENT_MAX_FRAME, CommandError, guest
from protocol.codec import JSON, MSGPACK, Codec
from protocol.shuffle import deal_context, new_secret, seat_commitment
from protocol.verify import RecordCheck, check_record, verify_checked

SETUP_TIMEOUT = 30.0  # one table's guests, sockets, seats and start
# The commands measured send → ok, and the count each adds to.
MOVES = {"pass": "passes", "play": "cards", "moon": "moons"}


@dataclass
class PacedStats:
    """One generator process' measurements since the last ``drain``."""

    ok: list[tuple[float, str, float]] = field(default_factory=list)  # (sent at, kind, s)
    last_seat: list[tuple[float, float]] = field(default_factory=list)  # plays: (sent at, s)
    # With --bots: from the card before a bot's card to the bot's card, as the host saw them
    # (the bot's think time and its wait for a decision): (seen at, s).
    bot_gaps: list[tuple[float, float]] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)  # cards, passes, hands, stand_in…
    errors: Counter[str] = field(default_factory=Counter)

    def drain(self) -> dict[str, Any]:
        out = {
            "ok": self.ok,
            "last_seat": self.last_seat,
            "bot_gaps": self.bot_gaps,
            "counts": dict(self.counts),
            "errors": dict(self.errors),
        }
        self.ok, self.last_seat, self.bot_gaps = [], [], []
        self.counts, self.errors = Counter(), Counter()
        return out


@dataclass(frozen=True, slots=True)
class TableConfig:
    binary: bool = True
    deflate: bool = True  # offer permessage-deflate, as browsers and HeartsClient do
    bots: bool = False  # one human and fill_bots, instead of four humans
    target: int = 50
    think: float = 1.0
    spread: bool = False  # seats over all endpoints, not all on the host's
    rejoin_host: bool = False  # the host reconnects with ?room= once it has opened the room
    verify: bool = True
    seed: int = 0


class Seat:
    """One player's socket: pings, the fair deal, paced answers, measured moves."""

    def __init__(self, table: Table, ws: LeanSocket, codec: Codec, player: int) -> None:
        self.table = table
        self.ws = ws
        self.codec = codec
        self.player = player  # 0 is the host
        self.seat: int | None = None
        self.token = ""
        self.retired = False  # replaced by another socket of the same player
        self.thinking = Thinking(table.config.think, table.seed * 8 + player)
        self.rng = random.Random(table.seed * 8 + player + 4)
        self._ids = itertools.count(1)
        self._waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._moves: dict[int, tuple[str, float, float]] = {}  # id -> (kind, wall, perf)
        self._acted = 0  # first_seq of this seat's last answered move: older prompts are stale
        self._decision: asyncio.TimerHandle | None = None
        self._own: dict[int, dict[str, Any]] = {}  # hand -> what the verifier needs
        self._hand = 0
        ws.deliver = self._message
        ws.on_close = self._closed

    @property
    def stats(self) -> PacedStats:
        return self.table.stats

    # -- sending -----------------------------------------------------------------------------

    async def request(self, kind: str, **fields: Any) -> dict[str, Any]:
        """A set-up command: its ok, or CommandError."""
        cid = next(self._ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[cid] = future
        try:
            if not self.ws.send(self.codec.encode({"type": kind, "id": cid, **fields})):
                raise ConnectionError(f"socket closed before {kind}")
            reply = await asyncio.wait_for(future, SETUP_TIMEOUT)
        finally:
            self._waiting.pop(cid, None)
        if reply["type"] == "error":
            raise CommandError(reply["code"], reply["message"], reply)
        return reply

    def _send(self, kind: str, **fields: Any) -> None:
        """A command whose answer is only measured and counted (moves, commit, reveal)."""
        cid = next(self._ids)
        self._moves[cid] = (kind, time.time(), time.perf_counter())
        if kind == "play":
            self.table.play_sent(self.seat, fields["card"])
        sent = self.ws.send(self.codec.encode({"type": kind, "id": cid, **fields}))
        if not sent and not self.table.closing and not self.retired:
            self.stats.errors[f"{kind} not sent: socket closed"] += 1

    # -- receiving ---------------------------------------------------------------------------

    def _message(self, frame: bytes | str) -> None:
        message = self.codec.decode(frame)
        kind = message.get("type")
        if kind == "event":
            self._event(message)
        elif kind == "ok" or kind == "error":
            self._answer(message)

    def _closed(self, code: int | None) -> None:
        if self._decision is not None:
            self._decision.cancel()
        for future in self._waiting.values():
            if not future.done():
                future.set_exception(ConnectionError(f"socket closed ({code})"))
        if not self.table.closing and not self.retired:
            self.stats.errors[f"socket closed by the server: {code}"] += 1

    def _answer(self, message: dict[str, Any]) -> None:
        cid = message.get("re")
        future = self._waiting.get(cid) if isinstance(cid, int) else None
        if future is not None:
            if not future.done():
                future.set_result(message)
            return
        move = self._moves.pop(cid, None) if isinstance(cid, int) else None
        if move is None:
            self.stats.errors[f"unexpected {message['type']}: {message.get('code', '')}"] += 1
            return
        kind, wall, perf = move
        if message["type"] == "error":
            self.stats.errors[f"{kind} refused: {message.get('code')}"] += 1
            return
        if kind in MOVES:
            self.stats.ok.append((wall, kind, time.perf_counter() - perf))
            self._acted = message.get("first_seq", self._acted)
            self.stats.counts[MOVES[kind]] += 1
        elif kind == "rematch":
            self.stats.counts["rematches"] += 1

    def _event(self, event: dict[str, Any]) -> None:
        name = event["event"]
        if name == "card_played":
            self.table.card_seen(event["seat"], event["card"])
            if self.player == 0:  # every card of the table, bots' too, counted once
                self.stats.counts["table_cards"] += 1
                self.table.card_counted(event["seat"], self.seat)
        elif name == "your_turn":
            if event["seq"] >= self._acted:
                self._prompted(event)
        elif name == "shuffle_commit":
            self._commit(event)
        elif name == "commitments":
            record = self._own.get(event["hand"])
            if record is not None:
                record["commitments"] = event["commitments"]
                self._send("reveal", secret=record["secret"])
        elif name in ("dealt", "received", "passed"):
            record = self._own.get(self._hand)
            if record is not None:
                record[name] = event["cards"]
        elif name == "hand_started":
            if self.player == 0:
                self.table.last_card = None
                self.table.moved_at = time.perf_counter()
                self.stats.counts["hands"] += 1
                self.stats.counts["stand_in_seat_hands"] += len(event.get("absent") or ())
        elif name == "hand_audit":
            self._verify(event)
        elif name == "game_over":
            if self.player == 0:
                self.stats.counts["games"] += 1
                self.table.game_over(self)
        elif name in ("out_of_time", "replaced") and event.get("seat") == self.seat:
            self.stats.errors[f"seat {name} ({event.get('reason')})"] += 1
            if name == "replaced":
                self.seat = None

    # -- the fair deal -----------------------------------------------------------------------

    def _commit(self, event: dict[str, Any]) -> None:
        if self.seat is None:
            return
        hand = event["hand"]
        secret = new_secret()
        self._hand = hand
        # The next hand's shuffle may start before this hand's audit arrives: keep two hands.
        self._own = {h: record for h, record in self._own.items() if h == hand - 1}
        self._own[hand] = {
            "seat": self.seat,
            "secret": secret.hex(),
            "server_commitment": event["server_commitment"],
        }
        ctx = deal_context(event["game"], hand)
        self._send("commit", commitment=seat_commitment(ctx, self.seat, secret).hex())

    def _verify(self, event: dict[str, Any]) -> None:
        own = self._own.get(event["hand"])
        if not self.table.config.verify or own is None:
            return
        problems = verify_checked(self.table.checked(event["audit"]), parse_own(own))
        self.stats.counts["audits_verified" if not problems else "audits_failed"] += 1
        if problems:
            self.stats.errors[f"fair-deal audit failed: {problems[0]}"[:120]] += 1

    # -- paced answers -----------------------------------------------------------------------

    def _prompted(self, event: dict[str, Any]) -> None:
        if self._decision is not None:
            self._decision.cancel()
        delay = self.thinking.pause(event["phase"])
        self._decision = asyncio.get_running_loop().call_later(delay, self._decide, event)

    def _decide(self, event: dict[str, Any]) -> None:
        self._decision = None
        phase, legal = event["phase"], event["legal"]
        if phase == "passing":
            self._send("pass", cards=self.rng.sample(legal, 3))
        elif phase == "playing":
            self._send("play", card=self.rng.choice(legal))
        else:
            self._send("moon", choice=self.rng.choice(event.get("choices") or ["others_26"]))

    def rematch_later(self) -> None:
        loop = asyncio.get_running_loop()
        self._decision = loop.call_later(self.thinking.rematch(), self._send, "rematch")

    async def close(self) -> None:
        if self._decision is not None:
            self._decision.cancel()
        await self.ws.close()


class Table:
    """Four players (or a host and three bots) at a friends' room, playing games until closed."""

    def __init__(
        self, index: int, endpoints: list[Endpoint], config: TableConfig, stats: PacedStats
    ) -> None:
        self.index = index
        self.config = config
        self.stats = stats
        self.seed = config.seed * 1_000_003 + index
        humans = 1 if config.bots else 4
        if config.spread:  # every seat's events cross nodes through Redis
            self.endpoints = [endpoints[(4 * index + p) % len(endpoints)] for p in range(humans)]
        else:  # room-affine: what a load balancer hashing on the room does
            self.endpoints = [endpoints[index % len(endpoints)]] * humans
        self.seats: list[Seat] = []
        self.room: str | None = None
        self.closing = False
        self._plays: dict[tuple[int, str], list[float]] = {}  # (seat, card) -> [wall, perf, seen]
        self._checked: tuple[Any, RecordCheck] | None = None  # the last audit, checked
        self.last_card: float | None = None  # when the host saw this hand's last card
        self.moved_at = time.perf_counter()  # when the host last saw a card or a deal

    def checked(self, audit: Any) -> RecordCheck:
        """The seat-independent checks of ``audit``, made once for the table's four seats: each
        seat decoded its own copy of the frame, so a copy that differs from the last one
        checked is checked anew."""
        last = self._checked
        if last is not None and last[0] == audit:
            return last[1]
        result = check_record(audit)
        self._checked = (audit, result)
        return result

    async def open(self) -> None:
        """Guests, sockets, seats, start: the table then plays by itself until ``close``."""
        cfg = self.config
        host = await self._connect(0, None)
        reply = await host.request("open_room", options={"target": cfg.target})
        self.room, host.seat = reply["room"], reply["seat"]
        if cfg.rejoin_host:  # move to a socket that names the room, as the others' do
            first, host = host, await self._connect(0, self.room, host.token)
            host.seat = (await host.request("join", room=self.room))["seat"]
            first.retired = True
            self.seats.remove(first)
            await first.close()
        if cfg.bots:
            await host.request("fill_bots")
        else:
            for p in range(1, 4):
                seat = await self._connect(p, self.room)
                joined = await seat.request("join", room=self.room)
                if joined["seat"] is None:
                    raise RuntimeError("a player was made a spectator")
                seat.seat = joined["seat"]
        await host.request("start")
        self.stats.counts["tables_seated"] += 1

    async def _connect(self, player: int, room: str | None, token: str | None = None) -> Seat:
        endpoint = self.endpoints[player]
        if token is None:
            # Letters around the numbers: "807" alone reads as "bot", a name kept for bots.
            player_name = f"Paced t{self.index}p{player}"
            token = (await guest(endpoint.http, player_name))["token"]
        url = endpoint.ws + (f"?room={quote(room)}" if room else "")
        name = MSGPACK if self.config.binary else JSON
        ws = await LeanSocket.open(
            url, name, deflate=self.config.deflate, max_size=CLIENT_MAX_FRAME, timeout=SETUP_TIMEOUT
        )
        seat = Seat(self, ws, Codec(name, max_frame=CLIENT_MAX_FRAME), player)
        self.seats.append(seat)
        self.stats.counts["sockets"] += 1
        seat.token = token
        await seat.request("auth", token=token)
        return seat

    def play_sent(self, seat: int | None, card: str) -> None:
        if seat is not None:
            self._plays[(seat, card)] = [time.time(), time.perf_counter(), 0]

    def card_seen(self, seat: int, card: str) -> None:
        pending = self._plays.get((seat, card))
        if pending is None:
            return  # a bot's card, or one played before this table's sockets were all in
        pending[2] += 1
        if pending[2] == len(self.seats):
            del self._plays[(seat, card)]
            self.stats.last_seat.append((pending[0], time.perf_counter() - pending[1]))

    def card_counted(self, seat: int, host_seat: int | None) -> None:
        """The host saw ``seat``'s card: with --bots, a bot's is timed from the card before."""
        now = time.perf_counter()
        if self.config.bots and seat != host_seat and self.last_card is not None:
            self.stats.bot_gaps.append((time.time(), now - self.last_card))
        self.last_card = self.moved_at = now

    def game_over(self, host: Seat) -> None:
        self._plays.clear()
        host.rematch_later()

    async def close(self) -> None:
        self.closing = True
        await asyncio.gather(*(s.close() for s in self.seats), return_exceptions=True)
