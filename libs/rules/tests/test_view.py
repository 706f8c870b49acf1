"""A player's view and the redacted events: own cards, the pile and counts; never another seat's
cards or the stock order until the hand ends (docs/rules/hand-flow.md#views,
docs/rules/promises.md#players-see-only-their-own)."""

from __future__ import annotations

from hand_play import Table, table

from rummy_rules.commands import Discard, DrawFromStock
from rummy_rules.events import HandDealt, HandEnded, StockReshuffled
from rummy_rules.indian import INDIAN_POINTS, Drop


def dealt_table() -> Table:
    t = table(seats=6)
    t.start([0, 2, 4], 4, {0: "aa", 2: "bb", 4: "cc"})
    return t


def test_a_seat_sees_its_own_cards_the_pile_and_only_counts_of_the_rest() -> None:
    t = dealt_table()
    t.run(DrawFromStock(seat=0, turn_no=1, at_ms=t.tick()))
    view = INDIAN_POINTS.view(t.state, 2)
    me = t.state.seat_state(2)
    assert me is not None and view.cards == me.cards
    assert view.discard_pile == t.state.discard_pile
    assert [(s.seat, s.card_count, s.status) for s in view.seats] == [
        (0, 14, "playing"),
        (2, 13, "playing"),
        (4, 13, "playing"),
    ]
    assert view.stock_count == len(t.state.stock) == 106 - 3 * 13 - 2 - 1
    assert view.turn_seat == 0 and view.turn_no == 1 and view.has_drawn
    assert view.wild_cut == t.state.wild_cut and view.wild_rank == t.state.wild_rank
    shown = set(view.cards) | set(view.discard_pile) | {view.wild_cut}
    for other in (0, 4):
        assert not shown & set(t.state.seat_state(other).cards)  # type: ignore[union-attr]
    assert not shown & set(t.state.stock)
    assert view.result is None


def test_a_spectator_sees_no_cards_in_hand() -> None:
    t = dealt_table()
    view = INDIAN_POINTS.view(t.state, -1)
    assert view.cards == () and view.stock_count == len(t.state.stock)


def test_before_the_deal_every_seat_is_waiting_and_no_turn_is_on() -> None:
    t = table()
    t.start([0, 1], 1, {})
    state = INDIAN_POINTS.fold(t.events[:-2])  # up to the seeds being locked
    view = INDIAN_POINTS.view(state, 0)
    assert view.phase == "awaiting_deal" and view.turn_seat is None and view.cards == ()
    assert {s.status for s in view.seats} == {"waiting"}


def test_at_the_end_every_seat_cards_and_scored_arrangement_are_public() -> None:
    t = dealt_table()
    t.run(Drop(seat=0, turn_no=1, at_ms=t.tick()))
    t.run(DrawFromStock(seat=2, turn_no=2, at_ms=t.tick()))
    t.run(Discard(seat=2, turn_no=2, card=t.state.drawn_card, at_ms=t.tick()))  # type: ignore[arg-type]
    t.run(Drop(seat=4, turn_no=3, at_ms=t.tick()))
    view = INDIAN_POINTS.view(t.state, 0)
    assert isinstance(view.result, HandEnded)
    for r in view.result.results:
        assert r.cards == t.state.seat_state(r.seat).cards  # type: ignore[union-attr]
    assert [(s.seat, s.status) for s in view.seats] == [(0, "dropped"), (2, "won"), (4, "dropped")]


def test_the_deal_each_seat_receives_holds_only_its_own_hand_and_no_stock() -> None:
    t = dealt_table()
    dealt = next(e for e in t.events if isinstance(e, HandDealt))
    for seat in (0, 2, 4):
        mine = INDIAN_POINTS.redact(dealt, seat)
        assert isinstance(mine, HandDealt)
        assert {h.seat: len(h.cards) for h in mine.hands} == {
            s: (13 if s == seat else 0) for s in (0, 2, 4)
        }
        assert mine.stock == () and mine.stock_count == len(dealt.stock)
        assert mine.first_open == dealt.first_open and mine.wild_cut == dealt.wild_cut


def test_a_reshuffled_stock_is_sent_as_a_count_only() -> None:
    t = dealt_table()
    e = StockReshuffled(reshuffle_no=1, stock=t.state.stock[:3], stock_count=3)
    assert INDIAN_POINTS.redact(e, 0) == StockReshuffled(reshuffle_no=1, stock=(), stock_count=3)
