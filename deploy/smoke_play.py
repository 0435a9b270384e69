"""One whole game through the compose deployment's balancer, while its containers are killed.

Run by deploy/smoke.sh once the stack answers /readyz:

    python deploy/smoke_play.py --url http://127.0.0.1:PORT --compose "docker-compose -p P -f F"

Four scripted players (protocol.client, random legal choices) open a room through the HTTP API,
connect with ``/ws?room=CODE`` (so HAProxy hashes them to one node, which it names in the
``X-Hearts-Node`` header) and play to 50. Two things happen during the game:

1. A few tricks into hand 1, the node serving the room is killed (``docker kill``: SIGKILL, no
   draining). The players reconnect through the balancer, land on another node, resume and play
   on; every move acknowledged before the kill must still be in the room.
2. A few tricks into the next hand, the players hold their moves and the Redis container is
   killed (SIGKILL), removed and created again on the same volume (the append-only file). Every
   move acknowledged before must be in the room afterwards; then the game goes on to its end.

A move is "acknowledged" when the server answered ``ok``; "lost" when the room's view no longer
shows it (a play: the card among the hand's tricks; a pass: the seat's passed cards). Prints
``name: value`` figures; the last is ``moves_lost``. Exits 1 if the game did not finish or a move
was lost.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import shlex
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from typing import Any

import websockets

from protocol.client import CommandError, HeartsClient, guest, http_json

GAME_TIMEOUT = 600.0
RECONNECT_TIMEOUT = 90.0
# The server's answer when a command failed inside it (Redis was away): the move was not made,
# so sending it again is safe, as any client would.
NOT_MADE = "internal_error"


class Disconnected(Exception):
    """The socket closed under a player (its node died or drained)."""


@dataclass
class Ack:
    kind: str  # "play" or "pass"
    hand: int
    cards: list[str]
    seq: int


@dataclass
class Player:
    name: str
    token: str
    ws_url: str
    seed: int
    client: HeartsClient | None = None
    node: str = "?"
    hand: int = 0  # the hand in progress, from the room's shuffle_commit events
    acted_seq: int = 0
    acks: list[Ack] = field(default_factory=list)
    reconnects: int = 0
    retried: int = 0  # moves sent again after the server said they were not made
    # Cleared while the conductor holds every move (the Redis restart).
    go: asyncio.Event = field(default_factory=asyncio.Event)
    busy: bool = False
    online: asyncio.Event = field(default_factory=asyncio.Event)

    async def connect(self) -> None:
        self.client = await HeartsClient.connect(self.ws_url, self.token)
        response = getattr(self.client.ws, "response", None)
        headers = getattr(response, "headers", None) or getattr(
            self.client.ws, "response_headers", {}
        )
        self.node = headers.get("X-Hearts-Node", "?")
        self.online.set()

    def _watch(self, event: dict[str, Any]) -> bool:
        if event["event"] == "shuffle_commit":
            self.hand = event["hand"]
        return event["event"] in ("your_turn", "game_over")

    async def _next_prompt(self) -> dict[str, Any]:
        assert self.client is not None
        waiting = asyncio.ensure_future(self.client.next_event(self._watch, timeout=GAME_TIMEOUT))
        closed = asyncio.ensure_future(asyncio.shield(self.client.closed))
        done, _ = await asyncio.wait({waiting, closed}, return_when=asyncio.FIRST_COMPLETED)
        closed.cancel()
        if waiting in done:
            return waiting.result()
        waiting.cancel()
        raise Disconnected

    async def _act(self, phase: str, legal: list[str], rng: random.Random) -> None:
        assert self.client is not None
        await self.go.wait()
        self.busy = True
        try:
            if phase == "passing":
                cards = rng.sample(legal, 3)
                reply = await self._send("pass", cards=cards)
                self.acks.append(Ack("pass", self.hand, cards, reply["first_seq"]))
            elif phase == "playing":
                card = rng.choice(legal)
                reply = await self._send("play", card=card)
                self.acks.append(Ack("play", self.hand, [card], reply["first_seq"]))
            else:
                reply = await self._send("moon", choice="others_26")
            self.acted_seq = reply["first_seq"]
        except CommandError as e:
            # Only a race with a clock (or a resume) may refuse a prompt's own choice.
            if e.code not in ("wrong_phase", "not_your_turn", "not_seated"):
                raise
        except (ConnectionError, websockets.ConnectionClosed) as e:
            raise Disconnected from e
        finally:
            self.busy = False

    async def _send(self, kind: str, **fields: Any) -> dict[str, Any]:
        assert self.client is not None
        for attempt in range(20):
            try:
                return await self.client.request(kind, **fields)
            except CommandError as e:
                if e.code != NOT_MADE or attempt == 19:
                    raise
                self.retried += 1
                await asyncio.sleep(0.25)
        raise AssertionError("unreachable")

    async def _reconnect(self, room: str) -> None:
        old = self.client
        assert old is not None
        self.online.clear()
        seq = old.seq
        with contextlib.suppress(Exception):
            await old.close()
        deadline = time.monotonic() + RECONNECT_TIMEOUT
        while True:
            try:
                await self.connect()
                assert self.client is not None
                self.online.clear()  # not until it is back in the room
                # The same player: its shuffle secrets and verdicts go on (the resumed events
                # include the audits of hands that ended while it was away).
                self.client.own, self.client.verdicts = old.own, old.verdicts
                self.client._hand = old._hand
                await self.client.request("resume", room=room, seq=seq)
                break
            except (OSError, ConnectionError, websockets.WebSocketException, CommandError):
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.5)
        self.reconnects += 1
        # The missed events came before the answer: their prompts may be stale. Act on the view.
        while not self.client.events.empty():
            self._watch(self.client.events.get_nowait())
        view = (await self.client.request("view"))["view"]
        game = view.get("game") or {}
        self.hand = game.get("hand_number", self.hand)
        self.online.set()
        if view["you"] in view["deciding"]:
            if game["phase"] == "passing" and not game["passed"]:
                await self._act("passing", game["hand"], random.Random(self.seed + seq))
            elif game["phase"] == "playing" and game["turn"] == view["you"]:
                await self._act("playing", game["legal"], random.Random(self.seed + seq))

    async def play(self, room: str) -> dict[str, Any]:
        """Answer every prompt with a random legal choice until the game is over."""
        rng = random.Random(self.seed)
        while True:
            try:
                event = await self._next_prompt()
                if event["event"] == "game_over":
                    return event
                if event["seq"] < self.acted_seq:
                    continue  # a prompt already answered (seen again after a resume)
                await self._act(event["phase"], event["legal"], rng)
            except Disconnected:
                await self._reconnect(room)

    async def view(self) -> dict[str, Any]:
        """The room as this seat sees it, once it is connected (and back in the room)."""
        for attempt in range(60):
            await asyncio.wait_for(self.online.wait(), RECONNECT_TIMEOUT)
            assert self.client is not None
            try:
                return (await self.client.request("view"))["view"]
            except (CommandError, ConnectionError, websockets.ConnectionClosed):
                if attempt == 59:
                    raise
                await asyncio.sleep(0.5)
        raise AssertionError("unreachable")


def lost_moves(acks: list[Ack], view: dict[str, Any]) -> int:
    """How many of these acknowledged moves the room's view (of the moving seat) no longer shows.

    A move of a hand that has since ended is kept (a hand ends only after all its 52 plays);
    one of a hand the room has not reached is lost; in the current hand each is looked up."""
    game = view.get("game") or {}
    current = game.get("hand_number", 0)
    played = {c for t in game.get("tricks", []) for c in t["cards"]}
    played |= set(game.get("trick", {}).get("cards", []))
    passed = sorted(game.get("passed") or [])

    def kept(ack: Ack) -> bool:
        if ack.hand != current:
            return ack.hand < current
        return ack.cards[0] in played if ack.kind == "play" else sorted(ack.cards) == passed

    return sum(1 for ack in acks if not kept(ack))


def run(command: str, *args: str) -> str:
    done = subprocess.run(
        [*shlex.split(command), *args], capture_output=True, text=True, timeout=180
    )
    if done.returncode != 0:
        raise RuntimeError(f"{command} {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout.strip()


async def wait_ready(url: str, timeout: float = 120.0) -> float:
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        try:
            await asyncio.to_thread(urllib.request.urlopen, f"{url}/readyz", timeout=2)
            return time.monotonic() - start
        except OSError:
            await asyncio.sleep(0.25)
    raise TimeoutError(f"{url}/readyz did not answer in {timeout:.0f} s")


async def plays_in_hand(players: list[Player], hand: int, count: int) -> None:
    while sum(1 for p in players for a in p.acks if a.hand == hand and a.kind == "play") < count:
        await asyncio.sleep(0.05)


async def plays_in(players: list[Player], count: int) -> None:
    while sum(1 for p in players for a in p.acks if a.kind == "play") < count:
        await asyncio.sleep(0.05)


async def back_in_room(players: list[Player], reconnects: list[int]) -> None:
    while not all(
        p.reconnects > r and p.online.is_set() for p, r in zip(players, reconnects, strict=True)
    ):
        await asyncio.sleep(0.05)


async def hold(players: list[Player]) -> None:
    for p in players:
        p.go.clear()
    while any(p.busy for p in players):
        await asyncio.sleep(0.02)


def release(players: list[Player]) -> None:
    for p in players:
        p.go.set()


async def conduct(players: list[Player], url: str, compose: str, figures: dict[str, Any]) -> int:
    """Kill the room's node, then kill and recreate Redis, while the players play; moves lost."""
    lost = 0
    # 1. Kill the node serving the room a few tricks into hand 1.
    await asyncio.wait_for(plays_in_hand(players, 1, 10), 120)
    victim = max({p.node for p in players}, key=[p.node for p in players].count)
    container = run(compose, "ps", "-q", victim)
    reconnects = [p.reconnects for p in players]
    killed_at = time.monotonic()
    run("docker", "kill", container)
    # What was acknowledged up to the kill (an answer in flight as it died may count or not).
    before = [list(p.acks) for p in players]
    figures["node_killed"] = victim
    # Every player notices (its socket closes), reconnects through the balancer and resumes.
    await asyncio.wait_for(back_in_room(players, reconnects), RECONNECT_TIMEOUT)
    figures["all_back_after_kill_s"] = round(time.monotonic() - killed_at, 1)
    figures["nodes_after_kill"] = ",".join(sorted({p.node for p in players}))
    plays = sum(1 for p in players for a in p.acks if a.kind == "play")
    await asyncio.wait_for(plays_in(players, plays + 1), 120)
    figures["first_move_after_kill_s"] = round(time.monotonic() - killed_at, 1)
    await hold(players)
    for p, acks in zip(players, before, strict=True):
        lost += lost_moves(acks, await p.view())
    release(players)

    # 2. Recreate the Redis container from its volume a few tricks into the next hand.
    hand = max(2, max(p.hand for p in players))
    await asyncio.wait_for(plays_in_hand(players, hand, 6), 180)
    await hold(players)
    figures["moves_acked_before_redis_restart"] = sum(len(p.acks) for p in players)
    restart_at = time.monotonic()
    # SIGKILL, not a clean shutdown: Redis writes the append-only file before it answers, so
    # even a killed process has every acknowledged commit in the file (only the fsync, once a
    # second, waits: a machine crash could lose that second; a process crash cannot).
    run("docker", "kill", run(compose, "ps", "-q", "redis"))
    run(compose, "rm", "-f", "redis")
    run(compose, "up", "-d", "--no-deps", "redis")
    figures["redis_recreate_s"] = round(time.monotonic() - restart_at, 1)
    await wait_ready(url)
    figures["redis_ready_through_lb_s"] = round(time.monotonic() - restart_at, 1)
    for p in players:
        lost += lost_moves(p.acks, await p.view())
    release(players)
    return lost


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", required=True, help="the balancer, http://HOST:PORT")
    parser.add_argument("--compose", required=True, help="the docker-compose command line")
    parser.add_argument("--seed", type=int, default=15)
    args = parser.parse_args()
    url = args.url.rstrip("/")
    figures: dict[str, Any] = {}

    idents = [await guest(url, f"Smoke {i + 1}") for i in range(4)]
    created = await asyncio.to_thread(
        http_json, f"{url}/api/rooms", {"options": {"target": 50}}, idents[0]["token"]
    )
    room = created["room"]
    ws_url = url.replace("http", "ws", 1) + f"/ws?room={room}"
    players = [
        Player(i["name"], i["token"], ws_url, seed=args.seed * 10 + k) for k, i in enumerate(idents)
    ]
    release(players)
    for p in players:
        await p.connect()
        assert p.client is not None
        await p.client.request("join", room=room)
    figures["nodes_serving_room"] = ",".join(sorted({p.node for p in players}))
    assert players[0].client is not None
    await players[0].client.request("start")
    game = asyncio.gather(*(p.play(room) for p in players))
    conductor = asyncio.ensure_future(conduct(players, url, args.compose, figures))
    try:
        # Either side failing ends the run at once (a player's error, a step that timed out).
        results, lost = await asyncio.wait_for(asyncio.gather(game, conductor), GAME_TIMEOUT)
    except BaseException:
        game.cancel()
        conductor.cancel()
        raise
    scores = [r["scores"] for r in results]
    finished = all(s == scores[0] for s in scores) and max(scores[0]) >= 50
    figures["hands_played"] = max(p.hand for p in players)
    verdicts = [(h, v) for p in players for h, v in p.client.verdicts.items()]  # type: ignore[union-attr]
    figures["hands_verified"] = f"{sum(1 for _, v in verdicts if not v)}/{len(verdicts)}"
    for hand, problems in sorted(verdicts):
        for problem in problems:
            print(f"# hand {hand}'s audit: {problem}", file=sys.stderr)
    figures["reconnects"] = sum(p.reconnects for p in players)
    figures["moves_retried"] = sum(p.retried for p in players)
    figures["moves_acked"] = sum(len(p.acks) for p in players)
    figures["final_scores"] = " ".join(map(str, scores[0]))
    figures["game_finished"] = "yes" if finished else "no"
    figures["moves_lost"] = lost
    for name, value in figures.items():
        print(f"{name}: {value}")
    for p in players:
        with contextlib.suppress(Exception):
            await p.client.close()  # type: ignore[union-attr]
    return 0 if finished and lost == 0 else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
