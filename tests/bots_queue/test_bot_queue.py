"""The queue of bot jobs on a private Redis and a private Redis Cluster: a node asks, workers
answer; a killed worker's job is taken by another; late, lost and malformed jobs all end in a
fallback move, counted, and no worker ever dies of one."""

from __future__ import annotations

import asyncio
import logging
import os
import random
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import msgpack
import pytest
import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

from protocol.cards import card_name
from server.bots_queue import client as queue_client
from server.bots_queue.client import QueuedBots
from server.bots_queue.wire import GROUP, JOB_FIELD, JOB_KEYS, QueueKeys, pack_job, read_answer
from server.bots_queue.worker import BotWorker, ensure_group
from server.core.room.game_view import game_view
from server.core.rules import Game, Rules, deal_from_deck
from server.ops import metrics
from server.play.bot_jobs import Answer, Job, answer_job, decide_move, fallback_move
from server.store.redis.client.connect import Client, connect
from tests.support.server_process import ROOT

KEYS = QueueKeys("hearts")


@pytest.fixture(params=["redis", "cluster"])
def queue_url(request: pytest.FixtureRequest) -> str:
    fixture = "clean_redis" if request.param == "redis" else "clean_cluster"
    return str(request.getfixturevalue(fixture))


class Queue:
    """A test's clients, nodes and workers, all closed at its end."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.clients: list[Client] = []
        self.nodes: list[QueuedBots] = []
        self.workers: list[tuple[BotWorker, asyncio.Task[None]]] = []

    def client(self) -> Client:
        made = connect(self.url)
        self.clients.append(made)
        return made

    def node(self, **options: Any) -> QueuedBots:
        node = QueuedBots(connect(self.url), "test-node", **options)
        self.nodes.append(node)
        return node

    def worker(self, name: str, **options: Any) -> BotWorker:
        worker = BotWorker(connect(self.url), name, block_ms=100, **options)
        self.workers.append((worker, asyncio.create_task(worker.run())))
        return worker

    async def close(self) -> None:
        for worker, task in self.workers:
            worker.stop()
            await asyncio.wait_for(task, 5)
            await worker.client.aclose()
        for node in self.nodes:
            await node.close()
        for made in self.clients:
            await made.aclose()


@pytest.fixture
async def queue(queue_url: str) -> AsyncIterator[Queue]:
    made = Queue(queue_url)
    yield made
    await made.close()


def counted(name: str, **labels: str) -> float:
    return metrics.REGISTRY.get_sample_value(name, labels) or 0.0


def fallbacks(reason: str) -> float:
    return counted("hearts_bot_fallback_moves_total", reason=reason)


def deal(seed: int = 1) -> Game:
    deck = list(range(52))
    random.Random(seed).shuffle(deck)
    game = Game(Rules())
    game.start_hand(deal_from_deck(deck))
    return game



async def until(holds: Callable[[], bool], seconds: float = 2.0) -> None:
    """Wait until ``holds()`` (a worker's counters trail the answer it wrote by a moment)."""
    ends = time.perf_counter() + seconds
    while not holds():
        assert time.perf_counter() < ends, "not within the time"
        await asyncio.sleep(0.01)

async def test_a_worker_answers_with_the_levels_move_and_the_job_is_gone(queue: Queue) -> None:
    node = queue.node(deadline=5.0)
    queue.worker("w1")
    view = game_view(deal(), 0)
    waits = counted("hearts_bot_queue_wait_seconds_count")
    move = await node.decide(view, "strong", 7)
    assert move == decide_move(view, "strong", 7)
    assert move != fallback_move(view, 7)
    hint = await node.hint(view, "strong")
    assert hint["kind"] == "pass" and len(hint["cards"]) == 3
    assert counted("hearts_bot_queue_wait_seconds_count") == waits + 2
    redis = queue.client()
    assert await redis.xlen(KEYS.jobs) == 0  # answered, acknowledged and deleted
    groups: Any = await redis.xinfo_groups(KEYS.jobs)
    assert groups[0]["pending"] == 0
    assert 0 < await redis.pttl(node.reply) <= 60_000  # a dead node's answers expire


async def test_several_workers_share_a_hands_passes(queue: Queue) -> None:
    node = queue.node(deadline=5.0)
    workers = [queue.worker(f"w{k}") for k in range(3)]
    game = deal(2)
    views = [game_view(game, seat) for seat in range(4)]
    moves = await asyncio.gather(*(node.decide(v, "strong", 11) for v in views))
    assert moves == [decide_move(v, "strong", 11) for v in views]
    await until(lambda: sum(w.done["answered"] for w in workers) == 4)


async def test_many_tables_asking_at_once_share_a_connection(queue: Queue) -> None:
    node = queue.node(deadline=10.0)
    worker = queue.worker("w1")
    view = game_view(deal(), 0)
    before = fallbacks("unavailable") + fallbacks("deadline")
    moves = await asyncio.gather(*(node.decide(view, "basic", k) for k in range(300)))
    assert moves == [fallback_move(view, k) for k in range(300)]  # basic's own: no fallback
    assert fallbacks("unavailable") + fallbacks("deadline") == before
    for _ in range(50):  # the last answer can reach the node before the worker counts it
        if worker.done["answered"] == 300:
            break
        await asyncio.sleep(0.02)
    assert worker.done["answered"] == 300
    if isinstance(node.client, aioredis.Redis):  # the cluster client's pools are per node
        assert len(node.client.connection_pool._available_connections) <= 3


async def test_a_worker_told_to_stop_answers_the_job_in_hand_first(queue: Queue) -> None:
    def slow(job: Job) -> Answer:
        time.sleep(0.4)
        return answer_job(job)

    redis = queue.client()
    await ensure_group(redis, KEYS)
    node = queue.node(deadline=5.0)
    worker = queue.worker("w1", run=slow)
    view = game_view(deal(), 0)
    asked = asyncio.create_task(node.decide(view, "strong", 4))
    for _ in range(100):
        pending: Any = await redis.xpending(KEYS.jobs, GROUP)
        if pending["pending"]:
            break
        await asyncio.sleep(0.02)
    worker.stop()  # as SIGTERM does, mid-search
    assert await asyncio.wait_for(asked, 3) == decide_move(view, "strong", 4)
    await asyncio.wait_for(queue.workers[0][1], 3)  # and then it stops
    assert worker.done["answered"] == 1 and await redis.xlen(KEYS.jobs) == 0


async def test_without_workers_the_node_plays_the_fallback_at_its_deadline(queue: Queue) -> None:
    node = queue.node(deadline=0.3)
    view = game_view(deal(), 0)
    before = fallbacks("deadline")
    started = time.perf_counter()
    move = await node.decide(view, "strong", 5)
    assert time.perf_counter() - started < 0.5, "the table waited on the queue"
    assert move == fallback_move(view, 5) and fallbacks("deadline") == before + 1
    # A worker that comes later finds the job past its deadline: the fallback, no search.
    worker = queue.worker("late-comer")
    for _ in range(100):
        if worker.done["answered"]:
            break
        await asyncio.sleep(0.05)
    assert worker.done["late"] == 1 and worker.done["answered"] == 1


async def test_a_job_a_worker_takes_past_its_deadline_is_answered_with_the_fallback(
    queue: Queue,
) -> None:
    # The node's clock is behind the worker's: the job is past its deadline when taken, and
    # the node, still waiting by its own clock, gets the fallback and counts it.
    node = queue.node(deadline=0.4, clock=lambda: time.time() - 0.5)
    queue.worker("w1")
    view = game_view(deal(), 0)
    before = fallbacks("late")
    assert await node.decide(view, "strong", 5) == fallback_move(view, 5)
    assert fallbacks("late") == before + 1


async def test_a_job_holds_the_seats_own_view_and_nothing_else(queue: Queue) -> None:
    node = queue.node(deadline=0.05)
    game = deal(3)
    view = game_view(game, 2)
    await node.decide(view, "strong", 1)  # no worker: it stays in the stream
    entries: Any = await queue.client().xrange(KEYS.jobs)
    (_, fields), *_ = entries
    job = msgpack.unpackb(fields[JOB_FIELD], raw=False)
    assert set(job) == JOB_KEYS and job["view"] == view
    hand = game.hand
    assert hand is not None
    hidden = {card_name(c) for s in (0, 1, 3) for c in range(52) if hand.hands[s] >> c & 1}
    strings: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, str):
            strings.add(value)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(job)
    assert not strings & hidden, "another seat's card reached the queue"


