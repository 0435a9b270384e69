"""Accounts and sessions: sign up, log in, log out, change a password, claim a guest, verify.

The thin service between the HTTP routes (``server/http/account_routes.py``), the WebSocket ``auth``
command and the store (``server/store/accounts.py``). It owns the secrets' handling:

- Passwords are hashed with argon2id (argon2-cffi's ``PasswordHasher``) at OWASP's baseline
  parameters (19 MiB, 2 passes, 1 lane: ``password_hasher``), in a worker thread so a hash
  never stalls the event loop, and at most ``HASHING_AT_ONCE`` at a time per node, so a burst
  of log-ins cannot take every core. (argon2-cffi's own default, 64 MiB with 4 lanes, costs
  far more per hash: a log-in flood would be a cheap way to stall a node.) A password is
  normalised to NFKC before it is hashed or verified (``password_text``), and one longer than
  ``MAX_PASSWORD`` is refused, never cut; a hash made before normalising opens with the text as
  typed, once, and is then rehashed. Passwords are never logged, stored or compared in the
  clear. A stored hash made with other parameters is upgraded at the next log-in. Logging in
  to a name nobody holds still spends one verification, so the answer's timing does not tell
  which names exist.
- Session tokens are 256 random bits (``secrets``), prefixed ``hs1.``; the store keeps only
  their SHA-256 digest, so a copy of the store gives no working token. A session expires after
  ``session_ttl`` idle seconds; each use renews it (at most once per ``renew_after``, and at
  least once per quarter of the ttl, so even a short ttl is an idle one). Logging
  out revokes one session, a new password revokes all; every node checks the store on every
  ``auth``, so a revoked token is refused at once everywhere, and every node polls the store's
  revocation log (``watch_revocations``) to close the sockets already open on it.
- Guests carry signed, expiring itsdangerous tokens (``server/accounts/identity.py``). A guest token
  whose player has since claimed an account is refused: the account's password guards it now.
  So is one whose name an account has taken since: names are unique.
- Throttles (sliding windows in the store, so shared by every node) slow the guesser, not the
  owner (OWASP's advice against lockout): log-in attempts per (account, address) pair, per
  address, and per account over a short window, which only a guesser on many addresses can
  reach and which delays the owner by seconds, never locks them out; sign-ups and new guests
  per address. An attempt is counted before the password is checked (so parallel guesses
  cannot slip past the count), and a correct password clears its pair's count, so only
  failures add up there. ``load_tests/bench_accounts.py`` measures what a guesser gets.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import secrets
import unicodedata
import weakref
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from protocol.errors import ProtocolError
from server.accounts.identity import GuestTokens, Identity
from server.accounts.names import NameRefused, check_name, name_key
from server.ops.outage_log import OutageLog
from server.store.accounts import Account, AccountStore

log = logging.getLogger(__name__)

SESSION_PREFIX = "hs1."
HASHING_AT_ONCE = 2  # concurrent argon2 computations per node
WATCH_EVERY = 1.0  # seconds between a node's polls of the revocation log
MIN_PASSWORD = 8
MAX_PASSWORD = 256  # argon2 takes any length; this only bounds the work a request can ask for


@dataclass(frozen=True, slots=True)
class Limit:
    """At most ``count`` attempts in any ``window`` seconds."""

    count: int
    window: float


def _float(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name)
    return float(raw) if raw not in (None, "") else default


def _limit(env: Mapping[str, str], name: str, default: Limit) -> Limit:
    """``default`` with its count from ``name`` when that is set (the window stays)."""
    return Limit(int(_float(env, name, default.count)), default.window)


@dataclass(frozen=True, slots=True)
class AccountPolicy:
    session_ttl: float = 30 * 86400.0  # idle seconds before a session ends
    renew_after: float = 3600.0  # a session's expiry moves at most this often (or ttl/4)
    guest_ttl: float = 7 * 86400.0  # a guest token's lifetime
    # One address guessing one account is held to the pair's limit, which the owner on any
    # other address never meets; the account's own limit is higher than a pair's, so one
    # address cannot reach it, and short, so many addresses only slow the owner down.
    login_per_pair: Limit = Limit(10, 900.0)
    login_per_address: Limit = Limit(50, 900.0)
    login_per_account: Limit = Limit(20, 20.0)
    signups_per_address: Limit = Limit(10, 3600.0)
    guests_per_address: Limit = Limit(30, 3600.0)
    trust_proxy: bool = False  # take the client address from X-Forwarded-For (behind a proxy)
    allowed_origins: tuple[str, ...] = ()  # extra Origins /ws accepts beside the page's own

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> AccountPolicy:
        env = os.environ if env is None else env
        d = cls()
        return cls(
            session_ttl=_float(env, "HEARTS_SESSION_TTL", d.session_ttl),
            renew_after=_float(env, "HEARTS_SESSION_RENEW", d.renew_after),
            guest_ttl=_float(env, "HEARTS_GUEST_TTL", d.guest_ttl),
            login_per_pair=_limit(env, "HEARTS_LOGIN_LIMIT", d.login_per_pair),
            login_per_address=_limit(env, "HEARTS_ADDRESS_LIMIT", d.login_per_address),
            login_per_account=_limit(env, "HEARTS_ACCOUNT_LIMIT", d.login_per_account),
            signups_per_address=_limit(env, "HEARTS_SIGNUP_LIMIT", d.signups_per_address),
            guests_per_address=_limit(env, "HEARTS_GUEST_LIMIT", d.guests_per_address),
            trust_proxy=env.get("HEARTS_TRUST_PROXY", "0") in ("1", "true", "yes"),
            allowed_origins=tuple(
                o.strip().rstrip("/") for o in env.get("HEARTS_ALLOWED_ORIGINS", "").split(",")
                if o.strip()
            ),
        )


def password_hasher() -> PasswordHasher:
    """argon2id at OWASP's baseline: m = 19 MiB, t = 2, p = 1."""
    return PasswordHasher(time_cost=2, memory_cost=19 * 1024, parallelism=1)


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def password_text(raw: object, minimum: int = MIN_PASSWORD) -> str:
    """The password as it is hashed and verified: NFKC (NIST SP 800-63B), so one password typed
    composed, decomposed or in compatibility forms is one password. ``bad_password`` unless it
    has ``minimum`` to ``MAX_PASSWORD`` characters once normalised: a longer one is refused,
    never cut (the body limit, 4096 bytes, bounds what normalising can be asked to do)."""
    text = unicodedata.normalize("NFKC", raw) if isinstance(raw, str) else ""
    if not isinstance(raw, str) or not minimum <= len(text) <= MAX_PASSWORD:
        raise ProtocolError(
            "bad_password", f"A password has {MIN_PASSWORD} to {MAX_PASSWORD} characters."
        )
    return text


