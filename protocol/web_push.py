"""The receiving side of a Web Push subscription, for bots and tools (docs/python-client.md).

A browser makes a P-256 key pair and a 16-byte auth secret when it subscribes, gives the public
half to the server, and decrypts each push with the private half (RFC 8291, the aes128gcm
content coding of RFC 8188). ``PushKeys`` does the same for a program: ``subscription`` is
what ``account_api.subscribe_push`` takes (with the endpoint of the program's own push
service), and ``decrypt`` turns a push's body back into the server's JSON. Only
``cryptography`` is needed; the test suite's push service decrypts with this too.

    keys = PushKeys.new()
    await subscribe_push(base, token, keys.subscription("https://push.example.org/abc"))
    message = keys.decrypt(body)  # {"title": "Your turn at Ann's table", "url": "/r/…", …}
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import struct
from dataclasses import dataclass
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.ciphers.aead import AESGCM


class PushDecryptError(ValueError):
    """The body is not an aes128gcm push for these keys."""


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _hmac(key: bytes, data: bytes) -> bytes:
    return hmac.new(key, data, hashlib.sha256).digest()


@dataclass(frozen=True)
class PushKeys:
    private: ec.EllipticCurvePrivateKey
    auth: bytes

    @classmethod
    def new(cls) -> PushKeys:
        return cls(ec.generate_private_key(ec.SECP256R1()), os.urandom(16))

    @property
    def public(self) -> bytes:
        return self.private.public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
        )

    def subscription(self, endpoint: str) -> dict[str, Any]:
        """As a browser's ``PushSubscription.toJSON()``."""
        keys = {"p256dh": b64url(self.public), "auth": b64url(self.auth)}
        return {"endpoint": endpoint, "keys": keys}

    def decrypt_bytes(self, body: bytes) -> bytes:
        """RFC 8291: the sender's key is the keyid; one record of at most rs bytes."""
        if len(body) < 21:
            raise PushDecryptError("the body is shorter than the aes128gcm header")
        salt, (rs,), idlen = body[:16], struct.unpack("!L", body[16:20]), body[20]
        keyid, record = body[21 : 21 + idlen], body[21 + idlen :]
        if idlen != 65 or keyid[:1] != b"\x04":
            raise PushDecryptError("the keyid is not the sender's P-256 public key")
        if rs < 18 or not record or len(record) > rs:
            raise PushDecryptError("a push is one record of at most rs bytes")
        try:
            sender = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), keyid)
        except ValueError:
            raise PushDecryptError("the keyid is not a P-256 point") from None
        shared = self.private.exchange(ec.ECDH(), sender)
        ikm = _hmac(_hmac(self.auth, shared), b"WebPush: info\x00" + self.public + keyid + b"\x01")
        prk = _hmac(salt, ikm)
        key = _hmac(prk, b"Content-Encoding: aes128gcm\x00\x01")[:16]
        nonce = _hmac(prk, b"Content-Encoding: nonce\x00\x01")[:12]
        try:
            padded = AESGCM(key).decrypt(nonce, record, None)
        except InvalidTag:
            raise PushDecryptError("the body does not decrypt with these keys") from None
        text = padded.rstrip(b"\x00")
        if not text or text[-1] != 2:
            raise PushDecryptError("the last record lacks its delimiter")
        return text[:-1]

    def decrypt(self, body: bytes) -> dict[str, Any]:
        """The push's JSON (``title``, ``body``, ``kind``, ``room``, ``url``, ``tag``)."""
        value = json.loads(self.decrypt_bytes(body))
        if not isinstance(value, dict):
            raise PushDecryptError("the push is not a JSON object")
        return value