async def test_malformed_jobs_are_answered_or_dropped_and_the_worker_lives(
    queue: Queue, caplog: pytest.LogCaptureFixture
) -> None:
    redis = queue.client()
    await ensure_group(redis, KEYS)
    reply = KEYS.reply("probe")
    view = game_view(deal(), 0)
    now = time.time()

    def job(**fields: Any) -> bytes:
        base = msgpack.unpackb(pack_job("j", reply, Job("decide", "strong", view, 3, now, now + 5)))
        return bytes(msgpack.packb({**base, **fields}))

    room_key = "hearts:{s1}:room:abc:state"
    bad = {
        "garbage": b"\xc1\xc1 not msgpack",
        "garbage-again": b"\xc1",
        "a list": msgpack.packb([1, 2, 3]),
        "unknown level": job(id="unknown", level="grandmaster"),
        "view not a view": job(id="noview", view={"phase": 12}),
        "view a string": job(id="string", view="the whole deck"),
        "more than a view": job(id="extra", hands=[[1, 2, 3]] * 4),
        "elsewhere": job(id="elsewhere", reply=room_key),
        "too large": job(id="large", view={"phase": "passing", "pad": "x" * 70_000}),
        "no kind": job(id="nokind", kind="shuffle"),
    }
    for raw in bad.values():
        await redis.xadd(KEYS.jobs, {JOB_FIELD: raw})
    caplog.set_level(logging.WARNING, logger="server.bots_queue.worker")
    worker = queue.worker("w1")
    for _ in range(100):
        if await redis.xlen(KEYS.jobs) == 0:
            break
        await asyncio.sleep(0.05)
    assert await redis.xlen(KEYS.jobs) == 0, "a bad job was left in the queue"
    assert not await redis.exists(room_key), "a job made a worker write outside the queue"
    answers: Any = await redis.xrange(reply)
    got = dict(read_answer(fields[b"a"]) for _, fields in answers)
    assert got["unknown"].fallback == "unknown_level"
    assert got["unknown"].move == fallback_move(view, 3)
    for job_id in ("noview", "string", "extra", "nokind"):
        assert got[job_id].move is None and got[job_id].fallback is not None, job_id
    assert "elsewhere" not in got and "large" not in got
    unreadable = [r for r in caplog.records if "(unreadable)" in r.getMessage()]
    assert len(unreadable) == 1, "a kind of bad job is logged once"
    # Alive: the next good job is answered.
    node = queue.node(deadline=5.0)
    assert await node.decide(view, "strong", 9) == decide_move(view, "strong", 9)
    assert worker.done["answered"] >= 5


