"""The raw Redis client the stores share: connecting and the error mapping
(``connect``), pipelined lanes beside redis-py (``lane``), one round trip per turn of
the event loop (``batching``) and commands packed in C (``packing``)."""
