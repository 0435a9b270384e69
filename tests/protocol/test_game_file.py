"""``hearts-verify`` on a whole downloaded game (``hearts-game/1``, protocol/game_file.py): a
real game played by the room machine, as ``GET /api/games/ID`` serves it, and that game with
one lie each."""

from __future__ import annotations

import copy
import functools
import json
import random
from pathlib import Path
from typing import Any

import pytest

from load_tests.record_games import played_game
from protocol.verify import main, verify_game
from server.http.game_routes import game_document


@functools.cache
def _served() -> str:
    record, _ = played_game(random.Random(53), "VerifyRoom01", ["a", "b", "c", "d"], 1.7e9)
    return json.dumps(game_document(record))


def served() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(_served())
    return document


def run(tmp_path: Path, value: Any, *extra: str) -> int:
    path = tmp_path / "game.json"
    path.write_text(json.dumps(value))
    return main([str(path), *extra])


def test_a_served_game_verifies_hand_by_hand(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    document = served()
    assert run(tmp_path, document) == 0
    lines = capsys.readouterr().out.splitlines()
    hands = len(document["hands"])
    assert lines[:hands] == [f"verified: game VerifyRoom01.1 hand {n}" for n in range(1, hands + 1)]
    assert lines[hands:] == [f"verified: game VerifyRoom01.1, all {hands} hands"]


def test_one_hand_s_audit_is_still_taken_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(tmp_path, served()["hands"][2]["audit"]) == 0
    assert capsys.readouterr().out == "verified: game VerifyRoom01.1 hand 3\n"


def lie(change: Any) -> dict[str, Any]:
    document = served()
    change(document)
    return document


def _swap_deal(d: dict[str, Any]) -> None:
    deal = d["hands"][1]["audit"]["deal"]
    deal[0][0], deal[3][0] = deal[3][0], deal[0][0]


def _summary_trick(d: dict[str, Any]) -> None:
    trick = d["hands"][0]["over"]["tricks"][5]
    trick["cards"] = [*trick["cards"][1:], trick["cards"][0]]


def _winner(d: dict[str, Any]) -> None:
    trick = d["hands"][0]["over"]["tricks"][5]
    trick["winner"] = (trick["winner"] + 1) % 4


def _points(d: dict[str, Any]) -> None:
    over = d["hands"][2]["over"]
    over["points"][0] += 13
    over["points"][1] -= 13
    over["scores"][0] += 13
    over["scores"][1] -= 13


def _running_scores(d: dict[str, Any]) -> None:
    d["hands"][1]["over"]["scores"][2] += 1


def _shooter(d: dict[str, Any]) -> None:
    d["hands"][0]["over"]["shooter"] = 2


def _other_game(d: dict[str, Any]) -> None:
    d["hands"][1]["audit"] = served()["hands"][0]["audit"]


def _no_audit(d: dict[str, Any]) -> None:
    d["hands"][3]["audit"] = None


def _numbering(d: dict[str, Any]) -> None:
    d["hands"][1]["number"] = 5


@pytest.mark.parametrize(
    ("change", "hand", "says"),
    [
        (_swap_deal, 2, "the deal does not re-derive"),
        (_summary_trick, 1, "trick 6 of the summary is not trick 6 of the audit"),
        (_winner, 1, "took trick 6, but seat"),
        (_points, 3, "but the tricks give"),
        (_running_scores, 2, "are not the scores before it"),
        (_shooter, 1, "names shooter 2"),
        (_other_game, 2, "the audit is of game VerifyRoom01.1 hand 1"),
        (_no_audit, 4, "no audit record"),
        (_numbering, 2, "hand 2 is numbered 5"),
    ],
)
def test_a_game_with_one_lie_is_not_verified(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], change: Any, hand: int, says: str
) -> None:
    assert run(tmp_path, lie(change)) == 1
    out = capsys.readouterr().out
    assert f"NOT verified: game VerifyRoom01.1 hand {hand}\n" in out
    assert says in out.split(f"hand {hand}\n", 1)[1].split("verified: game")[0], out
    assert out.splitlines()[-1].startswith("NOT verified: game VerifyRoom01.1, ")


def test_final_scores_that_are_not_the_hands_sum_are_the_game_s_problem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    document = served()
    document["scores"][0] -= 1
    check = verify_game(document)
    assert all(not h.problems for h in check.hands) and len(check.problems) == 1
    assert run(tmp_path, document) == 1
    assert "- game VerifyRoom01.1: the game's scores are" in capsys.readouterr().out


def test_what_cannot_be_read_exits_2(tmp_path: Path) -> None:
    assert run(tmp_path, {**served(), "format": "hearts-game/9"}) == 2
    own = tmp_path / "own.json"
    own.write_text(json.dumps({"seat": 0, "secret": "00" * 32}))
    assert run(tmp_path, served(), "--own", str(own)) == 2


def test_a_document_of_the_wrong_shape_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    for broken in (
        {"format": "hearts-game/1"},
        {**served(), "hands": {"1": {}}},
        {**served(), "hands": [None, 3, "x"]},
        {**served(), "options": None},
        lie(lambda d: d["hands"][0].update(over={"tricks": "no"})),
        lie(lambda d: d["hands"][0]["over"].update(points=None)),
        lie(lambda d: d["hands"][0]["over"]["tricks"].__setitem__(0, ["2C"])),
        lie(lambda d: d["hands"][0]["over"].update(revoke_call=[9, 9])),
    ):
        assert run(tmp_path, copy.deepcopy(broken)) == 1
