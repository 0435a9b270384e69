"""The one exception the rules engine raises for a move the rules refuse."""

from __future__ import annotations


class IllegalMove(Exception):
    """A move the rules refuse: ``code`` is stable (the wire's error code), ``message`` for people.

    The engine checks before it changes anything, so the game is unchanged after this is raised.
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
