"""Every deprecated path has an upcast (docs/rules/event-tags.md#deprecated, the one list): each
row of the list has a case here, each case's upcast is the one its row names (with the version
that may drop it), and a record in that old shape upcasts to exactly what a current build
writes. A row without a case, or a case without a row, fails: a path is added or dropped with
both (``#may-drop``)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from rummy.common.v1 import cards_pb2
from rummy.gin.v1 import events_pb2 as gin_pb
from rummy.indian.v1 import events_pb2 as indian_pb
from rummy.table.v1 import events_pb2 as table_pb
from rummy.table.v1 import table_service_pb2 as api
from rummy_dealer.application import upcast as dealer_upcast
from rummy_game import stream_payloads
from rummy_game import upcast as stream_upcast
from rummy_game.indian import IndianWire
from rummy_ledger.application import upcast as ledger_upcast
from rummy_platform.envelope import event_payloads
from rummy_rules import json_form, registry
from rummy_rules import upcast as json_upcast
from rummy_rules.events import HandStarted, SeatAccount, StakeReserved
from rummy_rules.gin.hand import GinKnocked
from rummy_rules.indian.rules import INDIAN_POINTS_VARIANT
from rummy_testing.old_shapes import with_old_rule_sets, without_deal_shape
from rummy_testing.scripted_hands import gin_knock

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "rules" / "event-tags.md"
#: a row of the list: ``| `path` | layer | old shape | written until | read as | upcast | reads |
#: may drop in |``
ROW = re.compile(r"^\| `([a-z0-9-]+)` \|(.*)$", re.M)


@dataclass(frozen=True)
class Case:
    """A deprecated path's upcast (``named``: what its row names, ``(file, name)``) and a check
    that a record in the old shape upcasts to today's."""

    named: tuple[tuple[str, str], ...]
    check: Callable[[], None]


def deprecated_rows() -> dict[str, str]:
    """Each row of the list of deprecated paths: its path -> the rest of its line."""
    text = PAGE.read_text(encoding="utf-8")
    section = text[text.index('<a id="deprecated"></a>') : text.index('<a id="may-drop"></a>')]
    return dict(ROW.findall(section))


def house_rule_set_pb(seats: int, start_delay: int | None = None) -> cards_pb2.RuleSet:
    rules = registry.lookup(INDIAN_POINTS_VARIANT).house_rule_set(seats, 10, 500)
    return stream_payloads.rule_set_to_pb(rules, start_delay)


def table_opened(rule_set: cards_pb2.RuleSet, seats: int) -> table_pb.TableOpened:
    return table_pb.TableOpened(table_id="t1", seat_count=seats, rule_set=rule_set)


def json_class_tag() -> None:
    today = json_form.to_dict(StakeReserved(seat=1, amount_hundredths=500))
    old = {**today, "type": "StakeReserved"}
    assert today["type"] == "table.StakeReserved"
    assert json_upcast.upcast(old) == today
    assert json_form.from_dict(old) == json_form.from_dict(today)


def json_money_suffix() -> None:
    today = json_form.to_dict(StakeReserved(seat=1, amount_hundredths=500))
    old = {k: v for k, v in today.items() if k != "amount_hundredths"}
    old["amount_" + "cents"] = 500  # the old suffix, in two parts (rummy_rules.upcast)
    assert json_upcast.upcast(old) == today


def json_rule_set_indian() -> None:
    rules = registry.lookup(INDIAN_POINTS_VARIANT).house_rule_set(4, 10, 500)
    started = HandStarted(
        hand_id="h1",
        seats=(SeatAccount(0, "ann"), SeatAccount(1, "bob")),
        dealer_seat=0,
        rule_set=rules,
        at_ms=0,
    )
    today = json_form.to_dict(started)
    old = with_old_rule_sets(today)
    assert "options" not in old["rule_set"] and "type" not in old["rule_set"]["indian"]
    assert json_upcast.upcast(old) == today
    assert json_form.from_dict(old) == started
    both = {**today["rule_set"], "indian": {"first_drop_points": 1}}
    assert json_upcast.upcast(both) == today["rule_set"]  # both: the current one is kept


