"""A finished game as one file, ``hearts-game/1`` (docs/game-format.md), and its check.

``GET /api/games/ID`` serves the document and ``hearts-verify FILE`` takes it as it is.
``check_game`` checks each hand's audit with the audit checker it is given (``protocol.verify``'s
``verify_game`` gives it ``verify_audit``: commitments, the deal, the passes, every card held
when played), that each audit is this game's and this hand's,
and that each hand's summary tells the same story as its audit: the same tricks, each taken by
the highest card of the suit led, the points those tricks carry (or the moon's, or a revoke
call's), and scores that add up, hand after hand, to the game's final scores. It needs nothing
of the server: a player can run it on a downloaded file.

>>> check = check_game(json.load(open("hearts-k3Xq9.1.json")), verify_audit)  # doctest: +SKIP
>>> [(h.number, h.problems) for h in check.hands][:1]  # doctest: +SKIP
[(1, ())]
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from protocol.cards import HEARTS, is_card_name, parse_card, suit_of
from protocol.shuffle import SEATS

__all__ = ["FORMAT", "AuditCheck", "GameCheck", "HandVerdict", "check_game", "is_game_document"]

AuditCheck = Callable[[Mapping[str, Any]], list[str]]
"""An audit record's problems (``protocol.verify.verify_audit``)."""

FORMAT = "hearts-game/1"
_QUEEN_OF_SPADES = parse_card("QS")
_ALL_POINTS = 26
MOON_RULES = ("others_26", "shooter_minus_26", "shooter_chooses")


@dataclass(frozen=True, slots=True)
class HandVerdict:
    """One hand's problems, each a plain sentence; none means verified."""

    number: int
    problems: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class GameCheck:
    """The verdict on a game document: its id, each hand's, and the game's own problems (the
    document's shape, the final scores)."""

    game: str
    hands: tuple[HandVerdict, ...]
    problems: tuple[str, ...]

    @property
    def verified(self) -> bool:
        return not self.problems and all(not h.problems for h in self.hands)


def is_game_document(value: Mapping[str, Any]) -> bool:
    """Whether a JSON object is a game document of any version (it names its ``format``),
    rather than one hand's audit record."""
    return "format" in value


def _points_of(cards: Sequence[int]) -> int:
    return sum(1 for c in cards if suit_of(c) == HEARTS) + 13 * (_QUEEN_OF_SPADES in cards)


def _winner(leader: int, cards: Sequence[int]) -> int:
    led = suit_of(cards[0])
    best = max(c for c in cards if suit_of(c) == led)
    return (leader + list(cards).index(best)) % SEATS


def _cards(value: object) -> list[int] | None:
    if not isinstance(value, list) or not all(is_card_name(c) for c in value):
        return None
    return [parse_card(c) for c in value]


def _seat_ints(value: object) -> list[int] | None:
    if not isinstance(value, list) or len(value) != SEATS:
        return None
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return None
    return list(value)


def _expected_points(
    over: Mapping[str, Any], taken: list[int], moon: object
) -> tuple[list[list[int]], int | None] | str:
    """The points the summary may show for tricks that carried ``taken``, and the shooter it
    must name; a sentence if its revoke call is malformed."""
    call = over.get("revoke_call")
    if call is not None:
        if not (isinstance(call, list) and len(call) == 3 and all(isinstance(v, int) for v in call)
                and 0 <= call[0] < SEATS and 0 <= call[1] < SEATS):
            return "its revoke call is not [accuser, accused, guilty]"
        loser = call[1] if call[2] else call[0]
        return [[_ALL_POINTS if s == loser else 0 for s in range(SEATS)]], None
    shooter = next((s for s in range(SEATS) if taken[s] == _ALL_POINTS), None)
    if shooter is None:
        return [taken], None
    others = [0 if s == shooter else _ALL_POINTS for s in range(SEATS)]
    minus = [-_ALL_POINTS if s == shooter else 0 for s in range(SEATS)]
    allowed = {"others_26": [others], "shooter_minus_26": [minus]}.get(str(moon), [others, minus])
    return allowed, shooter


