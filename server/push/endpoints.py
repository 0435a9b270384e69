"""A push subscription checked before it is kept, and its endpoint checked again before a push.

A subscription comes from a browser (``PushSubscription.toJSON()``): an endpoint, the push
service's URL for that browser, and two keys (RFC 8291): ``p256dh``, the browser's P-256 public
key, and ``auth``, a 16-byte secret. Everything else is refused with ``bad_subscription`` and a
sentence saying what is wrong.

The endpoint is a URL the server will POST to, chosen by whoever subscribed: without a guard it
would let anyone make the server send requests into its own network (server-side request
forgery). So the endpoint must be ``https`` on port 443 or another, on a host that is a name
or a public address; the sender (``sender.py``) resolves the name at each push, refuses it if
any address it resolves to is not public, and connects to the address it checked (so a name
that resolves differently a moment later, DNS rebinding, changes nothing). Only the test suite
(``HEARTS_PUSH_ALLOW_LOOPBACK=1``) may name a loopback push service, over plain http too.
"""

from __future__ import annotations

import asyncio
import base64
import ipaddress
import socket
import unicodedata
from dataclasses import dataclass
from typing import Any
from urllib.parse import SplitResult, urlsplit

from cryptography.hazmat.primitives.asymmetric import ec

from protocol.errors import ProtocolError

MAX_ENDPOINT_BYTES = 2048
LANGUAGES = ("en", "pt-BR", "ar")  # the page's languages (server/static/lang/)
MAX_LABEL = 64
LOOPBACK_NAMES = ("localhost", "localhost.")


def _refused(sentence: str) -> ProtocolError:
    return ProtocolError("bad_subscription", sentence)


def b64url_bytes(value: object, what: str) -> bytes:
    if not isinstance(value, str) or not 0 < len(value) <= 128:
        raise _refused(f"keys.{what} must be a base64url string.")
    try:
        return base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
    except (ValueError, TypeError):
        raise _refused(f"keys.{what} is not base64url.") from None


def is_public(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return is_public(address.ipv4_mapped)
    return address.is_global and not (
        address.is_multicast or address.is_reserved or address.is_unspecified
    )


def _literal(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def check_endpoint(endpoint: object, *, allow_loopback: bool) -> SplitResult:
    """The endpoint's parts if it may be pushed to (module docstring), else ``bad_subscription``."""
    if not isinstance(endpoint, str) or not endpoint:
        raise _refused("The subscription needs an endpoint, the push service's URL.")
    if len(endpoint.encode()) > MAX_ENDPOINT_BYTES:
        raise _refused(f"The endpoint is longer than {MAX_ENDPOINT_BYTES} bytes.")
    if any(ch.isspace() or unicodedata.category(ch) == "Cc" for ch in endpoint):
        raise _refused("The endpoint must not contain spaces or control characters.")
    try:
        parts = urlsplit(endpoint)
        port = parts.port
    except ValueError:
        raise _refused("The endpoint is not a URL.") from None
    host = (parts.hostname or "").lower()
    if not host or parts.username is not None or parts.password is not None or parts.fragment:
        raise _refused("The endpoint must be a plain https URL with a host.")
    literal = _literal(host)
    loopback = host in LOOPBACK_NAMES or (literal is not None and literal.is_loopback)
    if loopback and allow_loopback:
        if parts.scheme not in ("https", "http"):
            raise _refused("The endpoint must be an https URL.")
        return parts
    if parts.scheme != "https":
        raise _refused("The endpoint must be an https URL.")
    if loopback or (literal is not None and not is_public(literal)):
        raise _refused("The endpoint must be on the internet, not a private or loopback address.")
    local = host.endswith((".localhost", ".local", ".internal")) or "." not in host
    if literal is None and local:
        raise _refused("The endpoint must be on the internet, not a local name.")
    if port == 0:
        raise _refused("The endpoint's port is not valid.")
    return parts


def check_keys(keys: object) -> tuple[str, str]:
    """``p256dh`` (a valid uncompressed P-256 point) and ``auth`` (16 bytes), as given."""
    if not isinstance(keys, dict):
        raise _refused("The subscription needs keys: p256dh and auth.")
    p256dh, auth = keys.get("p256dh"), keys.get("auth")
    raw = b64url_bytes(p256dh, "p256dh")
    if len(raw) != 65 or raw[0] != 4:
        raise _refused("keys.p256dh must be an uncompressed P-256 public key (65 bytes).")
    try:
        ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), raw)
    except ValueError:
        raise _refused("keys.p256dh is not a point on the P-256 curve.") from None
    if len(b64url_bytes(auth, "auth")) != 16:
        raise _refused("keys.auth must be 16 bytes.")
    assert isinstance(p256dh, str) and isinstance(auth, str)
    return p256dh, auth


@dataclass(frozen=True, slots=True)
class NewSubscription:
    endpoint: str
    p256dh: str
    auth: str
    lang: str
    label: str


def parse_subscription(data: dict[str, Any], *, allow_loopback: bool) -> NewSubscription:
    """A subscription request's body: ``{"subscription": {"endpoint", "keys": {"p256dh",
    "auth"}}, "lang": "pt-BR", "label": "Chrome on Android"}``."""
    sub = data.get("subscription")
    if not isinstance(sub, dict):
        raise _refused("Send the browser's subscription as {\"subscription\": {...}}.")
    endpoint = sub.get("endpoint")
    check_endpoint(endpoint, allow_loopback=allow_loopback)
    assert isinstance(endpoint, str)
    p256dh, auth = check_keys(sub.get("keys"))
    lang = data.get("lang")
    label = data.get("label", "")
    if not isinstance(label, str):
        raise _refused("label must be a string.")
    label = "".join(ch for ch in label if unicodedata.category(ch)[0] != "C").strip()
    return NewSubscription(
        endpoint,
        p256dh,
        auth,
        lang if lang in LANGUAGES else "en",
        label[:MAX_LABEL],
    )


class Blocked(Exception):
    """The endpoint's host resolves to an address the server must not send to."""


async def resolve_public(
    host: str, port: int, *, allow_loopback: bool
) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    """The address to connect to for ``host``: every address it resolves to must be public
    (or, with ``allow_loopback``, loopback), else ``Blocked``."""
    literal = _literal(host)
    if literal is not None:
        addresses = [literal]
    else:
        loop = asyncio.get_running_loop()
        try:
            infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError as e:
            raise Blocked(f"{host} does not resolve: {e}") from None
        addresses = [ipaddress.ip_address(info[4][0]) for info in infos]
    if not addresses:
        raise Blocked(f"{host} has no address")
    for address in addresses:
        if not (is_public(address) or (allow_loopback and address.is_loopback)):
            raise Blocked(f"{host} resolves to {address}, which is not a public address")
    return addresses[0]
