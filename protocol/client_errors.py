"""What a client's ``request`` raises when the server refuses a command, or when nobody can say
whether the command was applied (a dropped socket, or the server's own ``outcome_unknown``)."""

from __future__ import annotations

from typing import Any

from .reconnect import OUTCOME_UNKNOWN, UnknownOutcome


class CommandError(Exception):
    def __init__(self, code: str, message: str, frame: dict[str, Any]) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.frame = frame


class OutcomeUnknown(CommandError):
    """The command may or may not have been applied (code ``outcome_unknown``).

    Raised once the client has resumed the room, so the truth is already on its way: ``resumed``
    is the answer to that ``resume`` (``resumed: true`` with the missed events queued before it,
    or a ``view``), or None if the client was not in a room. ``command`` names what was sent.
    """

    def __init__(
        self, command: UnknownOutcome, frame: dict[str, Any], resumed: dict[str, Any] | None
    ) -> None:
        super().__init__(OUTCOME_UNKNOWN, frame["message"], frame)
        self.command = command
        self.resumed = resumed


def unknown_frame(command: UnknownOutcome) -> dict[str, Any]:
    """The error frame the client makes for a command it lost with its socket."""
    sentence = (
        "The connection dropped before the answer came; the room was resumed to show what happened."
        if command.reason == "connection_lost"
        else "The server could not confirm whether the command was applied; the room was resumed."
    )
    return {"type": "error", "re": None, "code": OUTCOME_UNKNOWN, "message": sentence}
