"""Browser-facing protections: security headers on every HTTP answer, the Origin check on /ws.

The Content-Security-Policy allows scripts, styles and connections from this origin only (no
inline script: the web client is plain modules), images from here and ``data:`` (the icon, the
player page's plot is inline SVG built by script), and no framing by any site (clickjacking).
``/ws`` refuses a handshake whose Origin is another site's (cross-site WebSocket hijacking: a
page elsewhere opening a socket with the player's browser); clients that send no Origin (the
Python client, bots, load tests) are not browsers and are let through.
"""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Message, Receive, Scope, Send

CSP = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)
HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"same-origin"),
    (b"cross-origin-opener-policy", b"same-origin"),
)


class SecurityHeaders:
    """ASGI middleware: adds ``HEADERS`` to every HTTP response (WebSockets pass through)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                present = {name.lower() for name, _ in message.get("headers", [])}
                message["headers"] = [
                    *message.get("headers", []),
                    *(h for h in HEADERS if h[0] not in present),
                ]
            await send(message)

        await self.app(scope, receive, with_headers)


def _origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower() if parts.scheme and parts.netloc else ""


def origin_allowed(origin: str | None, host: str | None, allowed: Iterable[str]) -> bool:
    """Whether a /ws handshake with this Origin may proceed.

    No Origin: not a browser, allowed. Otherwise the Origin's host must be the host the client
    connected to (the page's own server, whatever scheme a proxy terminates), or one of
    ``allowed`` (full origins such as PUBLIC_URL's).
    """
    if origin is None:
        return True
    origin = origin.strip().lower()
    if origin in {o for a in allowed if (o := _origin_of(a))}:
        return True
    parts = urlsplit(origin)
    return host is not None and parts.scheme in ("http", "https") and parts.netloc == host.lower()
