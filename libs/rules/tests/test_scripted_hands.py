"""Scripted hands from the start to the settlement, one per ending, on a shuffled shoe (fixed
seeds) with the hands that matter placed by the test. Every expected figure is worked out here
from the rules (docs/rules/cards.md#card-points, docs/rules/scoring.md#outcomes,
docs/rules/money.md#settlement): points, then cost = points x point value, commission =
floor(total x rate), winner = total less commission.

Table: Bombay Baazi, point value 100 hundredths (1 House Token a point), commission 10%.
"""

from __future__ import annotations

import pytest
from hand_play import Table, fixed_deal, table

from rummy_rules.cards import Card, parse_card, parse_cards
from rummy_rules.commands import Discard, DrawFromDiscardPile, DrawFromStock, LeaveHand, TurnTimeout
from rummy_rules.errors import RuleViolation
from rummy_rules.events import (
    CardDiscarded,
    CardDrawn,
    DrawSource,
    HandEnded,
    StockExhausted,
    StockReshuffled,
    TurnTimedOut,
)
from rummy_rules.indian import DeclarationRejected, Declare, Declared, Drop, DropKind, PlayerDropped
from rummy_rules.shuffle import reshuffle

C = parse_card

# Wild rank 5 (cut 5D). Seat hands used below, faces distinct across all of them.
READY_12_PLUS_9D = parse_cards("AH 2H 3H 4H 7S 8S 9S 10C JC QC KD KS 9D")
# AH-4H pure, 7S-9S pure, 10C-QC pure, KD KS waiting, 9D loose: drawing KH makes the set
# KD KS KH and 9D goes face down -> a valid show.
HALF_DONE = parse_cards("4C 5C 6C 9H 10H JK 2D 3S 7D 8C QS QD AD")
# 4C 5C 6C: pure (the wild 5C sits in its natural place). The printed joker makes the second
# sequence, best as KD in QD JK AD (Q-K-A, ace high): loose 9H 10H 2D 3S 7D 8C QS
# = 9+10+2+3+7+8+10 = 49. (As 9H 10H JK the loose cards would be 2D 3S 7D 8C QS QD AD = 50;
# with A-2-3 of diamonds, 57; the 5C as a joker leaves no pure sequence: every card counts.)
NOTHING = parse_cards("2S 4S 6S JS 10S 3D 7H 9C JD QH AS 6D 8D")
# No pure sequence (spades A,2,4,6,10,J; diamonds 3,6,8,J), no joker: every card counts:
# 2+4+6+10+10+3+7+9+10+10+10+6+8 = 95.


def start(
    t: Table,
    seats: list[int],
    dealer: int,
    hands: dict[int, tuple[Card, ...]],
    stock_top: list[Card],
) -> None:
    t.start(
        seats,
        dealer,
        {s: f"{s:02x}" for s in seats},
        rig=lambda d: fixed_deal(
            d, {k: list(v) for k, v in hands.items()}, C("5D"), C("JH"), stock_top
        ),
    )


def money(t: Table) -> dict[str, int]:
    result = t.state.result
    assert isinstance(result, HandEnded)
    s = result.settlement
    assert sum(line.amount_hundredths for line in s.lines) + s.commission_hundredths == 0
    out = {f"seat{line.seat}": line.amount_hundredths for line in s.lines}
    out["house"] = s.commission_hundredths
    return out


def points(t: Table) -> dict[int, tuple[str, int]]:
    result = t.state.result
    assert isinstance(result, HandEnded)
    return {r.seat: (r.outcome, r.points) for r in result.results}


