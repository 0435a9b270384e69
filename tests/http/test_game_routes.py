"""The finished games' API (server/http/game_routes.py) on a real store of record, SQLite and
PostgreSQL in turn (``record_store``), through the ASGI app: games played by the room machine
(load_tests/record_games.py) and archived as a node archives them."""

from __future__ import annotations

import copy
import functools
import random
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette

from load_tests.record_games import played_game
from protocol.verify import verify_game
from server.core.room.commands import Join, RoomError, Start
from server.core.room.machine import new_room, step
from server.core.room.state import RoomState, TableOptions
from server.core.rules import Rules
from server.http.game_routes import game_routes
from server.record.games import forgetting
from server.record.records import GameRecord, HandRecord, RatingChange, SeatRecord
from server.record.store import ArchiveResult, RecordStore
from tests.http.replay import replay_document

PLAYERS = ["p-ann", "p-bob", "p-cy", "p-dee"]


@functools.cache
def played(n: int) -> tuple[GameRecord, tuple[RatingChange, ...]]:
    """Real game ``n`` (a game to 100 by four fresh players), played once per test session."""
    rng = random.Random(5300 + n)
    players = [f"{p}-{n}" for p in PLAYERS]
    record, changes = played_game(rng, f"Room{n:04d}xyz", players, 1.7e9 + 10_000 * n)
    return record, tuple(changes)


def variant(n: int, game_id: str, seats: list[str | None], finished_at: float) -> GameRecord:
    """Game ``n`` again under another id, time and seats (a None seat is a bot): its hands are
    game ``n``'s, whose audits name that game (fine for lists, not for verifying)."""
    record = played(n)[0]
    return replace(
        record,
        game_id=game_id,
        room_id=game_id.rpartition(".")[0],
        started_at=finished_at - 1800.0,
        finished_at=finished_at,
        seats=tuple(
            replace(s, participant=p, name=f"Name {p}", bot=None)
            if p is not None
            else replace(s, participant=None, name=f"Bot {s.seat}", bot="strong")
            for s, p in zip(record.seats, seats, strict=True)
        ),
    )


class CountingRecords(RecordStore):
    """The test's store, counting reads of a game (none may happen for a malformed id)."""

    games_read = 0

    async def game(self, game_id: str) -> GameRecord | None:
        self.games_read += 1
        return await super().game(game_id)


@dataclass
class Rooms:
    """Rooms in play for the routes to find, and every code they asked for."""

    states: dict[str, RoomState] = field(default_factory=dict)
    asked: list[str] = field(default_factory=list)
    fail: bool = False
    meanwhile: Callable[[], Awaitable[object]] | None = None  # runs as a room is read

    async def load(self, room_id: str) -> RoomState | None:
        self.asked.append(room_id)
        if self.fail:
            raise RoomError("store_unavailable")
        if self.meanwhile is not None:
            await self.meanwhile()
        return self.states.get(room_id)


@dataclass
class Api:
    http: httpx.AsyncClient
    records: CountingRecords
    rooms: Rooms
    page: Path


def make_client(records: RecordStore, rooms: Rooms, page: Path) -> httpx.AsyncClient:
    app = Starlette(routes=game_routes(records, rooms.load, page))
    transport = httpx.ASGITransport(app=app)
    return httpx.AsyncClient(transport=transport, base_url="http://hearts.test")


@pytest.fixture
async def api(record_store: RecordStore, tmp_path: Path) -> AsyncIterator[Api]:
    records = CountingRecords(record_store.engine)  # the same database; closed by the fixture
    rooms = Rooms()
    page = tmp_path / "game.html"
    page.write_text("<!doctype html><title>game</title>")
    async with make_client(records, rooms, page) as http:
        yield Api(http, records, rooms, page)


def is_envelope(answer: httpx.Response, status: int, code: str) -> bool:
    assert answer.status_code == status, (answer.status_code, answer.text)
    assert answer.headers["content-type"] == "application/json"
    assert "Traceback" not in answer.text
    body = answer.json()
    assert set(body) == {"type", "re", "code", "message"}, body
    return body["type"] == "error" and body["re"] is None and body["code"] == code


