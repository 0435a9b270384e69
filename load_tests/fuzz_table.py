"""The wire fuzzer's live side: a game in progress, and hostile sockets aimed at it.

``FuzzTable.start()`` seats three honest players (a host, a second player, and the player
whose second socket is the ``seat`` attacker) and a bot, starts a game and keeps the table
playing (the host starts a rematch after each game). ``fire(attacker, frames)`` sends frames
through one hostile socket and returns every problem seen: answers that are not ``ok`` or
``error`` with a registered code and a sentence, stack-trace text in any frame, a missing
answer, an unexpected close, or a view changed by frames that were all refused.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import websockets
from websockets.typing import Subprotocol

from protocol.client import CommandError, HeartsClient, guest
from protocol.codec import JSON, MSGPACK, Codec
from server.net.connection import RATE_BURST, RATE_PER_SECOND

from .fuzz_frames import Frame, answer_problems, comparable_view, trace_text

READ_ONLY = frozenset({"view", "ping", "audit", "hint", "ladder", "auth"})
RACES = frozenset(  # what a prompt's own answer may meet when the seat's other socket moved first
    {
        "wrong_phase",
        "not_your_turn",
        "already_passed",
        "card_not_in_hand",
        "must_follow_suit",
        "no_points_on_first_trick",
        "hearts_not_broken",
        "must_lead_two_of_clubs",
    }
)
ANSWER_WAIT = 10.0
# Each hostile socket keeps to the documented rate limit exactly (docs/protocol.md, "Limits"):
# the server must never close it as a flood.
RATE, BURST = RATE_PER_SECOND, RATE_BURST
CHURN_AFTER = 150  # anon and stranger sockets start afresh rather than wait for the rate


@dataclass
class Problem:
    finding: str  # "" for a new problem, else the id of a known finding (fuzz-findings.md)
    where: str  # the attacker, e.g. "seat/hearts.v1.json"
    detail: str
    frame: bytes | str | None = None

    def line(self) -> str:
        known = f"[{self.finding}] " if self.finding else ""
        return f"{known}{self.where}: {self.detail} <- {self.frame!r:.300}"


@dataclass
class Tally:
    frames: int = 0
    answers: int = 0
    internal_errors: int = 0
    view_checks: int = 0
    reopened: int = 0
    codes: Counter[str] = field(default_factory=Counter)


class Attacker:
    """One hostile socket: raw frames out, every frame in checked."""

    def __init__(self, table: FuzzTable, kind: str, subprotocol: str, token: str | None) -> None:
        self.table = table
        self.kind = kind
        self.subprotocol = subprotocol
        self.token = token
        self.codec = Codec(subprotocol, max_frame=2**22)
        self.ws: Any = None
        self.answers: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.problems: list[Problem] = []
        self.on_socket = 0
        self._tokens = BURST
        self._refill = time.monotonic()
        self._reader: asyncio.Task[None] | None = None

    @property
    def name(self) -> str:
        return f"{self.kind}/{self.subprotocol}"

    async def open(self) -> None:
        await self.close()
        self.ws = await websockets.connect(
            self.table.ws_url, subprotocols=[Subprotocol(self.subprotocol)], max_size=2**22
        )
        self.answers = asyncio.Queue()
        self.on_socket = 0
        self._tokens, self._refill = BURST, time.monotonic()
        self._reader = asyncio.create_task(self._read(self.ws))
        if self.token is not None:
            await self.call({"type": "auth", "id": "a", "token": self.token})
        if self.kind in ("watcher", "seat"):
            await self.call({"type": "join", "id": "j", "room": self.table.room})

    async def close(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
            await asyncio.wait({self._reader})
            self._reader = None
        if self.ws is not None:
            with contextlib.suppress(Exception):
                await self.ws.close()
            self.ws = None

    async def _read(self, ws: Any) -> None:
        with contextlib.suppress(websockets.ConnectionClosed):
            async for raw in ws:
                message = self.codec.decode(raw)
                trace = trace_text(message)
                if trace:
                    self.problems.append(
                        Problem("", self.name, f"stack-trace text {trace!r} in {message!r:.200}")
                    )
                if message.get("type") in ("ok", "error"):
                    self.answers.put_nowait(message)

    async def _pace(self) -> None:
        now = time.monotonic()
        self._tokens = min(BURST, self._tokens + (now - self._refill) * RATE)
        self._refill = now
        if self._tokens < 1:
            await asyncio.sleep((1 - self._tokens) / RATE)
            # The wait earned the one token: counted from now, or the next call would earn it
            # again (twice the rate, over the server's limit, once the sender is fast enough).
            self._tokens = 1
            self._refill = time.monotonic()
        self._tokens -= 1
        self.on_socket += 1

    async def call(self, message: dict[str, Any]) -> dict[str, Any]:
        """A control command (not fuzz): sent and answered in order."""
        await self._pace()
        await self.ws.send(self.codec.encode(message))
        return await asyncio.wait_for(self.answers.get(), ANSWER_WAIT)

    async def view(self) -> dict[str, Any] | None:
        answer = await self.call({"type": "view", "id": "v"})
        return answer.get("view") if answer.get("type") == "ok" else None

    async def fire(self, frames: list[Frame], tally: Tally) -> list[Problem]:
        problems: list[Problem] = []
        churn = self.kind in ("anon", "stranger") and self.on_socket + len(frames) > CHURN_AFTER
        if self.ws is None or churn:  # a fresh socket has a fresh allowance
            await self.open()
            tally.reopened += 1
        check_view = self.kind in ("watcher", "seat")
        before = await self.view() if check_view else None
        sent = 0
        for frame in frames:
            await self._pace()
            try:
                await self.ws.send(frame.payload)
            except websockets.ConnectionClosed:
                break
            sent += 1
        tally.frames += sent
        changed = False
        for frame in frames[:sent]:
            try:
                answer = await asyncio.wait_for(self.answers.get(), ANSWER_WAIT)
            except TimeoutError:
                code = getattr(self.ws, "close_code", None)
                reason = getattr(self.ws, "close_reason", "") or ""
                what = "no answer" if code is None else f"socket closed with {code} {reason}"
                problems.append(Problem("", self.name, what, frame.payload))
                await self.open()
                tally.reopened += 1
                return problems + self._drain()
            tally.answers += 1
            tally.codes[str(answer.get("code", "ok"))] += 1
            if answer.get("code") == "internal_error":
                tally.internal_errors += 1
            if answer["type"] == "ok" and frame.command not in READ_ONLY:
                changed = True  # accepted (a legitimate move of this seat, say)
            for finding, detail in answer_problems(frame, answer):
                problems.append(Problem(finding, self.name, detail, frame.payload))
        if check_view and not changed and before is not None:
            after = await self.view()
            if after is not None and after.get("seq") == before.get("seq"):
                tally.view_checks += 1
                if comparable_view(after) != comparable_view(before):
                    diff = {k for k in after if after.get(k) != before.get(k)}
                    problems.append(
                        Problem("", self.name, f"refused frames changed the view: {sorted(diff)}",
                                repr([f.payload for f in frames]))
                    )  # fmt: skip
        return problems + self._drain()

    def _drain(self) -> list[Problem]:
        problems, self.problems = self.problems, []
        return problems


class Honest:
    """A player who answers every prompt with a random legal choice after a short think."""

    def __init__(self, table: FuzzTable, client: HeartsClient, seed: int, host: bool) -> None:
        self.table = table
        self.client = client
        self.rng = random.Random(seed)
        self.host = host
        self.acted = 0
        self.task: asyncio.Task[None] | None = None

    async def run(self) -> None:
        client, table = self.client, self.table
        while True:
            event = await client.next_event(
                lambda e: e["event"] in ("your_turn", "game_over"), timeout=3600
            )
            if event["event"] == "game_over":
                if self.host:
                    table.games_finished += 1
                    table.game_over.set()
                    if not table.stopping:
                        await asyncio.sleep(0.1)
                        await self._do("rematch", {})
                continue
            if event["seq"] < self.acted:
                continue
            await asyncio.sleep(self.rng.uniform(*table.think))
            if event["phase"] == "passing":
                await self._do("pass", {"cards": self.rng.sample(event["legal"], 3)})
            elif event["phase"] == "playing":
                await self._do("play", {"card": self.rng.choice(event["legal"])})
            else:
                await self._do("moon", {"choice": "others_26"})

    async def _do(self, kind: str, fields: dict[str, Any]) -> None:
        try:
            reply = await self.client.request(kind, **fields)
            self.acted = reply.get("first_seq", self.acted)
        except CommandError as e:
            if e.code not in RACES:
                self.table.honest_problems.append(f"honest {kind} refused: {e.code} {e.message}")


class FuzzTable:
    def __init__(self, base: str, ws_url: str, think: tuple[float, float] = (0.02, 0.08)) -> None:
        self.base = base
        self.ws_url = ws_url
        self.think = think
        self.room = ""
        self.players: list[Honest] = []
        self.attackers: list[Attacker] = []
        self.games_finished = 0
        self.game_over = asyncio.Event()
        self.honest_problems: list[str] = []
        self.stopping = False
        self.tally = Tally()

    async def start(self, per_kind: int = 1) -> None:
        idents = [await guest(self.base, name) for name in ("Host", "Second", "Fuzzed seat")]
        clients = [await HeartsClient.connect(self.ws_url, i["token"]) for i in idents]
        self.room = (await clients[0].request("open_room", options={"target": 50}))["room"]
        for c in clients[1:]:
            await c.request("join", room=self.room)
        await clients[0].request("fill_bots", level="random")
        await clients[0].request("start")
        self.players = [Honest(self, c, k, host=k == 0) for k, c in enumerate(clients)]
        for player in self.players:
            player.task = asyncio.create_task(player.run())
        stranger = await guest(self.base, "Stranger")
        watcher = await guest(self.base, "Watcher")
        tokens = {
            "anon": None,
            "stranger": stranger["token"],
            "watcher": watcher["token"],
            "seat": idents[2]["token"],
        }
        for kind, token in tokens.items():
            for subprotocol in (MSGPACK, JSON):
                for _ in range(per_kind):
                    attacker = Attacker(self, kind, subprotocol, token)
                    await attacker.open()
                    self.attackers.append(attacker)

    def attacker(self, kind: str, subprotocol: str, index: int = 0) -> Attacker:
        matching = [a for a in self.attackers if (a.kind, a.subprotocol) == (kind, subprotocol)]
        return matching[index % len(matching)]

    async def fire(self, attacker: Attacker, frames: list[Frame]) -> list[Problem]:
        try:
            return await attacker.fire(frames, self.tally)
        except (OSError, websockets.InvalidHandshake, websockets.ConnectionClosed) as e:
            await attacker.open()
            return [Problem("", attacker.name, f"socket failed: {type(e).__name__}: {e}")]

    async def finish_game(self, timeout: float) -> bool:
        """Stop rematches and wait for the game in progress to end: the honest game finishes."""
        self.stopping = True
        self.game_over.clear()
        try:
            await asyncio.wait_for(self.game_over.wait(), timeout)
            return True
        except TimeoutError:
            return False

    def verdict_problems(self) -> list[str]:
        """Fair-deal verdicts of the two players no attacker shares a token with."""
        return [
            f"hand {hand}: {problems}"
            for player in self.players[:2]
            for hand, problems in player.client.verdicts.items()
            if problems
        ]

    async def close(self) -> None:
        for attacker in self.attackers:
            await attacker.close()
        for player in self.players:
            if player.task is not None:
                player.task.cancel()
                await asyncio.wait({player.task})
            await player.client.close()
