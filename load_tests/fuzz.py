"""The wire fuzzer, long run: hostile frames on both subprotocols against a live game.

    python -m load_tests.fuzz                                   # 200,000 frames or 10 minutes
    python -m load_tests.fuzz --frames 1000000 --seconds 600 --sockets 6
    python -m load_tests.fuzz --url ws://127.0.0.1:8000/ws      # a running node (loopback only)

Without --url it starts a private redis-server and one node (``python -m server``, as
load_tests/load.py does) on free loopback ports and stops them at the end. A table of three
honest players and a bot plays game after game while hostile sockets of every kind (never
authenticated, a stranger, a watcher of the game, a second socket of a seated player), on both
subprotocols, send frames: fresh ones drawn by hypothesis (load_tests/fuzz_frames.py) and, to
reach high counts, replays of those frames at other moments of the game and byte mutations of
them. Every answer and every frame received is checked (load_tests/fuzz_table.py).

Bounded: loopback only, at most 10,000,000 frames and 3,600 s; it stops at whichever of
--frames and --seconds comes first, then waits for the game in progress to finish. The report
lists each problem with the frame that caused it; the last two lines are ``frames: N`` and
``internal_errors: N``. The exit status is 1 if any new problem or internal error was seen.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import sys
import threading
import time
import urllib.request
import warnings
from collections import Counter, deque

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from hypothesis.errors import HypothesisDeprecationWarning

from load_tests.cluster import Cluster, endpoint_for, require_loopback
from load_tests.fuzz_frames import KINDS, Frame, frames_for
from load_tests.fuzz_table import FuzzTable, Problem
from protocol.codec import JSON, MAX_FRAME_BYTES, MSGPACK

TARGETS = [(kind, sp) for kind in KINDS for sp in (MSGPACK, JSON)]
MAX_FRAMES = 10_000_000
MAX_SECONDS = 3600.0
CORPUS = 20_000  # frames kept per target for replays and mutations
SHOWN = 25  # problems printed in full


class Enough(BaseException):
    """Stops the hypothesis generator thread (a BaseException, so it is not a test failure)."""


class Feed:
    """Fresh hypothesis frames per target, and a corpus of them to replay and mutate."""

    def __init__(self, seed: int) -> None:
        self.fresh: list[deque[list[Frame]]] = [deque(maxlen=64) for _ in TARGETS]
        self.corpus: list[list[Frame]] = [[] for _ in TARGETS]
        self.rng = random.Random(seed)
        self.counts: Counter[str] = Counter()
        self.stop = threading.Event()
        self.warm = threading.Event()  # set once every target has a corpus to draw on
        self._last = time.perf_counter()

    def offer(self, target: int, frames: list[Frame]) -> None:
        """From the generator thread (under the GIL; deque appends are atomic)."""
        self.fresh[target].append(frames)

    def batch(self, target: int) -> list[Frame]:
        fresh = self.fresh[target]
        corpus = self.corpus[target]
        if fresh:
            frames = fresh.popleft()
            for frame in frames:
                if len(corpus) < CORPUS:
                    corpus.append(frame)
                else:
                    corpus[self.rng.randrange(CORPUS)] = frame
            self.counts["fresh"] += len(frames)
            return frames
        if not corpus:
            return []
        if all(self.corpus):
            self.warm.set()
        out = []
        binary = TARGETS[target][1] == MSGPACK
        for _ in range(self.rng.randint(4, 16)):
            frame = self.rng.choice(corpus)
            if self.rng.random() < 0.5:
                out.append(frame)  # the same frame at another moment of the game
                self.counts["replayed"] += 1
            else:
                out.append(mutate(frame, self.rng, binary))
                self.counts["mutated"] += 1
        return out

    def generate(self, seed: int) -> None:
        """The generator thread: hypothesis draws batches until told to stop."""
        target_and_frames = st.integers(0, len(TARGETS) - 1).flatmap(
            lambda i: st.tuples(
                st.just(i), st.lists(frames_for(*TARGETS[i]), min_size=1, max_size=16)
            )
        )

        @hypothesis_seed(seed)
        @settings(
            max_examples=10**9,
            phases=[Phase.generate],
            database=None,
            deadline=None,
            suppress_health_check=list(HealthCheck),
        )
        @given(target_and_frames)
        def feed(shot: tuple[int, list[Frame]]) -> None:
            if self.stop.is_set():
                raise Enough
            while len(self.fresh[shot[0]]) >= 48 and not self.stop.is_set():
                time.sleep(0.01)  # that target's sockets are behind: let them catch up
            self.offer(*shot)
            # Drawing is slow Python: hold the GIL a quarter of the time at most, so the
            # sockets (replays and mutations of what was drawn) keep their pace.
            spent = time.perf_counter() - self._last
            time.sleep(3 * spent if self.warm.is_set() else 0)
            self._last = time.perf_counter()

        with contextlib.suppress(Enough):
            feed()


def mutate(frame: Frame, rng: random.Random, binary: bool) -> Frame:
    """A few byte flips, cuts, splices and duplications of a frame."""
    data = bytearray(frame.payload if isinstance(frame.payload, bytes) else frame.payload.encode())
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(4)
        at = rng.randrange(len(data) + 1)
        if op == 0 and data:
            data[min(at, len(data) - 1)] ^= 1 << rng.randrange(8)
        elif op == 1:
            del data[at : at + rng.randint(1, 8)]
        elif op == 2:
            data[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        else:
            data[at:at] = data[rng.randrange(len(data) + 1) :][: rng.randint(1, 64)]
    data = data[:MAX_FRAME_BYTES]
    if binary:
        return Frame(bytes(data), "mutated")
    return Frame(bytes(data).decode("utf-8", errors="replace"), "mutated")


async def run(args: argparse.Namespace, base: str, ws_url: str) -> int:
    table = FuzzTable(base, ws_url)
    await table.start(per_kind=args.sockets)
    before = node_gauges(base)
    feed = Feed(args.seed)
    generator = threading.Thread(target=feed.generate, args=(args.seed,), daemon=True)
    generator.start()
    problems: list[Problem] = []
    started = time.monotonic()
    deadline = started + args.seconds

    def done() -> bool:
        return bool(table.tally.frames >= args.frames or time.monotonic() >= deadline)

    async def worker(k: int) -> None:
        attacker = table.attackers[k]
        target = TARGETS.index((attacker.kind, attacker.subprotocol))
        while not done():
            frames = feed.batch(target)
            if not frames:
                await asyncio.sleep(0.05)
                continue
            problems.extend(await table.fire(attacker, frames))

    async def progress() -> None:
        while not done():
            await asyncio.sleep(30)
            t = table.tally
            print(
                f"  {time.monotonic() - started:6.0f} s  {t.frames} frames  "
                f"{len(problems)} problems  {table.games_finished} games",
                file=sys.stderr,
                flush=True,
            )

    reporter = asyncio.create_task(progress())
    try:
        await asyncio.gather(*(worker(k) for k in range(len(table.attackers))))
    finally:
        feed.stop.set()
        reporter.cancel()
    elapsed = time.monotonic() - started
    finished = await table.finish_game(180)
    up = server_up(base)
    tally = table.tally
    new = [p for p in problems if not p.finding]
    known = Counter(p.finding for p in problems if p.finding)
    for problem in (new or problems)[:SHOWN]:
        print("problem:", problem.line())
    for text in table.honest_problems[:SHOWN]:
        print("honest:", text)
    await table.close()
    generator.join(5)
    await asyncio.sleep(2)  # the node lets go of the closed sockets
    after = node_gauges(base)
    print(f"seconds: {elapsed:.1f}")
    print(f"sockets: {len(table.attackers)}")
    print(f"frames_fresh: {feed.counts['fresh']}")
    print(f"frames_replayed: {feed.counts['replayed']}")
    print(f"frames_mutated: {feed.counts['mutated']}")
    print(f"frames_per_second: {tally.frames / elapsed:.0f}")
    print(f"answers: {tally.answers}")
    print(f"view_checks: {tally.view_checks}")
    print(f"sockets_reopened: {tally.reopened}")
    print(f"top_codes: {dict(tally.codes.most_common(8))}")
    print(f"games_finished: {table.games_finished}")
    print(f"honest_game_finished: {'yes' if finished else 'no'}")
    print(f"honest_problems: {len(table.honest_problems)}")
    print(f"deal_verdict_problems: {len(table.verdict_problems())}")
    print(f"server_up: {'yes' if up else 'no'}")
    print(f"known_findings: {dict(sorted(known.items()))}")
    print(f"node_sockets_left_open: {after.get('hearts_connections', -1):.0f}")
    mib = 2**20
    rss = [g.get("process_resident_memory_bytes", 0) / mib for g in (before, after)]
    print(f"node_rss_mib: {rss[0]:.0f} at the start, {rss[1]:.0f} at the end")
    fds = [g.get("process_open_fds", -1) for g in (before, after)]
    print(f"node_open_files: {fds[0]:.0f} at the start, {fds[1]:.0f} at the end")
    print(f"problems: {len(new)}")
    print(f"frames: {tally.frames}")
    print(f"internal_errors: {tally.internal_errors}")
    bad = new or tally.internal_errors or not finished or not up or table.honest_problems
    return 1 if bad else 0


def node_gauges(base: str) -> dict[str, float]:
    """The node's open sockets, memory and open files (its /metrics): a leak shows in them."""
    wanted = ("hearts_connections", "process_resident_memory_bytes", "process_open_fds")
    try:
        with urllib.request.urlopen(base + "/metrics", timeout=5) as resp:
            lines = resp.read().decode().splitlines()
    except OSError:
        return {}
    return {
        name: float(value)
        for name, _, value in (line.partition(" ") for line in lines)
        if name in wanted
    }


