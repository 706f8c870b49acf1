"""The ledger's one upcast step (rummy_ledger.application.upcast): a rule set that names no
variant (written before rule sets named one) reads as the legacy variant's, exactly what a
current table writes; a rule set of today's shape names its own."""

from __future__ import annotations

from rummy.common.v1 import cards_pb2
from rummy_ledger.application import upcast
from rummy_rules.registry import LEGACY_VARIANT


def test_a_rule_set_naming_no_variant_reads_as_the_legacy_variant() -> None:
    old = cards_pb2.RuleSet(turn_seconds=30)
    assert upcast.variant_name(old) == LEGACY_VARIANT == "indian-points"
    assert not old.HasField("variant"), "the record is kept"


def test_a_rule_set_of_todays_shape_names_its_own_variant() -> None:
    assert upcast.variant_name(cards_pb2.RuleSet(variant="gin")) == "gin"
    assert upcast.variant_name(cards_pb2.RuleSet(variant="")) == ""  # set, empty: as written
