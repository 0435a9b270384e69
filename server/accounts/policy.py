"""The accounts service's settings: session lifetimes, the log-in and sign-up throttles, and
who may open a socket; read from the environment (README.md, "Configuration")."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass


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
    """Lifetimes, throttles and socket origins (defaults here, overrides in ``from_env``)."""

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
                o.strip().rstrip("/")
                for o in env.get("HEARTS_ALLOWED_ORIGINS", "").split(",")
                if o.strip()
            ),
        )
