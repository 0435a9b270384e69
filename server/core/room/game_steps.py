"""A game's start and end in a room step: the first hand opened, a hand's result announced,
the game over by the rules or ended on a stalled correspondence seat, and ratings posted."""

from __future__ import annotations

from server.core.rules import Game, Phase

from .clocks import deciding_seats
from .commands import ALL, EndGame, GamesArchived, RoomError
from .game_view import DIRECTION_NAMES, trick_record
from .notices import notice
from .shuffle_steps import prepare_hand, publish_audit
from .step import Step


def start_game(run: Step) -> None:
    st = run.state
    st.game_number += 1
    st.game = Game(st.options.rules)
    st.status = "playing"
    st.game_started, st.game_finished = run.now, 0.0
    run.emit(
        ALL, "game_started", game=st.game_id, number=st.game_number, options=st.options.public()
    )
    prepare_hand(run, 0.0)


def after_move(run: Step) -> None:
    st = run.state
    game = run.game()
    if game.phase is Phase.DEAL or game.phase is Phase.OVER:
        hand = game.hand
        assert hand is not None
        points = game.history[-1]
        entry = {
            "hand": game.hand_number,
            "points": points,
            "scores": game.scores.copy(),
            "shooter": hand.shooter(),
            "pass_direction": DIRECTION_NAMES[hand.direction],
            "tricks": [trick_record(t) for t in hand.tricks],
            "revoke_call": list(hand.revoke_call) if hand.revoke_call else None,
        }
        run.emit(ALL, "hand_over", **entry)
        publish_audit(run)
        for i in range(4):
            run.off_turn(i)
        if game.phase is Phase.OVER:
            finish_game(run)
            run.emit(
                ALL,
                "game_over",
                scores=game.scores.copy(),
                winners=game.winners.copy(),
                departures=st.departures.copy(),
            )
            return
        prepare_hand(run, st.options.clocks.between_hands)
        return
    run.update_turns()


def end_game(run: Step, c: EndGame) -> None:
    st = run.state
    i = run.seat_index(c.player)
    wait = st.options.clocks.correspondence_wait
    stalled = [
        j
        for j in deciding_seats(st)
        if (seat := st.seats[j]) is not None
        and not seat.is_bot
        and seat.turn_since is not None
        and run.now - seat.turn_since > wait
    ]
    if st.options.pace != "correspondence" or not stalled or i in stalled:
        raise RoomError(
            "cannot_end_game",
            f"A correspondence game can be ended only after waiting {wait / 3600:g} hours "
            "on another seat.",
        )
    game = run.game()
    winners = game.end_without(stalled)
    finish_game(run)
    for j in range(4):
        run.off_turn(j)
    run.emit(ALL, "game_ended", by=i, waited_on=stalled)
    run.emit(
        ALL,
        "game_over",
        scores=game.scores.copy(),
        winners=winners,
        departures=st.departures.copy(),
    )


def finish_game(run: Step) -> None:
    """The game is over: the same commit puts it in the archive's outbox (``unarchived``),
    and the shell (any node) hands it to the store of record from ``archive_due`` on."""
    st = run.state
    st.status = "finished"
    st.game_finished = run.now
    st.unarchived = [*st.unarchived, st.game_id]  # replaced, never changed: machine.clone
    st.archive_due = run.now
    if st.options.pace == "correspondence":
        for i in range(4):
            notice(run, i, "ended")  # each away seat (notices.py)


def games_archived(run: Step, c: GamesArchived) -> None:
    """The store of record took these games (each rated one's per-seat rating changes are
    shown), or, with ``games`` None, could not: ask again at ``retry_at``."""
    st = run.state
    if c.games is None:
        if st.unarchived:
            st.archive_due = c.retry_at
        return
    for game in c.games:
        if game.game_id not in st.unarchived:
            continue  # taken already (a retried tick): shown once
        st.unarchived = [g for g in st.unarchived if g != game.game_id]
        if game.seats is not None:
            run.emit(ALL, "ratings", game=game.game_id, seats=list(game.seats))
    st.archive_due = c.retry_at if st.unarchived else None
