"""House-rule options a table is opened with (docs/rules.md, "House-rule options")."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class Moon(StrEnum):
    OTHERS_26 = "others_26"
    SHOOTER_MINUS_26 = "shooter_minus_26"
    SHOOTER_CHOOSES = "shooter_chooses"


class Revokes(StrEnum):
    BLOCKED = "blocked"
    ALLOWED = "allowed"


class Tie(StrEnum):
    SHARE = "share"
    PLAY_OFF = "play_off"


TARGETS = (50, 100)


@dataclass(frozen=True, slots=True)
class Rules:
    """The options the rules engine plays by. Pace and clocks belong to the room, not the game."""

    target: int = 50
    moon: Moon = Moon.OTHERS_26
    revokes: Revokes = Revokes.BLOCKED
    tie: Tie = Tie.SHARE

    def __post_init__(self) -> None:
        if self.target not in TARGETS:
            raise ValueError(f"target must be one of {TARGETS}, not {self.target!r}")
        # Coerce strings so Rules(moon="others_26") works and bad values fail here, not mid-game.
        object.__setattr__(self, "moon", Moon(self.moon))
        object.__setattr__(self, "revokes", Revokes(self.revokes))
        object.__setattr__(self, "tie", Tie(self.tie))

    @property
    def standard(self) -> bool:
        """True for the standard game; only such a table may be rated."""
        return (
            self.moon is Moon.OTHERS_26
            and self.revokes is Revokes.BLOCKED
            and self.tie is Tie.SHARE
        )

    def to_value(self) -> list[object]:
        return [self.target, self.moon.value, self.revokes.value, self.tie.value]

    @classmethod
    def from_value(cls, value: Sequence[Any]) -> Rules:
        target, moon, revokes, tie = value
        return cls(int(target), Moon(moon), Revokes(revokes), Tie(tie))
