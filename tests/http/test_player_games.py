"""A player's whole history over HTTP: every finished game, newest first, paged by signed key
(``GET /api/players/ID/games``), and the rating history for the plot
(``GET /api/players/ID/ratings``), on SQLite and PostgreSQL in turn."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from httpx import AsyncClient

from server.accounts.keys import FixedKey
from server.http.game_cursors import KEY_NAME, GameCursors
from server.record.games import GameCursor
from server.record.records import GameRecord, RatingChange
from server.record.store import ArchiveResult, RecordStore
from tests.http.test_game_routes import Rooms, is_envelope, make_client, variant

ME, YOU = "p-me", "p-you"
MINE = 23


def my_games() -> list[GameRecord]:
    """23 games of ME in every seat, three finishing at each instant (ties are ordered by id),
    a bot in some; ``YOU`` sits in every fifth."""
    kept = []
    for k in range(MINE):
        seats: list[str | None] = [f"o-{k}-{j}" for j in range(4)]
        seats[k % 4] = ME
        if k % 5 == 0:
            seats[(k + 1) % 4] = YOU
        if k % 3 == 0:
            seats[(k + 2) % 4] = None
        kept.append(variant(1 + k % 3, f"Mine{k:04d}ab.{1 + k % 2}", seats, 1.8e9 + k // 3))
    return kept


@pytest.fixture
async def http(record_store: RecordStore, tmp_path: Path) -> AsyncIterator[AsyncClient]:
    for record in my_games():
        assert await record_store.archive_game(record) is ArchiveResult.ARCHIVED
    async with make_client(record_store, Rooms(), tmp_path / "game.html") as client:
        yield client


async def page(http: AsyncClient, player: str, **params: Any) -> dict[str, Any]:
    answer = await http.get(f"/api/players/{player}/games", params=params)
    assert answer.status_code == 200, answer.text
    assert answer.headers["cache-control"] == "no-cache"
    body: dict[str, Any] = answer.json()
    assert set(body) == {"games", "next"}
    return body


async def every_page(http: AsyncClient, player: str, limit: int) -> list[list[dict[str, Any]]]:
    pages, token = [], None
    while True:
        body = await page(http, player, limit=limit, **({"before": token} if token else {}))
        pages.append(body["games"])
        token = body["next"]
        if token is None:
            return pages
        assert len(body["games"]) == limit  # a page is full whenever another follows


@pytest.mark.parametrize("limit", [1, 5, 22, 23, 50])
async def test_the_cursors_page_every_game_once_newest_first(http: AsyncClient, limit: int) -> None:
    pages = await every_page(http, ME, limit)
    assert all(pages[:-1]) and pages[-1]  # no empty last page: ``next`` is null exactly then
    assert len(pages) == -(-MINE // limit)
    seen = [line["game"] for lines in pages for line in lines]
    newest_first = sorted(my_games(), key=lambda r: (r.finished_at, r.game_id), reverse=True)
    assert seen == [r.game_id for r in newest_first]


async def test_a_line_is_the_game_as_the_player_saw_it(http: AsyncClient) -> None:
    lines = {line["game"]: line for line in (await page(http, ME, limit=50))["games"]}
    for record in my_games():
        line = lines[record.game_id]
        seat = next(s for s in record.seats if s.participant == ME)
        assert list(line) == [
            "game", "finished_at", "kind", "rated", "seat", "scores", "winners", "names", "bots",
            "rating_before", "rating_after", "change",
        ]  # fmt: skip
        assert line["seat"] == seat.seat and line["finished_at"] == record.finished_at
        assert line["names"] == [s.name for s in record.seats]
        assert line["bots"] == [s.bot for s in record.seats]
        assert (line["scores"], line["winners"]) == (list(record.scores), list(record.winners))
        assert (line["kind"], line["rated"]) == (record.kind, record.rated)
        assert (line["rating_before"], line["rating_after"]) == (
            seat.rating_before, seat.rating_after
        )
        assert line["change"] == line["rating_after"] - line["rating_before"]
    assert "Bot 2" in lines["Mine0000ab.1"]["names"] and "strong" in lines["Mine0000ab.1"]["bots"]
    yours = (await page(http, YOU))["games"]
    assert [line["game"] for line in yours] == [
        f"Mine{k:04d}ab.{1 + k % 2}" for k in (20, 15, 10, 5, 0)
    ]
    assert (await page(http, "p-nobody")) == {"games": [], "next": None}


@contextmanager
def statements(store: RecordStore) -> Iterator[list[str]]:
    seen: list[str] = []

    def count(*args: Any) -> None:
        seen.append(str(args[2]))

    engine = store.engine.sync_engine
    sa.event.listen(engine, "before_cursor_execute", count)
    try:
        yield seen
    finally:
        sa.event.remove(engine, "before_cursor_execute", count)


async def test_a_page_is_one_query_however_many_games(
    http: AsyncClient, record_store: RecordStore
) -> None:
    first = await page(http, ME, limit=10)  # reads (or makes) the cursor key once
    with statements(record_store) as seen:
        await page(http, ME, limit=50, before=first["next"])
    assert len([s for s in seen if s.lstrip().upper().startswith("SELECT")]) == 1, seen


def flipped(token: str, at: int) -> str:
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    other = alphabet[(alphabet.index(token[at]) + 1) % len(alphabet)]
    return token[:at] + other + token[at + 1 :]


async def test_a_tampered_or_foreign_cursor_is_refused(http: AsyncClient) -> None:
    token = (await page(http, ME, limit=4))["next"]
    assert token is not None
    cursor = await GameCursors(FixedKey(b"k" * 32)).seal(ME, GameCursor(1.8e9 + 3, "Mine0009ab.2"))
    raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
    bad = [
        flipped(token, 0),  # the time
        flipped(token, 12),  # the game id
        flipped(token, len(token) - 3),  # the MAC
        token[:-2],
        token + "A",
        cursor,  # sealed with another key
        base64.urlsafe_b64encode(raw[:-16] + bytes(16)).decode().rstrip("="),
        "!!!",
        "a",
        "A" * 5000,
        "%00",
        token.replace("-", "+").replace("_", "/") if "-" in token or "_" in token else token + "=",
    ]
    for before in bad:
        answer = await http.get(f"/api/players/{ME}/games", params={"before": before})
        assert is_envelope(answer, 400, "bad_cursor"), before
        assert answer.headers["cache-control"] == "no-store"
    # Another player's list: the cursor is bound to the player it was made for.
    answer = await http.get(f"/api/players/{YOU}/games", params={"before": token})
    assert is_envelope(answer, 400, "bad_cursor")
    assert (await page(http, ME, before=""))["games"][0]["game"] == "Mine0022ab.1"  # first page


async def test_a_cursor_outlives_the_node_that_made_it(
    http: AsyncClient, record_store: RecordStore, tmp_path: Path
) -> None:
    token = (await page(http, ME, limit=4))["next"]
    key = await record_store.server_key(KEY_NAME)
    assert key is not None and len(key) == 32
    async with make_client(record_store, Rooms(), tmp_path / "game.html") as restarted:
        lines = (await page(restarted, ME, limit=4, before=token))["games"]
    assert [line["game"] for line in lines] == [
        f"Mine{k:04d}ab.{1 + k % 2}" for k in (18, 17, 16, 15)
    ]


@pytest.mark.parametrize("limit", ["0", "51", "-1", "abc", "1.5", " 5", "", "１"])
async def test_a_bad_limit_is_refused(http: AsyncClient, limit: str) -> None:
    answer = await http.get(f"/api/players/{ME}/games", params={"limit": limit})
    assert is_envelope(answer, 400, "bad_field")


async def test_a_bad_player_id_is_refused(http: AsyncClient) -> None:
    for path in ("games", "ratings"):
        answer = await http.get(f"/api/players/{'x' * 65}/{path}")
        assert is_envelope(answer, 400, "bad_field")


async def test_the_rating_history_is_whole_newest_first(
    http: AsyncClient, record_store: RecordStore
) -> None:
    mu, sigma = 25.0, 8.333
    for k in range(7):
        record = variant(2, f"Rated{k:04d}ab.1", ["p-rater", f"q{k}", f"r{k}", f"s{k}"], 1.9e9 + k)
        change = RatingChange("p-rater", k, mu, sigma, mu + 1, sigma * 0.9, k + 1)
        mu, sigma = mu + 1, sigma * 0.9
        assert await record_store.archive_game(replace(record, rated=True), [change]) is (
            ArchiveResult.ARCHIVED
        )
    answer = await http.get("/api/players/p-rater/ratings")
    assert answer.status_code == 200
    body = answer.json()
    assert body["player"] == "p-rater"
    assert [p["games"] for p in body["history"]] == [7, 6, 5, 4, 3, 2, 1]
    assert list(body["history"][0]) == ["game", "at", "mu", "sigma", "display", "games"]
    assert body["history"][0]["game"] == "Rated0006ab.1"
    two = (await http.get("/api/players/p-rater/ratings", params={"limit": "2"})).json()
    assert [p["games"] for p in two["history"]] == [7, 6]
    assert (await http.get("/api/players/p-rater/ratings?limit=1000")).status_code == 200
    for limit in ("0", "1001", "x"):
        answer = await http.get("/api/players/p-rater/ratings", params={"limit": limit})
        assert is_envelope(answer, 400, "bad_field")
    assert (await http.get("/api/players/p-none/ratings")).json()["history"] == []
