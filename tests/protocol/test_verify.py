"""The audit record and its verifier: accepts real play-throughs, names every kind of lie.

Regenerate protocol/vectors/audit-v1.json (sample records for other verifiers, e.g. the
browser's): ``.venv/bin/python -m tests.protocol.test_verify``.
"""

from __future__ import annotations

import copy
import hashlib
import json
import random
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import protocol
from protocol.audit import (
    AuditFormatError,
    audit_dict,
    build_audit,
    parse_audit,
    parse_own,
    pass_direction_for,
    pass_target,
)
from protocol.cards import card_name, cards_in, mask_of, names_of, suit_of
from protocol.shuffle import (
    SeatSecret,
    deal_context,
    deal_hands,
    derive_deck,
    seat_commitment,
    secrets_for_seats,
)
from protocol.verify import main, verify_audit, verify_checked

VECTORS = Path(protocol.__file__).parent / "vectors" / "audit-v1.json"
ROOT = Path(__file__).resolve().parents[2]


def fixed(label: str) -> bytes:
    return hashlib.sha256(b"hearts verify test " + label.encode()).digest()


@dataclass
class Hand:
    audit: dict[str, Any]
    secrets: list[bytes | None]  # each human seat's r_j
    dealt: list[int]
    passed: list[int]
    received: list[int]


def play_through(
    game: str = "g-42",
    hand: int = 1,
    kinds: tuple[str, ...] = ("human", "bot", "human", "absent"),
    seed: int = 0,
    plays: int = 52,
) -> Hand:
    """Deal, pass and play ``plays`` cards of one hand, and build its audit record.

    Plays follow suit when they can and are otherwise arbitrary; that is all the verifier
    relies on. The choices come from a seeded random.Random: test plumbing, not the shuffle.
    ``kinds`` may say "absent-committed" for a seat that committed but never revealed.
    """
    rng = random.Random(seed)
    ctx = deal_context(game, hand)
    server = fixed(f"S {game} {hand} {seed}")
    secrets: list[bytes | None] = []
    seats: list[SeatSecret] = []
    for j, kind in enumerate(kinds):
        r = fixed(f"r {j} {game} {hand} {seed}")
        if kind == "human":
            seats.append(SeatSecret("human", r, seat_commitment(ctx, j, r)))
            secrets.append(r)
        elif kind == "absent-committed":
            seats.append(SeatSecret("absent", commitment=seat_commitment(ctx, j, r)))
            secrets.append(r)
        else:
            seats.append(SeatSecret(kind))  # type: ignore[arg-type]
            secrets.append(None)
    dealt = deal_hands(derive_deck(ctx, server, secrets_for_seats(ctx, server, seats)))
    direction = pass_direction_for(hand)
    passed, received = [0] * 4, [0] * 4
    held = list(dealt)
    if direction != "none":
        passed = [mask_of(rng.sample(cards_in(m), 3)) for m in dealt]
        for j in range(4):
            received[pass_target(j, direction)] = passed[j]
        held = [dealt[j] & ~passed[j] | received[j] for j in range(4)]
    leader = next(j for j in range(4) if held[j] & 1)
    tricks: list[tuple[int, list[int]]] = []
    for _ in range(13):
        cards: list[int] = []
        for k in range(4):
            if plays == 0:
                break
            seat = (leader + k) % 4
            options = cards_in(held[seat])
            if not tricks and not cards:
                options = [0]  # 2C opens
            elif cards:
                options = [c for c in options if suit_of(c) == suit_of(cards[0])] or options
            card = rng.choice(options)
            held[seat] &= ~(1 << card)
            cards.append(card)
            plays -= 1
        if cards:
            tricks.append((leader, cards))
        if len(cards) < 4:
            break
        best = max(c for c in cards if suit_of(c) == suit_of(cards[0]))
        leader = (leader + cards.index(best)) % 4
    audit = build_audit(game, hand, server, seats, None if direction == "none" else passed, tricks)
    return Hand(audit, secrets, dealt, passed, received)


