"""A game's permanent record end to end: played through real sockets against a real server
process to its end, archived, served by ``GET /api/games/ID``, replayed move by move through
the rules engine, and its download accepted by ``hearts-verify`` as it is.

Twice: the embedded node (its SQLite file), and a node on Redis with its store of record on a
fresh database of the session's private PostgreSQL.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.http.replay import replay_document
from tests.support.client_bots import new_player, open_table, play_to_the_end
from tests.support.server_process import ServerProcess

pytestmark = pytest.mark.e2e

VERIFY = Path(sys.executable).parent / "hearts-verify"


def get(server: ServerProcess, path: str) -> tuple[int, dict[str, str], bytes]:
    try:
        with urllib.request.urlopen(server.base + path, timeout=10) as resp:
            return resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def refusal(server: ServerProcess, path: str) -> tuple[int, str]:
    status, headers, body = get(server, path)
    assert headers["content-type"] == "application/json", (path, body)
    answer = json.loads(body)
    assert set(answer) == {"type", "re", "code", "message"} and answer["type"] == "error"
    return status, answer["code"]


@pytest.fixture(params=["embedded", "redis+postgres"])
def server(request: pytest.FixtureRequest) -> Iterator[ServerProcess]:
    if request.param == "embedded":
        proc = ServerProcess()
    else:
        proc = ServerProcess(
            redis_url=request.getfixturevalue("clean_redis"),
            HEARTS_DATABASE_URL=request.getfixturevalue("record_url"),
        )
    proc.start()
    yield proc
    proc.stop()
    assert "Traceback" not in proc.log(), proc.log()[-3000:]


@pytest.fixture
def record_url(request: pytest.FixtureRequest, postgres: Any) -> str:
    """conftest's ``record_url`` on PostgreSQL only (asked for by the Redis node alone)."""
    import uuid

    import asyncpg

    name = f"t_{uuid.uuid4().hex[:16]}"

    async def create() -> None:
        connection = await asyncpg.connect(postgres.dsn())
        try:
            await connection.execute(f'CREATE DATABASE "{name}"')
        finally:
            await connection.close()

    asyncio.run(create())
    return str(postgres.url(name))


async def archived(server: ServerProcess, game_id: str, timeout: float = 30) -> bytes:
    """The game's document, once the store of record has it (409 ``game_in_play`` until then)."""
    deadline = time.monotonic() + timeout
    while True:
        status, headers, body = await asyncio.to_thread(get, server, f"/api/games/{game_id}")
        if status == 200:
            assert headers["cache-control"].startswith("public, max-age=")
            return body
        assert (status, json.loads(body)["code"]) == (409, "game_in_play"), body
        assert time.monotonic() < deadline, f"game {game_id} not archived after {timeout} s"
        await asyncio.sleep(0.1)


def hearts_verify(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(VERIFY), str(path)], capture_output=True, text=True, timeout=60, check=False
    )


async def test_a_finished_game_is_served_replayed_and_verified(
    server: ServerProcess, tmp_path: Path
) -> None:
    ann = await new_player(server, "Ann")
    try:
        room = await open_table(server, ann, {"target": 50})
        await ann.request("fill_bots", level="random")
        await ann.request("start")
        game_id = f"{room}.1"
        assert any(f.get("event") == "game_started" and f.get("game") == game_id
                   for f in ann.frames)
        # In play: said to be in play, and nothing else.
        assert refusal(server, f"/api/games/{game_id}") == (409, "game_in_play")
        await play_to_the_end(ann, seed=53)
        document = json.loads(await archived(server, game_id))
    finally:
        await ann.close()

    assert document["format"] == "hearts-game/1" and document["game"] == game_id
    me = ann.identity["player"]  # type: ignore[attr-defined]
    assert document["seats"][0] == {
        "seat": 0, "player": me, "name": "Ann", "bot": None,
        "rating_before": document["seats"][0]["rating_before"],
        "rating_after": document["seats"][0]["rating_after"],
    }  # fmt: skip
    assert [s["bot"] for s in document["seats"][1:]] == ["random"] * 3
    assert all(s["player"] is None and s["name"] for s in document["seats"][1:])
    game = replay_document(document)  # every card, trick, point and score, by the engine
    assert game.over and len(document["hands"]) >= 2

    # The download, as a browser saves it, is what hearts-verify takes.
    status, headers, body = get(server, f"/api/games/{game_id}?download=1")
    assert status == 200
    assert headers["content-disposition"] == f'attachment; filename="hearts-{game_id}.json"'
    saved = tmp_path / f"hearts-{game_id}.json"
    saved.write_bytes(body)
    done = hearts_verify(saved)
    assert done.returncode == 0, done.stdout + done.stderr
    verdicts = [line for line in done.stdout.splitlines() if line.startswith("verified: game")]
    assert len(verdicts) == len(document["hands"]) + 1  # one per hand, then the game's
    tampered = json.loads(body)
    deal = tampered["hands"][0]["audit"]["deal"]
    deal[0][0], deal[2][0] = deal[2][0], deal[0][0]
    saved.write_text(json.dumps(tampered))
    done = hearts_verify(saved)
    assert done.returncode == 1 and f"NOT verified: game {game_id} hand 1" in done.stdout

    # The player's history lists it, with the seats' names, and pages by key.
    status, _, body = get(server, f"/api/players/{me}/games?limit=1")
    assert status == 200
    listing = json.loads(body)
    line = listing["games"][0]
    assert (line["game"], line["seat"]) == (game_id, 0)
    assert line["names"] == [s["name"] for s in document["seats"]] and listing["next"] is None
    assert refusal(server, f"/api/players/{me}/games?before=AAAA{game_id}") == (400, "bad_cursor")

    # The page, and ids that name nothing.
    status, headers, _ = get(server, f"/g/{game_id}")
    assert status == 200
    for path in (f"/api/games/{room}.2", "/api/games/nope", "/api/games/a/b/c", "/api/games/"):
        assert refusal(server, path) == (404, "game_not_found")
