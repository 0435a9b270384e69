"""Logs as JSON lines, one object per record, written by python-json-logger.

A hand-made format string breaks its line on a quote in a message; the library escapes every
field. uvicorn's own loggers go through the same handler, so a log shipper reads one format.
"""

from __future__ import annotations

import logging
import sys

from pythonjsonlogger.json import JsonFormatter

UVICORN_LOGGERS = ("uvicorn", "uvicorn.error", "uvicorn.access")


class ClientFaultFilter(logging.Filter):
    """A client's bad frame is the client's fault, not ours: one line, no traceback.

    uvicorn logs an invalid UTF-8 text frame with ``logger.exception`` (a traceback per frame)
    before it closes the socket with 1007; a fuzzer could fill the log with them.
    """

    MESSAGES = ("Invalid UTF-8 sequence received from client.",)

    def filter(self, record: logging.LogRecord) -> bool:
        if record.getMessage() in self.MESSAGES:
            record.exc_info = None
            record.exc_text = None
            record.levelno, record.levelname = logging.INFO, "INFO"
        return True


def configure(level: str) -> dict[str, object]:
    """Configure the root logger; returns the ``log_config`` to hand to uvicorn."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        JsonFormatter(
            "{asctime}{levelname}{name}{message}",
            style="{",
            rename_fields={
                "asctime": "t", "levelname": "level", "name": "logger", "message": "msg"
            },
        )
    )
    handler.addFilter(ClientFaultFilter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    for name in UVICORN_LOGGERS:
        logger = logging.getLogger(name)
        logger.handlers[:] = []
        logger.propagate = True
    # uvicorn would install its own text handlers; a config that changes nothing keeps ours.
    return {"version": 1, "disable_existing_loggers": False}
