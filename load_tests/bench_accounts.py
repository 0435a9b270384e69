"""Accounts benchmark: what a log-in costs, and what checking a session costs per ``auth``.

    python -m load_tests.bench_accounts              # Redis: starts a private redis-server
    python -m load_tests.bench_accounts --memory     # the in-process store
    python -m load_tests.bench_accounts --redis URL  # an existing Redis (own key prefix)

Sessions and throttles go to that store; account rows to the store of record, a SQLite file in
a temp folder unless ``--database URL`` names one (postgresql+asyncpg://…).

Prints argon2id hash and verify times (the service's parameters, ``password_hasher()``), the
time of a whole ``Accounts.log_in`` (throttle checks, one verify, a new session), and session
checks per second through ``Accounts.verify`` (the store read every WebSocket ``auth`` and
every authenticated HTTP call makes). Then, on a virtual clock (``--hours`` of it, the default
throttles, argon2id at its lowest cost: only the throttles are measured), a guesser trying one
account as fast as it is let (every 0.25 s), from one address and from ``--addresses`` of them,
while the owner logs in from a fresh address every 61 s, retrying each second until let in:
``attacker_guesses_per_hour`` (guesses that reached the password check) and
``owner_login_wait_s`` (median and worst) for each. The last line is
``session_checks_per_second: N``.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from argon2 import PasswordHasher

from load_tests.bench_rules import machine_speed, machine_speed_line
from load_tests.bench_store import percentile, private_redis
from protocol.errors import ProtocolError
from server.accounts.keys import FixedKey
from server.accounts.service import AccountPolicy, Accounts, Limit, password_hasher
from server.record.migrate import migrate
from server.record.store import RecordStore
from server.store import open_league_store
from server.store.league import LeagueStore


def timed_ms(fn: object, *args: object, rounds: int) -> list[float]:
    out = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn(*args)  # type: ignore[operator]
        out.append((time.perf_counter() - start) * 1000)
    return sorted(out)


async def service(
    records: RecordStore,
    store: LeagueStore,
    clock: Callable[[], float],
    policy: AccountPolicy,
    hasher: PasswordHasher,
) -> Accounts:
    accounts = Accounts(records, store, FixedKey(b"bench-secret"), clock, policy, hasher)
    await accounts.start()
    return accounts


async def run(records: RecordStore, store: LeagueStore, args: argparse.Namespace) -> None:
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
        login_per_pair=generous,
        login_per_account=generous,
        login_per_address=generous,
        signups_per_address=generous,
        guests_per_address=generous,
    )
    accounts = await service(records, store, time.time, policy, hasher)
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


class VirtualClock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


async def guessing(
    records: RecordStore, store: LeagueStore, hours: float, addresses: int
) -> tuple[float, list[float]]:
    """(the guesser's guesses per hour, the owner's waits in seconds) on a virtual clock."""
    clock = VirtualClock()
    cheap = PasswordHasher(time_cost=1, memory_cost=8, parallelism=1)
    accounts = await service(records, store, clock, AccountPolicy(), cheap)
    name, password = f"Own{uuid.uuid4().hex[:8]}x", "the owner's password"
    await accounts.sign_up(name, password, "10.255.0.1")
    rng = random.Random(1)
    guesses, waits, owner_since, tick = 0, [], None, 0
    fresh = (f"10.{k // 250 % 250}.{k % 250}.9" for k in range(10**9))

    async def attempt(secret: str, address: str) -> str:
        try:
            await accounts.log_in(name, secret, address)
            return "ok"
        except ProtocolError as e:
            return e.code

    while tick * 0.25 < hours * 3600:
        clock.now += 0.25
        tick += 1
        owner_turn = owner_since is not None and tick % 4 == 0  # the owner retries each second
        if tick % 244 == 0 and owner_since is None:
            owner_since, owner_turn = clock.now, True
        # Who reaches the store first when both try in one tick is a coin toss.
        order = ["guesser", "owner"] if rng.random() < 0.5 else ["owner", "guesser"]
        for who in order:
            if who == "guesser":
                address = f"198.18.{tick % addresses // 250}.{tick % addresses % 250}"
                guesses += await attempt(f"guess {tick}", address) == "wrong_credentials"
            elif (
                owner_turn
                and owner_since is not None
                and await attempt(password, next(fresh)) == "ok"
            ):
                waits.append(clock.now - owner_since)
                owner_since = None
    return guesses / hours, sorted(waits)


async def throttle_figures(
    records: RecordStore, store: LeagueStore, args: argparse.Namespace
) -> None:
    for addresses in (1, args.addresses):
        per_hour, waits = await guessing(records, store, args.hours, addresses)
        print(
            f"from {addresses} address(es): attacker_guesses_per_hour {per_hour:.0f}; "
            f"owner_login_wait_s median {statistics.median(waits):.2f} max {waits[-1]:.2f} "
            f"over {len(waits)} log-ins"
        )
        if addresses == 1:
            one = (per_hour, waits[-1])
    print(f"attacker_guesses_per_hour_one_address: {one[0]:.0f}")
    print(f"attacker_guesses_per_hour_many_addresses: {per_hour:.0f}")
    print(f"owner_login_wait_s: {one[1]:.2f}")


async def main_async(args: argparse.Namespace, url: str | None) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-accounts-") as folder:
        database = args.database or f"sqlite+aiosqlite:///{Path(folder) / 'record.sqlite3'}"
        await migrate(database)
        records = RecordStore.open(database)
        store = open_league_store(url, prefix=f"bench-{uuid.uuid4().hex[:6]}")
        try:
            await throttle_figures(records, store, args)
            await run(records, store, args)
        finally:
            await store.close()
            await records.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--redis", help="an existing Redis URL (default: a private one)")
    parser.add_argument("--memory", action="store_true", help="the in-process store")
    parser.add_argument("--database", help="the store of record's URL (default: a temp SQLite)")
    parser.add_argument("--hashes", type=int, default=30)
    parser.add_argument("--logins", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--hours", type=float, default=1.0, help="virtual hours of guessing")
    parser.add_argument("--addresses", type=int, default=1000, help="the many-address guesser's")
    args = parser.parse_args()
    print(machine_speed_line(machine_speed()))
    if args.memory:
        asyncio.run(main_async(args, None))
    elif args.redis:
        asyncio.run(main_async(args, args.redis))
    else:
        with private_redis() as url:
            asyncio.run(main_async(args, url))


if __name__ == "__main__":
    main()
