"""The store of record: accounts, ratings and their history, finished games with every hand,
the server's keys and push subscriptions, in PostgreSQL or a SQLite file (issue 52).

``RecordStore`` (``store.py``) is the API; ``migrate``/``check`` (``migrate.py``) bring a
database to the schema (``schema.py``) or refuse to run on one that is not there.
"""
