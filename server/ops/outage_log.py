"""One log line when a background loop starts failing, one when it recovers, with a count.

A loop that retries every 50 ms would otherwise log a traceback per pass for the length of a
store outage. The first failure is logged with its traceback (it may be a bug, not an outage);
repeats are only counted until the next success.
"""

from __future__ import annotations

import logging
import time


class OutageLog:
    def __init__(self, logger: logging.Logger, what: str) -> None:
        self.logger = logger
        self.what = what
        self.failures = 0
        self.since = 0.0

    def failed(self) -> None:
        """Call from an ``except`` block."""
        if self.failures == 0:
            self.since = time.monotonic()
            self.logger.warning("%s failing; retrying quietly until it recovers", self.what,
                                exc_info=True)
        self.failures += 1

    def succeeded(self) -> None:
        if self.failures:
            self.logger.warning(
                "%s recovered after %d failed attempts over %.1f s",
                self.what,
                self.failures,
                time.monotonic() - self.since,
                extra={"failures": self.failures},
            )
            self.failures = 0