class Accounts:
    def __init__(
        self,
        store: AccountStore,
        secret: bytes,
        clock: Callable[[], float],
        policy: AccountPolicy | None = None,
        hasher: PasswordHasher | None = None,
    ) -> None:
        self.store = store
        self.clock = clock
        self.policy = policy or AccountPolicy()
        self.guests = GuestTokens(secret, self.policy.guest_ttl)
        self.hasher = hasher or password_hasher()
        self._hashing = asyncio.Semaphore(HASHING_AT_ONCE)
        # Open sockets by the digest of the session they authenticated with (weakly: a
        # closed connection simply disappears).
        self._holders: dict[str, weakref.WeakSet[Any]] = {}

    # -- passwords (in a thread: argon2id is deliberately slow) -------------------------------

    async def _hash(self, password: str) -> str:
        async with self._hashing:
            return await asyncio.to_thread(self.hasher.hash, password)

    async def _matches(self, hashed: str, password: str) -> bool:
        try:
            async with self._hashing:
                return await asyncio.to_thread(self.hasher.verify, hashed, password)
        except (VerifyMismatchError, VerificationError, InvalidHashError):
            return False

    async def _opens(self, hashed: str, raw: str, text: str) -> str | None:
        """The form of a typed password that matches ``hashed``: ``text`` (normalised), else
        ``raw`` once, for a hash made before passwords were normalised (the caller rehashes
        ``text`` then); None if neither does. ASCII is its own NFKC: one verify."""
        if await self._matches(hashed, text):
            return text
        if raw != text and await self._matches(hashed, raw):
            return raw
        return None

    @cached_property
    def _decoy(self) -> str:
        """A hash to verify against when the name is unknown (equal timing)."""
        return self.hasher.hash(secrets.token_urlsafe(16))

    # -- throttles ----------------------------------------------------------------------------

    async def _throttle(self, key: str, limit: Limit) -> None:
        wait = await self.store.hit(
            key, now=self.clock(), window=limit.window, limit=limit.count
        )
        if wait > 0:
            raise ProtocolError(
                "too_many_attempts", f"Too many attempts; try again in {max(1, round(wait))} s."
            )

    async def _login_throttles(self, key: str, address: str) -> None:
        """Count a log-in attempt (or an old password's check) at account ``key`` from
        ``address``; ``too_many_attempts`` if any of its limits is reached."""
        # The address first: guessing many names from one place is stopped too.
        await self._throttle(f"login-address:{address}", self.policy.login_per_address)
        await self._throttle(f"login-pair:{key}:{address}", self.policy.login_per_pair)
        await self._throttle(f"login-account:{key}", self.policy.login_per_account)

    # -- sessions -----------------------------------------------------------------------------

    async def _new_session(self, player_id: str) -> str:
        token = SESSION_PREFIX + secrets.token_urlsafe(32)
        await self.store.create_session(
            token_digest(token), player_id, now=self.clock(), ttl=self.policy.session_ttl
        )
        return token

    async def verify(self, token: str, holder: object | None = None) -> Identity | None:
        """The identity a token stands for now, or None (forged, expired, revoked, claimed).

        ``holder`` (a connection) is remembered with a session token, so that
        ``watch_revocations`` can close it when that session is revoked.
        """
        if not isinstance(token, str) or not token:
            return None
        if token.startswith(SESSION_PREFIX):
            digest = token_digest(token)
            session = await self.store.check_session(
                digest,
                now=self.clock(),
                ttl=self.policy.session_ttl,
                renew_after=self.policy.renew_after,
            )
            if session is None:
                return None
            account = await self.store.account(session.player_id)
            if account is None:
                return None
            if holder is not None:
                self._holders.setdefault(digest, weakref.WeakSet()).add(holder)
            return Identity(account.player_id, account.name, account=True)
        guest = self.guests.verify(token)
        if guest is None or await self.store.account(guest.player) is not None:
            return None
        # Names are unique: once an account holds this guest's name, the token is refused
        # and the client asks its player for another name (as for any refused guest token).
        if await self.store.account_by_name(name_key(guest.name)) is not None:
            return None
        return guest

    async def watch_revocations(self, close: Callable[[Any], Awaitable[None]]) -> None:
        """Forever: ``close(holder)`` for every open socket whose session was revoked, on
        whichever node the log-out or new password happened."""
        position = ""
        outage = OutageLog(log, "polling the session revocation log")
        while True:
            try:
                position, digests = await self.store.revocations(position)
                for digest in digests:
                    for holder in list(self._holders.pop(digest, ())):
                        await close(holder)
                self._holders = {d: h for d, h in self._holders.items() if h}
                outage.succeeded()
            except asyncio.CancelledError:
                raise
            except Exception:
                outage.failed()
            await asyncio.sleep(WATCH_EVERY)

    # -- the operations -----------------------------------------------------------------------

    async def new_guest(self, raw_name: object, address: str) -> tuple[Identity, str]:
        name, key = self._name(raw_name)
        await self._throttle(f"guest:{address}", self.policy.guests_per_address)
        if await self.store.account_by_name(key) is not None:
            raise ProtocolError("name_taken", "An account has that name; pick another.")
        return self.guests.new_guest(name)

    async def sign_up(
        self, raw_name: object, raw_password: object, address: str, guest_token: str | None = None
    ) -> tuple[Identity, str]:
        """A new account and its first session. With a valid guest token the account takes the
        guest's player id: its rating, history and ladder standing carry over."""
        name, key = self._name(raw_name)
        password = password_text(raw_password)
        player_id = "a_" + secrets.token_urlsafe(12)
        if guest_token:
            guest = self.guests.verify(guest_token)
            if guest is None or await self.store.account(guest.player) is not None:
                raise ProtocolError("bad_token", "That guest token is not valid any more.")
            player_id = guest.player
        await self._throttle(f"signup:{address}", self.policy.signups_per_address)
        if await self.store.account_by_name(key) is not None:
            raise ProtocolError("name_taken", "That name is taken; pick another.")
        account = Account(player_id, name, key, await self._hash(password), self.clock())
        if not await self.store.create_account(account):
            raise ProtocolError("name_taken", "That name is taken; pick another.")
        return Identity(player_id, name, account=True), await self._new_session(player_id)

    async def log_in(
        self, raw_name: object, raw_password: object, address: str
    ) -> tuple[Identity, str]:
        if not isinstance(raw_name, str) or not isinstance(raw_password, str):
            raise ProtocolError("bad_field", "Send a name and a password.")
        password = password_text(raw_password, minimum=0)  # over-long: refused, not a guess
        key = name_key(raw_name[:64])
        await self._login_throttles(key, address)
        account = await self.store.account_by_name(key) if key else None
        if account is None:
            await self._opens(self._decoy, raw_password, password)
            raise ProtocolError("wrong_credentials")
        opened = await self._opens(account.password_hash, raw_password, password)
        if opened is None:
            raise ProtocolError("wrong_credentials")
        await self.store.clear_hits(f"login-pair:{key}:{address}")
        if opened != password or self.hasher.check_needs_rehash(account.password_hash):
            # Made from the unnormalised text, or with parameters raised since: upgrade it
            # (this also ends the account's other sessions, as any password write does).
            await self.store.set_password(account.player_id, await self._hash(password))
        return Identity(account.player_id, account.name, account=True), await self._new_session(
            account.player_id
        )

    async def log_out(self, token: str) -> bool:
        if not token.startswith(SESSION_PREFIX):
            return False
        return await self.store.revoke_session(token_digest(token))

    async def change_password(
        self, token: str, raw_old: object, raw_new: object, address: str
    ) -> tuple[Identity, str]:
        """Every session of the account ends (a thief's too); the caller gets a new one."""
        identity = await self.verify(token)
        if identity is None or not identity.account:
            raise ProtocolError("bad_token", "Log in to change your password.")
        new = password_text(raw_new)
        account = await self.store.account(identity.player)
        if account is None or not isinstance(raw_old, str):
            raise ProtocolError("wrong_credentials")
        old = password_text(raw_old, minimum=0)
        # A stolen session must not become a way round the log-in throttles.
        await self._login_throttles(account.name_key, address)
        if await self._opens(account.password_hash, raw_old, old) is None:
            raise ProtocolError("wrong_credentials")
        await self.store.clear_hits(f"login-pair:{account.name_key}:{address}")
        await self.store.set_password(account.player_id, await self._hash(new))
        return identity, await self._new_session(account.player_id)

    @staticmethod
    def _name(raw: object) -> tuple[str, str]:
        try:
            return check_name(raw)
        except NameRefused as e:
            raise ProtocolError("bad_name", str(e)) from None
