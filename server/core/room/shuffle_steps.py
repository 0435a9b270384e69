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
from .step import Step

SHUFFLE_MISSES_IDLE = 2  # shuffles missed in a row before a seat counts as idle


def prepare_hand(run: Step, delay: float) -> None:
    """Open the next hand's shuffle: the server commits; human seats commit, then reveal."""
    st = run.state
    number = run.game().hand_number + 1
    ctx = hand_context(st.game_id, number)
    kinds = ["bot" if s is None or s.is_bot else "human" for s in st.seats]
    st.next_hand_at = run.now + delay if delay > 0 else None
    run.shuffle_owned = True
    st.shuffle = {
        "hand": number,
        "phase": "commit",
        "deadline": run.now + st.options.clocks.shuffle,
        "kinds": kinds,
        "commitments": [None, None, None, None],
        "secrets": [None, None, None, None],
        "dealt": False,
    }
    if "human" in kinds:
        run.emit(
            ALL,
            "shuffle_commit",
            game=st.game_id,
            hand=number,
            server_commitment=server_commitment(ctx, server_secret(st.seed, ctx)).hex(),
            deadline=st.shuffle["deadline"],
        )
    shuffle_progress(run)


def commit_secret(run: Step, c: CommitSecret) -> None:
    i = run.seat_index(c.player)
    sh = run.state.shuffle
    if sh is None or sh["dealt"] or sh["phase"] != "commit" or sh["kinds"][i] != "human":
        raise RoomError("wrong_phase", "No shuffle is waiting for your commitment.")
    if sh["commitments"][i] is not None:
        raise RoomError("wrong_phase", "You have already committed to this hand's shuffle.")
    run.own_shuffle()["commitments"][i] = c.commitment
    run.emit(ALL, "shuffle_committed", seat=i)
    shuffle_progress(run)


def reveal_secret(run: Step, c: RevealSecret) -> None:
    i = run.seat_index(c.player)
    sh = run.state.shuffle
    if sh is None or sh["dealt"] or sh["phase"] != "reveal" or sh["kinds"][i] != "human":
        raise RoomError("wrong_phase", "No shuffle is waiting for your secret.")
    if sh["secrets"][i] is not None:
        raise RoomError("wrong_phase", "You have already revealed your secret.")
    ctx = hand_context(run.state.game_id, sh["hand"])
    if seat_commitment(ctx, i, c.secret) != sh["commitments"][i]:
        raise RoomError("bad_reveal", "That secret does not match your commitment.")
    run.own_shuffle()["secrets"][i] = c.secret
    seat = run.state.seats[i]
    assert seat is not None
    if seat.shuffle_misses:
        run.own_seat(i).shuffle_misses = 0
    run.emit(ALL, "shuffle_revealed", seat=i)  # that it did, never what
    shuffle_progress(run)


def missed_shuffle(run: Step, i: int) -> None:
    """A seat that keeps missing the shuffle is idle: bootable, and booted if nobody does."""
    if (seat := run.state.seats[i]) is None or seat.is_bot:
        return
    seat = run.own_seat(i)
    seat.shuffle_misses += 1
    if seat.shuffle_misses >= SHUFFLE_MISSES_IDLE and seat.out_of_time_at is None:
        seat.out_of_time_at = run.now
        run.emit(
            ALL,
            "out_of_time",
            seat=i,
            auto_boot_at=run.now + run.state.options.clocks.boot_window,
            reason="shuffle",
        )


def shuffle_progress(run: Step) -> None:
    """Move the shuffle on when every human seat has done its part (or is an absent seat)."""
    st = run.state
    sh = st.shuffle
    if sh is None or sh["dealt"]:
        return
    kinds = sh["kinds"]
    if sh["phase"] == "commit":
        if any(k == "human" and sh["commitments"][j] is None for j, k in enumerate(kinds)):
            return
        sh = run.own_shuffle()
        sh["phase"] = "reveal"
        if any(k != "bot" for k in kinds):
            # Only now, with every commitment fixed, may anyone reveal. Sent in every hand
            # that had a commit phase, even when every human missed it (fair-deal.md 3).
            sh["deadline"] = run.now + st.options.clocks.shuffle
            run.emit(
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
    try_deal(run)


def _shuffle_seats(run: Step) -> list[SeatSecret]:
    sh = run.state.shuffle
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


def try_deal(run: Step) -> None:
    st = run.state
    sh = st.shuffle
    if sh is None or sh["dealt"] or sh["phase"] != "reveal":
        return
    if any(k == "human" and sh["secrets"][j] is None for j, k in enumerate(sh["kinds"])):
        return
    if st.next_hand_at is not None and run.now < st.next_hand_at:
        return
    st.next_hand_at = None
    run.own_shuffle()["dealt"] = True
    _deal(run)


def _deal(run: Step) -> None:
    st = run.state
    game = run.game()
    sh = st.shuffle
    assert sh is not None
    ctx = hand_context(st.game_id, sh["hand"])
    secret = server_secret(st.seed, ctx)
    deck = derive_deck(ctx, secret, secrets_for_seats(ctx, secret, _shuffle_seats(run)))
    hand = game.start_hand(deal_from_deck(deck))
    for i in range(4):
        seat = run.own_seat(i)
        seat.bank = st.options.clocks.bank
        seat.out_of_time_at = None
        seat.turn_since = None
        seat.bot_due = None
    run.emit(
        ALL,
        "hand_started",
        number=game.hand_number,
        pass_direction=DIRECTION_NAMES[hand.direction],
        scores=game.scores.copy(),
        absent=[j for j, k in enumerate(sh["kinds"]) if k == "absent"],
    )
    for s in range(4):
        run.emit(s, "dealt", cards=names_of(hand.hands[s]))
    run.update_turns()


def publish_audit(run: Step) -> None:
    """After the hand, every secret is published so any player can re-derive the deal."""
    st = run.state
    game = run.game()
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
        _shuffle_seats(run),
        None if hand.direction == 0 else list(hand.passes),
        tricks,
        deal=list(hand.dealt),
        pass_direction=DIRECTION_NAMES[hand.direction],
    )
    st.shuffle = None
    run.emit(ALL, "hand_audit", hand=audit["hand"], audit=audit)
