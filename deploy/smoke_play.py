"""One whole game through a deployment while its node and its Redis are killed.

Run by deploy/smoke.sh once the compose stack answers /readyz:

    python deploy/smoke_play.py --url http://127.0.0.1:PORT --compose "docker-compose -p P -f F"

and, under ``make test``, by tests/e2e/test_deploy_players.py against local processes (``play_game``
with a ``Deployment`` that kills processes instead of containers), so this code cannot rot unseen.

Four scripted players (protocol.client, random legal choices) open a room through the HTTP API
and play to 50. Each is a ``HeartsClient`` with the client's own reconnect policy, given the
deployment's WebSocket URLs (the balancer, which routes ``/ws?room=CODE`` to a node and names it
in ``X-Hearts-Node``, or the nodes themselves) and nothing else: when its socket dies the client
dials again, authenticates and resumes the room by itself; the player only acts again from a
fresh view after a ``reconnected`` event or an ``OutcomeUnknown``. Two things happen mid-game:

1. A few tricks into hand 1, the node serving the room is killed (SIGKILL, no draining). The
   clients reconnect, land on another node, resume and play on.
2. A few tricks into the next hand, Redis is killed (SIGKILL) while they play, and started again
   on its append-only file; then the game goes on to its end.

A move is "acknowledged" when the server answered ``ok``; "lost" when the hand's archived audit
(fetched with ``audit`` once the game is over) does not show it: a play among the cards of that
seat in the hand's tricks, a pass as that seat's passed cards. Prints ``name: value`` figures; the
last is ``moves_lost``. Exits 1 if the game did not finish or a move was lost.
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
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from protocol.client import Backoff, CommandError, HeartsClient, OutcomeUnknown, guest, http_json

GAME_TIMEOUT = 600.0
RECONNECT_TIMEOUT = 90.0
# Patient enough for a Redis restart behind a balancer that marked every node down meanwhile.
RECONNECT = Backoff(first=0.05, longest=1.0, give_up_after=RECONNECT_TIMEOUT)
# Answers meaning the move was not made (a node's store failed under it): try again shortly.
NOT_MADE = frozenset({"internal_error", "store_unavailable"})
# A view read just before a clock, a boot or another seat's move can be stale by the time the
# move arrives: read again.
STALE = frozenset({"wrong_phase", "not_your_turn", "already_passed"})
TRY_FOR = 60.0  # seconds a decision keeps trying through answers of NOT_MADE or STALE
PROMPTS = frozenset({"your_turn", "game_over", "reconnected"})


@dataclass(frozen=True)
class Ack:
    """A move the server acknowledged: which hand, which seat, which cards."""

    kind: str  # "play" or "pass"
    hand: int
    seat: int
    cards: list[str]


def node_of(client: HeartsClient) -> str:
    """The node this client's socket is on: as the balancer names it, else the URL it dialed."""
    response = getattr(client.ws, "response", None)
    named = response.headers.get("X-Hearts-Node") if response is not None else None
    return str(named or client.urls[client.url_index])


@dataclass
class Player:
    client: HeartsClient
    rng: random.Random
    acks: list[Ack] = field(default_factory=list)
    retried: int = 0  # moves sent again after the server said they were not made
    hand: int = 0  # the hand of the last view read

    async def play(self) -> list[int]:
        """Make every decision of this seat until the game is over; the final scores.

        The prompts only wake the player: what to do is read from a fresh view each time, so a
        prompt replayed by a resume, or one lost in a resume that answered with a view, does no
        harm (after a reconnection the client queues a ``reconnected`` event)."""
        while True:
            event = await self.client.next_event(
                lambda e: e["event"] in PROMPTS, timeout=GAME_TIMEOUT
            )
            if event["event"] == "game_over":
                return list(event["scores"])
            scores = await self.decide()
            if scores is not None:
                return scores

    async def decide(self) -> list[int] | None:
        """Make this seat's pending decision, if any; the final scores if the game is over."""
        deadline = time.monotonic() + TRY_FOR
        while True:
            try:
                return await self._decide_once()
            except OutcomeUnknown:
                pass  # the client has resumed the room: the next view says if it was made
            except CommandError as e:
                if e.code not in NOT_MADE | STALE or time.monotonic() > deadline:
                    raise
                self.retried += e.code in NOT_MADE
                await asyncio.sleep(0.25 if e.code in NOT_MADE else 0.05)

    async def _decide_once(self) -> list[int] | None:
        view = (await self.client.request("view"))["view"]
        game, seat = view.get("game") or {}, view["you"]
        self.hand = game.get("hand_number", self.hand)
        if game.get("phase") == "over":
            return list(game["scores"])
        if seat is None or seat not in view["deciding"]:
            return None
        if game["phase"] == "passing":
            cards = self.rng.sample(game["hand"], 3)
            await self.client.request("pass", cards=cards)
            self.acks.append(Ack("pass", self.hand, seat, cards))
        elif game["phase"] == "playing":
            card = self.rng.choice(game["legal"])
            await self.client.request("play", card=card)
            self.acks.append(Ack("play", self.hand, seat, [card]))
        elif game["phase"] == "moon_choice":
            await self.client.request("moon", choice="others_26")
        return None


