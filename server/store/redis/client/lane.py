"""Lanes: raw pipelined connections for the commit path, one per Redis server, beside redis-py.

Every card is a commit, and through redis-py each commit (or batch of them) costs a pool
checkout, a retry wrapper, a lock, a pipeline object, a command stack and a reply parser call
per command: under load the commit path was the node's largest cost after the sockets, most
of it in redis-py. A lane is an ``asyncio.Protocol`` with hiredis's reader: the commands of a
batch go out in one write and the replies are matched to their calls in order as they are
read, with no task and no lock.

A lane serves only the common case and hands everything else to redis-py, which knows it:

- a server it cannot reach, a dropped connection (the calls in flight are retried through
  redis-py; a commit's nonce makes a retry after a lost reply report its own success), and TLS
  (never laned);
- an error reply that names a state of the server or cluster rather than the call: NOSCRIPT
  (an empty script cache), MOVED and ASK (a slot that moved), TRYAGAIN, CLUSTERDOWN, LOADING,
  READONLY, MASTERDOWN, BUSY. The caller replays those calls through redis-py, which loads
  the script, follows the slot or waits out the failover, and refreshes its slot map, which the
  next batch's routing (``RedisCluster.get_node_from_key``) then follows.

A server on this machine is best reached by its Unix socket (``unix://`` in ``REDIS_URL``): a
lane then writes without the loopback's TCP stack, whose receiving half runs on the sending core.

A lane whose oldest call has had no reply for the reply timeout (``connect.reply_timeout``:
redis-py's ``socket_timeout``, 2 s unless the URL says) is failed with a timeout: its
server stopped answering without closing the connection. Those calls' outcome is unknown, and
they are not handed to redis-py, which would wait as long again on the same server: the callers
get the timeout (``StoreUnavailable``).

After a failure a server gets no new lane for ``RETRY_AFTER`` seconds: redis-py carries the
commits meanwhile, so a dead or restarting server is not asked for a connection per batch.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Sequence
from typing import Any, cast

import hiredis
from redis.asyncio.cluster import RedisCluster
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from server.store.redis.client.connect import Client, reply_timeout

RETRY_AFTER = 1.0  # seconds before a server that failed gets a lane again
CONNECT_TIMEOUT = 2.0
# Error replies about the server or the cluster, not the call: redis-py handles them.
HANDED_OVER = (
    b"NOSCRIPT",
    b"MOVED",
    b"ASK",
    b"TRYAGAIN",
    b"CLUSTERDOWN",
    b"LOADING",
    b"READONLY",
    b"MASTERDOWN",
    b"BUSY",
)

Command = Sequence[bytes | str | int | float]


class HandOver(Exception):
    """The call's reply is for redis-py to handle (see ``HANDED_OVER``)."""


def _reply_error(message: str) -> Exception:
    raw = message.encode()
    if raw.startswith(HANDED_OVER):
        return HandOver(message)
    return ResponseError(message)


