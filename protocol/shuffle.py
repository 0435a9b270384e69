"""The commit-reveal fair deal, version 1: contexts, commitments, secrets and the deck.

Every seat contributes a 32-byte secret to every deal; the deck is shuffled by the server's
secret and then by each seat's secret in turn, so the deal is uniformly random as long as one
of the five secrets is. The exact byte layout is specified in ``docs/fair-deal.md``; the
known-answer vectors in ``protocol/vectors/deal-v1.json`` pin it for other implementations.

All functions are pure (``new_secret`` aside) and use only SHA-256 and HMAC-SHA-256. Cards are
ints 0..51 as in :mod:`protocol.cards`; a hand is a card-set bitmask.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from protocol.cards import DECK_SIZE

__all__ = [
    "DOMAIN",
    "SECRET_SIZE",
    "SeatKind",
    "SeatSecret",
    "absent_secret",
    "bot_secret",
    "deal_context",
    "deal_hands",
    "derive_deck",
    "key_stream_block",
    "new_secret",
    "seat_commitment",
    "secrets_for_seats",
    "server_commitment",
    "shuffle_deck",
]

DOMAIN = b"hearts-deal-v1"
SECRET_SIZE = 32
SEATS = 4
HAND_SIZE = 13

SeatKind = Literal["human", "bot", "absent"]
SEAT_KINDS: tuple[SeatKind, ...] = ("human", "bot", "absent")

_MAX_HAND = 0xFFFF_FFFF
_MAX_GAME_BYTES = 0xFFFF

# Fisher-Yates steps (i, n = i + 1, rejection limit), precomputed once: the limit is the
# largest multiple of n not above 2^32, so x mod n is exactly uniform for x below it.
_STEPS: tuple[tuple[int, int, int], ...] = tuple(
    (i, i + 1, (1 << 32) - (1 << 32) % (i + 1)) for i in range(DECK_SIZE - 1, 0, -1)
)
# 51 draws need 204 bytes: 7 blocks (56 words) cover them with 5 spare words for rejections,
# which are rarer than 1 in 10^7 per draw; more blocks are computed only if ever needed.
_FIRST_BLOCKS = 7
_WORDS_PER_BLOCK = 8
_FIRST_WORDS = struct.Struct(f">{_FIRST_BLOCKS * _WORDS_PER_BLOCK}I")
_BLOCK_WORDS = struct.Struct(f">{_WORDS_PER_BLOCK}I")

# HMAC by hand (RFC 2104) so one key's padded hash states are computed once and copied per
# block: about twice as fast as hmac.digest for the 7 blocks each key needs.
_IPAD = bytes(b ^ 0x36 for b in range(256))
_OPAD = bytes(b ^ 0x5C for b in range(256))
_SHA256_BLOCK = 64


def _check_secret(secret: bytes, what: str) -> None:
    if not isinstance(secret, bytes | bytearray) or len(secret) != SECRET_SIZE:
        size = len(secret) if isinstance(secret, bytes | bytearray) else type(secret).__name__
        raise ValueError(f"{what} must be exactly {SECRET_SIZE} bytes, got {size}")


def _check_seat(seat: int) -> None:
    if not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat < SEATS:
        raise ValueError(f"seat must be 0..3, got {seat!r}")


def deal_context(game_id: str, hand: int) -> bytes:
    """``b"hearts-deal-v1" ‖ u16(len(g)) ‖ g ‖ u32(hand)`` with g the UTF-8 bytes of game_id.

    Binds every commitment, secret and random stream to one hand of one game, so nothing can
    be replayed into another deal.
    """
    if not isinstance(game_id, str):
        raise ValueError(f"game id must be a str, got {type(game_id).__name__}")
    g = game_id.encode("utf-8")
    if len(g) > _MAX_GAME_BYTES:
        raise ValueError(f"game id is {len(g)} bytes in UTF-8; at most {_MAX_GAME_BYTES}")
    if not isinstance(hand, int) or isinstance(hand, bool) or not 1 <= hand <= _MAX_HAND:
        raise ValueError(f"hand number must be 1..{_MAX_HAND}, got {hand!r}")
    return DOMAIN + len(g).to_bytes(2, "big") + g + hand.to_bytes(4, "big")


def new_secret() -> bytes:
    """32 bytes from the OS CSPRNG, for the server's S or a seat's r_j."""
    return secrets.token_bytes(SECRET_SIZE)


def server_commitment(ctx: bytes, server_secret: bytes) -> bytes:
    """``C_S = SHA-256(ctx ‖ "srv" ‖ S)``; covers the bots' and stand-ins' secrets too."""
    _check_secret(server_secret, "server secret")
    return hashlib.sha256(ctx + b"srv" + server_secret).digest()


def seat_commitment(ctx: bytes, seat: int, secret: bytes) -> bytes:
    """``c_j = SHA-256(ctx ‖ "seat" ‖ u8(j) ‖ r_j)``, sent by human seat j before any reveal."""
    _check_seat(seat)
    _check_secret(secret, f"seat {seat}'s secret")
    return hashlib.sha256(ctx + b"seat" + bytes((seat,)) + secret).digest()


def bot_secret(ctx: bytes, server_secret: bytes, seat: int) -> bytes:
    """``b_j = HMAC-SHA-256(S, ctx ‖ "bot" ‖ u8(j))``: a bot's secret, fixed by C_S."""
    _check_seat(seat)
    _check_secret(server_secret, "server secret")
    return hmac.digest(server_secret, ctx + b"bot" + bytes((seat,)), "sha256")


