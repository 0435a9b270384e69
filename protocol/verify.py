"""Check a fair-deal audit record: commitments, the deal, the passes and every card played.

``verify_audit(record)`` returns the problems it finds as plain sentences; an empty list means
the record is consistent: every commitment opens, the deal is the one the five secrets
derive, each seat passed three cards it was dealt, and each card played was in that seat's
hand at that moment. With ``own`` (the checking seat's own notes), it also checks the record
against what that seat saw: its secret, its cards, the commitments it was shown.

Command line: ``python -m protocol.verify FILE [--own OWN_FILE]`` (or ``hearts-verify``), where
FILE is one hand's audit record or a whole downloaded game (``hearts-game/1``,
``protocol/game_file.py``: every hand is checked, one verdict each); exit 0 verified, 1
problems found, 2 unreadable input. What this does and does not prove is in
``docs/fair-deal.md`` and ``docs/game-format.md``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from protocol.audit import (
    TRICKS,
    Audit,
    AuditFormatError,
    OwnRecord,
    parse_audit,
    parse_own,
    pass_direction_for,
    pass_target,
)
from protocol.cards import card_name, cards_in, mask_of, parse_card, suit_of
from protocol.game_file import FORMAT, GameCheck, check_game, is_game_document
from protocol.shuffle import (
    SEATS,
    absent_secret,
    bot_secret,
    deal_context,
    deal_hands,
    derive_deck,
    seat_commitment,
    server_commitment,
)

__all__ = [
    "RecordCheck",
    "check_record",
    "main",
    "verify_audit",
    "verify_checked",
    "verify_game",
    "verify_parsed",
]

_TWO_CLUBS = parse_card("2C")


def _names(mask: int) -> str:
    return ", ".join(card_name(c) for c in cards_in(mask))


def _short(value: bytes | None) -> str:
    return "none" if value is None else value.hex()[:16] + "…"


def verify_audit(audit: Mapping[str, Any], own: Mapping[str, Any] | None = None) -> list[str]:
    """The problems with an audit record, each a plain sentence; ``[]`` means verified.

    A malformed record is one problem ("malformed audit record: …"). ``own`` is the checking
    seat's own record (``{"seat", "secret"}`` and optionally ``"dealt"``, ``"received"``,
    ``"passed"``, ``"server_commitment"``, ``"commitments"``); a malformed ``own`` is the
    caller's error and raises :class:`protocol.audit.AuditFormatError` (a ValueError).
    """
    mine = None if own is None else parse_own(own)
    return verify_checked(check_record(audit), mine)


def verify_game(document: Mapping[str, Any]) -> GameCheck:
    """Every hand of a downloaded game (``hearts-game/1``): each audit as ``verify_audit``
    checks it, and each hand's summary against its audit (``protocol/game_file.py``).

    >>> verify_game({"format": "hearts-game/1", "game": "g", "options": {}, "hands": [],
    ...              "scores": [0, 0, 0, 0]}).verified
    True
    """
    return check_game(document, verify_audit)


def verify_parsed(audit: Audit, own: OwnRecord | None = None) -> list[str]:
    """:func:`verify_audit` on an already parsed record."""
    return verify_checked(_check_parsed(audit), own)


@dataclass(frozen=True, slots=True)
class RecordCheck:
    """The checks of a record that hold for every seat alike (``check_record``), and what the
    checks against one seat's own notes need of them (``verify_checked``)."""

    audit: Audit | None  # None: the record is malformed (its one problem says how)
    problems: tuple[str, ...]
    derived: tuple[int, ...]  # each seat's cards, as the five secrets deal them
    received_from: tuple[int | None, ...]  # the seat each seat's passed cards came from


def check_record(audit: Mapping[str, Any]) -> RecordCheck:
    """Every check of :func:`verify_audit` but those against one seat's own notes: one program
    checking a record for several seats runs these once, then ``verify_checked`` per seat."""
    try:
        parsed = parse_audit(audit)
    except AuditFormatError as exc:
        return RecordCheck(None, (f"malformed audit record: {exc}",), (), ())
    return _check_parsed(parsed)


