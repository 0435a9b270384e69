"""What the WebSocket fast path takes from uvicorn's and websockets' internals, checked at start.

``ws_protocol.BatchingWebSocketProtocol`` subclasses uvicorn's sans-I/O WebSocket protocol and
``http_protocol.HttpProtocol`` its httptools protocol; both read and write attributes that are
no public API, override methods by name, and copy the logic of some. pyproject pins uvicorn and
websockets to the minor versions they were written for, but a patch release may still rename an
attribute (an override whose name is gone is never called: the fast path breaks without an
error). So ``protocols`` looks up every internal listed here on the installed versions, and a
class of ours whose internals are not all there is replaced by uvicorn's own protocol, with a
warning naming what is missing: the app works through plain ASGI too, only slower.

An internal is looked up on an instance uvicorn builds (most are set in ``__init__``), or, for
one that uvicorn assigns only later, in the source of the method that assigns it. A method whose
logic ours copies or mirrors carries a digest of its source: any change to it, even one that
keeps its name, is a change the copy has not seen. After a deliberate upgrade,
tests/net/test_fast_path.py says which digests changed; update them once the copies are reviewed.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import logging
import re
from dataclasses import dataclass
from typing import Any

import uvicorn
from uvicorn.config import Config
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from uvicorn.server import ServerState
from websockets.server import ServerProtocol
from websockets.version import version as websockets_version

from server.net.extensions import STOCK_HTTP, STOCK_WS
from server.net.http_protocol import HttpProtocol
from server.net.ws_protocol import BatchingWebSocketProtocol

log = logging.getLogger(__name__)

Protocol = type[asyncio.Protocol] | str  # what uvicorn.run takes as ``http`` and ``ws``


@dataclass(frozen=True, slots=True)
class Internal:
    """``owner.name``, used by one of our protocol classes."""

    owner: type
    name: str
    set_in: str = ""  # the method that assigns it, when it is not there once built
    source: str = ""  # the sha256 of its source (a prefix), when our code copies or mirrors it


def _attrs(owner: type, names: str, set_in: str = "") -> tuple[Internal, ...]:
    return tuple(Internal(owner, name, set_in) for name in names.split())


_UVICORN_WS = WebSocketsSansIOProtocol

# Every internal each class of ours touches (tests/net/test_fast_path.py reads our classes' source
# to check that none is left out).
INTERNALS: dict[type[asyncio.Protocol], tuple[Internal, ...]] = {
    BatchingWebSocketProtocol: (
        *_attrs(
            _UVICORN_WS,
            "app close_sent close_timer conn curr_msg_data_type disconnected frames"
            " handshake_complete keepalive_timeout last_ping_rtt logger loop pending_ping_payload"
            " ping_interval ping_sent_at ping_timeout ping_timer pong_timer queue read_paused"
            " send_500_response transport writable",
        ),
        *_attrs(_UVICORN_WS, "request response scope", set_in="handle_connect"),
        # Overridden: under another name ours would never be called.
        *_attrs(_UVICORN_WS, "connection_lost data_received resume_writing stop_keepalive"),
        # Overridden with a copy of (part of) their logic, or relied on to do just what they do.
        Internal(_UVICORN_WS, "run_asgi", source="662375aa38d9"),
        Internal(_UVICORN_WS, "send", source="3b8afeb81b9b"),  # close_socket mirrors its close
        Internal(_UVICORN_WS, "receive", source="1dc0e7153900"),  # detach mirrors its resume
        Internal(_UVICORN_WS, "handle_connect", source="fe2a087aa222"),  # the scope's extensions
        Internal(_UVICORN_WS, "send_receive_event_to_app", source="a2b10de91477"),
        Internal(_UVICORN_WS, "start_keepalive", source="6d83bdbc3db8"),
        Internal(_UVICORN_WS, "schedule_ping", source="002da2050fd2"),
        Internal(_UVICORN_WS, "send_keepalive_ping", source="02da3945b3e6"),
        Internal(_UVICORN_WS, "handle_pong", source="b20c68cc7e4f"),
        # Feeds the new protocol the request alone: what detach() takes for "nothing read past it".
        Internal(HttpToolsProtocol, "handle_websocket_upgrade", source="d5da377bfc77"),
        # websockets' protocol as uvicorn builds it (``conn``; its class is swapped for ours).
        *_attrs(
            ServerProtocol,
            "current_size data_to_send extensions max_message_size parser send_binary send_close"
            " send_text state writes",
        ),
        Internal(ServerProtocol, "recv_frame", source="4f83d3b90ea6"),
    ),
    HttpProtocol: (
        Internal(HttpToolsProtocol, "parser"),
        Internal(HttpToolsProtocol, "handle_websocket_upgrade"),
    ),
}
STOCK: dict[type[asyncio.Protocol], str] = {
    BatchingWebSocketProtocol: STOCK_WS,
    HttpProtocol: STOCK_HTTP,
}  # what uvicorn serves with instead of each


def protocols(fast_path: bool) -> tuple[Protocol, Protocol]:
    """The ``http`` and ``ws`` protocols for uvicorn: ours where all they touch is there."""
    if not fast_path:
        log.info("WebSocket fast path off (HEARTS_WS_FAST_PATH=0): uvicorn's own protocols")
        return STOCK[HttpProtocol], STOCK[BatchingWebSocketProtocol]
    found = _instances()
    chosen: list[Protocol] = []
    for ours in (HttpProtocol, BatchingWebSocketProtocol):
        gone = missing(ours, found)
        if gone:
            log.warning(
                "%s does not fit uvicorn %s and websockets %s (%s); serving with uvicorn's %r",
                ours.__name__,
                uvicorn.__version__,
                websockets_version,
                "; ".join(gone),
                STOCK[ours],
            )
        chosen.append(STOCK[ours] if gone else ours)
    return chosen[0], chosen[1]


def missing(ours: type[asyncio.Protocol], found: dict[type, object] | None = None) -> list[str]:
    """What of ``INTERNALS[ours]`` the installed versions lack or have changed (empty: none)."""
    found = _instances() if found is None else found
    gone: list[str] = []
    for internal in INTERNALS[ours]:
        problem = _check(internal, found.get(internal.owner))
        if problem:
            owner = internal.owner
            gone.append(f"{owner.__module__}.{owner.__qualname__}.{internal.name} {problem}")
    return gone


def source_digest(owner: type, name: str) -> str:
    """The ``Internal.source`` of ``owner.name`` as installed."""
    return hashlib.sha256(inspect.getsource(getattr(owner, name)).encode()).hexdigest()[:12]


def _check(internal: Internal, instance: object | None) -> str:
    owner, name = internal.owner, internal.name
    if instance is None:
        return "not checked: uvicorn could not build its owner"
    if internal.set_in:
        setter = getattr(owner, internal.set_in, None)
        if setter is None or not re.search(rf"\bself\.{name}\b[^=\n]*=", inspect.getsource(setter)):
            return f"is not set by {internal.set_in}"
    elif not hasattr(instance, name):
        return "is missing"
    if internal.source:
        try:
            digest = source_digest(owner, name)
        except (OSError, TypeError):
            return "has no source to compare"
        if digest != internal.source:
            return f"has changed (source {digest}, not {internal.source})"
    return ""


def _instances() -> dict[type, object]:
    """One of each class that ``INTERNALS`` names, as uvicorn builds it; None where it cannot."""
    config = Config(app=_no_app, log_config=None, lifespan="off")
    found: dict[type, object] = {}
    loop = asyncio.new_event_loop()  # for ``_loop``: without it, uvicorn asks asyncio for one
    try:
        for owner in (WebSocketsSansIOProtocol, HttpToolsProtocol):
            try:
                found[owner] = owner(config, ServerState(), {}, _loop=loop)
            except Exception as e:
                log.warning("could not build uvicorn's %s: %r", owner.__name__, e)
    finally:
        loop.close()
    conn = getattr(found.get(WebSocketsSansIOProtocol), "conn", None)
    if type(conn) is ServerProtocol:  # exactly: ws_protocol swaps its class for a subclass
        found[ServerProtocol] = conn
    return found


async def _no_app(scope: Any, receive: Any, send: Any) -> None:
    """The app of the protocols built only to be looked at; never called."""
