"""Where the key that signs guest tokens comes from (``server/accounts/identity.py``).

Every node of a deployment must sign with one key, and the key must outlive a restart, or
every guest token in every browser stops verifying. ``HEARTS_SECRET`` names one explicitly
(``FixedKey``); without it the key is kept in the store of record (``KeptKey``): the first
node to start makes one and keeps it, and every later start (of it or any node on the same
database) reads the same one. Reading it needs the database, so ``Accounts.start`` loads it,
before a node serves anything.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import Protocol

from server.record.store import RecordStore

KEY_NAME = "token_secret"  # the server key's name in the store of record
KEY_BYTES = 32


class KeySource(Protocol):
    """Gives the signing key, once, when the service starts."""

    async def key(self) -> bytes: ...


class FixedKey:
    """A key given in the configuration (``HEARTS_SECRET``)."""

    def __init__(self, secret: bytes) -> None:
        if not secret:
            raise ValueError("a fixed signing key must not be empty")
        self._secret = secret

    async def key(self) -> bytes:
        return self._secret


class KeptKey:
    """The key kept in the store of record under ``name`` (``KEY_NAME`` unless told: the
    game list's cursors keep theirs as ``cursor_key``), made on first use. Two nodes starting
    at once both offer a new key; ``put_server_key`` keeps one and both get it."""

    def __init__(
        self, records: RecordStore, clock: Callable[[], float], name: str = KEY_NAME
    ) -> None:
        self._records = records
        self._clock = clock
        self._name = name

    async def key(self) -> bytes:
        offered = secrets.token_bytes(KEY_BYTES)
        return await self._records.put_server_key(self._name, offered, now=self._clock())


def signing_key(
    secret: bytes, records: RecordStore, clock: Callable[[], float]
) -> FixedKey | KeptKey:
    """``secret`` if one is configured (it wins), else the key kept in ``records``."""
    return FixedKey(secret) if secret else KeptKey(records, clock)