class Lane(asyncio.Protocol):
    """One connection; ``call(commands)`` answers each command, in order, in one write;
    failed if the oldest call has waited ``timeout`` seconds for its reply."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.transport: asyncio.Transport | None = None
        # Kept: asyncio.get_running_loop() is a getpid() system call (CPython's fork check).
        self._loop: asyncio.AbstractEventLoop | None = None
        self.lost = False
        self._reader = hiredis.Reader()
        # Each batch in flight: how many replies it waits for, those read so far, its future,
        # and when it was sent (the loop's clock).
        self._waiting: deque[tuple[int, list[Any], asyncio.Future[list[Any]], float]] = deque()
        self._watchdog: asyncio.TimerHandle | None = None
        self._silent = ""  # why the lane failed, when its server stopped answering

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # A stream transport (uvloop's is not a subclass of asyncio.Transport).
        self.transport = cast(asyncio.Transport, transport)
        self._loop = asyncio.get_running_loop()
        self._watch()

    def _watch(self) -> None:
        """Every quarter of the timeout: fail the lane if its oldest call is overdue (one timer
        a lane, not one a call: a card's commit adds only a clock reading)."""
        loop = self._loop
        if self.lost or loop is None:
            return
        if self._waiting and loop.time() - self._waiting[0][3] > self.timeout:
            self._silent = f"Redis did not answer within {self.timeout:g} s"
            self._fail(RedisTimeoutError(self._silent))
            return
        self._watchdog = loop.call_later(self.timeout / 4, self._watch)

    def call(self, commands: Sequence[Command]) -> asyncio.Future[list[Any]]:
        """Send ``commands``; the future has one reply each (error replies as exceptions)."""
        loop = self._loop or asyncio.get_running_loop()
        future: asyncio.Future[list[Any]] = loop.create_future()
        if self.lost or self.transport is None or self.transport.is_closing():
            # Calls that queued behind a batch that timed out time out with it, at once.
            future.set_exception(
                RedisTimeoutError(self._silent)
                if self._silent
                else RedisConnectionError("the lane is closed")
            )
            return future
        # hiredis types its argument as a one-element tuple; it takes any length.
        self.transport.write(b"".join(hiredis.pack_command(tuple(c)) for c in commands))  # type: ignore[arg-type]
        self._waiting.append((len(commands), [], future, loop.time()))
        return future

    def data_received(self, data: bytes) -> None:
        reader = self._reader
        reader.feed(data)
        waiting = self._waiting
        while True:
            reply = reader.gets()
            if reply is False:
                return
            if not waiting:  # a reply nobody asked for: the stream is not what we think
                self._fail(RedisConnectionError("unexpected reply from Redis"))
                return
            count, replies, future, _ = waiting[0]
            if isinstance(reply, hiredis.ReplyError):
                reply = _reply_error(str(reply))
            replies.append(reply)
            if len(replies) == count:
                waiting.popleft()
                if not future.done():
                    future.set_result(replies)

    def connection_lost(self, exc: Exception | None) -> None:
        self._fail(RedisConnectionError(f"connection to Redis lost: {exc or 'closed'}"))

    def _fail(self, error: Exception) -> None:
        self.lost = True
        if self._watchdog is not None:
            self._watchdog.cancel()
        waiting, self._waiting = self._waiting, deque()
        for _, _, future, _ in waiting:
            if not future.done():
                future.set_exception(error)
                future.exception()  # a caller that was cancelled meanwhile would never read it
        if self.transport is not None and not self.transport.is_closing():
            self.transport.close()

    def close(self) -> None:
        self.lost = True
        if self._watchdog is not None:
            self._watchdog.cancel()
        if self.transport is not None:
            self.transport.close()


class Address:
    """Where a lane connects (a host and port, or a Unix socket's path), and what it sends
    first (AUTH, SELECT), from redis-py's own connection settings."""

    __slots__ = ("db", "host", "password", "path", "port", "username")

    def __init__(
        self, host: str, port: int, settings: dict[str, Any], path: str | None = None
    ) -> None:
        self.host, self.port, self.path = host, port, path
        self.username: str | None = settings.get("username")
        self.password: str | None = settings.get("password")
        self.db = int(settings.get("db") or 0)

    @property
    def where(self) -> tuple[str, int]:
        """The server's key among a client's lanes."""
        return (self.path, 0) if self.path is not None else (self.host, self.port)

    def hello(self) -> list[Command]:
        first: list[Command] = []
        if self.password is not None:
            if self.username is not None:
                first.append(("AUTH", self.username, self.password))
            else:
                first.append(("AUTH", self.password))
        if self.db:
            first.append(("SELECT", self.db))
        return first


class Lanes:
    """The lanes of one client: ``ready(key)`` is an open lane to the key's server, or None
    when redis-py should carry the call."""

    def __init__(self, client: Client) -> None:
        self._client = client
        self._lanes: dict[tuple[str, int], Lane] = {}
        self._connecting: dict[tuple[str, int], asyncio.Future[None]] = {}
        self._failed: dict[tuple[str, int], float] = {}
        # Asked once: RedisCluster's isinstance goes through typing's protocol check (about a
        # microsecond), and every batch asks where its keys live.
        self._cluster = isinstance(client, RedisCluster)
        self._single = None if self._cluster else self._single_address()
        self._timeout = reply_timeout(client)

    def _single_address(self) -> Address | None:
        pool = getattr(self._client, "connection_pool", None)
        if pool is None:
            return None
        settings = pool.connection_kwargs
        if settings.get("ssl"):
            return None  # TLS: redis-py's
        if settings.get("path"):
            return Address("", 0, settings, path=str(settings["path"]))
        if "host" not in settings:
            return None
        return Address(settings["host"], int(settings.get("port") or 6379), settings)

    def _address(self, key: str) -> Address | None:
        if not self._cluster:
            return self._single
        client = cast(RedisCluster, self._client)
        if not getattr(client, "_first_map_read", True):
            return None  # the slot map is not known yet: redis-py learns it
        try:
            node = client.get_node_from_key(key)
        except Exception:
            return None
        if node is None:
            return None
        settings = client.nodes_manager.connection_kwargs
        if settings.get("ssl"):
            return None
        return Address(node.host, int(node.port), settings)

    def ready(self, key: str) -> Lane | None:
        """The open lane to ``key``'s server; None (and a lane is opened for the next batches)
        when there is none yet."""
        address = self._address(key)
        if address is None:
            return None
        where = address.where
        lane = self._lanes.get(where)
        if lane is not None and not lane.lost:
            return lane
        if where not in self._connecting and time.monotonic() >= self._failed.get(where, 0.0):
            self._connecting[where] = asyncio.ensure_future(self._open(address))
        return None

    def _lane(self) -> Lane:
        return Lane(self._timeout)

    def failed(self, lane: Lane) -> None:
        """A call on ``lane`` failed on the connection: redis-py carries its server a while."""
        for where, known in list(self._lanes.items()):
            if known is lane:
                del self._lanes[where]
                self._failed[where] = time.monotonic() + RETRY_AFTER
        lane.close()

    async def _open(self, address: Address) -> None:
        where = address.where
        loop = asyncio.get_running_loop()
        lane: Lane | None = None
        try:
            try:
                if address.path is not None:
                    connecting = loop.create_unix_connection(self._lane, address.path)
                else:
                    connecting = loop.create_connection(self._lane, address.host, address.port)
                _, made = await asyncio.wait_for(connecting, CONNECT_TIMEOUT)
                lane = made
                hello = address.hello()
                if hello:
                    for reply in await asyncio.wait_for(made.call(hello), CONNECT_TIMEOUT):
                        if isinstance(reply, Exception):
                            raise reply
            except (OSError, TimeoutError, RedisError, HandOver):
                # Refused, silent, or AUTH/SELECT refused: no lane, and no connection left open.
                if lane is not None:
                    lane.close()
                self._failed[where] = time.monotonic() + RETRY_AFTER
                return
            self._lanes[where] = made
        finally:
            del self._connecting[where]

    def close(self) -> None:
        for pending in self._connecting.values():
            pending.cancel()
        for lane in self._lanes.values():
            lane.close()
        self._lanes.clear()
