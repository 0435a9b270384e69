"""The fair-deal derivation: exact bytes, known answers, rejection sampling, fairness.

Regenerate protocol/vectors/deal-v1.json (only if the v1 spec itself ever had to change,
which it must not): ``.venv/bin/python -m tests.protocol.test_shuffle``.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import struct
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import protocol
from protocol import shuffle
from protocol.cards import card_name, names_of, parse_card
from protocol.shuffle import (
    SeatSecret,
    absent_secret,
    bot_secret,
    deal_context,
    deal_hands,
    derive_deck,
    key_stream_block,
    new_secret,
    seat_commitment,
    secrets_for_seats,
    server_commitment,
    shuffle_deck,
)

VECTORS = Path(protocol.__file__).parent / "vectors" / "deal-v1.json"


def fixed(label: str) -> bytes:
    """A reproducible 32-byte value, so vectors and statistics never depend on chance."""
    return hashlib.sha256(b"hearts test " + label.encode()).digest()


# --- a second, deliberately plain implementation of the spec -----------------------------


def reference_words(ctx: bytes, key: bytes) -> Iterator[int]:
    """Key's stream read 4 bytes at a time, straight from the spec's wording."""
    counter = 0
    while True:
        block = hmac.new(key, ctx + struct.pack(">I", counter), hashlib.sha256).digest()
        for k in range(0, 32, 4):
            yield int.from_bytes(block[k : k + 4], "big")
        counter += 1


def reference_shuffle(deck: list[int], words: Iterator[int]) -> None:
    for i in range(51, 0, -1):
        n = i + 1
        limit = 2**32 - (2**32 % n)
        while True:
            x = next(words)
            if x < limit:
                break
        j = x % n
        deck[i], deck[j] = deck[j], deck[i]


def reference_deck(ctx: bytes, server_secret: bytes, secrets: Sequence[bytes]) -> list[int]:
    deck = list(range(52))
    for key in (server_secret, *secrets):
        reference_shuffle(deck, reference_words(ctx, key))
    return deck


# --- bytes on the wire ---------------------------------------------------------------------


def test_context_layout() -> None:
    assert deal_context("ab", 258) == b"hearts-deal-v1\x00\x02ab\x00\x00\x01\x02"
    g = "tåble"  # length is counted in UTF-8 bytes, not characters
    assert deal_context(g, 1) == b"hearts-deal-v1\x00\x06" + g.encode() + b"\x00\x00\x00\x01"
    assert deal_context("", 1) == b"hearts-deal-v1\x00\x00\x00\x00\x00\x01"


def test_commitments_and_derived_secrets_follow_the_spec() -> None:
    ctx = deal_context("g-1", 3)
    s, r = fixed("S"), fixed("r")
    assert server_commitment(ctx, s) == hashlib.sha256(ctx + b"srv" + s).digest()
    assert seat_commitment(ctx, 2, r) == hashlib.sha256(ctx + b"seat\x02" + r).digest()
    assert bot_secret(ctx, s, 1) == hmac.new(s, ctx + b"bot\x01", hashlib.sha256).digest()
    assert absent_secret(ctx, s, 3) == hmac.new(s, ctx + b"absent\x03", hashlib.sha256).digest()
    assert key_stream_block(ctx, s, 5) == hmac.new(s, ctx + b"\0\0\0\5", hashlib.sha256).digest()
    # Contexts separate games and hands, so a secret cannot be replayed into another deal.
    assert server_commitment(deal_context("g-1", 4), s) != server_commitment(ctx, s)
    assert bot_secret(ctx, s, 1) != bot_secret(ctx, s, 2) != absent_secret(ctx, s, 2)


def test_new_secret_is_32_fresh_bytes() -> None:
    a, b = new_secret(), new_secret()
    assert len(a) == len(b) == 32 and a != b


@pytest.mark.parametrize(
    "call",
    [
        lambda: deal_context("g", 0),
        lambda: deal_context("g", 2**32),
        lambda: deal_context("g", True),
        lambda: deal_context("é" * 40_000, 1),
        lambda: server_commitment(b"ctx", b"\0" * 31),
        lambda: seat_commitment(b"ctx", 0, b"\0" * 33),
        lambda: seat_commitment(b"ctx", 4, b"\0" * 32),
        lambda: bot_secret(b"ctx", b"\0" * 32, -1),
        lambda: absent_secret(b"ctx", b"short", 0),
        lambda: derive_deck(b"ctx", b"\0" * 32, [b"\0" * 32] * 3),
        lambda: derive_deck(b"ctx", b"\0" * 32, [b"\0" * 32] * 3 + [b"\0" * 16]),
        lambda: derive_deck(b"ctx", "0" * 32, [b"\0" * 32] * 4),  # type: ignore[arg-type]
        lambda: deal_hands([*range(51), 0]),
    ],
)
def test_bad_inputs_raise_value_error(call: Callable[[], object]) -> None:
    with pytest.raises(ValueError):
        call()


def test_secrets_for_seats_checks_and_derives() -> None:
    ctx, s, r = deal_context("g", 1), fixed("S"), fixed("r")
    seats = [
        SeatSecret("human", r, seat_commitment(ctx, 0, r)),
        SeatSecret("bot"),
        SeatSecret("absent"),
        SeatSecret("absent", commitment=seat_commitment(ctx, 3, fixed("never shown"))),
    ]
    assert secrets_for_seats(ctx, s, seats) == [
        r,
        bot_secret(ctx, s, 1),
        absent_secret(ctx, s, 2),
        absent_secret(ctx, s, 3),
    ]
    wrong = [SeatSecret("human", r, seat_commitment(ctx, 1, r)), *seats[1:]]
    with pytest.raises(ValueError, match="does not match its commitment"):
        secrets_for_seats(ctx, s, wrong)
    with pytest.raises(ValueError, match="bot seat 1"):
        secrets_for_seats(ctx, s, [seats[0], SeatSecret("bot", r), *seats[2:]])
    with pytest.raises(ValueError, match="exactly 4"):
        secrets_for_seats(ctx, s, seats[:3])


# --- the deck --------------------------------------------------------------------------------

secret32 = st.binary(min_size=32, max_size=32)


@settings(max_examples=60, deadline=None)
@given(
    game=st.text(max_size=20),
    hand=st.integers(1, 2**32 - 1),
    server=secret32,
    seats=st.lists(secret32, min_size=4, max_size=4),
)
def test_derive_deck_is_a_permutation_and_matches_the_plain_reading(
    game: str, hand: int, server: bytes, seats: list[bytes]
) -> None:
    ctx = deal_context(game, hand)
    deck = derive_deck(ctx, server, seats)
    assert sorted(deck) == list(range(52))
    assert deck == reference_deck(ctx, server, seats)
    hands = deal_hands(deck)
    assert [bin(m).count("1") for m in hands] == [13] * 4
    assert hands[0] | hands[1] | hands[2] | hands[3] == (1 << 52) - 1
    assert hands[2] == sum(1 << c for c in deck[26:39])


def test_every_secret_changes_the_deal() -> None:
    ctx, s = deal_context("g", 1), fixed("S")
    seats = [fixed(f"seat{j}") for j in range(4)]
    base = derive_deck(ctx, s, seats)
    assert derive_deck(ctx, fixed("S'"), seats) != base
    for j in range(4):
        changed = list(seats)
        changed[j] = fixed(f"other{j}")
        assert derive_deck(ctx, s, changed) != base


def test_rejection_sampling_on_crafted_words() -> None:
    limit_52 = 2**32 - 2**32 % 52  # 4294967248: words at or above it are redrawn
    words = [limit_52, 2**32 - 1, limit_52 - 1, *range(7, 7 + 60)]
    deck = list(range(52))
    shuffle._fisher_yates(deck, list(words), lambda: [])
    expected = list(range(52))
    reference_shuffle(expected, iter(words))
    assert deck == expected
    assert deck[51] == (limit_52 - 1) % 52  # the first two words were rejected


def test_rejections_in_the_real_stream_fall_back_exactly(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rejections are too rare to meet by chance, so force them into the HMAC output: one mid-
    stream (fast path hands over) and a whole block of them (the spare words run out)."""
    ctx, key = deal_context("g", 9), fixed("key")
    real = shuffle._hmac_blocks

    def tampered_block(counter: int) -> bytes:
        block = bytearray(real(key, [ctx + struct.pack(">I", counter)]))
        if counter == 1:
            block[8:12] = b"\xff" * 4  # word 10
        if counter == 6:
            block[:] = b"\xff" * 32  # words 48..55, all rejected
        return bytes(block)

    def fake(k: bytes, msgs: Sequence[bytes]) -> bytes:
        assert k == key
        return b"".join(tampered_block(int.from_bytes(m[-4:], "big")) for m in msgs)

    def words() -> Iterator[int]:
        counter = 0
        while True:
            yield from struct.unpack(">8I", tampered_block(counter))
            counter += 1

    monkeypatch.setattr(shuffle, "_hmac_blocks", fake)
    deck = list(range(52))
    shuffle_deck(ctx, deck, key)
    expected = list(range(52))
    reference_shuffle(expected, words())
    assert deck == expected


