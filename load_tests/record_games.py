"""Finished games for the store of record, made by playing real ones with the room machine.

Four humans each commit and reveal a fresh random shuffle secret every hand (so the audits
carry real, incompressible secrets) and play random legal cards, through ``server.core``'s
``step`` with injected time, as a node would. The record is built from the room's own events
(``hand_over``, ``hand_audit``, ``game_over``): the same data ``archive_of`` keeps today.
Used by ``load_tests/bench_record.py`` and the store of record's tests.
"""

from __future__ import annotations

import random
from typing import Any

from protocol.cards import cards_in, mask_of_names
from protocol.shuffle import deal_context, seat_commitment
from server.core.ratings import new_rating
from server.core.room.clocks import deciding_seats, next_deadline
from server.core.room.commands import (
    ChooseMoon,
    Command,
    CommitSecret,
    Event,
    Join,
    PassCards,
    PlayCard,
    RevealSecret,
    Start,
    Tick,
)
from server.core.room.game_view import game_view
from server.core.room.machine import new_room, step
from server.core.room.state import Clocks, RoomState, TableOptions
from server.core.rules import Rules
from server.league.rated_games import RatedGame, rate_participants
from server.record.records import GameRecord, RatingChange

FAST = Clocks(bot_think=0.0, between_hands=0.0)
MAX_STEPS = 20_000


class _Table:
    def __init__(self, rng: random.Random, room_id: str, players: list[str], now: float) -> None:
        self.rng = rng
        self.now = now
        self.players = players
        options = TableOptions(rules=Rules(100), clocks=FAST, rated=True, hints=False)
        self.state, self.events = new_room(
            room_id,
            kind="friends",  # the machine seats joiners at a friends' table; rated all the same
            host=players[0],
            host_name=f"Player {players[0][:6]}",
            options=options,
            seed=rng.randbytes(32),
            now=now,
        )
        self.secrets: dict[int, bytes] = {}

    def do(self, command: Command) -> None:
        self.now += self.rng.uniform(0.5, 4.0)  # a human's pace: the record's times look real
        self.state, events = step(self.state, command, self.now)
        self.events.extend(events)

    def _shuffle(self) -> bool:
        """Commit, then reveal, each seat's secret; True if it did something."""
        sh = self.state.shuffle
        if sh is None or sh["dealt"]:
            return False
        context = deal_context(self.state.game_id, sh["hand"])
        for j in range(4):
            player = self.players[j]
            if sh["commitments"][j] is None:
                self.secrets[j] = self.rng.randbytes(32)
                self.do(CommitSecret(player, seat_commitment(context, j, self.secrets[j])))
                return True
            if sh["phase"] == "reveal" and sh["secrets"][j] is None:
                self.do(RevealSecret(player, self.secrets[j]))
                return True
        return False

    def _decide(self) -> bool:
        st: RoomState = self.state
        for i in deciding_seats(st):
            assert st.game is not None
            view = game_view(st.game, i)
            player = self.players[i]
            if view["phase"] == "passing" and not view["passed"]:
                self.do(PassCards(player, mask_of_names(self.rng.sample(view["hand"], 3))))
            elif view["phase"] == "playing" and view["turn"] == i:
                self.do(PlayCard(player, self.rng.choice(cards_in(mask_of_names(view["legal"])))))
            elif view["phase"] == "moon_choice":
                self.do(ChooseMoon(player, "others_26"))
            else:
                continue
            return True
        return False

    def play(self) -> None:
        for p in self.players[1:]:
            self.do(Join(p, f"Player {p[:6]}"))
        self.do(Start(self.players[0]))
        for _ in range(MAX_STEPS):
            if self.state.status != "playing":
                return
            if self._shuffle() or self._decide():
                continue
            due = next_deadline(self.state)
            if due is not None:
                self.now = max(self.now, due)
            self.do(Tick())
        raise RuntimeError("the game did not end")


def _events(events: list[Event], kind: str) -> list[dict[str, Any]]:
    return [dict(e.data) for e in events if e.type == kind]


def played_game(
    rng: random.Random, room_id: str, players: list[str], now: float
) -> tuple[GameRecord, list[RatingChange]]:
    """A game to 100 played to its end by ``players`` (4 ids), as the store of record keeps it,
    and its rating changes for players never rated before."""
    table = _Table(rng, room_id, players, now)
    started = table.now
    table.play()
    st = table.state
    (over,) = _events(table.events, "game_over")
    overs = {e["hand"]: e for e in _events(table.events, "hand_over")}
    audits = {e["hand"]: e for e in _events(table.events, "hand_audit")}
    names = [seat.name if seat else "" for seat in st.seats]
    rated = RatedGame(
        st.game_id, tuple(players), tuple(names), tuple(over["scores"]), (False,) * 4
    )
    after = rate_participants(rated, {p: new_rating() for p in players})
    before = new_rating()
    record = GameRecord.from_value(
        {
            "game_id": st.game_id,
            "room_id": st.id,
            "kind": st.kind,
            "options": st.options.public(),
            "started_at": started,
            "finished_at": table.now,
            "scores": over["scores"],
            "winners": over["winners"],
            "rated": True,
            "departures": over["departures"],
            "seats": [
                {
                    "seat": i,
                    "participant": p,
                    "name": names[i],
                    "rating_before": 1500,
                    "rating_after": round(1500 + 24 * (after[p].mu - 25)),
                }
                for i, p in enumerate(players)
            ],
            "hands": [
                {"number": n, "over": overs.get(n), "audit": audits.get(n)}
                for n in sorted(set(overs) | set(audits))
            ],
        }
    )
    changes = [
        RatingChange(p, 0, before.mu, before.sigma, after[p].mu, after[p].sigma, 1) for p in players
    ]
    return record, changes
