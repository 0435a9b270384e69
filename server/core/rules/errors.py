"""The one exception the rules engine raises for a move the rules refuse."""

from __future__ import annotations

from protocol.errors import HeartsError


class IllegalMove(HeartsError):
    """A move the rules refuse: ``code`` is stable (the wire's error code), ``message`` for people.

    The engine checks before it changes anything, so the game is unchanged after this is raised.
    """