def test_a_valid_declare_ends_the_hand_and_the_others_pay_their_best_arrangement() -> None:
    t = table()
    start(
        t,
        [0, 1, 2],
        dealer=2,
        hands={0: READY_12_PLUS_9D, 1: HALF_DONE, 2: NOTHING},
        stock_top=[C("KH")],
    )
    assert t.state.turn_seat == 0  # the seat after the dealer plays first
    drawn = t.run(DrawFromStock(seat=0, turn_no=1, at_ms=t.tick()))
    assert drawn == (CardDrawn(seat=0, turn_no=1, source=DrawSource.STOCK, card=C("KH")),)
    events = t.run(Declare(seat=0, turn_no=1, face_down=C("9D"), at_ms=t.tick()))
    assert isinstance(events[0], Declared) and isinstance(events[-1], HandEnded)
    assert points(t) == {0: ("won", 0), 1: ("counted", 49), 2: ("counted", 95)}
    # costs 4900 + 9500 = 14400; commission floor(14400 x 10%) = 1440; winner 14400 - 1440.
    assert money(t) == {"seat0": 12960, "seat1": -4900, "seat2": -9500, "house": 1440}
    result = t.state.result
    assert isinstance(result, HandEnded)
    half_done = next(r for r in result.results if r.seat == 1)
    assert sorted(g.kind for g in half_done.melds) == ["impure_sequence", "pure_sequence"]
    assert set(half_done.deadwood) == set(parse_cards("9H 10H 2D 3S 7D 8C QS"))
    assert t.state.phase.value == "ended"


def test_a_wrong_declare_costs_80_and_play_goes_on_to_a_later_valid_declare() -> None:
    t = table()
    start(
        t,
        [0, 1, 2],
        dealer=2,
        hands={0: NOTHING, 1: HALF_DONE, 2: READY_12_PLUS_9D},
        stock_top=[C("2C"), C("KH")],
    )
    t.run(DrawFromStock(seat=0, turn_no=1, at_ms=t.tick()))
    events = t.run(Declare(seat=0, turn_no=1, face_down=C("2C"), at_ms=t.tick()))
    assert events[0] == DeclarationRejected(
        seat=0, turn_no=1, face_down=C("2C"), shown=NOTHING, points=80
    )
    assert t.state.turn_seat == 1 and t.state.turn_no == 2  # play goes on without seat 0
    t.run(DrawFromStock(seat=1, turn_no=2, at_ms=t.tick()))
    t.run(Discard(seat=1, turn_no=2, card=C("KH"), at_ms=t.tick()))
    picked = t.run(DrawFromDiscardPile(seat=2, turn_no=3, at_ms=t.tick()))
    assert picked[0] == CardDrawn(seat=2, turn_no=3, source=DrawSource.DISCARD_PILE, card=C("KH"))
    with pytest.raises(RuleViolation):  # the card taken from the pile cannot go face down
        t.run(Declare(seat=2, turn_no=3, face_down=C("KH"), at_ms=t.tick()))
    t.run(Declare(seat=2, turn_no=3, face_down=C("9D"), at_ms=t.tick()))
    assert points(t) == {0: ("wrong_declare", 80), 1: ("counted", 49), 2: ("won", 0)}
    # 8000 + 4900 = 12900; commission 1290; winner 11610.
    assert money(t) == {"seat0": -8000, "seat1": -4900, "seat2": 11610, "house": 1290}


def test_when_everyone_else_drops_or_leaves_the_last_seat_wins_without_declaring() -> None:
    t = table()
    t.start([0, 1, 2, 3], 3, {})
    t.run(Drop(seat=0, turn_no=1, at_ms=t.tick()))  # before any draw: first drop
    for seat, turn in ((1, 2), (2, 3), (3, 4)):
        t.run(DrawFromStock(seat=seat, turn_no=turn, at_ms=t.tick()))
        card = t.state.drawn_card
        assert card is not None
        t.run(Discard(seat=seat, turn_no=turn, card=card, at_ms=t.tick()))
    assert t.state.turn_seat == 1  # seat 0 is out and skipped
    t.run(Drop(seat=1, turn_no=5, at_ms=t.tick()))  # after its first draw: middle drop
    assert t.state.turn_seat == 2
    events = t.run(LeaveHand(seat=3, at_ms=t.tick()))  # leaves while seat 2 is on turn
    assert events[0] == PlayerDropped(seat=3, turn_no=6, kind=DropKind.LEAVE, points=40)
    assert isinstance(events[-1], HandEnded) and events[-1].winner_seat == 2
    assert points(t) == {
        0: ("first_drop", 20),
        1: ("middle_drop", 40),
        2: ("won", 0),
        3: ("left", 40),
    }
    # 2000 + 4000 + 4000 = 10000; commission 1000; winner 9000.
    assert money(t) == {
        "seat0": -2000,
        "seat1": -4000,
        "seat2": 9000,
        "seat3": -4000,
        "house": 1000,
    }