# --- known answers -------------------------------------------------------------------------

VECTOR_CASES: list[dict[str, Any]] = [
    {
        "name": "four humans",
        "game": "g-0001",
        "hand": 1,
        "seats": ["human", "human", "human", "human"],
    },
    {
        "name": "humans, a bot and a seat that never committed",
        "game": "tåble-ü \U0001f0a1",
        "hand": 2,
        "seats": ["human", "bot", "absent", "human"],
    },
    {"name": "four bots, empty game id", "game": "", "hand": 4, "seats": ["bot"] * 4},
    {
        "name": "a seat that committed but never revealed; last hand number",
        "game": "room:7f3a/game:12",
        "hand": 2**32 - 1,
        "seats": ["absent-committed", "human", "bot", "bot"],
    },
    {
        "name": "long game id (length above 255), hand 256",
        "game": "x" * 300 + "ß",
        "hand": 256,
        "seats": ["bot", "human", "absent", "human"],
    },
]


def vector_inputs(case: dict[str, Any]) -> dict[str, Any]:
    seats = []
    for j, kind in enumerate(case["seats"]):
        entry: dict[str, Any] = {"seat": j, "kind": kind.split("-")[0]}
        if kind == "human":
            entry["secret"] = fixed(f"{case['name']} seat {j}").hex()
        if kind == "absent-committed":
            hidden = fixed(f"{case['name']} seat {j} unrevealed")
            ctx = deal_context(case["game"], case["hand"])
            entry["commitment"] = seat_commitment(ctx, j, hidden).hex()
        seats.append(entry)
    return {
        "name": case["name"],
        "game": case["game"],
        "hand": case["hand"],
        "server_secret": fixed(f"{case['name']} S").hex(),
        "seats": seats,
    }


