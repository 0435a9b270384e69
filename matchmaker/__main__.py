"""`python -m matchmaker` (or `hearts-matchmaker`): the quick-play matchmaker as its own process.

It talks to the rest of the service only through the store: it reads the queue, opens rated
rooms through the room service's own code (``RoomsBridge``) and seats tables atomically. Run
any number of them (and server nodes with their in-process matchmaker); one lease decides who
acts. Configuration, from the environment:

    REDIS_URL                 required: the deployment's Redis
    REDIS_CLUSTER_URL         or this: a node of the deployment's Redis Cluster
    NODE_ID                   this process's lease holder name (default: host name + random)
    HEARTS_MATCH_INTERVAL     seconds between passes (0.5)
    HEARTS_MATCH_LEASE_TTL    seconds a silent holder keeps the lease (5)
    HEARTS_QUEUE_TTL          purge queue entries not touched by their node for this long
                              (unset: never; set it only if the server nodes touch_queue)
    HEARTS_BOT_FILL_AFTER     seconds before empty seats go to bots (20)
    HEARTS_GRACE_PLAY, …      the table clocks, exactly as the server reads them
    LOG_LEVEL                 INFO
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
from collections.abc import Sequence
from dataclasses import dataclass

from matchmaker.matching import MatchConfig
from matchmaker.rooms_bridge import RoomsBridge
from matchmaker.service import Matchmaker, default_node_id
from server.config import Settings, choose_redis_url
from server.core.room.state import Clocks
from server.play.bot_pool import BotPool
from server.play.rooms import RoomService
from server.store import RoomStore, open_league_store, open_store
from server.store.league import LeagueStore

log = logging.getLogger("matchmaker")


def _env_float(name: str) -> float | None:
    raw = os.environ.get(name)
    return float(raw) if raw not in (None, "") else None


def _env_or(name: str, default: float) -> float:
    value = _env_float(name)
    return default if value is None else value


def _table_clocks() -> Clocks:
    # The server's own reading of HEARTS_GRACE_PLAY etc., so both make identical tables. Its
    # warning about HEARTS_SECRET concerns token signing, which this process never does.
    config_log = logging.getLogger("server.config")
    level = config_log.level
    config_log.setLevel(logging.ERROR)
    try:
        return Settings.from_env().clocks
    finally:
        config_log.setLevel(level)


@dataclass(slots=True)
class Process:
    """The matchmaker and what it holds open."""

    matchmaker: Matchmaker
    rooms: RoomStore
    league: LeagueStore

    async def close(self) -> None:
        await self.matchmaker.stop()
        await self.league.close()
        await self.rooms.close()


def build(
    redis_url: str,
    *,
    prefix: str = "hearts",
    node_id: str | None = None,
    config: MatchConfig | None = None,
    clocks: Clocks | None = None,
    interval: float = 0.5,
    lease_ttl: float = 5.0,
    queue_ttl: float | None = None,
) -> Process:
    rooms = open_store(redis_url, prefix=prefix)
    league = open_league_store(redis_url, prefix=prefix)
    # Bots never run here (rooms are only created and seated), so no worker processes.
    bridge = RoomsBridge(RoomService(rooms, BotPool(workers=0)), league, clocks=clocks)
    matchmaker = Matchmaker(
        league,
        rooms,
        bridge.create_table,
        config or MatchConfig(),
        node_id or default_node_id(),
        abandon_table=bridge.abandon_table,
        interval=interval,
        lease_ttl=lease_ttl,
        queue_ttl=queue_ttl,
    )
    return Process(matchmaker, rooms, league)


async def serve(process: Process) -> None:
    """Run until SIGTERM or SIGINT, then give the lease up so another takes over at once."""
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):  # a Unix service (the deploy's images are Debian)
        loop.add_signal_handler(sig, lambda: asyncio.ensure_future(process.matchmaker.stop()))
    try:
        await process.matchmaker.run()
    finally:
        await process.close()


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m matchmaker", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "--redis-url",
        default=choose_redis_url(os.environ.get("REDIS_CLUSTER_URL"), os.environ.get("REDIS_URL")),
    )
    parser.add_argument("--prefix", default="hearts", help="key prefix, as the server's store")
    parser.add_argument("--node-id", default=os.environ.get("NODE_ID") or None)
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=os.environ.get("LOG_LEVEL", "INFO"),
        format='{"t":"%(asctime)s","level":"%(levelname)s","logger":"%(name)s","msg":"%(message)s"}',
    )
    if not args.redis_url:
        parser.error(
            "REDIS_URL (or --redis-url) is required: a standalone matchmaker needs the "
            "deployment's Redis (a single node runs its own matchmaker in-process)"
        )
    config = MatchConfig(bot_fill_after=_env_or("HEARTS_BOT_FILL_AFTER", 20.0))
    process = build(
        args.redis_url,
        prefix=args.prefix,
        node_id=args.node_id,
        config=config,
        clocks=_table_clocks(),
        interval=_env_or("HEARTS_MATCH_INTERVAL", 0.5),
        lease_ttl=_env_or("HEARTS_MATCH_LEASE_TTL", 5.0),
        queue_ttl=_env_float("HEARTS_QUEUE_TTL"),
    )
    log.info("matchmaker %s on %s", process.matchmaker.node_id, args.redis_url)
    asyncio.run(serve(process))


if __name__ == "__main__":
    main()
