"""Whole games through real sockets against a real server process (embedded store and Redis)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from protocol.cards import is_card_name
from protocol.client import HeartsClient
from tests.support.client_bots import new_player, open_table, play_to_the_end
from tests.support.server_process import ServerProcess

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def server() -> Iterator[ServerProcess]:
    proc = ServerProcess().start()
    yield proc
    proc.stop()


@pytest.fixture
def redis_server(clean_redis: str) -> Iterator[ServerProcess]:
    proc = ServerProcess(redis_url=clean_redis).start()
    yield proc
    proc.stop()


# Where card names are public: cards played, tricks taken, the finished hands' log.
PUBLIC_EVENTS = {"card_played", "trick_won", "hand_over", "hand_audit"}
PUBLIC_VIEW_KEYS = {"trick", "tricks", "hand_log"}


def private_cards(frame: Any, *, public: bool = False) -> set[str]:
    """Every card name in a frame outside the places where cards are public."""
    found: set[str] = set()

    def walk(value: Any, public: bool) -> None:
        if isinstance(value, str):
            if not public and is_card_name(value):
                found.add(value)
        elif isinstance(value, list):
            for item in value:
                walk(item, public)
        elif isinstance(value, dict):
            for key, item in value.items():
                walk(item, public or key in PUBLIC_VIEW_KEYS)

    if isinstance(frame, dict) and frame.get("event") in PUBLIC_EVENTS:
        return found
    walk(frame, public)
    return found


def own_cards_by_hand(client: HeartsClient) -> list[set[str]]:
    """The cards this seat held at some point of each hand (dealt plus received)."""
    hands: list[set[str]] = []
    for f in client.frames:
        if f.get("event") == "dealt":
            hands.append(set(f["cards"]))
        elif f.get("event") == "received":
            hands[-1] |= set(f["cards"])
    return hands


def assert_no_early_secret(client: HeartsClient) -> None:
    """No shuffle secret reaches a client before its hand's audit, and audits follow the hand."""
    frames = client.frames
    for k, f in enumerate(frames):
        if f.get("event") != "hand_audit":
            continue
        audit = f["audit"]
        over = [g for g in frames[:k] if g.get("event") == "hand_over" and g["hand"] == f["hand"]]
        assert over, "an audit was published before its hand was over"
        secrets = {audit["server_secret"]} | {s["secret"] for s in audit["seats"]}
        own = client.own.get(f["hand"], {}).get("secret")
        for earlier in frames[:k]:
            text = repr(earlier)
            leaked = {x for x in secrets - {own} if x in text}
            assert not leaked, f"a secret of hand {f['hand']} was sent early in {earlier}"


def assert_no_leak(client: HeartsClient) -> None:
    """No frame to this seat names a card it never held (outside public plays)."""
    assert_no_early_secret(client)
    allowed: set[str] = set()
    hands = iter(own_cards_by_hand(client))
    for f in client.frames:
        if f.get("event") == "dealt":
            allowed = next(hands)
        leaked = private_cards(f) - allowed
        assert not leaked, f"frame shows cards this seat never held: {leaked} in {f}"


async def seat_humans(
    server: ServerProcess, humans: int, binary: bool = True
) -> list[HeartsClient]:
    host = await new_player(server, "Host", binary=binary)
    room = await open_table(server, host)
    clients = [host]
    for k in range(1, humans):
        c = await new_player(server, f"P{k}", binary=binary)
        reply = await c.request("join", room=room)
        assert reply["seat"] == k
        clients.append(c)
    if humans < 4:
        await host.request("fill_bots", level="random")
    await host.request("start")
    return clients


def check_scores(over: dict[str, Any], client: HeartsClient) -> None:
    """Final scores equal the sum of the hands' points, and each hand's points equal its tricks'."""
    hands = [f for f in client.frames if f.get("event") == "hand_over"]
    tricks = [f for f in client.frames if f.get("event") == "trick_won"]
    totals = [sum(h["points"][s] for h in hands) for s in range(4)]
    assert over["scores"] == totals
    assert max(totals) >= 50
    low = min(totals)
    assert over["winners"] == [s for s in range(4) if totals[s] == low]
    taken = [0, 0, 0, 0]
    for t in tricks:
        taken[t["seat"]] += t["points"]
    assert sum(taken) == 26 * len(hands)


