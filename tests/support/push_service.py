"""A push service of our own: the receiving side of Web Push, for the tests.

It speaks what a browser's push service speaks to an application server (RFC 8030): a POST to
a subscription's endpoint, answered 201 Created. It checks what a real one checks, and more:

- the VAPID ``Authorization: vapid t=JWT, k=KEY`` header (RFC 8292): the JWT's ES256 signature
  with the key ``k``, its claims (``aud`` the endpoint's origin, ``exp`` in the future and
  within 24 hours, ``sub`` a mailto: or https: contact), and that ``k`` is the key the
  subscription was made with (``application_server_key``) when the test gave one;
- the headers: ``TTL`` (an integer), ``Content-Encoding: aes128gcm``, ``Urgency`` if present
  (very-low, low, normal, high), ``Topic`` if present (at most 32 base64url characters);
- the body: decrypted (RFC 8291, aes128gcm of RFC 8188) with the private key and the auth
  secret that the test's subscription made, here, with ``cryptography`` alone (not the
  server's library), and parsed as JSON.

A push that fails a check is answered 400 or 403 and recorded with its error. Otherwise the
answer is what the test asked for: 201 by default, or 404, 410, 429 or 500 for one
subscription or for all, for the next N pushes or until told otherwise.

It runs in a thread of its own (``http.server``, HTTP/1.1 with keep-alive), so a test of any
kind, and a server process, can use it; only on 127.0.0.1.
"""

from __future__ import annotations

import base64
import json
import os
import secrets
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

from protocol.web_push import PushDecryptError, PushKeys

URGENCIES = ("very-low", "low", "normal", "high")
TOPIC_CHARS = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_=")


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class PushRefused(Exception):
    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


@dataclass
class Subscription:
    """A browser's side of one subscription: its key pair and auth secret, made here."""

    service: PushService
    token: str
    private: ec.EllipticCurvePrivateKey = field(
        default_factory=lambda: ec.generate_private_key(ec.SECP256R1())
    )
    auth: bytes = field(default_factory=lambda: os.urandom(16))
    application_server_key: str | None = None  # the VAPID key the browser subscribed with

    @property
    def endpoint(self) -> str:
        return f"{self.service.url}/push/{self.token}"

    @property
    def public(self) -> bytes:
        return self.private.public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
        )

    def to_json(self) -> dict[str, Any]:
        """As ``PushSubscription.toJSON()`` gives it."""
        return {
            "endpoint": self.endpoint,
            "keys": {"p256dh": b64url(self.public), "auth": b64url(self.auth)},
        }

    def respond(self, status: int, times: int | None = None) -> None:
        """Answer this subscription's pushes with ``status`` (the next ``times``, or all)."""
        self.service.respond(status, times, token=self.token)

    def received(self) -> list[Received]:
        return [r for r in self.service.received if r.token == self.token]

    def delivered(self) -> list[Received]:
        return [r for r in self.received() if r.status == 201]

    def decrypt(self, body: bytes) -> bytes:
        """RFC 8291 with RFC 8188's aes128gcm framing, from the browser's side (the Python
        client's receiver, ``protocol/web_push.py``: cryptography alone, not the server's
        library)."""
        try:
            return PushKeys(self.private, self.auth).decrypt_bytes(body)
        except PushDecryptError as e:
            raise PushRefused(400, str(e)) from None


@dataclass
class Received:
    token: str
    status: int
    at: float  # time.time() when the request arrived
    headers: dict[str, str]
    claims: dict[str, Any] | None = None
    payload: dict[str, Any] | None = None
    error: str | None = None


def check_vapid(header: str, audience: str, now: float, expected_key: str | None) -> dict[str, Any]:
    """The JWT's claims if the VAPID header is right (RFC 8292), else ``PushRefused(403)``."""
    scheme, _, rest = header.partition(" ")
    if scheme.lower() != "vapid":
        raise PushRefused(403, "the Authorization scheme is not vapid")
    params: dict[str, str] = {}
    for part in rest.split(","):
        name, _, value = part.strip().partition("=")
        params[name] = value
    token, key = params.get("t", ""), params.get("k", "")
    if expected_key is not None and key != expected_key:
        raise PushRefused(403, "k is not the key the subscription was made with")
    try:
        public = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), unb64url(key))
        head_b64, claims_b64, signature_b64 = token.split(".")
        head = json.loads(unb64url(head_b64))
        claims = json.loads(unb64url(claims_b64))
        signature = unb64url(signature_b64)
    except (ValueError, TypeError):
        raise PushRefused(403, "the JWT or the key is malformed") from None
    if head.get("alg") != "ES256" or len(signature) != 64:
        raise PushRefused(403, "the JWT is not ES256")
    r, s = int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big")
    try:
        public.verify(
            encode_dss_signature(r, s),
            f"{head_b64}.{claims_b64}".encode(),
            ec.ECDSA(hashes.SHA256()),
        )
    except InvalidSignature:
        raise PushRefused(403, "the JWT's signature does not verify with k") from None
    if claims.get("aud") != audience:
        raise PushRefused(403, f"aud is {claims.get('aud')!r}, not {audience!r}")
    exp = claims.get("exp")
    if not isinstance(exp, int) or not now < exp <= now + 24 * 3600:
        raise PushRefused(403, "exp is not in the next 24 hours")
    sub = claims.get("sub")
    if not isinstance(sub, str) or not sub.startswith(("mailto:", "https:")):
        raise PushRefused(403, "sub is not a mailto: or https: contact")
    return dict(claims)


