"""The WebSocket fast path's footing (server/net/fast_path.py): every internal of uvicorn and
websockets it touches is listed, is there on the installed versions, and when one is not the
server serves with uvicorn's own protocols and says why. An upgrade that renames or rewrites any
of them fails here first."""

from __future__ import annotations

import ast
import logging
import tomllib
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.server import ServerProtocol

from server.net import fast_path
from server.net.fast_path import INTERNALS, STOCK, missing, protocols, source_digest
from server.net.http_protocol import HttpProtocol
from server.net.ws_protocol import BatchingWebSocketProtocol

ROOT = Path(__file__).resolve().parents[2]
OURS = (BatchingWebSocketProtocol, HttpProtocol)


@pytest.mark.parametrize("ours", OURS, ids=lambda c: c.__name__)
def test_every_internal_is_there_on_the_installed_versions(ours: type[Any]) -> None:
    changed = {
        f"{i.owner.__name__}.{i.name}": source_digest(i.owner, i.name)
        for i in INTERNALS[ours]
        if i.source and hasattr(i.owner, i.name)
    }
    assert missing(ours) == [], f"review the fast path against these; the digests now: {changed}"


def _touched(path: str, cls_name: str, base: type) -> tuple[set[str], set[str]]:
    """What class ``cls_name`` in ``path`` uses of ``base`` (``self.x``, overrides, ``super().x``)
    and of websockets' protocol (``self.conn.x``, ``conn.x``, ``getattr(self.conn, "x")``)."""
    tree = ast.parse((ROOT / path).read_text())
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls_name)
    body: set[str] = set()
    for node in cls.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            body.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            body.add(node.target.id)
        elif isinstance(node, ast.Assign):
            body.update(t.id for t in node.targets if isinstance(t, ast.Name))

    def owner_of(node: ast.expr) -> str:
        match node:
            case ast.Name(id="self"):
                return "self"
            case ast.Call(func=ast.Name(id="super")):
                return "super"
            case ast.Name(id="conn") | ast.Attribute(value=ast.Name(id="self"), attr="conn"):
                return "conn"
        return ""

    on_self: set[str] = {name for name in body if hasattr(base, name)}  # overrides
    on_conn: set[str] = set()
    for node in ast.walk(cls):
        target, name = None, ""
        if isinstance(node, ast.Attribute):
            target, name = node.value, node.attr
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "getattr"
            and isinstance(node.args[1], ast.Constant)
        ):
            target, name = node.args[0], str(node.args[1].value)
        if target is None or name.startswith("__"):
            continue
        owner = owner_of(target)
        if owner == "super" or (owner == "self" and name not in body):
            on_self.add(name)
        elif owner == "conn":
            on_conn.add(name)
    return on_self - {n for n in on_self if n.startswith("__")}, on_conn


@pytest.mark.parametrize(
    ("ours", "path", "cls_name", "base"),
    [
        (
            BatchingWebSocketProtocol,
            "server/net/ws_protocol.py",
            "BatchingWebSocketProtocol",
            WebSocketsSansIOProtocol,
        ),
        (BatchingWebSocketProtocol, "server/net/ws_protocol.py", "_ServerProtocol", ServerProtocol),
        (HttpProtocol, "server/net/http_protocol.py", "HttpProtocol", HttpToolsProtocol),
    ],
)
def test_the_list_names_everything_our_classes_touch(
    ours: type[Any], path: str, cls_name: str, base: type
) -> None:
    on_self, on_conn = _touched(path, cls_name, base)
    listed = {(i.owner, i.name) for i in INTERNALS[ours]}
    assert {(base, n) for n in on_self} - listed == set()
    assert {(ServerProtocol, n) for n in on_conn} - listed == set()


def _drop_after_init(owner: type, name: str) -> Callable[[pytest.MonkeyPatch], None]:
    """A release whose ``owner`` no longer sets ``name`` when built."""

    def apply(monkeypatch: pytest.MonkeyPatch) -> None:
        init = owner.__init__

        def without(self: Any, *args: Any, **kwargs: Any) -> None:
            init(self, *args, **kwargs)
            delattr(self, name)

        monkeypatch.setattr(owner, "__init__", without)

    return apply


