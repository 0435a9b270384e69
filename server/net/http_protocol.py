"""uvicorn's httptools HTTP protocol, letting go of its parser once the socket is a WebSocket.

The parser holds the protocol's callbacks and the protocol holds the parser: a reference cycle.
uvicorn breaks it when an HTTP connection is lost, but a socket upgraded to a WebSocket never
reaches that: the transport moves to the WebSocket protocol and the HTTP one is left in its
cycle (about 23 objects a socket), for the cyclic garbage collector. Its pauses stall every
table on the node at once, and seating tables made one every few seconds.
"""

from __future__ import annotations

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol


class HttpProtocol(HttpToolsProtocol):
    def handle_websocket_upgrade(self) -> None:
        super().handle_websocket_upgrade()
        # The request was read whole (the parser raised its upgrade); the transport now feeds
        # the WebSocket protocol, so the parser is never used again.
        self.parser = None  # type: ignore[assignment]