def own_record(h: Hand, seat: int) -> dict[str, Any]:
    secret = h.secrets[seat]
    assert secret is not None
    return {
        "seat": seat,
        "secret": secret.hex(),
        "dealt": names_of(h.dealt[seat]),
        "received": names_of(h.received[seat]),
        "passed": names_of(h.passed[seat]),
        "server_commitment": h.audit["server_commitment"],
        "commitments": [s["commitment"] for s in h.audit["seats"]],
    }


# --- accepts the truth ------------------------------------------------------------------------


@pytest.mark.parametrize("hand", [1, 2, 3, 4, 5])
@pytest.mark.parametrize(
    "kinds",
    [
        ("human", "human", "human", "human"),
        ("human", "bot", "human", "absent"),
        ("bot", "absent-committed", "bot", "bot"),
    ],
)
def test_a_real_play_through_verifies(hand: int, kinds: tuple[str, ...]) -> None:
    for seed in range(3):
        h = play_through(hand=hand, kinds=kinds, seed=seed)
        assert verify_audit(h.audit) == []
        assert len(h.audit["tricks"]) == 13
        for seat, kind in enumerate(kinds):
            if kind == "human":
                assert verify_audit(h.audit, own_record(h, seat)) == []


@settings(max_examples=40, deadline=None)
@given(
    game=st.text(max_size=30),
    hand=st.integers(1, 2**32 - 1),
    seed=st.integers(0, 2**32),
    plays=st.integers(0, 52),
)
def test_any_hand_verifies_even_cut_short(game: str, hand: int, seed: int, plays: int) -> None:
    # A revoke call ends the hand at once, possibly mid-trick.
    h = play_through(game, hand, seed=seed, plays=plays)
    assert verify_audit(h.audit) == []
    assert verify_audit(h.audit, own_record(h, 0)) == []
    assert sum(len(t["cards"]) for t in h.audit["tricks"]) == plays


def test_record_shape_and_round_trip() -> None:
    h = play_through(hand=1)
    a = h.audit
    assert list(a) == [
        "v",
        "game",
        "hand",
        "server_commitment",
        "server_secret",
        "seats",
        "deal",
        "pass_direction",
        "passes",
        "tricks",
    ]
    assert a["v"] == 1 and a["pass_direction"] == "left"
    assert [s["kind"] for s in a["seats"]] == ["human", "bot", "human", "absent"]
    assert a["seats"][1]["commitment"] is None and a["seats"][3]["commitment"] is None
    assert a["deal"] == [names_of(m) for m in h.dealt]
    assert a["tricks"][0]["cards"][0] == "2C"
    assert json.loads(json.dumps(a)) == a
    assert audit_dict(parse_audit(a)) == a
    assert play_through(hand=4).audit["passes"] is None


def test_build_audit_refuses_inconsistent_input() -> None:
    ctx, s, r = deal_context("g", 1), fixed("S"), fixed("r")
    good = [SeatSecret("human", r, seat_commitment(ctx, 0, r))] + [SeatSecret("bot")] * 3
    bad = [SeatSecret("human", fixed("other"), seat_commitment(ctx, 0, r)), *good[1:]]
    with pytest.raises(ValueError, match="does not match"):
        build_audit("g", 1, s, bad, [0] * 4, [])
    bots = [SeatSecret("bot")] * 4
    with pytest.raises(ValueError, match="exactly when"):
        build_audit("g", 4, s, bots, [0b111] * 4, [])
    with pytest.raises(ValueError, match="exactly when"):
        build_audit("g", 1, s, bots, None, [])
    with pytest.raises(ValueError, match="not a card"):
        build_audit("g", 4, s, bots, None, [(0, [0, 1, 2, 99])])
    with pytest.raises(ValueError, match="not a card"):
        build_audit("g", 4, s, bots, None, [(0, [0, 1, 2, -1])])


# --- rejects lies ---------------------------------------------------------------------------


def tampered(h: Hand) -> dict[str, Any]:
    return copy.deepcopy(h.audit)


