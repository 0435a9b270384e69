"""Who a connection is: an ``Identity``, and the signed, expiring tokens guests carry.

A guest token is an itsdangerous ``URLSafeTimedSerializer`` payload ({"p": player id, "n":
name}) signed with the server secret and stamped with its issue time; ``verify`` refuses it
after ``max_age`` seconds. Accounts carry opaque session tokens instead
(``server/accounts/service.py``), which can be revoked; a guest token cannot, so it is short-lived
by comparison and a guest who
wants to keep its rating claims an account.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from itsdangerous import BadSignature, URLSafeTimedSerializer

from server.accounts.names import MAX_NAME, clean_name

__all__ = ["MAX_NAME", "GuestTokens", "Identity", "clean_name"]

GUEST_SALT = "hearts-guest-v2"


@dataclass(frozen=True, slots=True)
class Identity:
    player: str
    name: str
    account: bool = False  # True: signed in to an account; False: a guest


class GuestTokens:
    def __init__(self, secret: bytes, max_age: float) -> None:
        if max_age <= 0:
            raise ValueError("guest tokens need a positive lifetime")
        self._serializer = URLSafeTimedSerializer(secret, salt=GUEST_SALT)
        self.max_age = max_age

    def new_guest(self, name: str) -> tuple[Identity, str]:
        """A new guest player id and its token; ``name`` must already be checked."""
        identity = Identity(player="g_" + secrets.token_urlsafe(12), name=name)
        return identity, self.issue(identity)

    def issue(self, identity: Identity) -> str:
        return str(self._serializer.dumps({"p": identity.player, "n": identity.name}))

    def verify(self, token: str) -> Identity | None:
        """The guest this token names, or None if it is forged, malformed or too old."""
        try:
            claims = self._serializer.loads(token, max_age=int(self.max_age))
            return Identity(player=str(claims["p"]), name=clean_name(claims["n"]))
        except (BadSignature, ValueError, KeyError, TypeError):
            return None
