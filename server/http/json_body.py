"""The one reader of JSON request bodies, for every HTTP route that takes one.

A body is hostile until it has passed every check here, in this order, each a ``ProtocolError``
with a stable code (docs/protocol.md, "HTTP"):

- ``unsupported_media_type`` (415): the Content-Type is not ``application/json`` (with at most a
  UTF-8 ``charset``). A page of another site can post ``text/plain`` or a form to us from a
  visitor's browser without a CORS preflight; it cannot post ``application/json``.
- ``too_large`` (400): more than ``MAX_BODY`` bytes. Read in chunks and stopped there, so a huge
  body is never held whole.
- ``malformed_frame`` (400): not UTF-8, not JSON, nested deeper than ``MAX_DEPTH``, or not an
  object. The depth is measured before parsing, so the parser never recurses deep enough to
  raise ``RecursionError`` (which would answer 500).
"""

from __future__ import annotations

import json
import re
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse

from protocol.errors import HeartsError, ProtocolError

MAX_BODY = 4096
MAX_DEPTH = 16  # the deepest body any route reads is 2 ({"options": {...}})

STATUS = {
    "bad_token": 401,
    "wrong_credentials": 401,
    "room_not_found": 404,
    "game_not_found": 404,
    "name_taken": 409,
    "game_in_play": 409,
    "unsupported_media_type": 415,
    "too_many_attempts": 429,
}

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKET = re.compile(r"[\[\]{}]")


def refused(e: HeartsError) -> JSONResponse:
    """The error frame of a refused request, with its HTTP status (400 unless listed)."""
    return JSONResponse(e.frame(None), status_code=STATUS.get(e.code, 400))


def is_json_type(content_type: str) -> bool:
    """``application/json``, optionally with ``charset=utf-8`` (any case, quoted or not)."""
    media, *params = (part.strip().lower() for part in content_type.split(";"))
    if media != "application/json":
        return False
    for param in params:
        key, _, value = param.partition("=")
        if key.strip() != "charset" or value.strip().strip('"') not in ("utf-8", "utf8"):
            return False
    return True


def nesting_depth(text: str) -> int:
    """How deep arrays and objects nest in ``text`` (brackets inside strings do not count)."""
    depth = deepest = 0
    for bracket in _BRACKET.findall(_STRING.sub('""', text)):
        depth += 1 if bracket in "[{" else -1
        deepest = max(deepest, depth)
    return deepest


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parse_json_object(body: bytes) -> dict[str, Any]:
    """The JSON object in ``body``; ProtocolError ``malformed_frame`` if it is not one."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise ProtocolError("malformed_frame", "The request body is not UTF-8.") from None
    if nesting_depth(text) > MAX_DEPTH:
        raise ProtocolError(
            "malformed_frame", f"The request body nests deeper than {MAX_DEPTH} levels."
        )
    try:
        data = json.loads(text, parse_constant=_no_constant)
    except ValueError:
        raise ProtocolError("malformed_frame", "The request body is not valid JSON.") from None
    if not isinstance(data, dict):
        raise ProtocolError("malformed_frame", "The request body must be a JSON object.")
    return data


async def read_json(request: Request) -> dict[str, Any]:
    """The request's JSON object ({} for an empty body); ProtocolError otherwise."""
    if not is_json_type(request.headers.get("content-type", "")):
        raise ProtocolError(
            "unsupported_media_type", "Send the body as Content-Type: application/json."
        )
    too_large = ProtocolError("too_large", f"The request body is larger than {MAX_BODY} bytes.")
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY:
        raise too_large
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY:
            raise too_large
    return parse_json_object(bytes(body)) if body else {}
