"""The commit-reveal shuffle inside the room state machine, with injected time."""

from __future__ import annotations

import pytest

from protocol.errors import HeartsError
from protocol.shuffle import deal_context, seat_commitment
from protocol.verify import verify_audit
from server.core.room.clocks import next_deadline
from server.core.room.commands import (
    CommitSecret,
    FillBots,
    Join,
    Leave,
    RevealSecret,
    Start,
    Tick,
)
from server.core.room.state import Clocks
from server.core.rules import Phase
from tests.support.room_driver import Driver

CLOCKS = Clocks(bot_think=0.0, between_hands=0.0, shuffle=5.0)


def two_humans() -> Driver:
    d = Driver(clocks=CLOCKS)
    d.do(Join("p1", "Bea"))
    d.do(FillBots("p0"))
    d.do(Start("p0"))
    return d


def secret_of(seat: int) -> bytes:
    return bytes([0xA0 + seat]) * 32


def test_the_deal_waits_for_every_human_commitment_then_every_reveal() -> None:
    d = two_humans()
    sh = d.state.shuffle
    assert sh["kinds"] == ["human", "human", "bot", "bot"] and sh["phase"] == "commit"
    assert d.state.game.hand is None
    ctx = deal_context(d.state.game_id, 1)
    d.do(CommitSecret("p0", seat_commitment(ctx, 0, secret_of(0))))
    with pytest.raises(HeartsError) as e:
        d.do(RevealSecret("p0", secret_of(0)))  # nobody reveals before all have committed
    assert e.value.code == "wrong_phase"
    d.do(CommitSecret("p1", seat_commitment(ctx, 1, secret_of(1))))
    assert d.state.shuffle["phase"] == "reveal"
    listed = [e for e in d.events if e.type == "commitments"][-1]
    assert listed.data["commitments"][2:] == [None, None]
    with pytest.raises(HeartsError) as e:
        d.do(RevealSecret("p1", secret_of(0)))
    assert e.value.code == "bad_reveal"
    d.do(RevealSecret("p0", secret_of(0)))
    assert d.state.game.hand is None
    d.do(RevealSecret("p1", secret_of(1)))
    assert d.phase is Phase.PASSING


def test_no_secret_is_in_any_event_before_the_hand_audit() -> None:
    d = two_humans()
    d.settle_shuffle()
    # Play the hand out: humans play their lowest card, bots act.
    while d.state.game.hand_number == 1 and d.state.status == "playing":
        d.run_deadlines()
        for p in ("p0", "p1"):
            d.human_play_lowest(p)
    audit_at = next(k for k, e in enumerate(d.events) if e.type == "hand_audit")
    audit = d.events[audit_at].data["audit"]
    secrets = {audit["server_secret"]} | {s["secret"] for s in audit["seats"]}
    for event in d.events[:audit_at]:
        text = repr(event.data)
        assert not any(secret in text for secret in secrets), event
    assert any(e.type == "hand_over" for e in d.events[:audit_at])
    own = {"seat": 0, "secret": (bytes([1]) * 32).hex()}  # what the driver used for seat 0
    assert verify_audit(audit, own) == []
    assert [s["kind"] for s in audit["seats"]] == ["human", "human", "bot", "bot"]
    assert [e.data["audit"] for e in d.events if e.type == "hand_audit"] == [audit]
    assert d.state.shuffle is None or d.state.shuffle["hand"] == 2  # the secrets left the state


def test_a_seat_that_never_reveals_gets_the_stand_in_and_the_hand_goes_on() -> None:
    d = two_humans()
    ctx = deal_context(d.state.game_id, 1)
    d.do(CommitSecret("p0", seat_commitment(ctx, 0, secret_of(0))))
    d.do(CommitSecret("p1", seat_commitment(ctx, 1, secret_of(1))))
    d.do(RevealSecret("p0", secret_of(0)))
    deadline = next_deadline(d.state)
    assert deadline == d.now + 5.0
    d.now = deadline
    d.do(Tick())
    assert d.phase is Phase.PASSING
    assert d.state.shuffle["kinds"][1] == "absent"
    started = [e for e in d.events if e.type == "hand_started"][-1]
    assert started.data["absent"] == [1]


def test_a_seat_that_never_commits_is_absent_after_the_deadline() -> None:
    d = two_humans()
    d.now += 5.0
    d.do(Tick())
    assert d.phase is Phase.PASSING
    assert d.state.shuffle["kinds"][:2] == ["absent", "absent"]


def test_a_player_who_leaves_during_the_shuffle_does_not_block_it() -> None:
    d = two_humans()
    ctx = deal_context(d.state.game_id, 1)
    d.do(CommitSecret("p0", seat_commitment(ctx, 0, secret_of(0))))
    d.do(Leave("p1"))  # never committed: its seat's secret comes from the server, as a bot's
    assert d.state.shuffle["kinds"][1] == "bot"
    d.do(RevealSecret("p0", secret_of(0)))
    assert d.phase is Phase.PASSING


def test_a_seat_that_keeps_missing_the_shuffle_is_treated_as_idle() -> None:
    from server.core.room.commands import Boot, Connect

    d = two_humans()
    d.do(Connect("p0", "c0"))
    d.do(Connect("p1", "c1"))

    def shuffle_without_p1(hand: int) -> None:
        ctx = deal_context(d.state.game_id, hand)
        d.do(CommitSecret("p0", seat_commitment(ctx, 0, secret_of(0))))
        d.now += 5.0
        d.do(Tick())  # p1 never commits: absent
        d.do(RevealSecret("p0", secret_of(0)))

    shuffle_without_p1(1)
    assert d.state.seats[1].shuffle_misses == 1
    assert d.state.seats[1].out_of_time_at is None  # once is bad luck, not idleness
    while d.phase in (Phase.PASSING, Phase.PLAYING):
        d.bot_moves()
        for p in ("p0", "p1"):
            d.human_play_lowest(p)  # p1 plays its cards, it only skips the shuffle
    with pytest.raises(HeartsError):
        d.do(Boot("p0", 1))
    ctx = deal_context(d.state.game_id, 2)
    d.do(CommitSecret("p0", seat_commitment(ctx, 0, secret_of(0))))
    d.now += 5.0
    d.do(Tick())
    assert d.state.seats[1].shuffle_misses == 2
    assert any(e.type == "out_of_time" and e.data.get("reason") == "shuffle" for e in d.events)
    d.do(Boot("p0", 1))
    assert d.state.seats[1].is_bot
