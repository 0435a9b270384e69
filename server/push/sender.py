"""Sends the push outbox's notices to the players' devices (RFC 8030), off every card's path.

The room service hands ``deliver`` the notices a tick took from a room's outbox
(``server/core/room/notices.py``), after that tick committed, in a task of its own: no room's
actor waits on a push service. ``deliver`` reads the players' devices and settings from the
store of record in one query, sends each device its encrypted message, and returns the
notices that are done, which the room then takes out of its outbox (``NoticesSent``):

- delivered (2xx) to every device, or the player has no device, or does not want this kind;
- a device the push service answers 404 or 410 is gone: its subscription is deleted, and it
  counts as done; 400, 403 and 413 are that message's fault, which no retry mends (logged);
- anything else (429, 5xx, a timeout, a refused connection) is not done: the notice stays in
  the room, leased, and is offered again after its backoff, by whichever node's tick takes it.
  A device already answered 2xx is not sent the same notice again by this node.

An endpoint is resolved and checked at every push (``endpoints.resolve_public``) and the
request goes to the address checked, with the name in ``Host`` and in TLS's SNI.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from urllib.parse import urlsplit

import httpx

from server.core.room.notices import Notice
from server.ops import metrics
from server.ops.outage_log import OutageLog
from server.record.push import PushSettings, Subscription
from server.record.store import RecordStore

from .endpoints import Blocked, resolve_public
from .keys import VapidKeys
from .message import Vapid, encrypt, headers, payload

log = logging.getLogger(__name__)

CONCURRENCY = 128  # requests in flight per node
TIMEOUT = 10.0
DELIVERED_MEMORY = 3600.0  # seconds a device's 2xx for a notice is remembered (no resend)
GONE = (404, 410)
HOPELESS = (400, 403, 413)  # the message's fault: retrying the same one mends nothing


class PushSender:
    """See the module docstring. ``start`` loads the VAPID keys; ``stop`` closes the client."""

    def __init__(
        self,
        records: RecordStore,
        keys: VapidKeys,
        *,
        contact: str,
        allow_loopback: bool = False,
        clock: Callable[[], float] = time.time,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.records = records
        self.keys = keys
        self.contact = contact
        self.allow_loopback = allow_loopback
        self.clock = clock
        self._transport = transport
        self._client: httpx.AsyncClient | None = None
        self._vapid: Vapid | None = None
        self._slots = asyncio.Semaphore(CONCURRENCY)
        self._in_flight: set[tuple[str, str]] = set()  # (room, key) being sent here
        self._delivered: dict[tuple[str, str, str], float] = {}  # (room, key, endpoint)
        self.outage = OutageLog(log, "the store of record (pushes wait in their rooms)")

    async def start(self) -> None:
        await self.keys.load()
        self._vapid = Vapid(self.keys.private, self.contact)
        self._client = httpx.AsyncClient(
            timeout=TIMEOUT,
            follow_redirects=False,
            transport=self._transport,
            limits=httpx.Limits(max_connections=CONCURRENCY, max_keepalive_connections=32),
        )

    async def stop(self) -> None:
        if self._client is not None:
            await self._client.aclose()

    async def deliver(self, notices: Sequence[Notice]) -> tuple[tuple[str, str], ...]:
        """Send the notices; the ``(player, key)`` of those done (module docstring)."""
        mine = [n for n in notices if (n.room, n.key) not in self._in_flight]
        if not mine:
            return ()
        self._in_flight.update((n.room, n.key) for n in mine)
        try:
            try:
                devices, wanted = await self.records.push_targets({n.player for n in mine})
            except Exception:
                self.outage.failed()
                return ()
            self.outage.succeeded()
            done = await asyncio.gather(
                *(self._notice(n, devices.get(n.player, []), wanted.get(n.player)) for n in mine)
            )
        finally:
            self._in_flight.difference_update((n.room, n.key) for n in mine)
        return tuple((n.player, n.key) for n, ok in zip(mine, done, strict=True) if ok)

    async def _notice(
        self, notice: Notice, devices: list[Subscription], settings: PushSettings | None
    ) -> bool:
        if not devices or not (settings or PushSettings()).wants(notice.kind, notice.pace):
            return True
        sent = await asyncio.gather(*(self._device(notice, d) for d in devices))
        return all(sent)

    async def _device(self, notice: Notice, device: Subscription) -> bool:
        now = self.clock()
        memo = (notice.room, notice.key, device.endpoint)
        if memo in self._delivered:
            return True
        async with self._slots:
            status = await self._post(notice, device)
        if status is None or status == 429 or status >= 500:
            return False
        if 200 <= status < 300:
            self._forget_old(now)
            self._delivered[memo] = now + DELIVERED_MEMORY
        elif status in GONE:
            await self._drop(device.endpoint)
        else:
            log.warning("a push service refused a push with %d (not retried)", status)
        return True

    async def _post(self, notice: Notice, device: Subscription) -> int | None:
        """The push service's status, or None when it could not be reached or was blocked."""
        assert self._client is not None and self._vapid is not None
        started = time.monotonic()
        parts = urlsplit(device.endpoint)
        host = parts.hostname or ""
        https = parts.scheme == "https"
        port = parts.port or (443 if https else 80)
        try:
            address = await resolve_public(host, port, allow_loopback=self.allow_loopback)
        except Blocked as e:
            metrics.PUSHES.labels("blocked").inc()
            log.warning("push not sent: %s", e)
            return None
        shown = f"[{address}]" if address.version == 6 else str(address)
        target = parts._replace(netloc=f"{shown}:{port}").geturl()
        audience = f"{parts.scheme}://{parts.netloc}"
        body = encrypt(payload(notice, device.lang), device.p256dh, device.auth)
        sent = headers(notice, self._vapid.authorization(audience, self.clock()), parts.netloc)
        try:
            response = await self._client.post(
                target,
                content=body,
                headers=sent,
                extensions={"sni_hostname": host} if https else {},
            )
        except (httpx.HTTPError, OSError) as e:
            metrics.PUSHES.labels("failed").inc()
            log.info("push to %s failed: %s", host, e)
            return None
        finally:
            metrics.PUSH_SECONDS.observe(time.monotonic() - started)
        status = response.status_code
        outcome = (
            "delivered"
            if 200 <= status < 300
            else "gone"
            if status in GONE
            else "refused"
            if status in HOPELESS
            else "failed"
        )
        metrics.PUSHES.labels(outcome).inc()
        return status

    async def _drop(self, endpoint: str) -> None:
        try:
            await self.records.drop_subscription(endpoint)
        except Exception:
            log.warning("a gone push subscription could not be deleted now", exc_info=True)

    def _forget_old(self, now: float) -> None:
        if len(self._delivered) < 10_000:
            return
        for memo, until in list(self._delivered.items()):
            if until <= now:
                del self._delivered[memo]