def vector_outputs(inputs: dict[str, Any]) -> dict[str, Any]:
    """Everything an implementation should reproduce, intermediate steps included so a
    mismatch can be located."""
    ctx = deal_context(inputs["game"], inputs["hand"])
    s = bytes.fromhex(inputs["server_secret"])
    entries = []
    for seat in inputs["seats"]:
        secret = bytes.fromhex(seat["secret"]) if "secret" in seat else None
        commitment = bytes.fromhex(seat["commitment"]) if "commitment" in seat else None
        if seat["kind"] == "human":
            assert secret is not None
            commitment = seat_commitment(ctx, seat["seat"], secret)
        entries.append(SeatSecret(seat["kind"], secret, commitment))
    used = secrets_for_seats(ctx, s, entries)
    decks, deck = [], list(range(52))
    for key in (s, *used):
        shuffle_deck(ctx, deck, key)
        decks.append(list(deck))
    assert deck == derive_deck(ctx, s, used)
    return {
        "ctx": ctx.hex(),
        "server_commitment": server_commitment(ctx, s).hex(),
        "seats": [
            {
                "seat": j,
                "kind": e.kind,
                "commitment": None if e.commitment is None else e.commitment.hex(),
                "secret": used[j].hex(),
            }
            for j, e in enumerate(entries)
        ],
        "server_stream": [key_stream_block(ctx, s, c).hex() for c in (0, 1)],
        "deck_after_each_shuffle": decks,
        "deck": [card_name(c) for c in deck],
        "hands": [names_of(m) for m in deal_hands(deck)],
    }


def build_vectors() -> dict[str, Any]:
    cases = []
    for case in VECTOR_CASES:
        inputs = vector_inputs(case)
        cases.append({**inputs, "expected": vector_outputs(inputs)})
    return {
        "about": (
            "Known answers for the Hearts fair deal v1 (docs/fair-deal.md). Inputs: game, "
            "hand, server_secret, seats (kind; secret for a human; commitment for an absent "
            "seat that committed). expected.seats[j].secret is the secret the deck was "
            "shuffled by; deck_after_each_shuffle[k] is the deck (card numbers) after the "
            "shuffle by S (k=0) and by seat k-1's secret; hands are in display order."
        ),
        "cases": cases,
    }


def test_known_answer_vectors_reproduce() -> None:
    data = json.loads(VECTORS.read_text(encoding="utf-8"))
    assert len(data["cases"]) >= 5
    for case in data["cases"]:
        inputs = {k: case[k] for k in ("name", "game", "hand", "server_secret", "seats")}
        assert vector_outputs(inputs) == case["expected"], case["name"]
        # And through the plain reference, independent of shuffle_deck.
        ctx = bytes.fromhex(case["expected"]["ctx"])
        used = [bytes.fromhex(e["secret"]) for e in case["expected"]["seats"]]
        deck = reference_deck(ctx, bytes.fromhex(case["server_secret"]), used)
        assert [card_name(c) for c in deck] == case["expected"]["deck"]


