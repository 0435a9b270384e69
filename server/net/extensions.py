"""What the app and the server's own WebSocket protocol share, without importing uvicorn.

The protocol (``server.net.ws_protocol``) rests on uvicorn's private internals, so the rest of
the app reaches it only through these names: the scope extensions it adds (``DIRECT``,
``ROUND_TRIP``), the round trip it measures, and the interface of its direct send. Where the
protocol cannot be used (``server.net.fast_path``), uvicorn's stock protocols serve instead
(``STOCK_HTTP``, ``STOCK_WS``) and the app reads and writes through ASGI.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

DIRECT = "hearts.websocket.direct_send"
ROUND_TRIP = "hearts.websocket.round_trip"
STOCK_HTTP = "httptools"  # uvicorn's protocols, by the names uvicorn.run takes
STOCK_WS = "websockets-sansio"


@dataclass(slots=True)
class RoundTrip:
    """The last measured ping round trip of one socket, in seconds (0 until the first pong)."""

    seconds: float = 0.0


class DirectSocket(Protocol):
    """One socket's direct send (``scope["extensions"][DIRECT]["send"]``), as the app uses it."""

    on_writable: Callable[[], None] | None  # called once the buffer drained after a refusal

    def write(self, frames: Sequence[bytes | str]) -> bool:
        """Send ``frames`` now, in one write; False (nothing sent) while the buffer is full."""
        ...

    def detach(
        self, on_message: Callable[[bytes | str], None], on_closed: Callable[[], None]
    ) -> None:
        """Hand the accepted socket to the app's callbacks; its ASGI coroutine may return."""
        ...

    def close(self, code: int, reason: str = "") -> None: ...

    def pause_reading(self) -> None: ...

    def resume_reading(self) -> None: ...
