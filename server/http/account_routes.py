"""The HTTP side of identity: guests, sign up, log in, log out, a new password, who am I, and
deleting an account.

Tokens travel in the JSON answer and come back as ``Authorization: Bearer TOKEN`` (never in a
cookie), so a page of another site cannot ride a player's session; ``/ws`` still checks the
Origin (``server/net/web_security.py``). Every body is read by ``server/http/json_body.py``; every
refusal is a JSON error frame with a stable code.
"""

from __future__ import annotations

from starlette.requests import HTTPConnection, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from protocol.errors import ProtocolError
from server.accounts.identity import Identity
from server.accounts.service import Accounts
from server.http.json_body import read_json, refused


def client_address(conn: HTTPConnection, trust_proxy: bool) -> str:
    """The caller's address: the socket's peer, or, behind a trusted proxy, the first hop."""
    if trust_proxy:
        forwarded = conn.headers.get("x-forwarded-for", "")
        first = forwarded.split(",")[0].strip()
        if first:
            return first[:64]
    return conn.client.host if conn.client else "unknown"


def bearer_token(conn: HTTPConnection) -> str:
    auth = conn.headers.get("authorization", "")
    return auth[7:].strip() if auth.lower().startswith("bearer ") else ""


def signed_in(identity: Identity, token: str, expires_in: float) -> JSONResponse:
    return JSONResponse(
        {
            "player": identity.player,
            "name": identity.name,
            "account": identity.account,
            "token": token,
            "expires_in": expires_in,
        },
        headers={"cache-control": "no-store"},
    )


def account_routes(accounts: Accounts) -> list[Route]:
    policy = accounts.policy

    def address(request: Request) -> str:
        return client_address(request, policy.trust_proxy)

    async def guest(request: Request) -> Response:
        try:
            data = await read_json(request)
            identity, token = await accounts.new_guest(data.get("name", ""), address(request))
        except ProtocolError as e:
            return refused(e)
        return signed_in(identity, token, policy.guest_ttl)

    async def sign_up(request: Request) -> Response:
        try:
            data = await read_json(request)
            claim = data.get("guest_token") or None
            identity, token = await accounts.sign_up(
                data.get("name"),
                data.get("password"),
                address(request),
                guest_token=claim if isinstance(claim, str) else None,
            )
        except ProtocolError as e:
            return refused(e)
        return signed_in(identity, token, policy.session_ttl)

    async def log_in(request: Request) -> Response:
        try:
            data = await read_json(request)
            identity, token = await accounts.log_in(
                data.get("name"), data.get("password"), address(request)
            )
        except ProtocolError as e:
            return refused(e)
        return signed_in(identity, token, policy.session_ttl)

    async def log_out(request: Request) -> Response:
        revoked = await accounts.log_out(bearer_token(request))
        return JSONResponse({"revoked": revoked})

    async def password(request: Request) -> Response:
        try:
            data = await read_json(request)
            identity, token = await accounts.change_password(
                bearer_token(request), data.get("old"), data.get("new"), address(request)
            )
        except ProtocolError as e:
            return refused(e)
        return signed_in(identity, token, policy.session_ttl)

    async def delete_account(request: Request) -> Response:
        try:
            data = await read_json(request)
            await accounts.delete_account(
                bearer_token(request), data.get("password"), address(request)
            )
        except ProtocolError as e:
            return refused(e)
        return JSONResponse({"deleted": True}, headers={"cache-control": "no-store"})

    async def me(request: Request) -> Response:
        identity = await accounts.verify(bearer_token(request))
        if identity is None:
            return refused(ProtocolError("bad_token"))
        return JSONResponse(
            {"player": identity.player, "name": identity.name, "account": identity.account},
            headers={"cache-control": "no-store"},
        )

    return [
        Route("/api/guest", guest, methods=["POST"]),
        Route("/api/signup", sign_up, methods=["POST"]),
        Route("/api/login", log_in, methods=["POST"]),
        Route("/api/logout", log_out, methods=["POST"]),
        Route("/api/password", password, methods=["POST"]),
        Route("/api/account/delete", delete_account, methods=["POST"]),
        Route("/api/me", me),
    ]
