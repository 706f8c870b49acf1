"""What each variant's bundle shows a watcher of its own part of a spectator's view
(``VariantBundle.view_lines`` through :func:`rummy_game.bundle.variant_view_lines`, ``rummy
watch``): gin's knock limit, its knock's melds and deadwood and the score; Rummy 500's melds with
their lay-offs, the table points and the round's end; Indian points puts nothing of its own on a
view. The views are the rules' own, packed by the variant's wire; no line shows a card a hand
holds (while the hand runs: the other hand; at the end: any hand, though the view carries them)."""

from __future__ import annotations

import re

from google.protobuf import any_pb2
from test_game_gin_view import SPECTATOR, Hand, _wire, knocking_hand

from rummy_game.bundle import bundle_of, variant_view_lines
from rummy_game.rummy500 import rummy500_view_to_pb
from rummy_rules import registry
from rummy_rules.cards import Card
from rummy_rules.gin.rules import GIN_SHOE, gin_rule_set
from rummy_rules.gin.variant import GIN
from rummy_rules.rummy500.variant import RUMMY500
from rummy_testing.bot_hands import play_hand

_FACE = re.compile(r"\b(?:10|[2-9AJQK])[SHDC]\b")


class Melder:
    """A player for ``play_hand``: it goes out, melds or lays off whenever it may, else draws
    from the stock and discards its first card that may go."""

    ORDER = ("Rummy500GoOut", "Rummy500Meld", "Rummy500LayOff", "DrawFromStock", "Discard")

    def new_hand(self) -> None:
        pass

    def choose(self, _situation: object, legal: list[object], _turn_no: int) -> object:
        for name in self.ORDER:
            found = [m for m in legal if type(m).__name__ == name]
            if found:
                return found[0]
        return legal[0]


def _packed(message: object) -> any_pb2.Any:
    packed = any_pb2.Any()
    packed.Pack(message)  # type: ignore[arg-type]
    return packed


def _faces(cards: tuple[Card, ...] | list[Card]) -> set[str]:
    return {c.face for c in cards}


def _shown(lines: list[str]) -> set[str]:
    return set(_FACE.findall("\n".join(lines)))


def test_gin_shows_the_limit_then_the_knock_as_laid_and_the_score_but_no_hand() -> None:
    hand, knock = knocking_hand(gin_rule_set())
    before = variant_view_lines("gin", _packed(_wire(hand.state, SPECTATOR)))
    assert before == ["knock limit 10"]
    hand.run(knock)
    knocker = knock.seat
    lines = variant_view_lines("gin", _packed(_wire(hand.state, SPECTATOR)))
    knocked = [line for line in lines if line.startswith(f"s{knocker} knocked (")]
    assert len(knocked) == 1 and ", deadwood " in knocked[0] and "melds [" in knocked[0]
    scored = [line for line in lines if line.startswith("scored: ")]
    assert len(scored) == 1 and "laid off)" in scored[0]
    # the knocker's melds and deadwood are on the table; the defender's hand and the face-down
    # card never are, though the scored view carries the defender's cards
    play = hand.state.play
    defender = _faces(play.hand_of(1 - knocker))
    assert defender and not _shown(lines) & (defender | {knock.face_down.face})


def test_gin_oklahoma_shows_its_limit_from_the_upcard_and_a_spade_doubling() -> None:
    hand = Hand(gin_rule_set(oklahoma=True), 1, upcard="3S")
    wire = _wire(hand.state, SPECTATOR)
    assert variant_view_lines("gin", _packed(wire)) == [
        "knock limit 3, doubled (a spade upcard)",
        "the upcard is on offer",
    ]


def test_rummy500_shows_each_meld_with_its_lay_offs_the_points_and_the_end_but_no_hand() -> None:
    rules = RUMMY500.house_rule_set(3, 0, 0)
    for seed in range(6):
        brains = {s: Melder() for s in range(3)}
        played = play_hand(RUMMY500, rules, brains, bytes([seed + 1]) * 32)  # type: ignore[arg-type]
        view = RUMMY500.view(played.state, SPECTATOR)
        wire = rummy500_view_to_pb(view.variant_view, rules.shoe)  # type: ignore[arg-type]
        if wire.melds:
            break
    else:
        raise AssertionError("no seed melded")
    lines = variant_view_lines(RUMMY500.name, _packed(wire))
    melds = [line for line in lines if line.startswith("meld ")]
    assert len(melds) == len(wire.melds)
    for line, meld in zip(melds, wire.melds, strict=True):
        assert line.startswith(f"meld {meld.meld_id} s{meld.owner} {meld.kind} [")
        assert all(c.face in line for c in meld.cards)
    points = [line for line in lines if line.startswith("table points [")]
    assert len(points) == 1 and all(f"s{s}:" in points[0] for s in range(3))
    (end,) = [line for line in lines if line.startswith("round over (")]
    assert "scores [" in end
    left = {c.face for s in wire.ending.scores for c in s.cards}
    assert not _shown(lines) & left


def test_indian_points_and_an_unknown_variant_show_nothing_of_their_own() -> None:
    assert bundle_of("indian-points").view_lines is None  # type: ignore[union-attr]
    assert variant_view_lines("indian-points", any_pb2.Any()) == []
    assert variant_view_lines("no-such-game", _packed(_wire_of_gin())) == []
    assert variant_view_lines("gin", any_pb2.Any()) == []
    assert registry.lookup("gin") is GIN and GIN_SHOE is not None


def _wire_of_gin() -> object:
    hand, _knock = knocking_hand(gin_rule_set())
    return _wire(hand.state, SPECTATOR)
