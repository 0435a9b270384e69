"""The Redis stores: rooms (``rooms``, with its key layout, deadline shards and pub/sub
subscriber), the league and accounts; the raw client they share in ``client/`` and
their Lua scripts in ``lua/``."""