def test_changed_human_secret() -> None:
    h = play_through(kinds=("human", "bot", "human", "absent"))
    a = tampered(h)
    a["seats"][2]["secret"] = fixed("forged").hex()
    problems = verify_audit(a)
    assert problems[0] == "seat 2's secret does not match its commitment"
    assert any(p.startswith("the deal does not re-derive") for p in problems)


def test_changed_server_secret() -> None:
    a = tampered(play_through())
    a["server_secret"] = fixed("forged S").hex()
    problems = verify_audit(a)
    assert "the server's secret does not match its commitment" in problems
    assert "seat 1 is a bot, but its secret is not the one the server's secret gives" in problems
    assert any("seat 3 is marked absent" in p for p in problems)


def test_changed_bot_and_stand_in_secrets() -> None:
    a = tampered(play_through())
    a["seats"][1]["secret"], a["seats"][3]["secret"] = a["seats"][3]["secret"], fixed("x").hex()
    problems = verify_audit(a)
    assert problems[:2] == [
        "seat 1 is a bot, but its secret is not the one the server's secret gives",
        "seat 3 is marked absent, but its secret is not the stand-in the server's secret gives",
    ]
    # The deal itself was made from the right secrets, so only the secrets are flagged.
    assert len(problems) == 2


def test_swapped_commitments() -> None:
    a = tampered(play_through(kinds=("human", "human", "bot", "human")))
    seats = a["seats"]
    seats[0]["commitment"], seats[3]["commitment"] = seats[3]["commitment"], seats[0]["commitment"]
    assert verify_audit(a) == [
        "seat 0's secret does not match its commitment",
        "seat 3's secret does not match its commitment",
    ]


def test_swapped_server_commitment() -> None:
    other = play_through(game="another game")
    a = tampered(play_through())
    a["server_commitment"] = other.audit["server_commitment"]
    assert verify_audit(a) == ["the server's secret does not match its commitment"]


def test_deal_with_two_cards_swapped() -> None:
    h = play_through(hand=4)  # no pass, so the play checks below are simple to predict
    a = tampered(h)
    x, y = a["deal"][1][0], a["deal"][2][5]
    a["deal"][1][0], a["deal"][2][5] = y, x
    problems = verify_audit(a)
    assert f"the deal does not re-derive: seat 1 should hold {x} (the record has {y} instead)" in (
        problems
    )
    assert f"the deal does not re-derive: seat 2 should hold {y} (the record has {x} instead)" in (
        problems
    )
    # And the plays of those cards no longer match the (false) published hands.
    assert any(f"seat 1 played {x}" in p and "did not hold" in p for p in problems)


def test_deal_that_gives_a_card_twice() -> None:
    a = tampered(play_through())
    a["deal"][0][0] = a["deal"][3][0]
    assert f"the deal gives {a['deal'][3][0]} to seat 0 and seat 3" in verify_audit(a)


def test_passed_card_not_held() -> None:
    h = play_through(hand=1)
    a = tampered(h)
    foreign = a["deal"][0][0]
    a["passes"][3][1] = foreign
    problems = verify_audit(a)
    assert f"seat 3 passed {foreign} which it was not dealt" in problems


def test_pass_that_did_not_happen() -> None:
    """The record claims seat 0 passed three other cards than it did: the plays betray it."""
    h = play_through(hand=3)
    a = tampered(h)
    kept = [c for c in cards_in(h.dealt[0] & ~h.passed[0])][:3]
    a["passes"][0] = [card_name(c) for c in kept]
    problems = verify_audit(a)
    assert any("seat 0 played" in p and "which it had passed to seat 2" in p for p in problems)
    assert any("seat 2 played" in p and "which it did not hold" in p for p in problems)


def test_pass_repeated_card_and_wrong_direction() -> None:
    a = tampered(play_through(hand=2))
    a["passes"][1][2] = a["passes"][1][0]
    a["pass_direction"] = "left"
    problems = verify_audit(a)
    assert "hand 2 should pass right, the record says left" in problems
    assert f"seat 1 passed {a['passes'][1][0]} twice" in problems


