"""The pure core: rules, the room machine, bots and rating math. No I/O: nothing here
imports asyncio, redis, starlette or uvicorn (tests/test_import_graph.py holds it to that)."""
