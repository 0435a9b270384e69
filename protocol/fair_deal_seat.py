"""One seat's part in the commit-reveal shuffle, as a client plays it: what to send when, and the
verifier's verdict on each finished hand. No socket: the client sends what this returns.
"""

from __future__ import annotations

from typing import Any

from .shuffle import deal_context, new_secret, seat_commitment
from .verify import verify_audit

Command = tuple[str, dict[str, Any]]


class FairDealSeat:
    def __init__(self) -> None:
        # This seat's secret and what it was shown, per hand (the verifier's ``own`` record),
        # and the verdict on each finished hand's audit ([] means verified).
        self.own: dict[int, dict[str, Any]] = {}
        self.verdicts: dict[int, list[str]] = {}
        self._hand = 0
        self._game: dict[int, str] = {}  # the game each of ``own``'s hands belongs to

    def on_event(self, event: dict[str, Any], seat: int | None) -> Command | None:
        """Note what the event shows this seat; the command to send, if the event calls for one."""
        name = event["event"]
        if name == "shuffle_commit" and seat is not None:
            hand = event["hand"]
            self._hand = hand
            record = self.own.get(hand)
            if record is None or self._game.get(hand) != event["game"]:
                # One secret per hand: a commit sent again (after a reconnect) is the same one.
                self._game[hand] = event["game"]
                record = self.own[hand] = {
                    "seat": seat,
                    "secret": new_secret().hex(),
                    "server_commitment": event["server_commitment"],
                }
            ctx = deal_context(event["game"], hand)
            commitment = seat_commitment(ctx, seat, bytes.fromhex(record["secret"])).hex()
            return "commit", {"commitment": commitment}
        if name == "commitments" and event["hand"] in self.own:
            record = self.own[event["hand"]]
            record["commitments"] = event["commitments"]
            return "reveal", {"secret": record["secret"]}
        if name in ("dealt", "received", "passed") and self._hand in self.own:
            self.own[self._hand][name] = event["cards"]
        elif name == "hand_audit":
            self.verdicts[event["hand"]] = verify_audit(event["audit"], self.own.get(event["hand"]))
        return None

    def on_view(self, view: dict[str, Any], seat: int | None) -> Command | None:
        """Arriving while a shuffle waits: commit now (a lost secret cannot be revealed)."""
        pending = view.get("shuffle")
        if pending is None or seat is None:
            return None
        if pending["phase"] == "commit" and not pending["committed"][seat]:
            return self.on_event({"event": "shuffle_commit", **pending}, seat)
        if pending["phase"] == "reveal" and pending["hand"] in self.own:
            return self.on_event({"event": "commitments", **pending}, seat)
        return None
