"""A table's options (``rummy.common.v1.RuleSet``) as OpenTable takes them and the stream records
them: a missing option is the house's rule, a given one is taken as it is (zero and off included),
and a record written before options had presence replays as it was played."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
import table_calls
from world import World, replay_all

from rummy.common.v1 import cards_pb2
from rummy.indian.v1 import rules_pb2 as indian_pb
from rummy.table.v1 import events_pb2 as pb
from rummy_game import stream_payloads
from rummy_platform.envelope import Envelope
from rummy_platform.errors import InvalidArgument
from rummy_platform.topics import TABLE_EVENTS
from rummy_rules.indian.rules import IndianPointsRules, bombay_baazi


def test_a_missing_option_is_the_house_rule_and_a_given_one_is_taken_as_it_is() -> None:
    house = bombay_baazi(8, 25, 500)
    assert stream_payloads.rule_set_from_pb(cards_pb2.RuleSet(), 8, 25, 500) == house
    assert stream_payloads.rule_set_from_pb(cards_pb2.RuleSet(turn_seconds=45), 8, 25, 500) == (
        bombay_baazi(8, 25, 500, turn_seconds=45)
    )
    given = stream_payloads.rule_set_from_pb(
        cards_pb2.RuleSet(
            first_drop_points=0,
            max_points=80,
            jokers_only_group_is_impure_sequence=False,
            card_taken_from_discard_cannot_be_discarded=False,
        ),
        8,
        25,
        500,
    )
    assert isinstance(given.options, IndianPointsRules)
    assert given.options.first_drop_points == 0 and given.options.points_cap == 80
    assert not given.options.meld_options.jokers_only_group_is_sequence
    assert not given.options.no_discard_of_card_taken_from_pile
    assert given.options.middle_drop_points == 40 and given.turn_seconds == 30


def test_the_wire_options_of_a_rule_set_decode_to_the_same_rule_set() -> None:
    for rules in (bombay_baazi(4, 0, 0), bombay_baazi(6, 10, 1000, points_cap=80, turn_seconds=9)):
        options = stream_payloads.rule_set_to_pb(rules, 5)
        money = (rules.point_value_hundredths, rules.commission_bps)
        assert stream_payloads.rule_set_from_pb(options, rules.seats, *money) == rules
        assert stream_payloads.recorded_rule_set_from_pb(options, rules.seats, *money) == rules


def test_indian_options_given_in_the_variant_oneof_are_taken_as_the_flat_fields_are() -> None:
    in_oneof = cards_pb2.RuleSet(
        indian_points=indian_pb.IndianPointsOptions(
            first_drop_points=0, max_points=80, jokers_only_group_is_impure_sequence=False
        )
    )
    flat = cards_pb2.RuleSet(
        first_drop_points=0, max_points=80, jokers_only_group_is_impure_sequence=False
    )
    given = stream_payloads.rule_set_from_pb(in_oneof, 8, 25, 500)
    assert given == stream_payloads.rule_set_from_pb(flat, 8, 25, 500)
    assert isinstance(given.options, IndianPointsRules)
    assert given.options.first_drop_points == 0 and given.options.points_cap == 80
    both = cards_pb2.RuleSet()
    both.CopyFrom(flat)
    both.indian_points.CopyFrom(in_oneof.indian_points)
    assert stream_payloads.rule_set_from_pb(both, 8, 25, 500) == given


def test_indian_options_that_differ_between_the_flat_fields_and_the_oneof_are_refused() -> None:
    options = cards_pb2.RuleSet(
        first_drop_points=20,
        indian_points=indian_pb.IndianPointsOptions(first_drop_points=10),
    )
    with pytest.raises(ValueError, match="indian_points.first_drop_points must be equal to"):
        stream_payloads.rule_set_from_pb(options, 4, 10, 0)
    world = World()
    with pytest.raises(InvalidArgument, match="first_drop_points"):
        world.open_table(rules=options)
    assert table_calls.list_tables(world.app) == []


def test_a_penalty_out_of_bounds_in_the_oneof_is_refused_naming_its_bounds() -> None:
    options = cards_pb2.RuleSet(
        indian_points=indian_pb.IndianPointsOptions(wrong_declare_points=131)
    )
    with pytest.raises(ValueError, match="must be 0..130"):
        stream_payloads.rule_set_from_pb(options, 4, 10, 0)


@pytest.mark.parametrize(
    "options",
    [
        cards_pb2.RuleSet(turn_seconds=0),
        cards_pb2.RuleSet(max_missed_turns=0),
        cards_pb2.RuleSet(variant=""),
        cards_pb2.RuleSet(variant="no-such-game"),
    ],
    ids=["a 0 s turn", "no missed turn allowed", "an empty variant", "an unknown variant"],
)
def test_an_option_given_out_of_range_is_refused_and_opens_nothing(
    options: cards_pb2.RuleSet,
) -> None:
    world = World()
    with pytest.raises(InvalidArgument):
        world.open_table(rules=options)
    assert table_calls.list_tables(world.app) == []
    assert replay_all(world.log) == []


def test_a_start_delay_given_as_zero_starts_a_hand_once_two_players_sit() -> None:
    world = World()
    table_id = world.open_table(rules=cards_pb2.RuleSet(start_delay_seconds=0))
    world.sit(table_id, "alice")
    world.sit(table_id, "bob")
    assert len(world.app.tick()) == 1


def _as_written_before_presence(rules: cards_pb2.RuleSet) -> cards_pb2.RuleSet:
    """``rules`` as a writer without explicit presence put it on the wire: zeros and offs left
    out, and no ``variant_options`` (a later field; such a writer had none)."""
    old = cards_pb2.RuleSet()
    for field, value in rules.ListFields():
        if value and field.containing_oneof is None:
            setattr(old, field.name, value)
    return old


def test_a_table_recorded_before_presence_with_switches_off_replays_with_them_off() -> None:
    world = World()
    played = bombay_baazi(4, 100, 1000)
    off = stream_payloads.rule_set_to_pb(played, 5)
    off.jokers_only_group_is_impure_sequence = False
    off.card_taken_from_discard_cannot_be_discarded = False
    recorded = _as_written_before_presence(off)
    assert not recorded.HasField("jokers_only_group_is_impure_sequence")
    opened = pb.TableOpened(
        table_id="t-old",
        name="old",
        seat_count=4,
        point_value_hundredths=100,
        commission_bps=1000,
        rule_set=recorded,
    )
    world.log.append(
        TABLE_EVENTS,
        Envelope.new(opened, stream_id="t-old", stream_version=1, occurred_at=datetime.now(UTC)),
    )
    world.app = world.new_app()
    rules = world.app.projection.tables["t-old"].rule_set
    assert isinstance(rules.options, IndianPointsRules)
    assert not rules.options.meld_options.jokers_only_group_is_sequence
    assert not rules.options.no_discard_of_card_taken_from_pile
    assert rules.options.first_drop_points == 20 and rules.turn_seconds == 30
    # A hand of such a table recorded then is read back under the rules it was played by.
    started = pb.HandStarted(
        hand_id="h-old",
        hand_no=1,
        seat_count=4,
        point_value_hundredths=100,
        commission_bps=1000,
        rule_set=recorded,
    )
    assert stream_payloads.hand_context(started).rule_set == rules
