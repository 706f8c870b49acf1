"""The Indian variant plays a match format's deals: the rule set a format asks for (drops, wrong
declare, the 80 cap) on the rulebook's shoes (2 decks + 4 printed jokers; 1 deck + 2 for two
players), and its HandEnded fed to the format through the generic ``deal_result``
(docs/rules/formats.md#deal-rules, docs/rules/cards.md#shoe)."""

from __future__ import annotations

import pytest
from hand_play import Table
from match_play import T0, Match

from rummy_rules.commands import DrawFromStock, LeaveHand
from rummy_rules.events import HandEnded
from rummy_rules.formats import BestOf, Deals, MatchFormat, Pool, deal_result
from rummy_rules.formats.messages import BeginDeal, DealRules, LeaveMatch, RecordDeal
from rummy_rules.indian import Drop
from rummy_rules.indian.rules import (
    RULEBOOK_POINTS_CAP,
    IndianPointsRules,
    IndianShoes,
    bombay_baazi,
    match_deal_rule_set,
)
from rummy_rules.rules import RuleSetError
from rummy_rules.settlement import reservation_hundredths


def test_the_rulebook_shoe_is_108_cards_and_heads_up_one_deck_is_54() -> None:
    rules = bombay_baazi(6, 10, 0, shoes=IndianShoes.RULEBOOK)
    assert rules.shoe.size == 108 and rules.shoe.printed_jokers == 4
    assert bombay_baazi(2, 10, 0, shoes=IndianShoes.RULEBOOK).shoe.size == 108
    heads_up = bombay_baazi(2, 10, 0, shoes=IndianShoes.RULEBOOK_ONE_DECK_HEADS_UP)
    assert (heads_up.shoe.decks, heads_up.shoe.printed_jokers, heads_up.shoe.size) == (1, 2, 54)
    assert bombay_baazi(3, 10, 0, shoes=IndianShoes.RULEBOOK_ONE_DECK_HEADS_UP).shoe.size == 108
    # Bombay Baazi's own shoes are unchanged: 4/6 seats 106 cards, 8 seats 159.
    assert [bombay_baazi(s, 10, 0).shoe.size for s in (4, 6, 8)] == [106, 106, 159]


def test_a_seat_count_a_shoe_option_has_no_shoe_for_is_refused() -> None:
    for seats, shoes in [
        (8, IndianShoes.RULEBOOK),
        (7, IndianShoes.RULEBOOK),
        (1, IndianShoes.RULEBOOK),
        (2, IndianShoes.BOMBAY_BAAZI),
    ]:
        with pytest.raises(RuleSetError) as refused:
            bombay_baazi(seats, 10, 0, shoes=shoes)
        assert refused.value.option in ("seats", "min_players")


def test_the_80_cap_is_a_points_table_option_and_bounds_the_reservation() -> None:
    capped = bombay_baazi(4, 25, 0, points_cap=RULEBOOK_POINTS_CAP, shoes=IndianShoes.RULEBOOK)
    assert capped.max_loss_points == 80 and reservation_hundredths(capped) == 80 * 25
    for cap in (0, 131):
        with pytest.raises(RuleSetError) as refused:
            bombay_baazi(4, 25, 0, points_cap=cap)
        assert refused.value.option == "points_cap"


def test_a_format_deal_rule_set_carries_the_formats_drops_and_cap_and_moves_no_money() -> None:
    rules = match_deal_rule_set(5, Pool(target=201).deal_rules)  # type: ignore[arg-type]
    options = rules.options
    assert (options.first_drop_points, options.middle_drop_points) == (25, 50)  # type: ignore[attr-defined]
    assert options.wrong_declare_points == 80 and options.points_cap == 80  # type: ignore[attr-defined]
    assert rules.max_loss_points == 80 and rules.point_value_hundredths == 0
    assert rules.commission_bps == 0 and rules.shoe.size == 108


@pytest.mark.parametrize(
    ("fmt", "drops"),
    [(Pool(target=101), (20, 40)), (Pool(target=201), (25, 50)), (Deals(deals=3), (20, 40))]
    + [(BestOf(deals=4), (20, 40))],
)
def test_the_indian_package_holds_each_formats_drops_wrong_declare_and_cap(
    fmt: MatchFormat, drops: tuple[int, int]
) -> None:
    # house plan "Indian formats": the format asks by its kind; the Indian rules answer
    assert fmt.deal_rules is not None
    options = match_deal_rule_set(4, fmt.deal_rules).options
    assert isinstance(options, IndianPointsRules)
    assert (options.first_drop_points, options.middle_drop_points) == drops
    assert (options.wrong_declare_points, options.points_cap) == (80, 80)


def test_an_indian_format_seats_two_to_six_and_another_format_is_refused() -> None:
    # the rulebook's 2-6 players: the Indian deal refuses the table, whatever the format seats
    deal = Pool().deal_rules
    assert deal is not None
    for seats in (1, 7, 8):
        with pytest.raises(RuleSetError) as refused:
            match_deal_rule_set(seats, deal)
        assert refused.value.option == "seats"
    with pytest.raises(RuleSetError) as refused:
        match_deal_rule_set(4, DealRules(kind="pool", target=150))
    assert refused.value.option == "format"


def _played(table: Table) -> HandEnded:
    result = table.state.result
    assert isinstance(result, HandEnded)
    return result


def test_a_real_pool_201_deal_charges_the_formats_drops_and_feeds_the_pool() -> None:
    fmt = Pool(target=201, entry_hundredths=100)
    assert fmt.deal_rules is not None
    m = Match(fmt, 3)
    m.do(BeginDeal(at_ms=T0))
    table = Table(match_deal_rule_set(3, fmt.deal_rules))
    table.start([0, 1, 2], dealer=0, client_seeds={})
    # Seat 1 (after the dealer) drops before drawing: first drop 25. Seat 2 draws, then leaves
    # mid-deal (the middle drop, 50) and leaves the match; seat 0 is left and wins.
    table.run(Drop(seat=1, turn_no=table.state.turn_no, at_ms=table.tick()))
    assert table.state.turn_seat == 2
    table.run(DrawFromStock(seat=2, turn_no=table.state.turn_no, at_ms=table.tick()))
    m.do(LeaveMatch(seat=2, at_ms=T0))
    table.run(LeaveHand(seat=2, at_ms=table.tick()))
    result = deal_result(_played(table))
    assert result.points == ((0, 0), (1, 25), (2, 50))
    assert result.winners == (0,) and result.left == frozenset({2})
    m.do(RecordDeal(result=result, at_ms=T0))
    assert m.state.totals == ((0, 0), (1, 25), (2, 50))
    assert m.state.active == (0, 1)


def test_a_heads_up_deal_is_dealt_from_one_deck_and_two_jokers() -> None:
    fmt = Pool(target=101)
    assert fmt.deal_rules is not None
    rules = match_deal_rule_set(2, fmt.deal_rules, shoes=IndianShoes.RULEBOOK_ONE_DECK_HEADS_UP)
    table = Table(rules)
    table.start([0, 1], dealer=1, client_seeds={0: "ab"})
    dealt = [c for s in table.state.seats for c in s.cards]
    cards = [*dealt, *table.state.stock, *table.state.discard_pile]
    assert table.state.wild_cut is not None
    assert len(cards) + 1 == 54 and len(set(cards)) == len(cards)
    assert all(c in rules.shoe for c in cards)
