"""The table stream's one upcast step (rummy_game.upcast): a SeedsLocked written before it named
its variant reads as the legacy variant's; a payload of today's shape is returned as it is, and
the record is never changed in place."""

from __future__ import annotations

from rummy.table.v1 import events_pb2 as table_pb
from rummy_game import upcast
from rummy_rules import registry


def test_a_seeds_locked_naming_no_variant_reads_as_the_legacy_variants_record_kept() -> None:
    old = table_pb.SeedsLocked(hand_id="h1")
    got = upcast.payload(old)
    assert isinstance(got, table_pb.SeedsLocked)
    assert got.variant == registry.LEGACY_VARIANT == "indian-points"
    assert got.hand_id == "h1" and not old.HasField("variant")


def test_a_payload_of_todays_shape_is_returned_as_it_is() -> None:
    today = table_pb.SeedsLocked(hand_id="h1", variant="gin")
    assert upcast.payload(today) is today
    other = table_pb.HandAborted(hand_id="h1")
    assert upcast.payload(other) is other


def test_a_recorded_rule_set_without_the_switches_reads_them_off_a_request_keeps_the_house() -> (
    None
):
    from rummy.common.v1 import cards_pb2
    from rummy_game import stream_payloads
    from rummy_rules.indian.rules import IndianPointsRules

    written = cards_pb2.RuleSet(variant="indian-points", first_drop_points=20)
    recorded = stream_payloads.recorded_rule_set_from_pb(written, 4, 10, 500).options
    asked = stream_payloads.rule_set_from_pb(written, 4, 10, 500).options
    assert isinstance(recorded, IndianPointsRules) and isinstance(asked, IndianPointsRules)
    assert not recorded.meld_options.jokers_only_group_is_sequence
    assert not recorded.no_discard_of_card_taken_from_pile
    assert asked.meld_options.jokers_only_group_is_sequence
    assert not written.HasField("jokers_only_group_is_impure_sequence"), "the record is kept"


def test_a_switch_set_in_the_variant_arm_only_is_not_overruled_by_the_upcast() -> None:
    from rummy.common.v1 import cards_pb2
    from rummy.indian.v1 import rules_pb2 as indian_pb

    written = cards_pb2.RuleSet(
        variant="indian-points",
        indian_points=indian_pb.IndianPointsOptions(jokers_only_group_is_impure_sequence=True),
    )
    current = upcast.rule_set(written)
    assert not current.HasField("jokers_only_group_is_impure_sequence")
    assert current.HasField("card_taken_from_discard_cannot_be_discarded")
    assert not current.card_taken_from_discard_cannot_be_discarded
    other = cards_pb2.RuleSet(variant="no-such-game")
    assert upcast.rule_set(other) is other