def record_from(document: dict[str, Any]) -> GameRecord:
    """The document read back as the store keeps the game (the hands' audits re-wrapped)."""
    return GameRecord(
        game_id=document["game"],
        room_id=document["room"],
        kind=document["kind"],
        options=document["options"],
        started_at=document["started_at"],
        finished_at=document["finished_at"],
        scores=tuple(document["scores"]),
        winners=tuple(document["winners"]),
        rated=document["rated"],
        departures=tuple(document["departures"]),
        seats=tuple(
            SeatRecord(s["seat"], s["player"], s["name"], s["bot"], s["rating_before"],
                       s["rating_after"])
            for s in document["seats"]
        ),
        hands=tuple(
            HandRecord(
                h["number"],
                h["over"],
                None if h["audit"] is None else {"hand": h["number"], "audit": h["audit"]},
            )
            for h in document["hands"]
        ),
    )


# The game document ------------------------------------------------------------------------


async def test_a_finished_game_is_its_document_and_round_trips(api: Api) -> None:
    record, changes = played(1)
    assert await api.records.archive_game(record, changes) is ArchiveResult.ARCHIVED
    answer = await api.http.get(f"/api/games/{record.game_id}")
    assert answer.status_code == 200
    assert answer.headers["cache-control"] == "public, max-age=600"
    assert "content-disposition" not in answer.headers
    document = answer.json()
    assert document["format"] == "hearts-game/1"
    assert list(document) == [
        "format", "game", "room", "kind", "options", "started_at", "finished_at", "rated",
        "scores", "winners", "departures", "seats", "hands",
    ]  # fmt: skip
    assert record_from(document) == record  # every field, every hand, exactly
    assert [s["player"] for s in document["seats"]] == [s.participant for s in record.seats]
    assert all(s["rating_before"] == 1500 for s in document["seats"])
    assert api.rooms.asked == []  # a finished game never asks the room store
    check = verify_game(document)
    assert check.verified, (check.problems, [h for h in check.hands if h.problems])
    assert len(check.hands) == len(record.hands) >= 4
    replay_document(document)  # every position agrees with the rules engine


async def test_the_download_is_an_attachment_with_the_same_bytes(api: Api) -> None:
    record, changes = played(2)
    await api.records.archive_game(record, changes)
    shown = await api.http.get(f"/api/games/{record.game_id}")
    download = await api.http.get(f"/api/games/{record.game_id}", params={"download": "1"})
    assert download.status_code == 200
    assert download.headers["content-disposition"] == (
        f'attachment; filename="hearts-{record.game_id}.json"'
    )
    assert download.content == shown.content


async def test_a_bot_and_a_deleted_player_as_the_document_shows_them(api: Api) -> None:
    record = variant(3, "RoomBots01.1", ["p-x", None, "p-gone", "p-y"], 1.8e9)
    await api.records.archive_game(forgetting(record, {"p-gone"}))
    seats = (await api.http.get("/api/games/RoomBots01.1")).json()["seats"]
    assert seats[1] == {
        "seat": 1, "player": None, "name": "Bot 1", "bot": "strong",
        "rating_before": record.seats[1].rating_before,
        "rating_after": record.seats[1].rating_after,
    }  # fmt: skip
    assert seats[2]["player"] is None and seats[2]["name"] is None and seats[2]["bot"] is None
    assert seats[0]["player"] == "p-x" and seats[0]["name"] == "Name p-x"


async def test_a_tampered_document_is_refused_by_the_verifier(api: Api) -> None:
    record, changes = played(1)
    await api.records.archive_game(record, changes)
    document = (await api.http.get(f"/api/games/{record.game_id}")).json()
    assert verify_game(document).verified
    swapped = copy.deepcopy(document)  # one card of the second hand's deal given to another seat
    deal = swapped["hands"][1]["audit"]["deal"]
    deal[0][0], deal[1][0] = deal[1][0], deal[0][0]
    assert [h.number for h in verify_game(swapped).hands if h.problems] == [2]
    points = copy.deepcopy(document)  # the points of hand 1 moved from one seat to another
    points["hands"][0]["over"]["points"][0] += 1
    points["hands"][0]["over"]["points"][1] -= 1
    assert not verify_game(points).verified
    final = copy.deepcopy(document)
    final["scores"][3] -= 5
    check = verify_game(final)
    assert not check.verified and all(not h.problems for h in check.hands) and check.problems


