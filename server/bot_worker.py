"""`python -m server.bot_worker`: a bot worker, taking bot decisions and hints off the queue.

One process searches one job at a time: run one per core, on any machine that reaches the
deployment's Redis, as many as the bot tables need (docs/bots.md, "Bot workers"). The nodes
ask through the queue when started with ``HEARTS_BOT_QUEUE=redis``. Configuration, from the
environment, as the server reads it:

    REDIS_URL                 required: the deployment's Redis
    REDIS_CLUSTER_URL         or this: a node of the deployment's Redis Cluster
    NODE_ID                   this worker's name in the consumer group (default: host + pid)
    HEARTS_BOT_CLAIM_IDLE     seconds after which a dead worker's job is taken (0.3)
    LOG_LEVEL                 INFO

SIGTERM (or Ctrl-C) drains: the job in hand is finished and answered, then the worker exits.
A worker killed outright loses nothing: its job is taken by another after the claim time.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import socket
import sys

from server.bots_queue.worker import CLAIM_IDLE, BotWorker
from server.config import choose_redis_url
from server.ops.log_setup import configure
from server.play.bot_jobs import warm_up
from server.store.redis.client.connect import connect

log = logging.getLogger("server.bot_worker")


def worker_name() -> str:
    return os.environ.get("NODE_ID") or f"{socket.gethostname()}-{os.getpid()}"


async def serve(worker: BotWorker) -> None:
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, worker.stop)
    try:
        await worker.run()
    finally:
        await worker.client.aclose()
    log.info("bot worker %s stopped: %s", worker.name, dict(worker.done))


def main() -> int:
    configure(os.environ.get("LOG_LEVEL", "INFO"))
    url = choose_redis_url(os.environ.get("REDIS_CLUSTER_URL"), os.environ.get("REDIS_URL"))
    if not url:
        log.error("set REDIS_URL (or REDIS_CLUSTER_URL): a bot worker takes its jobs from Redis")
        return 2
    raw = os.environ.get("HEARTS_BOT_CLAIM_IDLE")
    claim_idle = float(raw) if raw not in (None, "") else CLAIM_IDLE
    warm_up()  # the bots loaded before the first job, not during it
    worker = BotWorker(connect(url), worker_name(), claim_idle=claim_idle)
    log.info("bot worker %s taking jobs from %s", worker.name, url.rpartition("@")[2])
    asyncio.run(serve(worker))
    return 0


if __name__ == "__main__":
    sys.exit(main())
