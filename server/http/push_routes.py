"""The HTTP side of Web Push (issue 54): the server's public key, a player's devices and which
pushes they want.

- ``GET /api/push/key``: the VAPID public key, for ``pushManager.subscribe``;
- ``POST /api/push/subscriptions``: keep this browser's subscription for the player;
- ``GET /api/push/devices``: the player's devices and push settings;
- ``DELETE /api/push/devices/{id}``: remove one of them;
- ``POST /api/push/unsubscribe``: remove this browser's subscription by its endpoint (the page
  does it on log-out, and when the player turns notifications off);
- ``PUT /api/push/settings``: which pushes the player wants.

Every route but the key takes ``Authorization: Bearer`` (a guest's token or an account's); a
body is read by ``json_body.py``, a subscription checked by ``server/push/endpoints.py``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from protocol.errors import ProtocolError
from server.accounts.identity import Identity
from server.http.json_body import read_json, refused
from server.push.endpoints import parse_subscription
from server.push.keys import VapidKeys
from server.record.push import (
    MAX_DEVICES,
    SETTING_NAMES,
    PushSettings,
    Subscription,
    TooManyDevices,
)
from server.record.store import RecordStore

NO_STORE = {"cache-control": "no-store"}


def device_value(s: Subscription) -> dict[str, Any]:
    return {
        "id": s.id,
        "label": s.label,
        "service": urlsplit(s.endpoint).hostname or "",
        "lang": s.lang,
        "created_at": s.created_at,
    }


def push_routes(
    records: RecordStore,
    keys: VapidKeys,
    who: Callable[[Request], Awaitable[Identity | None]],
    clock: Callable[[], float],
    *,
    allow_loopback: bool = False,
) -> list[Route]:
    async def player(request: Request) -> Identity:
        identity = await who(request)
        if identity is None:
            raise ProtocolError("bad_token", "Send Authorization: Bearer <token>.")
        return identity

    async def key(request: Request) -> Response:
        return JSONResponse({"key": keys.public}, headers={"cache-control": "max-age=300"})

    async def subscribe(request: Request) -> Response:
        try:
            identity = await player(request)
            new = parse_subscription(await read_json(request), allow_loopback=allow_loopback)
            kept = Subscription(
                new.endpoint, identity.player, new.p256dh, new.auth, clock(), new.lang, new.label
            )
            await records.add_subscription(kept)
        except TooManyDevices:
            return refused(
                ProtocolError(
                    "too_many_devices",
                    f"A player can have at most {MAX_DEVICES} devices; remove one in Settings.",
                )
            )
        except ProtocolError as e:
            return refused(e)
        return JSONResponse({"device": device_value(kept)}, status_code=201, headers=NO_STORE)

    async def devices(request: Request) -> Response:
        try:
            identity = await player(request)
        except ProtocolError as e:
            return refused(e)
        found = (await records.subscriptions([identity.player]))[identity.player]
        settings = await records.push_settings(identity.player)
        return JSONResponse(
            {
                "devices": [device_value(s) for s in found],
                "limit": MAX_DEVICES,
                "settings": settings.to_value(),
            },
            headers=NO_STORE,
        )

    async def remove(request: Request) -> Response:
        try:
            identity = await player(request)
        except ProtocolError as e:
            return refused(e)
        device = request.path_params["device"]
        removed = len(device) <= 64 and await records.remove_subscription(identity.player, device)
        return JSONResponse({"removed": removed}, headers=NO_STORE)

    async def unsubscribe(request: Request) -> Response:
        try:
            identity = await player(request)
            endpoint = (await read_json(request)).get("endpoint")
            if not isinstance(endpoint, str) or not 0 < len(endpoint) <= 2048:
                raise ProtocolError("bad_subscription", "Send the subscription's endpoint.")
        except ProtocolError as e:
            return refused(e)
        removed = await records.remove_subscription(identity.player, endpoint)
        return JSONResponse({"removed": removed}, headers=NO_STORE)

    async def put_settings(request: Request) -> Response:
        try:
            identity = await player(request)
            data = await read_json(request)
            unknown = sorted(str(k)[:32] for k in data if k not in SETTING_NAMES)
            if unknown:
                raise ProtocolError(
                    "bad_field",
                    f"There is no push setting {unknown[0]}; they are {', '.join(SETTING_NAMES)}.",
                )
            current = (await records.push_settings(identity.player)).to_value()
            for name, value in data.items():
                if not isinstance(value, bool):
                    raise ProtocolError("bad_field", f"{name} must be true or false.")
                current[name] = value
            settings = PushSettings(**current)
        except ProtocolError as e:
            return refused(e)
        await records.set_push_settings(identity.player, settings, now=clock())
        return JSONResponse({"settings": settings.to_value()}, headers=NO_STORE)

    return [
        Route("/api/push/key", key),
        Route("/api/push/subscriptions", subscribe, methods=["POST"]),
        Route("/api/push/devices", devices),
        Route("/api/push/devices/{device}", remove, methods=["DELETE"]),
        Route("/api/push/unsubscribe", unsubscribe, methods=["POST"]),
        Route("/api/push/settings", put_settings, methods=["PUT"]),
    ]