async def test_the_stream_is_trimmed_when_nobody_takes_the_jobs(
    queue: Queue, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(queue_client, "MAX_QUEUE", 10)
    node = queue.node(deadline=0.0)
    view = game_view(deal(), 0)
    for k in range(400):
        await node.decide(view, "basic", k)
    while node._outbox:  # the sends outlive the deadline, in the background
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.1)
    assert await queue.client().xlen(KEYS.jobs) < 400


async def test_an_unreachable_queue_costs_the_fallback_at_once() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    # Refused at once, not retried (the deployment's client retries for a few seconds, and the
    # deadline then bounds the wait: the test above).
    unreachable = aioredis.Redis(port=port, retry=Retry(NoBackoff(), 0))
    node = QueuedBots(unreachable, "lonely", deadline=5.0)
    view = game_view(deal(), 0)
    before = fallbacks("unavailable")
    started = time.perf_counter()
    assert await node.decide(view, "strong", 2) == fallback_move(view, 2)
    assert time.perf_counter() - started < 0.5
    assert fallbacks("unavailable") == before + 1
    await node.close()


# A worker whose search never ends, as a process of its own: killed with SIGKILL mid-job.
STUCK_WORKER = """
import asyncio, sys, time
from server.bots_queue.worker import BotWorker
from server.store.redis.client.connect import connect
def stuck(job):
    time.sleep(120)
asyncio.run(BotWorker(connect(sys.argv[1]), "doomed", run=stuck).run())
"""


async def test_a_job_of_a_worker_killed_mid_search_is_taken_and_answered(queue: Queue) -> None:
    node = queue.node(deadline=5.0)
    redis = queue.client()
    await ensure_group(redis, KEYS)
    doomed = subprocess.Popen(
        [sys.executable, "-c", STUCK_WORKER, queue.url], cwd=ROOT, env=dict(os.environ)
    )
    try:
        view = game_view(deal(4), 1)
        asked = asyncio.create_task(node.decide(view, "strong", 21))
        for _ in range(200):  # until the doomed worker holds the job
            pending: Any = await redis.xpending(KEYS.jobs, GROUP)
            if pending["pending"] and {c["name"] for c in pending["consumers"]} == {b"doomed"}:
                break
            await asyncio.sleep(0.05)
        else:
            pytest.fail("the doomed worker never took the job")
        # A live worker keeps its job: another one running beside it does not take it.
        rescuer = queue.worker("rescuer")
        await asyncio.sleep(1.0)  # over three times the claim time
        pending = await redis.xpending(KEYS.jobs, GROUP)
        assert [c["name"] for c in pending["consumers"]] == [b"doomed"]
        assert rescuer.done["claimed"] == 0, "a live worker's job was taken from it"
        os.kill(doomed.pid, signal.SIGKILL)
        doomed.wait(5)
        killed = time.perf_counter()
        move = await asyncio.wait_for(asked, 5)
        assert move == decide_move(view, "strong", 21), "the job was lost or fell back"
        assert time.perf_counter() - killed < 2.0
        # the worker counts after it wrote the answer, which the node may read first
        await until(lambda: rescuer.done["answered"] == 1)
        assert rescuer.done["claimed"] == 1
        assert await redis.xlen(KEYS.jobs) == 0
    finally:
        if doomed.poll() is None:
            doomed.kill()
            doomed.wait(5)
