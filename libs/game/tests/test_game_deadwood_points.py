"""What a seat's deadwood is worth in a HandEnded payload (``Arrangement.deadwood_points``) is said
by the variant that scored the hand (``Variant.deadwood_points``), never by the table's codec:
a gin knock counts its aces 1 (``docs/rules/gin.md#deck``), a Rummy 500 round counts an ace left
in hand 15 (``docs/rules/rummy500.md#scores``), Indian points counts an ace 10 and a joker 0
(``docs/rules/cards.md#card-points``), each worked by hand below. A record a table wrote before
(Indian values for every variant) reads as its variant counts it (``rummy_game.upcast``), and
any other recorded value is kept for replay to judge."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest
from google.protobuf.message import Message

from rummy.table.v1 import events_pb2 as pb
from rummy_game import stream_codec, upcast
from rummy_game.hand_payloads import hand_payloads
from rummy_game.wire import HandContext
from rummy_rules import registry
from rummy_rules.cards import Card, parse_card, parse_cards
from rummy_rules.commands import (
    Command,
    ContributeClientSeed,
    Deal,
    Discard,
    DrawFromStock,
    RecordSeedCommitment,
    RecordStakeReserved,
    StartHand,
)
from rummy_rules.events import HandEnded, HandStarted, SeatAccount, SeatResult
from rummy_rules.gin.hand import GinKnock, GinPassUpcard
from rummy_rules.gin.rules import gin_rule_set
from rummy_rules.rules import RuleSet
from rummy_rules.rummy500.play import Rummy500Meld
from rummy_rules.rummy500.rules import rummy500_rule_set
from rummy_rules.settlement import settle
from rummy_rules.shuffle import SeatHand
from rummy_rules.variant import Variant

T0 = 1_700_000_000_000
#: A move of the script: (the hand's state, its seat on turn, the turn number) -> the command.
Move = Callable[[Any, int, int], Command]


def played(
    rule_set: RuleSet,
    dealer: int,
    hands: dict[int, str],
    upcard: str,
    stock: str,
    moves: Sequence[Move],
    turn: Callable[[Any], tuple[int, int]],
) -> tuple[HandContext, list[Message]]:
    """A hand of ``rule_set`` dealt ``hands`` (seat -> cards), ``upcard`` and ``stock`` (drawn
    from the left; the rest of the shoe follows it) and played by ``moves``, as the table writes
    it (``hand_payloads``): the hand's context and every payload after its HandStarted.
    ``turn``: the seat on turn and the turn number of a state of the variant."""
    variant: Variant[Any] = registry.lookup(rule_set.variant)
    seats = tuple(sorted(hands))
    (started,) = variant.decide(
        variant.initial_state(),
        StartHand(
            hand_id="h-dw",
            seats=tuple(SeatAccount(s, f"acct-{s}") for s in seats),
            dealer_seat=dealer,
            rule_set=rule_set,
            at_ms=T0,
        ),
    )
    assert isinstance(started, HandStarted)
    ctx = stream_codec.hand_context(stream_codec.hand_started_to_pb(started, 1))
    state = variant.apply(variant.initial_state(), started)
    dealt = {s: parse_cards(c) for s, c in hands.items()}
    top = [parse_card(upcard), *parse_cards(stock)]
    used = {c for cards in dealt.values() for c in cards} | set(top)
    rest = [c for c in rule_set.shoe.cards if c not in used]
    setup: list[Command] = [
        *(RecordStakeReserved(seat=s, amount_hundredths=0, at_ms=T0) for s in seats),
        RecordSeedCommitment(commitment="ab" * 32, at_ms=T0),
        *(ContributeClientSeed(seat=s, seed_hex="", at_ms=T0) for s in seats),
        Deal(
            hands=tuple(SeatHand(s, dealt[s]) for s in seats),
            wild_cut=None,
            first_open=top[0],
            stock=(*top[1:], *rest),
            at_ms=T0,
        ),
    ]
    out = hand_payloads(variant, state, ctx, setup)
    state = out[-1][1]
    for move in moves:
        seat, turn_no = turn(state)
        step = hand_payloads(variant, state, ctx, [move(state, seat, turn_no)])
        out += step
        state = step[-1][1]
    return ctx, [payload for payload, _ in out]


def ended_of(payloads: list[Message]) -> pb.HandEnded:
    (ended,) = [p for p in payloads if isinstance(p, pb.HandEnded)]
    assert isinstance(ended, pb.HandEnded)
    return ended


def by_seat(ended: pb.HandEnded) -> dict[int, pb.SeatResult]:
    return {r.seat: r for r in ended.results}


# -- gin: a knock, the knocker's ace 1 and the defender's aces 1 --------------------------------

KNOCKER = "AC 2C 3C 4D 4H 4S 7S 8S 9S AD"
#: Nothing of it lays off on A-2-3C, the 4s or 7-8-9S (no 4C, 6S or 10S).
DEFENDER = "AH AS KC KD QS JH 9H 5D 6D 7D"


def gin_knock(oklahoma: bool) -> tuple[HandContext, list[Message]]:
    """Seat 0 (the non-dealer) and then the dealer pass the upcard QH; seat 0 draws 5H, lays it
    face down and knocks with AD loose."""

    def gin_turn(state: Any) -> tuple[int, int]:
        return state.play.turn_seat, state.play.turn_no

    return played(
        gin_rule_set(oklahoma=oklahoma),
        dealer=1,
        hands={0: KNOCKER, 1: DEFENDER},
        upcard="QH",
        stock="5H",
        moves=[
            lambda state, seat, turn_no: GinPassUpcard(seat=seat, turn_no=turn_no, at_ms=T0),
            lambda state, seat, turn_no: GinPassUpcard(seat=seat, turn_no=turn_no, at_ms=T0),
            lambda state, seat, turn_no: DrawFromStock(seat=seat, turn_no=turn_no, at_ms=T0),
            lambda state, seat, turn_no: GinKnock(
                seat=seat, turn_no=turn_no, face_down=parse_card("5H"), at_ms=T0
            ),
        ],
        turn=gin_turn,
    )


@pytest.mark.parametrize("oklahoma", [False, True], ids=["gin", "oklahoma"])
def test_a_gin_knocks_deadwood_is_written_in_gins_card_values(oklahoma: bool) -> None:
    _, payloads = gin_knock(oklahoma)
    seats = by_seat(ended_of(payloads))
    knocker, defender = seats[0], seats[1]
    assert (knocker.outcome, defender.outcome) == ("knock", "lost")
    # the knocker: AD alone, 1 (Indian values would say 10)
    assert knocker.arrangement.deadwood_points == 1
    # the defender: 5-6-7D melded; AH 1 + AS 1 + KC, KD, QS, JH 10 each + 9H 9 = 51 (Indian 69)
    assert defender.arrangement.deadwood_points == 51
    # the hand's score is the difference of the two, 51 - 1 (QH: Oklahoma's limit 10, no double)
    assert defender.points == 50


# -- Rummy 500: the aces left in hand count 15 each -----------------------------------------------


def rummy500_round(low_ace_one: bool) -> tuple[HandContext, list[Message]]:
    """Seat 1 (after the dealer) draws 10C, melds 7-8-9-10C and the three 4s and goes out by
    discarding KH; seat 0 is left holding its seven cards."""

    def r500_turn(state: Any) -> tuple[int, int]:
        return state.play.turn_seat, state.play.turn_no

    return played(
        rummy500_rule_set(2, low_ace_one=low_ace_one),
        dealer=0,
        hands={0: "AH AS KC QD 5D 6H 2S", 1: "7C 8C 9C 4D 4H 4S KH"},
        upcard="3D",
        stock="10C",
        moves=[
            lambda state, seat, turn_no: DrawFromStock(seat=seat, turn_no=turn_no, at_ms=T0),
            lambda state, seat, turn_no: Rummy500Meld(
                seat=seat,
                turn_no=turn_no,
                groups=(parse_cards("7C 8C 9C 10C"), parse_cards("4D 4H 4S")),
                at_ms=T0,
            ),
            lambda state, seat, turn_no: Discard(
                seat=seat, turn_no=turn_no, card=parse_card("KH"), at_ms=T0
            ),
        ],
        turn=r500_turn,
    )


@pytest.mark.parametrize("low_ace_one", [False, True], ids=["house", "low-ace-one"])
def test_a_rummy500_rounds_cards_in_hand_are_written_in_its_values(low_ace_one: bool) -> None:
    _, payloads = rummy500_round(low_ace_one)
    seats = by_seat(ended_of(payloads))
    out, held = seats[1], seats[0]
    assert (out.outcome, held.outcome) == ("went_out", "scored")
    assert out.arrangement.deadwood_points == 0 and not out.arrangement.deadwood
    # AH 15 + AS 15 + KC 10 + QD 10 + 5D 5 + 6H 6 + 2S 2 = 63, the option or not (it counts
    # only a melded ace 1); Indian values would say 53
    assert held.arrangement.deadwood_points == 63
    # the seat's score agrees: nothing on the table, 63 in hand; the other 7+8+9+10 + 3 x 4
    assert (held.score, out.score) == (-63, 46)


# -- Indian points: unchanged ---------------------------------------------------------------------


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
    payload = stream_codec.hand_ended_to_pb(ended, ctx, wild_cut=parse_card("7C"))
    assert by_seat(payload)[1].arrangement.deadwood_points == 25
    # a printed joker cut: no rank is wild, the 7H counts 7
    payload = stream_codec.hand_ended_to_pb(ended, ctx, wild_cut=Card(None, None))
    assert by_seat(payload)[1].arrangement.deadwood_points == 32


# -- records of the writer before: Indian values for every variant ---------------------------------


def recorded_as(ended: pb.HandEnded, points: dict[int, int]) -> pb.HandEnded:
    old = pb.HandEnded()
    old.CopyFrom(ended)
    for r in old.results:
        r.arrangement.deadwood_points = points.get(r.seat, r.arrangement.deadwood_points)
    return old


def test_a_gin_record_of_the_writer_before_reads_as_gin_counts_its_deadwood() -> None:
    ctx, payloads = gin_knock(oklahoma=False)
    ended = ended_of(payloads)
    old = recorded_as(ended, {0: 10, 1: 69})  # AD 10; 69 as worked above
    read = upcast.hand_payload(old, ctx)
    assert read == ended and old.results[1].arrangement.deadwood_points == 69, "not in place"
    assert upcast.hand_payload(ended, ctx) is ended  # today's record: as it is


def test_a_rummy500_record_of_the_writer_before_reads_as_rummy500_counts_it() -> None:
    ctx, payloads = rummy500_round(low_ace_one=False)
    ended = ended_of(payloads)
    assert upcast.hand_payload(recorded_as(ended, {0: 53}), ctx) == ended


def test_a_recorded_deadwood_value_no_writer_gave_is_kept_for_replay_to_judge() -> None:
    ctx, payloads = gin_knock(oklahoma=False)
    tampered = recorded_as(ended_of(payloads), {1: 50})
    assert upcast.hand_payload(tampered, ctx) is tampered
