"""Player names: what a name may look like, and when two names are "the same".

Two names are the same when their *keys* are equal. The key is a confusable skeleton: NFKC,
every character that Unicode lists as a look-alike of an ASCII letter or digit replaced by it
(Cyrillic "а" → "a"), accents dropped, case folded, the ASCII look-alikes merged ("0" → "o",
"1", "i" and "|" → "l", "rn" → "m", "vv" → "w"…) and spaces and punctuation removed. So "Ann",
"ANN", "A n n", "Аnn" (Cyrillic A) and "Ann." are one name, and an account's name can be held
by nobody else. The merge is deliberately coarse: a refused name costs a player a second try,
a passable fake costs another player their reputation.

A name may not pose as a bot: a key ending in "bot" (or with a word "bot", "robot") is
refused. Nor may it pose as the service: a name that is one of ``_RESERVED``, or has one of
``_SERVICE_WORDS`` as a word ("Hearts Live", "Admin Team", "HeartsAdmin": words split at spaces,
punctuation and a lower-to-upper case change, each folded like a key, so "Adm1n" is "admin"),
is refused; a word that only contains one ("Sweethearts", "Adminah") is fine. Names mixing
scripts in a way Unicode calls dangerous (Latin with Cyrillic look-alikes) are refused outright.
"""

from __future__ import annotations

import unicodedata
from functools import cache

from confusable_homoglyphs import confusables

MAX_NAME = 24

# Symbols posing as letters, replaced before punctuation is dropped.
_SYMBOL_MERGE: tuple[tuple[str, str], ...] = (("|", "l"), ("!", "l"), ("$", "s"), ("@", "a"))
# ASCII look-alikes, applied after case folding; the two-letter ones first.
_ASCII_MERGE: tuple[tuple[str, str], ...] = (
    ("rn", "m"),
    ("vv", "w"),
    ("cl", "d"),
    ("0", "o"),
    ("1", "l"),
    ("i", "l"),
    ("j", "l"),
    ("5", "s"),
    ("3", "e"),
    ("4", "a"),
    ("7", "t"),
    ("8", "b"),
    ("6", "g"),
    ("9", "g"),
    ("2", "z"),
)
# Words of the service's own voice: refused as any word of a name.
_SERVICE_WORDS = (
    "server", "system", "admin", "administrator", "moderator", "hearts", "official", "support",
    "staff",
)
# Refused as a whole name only ("Christopher Guest" is a person; "Guest" looks like a label).
_RESERVED = (*_SERVICE_WORDS, "guest")
_BOT_WORDS = ("bot", "robot")


class NameRefused(ValueError):
    """A name that may not be used; the message says why, in words for the player."""


def clean_name(raw: object) -> str:
    """A display name: printable, trimmed, runs of spaces made one, 1..24 characters."""
    if not isinstance(raw, str):
        raise NameRefused("name must be a string")
    name = " ".join(
        "".join(
            ch for ch in raw if unicodedata.category(ch)[0] not in ("C", "Z") or ch == " "
        ).split()
    )
    if not 1 <= len(name) <= MAX_NAME:
        raise NameRefused(f"name must have 1 to {MAX_NAME} visible characters")
    return name


@cache
def _ascii_lookalike(ch: str) -> str:
    """The ASCII letter or digit Unicode lists as a look-alike of ``ch``, or ``ch`` itself."""
    if ch.isascii():
        return ch
    for glyph in confusables.confusables_data.get(ch, ()):
        c = str(glyph["c"])
        if len(c) == 1 and c.isascii() and c.isalnum():
            return c
    return ch


def name_key(name: str) -> str:
    """The uniqueness key of a name (see the module docstring); "" if nothing is left."""
    text = unicodedata.normalize("NFKC", name).casefold()
    text = "".join(_ascii_lookalike(ch) for ch in text)
    text = "".join(
        ch for ch in unicodedata.normalize("NFKD", text) if not unicodedata.combining(ch)
    )
    text = text.casefold()
    for symbol, letter in _SYMBOL_MERGE:
        text = text.replace(symbol, letter)
    # Spacing and punctuation go before the multi-letter merges, so "r n" is "rn" is "m".
    text = "".join(ch for ch in text if ch.isalnum())
    for lookalike, letter in _ASCII_MERGE:
        text = text.replace(lookalike, letter)
    return text


@cache
def _reserved_keys() -> frozenset[str]:
    return frozenset(name_key(w) for w in _RESERVED)


@cache
def _service_word_keys() -> frozenset[str]:
    return frozenset(name_key(w) for w in _SERVICE_WORDS)


@cache
def _bot_keys() -> tuple[str, ...]:
    return tuple(name_key(w) for w in _BOT_WORDS)


def _words(name: str) -> list[str]:
    """The keys of the name's words: split at what is not a letter or digit, and where a
    lower-case letter is followed by a capital ("HeartsAdmin")."""
    text = unicodedata.normalize("NFKC", name)
    cleaned = "".join(
        " " if not ch.isalnum() else f" {ch}" if k and ch.isupper() and text[k - 1].islower()
        else ch
        for k, ch in enumerate(text)
    )
    return [name_key(w) for w in cleaned.split()]


def check_name(raw: object) -> tuple[str, str]:
    """(the display name, its key) for a name a player may use; NameRefused otherwise.

    Applies to guests and accounts alike (uniqueness against accounts is the caller's check).
    """
    name = clean_name(raw)
    key = name_key(name)
    if not key:
        raise NameRefused("name needs a letter or a digit")
    if confusables.is_dangerous(name):
        raise NameRefused("name mixes look-alike letters of different alphabets")
    words = set(_words(name))
    if key in _reserved_keys() or key.endswith(_bot_keys()) or set(_bot_keys()) & words:
        raise NameRefused("that name is kept for the service and its bots")
    if _service_word_keys() & words:
        raise NameRefused("a name may not pose as the service (admin, hearts, support…)")
    return name, key