def test_played_card_never_held() -> None:
    h = play_through(hand=4)
    a = tampered(h)
    trick = a["tricks"][3]
    seat = (trick["leader"] + 1) % 4
    later = [n for t in a["tricks"][4:] for n in t["cards"]]
    stranger = next(n for n in a["deal"][(seat + 1) % 4] if n in later)
    trick["cards"][1] = stranger
    problems = verify_audit(a)
    assert f"seat {seat} played {stranger} in trick 4 which it did not hold" in problems


def test_card_played_twice() -> None:
    a = tampered(play_through(hand=4))
    first = a["tricks"][0]
    later = a["tricks"][5]
    seat = first["leader"]
    k = (seat - later["leader"]) % 4
    card = first["cards"][0]
    later["cards"][k] = card
    assert f"seat {seat} played {card} in trick 6 which it had already played in trick 1" in (
        verify_audit(a)
    )


def test_wrong_leaders() -> None:
    a = tampered(play_through(hand=4))
    true_leader = a["tricks"][4]["leader"]
    a["tricks"][4]["leader"] = (true_leader + 1) % 4
    problems = verify_audit(a)
    assert any(
        p.startswith(f"trick 5 was led by seat {(true_leader + 1) % 4}, but seat ")
        and "won trick 4 with" in p
        for p in problems
    )

    b = tampered(play_through(hand=4))
    first = b["tricks"][0]
    first["cards"] = first["cards"][1:] + first["cards"][:1]
    first["leader"] = (first["leader"] + 1) % 4
    problems = verify_audit(b)
    assert any(p.startswith("trick 1 was led by seat") and "held 2C" in p for p in problems)
    assert any(p.startswith("trick 1 was opened with") for p in problems)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda a: a.pop("tricks"), "audit: missing field 'tricks'"),
        (lambda a: a.update(extra=1), "audit: unknown field 'extra'"),
        (lambda a: a.update(v=2), "v: unsupported audit version 2"),
        (lambda a: a.update(hand=0), "hand: expected 1..4294967295, got 0"),
        (lambda a: a.update(hand="1"), "hand: expected a whole number"),
        (lambda a: a["seats"][2].update(secret="zz" * 32), "seats[2].secret: not hex"),
        (lambda a: a["seats"][0].update(secret="ab"), "seats[0].secret: expected 64 hex digits"),
        (lambda a: a["seats"][1].update(kind="robot"), "seats[1].kind: expected one of"),
        (lambda a: a["seats"][1].update(commitment="00" * 32), "seats[1].commitment: a bot"),
        (lambda a: a["seats"][0].update(commitment=None), "seats[0].commitment: a human seat"),
        (lambda a: a["seats"].reverse(), "seats[0].seat: seats must be listed in order"),
        (lambda a: a["deal"][2].pop(), "deal[2]: expected 13 entries, got 12"),
        (lambda a: a["deal"][0].__setitem__(4, "1C"), "deal[0][4]: not a card name: '1C'"),
        (lambda a: a.update(passes=None), "passes: missing: pass_direction is left"),
        (lambda a: a.update(pass_direction="none"), "passes: must be null"),
        (lambda a: a.update(pass_direction="up"), "pass_direction: expected one of"),
        (lambda a: a["tricks"][3]["cards"].pop(), "tricks[3].cards: expected 4 entries, got 3"),
        (lambda a: a["tricks"].append(a["tricks"][0]), "tricks: expected 0 to 13 entries"),
        (lambda a: a["tricks"][0].update(leader=4), "tricks[0].leader: expected 0..3, got 4"),
        (lambda a: a.update(game=7), "game: expected a string"),
    ],
)
def test_malformed_records_are_named(change: Any, message: str) -> None:
    a = tampered(play_through(hand=1))
    change(a)
    problems = verify_audit(a)
    assert len(problems) == 1
    assert problems[0].startswith("malformed audit record: " + message), problems[0]
    with pytest.raises(AuditFormatError):
        parse_audit(a)


def test_not_an_object_at_all() -> None:
    assert verify_audit([1, 2]) == [  # type: ignore[arg-type]
        "malformed audit record: audit: expected an object, got a list of 2"
    ]


# --- against the seat's own record -----------------------------------------------------------


