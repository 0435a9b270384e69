"""Hostile request bodies to every JSON POST route, through a real server process.

Every one gets a JSON error frame with a registered code and a 4xx status, changes nothing, and
leaves no traceback in the server's log; a body that is not sent as ``application/json`` is
refused with 415 whatever it holds (a page of another site can post ``text/plain`` without a
CORS preflight).
"""

from __future__ import annotations

import json
import secrets
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from protocol.errors import ERRORS
from tests.support.server_process import ServerProcess

pytestmark = pytest.mark.e2e

ROUTES = ("/api/guest", "/api/signup", "/api/login", "/api/password", "/api/rooms")
HOSTILE: dict[str, bytes] = {
    "4,000 [": b"[" * 4000,
    "deep objects": b'{"a":' * 1500 + b"1" + b"}" * 1500,
    "deep but closed": b"[" * 900 + b"]" * 900,
    "nested in a field": b'{"name": ' + b"[" * 2000 + b"]" * 2000 + b"}",
    "not JSON": b"{name: Ann}",
    "a list": b"[1, 2]",
    "a string": b'"Ann"',
    "NaN": b'{"name": NaN}',
    "bad UTF-8": b'{"name": "\xff\xfe"}',
    "too large": b'{"name": "' + b"x" * 5000 + b'"}',
}


@pytest.fixture(scope="module")
def server() -> Iterator[ServerProcess]:
    proc = ServerProcess(None, HEARTS_TRUST_PROXY="1").start()
    yield proc
    proc.stop()


def post(
    server: ServerProcess, path: str, body: bytes, content_type: str | None, token: str = ""
) -> tuple[int, dict[str, Any]]:
    req = urllib.request.Request(server.base + path, data=body, method="POST")
    if content_type is not None:
        req.add_header("content-type", content_type)
    req.add_header("x-forwarded-for", f"10.9.{secrets.randbelow(250)}.{secrets.randbelow(250)}")
    if token:
        req.add_header("authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as e:
        raw = e.read()
        try:
            return e.code, json.loads(raw)
        except ValueError:
            return e.code, {"raw": raw.decode(errors="replace")}


def session_token(server: ServerProcess) -> str:
    name = f"Body{secrets.token_hex(3)}x"
    body = json.dumps({"name": name, "password": "a fine password"}).encode()
    status, answer = post(server, "/api/signup", body, "application/json")
    assert status == 200, answer
    return str(answer["token"])


def test_hostile_bodies_get_clean_errors_on_every_route(server: ServerProcess) -> None:
    token = session_token(server)  # past the bearer check of /api/rooms and /api/password
    for path in ROUTES:
        for what, body in HOSTILE.items():
            status, answer = post(server, path, body, "application/json", token)
            assert 400 <= status < 500, (path, what, status, answer)
            assert answer.get("type") == "error" and answer.get("code") in ERRORS, (path, what)
    assert "Traceback" not in server.log() and "RecursionError" not in server.log()


def test_a_depth_within_the_limit_is_read(server: ServerProcess) -> None:
    token = session_token(server)
    nested = {"options": {"target": 50}}
    status, answer = post(server, "/api/rooms", json.dumps(nested).encode(), "application/json",
                          token)
    assert status == 201, answer


@pytest.mark.parametrize(
    "content_type",
    [None, "text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded",
     "multipart/form-data; boundary=x", "application/jsonp", "application/json; charset=latin-1"],
)
def test_json_routes_refuse_other_content_types(
    server: ServerProcess, content_type: str | None
) -> None:
    token = session_token(server)
    name = f"Plain{secrets.token_hex(3)}x"
    for path in ROUTES:
        body = json.dumps({"name": name, "password": "a fine password", "old": "a fine password",
                           "new": "another password"}).encode()
        status, answer = post(server, path, body, content_type, token)
        assert (status, answer.get("code")) == (415, "unsupported_media_type"), (path, answer)
    # Nothing changed: the name is free, the password is the old one, the token still works.
    body = json.dumps({"name": name, "password": "a fine password"}).encode()
    assert post(server, "/api/signup", body, "application/json; charset=utf-8")[0] == 200
    body = json.dumps({"old": "a fine password", "new": "another password"}).encode()
    odd_case = 'Application/JSON;charset="UTF-8"'
    assert post(server, "/api/password", body, odd_case, token)[0] == 200
