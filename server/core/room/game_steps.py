"""A game's start and end in a room step: the first hand opened, a hand's result announced,
the game over by the rules or ended on a stalled correspondence seat, and ratings posted."""

from __future__ import annotations

from server.core.rules import Game, Phase

from .clocks import deciding_seats
from .commands import ALL, EndGame, RatingsPosted, RoomError
from .game_view import DIRECTION_NAMES, trick_record
from .shuffle_steps import prepare_hand, publish_audit
from .step import Step


def start_game(run: Step) -> None:
    st = run.state
    st.game_number += 1
    st.game = Game(st.options.rules)
    st.status = "playing"
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
            st.status = "finished"
            if st.options.rated and st.options.rules.standard and not st.rated_posted:
                st.rating_due = run.now  # posted by the shell, exactly once, any node
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
    st.status = "finished"
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


def ratings_posted(run: Step, c: RatingsPosted) -> None:
    st = run.state
    if st.rated_posted or st.rating_due is None:
        return
    if c.changes is None:
        st.rating_due = c.retry_at
        return
    st.rated_posted = True
    st.rating_due = None
    run.emit(ALL, "ratings", game=st.game_id, seats=list(c.changes))
