"""Stable error codes and the sentence that goes with each.

An error frame is ``{"type": "error", "re": <command id or null>, "code": CODE, "message": TEXT}``.
Codes never change meaning; messages may be reworded. Codes from the rules engine (why a card
or a pass was refused) are passed through with the engine's own sentence.
"""

from __future__ import annotations

ERRORS: dict[str, str] = {
    # The frame or the message
    "malformed_frame": "The frame could not be decoded as a message of this subprotocol.",
    "unknown_type": "Unknown message type.",
    "bad_field": "A field is missing, unexpected or of the wrong type.",
    "too_large": "The frame is larger than the server accepts.",
    "unsupported_media_type": "Send the request body as Content-Type: application/json.",
    "rate_limited": "Too many messages; slow down.",
    # Identity and rooms
    "not_authenticated": "Send an auth message with your token first.",
    "bad_token": "The token is not valid.",
    "already_authenticated": "This connection is already authenticated.",
    "bad_name": "That name cannot be used.",
    "name_taken": "That name is taken.",
    "bad_password": "A password has 8 to 256 characters.",
    "wrong_credentials": "That name and password do not match an account.",
    "too_many_attempts": "Too many attempts; wait a little and try again.",
    "room_not_found": "No room has that code.",
    "not_in_room": "Join a room first.",
    "room_full": "Every seat at that table is taken.",
    "not_host": "Only the host can do that.",
    "not_seated": "Only a seated player can do that.",
    "seat_taken": "That seat is already taken.",
    "not_ready": "The game cannot start until all four seats are filled.",
    "game_not_over": "That can only be done when the game is over.",
    "game_in_progress": "A game is already in progress.",
    "bad_option": "That house-rule option is not one the table offers.",
    "hints_disabled": "Hints are not available at this table.",
    "not_bootable": "That seat cannot be booted now.",
    "cannot_end_game": "The game cannot be ended: it has not waited long enough on another seat.",
    "not_in_queue": "You are not waiting in the quick-play queue.",
    "bad_subscription": "That push subscription cannot be used.",
    "too_many_devices": "A player can have at most 10 devices for notifications; remove one.",
    "busy": "The room is busy; try again.",
    "bad_reveal": "That secret does not match the commitment you sent.",
    "audit_not_found": "No finished hand of this game has that number.",
    "game_not_found": "No finished game has that id.",
    "game_in_play": "That game is still being played: its record opens when it is over.",
    "bad_cursor": "That page cursor is not one this list gave; start again from the first page.",
    "internal_error": "Something went wrong on the server; the move was not made.",
    "store_unavailable": "The game store cannot be reached right now; nothing was changed. "
    "Try again in a moment.",
    "outcome_unknown": "The game store did not confirm the move: it may or may not have been "
    "made. Send resume (or view) to see, before trying it again.",
    # The game (the rules engine's codes)
    "wrong_phase": "That move is not possible at this point of the game.",
    "not_your_turn": "It is not your turn.",
    "card_not_in_hand": "That card is not in your hand.",
    "must_lead_two_of_clubs": "The first trick must be led with the 2 of clubs.",
    "must_follow_suit": "You must follow suit.",
    "hearts_not_broken": "You cannot lead a heart before hearts are broken.",
    "no_points_on_first_trick": "No hearts or QS on the first trick while you hold another card.",
    "bad_pass": "Pass exactly three cards.",
    "already_passed": "You have already chosen your three cards.",
    "revokes_blocked": "This table does not allow revoke calls.",
    "bad_revoke_call": "Call a revoke on one of the other three seats.",
    "bad_moon_choice": "Choose others_26 or shooter_minus_26.",
}


class HeartsError(Exception):
    """The root of every refusal the service explains: a stable ``code`` and a sentence.

    The rules engine's ``IllegalMove``, the room's ``RoomError`` and ``OptionError``, and
    ``ProtocolError`` all derive from it, so a refusal travels from wherever it was decided to
    the client unchanged, and becomes an error frame in one place (``frame``).

    >>> HeartsError("not_your_turn").frame(7)
    {'type': 'error', 're': 7, 'code': 'not_your_turn', 'message': 'It is not your turn.'}
    """

    def __init__(self, code: str, message: str | None = None) -> None:
        if code not in ERRORS:
            raise ValueError(f"unregistered error code {code!r}")
        self.code = code
        self.message = message or ERRORS[code]
        super().__init__(self.message)

    def frame(self, re: object) -> dict[str, object]:
        """The error frame answering the command whose id is ``re``."""
        return error_frame(re, self.code, self.message)


class ProtocolError(HeartsError):
    """A message or request refused before it reached a room (its frame, its fields, who sent
    it)."""


def error_frame(re: object, code: str, message: str | None = None) -> dict[str, object]:
    """An error frame for ``code``, with its registered sentence unless ``message`` is given.

    >>> error_frame(None, "busy")["message"]
    'The room is busy; try again.'
    """
    return {"type": "error", "re": re, "code": code, "message": message or ERRORS[code]}
