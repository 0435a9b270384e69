"""Accounts benchmark: what a log-in costs, and what checking a session costs per ``auth``.

    python -m load_tests.bench_accounts              # Redis: starts a private redis-server
    python -m load_tests.bench_accounts --memory     # the in-process store
    python -m load_tests.bench_accounts --redis URL  # an existing Redis (own key prefix)

Prints argon2id hash and verify times (the service's parameters, ``password_hasher()``), the
time of a whole ``Accounts.log_in`` (throttle checks, one verify, a new session), and session
checks per second through ``Accounts.verify`` (the store read every WebSocket ``auth`` and
every authenticated HTTP call makes). The last line is ``session_checks_per_second: N``.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
import uuid

from load_tests.bench_store import percentile, private_redis
from server.accounts import AccountPolicy, Accounts, Limit, password_hasher
from server.store import open_league_store
from server.store.league import LeagueStore


def timed_ms(fn: object, *args: object, rounds: int) -> list[float]:
    out = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn(*args)  # type: ignore[operator]
        out.append((time.perf_counter() - start) * 1000)
    return sorted(out)


async def run(store: LeagueStore, args: argparse.Namespace) -> None:
    hasher = password_hasher()
    print(
        f"argon2id parameters: time_cost={hasher.time_cost} memory_cost={hasher.memory_cost} KiB "
        f"parallelism={hasher.parallelism}"
    )
    hashes = timed_ms(hasher.hash, "a password of some length", rounds=args.hashes)
    hashed = hasher.hash("a password of some length")
    verifies = timed_ms(hasher.verify, hashed, "a password of some length", rounds=args.hashes)
    print(f"hash_ms median {statistics.median(hashes):.1f}  p99 {percentile(hashes, 0.99):.1f}")
    median, p99 = statistics.median(verifies), percentile(verifies, 0.99)
    print(f"verify_ms median {median:.1f}  p99 {p99:.1f}")

    generous = Limit(10**9, 60.0)
    policy = AccountPolicy(
        login_per_account=generous,
        login_per_address=generous,
        signups_per_address=generous,
        guests_per_address=generous,
    )
    accounts = Accounts(store, b"bench-secret", time.time, policy, hasher)
    name = f"Bench{uuid.uuid4().hex[:8]}"
    await accounts.sign_up(name, "a password of some length", "127.0.0.1")
    logins = []
    tokens = []
    for _ in range(args.logins):
        start = time.perf_counter()
        _, token = await accounts.log_in(name, "a password of some length", "127.0.0.1")
        logins.append((time.perf_counter() - start) * 1000)
        tokens.append(token)
    logins.sort()
    print(f"log_in_ms median {statistics.median(logins):.1f}  p99 {percentile(logins, 0.99):.1f}")

    deadline = time.perf_counter() + args.seconds

    async def checker(k: int) -> int:
        done = 0
        while time.perf_counter() < deadline:
            assert await accounts.verify(tokens[(k + done) % len(tokens)]) is not None
            done += 1
        return done

    start = time.perf_counter()
    counts = await asyncio.gather(*(checker(k) for k in range(args.concurrency)))
    elapsed = time.perf_counter() - start
    print(f"session checks: {sum(counts)} in {elapsed:.1f} s with {args.concurrency} tasks")
    print(f"session_checks_per_second: {sum(counts) / elapsed:.0f}")


async def main_async(args: argparse.Namespace, url: str | None) -> None:
    store = open_league_store(url, prefix=f"bench-{uuid.uuid4().hex[:6]}")
    try:
        await run(store, args)
    finally:
        await store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--redis", help="an existing Redis URL (default: a private one)")
    parser.add_argument("--memory", action="store_true", help="the in-process store")
    parser.add_argument("--hashes", type=int, default=30)
    parser.add_argument("--logins", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()
    if args.memory:
        asyncio.run(main_async(args, None))
    elif args.redis:
        asyncio.run(main_async(args, args.redis))
    else:
        with private_redis() as url:
            asyncio.run(main_async(args, url))


if __name__ == "__main__":
    main()
