"""Fan-out's shared frames (``server.fanout.commit_frames``): every socket gets exactly what a
per-event delivery would give it (its audience's events, in order, none twice, a seat handed
to a bot watching from that event on), whatever order the sockets take their lists in."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from protocol.codec import JSON, MSGPACK, Codec
from server.core.room.commands import ALL, Event
from server.core.room.views import event_message, visible
from server.fanout.commit_frames import CommitFrames
from server.net.connection import Connection

ROOM = "r1"

audiences = st.sampled_from([ALL, ALL, 0, 1, 2, 3])
events_st = st.lists(
    st.one_of(
        st.builds(lambda a, n: Event(a, "note", {"n": n}), audiences, st.integers(0, 9)),
        st.builds(lambda s: Event(ALL, "replaced", {"seat": s}), st.integers(0, 3)),
    ),
    min_size=1,
    max_size=6,
)
sockets_st = st.lists(
    st.tuples(
        st.sampled_from([MSGPACK, JSON]),
        st.one_of(st.none(), st.integers(0, 3)),
        st.integers(0, 3),  # how many of the commit's events its view already holds
    ),
    min_size=1,
    max_size=6,
)


def reference(codec: Codec, seat: int | None, last_seq: int, first: int, events: list[Event]):
    """The frames one socket gets, event by event, and its seat after them."""
    frames: list[bytes | str] = []
    for k, event in enumerate(events):
        seq = first + k
        if seq <= last_seq:
            continue
        if visible(event.audience, seat):
            frames.append(codec.encode(event_message(ROOM, seq, event)))
        if event.type == "replaced" and event.data["seat"] == seat:
            seat = None
    return frames, seat


def connection(codec: Codec, seat: int | None, last_seq: int) -> Connection:
    conn = Connection(SimpleNamespace(id="n"), codec)  # type: ignore[arg-type]
    conn.room, conn.seat, conn.last_seq = ROOM, seat, last_seq
    return conn


@given(events_st, sockets_st, st.integers(1, 50))
def test_every_socket_gets_what_per_event_delivery_gives(
    events: list[Event], sockets: list[tuple[str, int | None, int]], first: int
) -> None:
    out = CommitFrames(ROOM, first, events)
    for name, seat, held in sockets:
        codec = Codec(name)
        last_seq = first - 1 + min(held, len(events))
        conn = connection(codec, seat, last_seq)
        conn.deliver(out)
        frames, seat_after = reference(codec, seat, last_seq, first, events)
        assert conn.pending == frames
        assert conn.seat == seat_after
        assert conn.last_seq == max(last_seq, first + len(events) - 1)


def test_a_seat_and_subprotocol_share_one_encoding() -> None:
    events = [Event(ALL, "card_played", {"seat": 0}), Event(2, "your_turn", {"legal": ["2C"]})]
    out = CommitFrames(ROOM, 5, events)
    a, b, watcher = (connection(Codec(MSGPACK), s, 4) for s in (2, 2, None))
    for conn in (a, b, watcher):
        conn.deliver(out)
    assert a.pending == b.pending and len(a.pending) == 2
    assert all(x is y for x, y in zip(a.pending, b.pending, strict=True))
    assert watcher.pending == a.pending[:1] and watcher.pending[0] is a.pending[0]


def test_another_rooms_commit_and_a_held_socket() -> None:
    out = CommitFrames("other", 1, [Event(ALL, "note", {})])
    conn = connection(Codec(JSON), 0, 0)
    conn.deliver(out)
    assert conn.pending == [] and conn.last_seq == 0
    conn.hold()
    conn.deliver(CommitFrames(ROOM, 1, [Event(ALL, "note", {"n": 1})]))
    assert conn.pending == []
    conn.release()
    message: Any = Codec(JSON).decode(conn.pending[0])
    assert message["seq"] == 1 and message["n"] == 1