def verify_checked(checked: RecordCheck, own: OwnRecord | None = None) -> list[str]:
    """:func:`verify_audit`'s problems from a record's ``check_record``: those, then the record
    against what one seat saw (its secret, its cards, the commitments it was shown)."""
    if checked.audit is None or own is None:
        return list(checked.problems)
    own_problems = _check_own(checked.audit, own, checked.derived, checked.received_from)
    return [*checked.problems, *own_problems]


def _check_parsed(audit: Audit) -> RecordCheck:
    """Every check of :func:`verify_parsed` but those against one seat's own notes."""
    problems: list[str] = []
    ctx = deal_context(audit.game, audit.hand)
    secret_s = audit.server_secret

    # 1. Every commitment opens. Bots' and stand-ins' secrets must be the ones S derives.
    if server_commitment(ctx, secret_s) != audit.server_commitment:
        problems.append("the server's secret does not match its commitment")
    used: list[bytes] = []
    for s in audit.seats:
        j = s.seat
        if s.kind == "human":
            assert s.commitment is not None  # parse_audit guarantees it
            if seat_commitment(ctx, j, s.secret) != s.commitment:
                problems.append(f"seat {j}'s secret does not match its commitment")
            used.append(s.secret)
        elif s.kind == "bot":
            expected = bot_secret(ctx, secret_s, j)
            if s.secret != expected:
                problems.append(
                    f"seat {j} is a bot, but its secret is not the one the server's secret gives"
                )
            used.append(expected)
        else:
            expected = absent_secret(ctx, secret_s, j)
            if s.secret != expected:
                problems.append(
                    f"seat {j} is marked absent, but its secret is not the stand-in the "
                    "server's secret gives"
                )
            used.append(expected)

    # 2. The deal re-derives from the secrets (as they should be, so one bad secret cannot
    #    hide behind a deal made to match it).
    derived = deal_hands(derive_deck(ctx, secret_s, used))
    dealt = [mask_of(cards) for cards in audit.deal]
    for j in range(SEATS):
        missing = derived[j] & ~dealt[j]
        if missing:
            problems.append(
                f"the deal does not re-derive: seat {j} should hold {_names(missing)}"
                f" (the record has {_names(dealt[j] & ~derived[j])} instead)"
            )
    problems.extend(_deal_is_a_partition(audit))

    # 3. The passes: right direction for the hand, 3 distinct cards each from the passer's deal.
    expected_direction = pass_direction_for(audit.hand)
    if audit.pass_direction != expected_direction:
        problems.append(
            f"hand {audit.hand} should pass {expected_direction}, "
            f"the record says {audit.pass_direction}"
        )
    passed = [0] * SEATS
    if audit.passes is not None:
        for j, cards in enumerate(audit.passes):
            for card in cards:
                if passed[j] >> card & 1:
                    problems.append(f"seat {j} passed {card_name(card)} twice")
                elif not dealt[j] >> card & 1:
                    problems.append(f"seat {j} passed {card_name(card)} which it was not dealt")
                passed[j] |= 1 << card

    # 4. The play: each card from the player's hand at that moment, leaders in order.
    held = list(dealt)
    received_from: list[int | None] = [None] * SEATS
    if audit.passes is not None:
        for j in range(SEATS):
            held[j] &= ~passed[j]
        for j in range(SEATS):
            target = pass_target(j, audit.pass_direction)
            held[target] |= passed[j]
            received_from[target] = j
    problems.extend(_check_tricks(audit, held, passed))
    return RecordCheck(audit, tuple(problems), tuple(derived), tuple(received_from))


