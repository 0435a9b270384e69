"""`python -m server` (or `hearts-server`): serve on HOST:PORT with uvicorn."""

from __future__ import annotations

import asyncio
import logging
import os

import uvicorn

from protocol.codec import MAX_FRAME_BYTES
from server.app import create_app
from server.config import Settings
from server.net.extensions import STOCK_HTTP, STOCK_WS
from server.ops import gc_pacing
from server.ops.log_setup import configure


def serving_protocols(fast_path: bool) -> tuple[type[asyncio.Protocol] | str, ...]:
    """uvicorn's ``http`` and ``ws``: ours where they fit the installed uvicorn and websockets
    (``server.net.fast_path``), else uvicorn's own. Our protocols import uvicorn's private
    modules: if an upgrade moved one, the node still starts, on the stock protocols."""
    try:
        from server.net.fast_path import protocols
    except ImportError as e:
        logging.getLogger("server").warning(
            "the WebSocket fast path cannot load (%s); serving with uvicorn's own protocols", e
        )
        return STOCK_HTTP, STOCK_WS
    return protocols(fast_path)


def main() -> None:
    # JSON lines from the first message on (reading the settings may already warn).
    log_config = configure(os.environ.get("LOG_LEVEL", "INFO"))
    settings = Settings.from_env()
    gc_pacing.install()  # no collector pause stalls every table at once (server/ops/gc_pacing.py)
    store = "redis " + settings.redis_url if settings.redis_url else "embedded in-process store"
    logging.getLogger("server").info(
        "Hearts Live on http://%s:%d (%s)", settings.host, settings.port, store
    )
    http, ws = serving_protocols(settings.ws_fast_path)
    uvicorn.run(
        create_app(settings),
        host=settings.host,
        port=settings.port,
        http=http,
        ws=ws,
        ws_max_size=MAX_FRAME_BYTES,
        ws_per_message_deflate=settings.ws_deflate,
        ws_ping_interval=settings.ws_ping_interval,
        ws_ping_timeout=settings.ws_ping_interval,
        timeout_graceful_shutdown=5,
        log_level=settings.log_level.lower(),
        log_config=log_config,
        lifespan="on",
    )


if __name__ == "__main__":
    main()
