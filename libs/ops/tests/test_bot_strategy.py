"""The bots' strategy: declares valid shows, takes a card that completes a meld, keeps melds,
throws the costliest loose card, never throws the card just taken from the pile, and is
reproducible from its seed."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import toy_variant
from rummy_ops.bots.strategy import BotBrain, Kind, Move, Source, Temperament
from rummy_rules.cards import Card, Rank, parse_card, parse_cards
from rummy_rules.deck import Shoe
from rummy_rules.indian import INDIAN_POINTS
from rummy_rules.indian.arrangement import best_arrangement
from rummy_rules.indian.bot import choose_discard, choose_draw, declaration, is_hopeless
from rummy_rules.registry import UnknownVariant

NO_WILD = None  # the cut was a printed joker: only printed jokers are wild

# Four melds (3 + 3 + 3 + 4 = 13 cards) and a loose 7C: a valid show with 7C laid face down.
READY = parse_cards("2H 3H 4H 5S 6S 7S 9C 9D 9H JD QD KD AD 7C")
SHOWN = READY[:13]


def test_it_declares_when_the_fourteen_cards_hold_a_valid_show() -> None:
    assert declaration(READY, NO_WILD) == parse_card("7C")
    move = BotBrain(seed=1).after_draw(READY, NO_WILD, taken_from_pile=None)
    assert move.kind is Kind.DECLARE and move.valid and move.card == parse_card("7C")
    shown = [c for c in READY if c != move.card]
    assert best_arrangement(shown, NO_WILD).valid


def test_it_does_not_declare_by_laying_aside_the_card_just_taken_from_the_pile() -> None:
    assert declaration(READY, NO_WILD, taken_from_pile=parse_card("7C")) is None


def test_it_does_not_declare_a_hand_without_a_valid_show() -> None:
    hand = parse_cards("2H 3H 4H 5S 6S 9S 9C 9D KH JD QD 4D AD 7C")
    assert declaration(hand, NO_WILD) is None
    move = BotBrain(seed=1).after_draw(hand, NO_WILD, taken_from_pile=None)
    assert move.kind is Kind.DISCARD


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


def test_a_bot_that_drops_hopeless_hands_drops_only_on_its_first_turn() -> None:
    brain = BotBrain(seed=3, temperament=Temperament(drop_hopeless=1.0))
    brain.new_hand()
    assert brain.before_draw(HOPELESS, parse_card("2S"), NO_WILD).kind is Kind.DROP
    assert brain.before_draw(HOPELESS, parse_card("2S"), NO_WILD).kind is Kind.DRAW


def test_a_bot_stalling_the_hand_never_acts_in_it() -> None:
    brain = BotBrain(seed=3, temperament=Temperament(stall_hand=1.0))
    brain.new_hand()
    moves = {brain.before_draw(SHOWN, parse_card("2S"), NO_WILD).kind for _ in range(5)}
    assert moves == {Kind.STALL}


def test_a_bot_that_declares_wrongly_shows_an_invalid_hand_and_says_so() -> None:
    brain = BotBrain(seed=3, temperament=Temperament(wrong_declare=1.0))
    brain.new_hand()
    hand = parse_cards("2H 3H 4H 5S 6S 9S 9C 9D KH JD QD 4D AD 7C")
    for _ in range(5):
        brain.before_draw(hand[:13], None, NO_WILD)
    move = brain.after_draw(hand, NO_WILD, taken_from_pile=None)
    assert move.kind is Kind.DECLARE and not move.valid
    assert not best_arrangement([c for c in hand if c != move.card], NO_WILD).valid


def _play(brain: BotBrain, hands: list[tuple[Card, ...]]) -> list[object]:
    out: list[object] = [brain.client_seed()]
    brain.new_hand()
    for hand in hands:
        out.append(brain.before_draw(hand[:13], hand[13], NO_WILD))
        out.append(brain.after_draw(hand, NO_WILD, taken_from_pile=None))
    return out


def test_two_bots_with_the_same_seed_make_the_same_choices() -> None:
    temperament = Temperament(stall_turn=0.3, wrong_declare=0.3, drop_hopeless=0.5)
    hands = [READY, HOPELESS + (parse_card("2S"),)] * 4
    first = _play(BotBrain(seed=42, temperament=temperament), hands)
    assert first == _play(BotBrain(seed=42, temperament=temperament), hands)
    assert first[0] != _play(BotBrain(seed=43, temperament=temperament), hands)[0]


def test_a_bot_plays_the_strategy_its_tables_variant_carries(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    brain = BotBrain(seed=1, variant=INDIAN_POINTS.name)
    assert brain.after_draw(READY, NO_WILD, taken_from_pile=None).kind is Kind.DECLARE
    toy = BotBrain(seed=1, variant=toy_variant.TOY_NAME)
    assert toy.before_draw(parse_cards("KS QS JS 10S 9S"), None, None) == Move(
        Kind.DRAW, source=Source.STOCK
    )
    assert toy.after_draw(parse_cards("KS 2H 3H 4H 5H 6H"), None, None).card == parse_card("KS")
    with pytest.raises(UnknownVariant):
        BotBrain(seed=1, variant="gin")
    monkeypatch.setattr(type(toy_variant.TOY), "bot", property(lambda _self: None))
    with pytest.raises(ValueError, match="has no bot strategy"):
        BotBrain(seed=1, variant=toy_variant.TOY_NAME)


def test_a_strategy_s_own_command_is_played_instead_of_drawing() -> None:
    brain = BotBrain(seed=1, variant=toy_variant.TOY_NAME)
    assert brain.before_draw(parse_cards("AH 2H 3H 4H 4S"), None, None) == Move(
        Kind.PLAY, command="knock"
    )  # 14 points: the toy's bot knocks
    indian = BotBrain(seed=1, variant=INDIAN_POINTS.name, temperament=Temperament(drop_hopeless=0))
    assert indian.before_draw(READY[:13], None, NO_WILD).kind is Kind.DRAW  # no own command