def _deal_is_a_partition(audit: Audit) -> list[str]:
    problems = []
    owner: dict[int, int] = {}
    for j, cards in enumerate(audit.deal):
        for card in cards:
            if card in owner:
                who = "twice" if owner[card] == j else f"to seat {owner[card]} and seat {j}"
                problems.append(f"the deal gives {card_name(card)} {who}")
            else:
                owner[card] = j
    return problems


def _check_tricks(audit: Audit, held: list[int], passed: list[int]) -> list[str]:
    problems = []
    played_in: dict[int, tuple[int, int]] = {}  # card -> (trick number, seat) that played it
    holder_2c = next((j for j in range(SEATS) if held[j] >> _TWO_CLUBS & 1), None)
    previous_winner: tuple[int, int] | None = None  # (seat, card) that took the last trick
    for number, trick in enumerate(audit.tricks, start=1):
        if number == 1:
            if holder_2c is not None and trick.leader != holder_2c:
                problems.append(
                    f"trick 1 was led by seat {trick.leader}, but seat {holder_2c} held 2C"
                )
            if trick.cards[0] != _TWO_CLUBS:
                problems.append(f"trick 1 was opened with {card_name(trick.cards[0])}, not 2C")
        elif previous_winner is not None and trick.leader != previous_winner[0]:
            seat, card = previous_winner
            problems.append(
                f"trick {number} was led by seat {trick.leader}, but seat {seat} "
                f"won trick {number - 1} with {card_name(card)}"
            )
        for k, card in enumerate(trick.cards):
            seat = (trick.leader + k) % SEATS
            if held[seat] >> card & 1:
                held[seat] &= ~(1 << card)
                played_in[card] = (number, seat)
                continue
            name = card_name(card)
            if card in played_in:
                earlier, by = played_in[card]
                who = "it" if by == seat else f"seat {by}"
                why = f"which {who} had already played in trick {earlier}"
            elif passed[seat] >> card & 1:
                to = pass_target(seat, audit.pass_direction)
                why = f"which it had passed to seat {to}"
            else:
                why = "which it did not hold"
            problems.append(f"seat {seat} played {name} in trick {number} {why}")
        if len(trick.cards) == SEATS:
            led = suit_of(trick.cards[0])
            # Same suit means same 13-block, so the highest number is the highest rank.
            best = max(c for c in trick.cards if suit_of(c) == led)
            seat = (trick.leader + trick.cards.index(best)) % SEATS
            previous_winner = (seat, best)
    if len(audit.tricks) == TRICKS and all(len(t.cards) == SEATS for t in audit.tricks):
        for seat in range(SEATS):
            if held[seat]:
                problems.append(f"after trick 13 seat {seat} still held {_names(held[seat])}")
    return problems


def _check_own(
    audit: Audit, own: OwnRecord, derived: Sequence[int], received_from: Sequence[int | None]
) -> list[str]:
    problems = []
    j = own.seat
    record = audit.seats[j]
    if record.secret != own.secret:
        if record.kind == "absent":
            problems.append(
                f"the audit marks seat {j} (you) absent and used a stand-in, not your secret"
                + (
                    ", though it has your commitment"
                    if record.commitment is not None
                    and record.commitment == seat_commitment(_ctx(audit), j, own.secret)
                    else ""
                )
            )
        elif record.kind == "bot":
            problems.append(f"the audit says seat {j} (you) was a bot, and did not use your secret")
        else:
            problems.append(f"the audit's secret for seat {j} is not your secret")
    if own.server_commitment is not None and own.server_commitment != audit.server_commitment:
        problems.append(
            f"the server's commitment in the audit ({_short(audit.server_commitment)}) is not "
            f"the one you were shown ({_short(own.server_commitment)})"
        )
    if own.commitments is not None:
        for seat, shown in enumerate(own.commitments):
            recorded = audit.seats[seat].commitment
            if shown != recorded:
                problems.append(
                    f"seat {seat}'s commitment in the audit ({_short(recorded)}) is not the "
                    f"one you were shown ({_short(shown)})"
                )
    if own.dealt is not None:
        mine = mask_of(own.dealt)
        if mine != derived[j]:
            problems.append(
                f"you were dealt {_names(mine & ~derived[j])}, but the secrets deal seat {j} "
                f"{_names(derived[j] & ~mine)} instead"
            )
    passes = audit.passes
    if own.passed is not None:
        mine = mask_of(own.passed)
        theirs = 0 if passes is None else mask_of(passes[j])
        if mine != theirs:
            problems.append(
                f"you passed {_names(mine) or 'nothing'}, "
                f"the record says {_names(theirs) or 'nothing'}"
            )
    if own.received is not None:
        mine = mask_of(own.received)
        giver = received_from[j]
        theirs = 0 if passes is None or giver is None else mask_of(passes[giver])
        if mine != theirs:
            problems.append(
                f"you received {_names(mine) or 'nothing'}, "
                f"the record says {_names(theirs) or 'nothing'}"
            )
    return problems


