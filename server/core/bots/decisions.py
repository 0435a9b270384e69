"""The bots' one entry point: a seat's view in, what to send out.

``decide(view, level, rng_seed)`` returns a ``Decision``; ``hint(view, level)`` returns the same
choice with the reason and the alternatives' expected cost. Both take only the view dict a human
client in that seat receives (``server.core.room.game_view.game_view``): there is no parameter
through which a ``Game`` or another seat's cards could reach a bot, so it cannot cheat.

Bots never revoke: even at a table that allows revokes (where the view's ``legal`` lists every
card when following) they play only what the standard rules allow, as the rules engine says.
They never call a revoke either, so no decision is ever a revoke call.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from protocol.cards import card_name, names_of, parse_card
from server.core.rules import Hand

from .basic import basic_pass, basic_play, watched_runner
from .explain import card_words, explain_moon, explain_pass, explain_play
from .knowledge import Knowledge, knowledge_of
from .levels import BOT_LEVELS, BotLevel, bot_level
from .outcome import choose_moon
from .priced_pass import priced_pass
from .search import SearchResult, search_pass, search_play
from .walks import walk_search
from .worlds import placeholder_world

Kind = Literal["pass", "play", "moon", "wait"]


@dataclass(frozen=True, slots=True)
class Decision:
    """What a bot sends: three cards to pass, one card to play, a moon choice, or nothing yet."""

    kind: Kind
    cards: tuple[str, ...] = ()  # "pass": three names; "play": one name
    moon: str | None = None  # "moon": "others_26" or "shooter_minus_26"
    bot: str = ""  # the level's identity, e.g. "bot:strong"

    @property
    def card(self) -> str | None:
        return self.cards[0] if self.kind == "play" else None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "bot": self.bot}
        if self.kind == "play":
            out["card"] = self.cards[0]
        elif self.kind == "pass":
            out["cards"] = list(self.cards)
        elif self.kind == "moon":
            out["moon"] = self.moon
        return out


@dataclass(frozen=True, slots=True)
class Hint:
    """A suggestion for a human seat: the bot's own choice, why, and how the others compare."""

    kind: Kind
    cards: tuple[str, ...]
    reason: str  # e.g. "ducks under the jack of diamonds on the table"
    text: str  # the reason as a sentence with the card, for the client to show
    expected_points: float | None  # mean points this seat takes this hand, from the search
    alternatives: list[dict[str, Any]] = field(default_factory=list)  # best first
    moon: str | None = None
    bot: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "cards": list(self.cards),
            "moon": self.moon,
            "reason": self.reason,
            "text": self.text,
            "expected_points": self.expected_points,
            "alternatives": self.alternatives,
            "bot": self.bot,
        }


def view_seed(view: dict[str, Any]) -> int:
    """A seed from the view itself, so an unseeded decision is still a function of the view."""
    blob = json.dumps(view, sort_keys=True, separators=(",", ":"), default=str)
    return int.from_bytes(hashlib.blake2b(blob.encode(), digest_size=8).digest(), "big")


def strict_legal(k: Knowledge) -> int:
    """The cards the standard rules allow this seat now, from the engine (never the view's list
    alone: at a revokes-allowed table that list includes revokes)."""
    hand = Hand.from_position(placeholder_world(k), k.tricks, k.trick)
    legal = hand.legal_plays(k.seat)
    if k.view_legal and legal & k.view_legal:
        legal &= k.view_legal
    return legal


@dataclass(slots=True)
class _Thought:
    decision: Decision
    k: Knowledge
    legal: int = 0
    search: SearchResult | None = None
    runner: int = -1