def absent_secret(ctx: bytes, server_secret: bytes, seat: int) -> bytes:
    """``a_j = HMAC-SHA-256(S, ctx ‖ "absent" ‖ u8(j))``: the stand-in for a seat that did
    not commit or reveal in time."""
    _check_seat(seat)
    _check_secret(server_secret, "server secret")
    return hmac.digest(server_secret, ctx + b"absent" + bytes((seat,)), "sha256")


@dataclass(frozen=True, slots=True)
class SeatSecret:
    """What one seat contributed to a deal, as the server knows it.

    ``human``: ``secret`` is the revealed r_j and ``commitment`` its c_j (both required).
    ``bot``: neither; the secret is derived from S. ``absent``: the secret is the stand-in
    derived from S; ``commitment`` is the c_j the seat sent if it committed but never
    revealed, else None.
    """

    kind: SeatKind
    secret: bytes | None = None
    commitment: bytes | None = None


def secrets_for_seats(ctx: bytes, server_secret: bytes, seats: Sequence[SeatSecret]) -> list[bytes]:
    """The four secrets the deck is shuffled by, seat 0 first.

    Checks each human seat's secret against its commitment (ValueError if it does not match),
    and derives the bots' and absent seats' secrets from S.
    """
    if len(seats) != SEATS:
        raise ValueError(f"need exactly {SEATS} seats, got {len(seats)}")
    out: list[bytes] = []
    for j, entry in enumerate(seats):
        if entry.kind == "human":
            if entry.secret is None or entry.commitment is None:
                raise ValueError(f"human seat {j} needs its secret and its commitment")
            if seat_commitment(ctx, j, entry.secret) != entry.commitment:
                raise ValueError(f"seat {j}'s secret does not match its commitment")
            out.append(bytes(entry.secret))
        elif entry.kind == "bot":
            if entry.secret is not None or entry.commitment is not None:
                raise ValueError(f"bot seat {j} takes no secret or commitment: they come from S")
            out.append(bot_secret(ctx, server_secret, j))
        elif entry.kind == "absent":
            if entry.secret is not None:
                raise ValueError(f"absent seat {j} takes no secret: its stand-in comes from S")
            if entry.commitment is not None and len(entry.commitment) != SECRET_SIZE:
                raise ValueError(f"seat {j}'s commitment must be {SECRET_SIZE} bytes")
            out.append(absent_secret(ctx, server_secret, j))
        else:
            raise ValueError(f"seat {j}: unknown kind {entry.kind!r}")
    return out


def _hmac_blocks(key: bytes, msgs: Sequence[bytes]) -> bytes:
    """HMAC-SHA-256(key, m) for each m, concatenated. key is 32 bytes (already checked)."""
    padded = key.ljust(_SHA256_BLOCK, b"\0")
    inner = hashlib.sha256(padded.translate(_IPAD))
    outer = hashlib.sha256(padded.translate(_OPAD))
    out = []
    for msg in msgs:
        i = inner.copy()
        i.update(msg)
        o = outer.copy()
        o.update(i.digest())
        out.append(o.digest())
    return b"".join(out)


