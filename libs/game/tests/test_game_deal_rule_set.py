"""A match format's deals through the Variant interface (``Variant.deal_rule_set``) and the
Indian shoe options on the wire (``rummy.indian.v1.IndianPointsOptions.shoes``)."""

from __future__ import annotations

import pytest

from rummy.common.v1 import cards_pb2
from rummy.indian.v1 import rules_pb2 as ip
from rummy_game import stream_payloads
from rummy_rules import events as ev
from rummy_rules import registry
from rummy_rules.deck import Shoe
from rummy_rules.formats import make_format
from rummy_rules.rules import RuleSetError
from rummy_rules.variant import VariantRules

INDIAN = registry.lookup("indian-points")


def _table(seats: int, shoes: int | None = None) -> cards_pb2.RuleSet:
    options = cards_pb2.RuleSet()
    if shoes is not None:
        options.indian_points.shoes = shoes  # type: ignore[assignment]
    return options


def _read_back(rules: object) -> object:
    """The rule set a deal's HandStarted carries, read back as the dealer and replay read it."""
    started = ev.HandStarted(
        hand_id="h",
        seats=(ev.SeatAccount(0, "a"), ev.SeatAccount(1, "b")),
        dealer_seat=0,
        rule_set=rules,  # type: ignore[arg-type]
        at_ms=1,
    )
    return stream_payloads.hand_context(stream_payloads.hand_started_to_pb(started, 1)).rule_set


@pytest.mark.parametrize(
    ("fmt", "drops"),
    [
        (make_format("pool", target=101), (20, 40)),
        (make_format("pool", target=201), (25, 50)),
        (make_format("deals", deals=3), (20, 40)),
        (make_format("best-of", deals=3), (20, 40)),
    ],
)
@pytest.mark.parametrize("seats", [2, 3, 4, 5, 6])
def test_an_indian_formats_deal_is_its_drops_and_the_80_cap_on_the_rulebook_shoe_played_free(
    fmt: object, drops: tuple[int, int], seats: int
) -> None:
    table = stream_payloads.rule_set_from_pb(_table(seats), seats, 0, 1000)
    assert fmt.deal_rules is not None  # type: ignore[attr-defined]
    deal = INDIAN.deal_rule_set(table, fmt.deal_rules)  # type: ignore[attr-defined]
    options = deal.options
    assert (options.first_drop_points, options.middle_drop_points) == drops  # type: ignore[attr-defined]
    assert options.wrong_declare_points == 80  # type: ignore[attr-defined]
    assert options.points_cap == 80  # type: ignore[attr-defined]
    assert deal.shoe == Shoe(decks=2, printed_jokers=4)
    assert (deal.point_value_hundredths, deal.commission_bps, deal.seats) == (0, 0, seats)
    assert deal.turn_seconds == table.turn_seconds
    assert _read_back(deal) == deal


def test_a_heads_up_table_on_the_one_deck_option_deals_its_deals_from_one_deck() -> None:
    table = stream_payloads.rule_set_from_pb(
        _table(2, ip.INDIAN_SHOES_RULEBOOK_ONE_DECK_HEADS_UP), 2, 0, 0
    )
    deal = INDIAN.deal_rule_set(table, make_format("pool").deal_rules)  # type: ignore[arg-type]
    assert deal.shoe == Shoe(decks=1, printed_jokers=2)
    assert _read_back(deal) == deal


def test_a_variant_that_plays_no_formats_deals_refuses_them() -> None:
    class NoFormats(VariantRules):
        name = "no-formats"

    with pytest.raises(RuleSetError) as caught:
        NoFormats().deal_rule_set(
            stream_payloads.rule_set_from_pb(_table(4), 4, 0, 0),
            make_format("pool").deal_rules,  # type: ignore[arg-type]
        )
    assert caught.value.option == "format"


@pytest.mark.parametrize(
    ("seats", "shoes", "shoe"),
    [
        (4, None, Shoe(decks=2, printed_jokers=2)),
        (8, None, Shoe(decks=3, printed_jokers=3)),
        (3, None, Shoe(decks=2, printed_jokers=4)),
        (4, ip.INDIAN_SHOES_RULEBOOK, Shoe(decks=2, printed_jokers=4)),
        (2, ip.INDIAN_SHOES_RULEBOOK_ONE_DECK_HEADS_UP, Shoe(decks=1, printed_jokers=2)),
        (3, ip.INDIAN_SHOES_RULEBOOK_ONE_DECK_HEADS_UP, Shoe(decks=2, printed_jokers=4)),
    ],
)
def test_a_points_table_deals_from_the_shoes_it_chose_and_records_them(
    seats: int, shoes: int | None, shoe: Shoe
) -> None:
    rules = stream_payloads.rule_set_from_pb(_table(seats, shoes), seats, 10, 500)
    assert rules.shoe == shoe
    written = stream_payloads.rule_set_to_pb(rules, None)
    assert written.indian_points.HasField("shoes")
    assert stream_payloads.recorded_rule_set_from_pb(written, seats, 10, 500) == rules


def test_the_80_cap_is_a_points_table_option() -> None:
    rules = stream_payloads.rule_set_from_pb(cards_pb2.RuleSet(max_points=80), 4, 10, 0)
    assert rules.options.points_cap == 80  # type: ignore[attr-defined]
    assert rules.max_loss_points == 80


@pytest.mark.parametrize(
    ("seats", "shoes", "message"),
    [
        (3, ip.INDIAN_SHOES_BOMBAY_BAAZI, "seat_count must be one of 4, 6, 8 on the bombay-baazi"),
        (8, ip.INDIAN_SHOES_RULEBOOK, "seat_count must be one of 2, 3, 4, 5, 6 on the rulebook"),
        (4, 9, "rule_set.indian_points.shoes must be one of INDIAN_SHOES_BOMBAY_BAAZI"),
    ],
)
def test_shoes_without_a_shoe_for_the_seat_count_are_refused_naming_the_field(
    seats: int, shoes: int, message: str
) -> None:
    with pytest.raises(RuleSetError) as caught:
        stream_payloads.rule_set_from_pb(_table(seats, shoes), seats, 10, 500)
    assert stream_payloads.wire_message(caught.value, "indian-points").startswith(message)
