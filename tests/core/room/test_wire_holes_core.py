"""The holes an independent client found, at the core: presence by sockets, the commitments
event, option messages in words, unknown commit outcomes, and quiet outage logs."""

from __future__ import annotations

import asyncio
import logging

import pytest

from protocol.codec import JSON, MSGPACK, Codec
from protocol.errors import HeartsError, ProtocolError
from protocol.messages import command_id, parse_command
from server.core.room.commands import (
    Boot,
    Connect,
    Disconnect,
    DropNode,
    FillBots,
    Join,
    Start,
    Tick,
)
from server.core.room.state import Clocks, OptionError, parse_options
from server.ops.outage_log import OutageLog
from server.play.bot_pool import BotPool
from server.play.rooms import RoomService
from server.play.scheduler import DeadlineAlarm, Scheduler
from server.store import MemoryRoomStore, StoreUnavailable
from tests.support.room_driver import Driver

CLOCKS = Clocks(bot_think=0.0, between_hands=0.0, shuffle=5.0, reconnect=3.0)


def table_of_two() -> Driver:
    d = Driver(clocks=CLOCKS)
    d.do(Join("p1", "Bea", "n1/a"))
    d.do(Connect("p0", "n1/h"))
    d.do(FillBots("p0"))
    d.do(Start("p0"))
    return d


def connection_events(d: Driver, seat: int) -> list[bool]:
    return [
        e.data["connected"] for e in d.events if e.type == "connection" and e.data["seat"] == seat
    ]


def test_a_second_tab_closing_leaves_the_seat_connected_and_unbootable() -> None:
    d = table_of_two()
    d.do(Connect("p1", "n2/b"))  # a second tab, on another node
    d.do(Disconnect("p1", "n2/b"))
    assert d.state.seats[1].connected
    assert False not in connection_events(d, 1)
    d.now += CLOCKS.reconnect + 1
    d.do(Tick())
    with pytest.raises(HeartsError) as e:
        d.do(Boot("p0", 1))
    assert e.value.code == "not_bootable"
    d.do(Disconnect("p1", "n1/a"))  # the last socket closes: now the seat is away
    assert connection_events(d, 1)[-1] is False
    d.now += CLOCKS.reconnect + 1
    d.do(Boot("p0", 1))
    assert d.state.seats[1].is_bot


def test_a_dead_node_takes_only_its_own_sockets() -> None:
    d = table_of_two()
    d.do(Connect("p1", "n2/b"))
    d.do(DropNode("n1"))  # p1 keeps the tab on n2; p0 was only on n1
    assert d.state.seats[1].connected and d.state.seats[1].conns == ["n2/b"]
    assert not d.state.seats[0].connected and d.state.seats[0].away_since == d.now
    d.do(DropNode("n"))  # a prefix of another node's id is not that node
    assert d.state.seats[1].connected


def test_commitments_are_announced_even_when_no_human_committed() -> None:
    d = table_of_two()
    assert [e for e in d.events if e.type == "commitments"] == []
    d.now += CLOCKS.shuffle + 0.1
    d.do(Tick())
    listed = [e for e in d.events if e.type == "commitments"]
    assert len(listed) == 1
    assert listed[0].data["commitments"] == [None, None, None, None]
    assert d.state.game.hand is not None  # dealt from stand-ins, as the audit will say


@pytest.mark.parametrize(
    ("raw", "words"),
    [
        ({"moon": "x"}, ["moon", "others_26", "shooter_minus_26", "shooter_chooses"]),
        ({"target": 75}, ["target", "50", "100"]),
        ({"target": True}, ["target"]),
        ({"hints": 1}, ["hints", "true", "false"]),
        ({"revokes": None}, ["revokes", "blocked", "allowed"]),
        ({"tie": "coin"}, ["tie", "share", "play_off"]),
        ({"pace": 3}, ["pace", "live", "correspondence"]),
        ({"colour": "red"}, ["colour", "target", "moon"]),
    ],
)
def test_a_bad_option_is_named_with_its_allowed_values_in_words(
    raw: dict[str, object], words: list[str]
) -> None:
    with pytest.raises(OptionError) as e:
        parse_options(raw, clocks=CLOCKS, kind="friends")
    message = str(e.value)
    for word in words:
        assert word in message
    assert "is not a valid" not in message and "'" not in message  # no Python repr text


