"""The two subprotocols: the same messages as msgpack in binary frames or JSON in text frames."""

from __future__ import annotations

import json
from typing import Any

import msgpack

from .errors import ProtocolError
from .packer import pack

PROTOCOL_VERSION = 1
MSGPACK = "hearts.v1.msgpack"
JSON = "hearts.v1.json"
SUBPROTOCOLS = (MSGPACK, JSON)
MAX_FRAME_BYTES = 4096
"""Largest frame a client may send; commands are small, so anything bigger is hostile."""


class Codec:
    """Encodes server messages and decodes client frames for one subprotocol."""

    def __init__(self, name: str, max_frame: int = MAX_FRAME_BYTES) -> None:
        """``max_frame`` bounds decoding: small for what a server accepts, large in a client."""
        if name not in SUBPROTOCOLS:
            raise ValueError(f"unknown subprotocol {name!r}")
        self.name = name
        self.binary = name == MSGPACK
        self.max_frame = max_frame

    def encode(self, message: dict[str, Any]) -> bytes | str:
        if self.binary:
            return pack(message)
        return json.dumps(message, separators=(",", ":"), ensure_ascii=False)

    def decode(self, frame: bytes | str) -> dict[str, Any]:
        """A message map, or ProtocolError("malformed_frame") for anything else."""
        try:
            if self.binary:
                if not isinstance(frame, bytes):
                    raise ProtocolError("malformed_frame", "This subprotocol uses binary frames.")
                # Bound what a hostile frame can make the unpacker allocate.
                message = msgpack.unpackb(
                    frame,
                    raw=False,
                    strict_map_key=True,
                    max_str_len=self.max_frame,
                    max_bin_len=0,
                    max_array_len=max(64, self.max_frame // 16),
                    max_map_len=max(32, self.max_frame // 16),
                    max_ext_len=0,
                )
            else:
                if not isinstance(frame, str):
                    raise ProtocolError("malformed_frame", "This subprotocol uses text frames.")
                message = json.loads(frame)
                if "\\u" in frame and not _encodable(message):
                    # A lone surrogate escape (\\udc00) decodes to a str that is not Unicode
                    # text: echoing it would fail to encode on the way out.
                    raise ProtocolError("malformed_frame", "The frame holds a lone surrogate.")
        except ProtocolError:
            raise
        except (
            ValueError,  # also UnicodeDecodeError and JSON numbers of too many digits
            TypeError,
            RecursionError,  # deep nesting: json has no depth bound of its own
            msgpack.ExtraData,
            msgpack.FormatError,
            msgpack.StackError,
        ):
            raise ProtocolError("malformed_frame") from None
        if not isinstance(message, dict):
            raise ProtocolError("malformed_frame", "A message must be a map.")
        return message


def _encodable(value: Any) -> bool:
    """True if every string in a decoded JSON value is valid Unicode (encodes as UTF-8)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return False
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return True