@pytest.mark.parametrize("binary", [True, False], ids=["msgpack", "json"])
async def test_four_humans_play_a_whole_game(server: ServerProcess, binary: bool) -> None:
    clients = await seat_humans(server, 4, binary=binary)
    results = await asyncio.gather(*(play_to_the_end(c, seed=i) for i, c in enumerate(clients)))
    assert all(r["scores"] == results[0]["scores"] for r in results)
    for c in clients:
        check_scores(results[0], c)
        assert_no_leak(c)
        # Every seat took part in every deal and verified every hand with the verifier.
        hands = len([f for f in c.frames if f.get("event") == "hand_over"])
        assert len(c.verdicts) == hands and all(v == [] for v in c.verdicts.values()), c.verdicts
        audits = [f["audit"] for f in c.frames if f.get("event") == "hand_audit"]
        assert all(s["kind"] == "human" for a in audits for s in a["seats"])
        await c.close()


async def test_three_humans_and_a_bot(server: ServerProcess) -> None:
    clients = await seat_humans(server, 3)
    results = await asyncio.gather(*(play_to_the_end(c, seed=i) for i, c in enumerate(clients)))
    check_scores(results[0], clients[0])
    for c in clients:
        assert_no_leak(c)
        await c.close()


async def test_one_human_three_bots_and_a_spectator_who_joins_mid_hand(
    server: ServerProcess,
) -> None:
    host = await new_player(server, "Solo")
    room = await open_table(server, host)
    await host.request("fill_bots", level="random")
    await host.request("start")
    prompt = await host.next_event("your_turn")
    await host.request("pass", cards=prompt["legal"][:3])
    # The table now waits on the human in the middle of hand 1: a watcher arrives.
    await host.next_event(lambda e: e["event"] == "your_turn" and e["phase"] == "playing")
    watcher = await new_player(server, "Watcher")
    reply = await watcher.request("join", room=room)
    assert reply["seat"] is None
    assert reply["view"]["game"]["phase"] == "playing"
    assert "hand" not in reply["view"]["game"]
    view = (await host.request("view"))["view"]
    await host.request("play", card=view["game"]["legal"][0])
    game = asyncio.create_task(play_to_the_end(host))
    over = await game
    spectated = await watcher.next_event("game_over", timeout=60)
    assert spectated["scores"] == over["scores"]
    for f in watcher.frames:
        assert not private_cards(f), f"a spectator saw hidden cards: {f}"
    assert_no_leak(host)
    await host.close()
    await watcher.close()


async def test_a_dropped_client_resumes_from_its_last_seq(server: ServerProcess) -> None:
    clients = await seat_humans(server, 2)
    host, other = clients
    room = host.room
    task = asyncio.create_task(play_to_the_end(host))
    prompt = await other.next_event("your_turn")
    seq = other.seq
    token = other.identity["token"]  # type: ignore[attr-defined]
    await other.close()
    back = await HeartsClient.connect(server.ws, token)
    reply = await back.request("resume", room=room, seq=seq)
    assert reply["seat"] == 1 and reply.get("resumed")
    # Nothing was missed in between: the next events continue the sequence.
    assert all(f["seq"] > seq for f in back.frames if f.get("type") == "event")
    del prompt
    view = (await back.request("view"))["view"]
    assert view["you"] == 1
    if 1 in view["deciding"] and view["game"]["phase"] == "passing" and not view["game"]["passed"]:
        await back.request("pass", cards=view["game"]["hand"][:3])
    elif 1 in view["deciding"] and view["game"]["phase"] == "playing":
        await back.request("play", card=view["game"]["legal"][0])
    over = await play_to_the_end(back)
    assert over["scores"] == (await task)["scores"]
    await host.close()
    await back.close()


async def test_real_bots_finish_a_game_and_hints_name_a_legal_card(server: ServerProcess) -> None:
    host = await new_player(server, "Learner")
    await open_table(server, host, {"target": 50, "hints": True})
    await host.request("fill_bots", level="basic")
    await host.request("start")
    prompt = await host.next_event("your_turn")
    hint = (await host.request("hint"))["hint"]
    assert hint["kind"] == "pass" and set(hint["cards"]) <= set(prompt["legal"])
    assert hint["reason"]
    await host.request("pass", cards=hint["cards"])
    turn = await host.next_event(lambda e: e["event"] == "your_turn" and e["phase"] == "playing")
    hint = (await host.request("hint"))["hint"]
    assert hint["kind"] == "play" and hint["card"] in turn["legal"]
    await host.request("play", card=hint["card"])
    over = await play_to_the_end(host)
    assert max(over["scores"]) >= 50
    await host.close()


async def test_hints_are_refused_where_the_host_turned_them_off(server: ServerProcess) -> None:
    from protocol.client import CommandError

    host = await new_player(server, "Purist")
    await open_table(server, host, {"target": 50, "hints": False})
    await host.request("fill_bots", level="random")
    await host.request("start")
    await host.next_event("your_turn")
    with pytest.raises(CommandError) as e:
        await host.request("hint")
    assert e.value.code == "hints_disabled"
    await host.close()
