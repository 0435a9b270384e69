"""The Python client's account calls over HTTP: a guest identity, log in, sign up, log out,
Web Push subscriptions and settings, and the player's games (docs/protocol.md,
docs/python-client.md).

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


def http_json(
    url: str,
    body: dict[str, Any] | None = None,
    token: str | None = None,
    method: str | None = None,
) -> Any:
    """A blocking JSON request (POST when there is a body, unless ``method`` says); for
    set-up, not for the hot path."""
    data = json.dumps(body).encode() if body is not None else None
    verb = method or ("POST" if data is not None else "GET")
    req = urllib.request.Request(url, data=data, method=verb)
    req.add_header("content-type", "application/json")
    if token:
        req.add_header("authorization", f"Bearer {token}")
    with urllib.request.urlopen(req, timeout=10) as resp:
        return json.loads(resp.read())


async def guest(base_url: str, name: str) -> dict[str, Any]:
    """A guest identity from the HTTP API: {"player", "name", "token"}."""
    return await asyncio.to_thread(http_json, f"{base_url}/api/guest", {"name": name})


def account_call(
    url: str, body: dict[str, Any] | None, token: str | None = None, method: str | None = None
) -> dict[str, Any]:
    """Call an account endpoint (POST by default); a refusal raises CommandError with the
    server's code."""
    try:
        return dict(http_json(url, body, token, method))
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


# Web Push (docs/python-client.md, "Notifications"): a bot or a tool subscribes an endpoint of
# its own push service, with the keys it made, and decrypts what arrives (protocol/web_push.py).


async def push_key(base_url: str) -> str:
    """The server's VAPID public key (base64url): the ``applicationServerKey`` to subscribe
    with, and the key every push from this server is signed with."""
    reply = await asyncio.to_thread(account_call, f"{base_url}/api/push/key", None)
    return str(reply["key"])


async def subscribe_push(
    base_url: str, token: str, subscription: dict[str, Any], *, lang: str = "en", label: str = ""
) -> dict[str, Any]:
    """Keep a subscription (``{"endpoint", "keys": {"p256dh", "auth"}}``) for the player:
    the device as listed (``{"id", "label", "service", "lang", "created_at"}``). Raises
    CommandError ``bad_subscription`` or ``too_many_devices``."""
    body = {"subscription": subscription, "lang": lang, "label": label}
    reply = await asyncio.to_thread(account_call, f"{base_url}/api/push/subscriptions", body, token)
    return dict(reply["device"])


async def unsubscribe_push(base_url: str, token: str, endpoint: str) -> bool:
    body = {"endpoint": endpoint}
    reply = await asyncio.to_thread(account_call, f"{base_url}/api/push/unsubscribe", body, token)
    return bool(reply["removed"])


async def push_devices(base_url: str, token: str) -> dict[str, Any]:
    """``{"devices": [...], "limit": 10, "settings": {...}}``."""
    return await asyncio.to_thread(account_call, f"{base_url}/api/push/devices", None, token)


async def remove_push_device(base_url: str, token: str, device: str) -> bool:
    url = f"{base_url}/api/push/devices/{device}"
    reply = await asyncio.to_thread(account_call, url, None, token, "DELETE")
    return bool(reply["removed"])


async def set_push_settings(base_url: str, token: str, **switches: bool) -> dict[str, bool]:
    """Turn kinds of pushes on or off: ``turn_correspondence``, ``turn_live``, ``waited``,
    ``game_end``; the settings after the change."""
    url = f"{base_url}/api/push/settings"
    reply = await asyncio.to_thread(account_call, url, dict(switches), token, "PUT")
    return dict(reply["settings"])


async def my_games(base_url: str, token: str) -> list[dict[str, Any]]:
    """Every room where the player holds a seat, their turn first (``GET /api/me/games``)."""
    reply = await asyncio.to_thread(account_call, f"{base_url}/api/me/games", None, token)
    return list(reply["games"])
