"""RFC 6455 through a raw socket against a real server (the cases of load_tests/ws_conformance.py,
whose full run is by hand): control frames between a message's fragments. A ping there is
answered and the message still taken (5.4); a close there is answered with a close of the same
code, the unfinished message dropped (5.4, 5.5.1; Autobahn's case 7.1.5), whether it comes in
the fragment's write or in a write of its own after the socket's frames went to websockets."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from load_tests.ws_conformance import Case, cases, run_case
from tests.support.server_process import ServerProcess

pytestmark = pytest.mark.e2e

BETWEEN_FRAGMENTS = ("5.6", "5.7", "5.8", "7.1.5", "7.1.5b")


@pytest.fixture(scope="module")
def server() -> Iterator[ServerProcess]:
    proc = ServerProcess().start()
    yield proc
    proc.stop()


@pytest.mark.parametrize(
    "case", [c for c in cases() if c.id in BETWEEN_FRAGMENTS], ids=lambda c: f"{c.id} {c.what}"
)
async def test_control_frames_between_fragments(server: ServerProcess, case: Case) -> None:
    assert await run_case(server.ws, case) == ""
