"""Events and commands survive a trip through JSON exactly, and bad input is refused clearly."""

from __future__ import annotations

import dataclasses
import json

import pytest
from hand_play import T0, table

from rummy_rules import json_form
from rummy_rules.cards import parse_card
from rummy_rules.commands import (
    AbortHand,
    ContributeClientSeed,
    Deal,
    Discard,
    DrawFromDiscardPile,
    DrawFromStock,
    LeaveHand,
    RecordSeedCommitment,
    RecordStakeReserved,
    RecordStockReshuffled,
    StartHand,
    TurnTimeout,
)
from rummy_rules.events import HandDealt, SeatAccount
from rummy_rules.indian import Declare, Drop
from rummy_rules.indian.rules import bombay_baazi
from rummy_rules.shuffle import SeatHand

C = parse_card


def wire(message: object) -> object:
    return json_form.from_dict(json.loads(json.dumps(json_form.to_dict(message))))


def test_cards_travel_as_face_and_copy() -> None:
    assert json_form.card_to_str(C("10S", copy=1)) == "10S:1"
    assert json_form.card_from_str("JK:1") == C("JK", copy=1)
    with pytest.raises(json_form.CodecError):
        json_form.card_from_str("10S")


def test_every_command_round_trips_exactly() -> None:
    card = C("QH", copy=1)
    commands = [
        StartHand(
            hand_id="h-1",
            seats=(SeatAccount(0, "a"), SeatAccount(3, "b")),
            dealer_seat=3,
            rule_set=bombay_baazi(8, 5, 250, points_cap=80),
            at_ms=T0,
        ),
        RecordStakeReserved(seat=3, amount_hundredths=400, at_ms=T0),
        RecordSeedCommitment(commitment="ab" * 32, at_ms=T0),
        ContributeClientSeed(seat=0, seed_hex="", at_ms=T0),
        Deal(
            hands=(SeatHand(0, (card, C("JK"))),),
            wild_cut=None,
            first_open=C("2C"),
            stock=(C("AS", copy=2),),
            at_ms=T0,
        ),
        DrawFromStock(seat=0, turn_no=4, at_ms=T0),
        DrawFromDiscardPile(seat=0, turn_no=4, at_ms=T0),
        Discard(seat=0, turn_no=4, card=card, at_ms=T0),
        Declare(seat=0, turn_no=4, face_down=card, at_ms=T0),
        Drop(seat=0, turn_no=4, at_ms=T0),
        LeaveHand(seat=3, at_ms=T0),
        TurnTimeout(turn_no=0, at_ms=T0),
        RecordStockReshuffled(reshuffle_no=2, stock=(card,), at_ms=T0),
        AbortHand(reason="stake rejected", at_ms=T0),
    ]
    for command in commands:
        assert wire(command) == command


def test_the_events_of_a_whole_hand_round_trip_exactly() -> None:
    t = table()
    t.start([0, 1], 1, {0: "0f"})
    t.run(Drop(seat=0, turn_no=1, at_ms=t.tick()))
    kinds = {type(e).__name__ for e in t.events}
    assert {"HandStarted", "SeedsLocked", "HandDealt", "PlayerDropped", "HandEnded"} <= kinds
    for event in t.events:
        assert wire(event) == event


def test_a_redacted_event_round_trips_too() -> None:
    t = table()
    t.start([0, 1], 1, {})
    dealt = next(e for e in t.events if isinstance(e, HandDealt))
    redacted = dataclasses.replace(dealt, stock=())
    assert wire(redacted) == redacted


@pytest.mark.parametrize(
    ("data", "complaint"),
    [
        ({"type": "table.Teleport"}, "unknown message type"),
        ({"type": "table.DrawFromStock", "seat": 0, "turn_no": 1}, "missing field 'at_ms'"),
        ({"type": "table.LeaveHand", "seat": 0, "at_ms": 1, "card": "AS:0"}, "unknown fields"),
        ({"type": "table.LeaveHand", "seat": "0", "at_ms": 1}, "expected an integer"),
        (
            {"type": "table.Discard", "seat": 0, "turn_no": 1, "card": "ZZ:0", "at_ms": 1},
            "not a card",
        ),
        ({"seat": 0}, "'type'"),
    ],
)
def test_malformed_messages_are_refused_with_a_reason(
    data: dict[str, object], complaint: str
) -> None:
    with pytest.raises(json_form.CodecError, match=complaint):
        json_form.from_dict(data)