def bundle_no_deal_shape() -> None:
    """Python's part (the browser's upcast runs in tests/test_kept_records.py and
    tests/e2e/test_verify_page.py, on the kept bundles without it): what a build before the
    field left out is what a current build writes for the legacy variant, the only one then."""
    kept = json.loads((ROOT / "tests/data/kept/indian-points.bundle.json").read_text("utf-8"))
    old = without_deal_shape(kept)
    assert "deal_shape" not in old and kept["variant"] == registry.LEGACY_VARIANT
    shape = registry.lookup(registry.LEGACY_VARIANT).deal_shape
    assert kept["deal_shape"] == {"wild_cut": shape.wild_cut, "upcard": shape.upcard}
    assert kept["deal_shape"] == {"wild_cut": True, "upcard": True}  # what verify.js fills in


def gin_knock_no_melds_named() -> None:
    """Not upcast (only the hand tells it): Python reads a knock without the flag as not named,
    as a current build writes a knock whose melds the server arranged."""
    knocked = next(p for p in gin_knock().payloads if isinstance(p, gin_pb.GinKnocked))
    assert not knocked.melds_named  # the server arranged them: today writes false
    today = json_form.to_dict(
        GinKnocked(
            seat=0,
            turn_no=3,
            outcome="knock",
            face_down=None,
            melds=(),
            deadwood_cards=(),
            deadwood=0,
        )
    )
    old = {k: v for k, v in today.items() if k != "melds_named"}
    assert today["melds_named"] is False
    assert json_form.from_dict(old) == json_form.from_dict(today)
    script = (ROOT / "web" / "verify" / "gin.js").read_text(encoding="utf-8")
    assert '"melds_named" in e ?' in script, "the verifier reads a knock without it"


def stream_indian_types() -> None:
    for old_name, name in stream_upcast.TYPE_ALIASES.items():
        old_type = getattr(table_pb, old_name.rsplit(".", 1)[1])
        written = old_type(hand_id="h1", seat=2, turn_no=7)
        today = getattr(indian_pb, name.rsplit(".", 1)[1])(hand_id="h1", seat=2, turn_no=7)
        assert event_payloads().unpack(old_name, written.SerializeToString()) == today


def rule_set_no_variant() -> None:
    today = table_opened(house_rule_set_pb(4, 5), 4)
    old = table_pb.TableOpened()
    old.CopyFrom(today)
    old.rule_set.ClearField("variant")
    assert stream_upcast.variant_of(old.rule_set) == registry.LEGACY_VARIANT
    assert stream_upcast.rule_set(old.rule_set, 4) == today.rule_set
    assert stream_upcast.payload(old) == today
    assert ledger_upcast.variant_name(old.rule_set) == today.rule_set.variant


def seeds_locked_no_variant() -> None:
    old = table_pb.SeedsLocked(hand_id="h1", dealer_seat=1, hand_size=13)
    today = table_pb.SeedsLocked(hand_id="h1", dealer_seat=1, hand_size=13, variant="indian-points")
    assert stream_upcast.payload(old) == today
    assert dealer_upcast.seeds_locked(old) == today


def rule_set_proto3_zeros() -> None:
    """A rule set with both switches off, as a writer before explicit presence wrote it (before
    the oneof too, which came after presence): the switches left out, as proto3 zeros."""
    played = stream_payloads.rule_set_from_pb(
        cards_pb2.RuleSet(
            jokers_only_group_is_impure_sequence=False,
            card_taken_from_discard_cannot_be_discarded=False,
        ),
        6,
        10,
        500,
    )
    today = stream_payloads.rule_set_to_pb(played, None)
    old = cards_pb2.RuleSet()
    old.CopyFrom(today)
    old.ClearField("variant_options")
    old.ClearField("jokers_only_group_is_impure_sequence")
    old.ClearField("card_taken_from_discard_cannot_be_discarded")
    assert stream_upcast.rule_set(old, 6) == today


def rule_set_flat_indian() -> None:
    for seats in (2, 3, 4, 5, 6, 8):  # the rulebook's shoes at 2, 3 and 5 seats, Bombay Baazi's
        today = house_rule_set_pb(seats, 5)
        old = cards_pb2.RuleSet()
        old.CopyFrom(today)
        old.ClearField("variant_options")
        assert stream_upcast.rule_set(old, seats) == today
        old_opened = table_opened(old, seats)
        assert stream_upcast.payload(old_opened) == table_opened(today, seats)


def hand_ended_deadwood() -> None:
    hand = gin_knock()
    old = table_pb.HandEnded()
    old.CopyFrom(hand.ended)
    for r, points in zip(old.results, (10, 69), strict=True):  # Indian values: AD 10; 69
        r.arrangement.deadwood_points = points
    assert stream_upcast.hand_payload(old, hand.ctx) == hand.ended


