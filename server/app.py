"""The Starlette application: WebSocket at /ws, the HTTP API, health, and the web client."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.websockets import WebSocket, WebSocketDisconnect

from protocol.codec import JSON, SUBPROTOCOLS, Codec
from protocol.errors import HeartsError, ProtocolError
from server.accounts.identity import Identity
from server.accounts.keys import signing_key
from server.accounts.service import Accounts
from server.bots_queue.client import QueuedBots
from server.config import Settings
from server.core.room.game_view import game_view
from server.core.room.notices import PushPolicy
from server.core.room.state import parse_options
from server.fanout.hub import Hub
from server.fanout.presence import Presence
from server.http.account_routes import account_routes, bearer_token
from server.http.game_routes import game_routes
from server.http.json_body import read_json, refused
from server.http.me_routes import me_routes
from server.http.push_routes import push_routes
from server.league.archiving import Archiver
from server.league.standings import Standings
from server.net.connection import Closing, Connection
from server.net.extensions import DIRECT, ROUND_TRIP, DirectSocket
from server.net.socket_driver import SocketDriver
from server.net.socket_writer import start_writer
from server.net.web_security import SecurityHeaders, origin_allowed
from server.ops import metrics
from server.ops.gc_pacing import PacedCollections
from server.ops.loop_lag import LoopLag
from server.play.actors import Actors
from server.play.bot_jobs import Bots
from server.play.bot_pool import BotPool
from server.play.quickplay import QuickPlay
from server.play.rooms import RoomService, public_info
from server.play.scheduler import DeadlineAlarm, Scheduler
from server.push.keys import VapidKeys
from server.push.sender import PushSender
from server.record.engine import default_data_dir, default_url
from server.record.migrate import migrate
from server.record.store import RecordStore
from server.store import RoomStore, open_league_store, open_store
from server.store.redis.client.connect import connect

log = logging.getLogger(__name__)
STATIC = Path(__file__).parent / "static"


Closer = Callable[[int, str], Awaitable[None]]
"""Closes one socket with a code and a reason."""


class Node:
    """Everything one server process holds; none of it is state that cannot be lost."""

    def __init__(self, settings: Settings, store: RoomStore | None = None) -> None:
        self.settings = settings
        self.store = store or open_store(
            settings.redis_url,
            wait_replicas=settings.redis_wait_replicas,
            wait_ms=settings.redis_wait_ms,
            node=settings.node_id,
            data_dir=default_data_dir(),
        )
        self.id = settings.node_id  # names this process's sockets in room state
        if settings.redis_url and not settings.database_url:
            log.warning(
                "HEARTS_DATABASE_URL is not set: this node keeps accounts and finished games in "
                "its own SQLite file, which other nodes cannot see"
            )
        self.record = RecordStore.open(settings.database_url or default_url())
        self.league = open_league_store(settings.redis_url, data_dir=default_data_dir())
        self.bots = open_bots(settings)
        clock = time.time  # the wall clock of synchronized nodes (docs/architecture.md)
        actors = Actors()
        self.hub = Hub(self.store, self.id, actors)
        alarm = DeadlineAlarm(clock, settings.scheduler_interval)
        self.push = PushSender(  # Web Push: the rooms' push outboxes, sent (server/push/)
            self.record,
            VapidKeys(self.record, clock),
            contact=settings.vapid_contact,
            allow_loopback=settings.push_allow_loopback,
            clock=clock,
        )
        self.rooms = RoomService(
            self.store,
            self.bots,
            clock,
            actors=actors,
            on_commit=alarm.committed,
            on_events=self.hub.committed,
            on_unknown=self.hub.outcome_unknown,
            archive=Archiver(self.record, self.store, clock).archive,
            push=self.push.deliver,
            push_policy=PushPolicy(settings.push_interval, settings.push_retry),
        )
        self.scheduler = Scheduler(self.rooms, alarm, settings.outage_after)
        self.presence = Presence(self.id, self.rooms, self.hub, settings.node_ttl)
        self.quickplay = QuickPlay(self, self.league, self.record)
        self.standings = Standings(self.record)
        self.accounts = Accounts(  # account rows in the record; sessions in the league store
            self.record,
            self.league,
            signing_key(settings.secret, self.record, clock),
            clock,
            settings.accounts,
        )
        self.connections: set[Connection] = set()
        self.closers: dict[Connection, Closer] = {}  # to close a revoked session's socket
        self._revocations: asyncio.Task[None] | None = None
        self.loop_lag = LoopLag(metrics.LOOP_LAG.observe)
        self.collections = PacedCollections()
        self.draining = False

    def invite_link(self, room: str) -> str:
        return f"{self.settings.public_url.rstrip('/')}/r/{room}"

    async def start(self) -> None:
        await migrate(self.record.engine)  # a no-op when the schema is current
        await self.accounts.start()  # the guest tokens' signing key, kept in the record
        await self.push.start()  # the VAPID key pair, kept in the record
        # A new outage is recorded before the rooms read it, and both before any tick.
        await self.scheduler.recover_downtime()
        await self.rooms.start()
        await self.hub.start()
        await self.scheduler.start()
        await self.presence.start()
        await self.quickplay.start()
        self._revocations = asyncio.create_task(self.accounts.watch_revocations(self.revoked))
        self.loop_lag.start()
        self.collections.start()

    async def revoked(self, conn: Connection) -> None:
        """The session this connection logged in with was revoked: close it (4001)."""
        close = self.closers.get(conn)
        if close is not None:
            with contextlib.suppress(Exception):
                await close(4001, "session ended")

    def opened(self, conn: Connection, close: Closer) -> None:
        """A socket was accepted for ``conn``."""
        self.connections.add(conn)
        self.closers[conn] = close
        metrics.CONNECTIONS.set(len(self.connections))

    async def gone(self, conn: Connection) -> None:
        """``conn``'s socket is closed: it leaves the queue and its room."""
        self.connections.discard(conn)
        self.closers.pop(conn, None)
        metrics.CONNECTIONS.set(len(self.connections))
        await conn.on_close()

    async def stop(self) -> None:
        self.draining = True
        self.loop_lag.stop()
        self.collections.stop()
        # Drain: close every socket with "service restart" so clients reconnect elsewhere.
        for close in list(self.closers.values()):
            with contextlib.suppress(Exception):
                await close(1012, "server restarting")
        if self._revocations is not None:
            self._revocations.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._revocations
        await self.quickplay.stop()
        await self.scheduler.stop()
        await self.push.stop()
        await self.presence.stop()
        await self.hub.stop()
        await self.bots.close()
        await self.store.close()
        await self.record.close()

    async def hint(self, room: str, player: str) -> dict[str, Any]:
        state = await self.rooms.load(room)
        if state is None:
            raise ProtocolError("room_not_found")
        seat = state.seat_of(player)
        if seat is None or state.game is None:
            raise ProtocolError("not_seated")
        if state.options.rated or not state.options.hints:
            raise ProtocolError("hints_disabled")
        return await self.bots.hint(game_view(state.game, seat))


