"""Sockets that send at exactly the documented rate limit, and what the server does to them.

    python -m load_tests.soak_rate                          # 10 sockets for 600 s
    python -m load_tests.soak_rate --sockets 20 --seconds 60
    python -m load_tests.soak_rate --url ws://127.0.0.1:8000/ws   # a running node (loopback only)

docs/protocol.md, "Limits": a burst of RATE_BURST commands, then RATE_PER_SECOND a second. Each
socket here keeps to that by its own clock, to the limit and no further: a burst of RATE_BURST
after an idle spell exactly long enough to earn it back, then RATE_PER_SECOND a second for a
while, again and again (``at_the_limit``). Frames go out on an absolute schedule, never early.
Half the sockets send ``ping`` (no store), half ``view`` in a room of their own (a store read
each): commands that wait behind slower ones must not be counted as sent at once.

Without --url it starts a private redis-server and one node on free loopback ports. The report's
lines are ``name: value``; ``sockets_closed_for_flood`` must be 0. The exit status is 1 if any
socket was closed or lost an answer. The suite's short check is tests/e2e/test_e2e_rate_limit.py.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import msgpack
import websockets
from websockets.typing import Subprotocol

from load_tests.bench_rules import machine_speed, machine_speed_line
from load_tests.cluster import Cluster, endpoint_for, require_loopback
from protocol.client import guest
from protocol.codec import MSGPACK
from server.net.connection import RATE_BURST, RATE_PER_SECOND

REFILL = RATE_BURST / RATE_PER_SECOND  # seconds of idling that earn a whole burst back
ANSWER_WAIT = 30.0


def burst_then_rate(start: float, burst: int, rate: float, count: int) -> list[float]:
    """Send times (seconds from the socket's start): ``burst`` at ``start``, then ``count``
    more at ``rate`` a second."""
    return [start] * burst + [start + k / rate for k in range(1, count + 1)]


def at_the_limit(seconds: float, rng: random.Random) -> list[float]:
    """Bursts of RATE_BURST, each after idling exactly REFILL, with spells of RATE_PER_SECOND
    a second (1 to 20 s) between them, for about ``seconds``."""
    times: list[float] = []
    start = 0.0
    while start < seconds:
        spell = int(rng.uniform(1, 20) * RATE_PER_SECOND)
        times += burst_then_rate(start, int(RATE_BURST), RATE_PER_SECOND, spell)
        start = times[-1] + REFILL
    return times


@dataclass
class Outcome:
    sent: int = 0
    answered: int = 0
    rate_limited: int = 0
    close_code: int | None = None  # the server's close, None while the socket stayed open
    close_reason: str = ""

    @property
    def flood(self) -> bool:
        return (self.close_code, self.close_reason) == (1008, "flood")


async def send_on_schedule(
    url: str, times: Sequence[float], command: dict[str, Any] | None = None, token: str = ""
) -> Outcome:
    """One socket: ``command`` (a ``ping`` unless given) at each of ``times``, never early,
    every answer read; then a wait for the answers, and a close of its own. With ``token`` it
    first signs in and opens a room, then idles REFILL: the schedule starts with a full burst."""
    out = Outcome()
    command = command or {"type": "ping"}
    async with websockets.connect(url, subprotocols=[Subprotocol(MSGPACK)]) as ws:
        if token:
            for setup in ({"type": "auth", "token": token}, {"type": "open_room"}):
                await ws.send(msgpack.packb({**setup, "id": "setup"}))
                answer = msgpack.unpackb(await asyncio.wait_for(ws.recv(), ANSWER_WAIT))
                if answer.get("type") != "ok":
                    raise RuntimeError(f"{setup['type']} refused: {answer}")
            await asyncio.sleep(REFILL)
        all_answered = asyncio.Event()

        async def read() -> None:
            with contextlib.suppress(websockets.ConnectionClosed):
                async for raw in ws:
                    answer = msgpack.unpackb(raw)
                    if answer.get("type") not in ("ok", "error"):
                        continue  # a room's events
                    out.answered += 1
                    if answer.get("code") == "rate_limited":
                        out.rate_limited += 1
                    if out.answered >= len(times):
                        all_answered.set()
            all_answered.set()  # closed: no more will come

        reader = asyncio.create_task(read())
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        try:
            for n, at in enumerate(times):
                delay = t0 + at - loop.time()
                if delay > 0:
                    await asyncio.sleep(delay)
                await ws.send(msgpack.packb({**command, "id": n}))
                out.sent += 1
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(all_answered.wait(), ANSWER_WAIT)
        except websockets.ConnectionClosed:
            pass
        finally:
            reader.cancel()
            await asyncio.wait({reader})
        rcvd = ws.protocol.close_rcvd  # the server closed it (ours comes after this block)
        if rcvd is not None:
            out.close_code, out.close_reason = rcvd.code, rcvd.reason
    return out


async def soak(ws_url: str, base: str, sockets: int, seconds: float, seed: int) -> list[Outcome]:
    rng = random.Random(seed)
    tokens = [(await guest(base, f"Soak {k}"))["token"] if k % 2 else "" for k in range(sockets)]
    return await asyncio.gather(
        *(
            send_on_schedule(
                ws_url,
                at_the_limit(seconds, rng),
                {"type": "view"} if token else None,
                token,
            )
            for token in tokens
        )
    )


def report(outcomes: list[Outcome], elapsed: float) -> int:
    floods = sum(o.flood for o in outcomes)
    other = sum(o.close_code is not None and not o.flood for o in outcomes)
    missing = sum(o.sent - o.answered for o in outcomes)
    print(f"seconds: {elapsed:.1f}")
    print(f"sockets: {len(outcomes)}")
    print(f"limit: burst {RATE_BURST:.0f}, then {RATE_PER_SECOND:.0f} a second")
    print(f"frames_sent: {sum(o.sent for o in outcomes)}")
    print(f"answers: {sum(o.answered for o in outcomes)}")
    print(f"answers_missing: {missing}")
    print(f"rate_limited_answers: {sum(o.rate_limited for o in outcomes)}")
    print(f"sockets_closed_other: {other}")
    print(f"sockets_closed_for_flood: {floods}")
    return 1 if floods or other or missing else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m load_tests.soak_rate", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--url", help="a running node's WebSocket URL (loopback only)")
    parser.add_argument("--sockets", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=600.0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if not 1 <= args.sockets <= 200 or not 1 <= args.seconds <= 3600:
        parser.error("--sockets must be 1..200 and --seconds 1..3600")
    print(machine_speed_line(machine_speed()))
    cluster = None
    if args.url:
        require_loopback(args.url, "--url")
        endpoint = endpoint_for(args.url)
    else:
        cluster = Cluster(1)
        cluster.start()
        endpoint = cluster.endpoints[0]
    try:
        started = time.monotonic()
        outcomes = asyncio.run(
            soak(endpoint.ws, endpoint.http, args.sockets, args.seconds, args.seed)
        )
        code = report(outcomes, time.monotonic() - started)
        if cluster is not None:
            log = cluster.log_tail("node1", 10**7)
            print(f"node_flood_log_lines: {log.count('sent a flood')}")
            print(f"node_tracebacks: {log.count('Traceback')}")
        return code
    finally:
        if cluster is not None:
            cluster.stop()


if __name__ == "__main__":
    sys.exit(main())
