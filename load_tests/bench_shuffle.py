"""Benchmark of the fair deal: derive one hand, verify one full audit record.

``python -m load_tests.bench_shuffle [--runs N]``. Times are medians over N runs, in
microseconds. The audit verified is the sample record shipped in protocol/vectors (a full
13-trick hand with a human, a bot and an absent seat). The last line is exactly
``verify_hand_us: N`` for scripts.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import protocol
from protocol.shuffle import (
    SeatSecret,
    deal_context,
    deal_hands,
    derive_deck,
    new_secret,
    seat_commitment,
    secrets_for_seats,
)
from protocol.verify import verify_audit

SAMPLE = Path(protocol.__file__).parent / "vectors" / "audit-v1.json"


def median_us(call: Callable[[], object], runs: int) -> float:
    for _ in range(min(runs, 50)):  # warm caches and the allocator first
        call()
    samples = []
    for _ in range(runs):
        start = time.perf_counter_ns()
        call()
        samples.append(time.perf_counter_ns() - start)
    return statistics.median(samples) / 1000


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3000)
    runs = parser.parse_args(argv).runs

    s, r0, r2 = new_secret(), new_secret(), new_secret()
    hand = iter(range(1, 10**9))

    def server_deal() -> list[int]:
        # What the server does per hand once the reveals are in: context, check the human
        # reveals against their commitments, derive bots' and stand-ins' secrets, shuffle, deal.
        ctx = deal_context("bench-game", next(hand))
        seats = [
            SeatSecret("human", r0, seat_commitment(ctx, 0, r0)),
            SeatSecret("bot"),
            SeatSecret("human", r2, seat_commitment(ctx, 2, r2)),
            SeatSecret("absent"),
        ]
        return deal_hands(derive_deck(ctx, s, secrets_for_seats(ctx, s, seats)))

    ctx = deal_context("bench-game", 1)
    keys = [new_secret() for _ in range(4)]
    audit = json.loads(SAMPLE.read_text(encoding="utf-8"))["valid"]
    assert verify_audit(audit) == [], "the sample record must verify"

    derive_us = median_us(lambda: derive_deck(ctx, s, keys), runs)
    deal_us = median_us(server_deal, runs)
    verify_us = median_us(lambda: verify_audit(audit), runs)
    print(f"runs: {runs} (median of each)")
    print(f"derive_deck alone (5 keyed shuffles): {derive_us:.1f} us")
    print(f"derive one hand (check reveals, secrets, shuffle, deal): {deal_us:.1f} us")
    print(f"verify one audit (commitments, re-derive, passes, 13 tricks): {verify_us:.1f} us")
    print(f"verify_hand_us: {round(verify_us)}")


if __name__ == "__main__":
    main()
