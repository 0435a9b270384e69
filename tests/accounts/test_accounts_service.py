"""The accounts service (``server.accounts.service``) on a real store of record (SQLite and
PostgreSQL) and the in-process session store, on its own clock (``conftest.py``)."""

from __future__ import annotations

import unicodedata

import pytest

from protocol.errors import ProtocolError
from server.accounts.service import MAX_PASSWORD, AccountPolicy, Accounts
from server.record.store import RecordStore
from tests.accounts.conftest import Clock, MakeService

PASSWORD = "a fine password"


async def test_a_session_used_every_0_8_s_with_a_4_s_ttl_lives_on(
    make_service: MakeService, clock: Clock
) -> None:
    accounts = await make_service(AccountPolicy(session_ttl=4.0))  # renew_after: 1 h
    _, token = await accounts.sign_up("Ann", PASSWORD, "10.0.0.1")
    for k in range(150):  # two minutes
        clock.now += 0.8
        assert await accounts.verify(token) is not None, f"refused after {k * 0.8 + 0.8:.1f} s"
    clock.now += 4.0  # idle for a whole ttl: it ends
    assert await accounts.verify(token) is None


async def wrong_then_right(accounts: Accounts, name: str, address: str) -> str:
    """What a log-in from ``address`` answers: "ok" or the error code."""
    try:
        await accounts.log_in(name, PASSWORD, address)
        return "ok"
    except ProtocolError as e:
        return e.code


async def test_a_guesser_at_its_limit_does_not_lock_the_owner_out(
    make_service: MakeService, clock: Clock
) -> None:
    accounts = await make_service()
    await accounts.sign_up("Ann", PASSWORD, "10.0.0.1")
    # One address guesses as fast as it is let, for twenty minutes; every 61 s, the owner
    # logs in from an address of its own, first try.
    refused = allowed = 0
    for tick in range(20 * 60 * 4):
        clock.now += 0.25
        try:
            await accounts.log_in("Ann", f"guess {tick}", "198.51.100.7")
        except ProtocolError as e:
            allowed += e.code == "wrong_credentials"
            refused += e.code == "too_many_attempts"
        if tick % 244 == 0:
            assert await wrong_then_right(accounts, "ann", f"203.0.113.{tick % 250}") == "ok"
    assert allowed <= 2 * accounts.policy.login_per_pair.count  # two 15-minute windows
    # The guesser's address is what is slowed: even the right password waits there.
    assert await wrong_then_right(accounts, "Ann", "198.51.100.7") == "too_many_attempts"


async def test_many_addresses_are_slowed_per_account_for_seconds(
    make_service: MakeService, clock: Clock
) -> None:
    accounts = await make_service()
    await accounts.sign_up("Bea", PASSWORD, "10.0.0.1")
    limit = accounts.policy.login_per_account
    assert limit.window <= 30 and limit.count > accounts.policy.login_per_pair.count
    codes = []
    for k in range(limit.count + 5):
        try:
            await accounts.log_in("Bea", "not the password", f"192.0.2.{k}")
        except ProtocolError as e:
            codes.append(e.code)
    assert codes.count("wrong_credentials") == limit.count
    assert await wrong_then_right(accounts, "Bea", "203.0.113.9") == "too_many_attempts"
    clock.now += limit.window  # a short slowdown, not a lockout
    assert await wrong_then_right(accounts, "Bea", "203.0.113.9") == "ok"


async def test_a_guest_whose_name_an_account_takes_is_asked_for_another(
    make_service: MakeService,
) -> None:
    accounts = await make_service()
    early, early_token = await accounts.new_guest("Cara", "10.0.0.2")
    _, other_token = await accounts.new_guest("Dina", "10.0.0.3")
    assert await accounts.verify(early_token) == early
    await accounts.sign_up("CARA", PASSWORD, "10.0.0.4")  # another player takes the name
    # Two players would show one name: the guest's token no longer stands for it (the client
    # asks its player for a new name, as for any refused guest token).
    assert await accounts.verify(early_token) is None
    assert await accounts.verify(other_token) is not None


def nfd(text: str) -> str:
    return unicodedata.normalize("NFD", text)


async def test_a_password_is_the_same_in_any_unicode_form(make_service: MakeService) -> None:
    accounts = await make_service()
    typed = "Zoë’s café passphrase"
    assert nfd(typed) != typed
    await accounts.sign_up("Zoe", typed, "10.0.0.5")
    assert await accounts.log_in("Zoe", nfd(typed), "10.0.0.5")
    _, token = await accounts.log_in("Zoe", typed, "10.0.0.5")
    _, token = await accounts.change_password(token, nfd(typed), nfd("Ⅻ ﬁne ｗｉｄｅ"), "10.0.0.5")
    assert await accounts.log_in("Zoe", "XII fine wide", "10.0.0.5")  # NFKC: compatibility forms


async def test_an_over_long_password_is_refused_not_cut(make_service: MakeService) -> None:
    accounts = await make_service()
    whole = "p" * MAX_PASSWORD
    await accounts.sign_up("Lena", whole, "10.0.0.6")
    for longer in (whole + "tail", whole + "p"):
        with pytest.raises(ProtocolError) as e:
            await accounts.log_in("Lena", longer, "10.0.0.6")
        assert e.value.code == "bad_password"
    with pytest.raises(ProtocolError) as e:
        await accounts.sign_up("Lenb", whole + "p", "10.0.0.6")
    assert e.value.code == "bad_password"
    assert await accounts.log_in("Lena", whole, "10.0.0.6")


async def test_a_hash_of_an_unnormalised_password_still_opens_and_is_upgraded(
    make_service: MakeService, record_store: RecordStore
) -> None:
    accounts = await make_service()
    typed = nfd("Zoë’s café passphrase")  # as a browser sent it before passwords were normalised
    made, _ = await accounts.sign_up("Old", "placeholder pw", "10.0.0.7")
    await record_store.set_password(made.player, accounts.hasher.hash(typed))
    before = await record_store.account(made.player)
    assert await accounts.log_in("Old", typed, "10.0.0.7")  # the raw form, tried once
    after = await record_store.account(made.player)
    assert before is not None and after is not None
    assert after.password_hash != before.password_hash  # rehashed from the normalised form
    assert accounts.hasher.verify(after.password_hash, unicodedata.normalize("NFKC", typed))
    assert await accounts.log_in("Old", unicodedata.normalize("NFC", typed), "10.0.0.7")