def test_a_seat_that_misses_three_turns_in_a_row_is_played_for_then_dropped_at_40() -> None:
    t = table()
    t.start([0, 1], 1, {0: "aa"})
    for turn in (1, 3, 5):
        t.run(DrawFromStock(seat=0, turn_no=turn, at_ms=t.tick()))
        card = t.state.drawn_card
        assert card is not None
        t.run(Discard(seat=0, turn_no=turn, card=card, at_ms=t.tick()))
        assert t.run(TurnTimeout(turn_no=turn, at_ms=t.tick())) == ()  # stale: seat 0 acted
        top = t.state.stock[0]
        events = t.run(TurnTimeout(turn_no=turn + 1, at_ms=t.tick(30_000)))
        miss = (turn + 1) // 2
        assert events[0] == TurnTimedOut(seat=1, turn_no=turn + 1, misses_in_a_row=miss)
        if miss < 3:  # played for: draw from the stock, discard that card
            assert events[1] == CardDrawn(
                seat=1, turn_no=turn + 1, source=DrawSource.STOCK, card=top
            )
            assert events[2] == CardDiscarded(seat=1, turn_no=turn + 1, card=top)
    assert events[1] == PlayerDropped(seat=1, turn_no=6, kind=DropKind.TIMEOUT, points=40)
    assert points(t) == {0: ("won", 0), 1: ("timed_out", 40)}
    # 4000; commission 400; winner 3600.
    assert money(t) == {"seat0": 3600, "seat1": -4000, "house": 400}


def test_an_exhausted_stock_is_the_discard_pile_but_its_top_reshuffled_from_the_seed() -> None:
    t = table(point_value_hundredths=25, commission_bps=1500)
    t.start([0, 1], 0, {0: "01", 1: "02"})
    stock_size = 106 - 2 * 13 - 2  # two decks + two jokers, less the hands, cut and open card
    assert len(t.state.stock) == stock_size
    exhausted: StockExhausted | None = None
    turn = 0
    while exhausted is None:
        turn += 1
        seat = t.state.turn_seat
        assert seat is not None
        drawn = t.run(DrawFromStock(seat=seat, turn_no=turn, at_ms=t.tick()))
        card = t.state.drawn_card
        assert card is not None
        exhausted = next((e for e in drawn if isinstance(e, StockExhausted)), None)
        pile_top = t.state.discard_pile[-1]
        t.run(Discard(seat=seat, turn_no=turn, card=card, at_ms=t.tick()))
    assert turn == stock_size
    # Before the last draw the pile held the open card and 77 discards; all but the top go back.
    assert len(exhausted.cards) == stock_size - 1 and exhausted.reshuffle_no == 1
    assert t.state.discard_pile == (pile_top, card)
    with pytest.raises(RuleViolation):
        t.run(DrawFromStock(seat=t.state.turn_seat or 0, turn_no=turn + 1, at_ms=t.tick()))
    t.reshuffle_if_needed((exhausted,))
    expected = reshuffle(t.inputs(), t.rule_set.shoe, exhausted.cards, 1)
    assert isinstance(t.events[-1], StockReshuffled) and t.state.stock == expected
    t.run(DrawFromStock(seat=t.state.turn_seat or 0, turn_no=turn + 1, at_ms=t.tick()))
    assert t.state.drawn_card == expected[0]
    loser = t.state.turn_seat
    t.run(Discard(seat=loser or 0, turn_no=turn + 1, card=expected[0], at_ms=t.tick()))
    t.run(Drop(seat=1 - (loser or 0), turn_no=turn + 2, at_ms=t.tick()))
    # a middle drop: 40 x 25 = 1000; commission floor(1000 x 15%) = 150; winner 850.
    assert money(t)["house"] == 150
    assert sorted(v for k, v in money(t).items() if k != "house") == [-1000, 850]
