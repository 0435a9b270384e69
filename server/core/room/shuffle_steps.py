"""The commit-reveal shuffle's part of a room step (docs/fair-deal.md).

The server commits to its secret, every human seat commits and then reveals, the deck is derived
from all of them, and after the hand every secret is published as the audit.
"""

from __future__ import annotations

from protocol.audit import build_audit
from protocol.cards import names_of
from protocol.shuffle import (
    SeatSecret,
    derive_deck,
    seat_commitment,
    secrets_for_seats,
    server_commitment,
)
from server.core.rules import deal_from_deck

from .commands import ALL, CommitSecret, RevealSecret, RoomError
from .dealing import hand_context, server_secret
from .game_view import DIRECTION_NAMES
from .step_base import StepBase

SHUFFLE_MISSES_IDLE = 2  # shuffles missed in a row before a seat counts as idle


class ShuffleSteps(StepBase):
    def _prepare_hand(self, delay: float) -> None:
        """Open the next hand's shuffle: the server commits; human seats commit, then reveal."""
        st = self.state
        number = self._game().hand_number + 1
        ctx = hand_context(st.game_id, number)
        kinds = ["bot" if s is None or s.is_bot else "human" for s in st.seats]
        st.next_hand_at = self.now + delay if delay > 0 else None
        self.shuffle_owned = True
        st.shuffle = {
            "hand": number,
            "phase": "commit",
            "deadline": self.now + st.options.clocks.shuffle,
            "kinds": kinds,
            "commitments": [None, None, None, None],
            "secrets": [None, None, None, None],
            "dealt": False,
        }
        if "human" in kinds:
            self.emit(
                ALL,
                "shuffle_commit",
                game=st.game_id,
                hand=number,
                server_commitment=server_commitment(ctx, server_secret(st.seed, ctx)).hex(),
                deadline=st.shuffle["deadline"],
            )
        self._shuffle_progress()

    def _commit_secret(self, c: CommitSecret) -> None:
        i = self._seat(c.player)
        sh = self.state.shuffle
        if sh is None or sh["dealt"] or sh["phase"] != "commit" or sh["kinds"][i] != "human":
            raise RoomError("wrong_phase", "No shuffle is waiting for your commitment.")
        if sh["commitments"][i] is not None:
            raise RoomError("wrong_phase", "You have already committed to this hand's shuffle.")
        self.own_shuffle()["commitments"][i] = c.commitment
        self.emit(ALL, "shuffle_committed", seat=i)
        self._shuffle_progress()

    def _reveal_secret(self, c: RevealSecret) -> None:
        i = self._seat(c.player)
        sh = self.state.shuffle
        if sh is None or sh["dealt"] or sh["phase"] != "reveal" or sh["kinds"][i] != "human":
            raise RoomError("wrong_phase", "No shuffle is waiting for your secret.")
        if sh["secrets"][i] is not None:
            raise RoomError("wrong_phase", "You have already revealed your secret.")
        ctx = hand_context(self.state.game_id, sh["hand"])
        if seat_commitment(ctx, i, c.secret) != sh["commitments"][i]:
            raise RoomError("bad_reveal", "That secret does not match your commitment.")
        self.own_shuffle()["secrets"][i] = c.secret
        seat = self.state.seats[i]
        assert seat is not None
        if seat.shuffle_misses:
            self.own_seat(i).shuffle_misses = 0
        self.emit(ALL, "shuffle_revealed", seat=i)  # that it did, never what
        self._shuffle_progress()

    def _missed_shuffle(self, i: int) -> None:
        """A seat that keeps missing the shuffle is idle: bootable, and booted if nobody does."""
        if (seat := self.state.seats[i]) is None or seat.is_bot:
            return
        seat = self.own_seat(i)
        seat.shuffle_misses += 1
        if seat.shuffle_misses >= SHUFFLE_MISSES_IDLE and seat.out_of_time_at is None:
            seat.out_of_time_at = self.now
            self.emit(
                ALL,
                "out_of_time",
                seat=i,
                auto_boot_at=self.now + self.state.options.clocks.boot_window,
                reason="shuffle",
            )

    def _shuffle_progress(self) -> None:
        """Move the shuffle on when every human seat has done its part (or is an absent seat)."""
        st = self.state
        sh = st.shuffle
        if sh is None or sh["dealt"]:
            return
        kinds = sh["kinds"]
        if sh["phase"] == "commit":
            if any(k == "human" and sh["commitments"][j] is None for j, k in enumerate(kinds)):
                return
            sh = self.own_shuffle()
            sh["phase"] = "reveal"
            if any(k != "bot" for k in kinds):
                # Only now, with every commitment fixed, may anyone reveal. Sent in every hand
                # that had a commit phase, even when every human missed it (fair-deal.md 3).
                sh["deadline"] = self.now + st.options.clocks.shuffle
                self.emit(
                    ALL,
                    "commitments",
                    game=st.game_id,
                    hand=sh["hand"],
                    commitments=[
                        c.hex() if c is not None and kinds[j] != "bot" else None
                        for j, c in enumerate(sh["commitments"])
                    ],
                    deadline=sh["deadline"],
                )
        self._try_deal()

    def _shuffle_seats(self) -> list[SeatSecret]:
        sh = self.state.shuffle
        assert sh is not None
        seats = []
        for j, kind in enumerate(sh["kinds"]):
            commitment = sh["commitments"][j]
            if kind == "human":
                seats.append(SeatSecret("human", sh["secrets"][j], commitment))
            elif kind == "absent":
                seats.append(SeatSecret("absent", None, commitment))
            else:
                seats.append(SeatSecret("bot"))
        return seats

    def _try_deal(self) -> None:
        st = self.state
        sh = st.shuffle
        if sh is None or sh["dealt"] or sh["phase"] != "reveal":
            return
        if any(k == "human" and sh["secrets"][j] is None for j, k in enumerate(sh["kinds"])):
            return
        if st.next_hand_at is not None and self.now < st.next_hand_at:
            return
        st.next_hand_at = None
        self.own_shuffle()["dealt"] = True
        self._deal()

    def _deal(self) -> None:
        st = self.state
        game = self._game()
        sh = st.shuffle
        assert sh is not None
        ctx = hand_context(st.game_id, sh["hand"])
        secret = server_secret(st.seed, ctx)
        deck = derive_deck(ctx, secret, secrets_for_seats(ctx, secret, self._shuffle_seats()))
        hand = game.start_hand(deal_from_deck(deck))
        for i in range(4):
            seat = self.own_seat(i)
            seat.bank = st.options.clocks.bank
            seat.out_of_time_at = None
            seat.turn_since = None
            seat.bot_due = None
        self.emit(
            ALL,
            "hand_started",
            number=game.hand_number,
            pass_direction=DIRECTION_NAMES[hand.direction],
            scores=game.scores.copy(),
            absent=[j for j, k in enumerate(sh["kinds"]) if k == "absent"],
        )
        for s in range(4):
            self.emit(s, "dealt", cards=names_of(hand.hands[s]))
        self._update_turns()

    def _publish_audit(self) -> None:
        """After the hand, every secret is published so any player can re-derive the deal."""
        st = self.state
        game = self._game()
        hand = game.hand
        sh = st.shuffle
        if hand is None or sh is None or not sh["dealt"]:
            return
        tricks: list[tuple[int, list[int]]] = [(t[0], list(t[1:])) for t in hand.tricks]
        if hand.trick:
            tricks.append((hand.leader, list(hand.trick)))
        audit = build_audit(
            st.game_id,
            sh["hand"],
            server_secret(st.seed, hand_context(st.game_id, sh["hand"])),
            self._shuffle_seats(),
            None if hand.direction == 0 else list(hand.passes),
            tricks,
            deal=list(hand.dealt),
            pass_direction=DIRECTION_NAMES[hand.direction],
        )
        st.shuffle = None
        self.emit(ALL, "hand_audit", hand=audit["hand"], audit=audit)