class PushService:
    """See the module docstring. ``with PushService() as service: ...``"""

    def __init__(self) -> None:
        self.subscriptions: dict[str, Subscription] = {}
        self.received: list[Received] = []
        self._answers: dict[str | None, list[Any]] = {}  # token (None: all) -> [status, times]
        self._lock = threading.Lock()
        self._hold: threading.Event | None = None
        self._drop_held = False
        self.held = 0  # requests that arrived while held
        service = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length)
                hold = service._hold
                if hold is not None:  # held: the sender waits, and may never get an answer
                    service.held += 1
                    hold.wait(60)
                    if service._drop_held:
                        self.close_connection = True
                        return
                status = service._handle(self.path, dict(self.headers.items()), body)
                self.send_response(status)
                if status == 201:
                    self.send_header("location", f"/message/{secrets.token_hex(8)}")
                self.send_header("content-length", "0")
                self.end_headers()

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def start(self) -> PushService:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> PushService:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def subscribe(self, application_server_key: str | None = None) -> Subscription:
        """A new subscription, as a browser's ``pushManager.subscribe`` would make one."""
        token = secrets.token_urlsafe(16)
        sub = Subscription(self, token, application_server_key=application_server_key)
        with self._lock:
            self.subscriptions[sub.token] = sub
        return sub

    def respond(self, status: int, times: int | None = None, token: str | None = None) -> None:
        """Answer pushes (to ``token``'s subscription, or to all) with ``status``."""
        with self._lock:
            self._answers[token] = [status, times]

    def hold(self) -> None:
        """From now on, keep each request waiting, unanswered, until ``release``."""
        self._drop_held = False
        self._hold = threading.Event()

    def release(self, *, drop: bool) -> None:
        """Let the held requests go: answered as usual, or (``drop``) with the connection
        closed and no answer, as a push that never arrived."""
        hold, self._hold = self._hold, None
        self._drop_held = drop
        if hold is not None:
            hold.set()

    def delivered(self) -> list[Received]:
        with self._lock:
            return [r for r in self.received if r.status == 201]

    def _answer(self, token: str) -> int:
        for key in (token, None):
            answer = self._answers.get(key)
            if answer is None:
                continue
            status, times = answer
            if times is not None:
                if times <= 0:
                    del self._answers[key]
                    continue
                answer[1] = times - 1
            return int(status)
        return 201

    def _handle(self, path: str, headers: dict[str, str], body: bytes) -> int:
        now = time.time()
        lower = {k.lower(): v for k, v in headers.items()}
        token = path.removeprefix("/push/")
        record = Received(token, 0, now, lower)
        with self._lock:
            sub = self.subscriptions.get(token)
            self.received.append(record)
            try:
                if not path.startswith("/push/") or sub is None:
                    raise PushRefused(404, "no such subscription")
                scripted = self._answer(token)
                record.claims = check_vapid(
                    lower.get("authorization", ""), self.url, now, sub.application_server_key
                )
                ttl = lower.get("ttl", "")
                if not ttl.isdigit():
                    raise PushRefused(400, "TTL is missing or not a number of seconds")
                if lower.get("content-encoding") != "aes128gcm":
                    raise PushRefused(400, "Content-Encoding is not aes128gcm")
                if "urgency" in lower and lower["urgency"] not in URGENCIES:
                    raise PushRefused(400, "Urgency is not one of RFC 8030's")
                topic = lower.get("topic")
                if topic is not None and (len(topic) > 32 or not set(topic) <= TOPIC_CHARS):
                    raise PushRefused(400, "Topic is longer than 32 or not base64url")
                record.payload = json.loads(sub.decrypt(body))
                record.status = scripted
            except PushRefused as e:
                record.status, record.error = e.status, e.reason
            except ValueError as e:
                record.status, record.error = 400, f"the payload is not JSON: {e}"
            return record.status
