"""Opaque, signed cursors for a player's list of finished games (``GET /api/players/ID/games``).

A cursor is where a page ended, the last game's key ``(finished_at, game_id)``
(``server/record/games.py`` ``GameCursor``), as base64url of the key and an HMAC-SHA-256 over
the key and the player's id. The list pages by key, so a cursor must not be something a
client can aim: a changed byte, a cursor made up, or one taken from another player's list fails
the HMAC and is refused (``bad_cursor``) before any query runs. The HMAC's key is a server key
kept in the store of record under ``cursor_key`` (``server/accounts/keys.py`` ``KeptKey``), so
every node signs and checks alike, and cursors outlive a restart.

>>> cursors = GameCursors(FixedKey(b"k" * 32))  # doctest: +SKIP
>>> token = await cursors.seal("p-ann", GameCursor(1.7e9, "k3Xq9.1"))  # doctest: +SKIP
>>> await cursors.open("p-ann", token)  # doctest: +SKIP
GameCursor(finished_at=1700000000.0, game_id='k3Xq9.1')
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import math
import re
import struct

from protocol.errors import ProtocolError
from server.accounts.keys import KeySource
from server.record.games import GameCursor
from server.record.records import MAX_ID

KEY_NAME = "cursor_key"  # the server key's name in the store of record
MAC_BYTES = 16
_TIME = struct.Struct(">d")
_CONTEXT = b"hearts-live player games cursor v1\x00"
_MAX_CHARS = 4 * (_TIME.size + 4 * MAX_ID + MAC_BYTES) // 3 + 4
_TOKEN = re.compile(r"[A-Za-z0-9_-]+")


def _bad() -> ProtocolError:
    return ProtocolError("bad_cursor")


class GameCursors:
    """Seals and opens cursors with the key ``source`` gives (read once, on first use)."""

    def __init__(self, source: KeySource) -> None:
        self._source = source
        self._key: bytes | None = None

    async def _mac(self, player: str, payload: bytes) -> bytes:
        if self._key is None:
            self._key = await self._source.key()  # two requests at once get the same kept key
        who = player.encode("utf-8")
        message = _CONTEXT + struct.pack(">H", len(who)) + who + payload
        return hmac.new(self._key, message, hashlib.sha256).digest()[:MAC_BYTES]

    async def seal(self, player: str, cursor: GameCursor) -> str:
        """The cursor as an opaque URL-safe token, good only in ``player``'s list."""
        payload = _TIME.pack(cursor.finished_at) + cursor.game_id.encode("utf-8")
        raw = payload + await self._mac(player, payload)
        return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")

    async def open(self, player: str, token: str) -> GameCursor:
        """The cursor ``seal`` made for ``player``; ``ProtocolError("bad_cursor")`` for anything
        else (malformed, changed, made up, or sealed for another player)."""
        if not 0 < len(token) <= _MAX_CHARS or not _TOKEN.fullmatch(token):
            raise _bad()
        try:
            raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        except (binascii.Error, ValueError):
            raise _bad() from None
        if len(raw) <= _TIME.size + MAC_BYTES:
            raise _bad()
        payload, mac = raw[:-MAC_BYTES], raw[-MAC_BYTES:]
        if not hmac.compare_digest(mac, await self._mac(player, payload)):
            raise _bad()
        (finished_at,) = _TIME.unpack_from(payload)
        try:
            game_id = payload[_TIME.size :].decode("utf-8")
        except UnicodeDecodeError:
            raise _bad() from None
        if not math.isfinite(finished_at) or not 0 < len(game_id) <= MAX_ID:
            raise _bad()  # signed by us, so never: but a key shared by mistake is no excuse
        return GameCursor(finished_at, game_id)
