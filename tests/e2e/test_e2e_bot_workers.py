"""Bot workers end to end: a real node asking through the Redis queue, two real
``python -m server.bot_worker`` processes, one of them killed with SIGKILL every few seconds
while a human plays a whole game against three strong bots. The game ends: no table is stuck,
no move is lost, every hand is whole and verified."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio as aioredis

from server.bots_queue.wire import GROUP, QueueKeys
from tests.support.client_bots import new_player, open_table, play_to_the_end
from tests.support.server_process import ROOT, ServerProcess

pytestmark = pytest.mark.e2e

KILL_EVERY = 2.0  # s
KEYS = QueueKeys()


class BotWorkerProcess:
    """``python -m server.bot_worker`` on the test's Redis; its log in /tmp."""

    def __init__(self, redis_url: str, name: str) -> None:
        self.env = {**os.environ, "REDIS_URL": redis_url, "LOG_LEVEL": "INFO", "NODE_ID": name}
        self.log_path = Path(f"/tmp/hearts-e2e-{name}-{os.getpid()}.log")
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> BotWorkerProcess:
        log = self.log_path.open("ab")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "server.bot_worker"], cwd=ROOT, env=self.env, stdout=log,
            stderr=log,
        )  # fmt: skip
        return self

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> int | None:
        """SIGTERM: the job in hand is finished, then it exits (its exit code)."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()
        return self.proc.returncode


@pytest.fixture
def queue_node(clean_redis: str) -> Iterator[ServerProcess]:
    # A short think time: the game lasts long enough for several kills, the workers rest
    # between decisions as they would at a real table.
    proc = ServerProcess(redis_url=clean_redis, HEARTS_BOT_QUEUE="redis", HEARTS_BOT_THINK="0.05")
    proc.start()
    yield proc
    proc.stop()


def fallbacks(node: ServerProcess) -> float:
    with urllib.request.urlopen(node.base + "/metrics", timeout=5) as reply:
        text = reply.read().decode()
    lines = [ln for ln in text.splitlines() if ln.startswith("hearts_bot_fallback_moves_total{")]
    return sum(float(ln.rsplit(" ", 1)[1]) for ln in lines)


async def test_a_game_against_strong_bots_ends_while_workers_are_killed(
    queue_node: ServerProcess, clean_redis: str
) -> None:
    workers = {f"bw{k}": BotWorkerProcess(clean_redis, f"bw{k}").start() for k in range(2)}
    redis = aioredis.Redis.from_url(clean_redis)
    kills = mid_job = 0

    async def kill_one_now_and_then() -> None:
        """Every KILL_EVERY s, SIGKILL a worker: one holding a job if one does within 1 s."""
        nonlocal kills, mid_job
        while True:
            await asyncio.sleep(KILL_EVERY)
            victim, holding = list(workers)[kills % 2], False
            for _ in range(100):
                # A job delivered or renewed in the last 50 ms: its worker is searching now.
                pending: Any = await redis.xpending_range(KEYS.jobs, GROUP, "-", "+", 10)
                holders = [
                    p["consumer"].decode() for p in pending if p["time_since_delivered"] < 50
                ]
                if holders:
                    victim, holding = holders[0], True
                    break
                await asyncio.sleep(0.01)
            workers[victim].kill()
            kills += 1
            mid_job += holding
            workers[victim].start()  # back after its start-up; meanwhile the other carries on

    host = await new_player(queue_node, "Solo")
    try:
        await open_table(queue_node, host, {"target": 100})
        await host.request("fill_bots", level="strong")
        await host.request("start")
        killer = asyncio.create_task(kill_one_now_and_then())
        started = time.monotonic()
        try:
            over = await play_to_the_end(host, seed=3, timeout=240)
        finally:
            killer.cancel()
        took = time.monotonic() - started
        print(f"bot workers: {kills} kills ({mid_job} holding a job) in {took:.1f} s, ", end="")
        print(f"{fallbacks(queue_node):g} fallbacks")
        assert mid_job >= 3, f"{took:.1f} s, {kills} kills, {mid_job} mid-job: too few"
        hands = [f for f in host.frames if f.get("event") == "hand_over"]
        cards = [f for f in host.frames if f.get("event") == "card_played"]
        assert len(cards) == 52 * len(hands), "a move was lost"
        assert max(over["scores"]) >= 100
        assert len(host.verdicts) == len(hands)
        assert all(v == [] for v in host.verdicts.values()), host.verdicts
        assert not [f for f in host.frames if f.get("event") == "out_of_time"]
        # A killed worker's job is taken by the other and answered in time, mostly; the rest
        # (a job whose worker died too near its deadline) fell back, counted.
        assert fallbacks(queue_node) < mid_job
        assert "Traceback" not in queue_node.log()
    finally:
        await host.close()
        await redis.aclose()
        codes = [w.stop() for w in workers.values()]
    assert codes == [0, 0], "a worker did not drain and exit cleanly on SIGTERM"
    for w in workers.values():
        assert "Traceback" not in w.log_path.read_text(errors="replace")
