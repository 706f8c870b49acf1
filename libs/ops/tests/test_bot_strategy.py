"""The bots' strategy: declares valid shows, takes a card that completes a meld, keeps melds,
throws the costliest loose card, never throws the card just taken from the pile, and is
reproducible from its seed."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import toy_variant
from rummy_ops.bots.strategy import BotBrain, Temperament
from rummy_rules import registry
from rummy_rules.bot import Situation
from rummy_rules.cards import Card, Rank, parse_card, parse_cards
from rummy_rules.commands import Command, Discard, DrawFromDiscardPile, DrawFromStock
from rummy_rules.deck import Shoe
from rummy_rules.events import DrawSource as Source
from rummy_rules.indian import INDIAN_POINTS, Declare, Drop
from rummy_rules.indian.arrangement import best_arrangement
from rummy_rules.indian.bot import choose_discard, choose_draw, declaration, is_hopeless
from rummy_rules.registry import UnknownVariant
from rummy_testing.bot_hands import play_hand
from toy_variant import Knock

NO_WILD = None  # the cut was a printed joker: only printed jokers are wild

# Four melds (3 + 3 + 3 + 4 = 13 cards) and a loose 7C: a valid show with 7C laid face down.
READY = parse_cards("2H 3H 4H 5S 6S 7S 9C 9D 9H JD QD KD AD 7C")
SHOWN = READY[:13]


def test_it_declares_when_the_fourteen_cards_hold_a_valid_show() -> None:
    assert declaration(READY, NO_WILD) == parse_card("7C")
    shown = [c for c in READY if c != parse_card("7C")]
    assert best_arrangement(shown, NO_WILD).valid


def test_it_does_not_declare_by_laying_aside_the_card_just_taken_from_the_pile() -> None:
    assert declaration(READY, NO_WILD, taken_from_pile=parse_card("7C")) is None


def test_it_does_not_declare_a_hand_without_a_valid_show() -> None:
    hand = parse_cards("2H 3H 4H 5S 6S 9S 9C 9D KH JD QD 4D AD 7C")
    assert declaration(hand, NO_WILD) is None


def test_it_takes_the_discard_that_completes_a_pure_sequence() -> None:
    hand = parse_cards("4H 5H 9C 9D KS 2C 7D JC 3S 8S QD 6C AD")
    assert choose_draw(hand, parse_card("6H"), NO_WILD) is Source.DISCARD_PILE


def test_it_takes_the_discard_that_completes_a_set() -> None:
    hand = parse_cards("4H 5C 9C 9D KS 2C 7D JC 3S 8S QD 6C AD")
    assert choose_draw(hand, parse_card("9S"), NO_WILD) is Source.DISCARD_PILE


def test_it_takes_the_discard_that_extends_a_meld_it_holds() -> None:
    hand = parse_cards("4H 5H 6H 9C 9D 9S KS 2C 7D JC 3S QD AD")
    assert choose_draw(hand, parse_card("7H"), NO_WILD) is Source.DISCARD_PILE
    assert choose_draw(hand, parse_card("9H"), NO_WILD) is Source.DISCARD_PILE


def test_it_takes_a_joker_from_the_pile() -> None:
    hand = parse_cards("4H 5C 9C 9D KS 2C 7D JC 3S 8S QD 6C AD")
    assert choose_draw(hand, parse_card("JK"), NO_WILD) is Source.DISCARD_PILE
    assert choose_draw(hand, parse_card("5S"), Rank.FIVE) is Source.DISCARD_PILE


def test_it_draws_from_the_stock_when_the_top_discard_helps_no_meld() -> None:
    hand = parse_cards("2H 3H 4H 5S 6S 7S 9C 9D 9H JD QD KD 4C")
    assert choose_draw(hand, parse_card("8C"), NO_WILD) is Source.STOCK
    assert choose_draw(hand, None, NO_WILD) is Source.STOCK


def test_it_discards_the_costliest_loose_card_and_keeps_its_melds() -> None:
    # Melds hold KD QD JD (30 points); the loose cards are KS (10, no partner), 3C and 6H.
    hand = parse_cards("2H 3H 4H 5S 6S 7S 9C 9D 9H JD QD KD 3C KS")
    assert choose_discard(hand, NO_WILD) == parse_card("KS")


def test_a_loose_card_with_a_partner_is_kept_over_a_cheaper_one_without() -> None:
    # Loose: 9D-10D and JS-QS are pairs of neighbours (10 points each but for 9D); 8C has none.
    hand = parse_cards("2H 3H 4H 5S 6S 7S KC KD KH 9D 10D JS QS 8C")
    assert choose_discard(hand, NO_WILD) == parse_card("8C")


def test_it_never_discards_the_card_just_taken_from_the_pile() -> None:
    # KS is the costliest loose card, but it was just taken: the next one goes.
    hand = parse_cards("2H 3H 4H 5S 6S 7S 9C 9D 9H JD QD KD 3C KS")
    assert choose_discard(hand, NO_WILD, taken_from_pile=parse_card("KS")) == parse_card("3C")


SHOE = Shoe(decks=2, printed_jokers=2)


@given(
    st.lists(st.integers(0, SHOE.size - 1), min_size=14, max_size=14, unique=True),
    st.integers(0, 13),
    st.sampled_from([None, *Rank]),
)
def test_the_discard_is_always_a_held_card_other_than_the_one_taken(
    picks: list[int], taken_at: int, wild: Rank | None
) -> None:
    hand = [SHOE.cards[i] for i in picks]
    taken = hand[taken_at]
    discard = choose_discard(hand, wild, taken_from_pile=taken)
    assert discard in hand and discard != taken
    face_down = declaration(hand, wild, taken_from_pile=taken)
    if face_down is not None:
        assert face_down != taken
        assert best_arrangement([c for c in hand if c != face_down], wild).valid


HOPELESS = parse_cards("AC 3C 6C 9C QC 2D 5D 8D JD 4H 7H KS 10S")


def test_a_hand_without_neighbours_and_many_points_is_hopeless() -> None:
    assert is_hopeless(HOPELESS, NO_WILD)
    assert not is_hopeless(SHOWN, NO_WILD)


def before(turn: int = 1) -> list[Command]:
    """The Indian moves before drawing (seat 0)."""
    return [
        DrawFromStock(seat=0, turn_no=turn, at_ms=0),
        DrawFromDiscardPile(seat=0, turn_no=turn, at_ms=0),
        Drop(seat=0, turn_no=turn, at_ms=0),
    ]


def after(hand: tuple[Card, ...], turn: int = 1, taken: Card | None = None) -> list[Command]:
    """The Indian moves after drawing (seat 0): each card it may let go, discarded or laid face
    down."""
    leaving = [c for c in hand if c != taken]
    return [Discard(seat=0, turn_no=turn, card=c, at_ms=0) for c in leaving] + [
        Declare(seat=0, turn_no=turn, face_down=c, at_ms=0) for c in leaving
    ]


def seat(cards: tuple[Card, ...], drawn: bool = False, top: Card | None = None) -> Situation:
    return Situation(seat=0, cards=cards, discard_top=top, has_drawn=drawn)


def test_the_brain_declares_through_the_listed_declare_and_discards_otherwise() -> None:
    brain = BotBrain(seed=1)
    brain.new_hand()
    chosen = brain.choose(seat(READY, drawn=True), after(READY), 1)
    assert chosen == Declare(seat=0, turn_no=1, face_down=parse_card("7C"), at_ms=0)
    hand = parse_cards("2H 3H 4H 5S 6S 9S 9C 9D KH JD QD 4D AD 7C")
    assert isinstance(brain.choose(seat(hand, drawn=True), after(hand, 2), 2), Discard)


def test_the_brain_only_ever_plays_a_listed_move() -> None:
    brain = BotBrain(seed=1)
    brain.new_hand()
    # the strategy's draw from the pile is not listed (an empty pile): it draws from the stock
    only_stock = [DrawFromStock(seat=0, turn_no=1, at_ms=0)]
    assert brain.choose(seat(READY[:13], top=parse_card("JK")), only_stock, 1) == only_stock[0]
    assert brain.choose(seat(READY[:13]), [], 1) is None  # nothing listed: nothing played


def test_a_bot_that_drops_hopeless_hands_drops_only_on_its_first_turn() -> None:
    brain = BotBrain(seed=3, temperament=Temperament(give_up=1.0))
    brain.new_hand()
    top = parse_card("2S")
    assert isinstance(brain.choose(seat(HOPELESS, top=top), before(1), 1), Drop)
    second = brain.choose(seat(HOPELESS, top=top), before(2), 2)
    assert isinstance(second, DrawFromStock | DrawFromDiscardPile)


def test_a_bot_stalling_the_hand_never_acts_in_it() -> None:
    brain = BotBrain(seed=3, temperament=Temperament(stall_hand=1.0))
    brain.new_hand()
    assert {brain.choose(seat(SHOWN), before(t), t) for t in range(1, 6)} == {None}


def test_a_blundering_bot_plays_a_move_of_the_variant_s_own_it_did_not_choose() -> None:
    brain = BotBrain(seed=3, temperament=Temperament(blunder=1.0))
    brain.new_hand()
    hand = parse_cards("2H 3H 4H 5S 6S 9S 9C 9D KH JD QD 4D AD 7C")
    for turn in range(1, 5):
        brain.choose(seat(hand[:13]), before(turn), turn)
    chosen = brain.choose(seat(hand, drawn=True), after(hand, 5), 5)
    assert isinstance(chosen, Declare)  # a wrong declare: the hand holds no valid show
    assert not best_arrangement([c for c in hand if c != chosen.face_down], NO_WILD).valid


def _play(brain: BotBrain, hands: list[tuple[Card, ...]]) -> list[object]:
    out: list[object] = [brain.client_seed()]
    brain.new_hand()
    for turn, hand in enumerate(hands, start=1):
        out.append(brain.choose(seat(hand[:13], top=hand[13]), before(turn), turn))
        out.append(brain.choose(seat(hand, drawn=True), after(hand, turn), turn))
    return out


def test_two_bots_with_the_same_seed_make_the_same_choices() -> None:
    temperament = Temperament(stall_turn=0.3, blunder=0.3, give_up=0.5)
    hands = [READY, HOPELESS + (parse_card("2S"),)] * 4
    first = _play(BotBrain(seed=42, temperament=temperament), hands)
    assert first == _play(BotBrain(seed=42, temperament=temperament), hands)
    assert first[0] != _play(BotBrain(seed=43, temperament=temperament), hands)[0]


def test_a_bot_plays_the_strategy_its_tables_variant_carries(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    toy = BotBrain(seed=1, variant=toy_variant.TOY_NAME)
    toy.new_hand()
    draw, knock = DrawFromStock(seat=0, turn_no=1, at_ms=0), Knock(seat=0, turn_no=1, at_ms=0)
    assert toy.choose(seat(parse_cards("KS QS JS 10S 9S")), [draw, knock], 1) == draw
    five = parse_cards("KS 2H 3H 4H 5H 6H")
    discards = [Discard(seat=0, turn_no=1, card=c, at_ms=0) for c in five]
    assert toy.choose(seat(five, drawn=True), discards, 1) == discards[0]  # KS, the costliest
    with pytest.raises(UnknownVariant):
        BotBrain(seed=1, variant="gin")
    monkeypatch.setattr(type(toy_variant.TOY), "bot", property(lambda _self: None))
    with pytest.raises(ValueError, match="has no bot strategy"):
        BotBrain(seed=1, variant=toy_variant.TOY_NAME)


def test_a_strategy_s_own_command_is_played_when_it_chooses_it() -> None:
    brain = BotBrain(seed=1, variant=toy_variant.TOY_NAME)
    brain.new_hand()
    draw, knock = DrawFromStock(seat=0, turn_no=1, at_ms=0), Knock(seat=0, turn_no=1, at_ms=0)
    assert brain.choose(seat(parse_cards("AH 2H 3H 4H 4S")), [draw, knock], 1) == knock


@pytest.mark.parametrize("variant", [INDIAN_POINTS.name, toy_variant.TOY_NAME])
@pytest.mark.parametrize("seed", range(4))
def test_bots_play_whole_hands_of_any_variant_by_its_legal_commands(
    variant: str, seed: int
) -> None:
    """Every move a bot makes is one the variant listed (``play_hand`` asserts it) and the
    hand ends; the temperament's stalls are played by the rules' timeouts."""
    v = registry.lookup(variant)
    rules = v.house_rule_set(4 if variant == INDIAN_POINTS.name else 3, 100, 1000)
    temperament = Temperament(stall_turn=0.05, blunder=0.02)
    brains = {s: BotBrain(seed=seed * 10 + s, variant=variant, temperament=temperament)
              for s in range(3)}  # fmt: skip
    hand = play_hand(v, rules, brains, bytes([seed]) * 32)
    assert v.is_over(hand.state) and hand.moves
