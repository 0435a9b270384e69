"""docs/protocol.md names every field the server sends: compared with the frames of real games."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from protocol.client import HeartsClient
from tests.support.client_bots import new_player, play_to_the_end
from tests.support.server_process import ServerProcess

pytestmark = pytest.mark.e2e

DOC = (Path(__file__).resolve().parents[2] / "docs" / "protocol.md").read_text()
ENVELOPE = {"type", "room", "seq", "event"}


def doc_table(first_header: str) -> dict[str, set[str]]:
    """Rows of the table whose first header is ``first_header``: name -> backticked words."""
    lines = DOC.splitlines()
    start = next(k for k, line in enumerate(lines) if line.startswith(f"| {first_header} |"))
    rows: dict[str, set[str]] = {}
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        name = re.sub(r"\s*\(.*\)", "", cells[0]).strip("`* ")
        rows[name] = set(re.findall(r"`([a-z_0-9]+)`", " ".join(cells[1:])))
    return rows


EVENTS = doc_table("event")
COMMANDS = doc_table("type")
PARTS = doc_table("part")
MOVES = set(re.findall(r"`([a-z_]+)`", DOC.split("The `ok` of a move")[1].split("carries")[0]))


def undocumented(where: str, value: Any, allowed: set[str]) -> list[str]:
    if not isinstance(value, dict):
        return []
    return [f"{where}.{k}" for k in value if k not in allowed]


def check_view(view: dict[str, Any]) -> list[str]:
    bad = undocumented("view", view, PARTS["view"])
    bad += undocumented("options", view["options"], PARTS["options"])
    for seat in view["seats"]:
        bad += undocumented("view.seats[]", seat, PARTS["view.seats[]"])
        if seat and seat["clock"]:
            bad += undocumented("clock", seat["clock"], PARTS["clock"])
    for d in view["departures"]:
        bad += undocumented("view.departures[]", d, PARTS["view.departures[]"])
    for entry in view["hand_log"]:
        bad += check_event({"event": "hand_over", **entry})
    if "shuffle" in view:
        bad += undocumented("view.shuffle", view["shuffle"], PARTS["view.shuffle"])
    game = view.get("game")
    if game:
        bad += undocumented("view.game", game, PARTS["view.game"])
        if "trick" in game:
            bad += undocumented("view.game.trick", game["trick"], PARTS["view.game.trick"])
        for t in game.get("tricks", []):
            bad += undocumented("view.game.tricks[]", t, PARTS["view.game.tricks[]"])
    return bad


def check_event(frame: dict[str, Any]) -> list[str]:
    name = frame["event"]
    if name not in EVENTS:
        return [f"event {name}"]
    bad = [f"{name}.{k}" for k in frame if k not in ENVELOPE | EVENTS[name]]
    if frame.get("clock"):
        bad += undocumented("clock", frame["clock"], PARTS["clock"])
    if "options" in frame:
        bad += undocumented("options", frame["options"], PARTS["options"])
    for t in frame.get("tricks", []) if name == "hand_over" else []:
        bad += undocumented("tricks[]", t, PARTS["tricks[]"])
    return bad


def check_frames(client: HeartsClient) -> list[str]:
    bad: list[str] = []
    for f in client.frames:
        if f["type"] == "event":
            bad += check_event(f)
        if "view" in f:
            bad += check_view(f["view"])
    return bad


def check_ok(kind: str, reply: dict[str, Any]) -> list[str]:
    allowed = COMMANDS[kind] | {"type", "re"} | ({"seq", "first_seq"} if kind in MOVES else set())
    bad = [f"ok {kind}.{k}" for k in reply if k not in allowed]
    if "view" in reply:
        bad += check_view(reply["view"])
    return bad


@pytest.fixture(scope="module")
def server() -> Iterator[ServerProcess]:
    proc = ServerProcess().start()
    yield proc
    proc.stop()


async def test_every_field_of_a_real_game_is_documented(server: ServerProcess) -> None:
    a = await new_player(server, "Ann")
    b = await new_player(server, "Bea")
    watcher = await new_player(server, "Wes", binary=False)
    bad: list[str] = []
    reply = await a.request("open_room", options={"target": 50, "moon": "shooter_chooses"})
    bad += check_ok("open_room", reply)
    room = reply["room"]
    bad += check_ok("join", await b.request("join", room=room))
    bad += check_ok("fill_bots", await a.request("fill_bots"))
    bad += check_ok("start", await a.request("start"))
    bad += check_ok("join", await watcher.request("join", room=room))
    bad += check_ok("ping", await a.request("ping", t=1.0))
    prompt = await a.next_event("your_turn")
    bad += check_ok("view", await a.request("view"))
    bad += check_ok("hint", await a.request("hint"))
    bad += check_ok("pass", await a.request("pass", cards=prompt["legal"][:3]))
    back = await HeartsClient.connect(server.ws, b.identity["token"])  # type: ignore[attr-defined]
    bad += check_ok("resume", await back.request("resume", room=room, seq=3))
    bad += check_ok("resume", await back.request("resume", room=room, seq=10**9))
    await back.close()
    await asyncio.gather(play_to_the_end(a, 1), play_to_the_end(b, 2))
    bad += check_ok("audit", await a.request("audit", hand=1))
    bad += check_ok("ladder", await a.request("ladder"))
    for client in (a, b, watcher):
        bad += check_frames(client)
        await client.close()
    missing = sorted(set(bad))
    assert not missing, f"fields the server sends that docs/protocol.md does not name: {missing}"


def test_the_field_tables_were_found() -> None:
    assert {"hand_over", "your_turn", "commitments"} <= set(EVENTS)
    assert {"join", "resume", "audit"} <= set(COMMANDS)
    assert {"view", "view.game", "clock", "options"} <= set(PARTS)
    assert {"pass", "play", "commit"} <= MOVES