def lost_moves(acks: list[Ack], audits: dict[int, dict[str, Any]]) -> int:
    """How many acknowledged moves the hands' audits (by hand number) do not show.

    In an audit's trick, card m was played by seat (leader + m) mod 4; ``passes`` lists each
    seat's three cards (sorted, or null for a hand without a pass)."""
    played: set[tuple[int, int, str]] = set()
    passed: dict[tuple[int, int], list[str]] = {}
    for hand, audit in audits.items():
        for trick in audit["tricks"]:
            for m, card in enumerate(trick["cards"]):
                played.add((hand, (trick["leader"] + m) % 4, card))
        for seat, cards in enumerate(audit["passes"] or []):
            passed[hand, seat] = sorted(cards)

    def kept(ack: Ack) -> bool:
        if ack.kind == "play":
            return (ack.hand, ack.seat, ack.cards[0]) in played
        return passed.get((ack.hand, ack.seat)) == sorted(ack.cards)

    return sum(1 for ack in acks if not kept(ack))


@dataclass(frozen=True)
class Deployment:
    """Where the game is played and how the conductor breaks it.

    ``kill_node`` gets a node's name as ``node_of`` gives it and must kill it without warning;
    ``restart_redis`` kills Redis and brings it back on its data, returning once the nodes can
    reach it again (None: no Redis restart)."""

    http_url: str
    ws_urls: list[str]
    kill_node: Callable[[str], Awaitable[None]]
    restart_redis: Callable[[], Awaitable[None]] | None = None


@dataclass
class Outcome:
    figures: dict[str, Any]
    lost: int
    finished: bool


async def _until(condition: Callable[[], bool], timeout: float) -> None:
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.05)


def _plays(players: list[Player], hand: int | None = None) -> int:
    return sum(1 for p in players for a in p.acks if a.kind == "play" and hand in (None, a.hand))


async def conduct(players: list[Player], deployment: Deployment, figures: dict[str, Any]) -> None:
    """Kill the room's node, then (if the deployment can) restart Redis, while they play."""
    # 1. The node serving the room, a few tricks into hand 1.
    await _until(lambda: _plays(players, 1) >= 10, 120)
    nodes = [node_of(p.client) for p in players]
    victim = Counter(nodes).most_common(1)[0][0]
    on_victim = [
        (p, p.client.reconnects) for p, n in zip(players, nodes, strict=True) if n == victim
    ]
    killed_at = time.monotonic()
    await deployment.kill_node(victim)
    figures["node_killed"] = victim
    # Its players' clients notice (the socket closes), dial again, authenticate and resume.
    await _until(lambda: all(p.client.reconnects > r for p, r in on_victim), RECONNECT_TIMEOUT)
    figures["all_back_after_kill_s"] = round(time.monotonic() - killed_at, 1)
    figures["nodes_after_kill"] = ",".join(sorted({node_of(p.client) for p in players}))
    plays = _plays(players)
    await _until(lambda: _plays(players) > plays, 120)
    figures["first_move_after_kill_s"] = round(time.monotonic() - killed_at, 1)
    if deployment.restart_redis is None:
        return

    # 2. Redis, a few tricks into the next hand, while they play: moves in flight meet a store
    # that fails (not made: sent again) or may have committed (OutcomeUnknown: read the view).
    hand = max(2, *(p.hand for p in players))
    await _until(lambda: _plays(players, hand) >= 6, 180)
    figures["moves_acked_before_redis_restart"] = sum(len(p.acks) for p in players)
    restart_at = time.monotonic()
    await deployment.restart_redis()
    figures["redis_back_s"] = round(time.monotonic() - restart_at, 1)
    plays = _plays(players)
    await _until(lambda: _plays(players) > plays, 120)
    figures["first_move_after_redis_s"] = round(time.monotonic() - restart_at, 1)


async def audits_of(client: HeartsClient, hands: int) -> dict[int, dict[str, Any]]:
    """The archived audits of hands 1..hands of the room's game (a hand not found is left out)."""
    audits = {}
    for hand in range(1, hands + 1):
        with contextlib.suppress(CommandError):
            audits[hand] = (await client.request("audit", hand=hand))["audit"]
    return audits


