"""A server node under cProfile, timed in CPU seconds, for load runs: where the node's CPU goes.

    HEARTS_LOAD_PROFILE=/tmp/prof python -m load_tests.paced --start 1 ...

makes every node the load tools start run as ``python -m load_tests.profiled_node`` and write
``/tmp/prof/<node id>.prof`` when it stops (read it with ``python -m pstats``). The timer is
the process's CPU time, not the wall clock: on a busy machine a wall-clock profile (py-spy's)
charges a socket write with the time the node waited for a core after waking the reader.
cProfile roughly doubles the node's cost, so figures from a profiled run are not the report's.

To profile a window of a long run only (the steady state, not the seating):
``HEARTS_LOAD_PROFILE_WINDOW=1`` starts the node unprofiled; ``kill -USR1 <pid>`` starts a
fresh profile and ``kill -USR2 <pid>`` writes it to ``<node id>.window.prof``.
"""

from __future__ import annotations

import cProfile
import os
import signal
import time
from pathlib import Path
from types import FrameType

from server.__main__ import main


def run() -> None:
    out = Path(os.environ["HEARTS_LOAD_PROFILE"])
    out.mkdir(parents=True, exist_ok=True)
    profile = cProfile.Profile(time.process_time)

    def stop(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt  # uvicorn shuts down on it; the profile is written below

    signal.signal(signal.SIGTERM, stop)
    node = os.environ.get("NODE_ID", "node")
    if os.environ.get("HEARTS_LOAD_PROFILE_WINDOW"):
        window = cProfile.Profile(time.process_time)

        def start_window(signum: int, frame: FrameType | None) -> None:
            window.clear()
            window.enable()

        def end_window(signum: int, frame: FrameType | None) -> None:
            window.disable()
            window.dump_stats(out / f"{node}.window.prof")

        signal.signal(signal.SIGUSR1, start_window)
        signal.signal(signal.SIGUSR2, end_window)
        main()
        return
    profile.enable()
    try:
        main()
    finally:
        profile.disable()
        profile.dump_stats(out / f"{node}.prof")


if __name__ == "__main__":
    run()
