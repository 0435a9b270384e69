"""One commit's events as this node's sockets get them: each event encoded once per
subprotocol, and each audience's frames listed once per subprotocol, not once per socket.

A card is three or four events to four sockets; the sockets of one seat (and the watchers)
get the same frames, so fan-out does the per-event work once and each socket only takes its
list (``Connection.deliver``).
"""

from __future__ import annotations

from collections.abc import Sequence

from protocol.codec import Codec
from server.core.room.commands import Event
from server.core.room.views import event_message, visible


class CommitFrames:
    __slots__ = ("_encoded", "_lists", "events", "first_seq", "replaced", "room")

    def __init__(self, room: str, first_seq: int, events: Sequence[Event]) -> None:
        self.room = room
        self.first_seq = first_seq
        self.events = events
        # Seats handed to a bot by one of these events: their sockets watch from that event on.
        self.replaced = frozenset(e.data.get("seat") for e in events if e.type == "replaced")
        self._encoded: list[dict[str, bytes | str]] = [{} for _ in events]
        self._lists: dict[tuple[str, int | None], list[bytes | str]] = {}

    def frame(self, k: int, codec: Codec) -> bytes | str:
        """Event ``k`` in ``codec``'s encoding."""
        encoded = self._encoded[k]
        frame = encoded.get(codec.name)
        if frame is None:
            event = self.events[k]
            frame = encoded[codec.name] = codec.encode(
                event_message(self.room, self.first_seq + k, event)
            )
        return frame

    def frames_for(self, codec: Codec, seat: int | None) -> list[bytes | str]:
        """Every event a socket in ``seat`` (None: watching) sees, in order (shared: not to be
        changed)."""
        key = (codec.name, seat)
        frames = self._lists.get(key)
        if frames is None:
            frames = self._lists[key] = [
                self.frame(k, codec)
                for k, event in enumerate(self.events)
                if visible(event.audience, seat)
            ]
        return frames
