"""The push sender against the test suite's push service: the VAPID JWT, the encrypted body, the
headers, each answer's consequence; the VAPID key kept once; subscriptions and settings rows."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator

import pytest

from server.core.room.notices import Notice
from server.push.endpoints import Blocked, resolve_public
from server.push.keys import VapidKeys
from server.push.message import topic
from server.push.sender import PushSender
from server.record.push import MAX_DEVICES, PushSettings, Subscription, TooManyDevices
from server.record.store import RecordStore
from tests.support.push_service import PushService
from tests.support.push_service import Subscription as Device


@pytest.fixture
def service() -> Iterator[PushService]:
    with PushService() as running:
        yield running


@pytest.fixture
async def sender(record_store: RecordStore) -> AsyncIterator[PushSender]:
    pushes = PushSender(
        record_store, VapidKeys(record_store, time.time), contact="mailto:ops@example.org",
        allow_loopback=True,
    )
    await pushes.start()
    yield pushes
    await pushes.stop()


def notice(player: str = "p1", kind: str = "turn", key: str = "turn:7") -> Notice:
    return Notice("Room1", player, kind, key, "correspondence", "Ann", 86400, "normal", 1)


async def keep(records: RecordStore, device: Device, player: str = "p1", lang: str = "en") -> None:
    value = device.to_json()
    await records.add_subscription(
        Subscription(
            value["endpoint"], player, value["keys"]["p256dh"], value["keys"]["auth"],
            time.time(), lang, "test device",
        )
    )


async def test_a_push_arrives_signed_encrypted_and_with_its_headers(
    record_store: RecordStore, sender: PushSender, service: PushService
) -> None:
    device = service.subscribe(application_server_key=sender.keys.public)
    await keep(record_store, device)
    done = await sender.deliver([notice()])
    assert done == (("p1", "turn:7"),)
    [got] = device.received()
    assert got.status == 201, got.error
    assert got.payload == {
        "title": "Your turn at Ann's table",
        "body": "The table is waiting for you.",
        "kind": "turn",
        "room": "Room1",
        "url": "/r/Room1",
        "tag": "room-Room1",
    }
    assert got.claims is not None and got.claims["aud"] == service.url
    assert got.claims["sub"] == "mailto:ops@example.org"
    assert got.headers["ttl"] == "86400" and got.headers["urgency"] == "normal"
    assert got.headers["topic"] == topic("Room1") and len(topic("Room1")) <= 32


async def test_the_words_follow_the_device_language(
    record_store: RecordStore, sender: PushSender, service: PushService
) -> None:
    device = service.subscribe()
    await keep(record_store, device, lang="pt-BR")
    await sender.deliver([notice(kind="ended", key="ended:9")])
    [got] = device.delivered()
    assert got.payload is not None and got.payload["title"] == "A partida na mesa de Ann terminou"


async def test_a_gone_subscription_is_deleted_and_the_notice_is_done(
    record_store: RecordStore, sender: PushSender, service: PushService
) -> None:
    for status in (404, 410):
        device = service.subscribe()
        await keep(record_store, device)
        device.respond(status)
        assert await sender.deliver([notice(key=f"turn:{status}")]) == (("p1", f"turn:{status}"),)
        assert (await record_store.subscriptions(["p1"]))["p1"] == []


async def test_a_failing_push_service_leaves_the_notice_to_retry_and_sends_once_after(
    record_store: RecordStore, sender: PushSender, service: PushService
) -> None:
    ok, failing = service.subscribe(), service.subscribe()
    await keep(record_store, ok)
    await keep(record_store, failing)
    for status in (500, 429):
        failing.respond(status, times=1)
        assert await sender.deliver([notice()]) == ()
    assert await sender.deliver([notice()]) == (("p1", "turn:7"),)
    assert len(ok.delivered()) == 1  # a device that had it is not sent it again
    assert len(failing.delivered()) == 1
    assert len(await record_store.subscriptions(["p1"])) == 1


async def test_no_device_or_a_kind_switched_off_is_done_without_a_request(
    record_store: RecordStore, sender: PushSender, service: PushService
) -> None:
    assert await sender.deliver([notice(player="nobody")]) == (("nobody", "turn:7"),)
    device = service.subscribe()
    await keep(record_store, device)
    await record_store.set_push_settings(
        "p1", PushSettings(turn_correspondence=False), now=time.time()
    )
    assert await sender.deliver([notice()]) == (("p1", "turn:7"),)
    assert service.received == []
    assert (await record_store.push_settings("p1")).turn_live is True


async def test_the_vapid_key_is_made_once_and_kept(record_store: RecordStore) -> None:
    first, second = VapidKeys(record_store, time.time), VapidKeys(record_store, time.time)
    await asyncio.gather(first.load(), second.load())
    assert first.public == second.public and len(first.public) == 87  # 65 bytes, base64url
    again = VapidKeys(record_store, time.time)
    await again.load()
    assert again.public == first.public


async def test_ten_devices_at_most_and_a_device_moves_to_whoever_subscribes_it(
    record_store: RecordStore, service: PushService
) -> None:
    devices = [service.subscribe() for _ in range(MAX_DEVICES + 1)]
    for device in devices[:MAX_DEVICES]:
        await keep(record_store, device)
    with pytest.raises(TooManyDevices):
        await keep(record_store, devices[-1])
    await keep(record_store, devices[0])  # the same device again: still ten
    await keep(record_store, devices[0], player="p2")  # another player on that browser
    found = await record_store.subscriptions(["p1", "p2"])
    assert len(found["p1"]) == MAX_DEVICES - 1 and len(found["p2"]) == 1
    assert await record_store.remove_subscription("p1", found["p1"][0].id)
    assert not await record_store.remove_subscription("p1", found["p2"][0].id)  # not theirs


async def test_the_sender_refuses_a_private_or_loopback_address_in_production() -> None:
    for host in ("127.0.0.1", "10.1.2.3", "192.168.0.9", "169.254.169.254", "::1", "localhost"):
        with pytest.raises(Blocked):
            await resolve_public(host, 443, allow_loopback=False)
    assert str(await resolve_public("127.0.0.1", 80, allow_loopback=True)) == "127.0.0.1"
    assert str(await resolve_public("8.8.8.8", 443, allow_loopback=False)) == "8.8.8.8"