def _check_summary(
    number: int, over: Mapping[str, Any], audit: Mapping[str, Any], moon: object
) -> list[str]:
    """The summary against the audit: tricks, winners, points and shooter."""
    problems: list[str] = []
    if over.get("hand") != number:
        problems.append(f"the summary is about hand {over.get('hand')}, not {number}")
    summary, played = over.get("tricks"), audit.get("tricks")
    if not isinstance(summary, list) or not isinstance(played, list):
        return [*problems, "the summary or the audit has no list of tricks"]
    if len(summary) != len(played):
        problems.append(f"the summary has {len(summary)} tricks, the audit {len(played)}")
    taken = [0] * SEATS
    for k, (told, kept) in enumerate(zip(summary, played, strict=False), start=1):
        cards = _cards(told.get("cards")) if isinstance(told, Mapping) else None
        if cards is None or not isinstance(kept, Mapping) or len(cards) != SEATS:
            problems.append(f"trick {k} of the summary is malformed")
            continue
        if told.get("leader") != kept.get("leader") or told.get("cards") != kept.get("cards"):
            problems.append(f"trick {k} of the summary is not trick {k} of the audit")
            continue
        leader = told["leader"]
        if not isinstance(leader, int) or not 0 <= leader < SEATS:
            problems.append(f"trick {k} of the summary has no leading seat")
            continue
        winner = _winner(leader, cards)
        if told.get("winner") != winner:
            problems.append(f"the summary says seat {told.get('winner')} took trick {k}, "
                            f"but seat {winner} played the highest card of the suit led")
        taken[winner] += _points_of(cards)
    points = _seat_ints(over.get("points"))
    expected = _expected_points(over, taken, moon)
    if isinstance(expected, str):
        problems.append(f"the summary is malformed: {expected}")
    elif points is None:
        problems.append("the summary's points are not four integers")
    else:
        allowed, shooter = expected
        if points not in allowed:
            problems.append(f"the summary gives points {points}, but the tricks give "
                            + " or ".join(str(a) for a in allowed))
        if over.get("shooter") != shooter:
            problems.append(f"the summary names shooter {over.get('shooter')}, the tricks "
                            f"{shooter}")
    return problems


def _check_hand(
    game: str,
    index: int,
    hand: object,
    moon: object,
    before: list[int] | None,
    audit_problems: AuditCheck,
) -> tuple[HandVerdict, list[int] | None]:
    """One hand's verdict, and the running scores after it (None: unknown from here)."""
    number = index + 1
    if not isinstance(hand, Mapping):
        return HandVerdict(number, ("the hand is not a JSON object",)), None
    problems: list[str] = []
    if hand.get("number") != number:
        problems.append(f"hand {number} is numbered {hand.get('number')}")
    audit, over = hand.get("audit"), hand.get("over")
    if not isinstance(audit, Mapping):
        problems.append("the hand has no audit record, so its deal cannot be verified")
    else:
        if audit.get("game") != game or audit.get("hand") != number:
            problems.append(f"the audit is of game {audit.get('game')} hand {audit.get('hand')}")
        problems.extend(audit_problems(audit))
    scores: list[int] | None = None
    if isinstance(over, Mapping):
        if isinstance(audit, Mapping):
            problems.extend(_check_summary(number, over, audit, moon))
        scores, points = _seat_ints(over.get("scores")), _seat_ints(over.get("points"))
        if scores is None or points is None:
            problems.append("the summary's scores or points are not four integers")
            scores = None
        elif before is not None and scores != [b + p for b, p in zip(before, points, strict=True)]:
            problems.append(f"the scores after this hand, {scores}, are not the scores before "
                            f"it, {before}, plus its points, {points}")
    elif over is not None:
        problems.append("the hand's summary is not a JSON object")
    else:
        scores = before  # a hand cut short (the game ended in it) scores nothing
    return HandVerdict(number, tuple(problems)), scores


def check_game(document: Mapping[str, Any], audit_problems: AuditCheck) -> GameCheck:
    """Check a ``hearts-game/1`` document: a verdict per hand, and the game's own problems.

    A document of another format, or of the wrong shape, has one game problem saying so.
    """
    game = document.get("game")
    name = game if isinstance(game, str) else "?"
    if document.get("format") != FORMAT:
        return GameCheck(name, (), (f"not a {FORMAT} document: format is "
                                    f"{document.get('format')!r}",))
    hands, options = document.get("hands"), document.get("options")
    if not isinstance(game, str) or not isinstance(hands, list) or not isinstance(options, dict):
        return GameCheck(name, (), ("malformed game document: it needs a game id, its "
                                    "options and a list of hands",))
    moon = options.get("moon", "others_26")
    verdicts: list[HandVerdict] = []
    scores: list[int] | None = [0] * SEATS
    for index, hand in enumerate(hands):
        verdict, scores = _check_hand(game, index, hand, moon, scores, audit_problems)
        verdicts.append(verdict)
    problems: list[str] = []
    final = _seat_ints(document.get("scores"))
    if final is None:
        problems.append("the game's scores are not four integers")
    elif scores is not None and final != scores:
        problems.append(f"the game's scores are {final}, but its hands add up to {scores}")
    return GameCheck(game, tuple(verdicts), tuple(problems))
