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
