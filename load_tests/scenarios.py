"""Load scenarios: friends' tables of four socket players who answer every prompt at once.

Each player is a real client (``protocol.client.HeartsClient``): it authenticates with a guest
token from the HTTP API, answers the server's pings, takes part in every hand's commit-reveal
shuffle and verifies each hand's audit, exactly as a person's client would. The only thing it
does not do is think: a prompt is answered with a random legal choice as soon as it arrives,
so the server, not the players, sets the pace.

A table's four players are spread over the given endpoints (player p of table t goes to
endpoint (4t + p) mod n), so with several nodes every table's events cross nodes through Redis.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from protocol.client import CommandError, HeartsClient, guest


@dataclass(frozen=True, slots=True)
class Endpoint:
    http: str  # http://host:port
    ws: str  # ws://host:port/ws


@dataclass
class Stats:
    """What the players measured; every figure of the report comes from here or the servers."""

    move_latencies: list[float] = field(default_factory=list)  # seconds, send → ok
    plays: int = 0  # cards played and acknowledged
    passes: int = 0
    moons: int = 0
    connections: int = 0  # sockets opened and authenticated
    games_finished: int = 0  # games whose game_over every seat of the table saw
    games_unfinished: int = 0  # cut by the time limit
    hands: int = 0  # hand_over events (counted once per table)
    audits_verified: int = 0  # hand audits a seat checked and found right
    errors: Counter[str] = field(default_factory=Counter)

    @property
    def moves(self) -> int:
        return self.plays + self.passes + self.moons


class TimeUp(Exception):
    """The run's time limit came before the game's end."""


class Table:
    """Four players at one friends' room: the host opens it, three join, the host starts."""

    def __init__(
        self,
        index: int,
        endpoints: list[Endpoint],
        *,
        binary: bool = True,
        target: int = 50,
        seed: int = 0,
    ) -> None:
        self.index = index
        self.endpoints = [endpoints[(4 * index + p) % len(endpoints)] for p in range(4)]
        self.binary = binary
        self.target = target
        self.rngs = [random.Random(seed * 1_000_003 + 4 * index + p) for p in range(4)]
        self.clients: list[HeartsClient] = []
        self.seats: list[int] = []
        self.room: str | None = None

    async def connect(self, stats: Stats) -> None:
        """Guest identities and authenticated sockets for the four players."""
        for p, endpoint in enumerate(self.endpoints):
            # Letters around the numbers: "807" alone reads as "bot", a name kept for bots.
            ident = await guest(endpoint.http, f"Load t{self.index}p{p}")
            client = await HeartsClient.connect(endpoint.ws, ident["token"], binary=self.binary)
            self.clients.append(client)
            stats.connections += 1

    async def sit_down(self) -> None:
        host, *others = self.clients
        reply = await host.request("open_room", options={"target": self.target})
        self.room = reply["room"]
        self.seats = [reply["seat"]]
        for client in others:
            joined = await client.request("join", room=self.room)
            if joined["seat"] is None:
                raise RuntimeError(f"table {self.index}: a player was made a spectator")
            self.seats.append(joined["seat"])

    async def play(self, games: int, stats: Stats, deadline: float) -> None:
        """Play ``games`` whole games (rematches after the first), or until the deadline."""
        for number in range(games):
            hands_before = self._hands_seen()
            try:
                await self._game(first=number == 0, stats=stats, deadline=deadline)
            except TimeUp:
                stats.games_unfinished += 1
                return
            finally:
                stats.hands += self._hands_seen() - hands_before
                self._collect_verdicts(stats)
            stats.games_finished += 1

    async def close(self) -> None:
        await asyncio.gather(*(c.close() for c in self.clients), return_exceptions=True)

    def frames_received(self) -> int:
        return sum(len(c.frames) for c in self.clients)

    # -- one game ----------------------------------------------------------------------------

    async def _game(self, *, first: bool, stats: Stats, deadline: float) -> None:
        host = self.clients[0]
        try:
            await host.request("start" if first else "rematch", timeout=self._left(deadline))
        except CommandError as e:
            stats.errors[f"{'start' if first else 'rematch'} refused: {e.code}"] += 1
            raise TimeUp from e  # the table cannot play on; count the game as unfinished
        results = await asyncio.gather(
            *(self._seat(p, stats, deadline) for p in range(4)), return_exceptions=True
        )
        for result in results:
            if isinstance(result, TimeUp):
                raise result
            if isinstance(result, BaseException):
                stats.errors[f"player failed: {type(result).__name__}: {result}"[:120]] += 1
                raise TimeUp from result

    async def _seat(self, p: int, stats: Stats, deadline: float) -> None:
        client, rng, seat = self.clients[p], self.rngs[p], self.seats[p]
        acted = 0  # the first seq of this seat's last answered move: older prompts are stale

        def wanted(event: dict[str, Any]) -> bool:
            name = event["event"]
            if name in ("your_turn", "game_over"):
                return True
            return name in ("out_of_time", "replaced") and event.get("seat") == seat

        while True:
            event = await self._next(client, wanted, deadline)
            name = event["event"]
            if name == "game_over":
                return
            if name == "out_of_time":  # the server was too slow for the turn clock
                stats.errors["seat out of time"] += 1
                continue
            if name == "replaced":
                stats.errors[f"seat replaced ({event.get('reason')})"] += 1
                raise TimeUp  # this player has no seat left to play
            if event["seq"] < acted:
                continue
            phase = event["phase"]
            if phase == "passing":
                kind, fields = "pass", {"cards": rng.sample(event["legal"], 3)}
            elif phase == "playing":
                kind, fields = "play", {"card": rng.choice(event["legal"])}
            else:
                choices = event.get("choices") or ["others_26"]
                kind, fields = "moon", {"choice": rng.choice(choices)}
            started = time.perf_counter()
            try:
                reply = await client.request(kind, timeout=self._left(deadline), **fields)
            except CommandError as e:
                stats.errors[f"{kind} refused: {e.code}"] += 1
                continue
            except TimeoutError:
                raise TimeUp from None
            stats.move_latencies.append(time.perf_counter() - started)
            acted = reply.get("first_seq", acted)
            if kind == "play":
                stats.plays += 1
            elif kind == "pass":
                stats.passes += 1
            else:
                stats.moons += 1

    async def _next(self, client: HeartsClient, wanted: Any, deadline: float) -> dict[str, Any]:
        """The next wanted event; TimeUp at the deadline, an error if the socket closes."""
        getter = asyncio.ensure_future(client.next_event(wanted, timeout=self._left(deadline)))
        waited: set[asyncio.Future[Any]] = {getter, client.closed}
        done, _ = await asyncio.wait(waited, return_when=asyncio.FIRST_COMPLETED)
        if getter in done:
            try:
                return getter.result()
            except TimeoutError:
                raise TimeUp from None
        getter.cancel()
        code, reason = client.closed.result()
        raise ConnectionError(f"socket closed by the server: {code} {reason}".strip())

    @staticmethod
    def _left(deadline: float) -> float:
        left = deadline - asyncio.get_running_loop().time()
        if left <= 0:
            raise TimeUp
        return left

    def _hands_seen(self) -> int:
        return sum(1 for f in self.clients[0].frames if f.get("event") == "hand_over")

    def _collect_verdicts(self, stats: Stats) -> None:
        for client in self.clients:
            for problems in client.verdicts.values():
                if problems:
                    stats.errors["fair-deal audit failed"] += 1
                else:
                    stats.audits_verified += 1
            client.verdicts.clear()
