"""The shoe and its canonical order (docs/rules/shuffle-spec.md section 2)."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rummy_rules.cards import Card, Rank, Suit, parse_card, printed_joker
from rummy_rules.deck import Shoe
from rummy_rules.indian.rules import bombay_baazi


@pytest.mark.parametrize(
    ("seats", "size", "decks", "jokers"), [(4, 106, 2, 2), (6, 106, 2, 2), (8, 159, 3, 3)]
)
def test_shoe_by_seat_count_follows_the_ruling(
    seats: int, size: int, decks: int, jokers: int
) -> None:
    shoe = bombay_baazi(seats, 100, 0).shoe
    assert (shoe.decks, shoe.printed_jokers, shoe.size, len(shoe.cards)) == (
        decks,
        jokers,
        size,
        size,
    )


def test_every_card_of_a_shoe_is_a_distinct_physical_card() -> None:
    shoe = Shoe(decks=3, printed_jokers=3)
    assert len(set(shoe.cards)) == shoe.size
    faces = [c.face for c in shoe.cards]
    assert faces.count("7H") == 3 and faces.count("JK") == 3


def test_canonical_order_is_deck_by_deck_clubs_to_spades_ace_to_king_then_jokers() -> None:
    shoe = Shoe(decks=2, printed_jokers=2)
    expected = {
        0: Card(Rank.ACE, Suit.CLUBS, 0),
        12: Card(Rank.KING, Suit.CLUBS, 0),
        13: Card(Rank.ACE, Suit.DIAMONDS, 0),
        35: Card(Rank.TEN, Suit.HEARTS, 0),
        51: Card(Rank.KING, Suit.SPADES, 0),
        52: Card(Rank.ACE, Suit.CLUBS, 1),
        103: Card(Rank.KING, Suit.SPADES, 1),
        104: printed_joker(0),
        105: printed_joker(1),
    }
    for index, card in expected.items():
        assert shoe.index_to_card(index) == card
        assert shoe.card_to_index(card) == index


@given(st.integers(1, 4), st.integers(0, 4), st.data())
def test_index_and_card_round_trip(decks: int, jokers: int, data: st.DataObject) -> None:
    shoe = Shoe(decks, jokers)
    index = data.draw(st.integers(0, shoe.size - 1))
    assert shoe.card_to_index(shoe.index_to_card(index)) == index
    assert shoe.cards[index] == shoe.index_to_card(index)


def test_a_card_from_a_deck_the_shoe_does_not_have_is_refused() -> None:
    shoe = Shoe(decks=2, printed_jokers=2)
    assert parse_card("7H", copy=2) not in shoe
    with pytest.raises(ValueError, match="copy 2"):
        shoe.card_to_index(parse_card("7H", copy=2))
    with pytest.raises(ValueError, match="printed joker copy 2"):
        shoe.card_to_index(printed_joker(2))
    with pytest.raises(ValueError, match="outside this shoe"):
        shoe.index_to_card(106)


def test_a_shoe_needs_a_deck() -> None:
    with pytest.raises(ValueError, match="at least one deck"):
        Shoe(decks=0, printed_jokers=2)
    with pytest.raises(ValueError, match="printed_jokers"):
        Shoe(decks=1, printed_jokers=-1)
