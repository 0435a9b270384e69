"""Bot work as jobs on a Redis stream, so bot capacity grows with workers, not with nodes.

``wire``: the queue's keys and the bytes of jobs and answers; ``client``: the asking node's
``Bots`` (``HEARTS_BOT_QUEUE=redis``); ``worker``: the loop of ``python -m server.bot_worker``.
See docs/bots.md, "Bot workers".
"""
