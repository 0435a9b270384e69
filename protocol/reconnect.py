"""What the Python client does when its socket drops: which closes to survive, how long to wait,
which commands it may send again, and how it names the room it is in when it dials.

Kept apart from the client so the policy can be read (and tested) without a socket.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

RETRYABLE = frozenset(
    {"auth", "ping", "view", "audit", "hint", "ladder", "join", "resume", "commit", "reveal"}
)
"""Commands the client sends again on the new connection. They only read, or (``join``,
``resume``) re-enter, or (``commit``, ``reveal``) carry this seat's one secret for the hand, so a
copy that arrives after the first was applied is refused with ``wrong_phase`` and changes nothing.
Any other command in flight when the socket dropped may or may not have been applied."""

OUTCOME_UNKNOWN = "outcome_unknown"
"""The code of an answer (from the server, or made by the client for a command in flight when
its socket dropped) saying the command may or may not have been applied; resume to see."""

TOO_FAR_BEHIND = "too far behind"


def survivable(code: int | None, reason: str) -> bool:
    """Whether a close is one to reconnect after.

    Not after a refusal of this client's own frames (1002 protocol error, 1003, 1007, 1009 too
    large, 1008 flood): the same frames would be refused again. 1008 "too far behind" is the
    server asking for a resume, so it is survivable; so are network loss (1006), a draining or
    restarting node (1001, 1012, 1013) and server faults (1011).
    """
    if code in (1000, 1002, 1003, 1007, 1009, 1010):
        return False
    return not (code == 1008 and reason != TOO_FAR_BEHIND)


@dataclass(frozen=True, slots=True)
class Backoff:
    """Delays between reconnect attempts: the first at once, then growing, with jitter so a
    node's many clients do not all return at the same instant; give up after a while."""

    first: float = 0.05
    factor: float = 2.0
    longest: float = 3.0
    jitter: float = 0.25
    give_up_after: float = 60.0

    def delay(self, attempt: int, rng: random.Random | None = None) -> float:
        if attempt <= 0:
            return 0.0
        base = min(self.longest, self.first * self.factor ** (attempt - 1))
        spread = (rng or random).uniform(-self.jitter, self.jitter)
        return max(0.0, base * (1 + spread))


@dataclass(frozen=True, slots=True)
class UnknownOutcome:
    """A command the server may or may not have applied.

    ``reason`` is ``connection_lost`` (it was in flight when the socket dropped) or
    ``outcome_unknown`` (the server said its store did not confirm the commit). By the time the
    caller hears of it the client has resumed the room, so a fresh ``view`` (or the events the
    resume replayed) tells what happened.
    """

    type: str
    fields: dict[str, Any] = field(default_factory=dict)
    reason: str = "connection_lost"


def with_room(url: str, room: str | None) -> str:
    """The WebSocket URL with ``?room=CODE`` set, so a load balancer can route by room."""
    if room is None:
        return url
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "room"]
    query.append(("room", room))
    return urlunsplit(parts._replace(query=urlencode(query)))