def server_up(base: str) -> bool:
    try:
        with urllib.request.urlopen(base + "/healthz", timeout=5) as resp:
            return bool(resp.read() == b"ok")
    except OSError:
        return False


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m load_tests.fuzz", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--url", help="a running node's WebSocket URL (loopback only)")
    parser.add_argument("--frames", type=int, default=200_000, help="stop after this many")
    parser.add_argument("--seconds", type=float, default=600.0, help="stop after this long")
    parser.add_argument(
        "--sockets", type=int, default=3, help="hostile sockets per kind and subprotocol"
    )
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if not 1 <= args.frames <= MAX_FRAMES:
        parser.error(f"--frames must be 1..{MAX_FRAMES}")
    if not 1 <= args.seconds <= MAX_SECONDS:
        parser.error(f"--seconds must be 1..{MAX_SECONDS:.0f}")
    if not 1 <= args.sockets <= 32:
        parser.error("--sockets must be 1..32")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    # The sockets' own randomness runs beside the drawing thread; hypothesis only warns of it.
    warnings.filterwarnings("ignore", category=HypothesisDeprecationWarning)
    if args.url:
        require_loopback(args.url, "--url")
        endpoint = endpoint_for(args.url)
        return asyncio.run(run(args, endpoint.http, endpoint.ws))
    cluster = Cluster(1)
    try:
        cluster.start()
        endpoint = cluster.endpoints[0]
        code = asyncio.run(run(args, endpoint.http, endpoint.ws))
        log = cluster.log_tail("node1", 10**7)
        print(f"log_tracebacks: {log.count('Traceback')}", file=sys.stderr)
        return code
    finally:
        cluster.stop()


if __name__ == "__main__":
    sys.exit(main())