def _ctx(audit: Audit) -> bytes:
    return deal_context(audit.game, audit.hand)


# --- command line --------------------------------------------------------------------------


class _Unreadable(Exception):
    """An input file that is missing, not JSON, or not shaped like what it should be."""


def _load(path: str, what: str) -> Mapping[str, Any]:
    try:
        if path == "-":
            value = json.load(sys.stdin)
        else:
            with open(path, encoding="utf-8") as f:
                value = json.load(f)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _Unreadable(f"cannot read the {what} {path}: {exc}") from None
    if not isinstance(value, Mapping):
        raise _Unreadable(f"{path}: the {what} must be a JSON object")
    return value


def _print_game(check: GameCheck) -> int:
    for hand in check.hands:
        if hand.problems:
            print(f"NOT verified: game {check.game} hand {hand.number}")
            for problem in hand.problems:
                print(f"- {problem}")
        else:
            print(f"verified: game {check.game} hand {hand.number}")
    for problem in check.problems:
        print(f"- game {check.game}: {problem}")
    bad = sum(1 for hand in check.hands if hand.problems)
    if check.verified:
        print(f"verified: game {check.game}, all {len(check.hands)} hands")
        return 0
    print(f"NOT verified: game {check.game}, {bad} of {len(check.hands)} hands with problems")
    return 1


def main(argv: Sequence[str] | None = None) -> int:
    """``hearts-verify FILE [--own OWN_FILE]``: 0 verified, 1 problems, 2 unreadable. FILE is
    an audit record or a game document (``hearts-game/1``, which takes no ``--own``)."""
    parser = argparse.ArgumentParser(
        prog="hearts-verify",
        description="Check a Hearts fair-deal audit record, or every hand of a downloaded game "
        "(see docs/fair-deal.md and docs/game-format.md).",
    )
    parser.add_argument(
        "audit", metavar="FILE", help="an audit record or a downloaded game (JSON; - for stdin)"
    )
    parser.add_argument("--own", metavar="OWN_FILE", help="your seat's own record (JSON)")
    args = parser.parse_args(argv)
    try:
        record = _load(args.audit, "audit record")
        if is_game_document(record):
            if record.get("format") != FORMAT:
                raise _Unreadable(
                    f"{args.audit}: a game of format {record.get('format')!r}; this verifier "
                    f"reads {FORMAT}"
                )
            if args.own is not None:
                raise _Unreadable("--own goes with one hand's audit record, not a whole game")
            return _print_game(verify_game(record))
        own = None if args.own is None else _load(args.own, "own record")
        problems = verify_audit(record, own)
    except _Unreadable as exc:
        print(exc, file=sys.stderr)
        return 2
    except AuditFormatError as exc:  # only the own record raises; a bad audit is a problem
        print(f"{args.own}: {exc}", file=sys.stderr)
        return 2
    if problems:
        print(f"NOT verified: game {record.get('game')} hand {record.get('hand')}")
        for problem in problems:
            print(f"- {problem}")
        return 1
    print(f"verified: game {record['game']} hand {record['hand']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