def test_own_record_catches_a_substituted_secret() -> None:
    h = play_through(kinds=("human", "human", "bot", "bot"))
    own = own_record(h, 1)
    own["secret"] = fixed("what I really drew").hex()
    own.pop("dealt")  # the cards would differ too; this test is about the secret
    assert verify_audit(h.audit, own) == ["the audit's secret for seat 1 is not your secret"]


def test_own_record_of_a_seat_the_audit_calls_a_bot() -> None:
    h = play_through(kinds=("human", "bot", "bot", "bot"))
    own = {"seat": 1, "secret": fixed("mine").hex()}
    assert verify_audit(h.audit, own) == [
        "the audit says seat 1 (you) was a bot, and did not use your secret"
    ]


def test_own_record_of_a_seat_marked_absent() -> None:
    h = play_through(kinds=("human", "bot", "bot", "absent-committed"))
    own = {"seat": 3, "secret": h.secrets[3].hex()}  # type: ignore[union-attr]
    assert verify_audit(h.audit, own) == [
        "the audit marks seat 3 (you) absent and used a stand-in, not your secret, "
        "though it has your commitment"
    ]


def test_own_record_catches_wrong_cards_and_commitments() -> None:
    h = play_through(hand=1, kinds=("human", "human", "human", "human"))
    own = own_record(h, 2)
    real_dealt = own["dealt"]
    fake = next(n for n in h.audit["deal"][0] if n not in real_dealt)
    own["dealt"] = [*real_dealt[1:], fake]
    own["received"] = own["received"][:2]
    own["server_commitment"] = "00" * 32
    own["commitments"][0] = "11" * 32
    problems = verify_audit(h.audit, own)
    assert problems[0].startswith("the server's commitment in the audit (")
    assert problems[1].startswith("seat 0's commitment in the audit (")
    assert problems[2] == (
        f"you were dealt {fake}, but the secrets deal seat 2 {real_dealt[0]} instead"
    )
    assert problems[3].startswith("you received ")
    assert len(problems) == 4


def test_a_record_checked_once_serves_every_seat_own_checks() -> None:
    """The load generator checks a table's audit once and each seat's own notes against that:
    the same problems, in the same order, as each seat verifying the whole record."""
    from load_tests.paced_table import PacedStats, Table, TableConfig
    from load_tests.scenarios import Endpoint
    from protocol.audit import parse_own

    h = play_through(hand=2, kinds=("human", "human", "human", "absent-committed"))
    tampered = copy.deepcopy(h.audit)
    tampered["server_secret"] = fixed("not it").hex()
    table = Table(
        0, [Endpoint("http://127.0.0.1:1", "ws://127.0.0.1:1/ws")], TableConfig(), PacedStats()
    )
    for record in (h.audit, tampered, copy.deepcopy(h.audit)):
        checked = table.checked(copy.deepcopy(record))  # each seat decodes its own copy
        assert table.checked(copy.deepcopy(record)) is checked  # the other seats reuse it
        for seat in range(4):
            own = own_record(h, seat) if seat < 3 else {"seat": 3, "secret": h.secrets[3].hex()}  # type: ignore[union-attr]
            assert verify_checked(checked, parse_own(own)) == verify_audit(record, own)
        assert bool(checked.problems) == (record is tampered)
    malformed = table.checked({"version": 1})
    assert verify_checked(malformed, parse_own(own_record(h, 0))) == verify_audit({"version": 1})
    assert malformed.problems[0].startswith("malformed audit record: ")


def test_malformed_own_record_raises() -> None:
    h = play_through()
    with pytest.raises(AuditFormatError, match="own: missing field 'secret'"):
        verify_audit(h.audit, {"seat": 0})
    with pytest.raises(AuditFormatError, match=r"own\.dealt: expected 13"):
        parse_own({"seat": 0, "secret": "00" * 32, "dealt": ["2C"]})
    with pytest.raises(AuditFormatError, match="unknown field 'hand'"):
        parse_own({"seat": 0, "secret": "00" * 32, "hand": 1})


# --- sample records for other implementations -------------------------------------------------