# Ids that name no finished game --------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "/api/games/",
        "/api/games/x",
        "/api/games/Room0001xyz",  # no game number
        "/api/games/Room0001xyz.0",
        "/api/games/Room0001xyz.01",
        "/api/games/Room0001xyz.1.2",
        "/api/games/abc.1",  # a room code is 4 to 40 characters
        "/api/games/" + "R" * 41 + ".1",
        "/api/games/Room0001xyz.1234567890",
        "/api/games/Room0001xyz.1/hands",
        "/api/games/..%2F..%2Fetc%2Fpasswd",
        "/api/games/Room%200001.1",
        "/api/games/R%C3%B6om0001.1",
        "/api/games/Room0001%00.1",
        "/api/games/%27%20OR%201%3D1--.1",
        "/api/games/" + "A" * 10_000,
    ],
)
async def test_a_malformed_id_is_not_found_before_any_store_is_asked(
    api: Api, path: str
) -> None:
    assert is_envelope(await api.http.get(path), 404, "game_not_found")
    assert api.records.games_read == 0 and api.rooms.asked == []


async def test_an_unknown_id_is_not_found(api: Api) -> None:
    answer = await api.http.get("/api/games/Nowhere0000.3")
    assert is_envelope(answer, 404, "game_not_found")
    assert answer.headers["cache-control"] == "no-store"
    assert api.rooms.asked == ["Nowhere0000"]


# Games in play -------------------------------------------------------------------------------


def room_in_play(room_id: str) -> RoomState:
    """A room whose first game has just started (four players, dealt)."""
    options = TableOptions(rules=Rules(100), hints=False)
    state, _ = new_room(
        room_id, kind="friends", host="h0", host_name="Host", options=options,
        seed=bytes(32), now=1000.0,
    )  # fmt: skip
    for k in range(1, 4):
        state, _ = step(state, Join(f"h{k}", f"Guest {k}"), 1000.0)
    state, _ = step(state, Start("h0"), 1000.0)
    assert state.status == "playing" and state.game_id == f"{room_id}.1"
    return state


async def test_a_game_in_play_is_only_said_to_be_in_play(api: Api) -> None:
    state = room_in_play("PlayRoom0001")
    api.rooms.states[state.id] = state
    answer = await api.http.get("/api/games/PlayRoom0001.1")
    assert is_envelope(answer, 409, "game_in_play")
    assert answer.headers["cache-control"] == "no-store"
    assert "h0" not in answer.text and "Host" not in answer.text
    # The room's games not in play are nobody's business: not found.
    assert is_envelope(await api.http.get("/api/games/PlayRoom0001.2"), 404, "game_not_found")


async def test_a_finished_game_not_yet_archived_is_in_play(api: Api) -> None:
    state = room_in_play("PlayRoom0002")
    state.game_number = 2  # a rematch is being played; game 1 still waits in the outbox
    state.unarchived = ["PlayRoom0002.1"]
    api.rooms.states[state.id] = state
    assert is_envelope(await api.http.get("/api/games/PlayRoom0002.1"), 409, "game_in_play")
    assert is_envelope(await api.http.get("/api/games/PlayRoom0002.2"), 409, "game_in_play")
    state.status, state.unarchived = "finished", []
    assert is_envelope(await api.http.get("/api/games/PlayRoom0002.2"), 404, "game_not_found")


async def test_a_game_archived_while_its_room_is_read_is_served(api: Api) -> None:
    record = variant(4, "Racing0001.1", ["r-a", "r-b", "r-c", "r-d"], 1.75e9)

    # The game is archived as its room is read: the outbox emptied, the room says nothing.
    api.rooms.meanwhile = functools.partial(api.records.archive_game, record)
    answer = await api.http.get("/api/games/Racing0001.1")
    assert answer.status_code == 200 and answer.json()["game"] == "Racing0001.1"


async def test_a_room_store_that_fails_is_unavailable_not_a_crash(api: Api) -> None:
    api.rooms.fail = True
    answer = await api.http.get("/api/games/Nowhere0000.1")
    assert is_envelope(answer, 503, "store_unavailable")


# The page --------------------------------------------------------------------------------------


async def test_the_game_page_is_served_for_any_id(api: Api) -> None:
    answer = await api.http.get("/g/Room0001xyz.1")
    assert answer.status_code == 200 and answer.text == api.page.read_text()
    api.page.unlink()
    assert (await api.http.get("/g/whatever")).status_code == 200
