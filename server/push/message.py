"""One Web Push message: its words, its encrypted body (RFC 8291) and its headers (RFC 8030,
RFC 8292).

The crypto is two small libraries of the web-push-libs project, the one pywebpush is built on:
``http_ece`` encrypts the body (aes128gcm: an ephemeral P-256 key per message, ECDH with the
browser's ``p256dh``, HKDF with its ``auth`` secret) and ``py_vapid`` signs the VAPID JWT (ES256)
that tells the push service who sends. The sending itself is ours (``sender.py``, over httpx),
asynchronous and pinned to an address checked against server-side request forgery, which
pywebpush's requests-based sender is not.

A message says only that a table needs the player ("Your turn at Ann's table") and links to
it: never a card, a hand or a score.
"""

from __future__ import annotations

import base64
import hashlib
import json
import time
from dataclasses import dataclass
from typing import Any

import http_ece
from cryptography.hazmat.primitives.asymmetric import ec
from py_vapid import Vapid02

from server.core.room.notices import Notice

JWT_LIFETIME = 12 * 3600  # RFC 8292: at most 24 hours; a token is reused until near its end
JWT_RENEW_BEFORE = 3600

TEXTS: dict[str, dict[str, tuple[str, str]]] = {
    # kind -> (title with {table}, body); a quick-play table has no host: "table" alone
    "en": {
        "turn": ("Your turn at {table}", "The table is waiting for you."),
        "waited": ("{table_cap} has waited 48 hours", "You may end the game now."),
        "ended": ("The game at {table} is over", "See the final scores."),
        "table": ("{name}'s table", "your table"),
    },
    "pt-BR": {
        "turn": ("Sua vez na {table}", "A mesa está esperando por você."),
        "waited": ("A {table} esperou 48 horas", "Você já pode encerrar a partida."),
        "ended": ("A partida na {table} terminou", "Veja o placar final."),
        "table": ("mesa de {name}", "sua mesa"),
    },
    "ar": {
        "turn": ("دورك على {table}", "الطاولة بانتظارك."),
        "waited": ("انتظرت {table} 48 ساعة", "يمكنك إنهاء اللعبة الآن."),
        "ended": ("انتهت اللعبة على {table}", "شاهد النتائج النهائية."),
        "table": ("طاولة {name}", "طاولتك"),
    },
}


def words(notice: Notice, lang: str) -> tuple[str, str]:
    """The notification's title and body in ``lang`` (English if it has none)."""
    texts = TEXTS.get(lang, TEXTS["en"])
    named, unnamed = texts["table"]
    table = named.format(name=notice.table) if notice.table else unnamed
    title, body = texts[notice.kind]
    return title.format(table=table, table_cap=table[:1].upper() + table[1:]), body


def payload(notice: Notice, lang: str) -> bytes:
    """What the service worker gets (server/static/sw.js): the words, the room and its link."""
    title, body = words(notice, lang)
    value: dict[str, Any] = {
        "title": title,
        "body": body,
        "kind": notice.kind,
        "room": notice.room,
        "url": f"/r/{notice.room}",
        "tag": f"room-{notice.room}",  # the newest notification of a room replaces the older
    }
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def topic(room: str) -> str:
    """RFC 8030 ``Topic``: at most 32 characters of the URL-safe base64 alphabet, one per room,
    so a push service holding an undelivered push of the room replaces it with the newer."""
    return base64.urlsafe_b64encode(hashlib.sha256(room.encode()).digest()[:18]).decode()


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def encrypt(body: bytes, p256dh: str, auth: str) -> bytes:
    """RFC 8291 aes128gcm, one record, with a new ephemeral key (its public key is the keyid)."""
    receiver = base64.urlsafe_b64decode(p256dh + "=" * (-len(p256dh) % 4))
    secret = base64.urlsafe_b64decode(auth + "=" * (-len(auth) % 4))
    ephemeral = ec.generate_private_key(ec.SECP256R1())
    encrypted: bytes = http_ece.encrypt(
        body, private_key=ephemeral, dh=receiver, auth_secret=secret, version="aes128gcm"
    )
    return encrypted


@dataclass(slots=True)
class _Token:
    header: str
    expires: float


class Vapid:
    """Signs VAPID JWTs (RFC 8292) with the server's key; one token per push service origin,
    kept until an hour before it expires (signing is the costliest part of a push)."""

    def __init__(self, private_key: ec.EllipticCurvePrivateKey, contact: str) -> None:
        self._signer = Vapid02(private_key)
        self.contact = contact
        self._tokens: dict[str, _Token] = {}

    def authorization(self, audience: str, now: float | None = None) -> str:
        now = time.time() if now is None else now
        token = self._tokens.get(audience)
        if token is None or token.expires - JWT_RENEW_BEFORE <= now:
            expires = int(now) + JWT_LIFETIME
            claims = {"aud": audience, "exp": expires, "sub": self.contact}
            header = self._signer.sign(claims)["Authorization"]
            token = self._tokens[audience] = _Token(header, expires)
        return token.header


def headers(notice: Notice, authorization: str, host: str) -> dict[str, str]:
    return {
        "Host": host,
        "Authorization": authorization,
        "TTL": str(notice.ttl),
        "Urgency": notice.urgency,
        "Topic": topic(notice.room),
        "Content-Encoding": "aes128gcm",
        "Content-Type": "application/octet-stream",
    }
