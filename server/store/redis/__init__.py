"""The Redis stores: rooms (``rooms``, with its key layout, deadline shards and pub/sub
subscriber), the league (the quick-play queue) and sessions; the raw client they share in
``client/`` and their Lua scripts in ``lua/``."""
