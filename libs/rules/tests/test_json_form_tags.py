"""Every stored message has a stable, namespaced tag declared beside its class and listed in one
registry; two namespaces may both have a ``Declared``; a record tagged the old way (its class
name) or with the old money names decodes to today's message (rummy_rules.upcast)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from rummy_rules import json_form, registry
from rummy_rules.events import HandStarted, SeatAccount, StakeReserved
from rummy_rules.indian.events import Declared
from rummy_rules.upcast import LEGACY_MONEY_SUFFIX, LEGACY_TAGS, upcast

NAMESPACES = {"table", "match", "indian", "gin"}


def test_every_registered_message_carries_a_namespaced_tag_declared_on_its_own_class() -> None:
    tags = json_form.tags()
    assert len(tags) >= len(LEGACY_TAGS)
    for tag, cls in tags.items():
        assert json_form.TAG_SHAPE.fullmatch(tag), tag
        assert json_form.tag_of(cls) == tag


def test_the_old_tags_table_maps_each_class_name_of_before_to_the_class_of_that_name() -> None:
    tags = json_form.tags()
    assert len(set(LEGACY_TAGS.values())) == len(LEGACY_TAGS)
    for old, new in LEGACY_TAGS.items():
        assert tags[new].__name__ == old
    in_tree = {t for t, c in tags.items() if c.__module__.startswith("rummy_rules.")}
    assert in_tree == set(LEGACY_TAGS.values()), "a message added since has no old tag"


def test_two_namespaces_may_both_have_a_declared() -> None:
    @json_form.tag("testns.Declared")
    @dataclass(frozen=True, kw_only=True)
    class Declared2:  # its own Declared, in another namespace than indian.Declared
        seat: int

    Declared2.__name__ = "Declared"
    json_form.register(Declared2)
    mine = json_form.from_dict({"type": "testns.Declared", "seat": 3})
    assert isinstance(mine, Declared2) and json_form.registered("indian.Declared") is Declared
    assert json_form.to_dict(mine) == {"type": "testns.Declared", "seat": 3}


def test_a_class_without_a_tag_or_with_a_taken_tag_is_refused() -> None:
    @dataclass(frozen=True)
    class Untagged:
        seat: int

    with pytest.raises(TypeError, match="declares no tag"):
        json_form.register(Untagged)

    @json_form.tag("indian.Declared")
    @dataclass(frozen=True)
    class Impostor:
        seat: int

    with pytest.raises(TypeError, match="two message types tagged indian.Declared"):
        json_form.register(Impostor)
    with pytest.raises(ValueError, match="<namespace>.<Name>"):
        json_form.tag("Declared")


def test_a_record_of_the_old_shape_decodes_to_the_message_of_today() -> None:
    old = {"type": "StakeReserved", "seat": 2, "amount" + LEGACY_MONEY_SUFFIX: 1300}
    assert json_form.from_dict(old) == StakeReserved(seat=2, amount_hundredths=1300)
    assert json_form.to_dict(json_form.from_dict(old)) == {
        "type": "table.StakeReserved",
        "seat": 2,
        "amount_hundredths": 1300,
    }


def test_the_upcast_keeps_the_current_name_of_a_record_holding_both_and_leaves_today_alone() -> (
    None
):
    both = {"type": "table.StakeReserved", "seat": 1, "amount_hundredths": 5}
    both["amount" + LEGACY_MONEY_SUFFIX] = 9
    assert upcast(both) == {"type": "table.StakeReserved", "seat": 1, "amount_hundredths": 5}
    today = {"type": "table.StakeReserved", "seat": 1, "amount_hundredths": 5, "x": [{"a": 1}]}
    assert upcast(today) is today
    nested = {"type": "HandStarted", "rule_set": {"options": {"type": "IndianPointsRules"}}}
    assert upcast(nested)["rule_set"]["options"]["type"] == "indian.PointsRules"


def test_a_rule_sets_indian_options_of_the_old_shape_read_as_its_tagged_options() -> None:
    started = HandStarted(
        hand_id="h1",
        seats=(SeatAccount(0, "ann"), SeatAccount(1, "bob")),
        dealer_seat=0,
        rule_set=registry.lookup("indian-points").house_rule_set(4, 10, 500),
        at_ms=0,
    )
    today = json_form.to_dict(started)
    options = today["rule_set"]["options"]
    old = {**today, "rule_set": {k: v for k, v in today["rule_set"].items() if k != "options"}}
    old["rule_set"]["indian"] = {k: v for k, v in options.items() if k != "type"}
    assert upcast(old) == today
    assert json_form.from_dict(old) == started
    assert "options" not in old["rule_set"], "the record is kept"
    both = {**today["rule_set"], "indian": {"first_drop_points": 1}}
    assert upcast(both) == today["rule_set"]  # both: the current one is kept
    assert upcast(today) is today


def test_an_unknown_tag_is_refused_after_the_installed_variants_are_discovered() -> None:
    registry.discover()
    with pytest.raises(json_form.CodecError, match="unknown message type 'nobody.Teleport'"):
        json_form.from_dict({"type": "nobody.Teleport"})
