"""Accounts and sessions: sign up, log in, log out, change a password, claim a guest, verify,
delete an account.

The thin service between the HTTP routes (``server/http/account_routes.py``), the WebSocket ``auth``
command and two stores: account rows (name, password hash) live in the store of record
(``server/record/store.py``, SQL), which outlives everything; sessions, their revocation log and
the throttles live in the session store (``SessionStore``, ``server/store/sessions.py``: Redis
in a deployment), whose loss costs a log-in at most. It owns the secrets' handling:

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
  least once per quarter of the ttl, so even a short ttl is an idle one). Logging out revokes
  one session; a new password, or deleting the account, revokes all. Every node checks the
  session and the account on every ``auth``, so a revoked token is refused at once everywhere,
  and every node polls the revocation log (``watch_revocations``) to close the sockets already
  open on it.
- Guests carry signed, expiring itsdangerous tokens (``server/accounts/identity.py``), signed
  with the key ``start`` loads (``server/accounts/keys.py``: ``HEARTS_SECRET``, else a key kept
  in the store of record, so a restart keeps every guest). A guest token whose player has since
  claimed an account is refused: the account's password guards it now. So is one whose player
  deleted that account since, and one whose name an account has taken since: names are unique.
- Deleting an account (``delete_account``: the password typed again, counted as a log-in)
  removes it from the store of record at once (``server/record/accounts.py``: the name, the
  hash, the rating, the devices; finished games keep "a deleted player") and ends every
  session. The name is free again.
- Throttles (sliding windows in the session store, so shared by every node) slow the guesser,
  not the owner (OWASP's advice against lockout): log-in attempts per (account, address) pair,
  per address, and per account over a short window, which only a guesser on many addresses can
  reach and which delays the owner by seconds, never locks them out; sign-ups and new guests
  per address. An attempt is counted before the password is checked (so parallel guesses
  cannot slip past the count), and a correct password clears its pair's count, so only
  failures add up there. ``load_tests/bench_accounts.py`` measures what a guesser gets.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import secrets
import time
import unicodedata
import weakref
from collections.abc import Awaitable, Callable
from functools import cached_property
from typing import Any

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from protocol.errors import ProtocolError
from server.accounts.identity import GuestTokens, Identity
from server.accounts.keys import KeySource
from server.accounts.known import KnownAccounts
from server.accounts.names import NameRefused, check_name, name_key
from server.accounts.policy import AccountPolicy, Limit
from server.ops.outage_log import OutageLog
from server.record.accounts import AccountConflict, NameTaken
from server.record.store import RecordStore
from server.record.values import Account
from server.store.sessions import SessionStore

__all__ = ["AccountPolicy", "Accounts", "Limit", "password_hasher"]

log = logging.getLogger(__name__)

SESSION_PREFIX = "hs1."
HASHING_AT_ONCE = 2  # concurrent argon2 computations per node
WATCH_EVERY = 1.0  # seconds between a node's polls of the revocation log
MIN_PASSWORD = 8
MAX_PASSWORD = 256  # argon2 takes any length; this only bounds the work a request can ask for


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
    """See the module docstring. ``start`` must be awaited (it loads the signing key) before
    anything that reads or makes a guest token."""

    def __init__(
        self,
        records: RecordStore,
        sessions: SessionStore,
        key_source: KeySource,
        clock: Callable[[], float],
        policy: AccountPolicy | None = None,
        hasher: PasswordHasher | None = None,
    ) -> None:
        self.records = records
        self.known = KnownAccounts(records, time.monotonic)  # what auth reads, cached
        self.sessions = sessions
        self.clock = clock
        self.policy = policy or AccountPolicy()
        self.hasher = hasher or password_hasher()
        self._key_source = key_source
        self._guests: GuestTokens | None = None
        self._hashing = asyncio.Semaphore(HASHING_AT_ONCE)
        # Open sockets by the digest of the session they authenticated with (weakly: a
        # closed connection simply disappears).
        self._holders: dict[str, weakref.WeakSet[Any]] = {}

    async def start(self) -> None:
        """Load the key that signs guest tokens (from the store of record unless configured)."""
        self._guests = GuestTokens(await self._key_source.key(), self.policy.guest_ttl)

    @property
    def guests(self) -> GuestTokens:
        if self._guests is None:
            raise RuntimeError("Accounts.start() loads the signing key first")
        return self._guests

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

    async def _set_password(self, player_id: str, password: str) -> None:
        """Store a new hash, then end every session of the account (a thief's too)."""
        await self.records.set_password(player_id, await self._hash(password))
        await self.sessions.revoke_sessions(player_id)

    # -- throttles ----------------------------------------------------------------------------

    async def _throttle(self, key: str, limit: Limit) -> None:
        wait = await self.sessions.hit(
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

    async def _check_password(self, account: Account, raw: object, address: str) -> None:
        """The account's password, typed again (a new password, deleting the account), counted
        as a log-in: a stolen session must not become a way round the log-in throttles."""
        if not isinstance(raw, str):
            raise ProtocolError("wrong_credentials")
        typed = password_text(raw, minimum=0)
        await self._login_throttles(account.name_key, address)
        if await self._opens(account.password_hash, raw, typed) is None:
            raise ProtocolError("wrong_credentials")
        await self.sessions.clear_hits(f"login-pair:{account.name_key}:{address}")

    # -- sessions -----------------------------------------------------------------------------

    async def _new_session(self, player_id: str) -> str:
        token = SESSION_PREFIX + secrets.token_urlsafe(32)
        await self.sessions.create_session(
            token_digest(token), player_id, now=self.clock(), ttl=self.policy.session_ttl
        )
        return token

    async def verify(self, token: str, holder: object | None = None) -> Identity | None:
        """The identity a token stands for now, or None (forged, expired, revoked, claimed,
        deleted).

        ``holder`` (a connection) is remembered with a session token, so that
        ``watch_revocations`` can close it when that session is revoked.
        """
        if not isinstance(token, str) or not token:
            return None
        if token.startswith(SESSION_PREFIX):
            digest = token_digest(token)
            session = await self.sessions.check_session(
                digest,
                now=self.clock(),
                ttl=self.policy.session_ttl,
                renew_after=self.policy.renew_after,
            )
            if session is None:
                return None
            name = await self.known.name_of(session.player_id)
            if name is None:
                return None
            if holder is not None:
                self._holders.setdefault(digest, weakref.WeakSet()).add(holder)
            return Identity(session.player_id, name, account=True)
        guest = self.guests.verify(token)
        # Claimed or deleted since, or its name is an account's now (names are unique: the
        # client asks its player for another name, as for any refused guest token).
        if guest is None or await self.known.taken(guest.player, name_key(guest.name)):
            return None
        return guest

    async def watch_revocations(self, close: Callable[[Any], Awaitable[None]]) -> None:
        """Forever: ``close(holder)`` for every open socket whose session was revoked, on
        whichever node the log-out, new password or deletion happened."""
        position = ""
        outage = OutageLog(log, "polling the session revocation log")
        while True:
            try:
                position, digests = await self.sessions.revocations(position)
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
        if await self.records.account_by_name(key) is not None:
            raise ProtocolError("name_taken", "An account has that name; pick another.")
        identity, token = self.guests.new_guest(name)
        self.known.minted(identity.player, key)
        return identity, token

    async def sign_up(
        self, raw_name: object, raw_password: object, address: str, guest_token: str | None = None
    ) -> tuple[Identity, str]:
        """A new account and its first session. With a valid guest token the account takes the
        guest's player id: its rating, history and ladder standing carry over."""
        name, key = self._name(raw_name)
        password = password_text(raw_password)
        player_id = "a_" + secrets.token_urlsafe(12)
        claimed = bool(guest_token)
        if guest_token:
            guest = self.guests.verify(guest_token)
            if guest is None or await self.records.taken(guest.player):
                raise ProtocolError("bad_token", "That guest token is not valid any more.")
            player_id = guest.player
        await self._throttle(f"signup:{address}", self.policy.signups_per_address)
        if await self.records.account_by_name(key) is not None:
            raise ProtocolError("name_taken", "That name is taken; pick another.")
        account = Account(player_id, name, key, await self._hash(password), self.clock())
        try:
            await self.records.create_account(account, claimed_guest=claimed)
            self.known.changed(account.player_id)
        except NameTaken:
            raise ProtocolError("name_taken", "That name is taken; pick another.") from None
        except AccountConflict:  # the guest's id claimed (or deleted) meanwhile
            if not claimed:
                raise
            raise ProtocolError("bad_token", "That guest token is not valid any more.") from None
        return Identity(player_id, name, account=True), await self._new_session(player_id)

    async def log_in(
        self, raw_name: object, raw_password: object, address: str
    ) -> tuple[Identity, str]:
        if not isinstance(raw_name, str) or not isinstance(raw_password, str):
            raise ProtocolError("bad_field", "Send a name and a password.")
        password = password_text(raw_password, minimum=0)  # over-long: refused, not a guess
        key = name_key(raw_name[:64])
        await self._login_throttles(key, address)
        account = await self.records.account_by_name(key) if key else None
        if account is None:
            await self._opens(self._decoy, raw_password, password)
            raise ProtocolError("wrong_credentials")
        opened = await self._opens(account.password_hash, raw_password, password)
        if opened is None:
            raise ProtocolError("wrong_credentials")
        await self.sessions.clear_hits(f"login-pair:{key}:{address}")
        if opened != password or self.hasher.check_needs_rehash(account.password_hash):
            # Made from the unnormalised text, or with parameters raised since: upgrade it
            # (this also ends the account's other sessions, as any password write does).
            await self._set_password(account.player_id, password)
        return Identity(account.player_id, account.name, account=True), await self._new_session(
            account.player_id
        )

    async def log_out(self, token: str) -> bool:
        if not token.startswith(SESSION_PREFIX):
            return False
        return await self.sessions.revoke_session(token_digest(token))

    async def _signed_in_account(self, token: str, doing: str) -> Account:
        """The account a session token stands for now; ``bad_token`` for a guest or nobody."""
        identity = await self.verify(token)
        account = None
        if identity is not None and identity.account:
            account = await self.records.account(identity.player)
        if account is None:
            raise ProtocolError("bad_token", f"Log in to {doing}.")
        return account

    async def change_password(
        self, token: str, raw_old: object, raw_new: object, address: str
    ) -> tuple[Identity, str]:
        """Every session of the account ends (a thief's too); the caller gets a new one."""
        account = await self._signed_in_account(token, "change your password")
        new = password_text(raw_new)
        await self._check_password(account, raw_old, address)
        await self._set_password(account.player_id, new)
        identity = Identity(account.player_id, account.name, account=True)
        return identity, await self._new_session(account.player_id)

    async def delete_account(self, token: str, raw_password: object, address: str) -> Identity:
        """Delete the signed-in account for good, the password typed again: its row, name,
        rating and devices go from the store of record (finished games keep "a deleted
        player"), then every session ends, and the sockets open on them close. Returns who it
        was."""
        account = await self._signed_in_account(token, "delete your account")
        await self._check_password(account, raw_password, address)
        # The row first: from here no log-in or session opens it, even if revoking fails.
        await self.records.delete_account(account.player_id)
        self.known.changed(account.player_id)
        await self.sessions.revoke_sessions(account.player_id)
        return Identity(account.player_id, account.name, account=True)

    @staticmethod
    def _name(raw: object) -> tuple[str, str]:
        try:
            return check_name(raw)
        except NameRefused as e:
            raise ProtocolError("bad_name", str(e)) from None
