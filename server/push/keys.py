"""The server's VAPID key pair (RFC 8292), made once and kept in the store of record.

A browser subscribes with the server's public key (``applicationServerKey``), and its push
service accepts a push only when it is signed with the matching private key: a new key would
silently orphan every device. So, like the guest tokens' key (``server/accounts/keys.py``), the
first node to start makes a P-256 private key and keeps it under ``KEY_NAME`` in the server
keys of the store of record (``put_server_key``: of two nodes racing, both keep the one that
won); every later start, of any node on the same database, reads it back. It is never in the
repository or a configuration file.
"""

from __future__ import annotations

import base64
from collections.abc import Callable

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from server.record.store import RecordStore

KEY_NAME = "vapid_p256"  # the 32-byte private scalar, big-endian


def _private_from(raw: bytes) -> ec.EllipticCurvePrivateKey:
    return ec.derive_private_key(int.from_bytes(raw, "big"), ec.SECP256R1())


def _raw(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_numbers().private_value.to_bytes(32, "big")


class VapidKeys:
    """Loads (or makes) the key pair once, at the node's start (``load``)."""

    def __init__(self, records: RecordStore, clock: Callable[[], float]) -> None:
        self._records = records
        self._clock = clock
        self._private: ec.EllipticCurvePrivateKey | None = None

    async def load(self) -> None:
        offered = _raw(ec.generate_private_key(ec.SECP256R1()))
        kept = await self._records.put_server_key(KEY_NAME, offered, now=self._clock())
        self._private = _private_from(kept)

    @property
    def private(self) -> ec.EllipticCurvePrivateKey:
        if self._private is None:
            raise RuntimeError("VapidKeys.load has not run")
        return self._private

    @property
    def public(self) -> str:
        """The public key as the page's ``applicationServerKey`` takes it: the uncompressed
        point, base64url without padding."""
        point = self.private.public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
        )
        return base64.urlsafe_b64encode(point).rstrip(b"=").decode()
