"""Accounts and sessions through a real server process and real sockets, on both stores.

Every test runs against a server on the in-process store and one on a private Redis. The
servers trust X-Forwarded-For, so each test speaks from its own made-up address and the
per-address throttles of one test do not touch another's.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import secrets
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
import websockets

from protocol.account_api import login, logout, sign_up
from protocol.client import CommandError, HeartsClient
from tests.support.server_process import ServerProcess

pytestmark = pytest.mark.e2e

_addresses = itertools.count(1)


@pytest.fixture(scope="module", params=["memory", "redis"])
def server(request: pytest.FixtureRequest) -> Iterator[ServerProcess]:
    url = request.getfixturevalue("redis_url") if request.param == "redis" else None
    proc = ServerProcess(
        url,
        HEARTS_TRUST_PROXY="1",
        HEARTS_LOGIN_LIMIT="3",
        HEARTS_GUEST_LIMIT="3",
        HEARTS_SIGNUP_LIMIT="50",
        HEARTS_GUEST_TTL="1",
        HEARTS_SESSION_TTL="600",
    ).start()
    yield proc
    proc.stop()


def call(
    server: ServerProcess,
    path: str,
    body: dict[str, Any] | None = None,
    *,
    token: str | None = None,
    address: str | None = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, dict[str, Any], dict[str, str]]:
    """(status, JSON answer, headers) of one HTTP call, errors included."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(
        server.base + path, data=data, method="POST" if data is not None else "GET"
    )
    req.add_header("content-type", "application/json")
    req.add_header("x-forwarded-for", address or f"10.0.{next(_addresses)}.1")
    for name, value in (headers or {}).items():
        req.add_header(name, value)
    if token:
        req.add_header("authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            raw = resp.read()
            return resp.status, json.loads(raw) if raw[:1] == b"{" else {}, dict(resp.headers)
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}"), dict(e.headers)


def unique(prefix: str) -> str:
    # A closing letter: a random hex tail like "b07" reads as "bot", a name kept for bots.
    return f"{prefix}{secrets.token_hex(3)}x"


async def auth_code(server: ServerProcess, token: str) -> str:
    """"ok" if a fresh socket authenticates with ``token``, else the error code."""
    client = await HeartsClient.connect(server.ws)
    try:
        await client.request("auth", token=token)
        return "ok"
    except CommandError as e:
        return e.code
    finally:
        await client.close()


async def test_two_devices_revoke_one_the_other_still_works(server: ServerProcess) -> None:
    name = unique("Ann")
    made = await sign_up(server.base, name, "correct horse")
    assert made["account"] is True and made["name"] == name
    phone = await login(server.base, name.upper(), "correct horse")  # names fold case
    laptop = await login(server.base, name, "correct horse")
    assert phone["player"] == laptop["player"] == made["player"]
    assert len({made["token"], phone["token"], laptop["token"]}) == 3
    # Both devices hold open sockets, then the phone logs out.
    async with await HeartsClient.connect(server.ws, laptop["token"]) as open_socket:
        phone_socket = await HeartsClient.connect(server.ws, phone["token"])
        assert await logout(server.base, phone["token"])
        # The phone's open socket is closed (4001), and its token is refused from now on.
        code, _ = await asyncio.wait_for(phone_socket.closed, 5)
        assert code == 4001
        await phone_socket.close()
        assert await auth_code(server, phone["token"]) == "bad_token"
        assert call(server, "/api/me", token=phone["token"])[0] == 401
        # The laptop's session is untouched: a new socket and the open one both work.
        assert await auth_code(server, laptop["token"]) == "ok"
        assert (await open_socket.request("ping", t=1))["t"] == 1
    status, me, _ = call(server, "/api/me", token=laptop["token"])
    assert (status, me["player"], me["account"]) == (200, made["player"], True)
    assert not await logout(server.base, phone["token"])  # already gone


async def test_stolen_forged_and_expired_tokens_are_refused(server: ServerProcess) -> None:
    # A token nobody issued, in the session format: refused.
    assert await auth_code(server, "hs1." + secrets.token_urlsafe(32)) == "bad_token"
    # A guest token with its payload changed (another player id) fails the signature.
    status, guest, _ = call(server, "/api/guest", {"name": unique("Gus")})
    assert status == 200 and guest["account"] is False
    body, stamp, sig = guest["token"].rsplit(".", 2)
    forged = f"{body[:-2]}xx.{stamp}.{sig}"
    assert await auth_code(server, forged) == "bad_token"
    assert await auth_code(server, guest["token"]) == "ok"
    # Guest tokens expire (HEARTS_GUEST_TTL=1 here; itsdangerous counts whole seconds).
    await asyncio.sleep(2.5)
    assert await auth_code(server, guest["token"]) == "bad_token"
    assert call(server, "/api/me", token=guest["token"])[0] == 401


async def test_a_new_password_ends_every_session(server: ServerProcess) -> None:
    name = unique("Pat")
    first = await sign_up(server.base, name, "first password")
    other = await login(server.base, name, "first password")
    status, wrong, _ = call(
        server, "/api/password", {"old": "not it at all", "new": "second password"},
        token=first["token"],
    )
    assert (status, wrong["code"]) == (401, "wrong_credentials")
    status, changed, _ = call(
        server, "/api/password", {"old": "first password", "new": "second password"},
        token=first["token"],
    )
    assert status == 200
    # A thief holding either old session is out; the device that changed it gets a new one.
    assert await auth_code(server, first["token"]) == "bad_token"
    assert await auth_code(server, other["token"]) == "bad_token"
    assert await auth_code(server, changed["token"]) == "ok"
    with pytest.raises(CommandError) as e:
        await login(server.base, name, "first password")
    assert e.value.code == "wrong_credentials"
    assert (await login(server.base, name, "second password"))["player"] == first["player"]


