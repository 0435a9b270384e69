"""Guest identities: a display name and a signed token (HMAC-SHA-256 with the server secret)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import unicodedata
from dataclasses import dataclass

MAX_NAME = 24


@dataclass(frozen=True, slots=True)
class Identity:
    player: str
    name: str


def clean_name(raw: object) -> str:
    """A display name: printable, trimmed, 1..24 characters; ValueError otherwise."""
    if not isinstance(raw, str):
        raise ValueError("name must be a string")
    name = " ".join(
        "".join(
            ch for ch in raw if unicodedata.category(ch)[0] not in ("C", "Z") or ch == " "
        ).split()
    )
    if not 1 <= len(name) <= MAX_NAME:
        raise ValueError(f"name must have 1 to {MAX_NAME} visible characters")
    return name


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class Tokens:
    def __init__(self, secret: bytes) -> None:
        self._key = hashlib.sha256(b"hearts-token-v1" + secret).digest()

    def new_guest(self, name: str) -> tuple[Identity, str]:
        identity = Identity(player="g_" + secrets.token_urlsafe(12), name=clean_name(name))
        return identity, self.issue(identity)

    def issue(self, identity: Identity) -> str:
        body = _b64(json.dumps({"p": identity.player, "n": identity.name}).encode())
        return body + "." + _b64(hmac.digest(self._key, body.encode(), "sha256"))

    def verify(self, token: str) -> Identity | None:
        try:
            body, sig = token.split(".")
            if not hmac.compare_digest(
                _unb64(sig), hmac.digest(self._key, body.encode(), "sha256")
            ):
                return None
            claims = json.loads(_unb64(body))
            return Identity(player=str(claims["p"]), name=clean_name(claims["n"]))
        except (ValueError, KeyError, TypeError):
            return None
