"""The Python client's account calls over HTTP: a guest identity, log in, sign up, log out
(docs/protocol.md).

    session = await login("http://127.0.0.1:8000", "Ann", "a long passphrase")
    client = await HeartsClient.connect("ws://127.0.0.1:8000/ws", session["token"])
"""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from typing import Any

from .client_errors import CommandError


def http_json(url: str, body: dict[str, Any] | None = None, token: str | None = None) -> Any:
    """A blocking JSON request (POST when there is a body); for set-up, not for the hot path."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method="POST" if data is not None else "GET")
    req.add_header("content-type", "application/json")
    if token:
        req.add_header("authorization", f"Bearer {token}")
    with urllib.request.urlopen(req, timeout=10) as resp:
        return json.loads(resp.read())


async def guest(base_url: str, name: str) -> dict[str, Any]:
    """A guest identity from the HTTP API: {"player", "name", "token"}."""
    return await asyncio.to_thread(http_json, f"{base_url}/api/guest", {"name": name})


def account_call(url: str, body: dict[str, Any], token: str | None = None) -> dict[str, Any]:
    """POST to an account endpoint; a refusal raises CommandError with the server's code."""
    try:
        return dict(http_json(url, body, token))
    except urllib.error.HTTPError as e:
        frame = json.loads(e.read() or b"{}")
        code, message = frame.get("code", "http_error"), frame.get("message", str(e))
        raise CommandError(code, message, frame) from None


async def login(base_url: str, name: str, password: str) -> dict[str, Any]:
    """Log in to an account: {"player", "name", "account": True, "token"} (a session token,
    for ``HeartsClient.connect``). Raises CommandError (``wrong_credentials``,
    ``too_many_attempts``…)."""
    body = {"name": name, "password": password}
    return await asyncio.to_thread(account_call, f"{base_url}/api/login", body)


async def sign_up(
    base_url: str, name: str, password: str, guest_token: str | None = None
) -> dict[str, Any]:
    """Make an account (keeping a guest's rating if its token is given) and log in."""
    body = {"name": name, "password": password, "guest_token": guest_token}
    return await asyncio.to_thread(account_call, f"{base_url}/api/signup", body)


async def logout(base_url: str, token: str) -> bool:
    """End this session on every node."""
    reply = await asyncio.to_thread(account_call, f"{base_url}/api/logout", {}, token)
    return bool(reply.get("revoked"))