def test_ids_the_docs_allow_are_accepted_and_echoed() -> None:
    for cid in ("", "x" * 64, 0, -(2**63), 2**64 - 1, 2**53 + 1):
        assert command_id({"type": "view", "id": cid}) == cid
        assert parse_command({"type": "view", "id": cid}).id == cid
    for bad in ("x" * 65, 2**64, True, 1.5, None, [1]):
        assert command_id({"type": "view", "id": bad}) is None


@pytest.mark.parametrize("name", [JSON, MSGPACK])
def test_deep_nesting_is_a_malformed_frame(name: str) -> None:
    codec = Codec(name)
    frame: bytes | str = "[" * 1000 + "]" * 1000 if name == JSON else b"\x91" * 1000 + b"\xc0"
    with pytest.raises(ProtocolError) as e:
        codec.decode(frame)
    assert e.value.code == "malformed_frame"
    big = '{"type":"ping","id":' + "9" * 5000 + "}"
    with pytest.raises(ProtocolError):
        Codec(JSON, max_frame=8192).decode(big)  # too many digits for Python's int parser


class FlakyStore(MemoryRoomStore):
    """Commits fail as if the connection dropped after the script ran (or before)."""

    def __init__(self) -> None:
        super().__init__()
        self.down = False

    async def commit(self, *args: object, **kwargs: object) -> bool:  # type: ignore[override]
        if self.down:
            raise StoreUnavailable("connection reset")
        return await super().commit(*args, **kwargs)  # type: ignore[arg-type]

    async def claim_due(self, now: float, limit: int, lease: float) -> list[str]:
        if self.down:
            raise StoreUnavailable("connection refused")
        return await super().claim_due(now, limit, lease)


async def test_a_commit_the_store_did_not_confirm_is_reported_as_unknown() -> None:
    store = FlakyStore()
    rooms = RoomService(store, BotPool(0))
    from server.core.room.state import TableOptions

    state = await rooms.create(kind="friends", host="p0", host_name="Ann", options=TableOptions())
    store.down = True
    with pytest.raises(HeartsError) as e:
        await rooms.apply(state.id, Join("p1", "Bea", "n/x"))
    assert e.value.code == "outcome_unknown"
    store.down = False
    await rooms.apply(state.id, Join("p1", "Bea", "n/x"))


async def test_an_outage_is_logged_once_when_it_starts_and_once_when_it_ends(
    caplog: pytest.LogCaptureFixture,
) -> None:
    store = FlakyStore()
    rooms = RoomService(store, BotPool(0))
    scheduler = Scheduler(rooms, DeadlineAlarm(rooms.clock, 0.01))
    caplog.set_level(logging.INFO)
    await scheduler.start()
    try:
        store.down = True
        await asyncio.sleep(0.5)  # about 50 failing passes
        store.down = False
        await asyncio.sleep(0.1)
    finally:
        await scheduler.stop()
    lines = [r for r in caplog.records if r.name == "server.play.scheduler"]
    assert len(lines) == 2, [r.getMessage() for r in lines]
    assert "failing" in lines[0].getMessage()
    assert "recovered after" in lines[1].getMessage()
    count = int(lines[1].getMessage().split("after ")[1].split()[0])
    assert count >= 10


def test_outage_log_counts_without_logging_each_failure(caplog: pytest.LogCaptureFixture) -> None:
    logger = logging.getLogger("test.outage")
    outage = OutageLog(logger, "thing")
    caplog.set_level(logging.INFO, logger="test.outage")
    outage.succeeded()
    for _ in range(95):
        try:
            raise StoreUnavailable("down")
        except StoreUnavailable:
            outage.failed()
    outage.succeeded()
    outage.succeeded()
    assert [r.getMessage().split(" ")[1] for r in caplog.records] == ["failing;", "recovered"]
    assert "95 failed" in caplog.records[1].getMessage()


def test_a_lone_surrogate_in_json_is_a_malformed_frame_and_a_pair_is_text() -> None:
    codec = Codec(JSON)
    with pytest.raises(ProtocolError) as e:
        codec.decode('{"type":"ping","id":"\\udc00x"}')
    assert e.value.code == "malformed_frame"
    assert codec.decode('{"type":"ping","id":"\\ud83d\\ude00"}')["id"] == "\U0001f600"
