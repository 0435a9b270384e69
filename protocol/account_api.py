"""The Python client's account calls over HTTP: log in, sign up, log out (docs/protocol.md).

    session = await login("http://127.0.0.1:8000", "Ann", "a long passphrase")
    client = await HeartsClient.connect("ws://127.0.0.1:8000/ws", session["token"])
"""

from __future__ import annotations

import asyncio
import json
import urllib.error
from typing import Any

from .client import CommandError, http_json


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
