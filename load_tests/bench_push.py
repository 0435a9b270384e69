"""Web Push lag: from the commit that makes it an away seat's turn to the push service receiving
the push, with many subscribed away seats (issue 54).

One process: the room service, its scheduler and the push sender as a node runs them (the
in-process room store, the store of record in a SQLite file of a temp folder), and a push
service on 127.0.0.1 that answers 201 and notes when each push arrived (by its Topic, one per
room). ``--seats`` correspondence tables, each with one subscribed human who has no socket
and three bots, are started ``--rate`` a second; the deal makes it the human's turn (the pass),
and that commit's time is taken when its events come out of the commit (``on_events``).

    nice python -m load_tests.bench_push --seats 1000 --rate 100

prints ``name: value`` lines: ``push_lag_ms_p50``, ``push_lag_ms_p99``, ``push_lag_ms_max``,
``pushes_received`` and ``machine_rules_hands_per_second``.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import tempfile
import time
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from load_tests.bench_rules import machine_speed, machine_speed_line
from server.core.room.commands import Event, FillBots, Start
from server.core.room.notices import PushPolicy
from server.core.room.state import Clocks, TableOptions
from server.play.bot_pool import BotPool
from server.play.rooms import RoomService
from server.play.scheduler import DeadlineAlarm, Scheduler
from server.push.keys import VapidKeys
from server.push.message import topic
from server.push.sender import PushSender
from server.record.migrate import migrate
from server.record.push import Subscription
from server.record.store import RecordStore
from server.store.memory.rooms import MemoryRoomStore


class PushReceiver:
    """The receiving end: reads each request, answers 201, notes the Topic's arrival time."""

    def __init__(self) -> None:
        self.arrived: dict[str, float] = {}
        self.port = 0

    async def start(self) -> None:
        server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = server.sockets[0].getsockname()[1]

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                at = time.time()
                headers = dict(
                    line.split(": ", 1) for line in head.decode().split("\r\n")[1:] if ": " in line
                )
                lower = {k.lower(): v for k, v in headers.items()}
                await reader.readexactly(int(lower.get("content-length", "0")))
                self.arrived.setdefault(lower.get("topic", ""), at)
                writer.write(b"HTTP/1.1 201 Created\r\ncontent-length: 0\r\n\r\n")
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()


def p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def run(seats: int, rate: float, folder: Path) -> dict[str, float]:
    receiver = PushReceiver()
    await receiver.start()
    record = RecordStore.open(f"sqlite+aiosqlite:///{folder / 'record.sqlite3'}")
    await migrate(record.engine)
    sender = PushSender(
        record, VapidKeys(record, time.time), contact="mailto:bench@localhost", allow_loopback=True
    )
    await sender.start()
    committed: dict[str, float] = {}

    def on_events(room: str, first: int, events: list[Event]) -> None:
        if any(e.type == "your_turn" and e.audience == 0 for e in events):
            committed.setdefault(topic(room), time.time())

    alarm = DeadlineAlarm(time.time, 0.05)
    rooms = RoomService(
        MemoryRoomStore(),
        BotPool(workers=0),
        time.time,
        on_commit=alarm.committed,
        on_events=on_events,
        push=sender.deliver,
        push_policy=PushPolicy(interval=0.0),
    )
    scheduler = Scheduler(rooms, alarm)
    await scheduler.start()
    options = TableOptions(
        pace="correspondence", clocks=Clocks(bot_think=0.0, shuffle=0.2, between_hands=0.0)
    )
    for i in range(seats):
        key = ec.generate_private_key(ec.SECP256R1()).public_key()
        point = key.public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
        )
        await record.add_subscription(
            Subscription(
                f"http://127.0.0.1:{receiver.port}/push/{i}",
                f"p{i}",
                base64.urlsafe_b64encode(point).rstrip(b"=").decode(),
                "AAAAAAAAAAAAAAAAAAAAAA",
                time.time(),
            )
        )
    started = time.monotonic()
    for i in range(seats):
        state = await rooms.create(
            kind="friends", host=f"p{i}", host_name=f"Player {i}", options=options
        )
        await rooms.apply(state.id, FillBots(f"p{i}", "random"))  # bots cost no search here
        await rooms.apply(state.id, Start(f"p{i}"))
        await asyncio.sleep(max(0.0, started + (i + 1) / rate - time.monotonic()))
    deadline = time.monotonic() + 60
    while len(receiver.arrived) < seats and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    await scheduler.stop()
    await sender.stop()
    await record.close()
    lags = [
        (receiver.arrived[t] - at) * 1000 for t, at in committed.items() if t in receiver.arrived
    ]
    return {
        "push_lag_ms_p50": p(lags, 0.50),
        "push_lag_ms_p99": p(lags, 0.99),
        "push_lag_ms_max": max(lags),
        "pushes_received": float(len(receiver.arrived)),
        "away_seats": float(seats),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seats", type=int, default=1000)
    parser.add_argument("--rate", type=float, default=100.0, help="tables started a second")
    args = parser.parse_args()
    print(machine_speed_line(machine_speed()))
    with tempfile.TemporaryDirectory(prefix="bench-push-") as folder:
        figures = asyncio.run(run(args.seats, args.rate, Path(folder)))
    for name, value in figures.items():
        print(f"{name}: {value:.0f}")


if __name__ == "__main__":
    main()
