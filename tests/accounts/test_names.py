"""Name rules: one key per look-alike name, no posing as a bot or the service."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from server.accounts.names import NameRefused, check_name, name_key


@pytest.mark.parametrize(
    "a,b",
    [
        ("Ann", "ANN"),
        ("Ann", "A n n"),
        ("Ann", "Ann."),
        ("Ann", "Ａｎｎ"),  # fullwidth: NFKC
        ("Bill", "BiII"),  # capital I posing as l
        ("Olga", "0lga"),
        ("Zoe", "Zoë"),
        ("Emma", "Ernrna"),  # rn posing as m
    ],
)
def test_look_alike_names_share_a_key(a: str, b: str) -> None:
    assert name_key(a) == name_key(b)


def test_different_names_have_different_keys() -> None:
    assert name_key("Ann") != name_key("Anna")
    assert name_key("Bob") != name_key("Rob")


@pytest.mark.parametrize(
    "name",
    ["Strong Bot", "StrongBot", "North Strong Bot", "R0B0T", "Ann (bot)", "admin", "Adm1n",
     "Server", "...", "", " ", "x" * 25, "Аnn"],  # the last with a Cyrillic A
)
def test_names_that_are_refused(name: str) -> None:
    with pytest.raises(NameRefused):
        check_name(name)


@pytest.mark.parametrize(
    "name",
    ["Hearts Live", "Hearts Admin", "Admin Team", "HeartsAdmin", "The Moderator", "Adm1n Team",
     "System Notice", "Server-Bot", "hearts_official", "Official Ann", "Tech Support",
     "HEARTS  staff", "Нearts Live"],  # the last with a Cyrillic H
)
def test_names_posing_as_the_service_are_refused(name: str) -> None:
    with pytest.raises(NameRefused):
        check_name(name)


@pytest.mark.parametrize(
    "name",
    ["A", "Abbott", "Botham", "Zoë", "Łukasz", "李雷", "Q7", "Ann", "Bob Smith", "Mary Jane",
     "Sweethearts", "Heart Breaker", "Adminah", "Guestrin", "Christopher Guest", "Systema",
     "Serverin", "Modesto", "Supporter", "Staffan", "McDonald", "Ana María", "Jean-Luc",
     "O'Brien", "Ng Wei Ling", "Siobhán", "Zhang Wei", "Ahmed Ali", "Priya K", "Kim Ji-woo",
     "Heartsease"],
)
def test_ordinary_names_are_fine(name: str) -> None:
    assert check_name(name)[0] == name


@given(st.text(min_size=1, max_size=24))
def test_a_key_ignores_case_and_spacing(name: str) -> None:
    assert name_key(name) == name_key(name.casefold())
    assert name_key(name) == name_key(" ".join(name))
