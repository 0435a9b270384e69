"""Commands packed in C: redis-py's asyncio connections with hiredis's ``pack_command``.

redis-py's synchronous client packs commands with hiredis when it is installed; its asyncio
connection always packs in Python, one encode call per argument, and rebuilds its buffer once
per argument. A commit carries the room's state (about 1.5 KB) and a dozen other arguments, so
on a loaded node that packing is a visible share of the CPU. hiredis does the same work in one C
call. The connection classes here are redis-py's own with that one method replaced;
``use_hiredis_packing`` puts them into a client's pool (or a cluster's node template), keeping
the scheme's class (TCP, TLS or Unix socket).
"""

from __future__ import annotations

from typing import Any

import hiredis
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.connection import Connection, SSLConnection, UnixDomainSocketConnection
from redis.exceptions import DataError


class _HiredisPacking:
    def pack_command(self, *args: Any) -> list[bytes]:
        # As redis-py: a command name of several words ("SCRIPT LOAD") is several arguments.
        if isinstance(args[0], str):
            args = (*args[0].encode().split(), *args[1:])
        elif b" " in args[0]:
            args = (*args[0].split(), *args[1:])
        try:
            return [hiredis.pack_command(args)]
        except TypeError as e:
            raise DataError(str(e)) from e


class PackedConnection(_HiredisPacking, Connection):
    pass


class PackedSSLConnection(_HiredisPacking, SSLConnection):
    pass


class PackedUnixConnection(_HiredisPacking, UnixDomainSocketConnection):
    pass


_PACKED: dict[type[Any], type[Any]] = {
    Connection: PackedConnection,
    SSLConnection: PackedSSLConnection,
    UnixDomainSocketConnection: PackedUnixConnection,
}


def packed(connection_class: type[Any]) -> type[Any]:
    """The class with hiredis packing for redis-py's ``connection_class`` (others unchanged)."""
    return _PACKED.get(connection_class, connection_class)


def use_hiredis_packing(client: Any) -> None:
    """Make the connections ``client`` opens from now on pack their commands with hiredis."""
    if isinstance(client, RedisCluster):
        # One dict, shared with the nodes manager: nodes found later are made from it too.
        kwargs = client.nodes_manager.connection_kwargs
        kwargs["connection_class"] = packed(kwargs.get("connection_class", Connection))
        for node in client.nodes_manager.startup_nodes.values():
            node.connection_class = packed(node.connection_class)
    else:
        pool = client.connection_pool
        pool.connection_class = packed(pool.connection_class)