async def test_a_guest_claims_its_identity(server: ServerProcess) -> None:
    name = unique("Cleo")
    _, guest, _ = call(server, "/api/guest", {"name": name})
    made = await sign_up(server.base, name, "claim it now", guest_token=guest["token"])
    # The same player id: its rating and history are the account's now.
    assert made["player"] == guest["player"]
    status, player, _ = call(server, f"/api/players/{made['player']}")
    assert status == 200 and player["player"] == guest["player"]
    # The guest token no longer opens that identity (the password guards it), and cannot
    # claim twice.
    assert await auth_code(server, guest["token"]) == "bad_token"
    with pytest.raises(CommandError) as e:
        await sign_up(server.base, unique("Other"), "claim it again", guest_token=guest["token"])
    assert e.value.code == "bad_token"


async def test_names_are_unique_and_cannot_pose(server: ServerProcess) -> None:
    name = unique("Dora")
    await sign_up(server.base, name, "a good password")
    for taken in (name.upper(), f" {name} ", name.replace("o", "0"), f"{name}."):
        with pytest.raises(CommandError) as e:
            await sign_up(server.base, taken, "a good password")
        assert e.value.code == "name_taken", taken
    status, refused, _ = call(server, "/api/guest", {"name": name.lower()})
    assert (status, refused["code"]) == (409, "name_taken")  # a guest cannot pose either
    cyrillic = "Dоra" + name[4:]  # a Cyrillic o among Latin letters
    for bad in ("Strong Bot", "North Normal Bot", "R0BOT", "admin", cyrillic, "..."):
        status, refused, _ = call(server, "/api/signup", {"name": bad, "password": "long enough"})
        assert (status, refused["code"]) == (400, "bad_name"), bad
    status, refused, _ = call(server, "/api/signup", {"name": unique("Eve"), "password": "short"})
    assert (status, refused["code"]) == (400, "bad_password")


async def test_log_in_slows_the_guesser_not_the_owner(server: ServerProcess) -> None:
    name = unique("Finn")
    await sign_up(server.base, name, "the real password")
    guesser = f"192.0.2.{next(_addresses) % 250}"
    # HEARTS_LOGIN_LIMIT=3: three guesses at one account from one address...
    for k in range(3):
        status, answer, _ = call(
            server, "/api/login", {"name": name, "password": f"guess {k}"}, address=guesser
        )
        assert (status, answer["code"]) == (401, "wrong_credentials")
    # ... and the fourth from there is refused, even with the right password...
    right = {"name": name, "password": "the real password"}
    status, answer, _ = call(server, "/api/login", right, address=guesser)
    assert (status, answer["code"]) == (429, "too_many_attempts")
    assert "try again in" in answer["message"]
    # ... while the owner, from any other address, logs in at once.
    status, _, _ = call(server, "/api/login", right)
    assert status == 200


async def test_new_guests_are_throttled_per_address(server: ServerProcess) -> None:
    address = f"198.51.100.{next(_addresses) % 250}"
    for _ in range(3):  # HEARTS_GUEST_LIMIT=3
        assert call(server, "/api/guest", {"name": unique("Hal")}, address=address)[0] == 200
    status, answer, _ = call(server, "/api/guest", {"name": unique("Hal")}, address=address)
    assert (status, answer["code"]) == (429, "too_many_attempts")
    assert call(server, "/api/guest", {"name": unique("Hal")})[0] == 200  # another address


async def test_security_headers_and_the_websocket_origin_check(server: ServerProcess) -> None:
    for path in ("/", "/api/ladder", "/static/app.js", "/p/someone"):
        _, _, headers = call(server, path)
        lowered = {k.lower(): v for k, v in headers.items()}
        csp = lowered["content-security-policy"]
        assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp, path
        assert "unsafe-inline" not in csp
        assert lowered["x-content-type-options"] == "nosniff"
    # Another site's page cannot open a socket with the player's browser...
    with pytest.raises(websockets.exceptions.InvalidStatus):
        await websockets.connect(server.ws, origin="https://evil.example")  # type: ignore[arg-type]
    # ... the page's own origin can, and so can a client that sends none.
    same = await websockets.connect(server.ws, origin=server.base)  # type: ignore[arg-type]
    await same.close()
    plain = await websockets.connect(server.ws)
    await plain.close()


async def test_a_log_out_on_one_node_ends_the_session_on_another(clean_redis: str) -> None:
    one = ServerProcess(clean_redis).start()
    two = ServerProcess(clean_redis, HEARTS_MATCHMAKER="0").start()
    try:
        name = unique("Ned")
        first = await sign_up(one.base, name, "two nodes, one league")
        second = await login(two.base, name, "two nodes, one league")
        on_two = await HeartsClient.connect(two.ws, first["token"])
        kept = await HeartsClient.connect(two.ws, second["token"])
        assert await logout(one.base, first["token"])
        code, _ = await asyncio.wait_for(on_two.closed, 5)
        assert code == 4001
        assert await auth_code(two, first["token"]) == "bad_token"
        assert (await kept.request("ping", t=2))["t"] == 2
        await on_two.close()
        await kept.close()
    finally:
        one.stop()
        two.stop()