def _rewrite(owner: type, name: str) -> Callable[[pytest.MonkeyPatch], None]:
    """A release that keeps ``owner.name`` but rewrites it."""

    def apply(monkeypatch: pytest.MonkeyPatch) -> None:
        def rewritten(self: Any, *args: Any) -> None:
            return None

        monkeypatch.setattr(owner, name, rewritten)

    return apply


def _remove(owner: type, name: str) -> Callable[[pytest.MonkeyPatch], None]:
    return lambda monkeypatch: monkeypatch.delattr(owner, name)


# What an upgrade might do, the internal the warning must name, and the classes that fall back.
BREAKS = {
    "renamed keepalive method": (
        _remove(WebSocketsSansIOProtocol, "schedule_ping"),
        "schedule_ping",
        {BatchingWebSocketProtocol},
    ),
    "renamed attribute": (
        _drop_after_init(WebSocketsSansIOProtocol, "close_timer"),
        "close_timer",
        {BatchingWebSocketProtocol},
    ),
    "run_asgi rewritten": (
        _rewrite(WebSocketsSansIOProtocol, "run_asgi"),
        "run_asgi has changed",
        {BatchingWebSocketProtocol},
    ),
    "scope set elsewhere": (
        _rewrite(WebSocketsSansIOProtocol, "handle_connect"),
        "scope is not set by handle_connect",
        {BatchingWebSocketProtocol},
    ),
    "websockets' writes renamed": (
        _drop_after_init(ServerProtocol, "writes"),
        "ServerProtocol.writes is missing",
        {BatchingWebSocketProtocol},
    ),
    "httptools parser renamed": (
        _drop_after_init(HttpToolsProtocol, "parser"),
        "parser",
        {HttpProtocol},
    ),
    "upgrade renamed": (
        _remove(HttpToolsProtocol, "handle_websocket_upgrade"),
        "handle_websocket_upgrade",
        {HttpProtocol, BatchingWebSocketProtocol},
    ),
}


@pytest.mark.parametrize("case", BREAKS)
def test_a_missing_internal_serves_with_uvicorns_protocol_and_says_which(
    case: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    break_it, named, falling = BREAKS[case]
    break_it(monkeypatch)
    with caplog.at_level(logging.WARNING, logger=fast_path.__name__):
        http, ws = protocols(fast_path=True)
    assert (http, ws) == tuple(
        STOCK[c] if c in falling else c for c in (HttpProtocol, BatchingWebSocketProtocol)
    )
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == len(falling)
    assert all(named in w and "serving with uvicorn's" in w for w in warnings), warnings


def test_on_the_installed_versions_the_fast_path_is_chosen(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger=fast_path.__name__):
        assert protocols(fast_path=True) == (HttpProtocol, BatchingWebSocketProtocol)
    assert caplog.records == []


def test_turned_off_it_serves_with_uvicorns_protocols() -> None:
    assert protocols(fast_path=False) == ("httptools", "websockets-sansio")


@pytest.mark.parametrize("package", ["uvicorn", "websockets"])
def test_installed_and_constrained_versions_are_the_pinned_ones(package: str) -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pin = next(r for r in map(Requirement, project["dependencies"]) if r.name == package).specifier
    constraints = dict(
        line.split("==")
        for line in (ROOT / "constraints.txt").read_text().splitlines()
        if "==" in line and not line.startswith("#")
    )
    assert pin.contains(version(package)), (package, version(package), str(pin))
    assert pin.contains(constraints[package]), (package, constraints[package], str(pin))


def test_a_node_starts_on_uvicorns_protocols_when_the_fast_path_cannot_even_load(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """An upgrade that moves a private uvicorn module breaks the fast path's imports: the node
    must still start, on the stock protocols, and say why."""
    import sys

    from server.__main__ import serving_protocols
    from server.net.extensions import STOCK_HTTP, STOCK_WS

    monkeypatch.setitem(sys.modules, "server.net.fast_path", None)  # importing it raises
    assert serving_protocols(True) == (STOCK_HTTP, STOCK_WS)
    assert "cannot load" in caplog.text
    monkeypatch.undo()
    http, ws = serving_protocols(True)
    assert not isinstance(http, str) and not isinstance(ws, str)  # ours, on these versions
