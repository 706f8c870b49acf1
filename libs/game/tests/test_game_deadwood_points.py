"""What a seat's deadwood is worth in a HandEnded payload (``Arrangement.deadwood_points``) is said
by the variant that scored the hand (``Variant.deadwood_points``), never by the table's codec:
a gin knock counts its aces 1 (``docs/rules/gin.md#deck``), a Rummy 500 round counts an ace left
in hand 15 (``docs/rules/rummy500.md#scores``), Indian points counts an ace 10 and a joker 0
(``docs/rules/cards.md#card-points``), each worked by hand below (the hands:
``rummy_testing.scripted_hands``). A record a table wrote before (Indian values for every
variant) reads as its variant counts it (``rummy_game.upcast.hand_payload``), and any other
recorded value is kept for replay to judge."""

from __future__ import annotations

import pytest

from rummy.table.v1 import events_pb2 as pb
from rummy_game import stream_payloads, upcast
from rummy_game.variant_wire import HandContext
from rummy_rules import registry
from rummy_rules.cards import Card, parse_card, parse_cards
from rummy_rules.events import HandEnded, SeatResult
from rummy_rules.settlement import settle
from rummy_testing.scripted_hands import T0, gin_knock, rummy500_round


def by_seat(ended: pb.HandEnded) -> dict[int, pb.SeatResult]:
    return {r.seat: r for r in ended.results}


@pytest.mark.parametrize("oklahoma", [False, True], ids=["gin", "oklahoma"])
def test_a_gin_knocks_deadwood_is_written_in_gins_card_values(oklahoma: bool) -> None:
    seats = by_seat(gin_knock(oklahoma).ended)
    knocker, defender = seats[0], seats[1]
    assert (knocker.outcome, defender.outcome) == ("knock", "lost")
    # the knocker: AD alone, 1 (Indian values would say 10)
    assert knocker.arrangement.deadwood_points == 1
    # the defender: 5-6-7D melded; AH 1 + AS 1 + KC, KD, QS, JH 10 each + 9H 9 = 51 (Indian 69)
    assert defender.arrangement.deadwood_points == 51
    # the hand's score is the difference of the two, 51 - 1 (QH: Oklahoma's limit 10, no double)
    assert defender.points == 50


@pytest.mark.parametrize("low_ace_one", [False, True], ids=["house", "low-ace-one"])
def test_a_rummy500_rounds_cards_in_hand_are_written_in_its_values(low_ace_one: bool) -> None:
    seats = by_seat(rummy500_round(low_ace_one).ended)
    out, held = seats[1], seats[0]
    assert (out.outcome, held.outcome) == ("went_out", "scored")
    assert out.arrangement.deadwood_points == 0 and not out.arrangement.deadwood
    # AH 15 + AS 15 + KC 10 + QD 10 + 5D 5 + 6H 6 + 2S 2 = 63, the option or not (it counts
    # only a melded ace 1); Indian values would say 53
    assert held.arrangement.deadwood_points == 63
    # the seat's score agrees: nothing on the table, 63 in hand; the other 7+8+9+10 + 3 x 4
    assert (held.score, out.score) == (-63, 46)


def test_an_indian_hands_deadwood_counts_an_ace_10_and_jokers_0_as_before() -> None:
    rules = registry.lookup("indian-points").house_rule_set(2, 10, 0)
    ctx = HandContext("h-in", 1, rules, {0: "acct-0", 1: "acct-1"}, 0)
    deadwood = parse_cards("AS 7H JK KD 5C")
    results = (
        SeatResult(0, "acct-0", "won", 0, (), (), ()),
        SeatResult(1, "acct-1", "counted", 25, deadwood, (), deadwood),
    )
    ended = HandEnded(
        winner_seat=0, results=results, settlement=settle(rules, 0, {0: 0, 1: 25}), at_ms=T0
    )
    # the cut 7C makes the 7s wild: AS 10 + 7H 0 + JK 0 + KD 10 + 5C 5 = 25
    payload = stream_payloads.hand_ended_to_pb(ended, ctx, wild_cut=parse_card("7C"))
    assert by_seat(payload)[1].arrangement.deadwood_points == 25
    # a printed joker cut: no rank is wild, the 7H counts 7
    payload = stream_payloads.hand_ended_to_pb(ended, ctx, wild_cut=Card(None, None))
    assert by_seat(payload)[1].arrangement.deadwood_points == 32


# -- records of the writer before: Indian values for every variant ---------------------------------


def recorded_as(ended: pb.HandEnded, points: dict[int, int]) -> pb.HandEnded:
    """A copy of ``ended`` whose seats' deadwood points are ``points`` (seat -> points)."""
    old = pb.HandEnded()
    old.CopyFrom(ended)
    for r in old.results:
        r.arrangement.deadwood_points = points.get(r.seat, r.arrangement.deadwood_points)
    return old


def test_a_gin_record_of_the_writer_before_reads_as_gin_counts_its_deadwood() -> None:
    hand = gin_knock()
    old = recorded_as(hand.ended, {0: 10, 1: 69})  # AD 10; 69 as worked above
    assert upcast.hand_payload(old, hand.ctx) == hand.ended
    assert old.results[1].arrangement.deadwood_points == 69, "the record is not changed"
    assert upcast.hand_payload(hand.ended, hand.ctx) is hand.ended  # today's: as it is


def test_a_rummy500_record_of_the_writer_before_reads_as_rummy500_counts_it() -> None:
    hand = rummy500_round()
    assert upcast.hand_payload(recorded_as(hand.ended, {0: 53}), hand.ctx) == hand.ended


def test_a_recorded_deadwood_value_no_writer_gave_is_kept_for_replay_to_judge() -> None:
    hand = gin_knock()
    tampered = recorded_as(hand.ended, {1: 50})
    assert upcast.hand_payload(tampered, hand.ctx) is tampered