def rpc_declare_drop() -> None:
    wire = IndianWire()
    card = cards_pb2.Card(index=5, face="6S")
    groups = [cards_pb2.CardGroup(cards=[card])]
    declare = wire.request_command(api.DeclareRequest(table_id="t", face_down=card, groups=groups))
    assert declare == indian_pb.Declare(face_down=card, groups=groups)
    assert wire.request_command(api.DropRequest(table_id="t")) == indian_pb.Drop()
    answer = indian_pb.DropAnswer(kind=indian_pb.DROP_KIND_FIRST, points=20)
    response = wire.request_answer(api.DropRequest(), answer)
    assert response == api.DropResponse(kind=table_pb.DROP_KIND_FIRST, points=20)


RULES_UPCAST = ("rummy_rules/upcast.py", "upcast")
BROWSER_UPCAST = ("verify.js", "upcast")
STREAM = "rummy_game/upcast.py"
CASES: dict[str, Case] = {
    "json-class-tag": Case((RULES_UPCAST, BROWSER_UPCAST), json_class_tag),
    "json-money-suffix": Case((RULES_UPCAST, BROWSER_UPCAST), json_money_suffix),
    "json-rule-set-indian": Case((RULES_UPCAST, BROWSER_UPCAST), json_rule_set_indian),
    "bundle-no-deal-shape": Case((("verify.js", "upcastBundle"),), bundle_no_deal_shape),
    "gin-knock-no-melds-named": Case(
        (("rummy_rules/gin/hand.py", "GinKnocked"), ("gin.js", "gin.Knocked")),
        gin_knock_no_melds_named,
    ),
    "stream-indian-types": Case(((STREAM, "TYPE_ALIASES"),), stream_indian_types),
    "rule-set-no-variant": Case(
        (
            (STREAM, "variant_of"),
            (STREAM, "rule_set"),
            (STREAM, "payload"),
            ("rummy_ledger/application/upcast.py", "variant_name"),
        ),
        rule_set_no_variant,
    ),
    "seeds-locked-no-variant": Case(
        ((STREAM, "payload"), ("rummy_dealer/application/upcast.py", "seeds_locked")),
        seeds_locked_no_variant,
    ),
    "rule-set-proto3-zeros": Case(
        ((STREAM, "rule_set"), ("", "IndianWire.upcast_options")), rule_set_proto3_zeros
    ),
    "rule-set-flat-indian": Case(
        ((STREAM, "rule_set"), (STREAM, "payload"), ("", "IndianWire.upcast_options")),
        rule_set_flat_indian,
    ),
    "hand-ended-deadwood": Case(((STREAM, "hand_payload"),), hand_ended_deadwood),
    "rpc-declare-drop": Case(
        (("", "IndianWire.request_command"), ("", "request_answer")), rpc_declare_drop
    ),
}


def test_every_deprecated_path_listed_has_a_case_and_every_case_a_row() -> None:
    assert set(deprecated_rows()) == set(CASES)


@pytest.mark.parametrize("path", sorted(CASES))
def test_the_row_names_the_upcast_its_case_runs(path: str) -> None:
    row = deprecated_rows()[path]
    upcast_cell = row.split(" | ")[4]  # layer, old shape, written until, read as, upcast
    for where, name in CASES[path].named:
        assert where in upcast_cell
        assert re.search(rf"`{re.escape(name)}`", upcast_cell), (path, name)
    may_drop_in = row.rstrip(" |").rsplit(" | ", 1)[1]
    assert re.search(r" (2\.0|v2)\b", may_drop_in), (path, "names no version that may drop it")


@pytest.mark.parametrize("path", sorted(CASES))
def test_a_record_in_the_old_shape_upcasts_to_exactly_what_a_current_build_writes(
    path: str,
) -> None:
    CASES[path].check()


def test_each_named_upcast_exists() -> None:
    assert callable(json_upcast.upcast) and callable(dealer_upcast.seeds_locked)
    assert callable(ledger_upcast.variant_name)
    for name in ("variant_of", "rule_set", "payload", "hand_payload"):
        assert callable(getattr(stream_upcast, name))
    assert isinstance(stream_upcast.TYPE_ALIASES, dict)
    script = (ROOT / "web" / "verify" / "verify.js").read_text(encoding="utf-8")
    assert "function upcast(" in script and "function upcastBundle(" in script