def open_bots(settings: Settings) -> Bots:
    """The node's bots: its own process pool, or the queue of bot workers on Redis."""
    if settings.bot_queue == "redis":
        if not settings.redis_url:
            raise ValueError("HEARTS_BOT_QUEUE=redis needs the deployment's Redis (REDIS_URL)")
        client = connect(settings.redis_url)  # its own connections: one blocks reading answers
        return QueuedBots(client, settings.node_id, deadline=settings.bot_deadline)
    return BotPool(settings.bot_workers, deadline=settings.bot_deadline)


def _direct_closer(send: DirectSocket) -> Closer:
    async def close(code: int, reason: str) -> None:
        send.close(code, reason)

    return close


def _asgi_closer(ws: WebSocket) -> Closer:
    async def close(code: int, reason: str) -> None:
        await ws.close(code=code, reason=reason)

    return close


def create_app(settings: Settings | None = None, store: RoomStore | None = None) -> Starlette:
    settings = settings or Settings.from_env()
    node = Node(settings, store)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await node.start()
        try:
            yield
        finally:
            await node.stop()

    async def healthz(request: Request) -> Response:
        return PlainTextResponse("ok")

    async def readyz(request: Request) -> Response:
        ok = not node.draining and await node.store.ping()
        return PlainTextResponse("ready" if ok else "not ready", status_code=200 if ok else 503)

    async def bearer(request: Request) -> Identity | None:
        return await node.accounts.verify(bearer_token(request))

    async def create_room(request: Request) -> Response:
        identity = await bearer(request)
        if identity is None:
            return refused(
                ProtocolError("bad_token", "Send Authorization: Bearer <token> from /api/guest.")
            )
        try:
            data = await read_json(request)
            raw = data.get("options") or {}
            if not isinstance(raw, dict):
                raise ProtocolError("bad_field", "options must be a JSON object of options.")
            options = parse_options(raw, clocks=settings.clocks, kind="friends")
        except HeartsError as e:
            return refused(e)
        state = await node.rooms.create(
            kind="friends", host=identity.player, host_name=identity.name, options=options
        )
        return JSONResponse(
            {"room": state.id, "link": node.invite_link(state.id), "info": public_info(state)},
            status_code=201,
        )

    async def room_info(request: Request) -> Response:
        code = request.path_params["code"]
        state = await node.rooms.load(code) if 4 <= len(code) <= 40 else None
        if state is None:
            return refused(ProtocolError("room_not_found"))
        return JSONResponse(public_info(state))

    async def metrics_endpoint(request: Request) -> Response:
        return Response(generate_latest(metrics.REGISTRY), media_type=CONTENT_TYPE_LATEST)

    async def ladder(request: Request) -> Response:
        try:
            limit = max(1, min(100, int(request.query_params.get("limit", "20"))))
        except ValueError:
            return refused(ProtocolError("bad_field", "limit must be an integer from 1 to 100"))
        identity = await bearer(request)
        return JSONResponse(
            await node.standings.ladder(identity.player if identity else None, limit)
        )

    async def player_info(request: Request) -> Response:
        player = request.path_params["player"]
        if not 1 <= len(player) <= 64:
            return refused(ProtocolError("bad_field", "not a player id"))
        return JSONResponse(await node.standings.player(player))

    async def index(request: Request) -> Response:
        page = STATIC / "index.html"
        if page.exists():
            return FileResponse(page)
        return PlainTextResponse("Hearts Live: the web client is not built yet; see README.")

    async def service_worker(request: Request) -> Response:
        # From the root, so its scope is the whole site (a worker's scope is its folder).
        return FileResponse(
            STATIC / "sw.js",
            media_type="text/javascript",
            headers={"cache-control": "no-cache"},
        )

    async def player_page(request: Request) -> Response:
        return FileResponse(STATIC / "player.html")

    async def ws_endpoint(ws: WebSocket) -> None:
        offered = ws.scope.get("subprotocols") or []
        chosen = next((p for p in offered if p in SUBPROTOCOLS), None)
        if node.draining or len(node.connections) >= settings.max_connections:
            await ws.close(code=1013)
            return
        if offered and chosen is None:
            await ws.close(code=1002)
            return
        allowed = (settings.public_url, *settings.accounts.allowed_origins)
        if not origin_allowed(ws.headers.get("origin"), ws.headers.get("host"), allowed):
            await ws.close(code=1008)  # another site's page: cross-site WebSocket hijacking
            return
        await ws.accept(subprotocol=chosen)
        conn = Connection(node, Codec(chosen or JSON))
        extensions = ws.scope.get("extensions", {})
        measured = extensions.get(ROUND_TRIP)
        if measured is not None:
            conn.round_trip = measured["round_trip"]
        direct = extensions.get(DIRECT)
        if direct is not None:
            # This server's protocol: the socket is driven by its callbacks from here on, and
            # this coroutine (with Starlette's frames and the scope) is let go.
            send: DirectSocket = direct["send"]
            node.opened(conn, _direct_closer(send))
            SocketDriver(conn, send, node.gone)
            return
        # Any other ASGI server: this coroutine reads the socket for its life.
        node.opened(conn, _asgi_closer(ws))
        writer = start_writer(ws, conn)
        try:
            while True:
                message = await ws.receive()
                if message["type"] == "websocket.disconnect":
                    break
                frame = message.get("text")
                if frame is None:
                    frame = message.get("bytes") or b""
                await conn.on_frame(frame)
        except Closing as e:
            await writer.drain()  # the answer that came before the close
            with contextlib.suppress(Exception):
                await ws.close(code=e.code, reason=e.reason)
        except (WebSocketDisconnect, RuntimeError):
            pass
        finally:
            await node.gone(conn)
            writer.stop()

    routes = [
        Route("/healthz", healthz),
        Route("/readyz", readyz),
        Route("/metrics", metrics_endpoint),
        *account_routes(node.accounts),
        Route("/api/rooms", create_room, methods=["POST"]),
        Route("/api/rooms/{code}", room_info),
        Route("/api/ladder", ladder),
        Route("/api/players/{player}", player_info),
        *push_routes(
            node.record,
            node.push.keys,
            bearer,
            time.time,
            allow_loopback=settings.push_allow_loopback,
        ),
        Route("/sw.js", service_worker),
        *me_routes(node.rooms, bearer, time.time),
        *game_routes(node.record, node.rooms.load, STATIC / "game.html"),
        Route("/", index),
        Route("/r/{code}", index),
        Route("/p/{player}", player_page),
        WebSocketRoute("/ws", ws_endpoint),
    ]
    if STATIC.exists():
        routes.append(Mount("/static", StaticFiles(directory=STATIC), name="static"))
    app = Starlette(routes=routes, lifespan=lifespan, middleware=[Middleware(SecurityHeaders)])
    app.state.node = node
    return app
