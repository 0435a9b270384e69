"""deploy/smoke_play.py's players, run under `make test` against local processes.

`make deploy-test` (deploy/smoke.sh) needs a Docker engine, so it runs only by hand and once
rotted unseen. Here the same player code (imported, not copied) plays a whole game against
three real nodes on a private Redis with its append-only file: once given the nodes' own URLs,
once through deploy/haproxy.cfg as compose runs it (skipped where HAProxy is not installed;
`make system-deps` installs it). The node serving the room is SIGKILLed mid-hand and Redis is
SIGKILLed and started again on its file; every move the server acknowledged must be in the
hands' archived audits.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from deploy import smoke_play
from deploy.smoke_play import Ack, Deployment, lost_moves
from tests.support.local_haproxy import LocalHaproxy
from tests.support.server_process import ServerProcess, free_port

pytestmark = pytest.mark.e2e

ROUTES = [
    "nodes",
    pytest.param(
        "haproxy",
        marks=pytest.mark.skipif(shutil.which("haproxy") is None, reason="no haproxy"),
    ),
]


class DurableRedis:
    """A private redis-server with compose's durability (redis.conf: an append-only file),
    which can be SIGKILLed and started again on the same port and file."""

    def __init__(self, workdir: Path) -> None:
        self.port = free_port()
        self.workdir = workdir
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> DurableRedis:
        binary = shutil.which("redis-server")
        assert binary is not None, "redis-server is not installed (make system-deps)"
        self.proc = subprocess.Popen(
            [
                binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--dir",
                str(self.workdir),
                "--appendonly",
                "yes",
                "--appendfsync",
                "everysec",
                "--save",
                "",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        client = redis.Redis(port=self.port, socket_connect_timeout=0.2)
        deadline = time.monotonic() + 10
        try:
            while True:
                try:
                    if client.ping():
                        return self
                except redis.RedisError:
                    assert time.monotonic() < deadline, "redis-server did not start"
                    time.sleep(0.05)
        finally:
            client.close()

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def restart(self, down: float) -> None:
        self.kill()
        time.sleep(down)
        self.start()


@pytest.fixture
def durable_redis(tmp_path: Path) -> Iterator[DurableRedis]:
    server = DurableRedis(tmp_path).start()
    try:
        yield server
    finally:
        server.kill()


@pytest.mark.parametrize("route", ROUTES)
async def test_the_smoke_players_lose_no_acknowledged_move_through_a_node_kill_and_a_redis_kill(
    durable_redis: DurableRedis, tmp_path: Path, route: str
) -> None:
    nodes = [ServerProcess(redis_url=durable_redis.url) for _ in range(3)]
    proxy: LocalHaproxy | None = None
    try:
        for node in nodes:
            node.start()
        if route == "haproxy":
            proxy = LocalHaproxy(tmp_path, [n.port for n in nodes]).start()
            # HAProxy names the node that answered (X-Hearts-Node), as in compose.
            by_name = {f"node{i + 1}": n for i, n in enumerate(nodes)}
            http_url, ws_urls = proxy.base, [proxy.ws]
        else:
            # No balancer: the players are given every node, and name theirs by its URL.
            by_name = {n.ws: n for n in nodes}
            http_url, ws_urls = nodes[0].base, [n.ws for n in nodes]
        killed: list[str] = []

        async def kill_node(name: str) -> None:
            killed.append(name)
            await asyncio.to_thread(by_name[name].kill)

        async def restart_redis() -> None:
            # Away longer than the nodes' Redis client retries (about 5 s), as a container that is
            # removed and created again can be: moves in flight meet a failing store.
            await asyncio.to_thread(durable_redis.restart, 6.0)

        deployment = Deployment(http_url, ws_urls, kill_node, restart_redis)
        outcome = await asyncio.wait_for(smoke_play.play_game(deployment), 90)
        figures = outcome.figures
        assert len(killed) == 1 and figures["node_killed"] == killed[0]
        assert killed[0] not in figures["nodes_after_kill"].split(","), figures
        assert figures["reconnects"] >= 1, figures
        # The players met the store's failures: sent a move again, or read the view after one
        # whose outcome was unknown.
        assert figures["moves_retried"] + figures["outcomes_unknown"] >= 1, figures
        assert figures["hands_played"] >= 2, figures
        assert outcome.finished, figures
        assert figures["moves_acked"] > 52 and outcome.lost == 0, figures
    finally:
        if proxy is not None:
            proxy.stop()
        for node in nodes:
            node.stop()


def _audit(
    hand: int, passes: list[list[str]] | None, tricks: list[tuple[int, list[str]]]
) -> dict[str, Any]:
    return {
        "hand": hand,
        "passes": passes,
        "tricks": [{"leader": leader, "cards": cards} for leader, cards in tricks],
    }


def test_a_move_missing_from_the_audits_counts_as_lost() -> None:
    """The check the game test relies on can fail: a play by the wrong seat, a pass not made,
    a play of a hand never archived each count."""
    audits = {
        1: _audit(
            1,
            [["2H", "3H", "4H"], ["5H", "6H", "7H"], ["8H", "9H", "TH"], ["JH", "QH", "KH"]],
            [(0, ["2C", "3C", "4C", "5C"]), (2, ["6C", "7C", "8C", "9C"])],
        ),
        2: _audit(2, None, [(1, ["2C", "AC", "KC", "QC"])]),
    }
    kept = [
        Ack("pass", 1, 1, ["7H", "5H", "6H"]),  # any order: the audit lists passes sorted
        Ack("play", 1, 3, ["5C"]),  # the fourth card of a trick seat 0 led
        Ack("play", 1, 3, ["7C"]),  # the second card of a trick seat 2 led
        Ack("play", 2, 0, ["QC"]),
    ]
    assert lost_moves(kept, audits) == 0
    lost = [
        Ack("play", 1, 0, ["3C"]),  # seat 1 played it
        Ack("pass", 1, 0, ["2H", "3H", "5H"]),
        Ack("pass", 2, 0, ["2H", "3H", "4H"]),  # hand 2 had no pass
        Ack("play", 3, 0, ["2C"]),  # no hand 3 in the archive
    ]
    assert lost_moves(lost, audits) == len(lost)