def build_audit_vectors() -> dict[str, Any]:
    h = play_through(
        game="sample-game", hand=1, kinds=("human", "bot", "human", "absent-committed"), seed=7
    )
    cases = []

    def lie(name: str, audit: dict[str, Any]) -> None:
        cases.append({"name": name, "audit": audit, "problems": verify_audit(audit)})

    a = tampered(h)
    a["seats"][0]["secret"] = fixed("forged").hex()
    lie("a human seat's secret changed", a)
    a = tampered(h)
    a["deal"][0][0], a["deal"][1][0] = a["deal"][1][0], a["deal"][0][0]
    lie("two cards swapped between seats in the deal", a)
    a = tampered(h)
    a["passes"][2][0] = a["deal"][3][0]
    lie("a passed card the passer was not dealt", a)
    a = tampered(h)
    trick = a["tricks"][6]
    seat = (trick["leader"] + 2) % 4
    later = [n for t in a["tricks"][7:] for n in t["cards"]]
    trick["cards"][2] = next(n for n in a["deal"][(seat + 2) % 4] if n in later)
    lie("a card played by a seat that never held it", a)
    return {
        "about": (
            "Sample audit records, v1 (docs/fair-deal.md). 'valid' verifies, and so does it "
            "with 'own' (seat 0's own record). Each of 'invalid' must be refused; 'problems' "
            "is what protocol.verify says, for reference (other verifiers may word them "
            "differently)."
        ),
        "valid": h.audit,
        "own": own_record(h, 0),
        "invalid": cases,
    }


def test_sample_records_verify_as_documented() -> None:
    data = json.loads(VECTORS.read_text(encoding="utf-8"))
    assert verify_audit(data["valid"]) == []
    assert verify_audit(data["valid"], data["own"]) == []
    for case in data["invalid"]:
        assert verify_audit(case["audit"]) == case["problems"] != [], case["name"]
    assert data == build_audit_vectors()


# --- command line --------------------------------------------------------------------------


def write(path: Path, value: object) -> str:
    path.write_text(json.dumps(value), encoding="utf-8")
    return str(path)


def test_cli_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    h = play_through(game="cli", hand=3, kinds=("human", "bot", "bot", "bot"))
    good = write(tmp_path / "good.json", h.audit)
    assert main([good]) == 0
    assert capsys.readouterr().out == "verified: game cli hand 3\n"

    assert main([good, "--own", write(tmp_path / "own.json", own_record(h, 0))]) == 0
    capsys.readouterr()

    bad = tampered(h)
    bad["seats"][0]["secret"] = fixed("forged").hex()
    assert main([write(tmp_path / "bad.json", bad)]) == 1
    out = capsys.readouterr().out
    assert out.startswith("NOT verified: game cli hand 3\n")
    assert "- seat 0's secret does not match its commitment\n" in out

    (tmp_path / "junk.json").write_text("{not json", encoding="utf-8")
    assert main([str(tmp_path / "junk.json")]) == 2
    assert main([str(tmp_path / "missing.json")]) == 2
    assert main([write(tmp_path / "list.json", [1])]) == 2
    assert main([good, "--own", write(tmp_path / "own-bad.json", {"seat": 9})]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith(f"cannot read the audit record {tmp_path / 'junk.json'}: ")
    assert err[1].startswith(f"cannot read the audit record {tmp_path / 'missing.json'}: ")
    assert err[2] == f"{tmp_path / 'list.json'}: the audit record must be a JSON object"
    assert err[3].startswith(f"{tmp_path / 'own-bad.json'}: own: missing field 'secret'")


def test_cli_as_a_module(tmp_path: Path) -> None:
    h = play_through(game="módulo", hand=2)
    path = write(tmp_path / "a.json", h.audit)
    done = subprocess.run(
        [sys.executable, "-m", "protocol.verify", path],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert (done.returncode, done.stdout) == (0, "verified: game módulo hand 2\n")


if __name__ == "__main__":
    from tests.protocol.test_shuffle import render_json

    VECTORS.write_text(render_json(build_audit_vectors()) + "\n", encoding="utf-8")
    print(f"wrote {VECTORS}")