def test_vectors_file_is_what_this_code_generates() -> None:
    assert json.loads(VECTORS.read_text(encoding="utf-8")) == build_vectors()


# --- fairness --------------------------------------------------------------------------------

DEALS = 5200  # 100 expected per (position, card) cell; about 0.7 s per run
# Critical values, from the Wilson-Hilferty approximation to the chi-square quantile
# (k * (1 - 2/(9k) + z * sqrt(2/(9k)))^3, z = 4.753 for an upper tail of 1e-6), checked
# against the incomplete gamma function: P(chi2_51 > 115) ≈ 7.6e-7.
# Each position (and each card) is one test with 51 degrees of freedom; 104 of them at
# 7.6e-7 give a family-wise false alarm rate below 1e-4. The inputs are fixed (SHA-256 of a
# counter), so the test cannot flake either way; the thresholds only decide what counts as
# biased. The pooled sum over positions has mean 52*51 = 2652; 3015 is its 1e-6 quantile by
# the same approximation (the rows of a permutation table are only weakly dependent).
CRITICAL_51 = 115.0
CRITICAL_POOLED = 3015.0


def position_counts(make_deck: Callable[[int], Sequence[int]]) -> list[list[int]]:
    counts = [[0] * 52 for _ in range(52)]  # counts[position][card]
    for n in range(DEALS):
        for position, card in enumerate(make_deck(n)):
            counts[position][card] += 1
    return counts


def chi_squares(counts: list[list[int]]) -> tuple[list[float], list[float]]:
    expected = DEALS / 52
    per_position = [sum((c - expected) ** 2 / expected for c in row) for row in counts]
    per_card = [
        sum((counts[p][card] - expected) ** 2 / expected for p in range(52)) for card in range(52)
    ]
    return per_position, per_card


@pytest.mark.parametrize("free_seat", [0, 3])
def test_one_honest_seat_makes_every_card_equally_likely_everywhere(free_seat: int) -> None:
    """S and three seats' secrets fixed (as a colluding server and three players could fix
    them); only one seat's secret varies. The first and the last shuffler are both tried."""
    ctx, s = deal_context("fairness", 1), fixed("S")
    seats = [fixed(f"colluder {j}") for j in range(4)]

    def deck(n: int) -> list[int]:
        seats[free_seat] = hashlib.sha256(b"honest seat %d" % n).digest()
        return derive_deck(ctx, s, seats)

    per_position, per_card = chi_squares(position_counts(deck))
    worst_position = max(range(52), key=lambda p: per_position[p])
    worst_card = max(range(52), key=lambda c: per_card[c])
    assert per_position[worst_position] < CRITICAL_51, f"position {worst_position} is biased"
    assert per_card[worst_card] < CRITICAL_51, f"{card_name(worst_card)} is biased"
    assert sum(per_position) < CRITICAL_POOLED


def test_the_fairness_check_catches_a_classic_biased_shuffle() -> None:
    """The same statistics flag the textbook mistake (for every i, swap with any j in
    0..51: 52^52 equally likely paths cannot map evenly onto 52! orders), so the thresholds
    above are not so loose that they pass everything. (Observed: worst position ≈ 250,
    pooled ≈ 6300.)"""

    def naive(n: int) -> list[int]:
        words = reference_words(b"naive", hashlib.sha256(b"%d" % n).digest())
        deck = list(range(52))
        for i in range(52):
            j = next(words) % 52
            deck[i], deck[j] = deck[j], deck[i]
        return deck

    per_position, _ = chi_squares(position_counts(naive))
    assert max(per_position) > CRITICAL_51
    assert sum(per_position) > CRITICAL_POOLED


def test_card_names_of_vector_hands_are_cards() -> None:
    data = json.loads(VECTORS.read_text(encoding="utf-8"))
    for case in data["cases"]:
        cards = [parse_card(n) for hand in case["expected"]["hands"] for n in hand]
        assert sorted(cards) == list(range(52))


def render_json(value: object, indent: str = "") -> str:
    """JSON with each list of plain values on one line, so a 52-card deck reads as a row."""
    inner = indent + " "
    if isinstance(value, dict):
        items = [f"{inner}{json.dumps(k)}: {render_json(v, inner)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + indent + "}"
    if isinstance(value, list) and any(isinstance(v, dict | list) for v in value):
        items = [inner + render_json(v, inner) for v in value]
        return "[\n" + ",\n".join(items) + "\n" + indent + "]"
    return json.dumps(value, ensure_ascii=False)


if __name__ == "__main__":
    VECTORS.parent.mkdir(exist_ok=True)
    VECTORS.write_text(render_json(build_vectors()) + "\n", encoding="utf-8")
    print(f"wrote {VECTORS}")
