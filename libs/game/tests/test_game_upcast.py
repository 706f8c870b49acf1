"""The table stream's one upcast step (rummy_game.upcast): a record in each old shape reads as
exactly the current shape today's writer writes (``docs/rules/event-tags.md#old-shapes``); a
payload of today's shape is returned as it is, and the record is never changed in place; the
lookups are asked for a name only (a record that names no variant is upcast first)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from rummy.common.v1 import cards_pb2
from rummy.indian.v1 import events_pb2 as indian_pb
from rummy.indian.v1 import rules_pb2 as indian_rules_pb
from rummy.table.v1 import events_pb2 as table_pb
from rummy_game import stream_payloads, upcast, variant_wires
from rummy_game.bundle import bundle_of
from rummy_game.indian import INDIAN_BUNDLE
from rummy_platform.envelope import event_payloads
from rummy_rules import registry
from rummy_rules.events import HandStarted, SeatAccount
from rummy_rules.indian.rules import IndianPointsRules
from rummy_rules.rules import RuleSet, RuleSetError
from rummy_testing.scripted_hands import Recorded, gin_knock, rummy500_round

INDIAN = registry.lookup("indian-points")
#: every seat count Indian points plays: the rulebook's shoes at 2, 3 and 5, Bombay Baazi's else
SEAT_COUNTS = (2, 3, 4, 5, 6, 8)


def house(seats: int) -> RuleSet:
    return INDIAN.house_rule_set(seats, 10, 500)


def as_written_before_the_oneof(today: cards_pb2.RuleSet) -> cards_pb2.RuleSet:
    """``today`` as a writer before ``RuleSet.variant_options`` wrote it: the flat fields only,
    and (before ``SeedsLocked.variant`` too) no variant."""
    old = cards_pb2.RuleSet()
    old.CopyFrom(today)
    old.ClearField("variant_options")
    old.ClearField("variant")
    return old


# -- SeedsLocked that names no variant ----------------------------------------------------------


def test_a_seeds_locked_naming_no_variant_reads_as_the_legacy_variants_record_kept() -> None:
    old = table_pb.SeedsLocked(hand_id="h1")
    got = upcast.payload(old)
    assert isinstance(got, table_pb.SeedsLocked)
    assert got == table_pb.SeedsLocked(hand_id="h1", variant="indian-points")
    assert registry.LEGACY_VARIANT == "indian-points"
    assert not old.HasField("variant"), "the record is kept"


def test_a_payload_of_todays_shape_is_returned_as_it_is() -> None:
    today = table_pb.SeedsLocked(hand_id="h1", variant="gin")
    assert upcast.payload(today) is today
    other = table_pb.HandAborted(hand_id="h1")
    assert upcast.payload(other) is other
    rules = house(4)
    opened = table_pb.TableOpened(
        table_id="t", seat_count=4, rule_set=stream_payloads.rule_set_to_pb(rules, 5)
    )
    assert upcast.payload(opened) is opened


# -- a rule set of a writer before explicit presence ----------------------------------------------


def test_a_recorded_rule_set_without_the_switches_reads_them_off_a_request_keeps_the_house() -> (
    None
):
    written = cards_pb2.RuleSet(variant="indian-points", first_drop_points=20)
    recorded = stream_payloads.recorded_rule_set_from_pb(written, 4, 10, 500).options
    asked = stream_payloads.rule_set_from_pb(written, 4, 10, 500).options
    assert isinstance(recorded, IndianPointsRules) and isinstance(asked, IndianPointsRules)
    assert not recorded.meld_options.jokers_only_group_is_sequence
    assert not recorded.no_discard_of_card_taken_from_pile
    assert asked.meld_options.jokers_only_group_is_sequence
    assert not written.HasField("jokers_only_group_is_impure_sequence"), "the record is kept"


def test_a_switch_set_in_the_variant_arm_only_is_not_overruled_by_the_upcast() -> None:
    written = cards_pb2.RuleSet(
        variant="indian-points",
        indian_points=indian_rules_pb.IndianPointsOptions(
            jokers_only_group_is_impure_sequence=True
        ),
    )
    current = upcast.rule_set(written, 4)
    assert not current.HasField("jokers_only_group_is_impure_sequence")
    assert current.HasField("card_taken_from_discard_cannot_be_discarded")
    assert not current.card_taken_from_discard_cannot_be_discarded
    other = cards_pb2.RuleSet(variant="no-such-game")
    assert upcast.rule_set(other, 4) is other


# -- a rule set of a writer before RuleSet.variant_options (the flat Indian fields only) ----------


@pytest.mark.parametrize("seats", SEAT_COUNTS)
def test_a_rule_set_in_the_flat_fields_only_upcasts_to_exactly_what_today_writes(
    seats: int,
) -> None:
    today = stream_payloads.rule_set_to_pb(house(seats), None)
    old = as_written_before_the_oneof(today)
    assert old.WhichOneof("variant_options") is None and old.first_drop_points == 20
    assert upcast.rule_set(old, seats) == today  # the shoes: the house's at that seat count
    assert stream_payloads.recorded_rule_set_from_pb(old, seats, 10, 500) == house(seats)
    assert old.WhichOneof("variant_options") is None, "the record is kept"


def test_a_flat_rule_set_of_other_options_keeps_them_in_the_arm() -> None:
    asked = cards_pb2.RuleSet(max_points=80, first_drop_points=15)
    asked.jokers_only_group_is_impure_sequence = False  # both switches off
    asked.card_taken_from_discard_cannot_be_discarded = False
    today = stream_payloads.rule_set_to_pb(
        stream_payloads.rule_set_from_pb(asked, 6, 10, 500), None
    )
    assert today.indian_points.max_points == 80
    assert upcast.rule_set(as_written_before_the_oneof(today), 6) == today


@pytest.mark.parametrize("seats", SEAT_COUNTS)
def test_a_hand_started_and_a_table_opened_of_the_old_shape_upcast_to_todays(seats: int) -> None:
    rules = house(seats)
    started = HandStarted(
        hand_id="h1",
        seats=tuple(SeatAccount(s, f"acct-{s}") for s in range(seats)),
        dealer_seat=0,
        rule_set=rules,
        at_ms=0,
    )
    today = stream_payloads.hand_started_to_pb(started, 1)
    old = table_pb.HandStarted()
    old.CopyFrom(today)
    old.rule_set.CopyFrom(as_written_before_the_oneof(today.rule_set))
    assert upcast.payload(old) == today
    assert stream_payloads.hand_context(old) == stream_payloads.hand_context(today)
    opened = table_pb.TableOpened(
        table_id="t", seat_count=seats, rule_set=stream_payloads.rule_set_to_pb(rules, 5)
    )
    old_opened = table_pb.TableOpened()
    old_opened.CopyFrom(opened)
    old_opened.rule_set.CopyFrom(as_written_before_the_oneof(opened.rule_set))
    assert upcast.payload(old_opened) == opened


def test_a_rule_set_at_a_seat_count_the_house_has_no_shoes_for_is_left_to_its_reader() -> None:
    old = as_written_before_the_oneof(stream_payloads.rule_set_to_pb(house(4), None))
    current = upcast.rule_set(old, 9)  # never raises: the reader refuses the seat count
    assert current.variant == "indian-points"
    assert not current.indian_points.HasField("shoes")
    assert current.indian_points.first_drop_points == 20


# -- a rule set that names no variant; the lookups take a name ------------------------------------


def test_a_rule_set_naming_no_variant_names_the_legacy_variant() -> None:
    assert upcast.variant_of(cards_pb2.RuleSet()) == "indian-points"
    assert upcast.variant_of(cards_pb2.RuleSet(variant="gin")) == "gin"
    assert upcast.variant_of(cards_pb2.RuleSet(variant="")) == ""  # set, empty: refused later
    assert stream_payloads.variant_of is upcast.variant_of
    current = upcast.rule_set(cards_pb2.RuleSet(turn_seconds=30), 4)
    assert current.variant == "indian-points"


def test_the_lookups_refuse_a_missing_name_which_the_upcast_fills_first() -> None:
    with pytest.raises(registry.UnknownVariant):
        registry.lookup("")
    with pytest.raises(variant_wires.UnknownWire):
        variant_wires.lookup("")
    assert bundle_of("") is None
    named = upcast.variant_of(cards_pb2.RuleSet())
    assert registry.lookup(named).name == variant_wires.lookup(named).variant == named


# -- the Indian events recorded under rummy.table.v1 ----------------------------------------------


def test_the_deprecated_table_types_of_the_indian_events_read_as_the_indian_package() -> None:
    assert dict(INDIAN_BUNDLE.payload_aliases) == upcast.TYPE_ALIASES
    payloads = event_payloads()
    today = indian_pb.PlayerDropped(
        hand_id="h1", seat=2, turn_no=3, kind=indian_pb.DROP_KIND_MIDDLE, points=40
    )
    old_bytes = table_pb.PlayerDropped(  # the deprecated message, the same field numbers
        hand_id="h1", seat=2, turn_no=3, kind=table_pb.DROP_KIND_MIDDLE, points=40
    ).SerializeToString()
    assert payloads.unpack("rummy.table.v1.PlayerDropped", old_bytes) == today
    for old, new in upcast.TYPE_ALIASES.items():
        assert payloads.class_for(old) is payloads.class_for(new)


# -- records of today's shape, of every installed variant, are returned as they are -------------


def todays_rule_sets() -> list[tuple[str, int, cards_pb2.RuleSet]]:
    """(variant, seats, the rule set today's writer records) for every variant installed when
    the tests are collected, at every seat count of 2..8 its house plays."""
    found = []
    for name in registry.names():
        variant = registry.lookup(name)
        for seats in range(2, 9):
            try:
                rules = variant.house_rule_set(seats, 10, 500)
            except RuleSetError:
                continue
            found.append((name, seats, stream_payloads.rule_set_to_pb(rules, 5)))
    return found


TODAYS = todays_rule_sets()


def test_every_variant_the_product_installs_has_a_rule_set_of_todays_shape_here() -> None:
    assert {name for name, _, _ in TODAYS} >= {"indian-points", "gin", "rummy500"}


@pytest.mark.parametrize(("name", "seats", "today"), TODAYS, ids=[f"{n}-{s}" for n, s, _ in TODAYS])
def test_a_rule_set_and_its_records_of_todays_shape_are_returned_as_they_are(
    name: str, seats: int, today: cards_pb2.RuleSet
) -> None:
    kept = cards_pb2.RuleSet()
    kept.CopyFrom(today)
    assert upcast.variant_of(today) == name
    assert upcast.rule_set(today, seats) is today
    opened = table_pb.TableOpened(table_id="t", seat_count=seats, rule_set=today)
    assert upcast.payload(opened) is opened
    started = table_pb.HandStarted(hand_id="h1", seat_count=seats, rule_set=today)
    assert upcast.payload(started) is started
    assert today == kept, "never changed in place"
    played = stream_payloads.rule_set_from_pb(today, seats, 10, 500)
    assert stream_payloads.recorded_rule_set_from_pb(today, seats, 10, 500) == played
    unnamed = cards_pb2.RuleSet()  # naming no variant: the legacy variant's, only it reads as today
    unnamed.CopyFrom(today)
    unnamed.ClearField("variant")
    assert upcast.rule_set(unnamed, seats).variant == registry.LEGACY_VARIANT
    assert (upcast.rule_set(unnamed, seats) == today) is (name == registry.LEGACY_VARIANT)


@pytest.mark.parametrize("hand", [gin_knock, rummy500_round], ids=["gin", "rummy500"])
def test_every_payload_of_a_hand_of_todays_shape_is_returned_as_it_is(
    hand: Callable[[], Recorded],
) -> None:
    recorded = hand()
    assert upcast.payload(recorded.started) is recorded.started
    for message in recorded.payloads:
        assert upcast.payload(message) is message
        assert upcast.hand_payload(message, recorded.ctx) is message