async def play_game(deployment: Deployment, *, seed: int = 15, target: int = 50) -> Outcome:
    """Play a whole game (to ``target``: 50 or 100) through the deployment while the conductor
    breaks it; the figures, the acknowledged moves lost, and whether the game finished."""
    figures: dict[str, Any] = {}
    url = deployment.http_url
    idents = [await guest(url, f"Smoke {i + 1}") for i in range(4)]
    created = await asyncio.to_thread(
        http_json, f"{url}/api/rooms", {"options": {"target": target}}, idents[0]["token"]
    )
    room = created["room"]
    players: list[Player] = []
    try:
        for k, ident in enumerate(idents):
            client = await HeartsClient.connect(
                deployment.ws_urls, ident["token"], reconnect=RECONNECT, room=room
            )
            players.append(Player(client, random.Random(seed * 10 + k)))
            await client.request("join", room=room)
        figures["nodes_serving_room"] = ",".join(sorted({node_of(p.client) for p in players}))
        await players[0].client.request("start")
        game = asyncio.gather(*(p.play() for p in players))
        conductor = asyncio.ensure_future(conduct(players, deployment, figures))
        try:
            # Either side failing ends the run at once (a player's error, a step timed out).
            results, _ = await asyncio.wait_for(asyncio.gather(game, conductor), GAME_TIMEOUT)
        except BaseException:
            game.cancel()
            conductor.cancel()
            raise
        finished = all(s == results[0] for s in results) and max(results[0]) >= target
        hands = max(p.hand for p in players)
        acks = [a for p in players for a in p.acks]
        hands = max(hands, *(a.hand for a in acks))
        lost = lost_moves(acks, await audits_of(players[0].client, hands))
        verdicts = [v for p in players for v in p.client.verdicts.values()]
        figures["hands_played"] = hands
        figures["hands_verified"] = f"{sum(1 for v in verdicts if not v)}/{len(verdicts)}"
        figures["reconnects"] = sum(p.client.reconnects for p in players)
        figures["outcomes_unknown"] = sum(len(p.client.unknown_outcomes) for p in players)
        figures["moves_retried"] = sum(p.retried for p in players)
        figures["moves_acked"] = len(acks)
        figures["final_scores"] = " ".join(map(str, results[0]))
        figures["game_finished"] = "yes" if finished else "no"
        figures["moves_lost"] = lost
        for p in players:
            for hand, problems in sorted(p.client.verdicts.items()):
                for problem in problems:
                    print(f"# hand {hand}'s audit: {problem}", file=sys.stderr)
        return Outcome(figures, lost, finished)
    finally:
        for p in players:
            await p.client.close()


# -- the compose deployment (deploy/smoke.sh) ---------------------------------------------------


def run(command: str, *args: str) -> str:
    done = subprocess.run(
        [*shlex.split(command), *args], capture_output=True, text=True, timeout=180
    )
    if done.returncode != 0:
        raise RuntimeError(f"{command} {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout.strip()


async def wait_ready(url: str, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            await asyncio.to_thread(urllib.request.urlopen, f"{url}/readyz", timeout=2)
            return
        except OSError:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{url}/readyz did not answer in {timeout:.0f} s") from None
            await asyncio.sleep(0.25)


def compose_deployment(url: str, compose: str) -> Deployment:
    """The compose stack behind its balancer: nodes are compose services (HAProxy names them)."""

    async def kill_node(service: str) -> None:
        container = await asyncio.to_thread(run, compose, "ps", "-q", service)
        await asyncio.to_thread(run, "docker", "kill", container)

    async def restart_redis() -> None:
        # SIGKILL, not a clean shutdown: Redis writes the append-only file before it answers, so
        # even a killed process has every acknowledged commit in the file (only the fsync, once
        # a second, waits: a machine crash could lose that second; a process crash cannot).
        container = await asyncio.to_thread(run, compose, "ps", "-q", "redis")
        await asyncio.to_thread(run, "docker", "kill", container)
        await asyncio.to_thread(run, compose, "rm", "-f", "redis")
        await asyncio.to_thread(run, compose, "up", "-d", "--no-deps", "redis")
        await wait_ready(url)

    ws = url.replace("http", "ws", 1) + "/ws"
    return Deployment(url, [ws], kill_node, restart_redis)


async def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--url", required=True, help="the balancer, http://HOST:PORT")
    parser.add_argument("--compose", required=True, help="the docker-compose command line")
    parser.add_argument("--seed", type=int, default=15)
    args = parser.parse_args()
    outcome = await play_game(
        compose_deployment(args.url.rstrip("/"), args.compose), seed=args.seed
    )
    for name, value in outcome.figures.items():
        print(f"{name}: {value}")
    return 0 if outcome.finished and outcome.lost == 0 else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
