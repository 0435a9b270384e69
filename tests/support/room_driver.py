"""Driving a room through the pure state machine with injected time, as the server would."""

from __future__ import annotations

import random

from protocol.cards import cards_in, mask_of_names
from protocol.shuffle import deal_context, seat_commitment
from server.core.room.clocks import deciding_seats, next_deadline
from server.core.room.commands import BotAct, Command, CommitSecret, Event, RevealSecret, Tick
from server.core.room.game_view import game_view
from server.core.room.machine import new_room, step
from server.core.room.state import Clocks, RoomState, TableOptions
from server.core.rules import Phase, Rules

FAST = Clocks(bot_think=0.0, between_hands=0.0)


class Driver:
    def __init__(self, rules: Rules | None = None, clocks: Clocks = FAST, seed: int = 1) -> None:
        self.now = 1000.0
        self.rng = random.Random(seed)
        opts = TableOptions(rules=rules or Rules(), clocks=clocks)
        self.state, self.events = new_room(
            "room1234",
            kind="friends",
            host="p0",
            host_name="Ann",
            options=opts,
            seed=bytes(32),
            now=self.now,
        )

    def do(self, command: Command) -> list[Event]:
        old = self.state
        before = old.to_bytes()
        self.state, events = step(old, command, self.now)
        assert old.to_bytes() == before, "step changed the state it was given"
        assert before != self.state.to_bytes() or not events
        self.events.extend(events)
        return events

    def settle_shuffle(self) -> None:
        """Every human seat commits, then reveals, its shuffle secret (as clients do)."""
        sh = self.state.shuffle
        if sh is None or sh["dealt"]:
            return
        ctx = deal_context(self.state.game_id, sh["hand"])
        for phase in ("commit", "reveal"):
            for j, kind in enumerate(list(self.state.shuffle["kinds"])):
                seat = self.state.seats[j]
                if kind != "human" or seat is None or seat.player is None:
                    continue
                secret = bytes([j + 1]) * 32
                if phase == "commit" and self.state.shuffle["commitments"][j] is None:
                    self.do(CommitSecret(seat.player, seat_commitment(ctx, j, secret)))
                elif (
                    phase == "reveal"
                    and self.state.shuffle
                    and self.state.shuffle["phase"] == "reveal"
                ) and self.state.shuffle["secrets"][j] is None:
                    self.do(RevealSecret(seat.player, secret))
                if self.state.shuffle is None or self.state.shuffle["dealt"]:
                    return

    def bot_moves(self) -> None:
        """Let every due bot act (a random legal choice from its own view)."""
        progressed = True
        while progressed:
            progressed = False
            st: RoomState = self.state
            for i in deciding_seats(st):
                seat = st.seats[i]
                if (
                    seat is None
                    or not seat.is_bot
                    or seat.bot_due is None
                    or seat.bot_due > self.now
                ):
                    continue
                view = game_view(st.game, i)
                if view["phase"] == "passing":
                    cards = self.rng.sample(view["hand"], 3)
                    self.do(BotAct(i, "pass", mask_of_names(cards)))
                elif view["phase"] == "playing":
                    self.do(BotAct(i, "play", cards_in(mask_of_names(view["legal"]))[0]))
                else:
                    self.do(BotAct(i, "moon", "others_26"))
                progressed = True
                break

    def advance(self, seconds: float) -> None:
        self.now += seconds
        self.do(Tick())

    def run_deadlines(self) -> None:
        """Jump to each next deadline and let it fire, until nothing is pending."""
        while True:
            self.settle_shuffle()
            self.bot_moves()
            due = next_deadline(self.state)
            if due is None or self.state.status != "playing":
                return
            if any(
                self.state.seats[i] and not self.state.seats[i].is_bot
                for i in deciding_seats(self.state)
            ):
                return  # a human must act
            self.now = max(self.now, due)
            self.do(Tick())

    def human_play_lowest(self, player: str) -> None:
        from server.core.room.commands import PassCards, PlayCard

        i = self.state.seat_of(player)
        view = game_view(self.state.game, i)
        if view["phase"] == "passing" and not view["passed"]:
            self.do(PassCards(player, mask_of_names(view["hand"][:3])))
        elif view["phase"] == "playing" and view["turn"] == i:
            self.do(PlayCard(player, cards_in(mask_of_names(view["legal"]))[0]))

    @property
    def phase(self) -> Phase | None:
        return self.state.game.phase if self.state.game else None