def _block_messages(ctx: bytes, first: int, count: int) -> list[bytes]:
    return [ctx + c.to_bytes(4, "big") for c in range(first, first + count)]


def key_stream_block(ctx: bytes, key: bytes, counter: int) -> bytes:
    """Block ``counter`` of key's random stream: ``HMAC-SHA-256(key, ctx ‖ u32(counter))``."""
    _check_secret(key, "shuffle key")
    return hmac.digest(key, ctx + counter.to_bytes(4, "big"), "sha256")


def _fisher_yates(
    deck: list[int],
    words: list[int],
    more: Callable[[], Sequence[int]],
    step: int = 0,
) -> None:
    """Shuffle deck in place from a stream of u32 words, starting at Fisher-Yates step
    ``step`` (i = 51 - step) and stream word ``step``; ``more()`` extends the stream.

    For each i = 51 … 1: take words until one is below the rejection limit for n = i + 1,
    then swap deck[i] with deck[word mod n].
    """
    w = step
    for i, n, limit in _STEPS[step:]:
        while True:
            if w == len(words):
                words.extend(more())
            x = words[w]
            w += 1
            if x < limit:
                break
        j = x % n
        deck[i], deck[j] = deck[j], deck[i]


def _shuffle_with(deck: list[int], ctx: bytes, key: bytes, first_msgs: list[bytes]) -> None:
    words = _FIRST_WORDS.unpack(_hmac_blocks(key, first_msgs))
    # Fast path: while no word is rejected, step k uses word k. A rejection (rarer than 1 in
    # 10^7 per draw) hands over to the general loop at that step, which re-reads that word.
    for (i, n, limit), x in zip(_STEPS, words, strict=False):  # 56 words for 51 steps
        if x >= limit:
            break
        j = x % n
        deck[i], deck[j] = deck[j], deck[i]
    else:
        return
    step = DECK_SIZE - 1 - i  # steps run i = 51, 50, …
    counter = _FIRST_BLOCKS

    def more() -> Sequence[int]:
        nonlocal counter
        block = _hmac_blocks(key, _block_messages(ctx, counter, 1))
        counter += 1
        return _BLOCK_WORDS.unpack(block)

    _fisher_yates(deck, list(words), more, step)


def shuffle_deck(ctx: bytes, deck: list[int], key: bytes) -> None:
    """One Fisher-Yates shuffle of deck, in place, driven by key's stream from counter 0."""
    _check_secret(key, "shuffle key")
    if len(deck) != DECK_SIZE:
        raise ValueError(f"deck must have {DECK_SIZE} cards, got {len(deck)}")
    _shuffle_with(deck, ctx, bytes(key), _block_messages(ctx, 0, _FIRST_BLOCKS))


def derive_deck(ctx: bytes, server_secret: bytes, seat_secrets: Sequence[bytes]) -> list[int]:
    """The dealt deck: 0..51 in order, shuffled by S, then by seat 0's … seat 3's secret.

    ``seat_secrets`` are the four secrets actually used (r_j, b_j or a_j; see
    :func:`secrets_for_seats`). Seat s is dealt ``deck[13 s : 13 s + 13]``.
    """
    _check_secret(server_secret, "server secret")
    if len(seat_secrets) != SEATS:
        raise ValueError(f"need exactly {SEATS} seat secrets, got {len(seat_secrets)}")
    for j, s in enumerate(seat_secrets):
        _check_secret(s, f"seat {j}'s secret")
    msgs = _block_messages(ctx, 0, _FIRST_BLOCKS)  # shared by all five keys
    deck = list(range(DECK_SIZE))
    for key in (server_secret, *seat_secrets):
        _shuffle_with(deck, ctx, bytes(key), msgs)
    return deck


def deal_hands(deck: Sequence[int]) -> list[int]:
    """The four hands as card-set bitmasks: seat s gets deck[13 s .. 13 s + 12]."""
    if len(deck) != DECK_SIZE or set(deck) != set(range(DECK_SIZE)):
        raise ValueError("deck must be a permutation of the 52 cards")
    hands = []
    for s in range(SEATS):
        mask = 0
        for card in deck[HAND_SIZE * s : HAND_SIZE * (s + 1)]:
            mask |= 1 << card
        hands.append(mask)
    return hands