def _think(
    view: dict[str, Any],
    level: BotLevel,
    rng_seed: int | None,
    stop: Callable[[], bool] | None = None,
) -> _Thought:
    k = knowledge_of(view)
    rng = random.Random(view_seed(view) if rng_seed is None else rng_seed)
    me = k.seat
    if k.phase == "moon_choice" and k.moon_chooser == me:
        choice = choose_moon(me, k.scores, k.rules)
        return _Thought(Decision("moon", moon=choice, bot=level.id), k)
    if k.phase == "passing" and k.direction and not k.passes_done[me] and not k.passed:
        if level.search and not level.walks:
            result = search_pass(k, level, rng, stop)
            cards = result.options[0].cards
        elif level.priced_pass:
            result = priced_pass(k, rng.getrandbits(64), stop)
            cards = result.options[0].cards
        else:
            result, cards = None, basic_pass(k.hand)
        return _Thought(Decision("pass", tuple(names_of(cards)), bot=level.id), k, search=result)
    if k.phase == "playing" and k.turn == me:
        legal = strict_legal(k)
        if not legal & (legal - 1):
            card = legal.bit_length() - 1  # one legal card: no search
            return _Thought(Decision("play", (card_name(card),), bot=level.id), k, legal)
        if level.walks:
            result = walk_search(k, legal, level.walks, rng.getrandbits(64), stop)
            card, runner = result.options[0].card, watched_runner(k)
        elif level.search:
            result = search_play(k, legal, level, rng, stop)
            card = result.options[0].card
            runner = result.runner
        else:
            result, card, runner = None, basic_play(k, legal), watched_runner(k)
        decision = Decision("play", (card_name(card),), bot=level.id)
        return _Thought(decision, k, legal, result, runner)
    return _Thought(Decision("wait", bot=level.id), k)


def decide(
    view: dict[str, Any],
    level: str | BotLevel = "strong",
    rng_seed: int | None = None,
    stop: Callable[[], bool] | None = None,
) -> Decision:
    """What the bot at ``view["seat"]`` sends now. Deterministic for a given view and seed.

    ``stop``, if given, is the caller's clock: the search asks it between batches of deals and,
    once it says so, answers with its best so far. The level's budget counts card plays, so
    ``stop`` only ever cuts a search short on a machine too loaded to finish it in time; then,
    and only then, the decision may depend on the load.
    """
    lvl = level if isinstance(level, BotLevel) else bot_level(level)
    return _think(view, lvl, rng_seed, stop).decision


def hint(view: dict[str, Any], level: str = "strong", rng_seed: int | None = None) -> Hint:
    """The card (or pass) the bot of ``level`` would choose here, why, and the alternatives."""
    lvl = bot_level(level)
    t = _think(view, lvl, rng_seed)
    d, k = t.decision, t.k
    if d.kind == "moon":
        reason = explain_moon(k.seat, k.scores, k.rules, d.moon or "others_26")
        what = "26 to each of the others" if d.moon == "others_26" else "26 off your own score"
        text = f"You shot the moon: take {what}; it {reason}."
        return Hint("moon", (), reason, text, None, [], d.moon, lvl.id)
    if d.kind == "wait":
        return Hint("wait", (), "it is not your move", "Nothing to do yet.", None, [], None, lvl.id)
    search = t.search
    if search is None:
        # The basic bot does not search; a small search prices its choice and the others.
        rng = random.Random(view_seed(view) if rng_seed is None else rng_seed)
        costing = BOT_LEVELS["normal"]
        if d.kind == "pass":
            search = search_pass(k, costing, rng)
        elif t.legal & (t.legal - 1):
            search = search_play(k, t.legal, costing, rng)
    alternatives: list[dict[str, Any]] = []
    expected: float | None = None
    if search is not None and search.options[0].worlds:
        chosen = sum(1 << parse_card(n) for n in d.cards)
        for o in search.options:
            entry = {
                "cards": names_of(o.cards) if d.kind == "pass" else [card_name(o.card)],
                "same_as": names_of(o.cards) if d.kind == "play" else None,
                "expected_points": round(o.cost, 2),
                "moon_chance": round(o.moon_rate, 2),
                "deals": o.worlds,
            }
            mine = o.cards == chosen if d.kind == "pass" else bool(o.cards & chosen)
            if mine:
                expected = round(o.cost, 2)
            else:
                alternatives.append(entry)
    if d.kind == "pass":
        cards_mask = sum(1 << parse_card(n) for n in d.cards)
        reason = explain_pass(k, cards_mask)
        text = f"Pass {_list_words(d.cards)}: this {reason}."
    else:
        card = parse_card(d.cards[0])
        shooting = bool(search and search.shooting)
        reason = explain_play(k, t.legal, card, t.runner, shooting)
        text = f"Play the {card_words(card)}: it {reason}."
    return Hint(d.kind, d.cards, reason, text, expected, alternatives, None, lvl.id)


def _list_words(names: tuple[str, ...]) -> str:
    words = [card_words(parse_card(n)) for n in names]
    return ", ".join(words[:-1]) + " and " + words[-1] if len(words) > 1 else words[0]
