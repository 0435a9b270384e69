"""A game document replayed through the rules engine: every position must agree with it.

From each hand's audit: the deal, the passes, then every card in the order played, each one
asked of the engine (whose turn it is, whether the card is legal); each trick's winner, each
hand's points and running scores, and the game's final scores and winners must be the
document's.
"""

from __future__ import annotations

from typing import Any

from server.core.rules import Game, Moon, Phase, Rules, mask_of_names, parse_card


def rules_of(options: dict[str, Any]) -> Rules:
    return Rules(
        target=int(options["target"]),
        moon=options["moon"],
        revokes=options["revokes"],
        tie=options["tie"],
    )


def replay_document(document: dict[str, Any]) -> Game:
    """Replay the document; AssertionError (or the engine's IllegalMove) at the first
    disagreement. Returns the game as the engine ends it."""
    game = Game(rules_of(document["options"]))
    for hand in document["hands"]:
        audit, over = hand["audit"], hand["over"]
        number = hand["number"]
        assert audit is not None, f"hand {number} has no audit"
        assert audit["game"] == document["game"] and audit["hand"] == number
        engine_hand = game.start_hand([mask_of_names(cards) for cards in audit["deal"]])
        assert engine_hand.direction.name.lower() == audit["pass_direction"], number
        if audit["passes"] is not None:
            for seat, cards in enumerate(audit["passes"]):
                game.pass_cards(seat, mask_of_names(cards))
        for k, trick in enumerate(audit["tricks"]):
            assert engine_hand.leader == trick["leader"], (number, k)
            winner = -1
            for j, card in enumerate(trick["cards"]):
                seat = (trick["leader"] + j) % 4
                assert engine_hand.turn == seat, (number, k, j)
                winner = game.play(seat, parse_card(card))
            if over is not None:
                told = over["tricks"][k]
                assert (told["leader"], told["cards"]) == (trick["leader"], trick["cards"])
                assert told["winner"] == winner, (number, k, told["winner"], winner)
        if over is None:
            continue  # a hand the game ended in: no summary
        if game.phase is Phase.MOON_CHOICE:
            shooter = game.moon_chooser
            minus = over["points"][shooter] < 0
            game.choose_moon(shooter, Moon.SHOOTER_MINUS_26 if minus else Moon.OTHERS_26)
        assert len(over["tricks"]) == len(audit["tricks"])
        assert game.history[-1] == over["points"], (number, game.history[-1], over["points"])
        assert game.scores == over["scores"], (number, game.scores, over["scores"])
        assert engine_hand.shooter() == over["shooter"], number
    assert game.scores == document["scores"]
    if game.over:
        assert sorted(game.winners) == sorted(document["winners"])
    return game
