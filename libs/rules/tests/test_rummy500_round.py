"""Rummy 500's round, rule by rule (docs/rules/rummy500.md), through the round's state machine
(``rummy_rules.rummy500.play``) and the variant interface (``RUMMY500``)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from rummy500_rounds import Round, cards, table

from rummy_rules.cards import Card
from rummy_rules.commands import Discard, DrawFromStock, LeaveHand, TurnTimeout
from rummy_rules.deck import Shoe
from rummy_rules.errors import ErrorCode, RuleViolation
from rummy_rules.events import CardDiscarded, CardDrawn, HandDealt, HandEnded, TurnStarted
from rummy_rules.formats.messages import deal_result
from rummy_rules.rules import RuleSetError
from rummy_rules.rummy500 import play
from rummy_rules.rummy500.melds import TableMeld, group_kind
from rummy_rules.rummy500.play import (
    Rummy500GoOut,
    Rummy500LaidOff,
    Rummy500LayOff,
    Rummy500LayoffTarget,
    Rummy500Meld,
    Rummy500Melded,
    Rummy500PileTaken,
    Rummy500RoundEnded,
    Rummy500TakeFromPile,
    Rummy500TookNothing,
)
from rummy_rules.rummy500.rules import ONE_DECK, TWO_DECKS, rummy500_rule_set
from rummy_rules.rummy500.variant import RUMMY500


def run(state: play.Rummy500Play, command: object) -> tuple[play.Rummy500Play, tuple[Any, ...]]:
    events = play.decide(state, command)  # type: ignore[arg-type]
    return play.fold(events, state), events


def drawn(state: play.Rummy500Play) -> play.Rummy500Play:
    """``state`` with its seat on turn past the draw."""
    return replace(state, phase=play.Phase.PLAY)


# -- the deal --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("seats", "shoe"), [(2, ONE_DECK), (4, ONE_DECK), (5, TWO_DECKS), (8, TWO_DECKS)]
)
def test_one_deck_serves_two_to_four_seats_and_two_decks_five_to_eight(
    seats: int, shoe: Shoe
) -> None:
    assert rummy500_rule_set(seats).shoe == shoe


@pytest.mark.parametrize(("seats", "ok"), [(3, True), (4, False), (5, True), (7, True), (8, False)])
def test_thirteen_cards_are_dealt_only_where_twelve_stock_cards_are_left(
    seats: int, ok: bool
) -> None:
    if ok:
        assert rummy500_rule_set(seats, hand_size=13).hand_size == 13
    else:
        with pytest.raises(RuleSetError):
            rummy500_rule_set(seats, hand_size=13)


def test_a_seeded_deal_gives_seven_cards_each_an_upcard_and_the_seat_after_the_dealer_starts() -> (
    None
):
    r = Round(seats=3, dealer=1)
    r.deal_seeded()
    dealt = next(e for e in r.events if isinstance(e, HandDealt))
    assert all(len(h.cards) == 7 for h in dealt.hands)
    assert r.play.pile == (dealt.first_open,)
    assert len(r.play.stock) == 52 - 21 - 1
    assert r.play.turn_seat == 2 and isinstance(r.events[-1], TurnStarted)


# -- drawing and digging ---------------------------------------------------------------------------


def test_a_draw_from_the_stock_is_hidden_from_the_other_seats() -> None:
    r = Round(seats=3, dealer=2)
    r.deal_seeded()
    (e,) = r.run(DrawFromStock(seat=0, turn_no=1, at_ms=r.now))
    assert isinstance(e, CardDrawn) and e.card is not None
    hidden = RUMMY500.redact(e, 1)
    assert isinstance(hidden, CardDrawn) and hidden.card is None
    assert RUMMY500.redact(e, 0) == e


def test_a_dig_takes_every_card_above_the_deepest_and_melds_the_deepest_in_one_command() -> None:
    s = table(["8D 9D 2S", "3C 4C 5C"], pile="9C 4H 7D 6S 2D")
    s2, events = run(
        s, Rummy500TakeFromPile(seat=0, turn_no=1, depth=3, meld=cards("7D 8D 9D"), at_ms=0)
    )
    assert [type(e) for e in events] == [Rummy500PileTaken, Rummy500Melded]
    assert events[0].cards == cards("7D 6S 2D")
    assert s2.pile == cards("9C 4H")
    assert set(s2.hand_of(0)) == set(cards("2S 6S 2D"))
    assert s2.melds == (TableMeld(1, 0, "run", cards("7D 8D 9D")),)


def test_public_report_a_dig_whose_deepest_card_cannot_be_used_is_refused_and_nothing_changes() -> (
    None
):
    # FR06: KD can be neither melded nor laid off at once.
    s = table(["4S 4C 8H", "3C 4D 5C"], pile="9C 4H KD 6S 2D")
    for command in (
        Rummy500TakeFromPile(seat=0, turn_no=1, depth=3, meld=cards("4S 4C 4H"), at_ms=0),
        Rummy500TakeFromPile(seat=0, turn_no=1, depth=3, meld=cards("KD 4S 4C"), at_ms=0),
        Rummy500TakeFromPile(seat=0, turn_no=1, depth=3, at_ms=0),
    ):
        with pytest.raises(RuleViolation):
            play.decide(s, command)
    assert not [
        c for c in play.legal_commands(s, 0) if isinstance(c, Rummy500TakeFromPile) and c.depth == 3
    ]


def test_the_top_card_alone_is_taken_only_with_its_meld_too() -> None:
    s = table(["5H 5S 9C", "3C 4D 5C"], pile="9D 5D")
    with pytest.raises(RuleViolation):
        play.decide(s, Rummy500TakeFromPile(seat=0, turn_no=1, depth=1, at_ms=0))
    s2, _ = run(
        s, Rummy500TakeFromPile(seat=0, turn_no=1, depth=1, meld=cards("5H 5S 5D"), at_ms=0)
    )
    assert s2.melds[0].kind == "set" and s2.phase is play.Phase.PLAY


def test_a_dig_may_lay_the_deepest_card_off_on_another_seats_meld() -> None:
    s = replace(
        table(["2S 9C KC", "3C 4D 5C"], pile="6H 8S"),
        melds=(TableMeld(1, 1, "run", cards("3H 4H 5H")),),
    )
    s2, events = run(s, Rummy500TakeFromPile(seat=0, turn_no=1, depth=2, lay_off_on=1, at_ms=0))
    assert isinstance(events[1], Rummy500LaidOff) and events[1].meld_id == 1
    assert s2.melds[0].layoffs[0].seat == 0
    assert cards("8S")[0] in s2.hand_of(0)


# -- melds and lay-offs ----------------------------------------------------------------------------


def test_several_melds_in_one_command_each_get_the_next_ordinal_as_their_stable_id() -> None:
    s = drawn(table(["7C 8C 9C KH KS KD 2D 3S", "3C 4D 5C"]))
    s = replace(s, melds=(TableMeld(1, 1, "set", cards("QS QH QD")),))
    s2, events = run(
        s, Rummy500Meld(seat=0, turn_no=1, groups=(cards("7C 8C 9C"), cards("KH KS KD")), at_ms=0)
    )
    assert [e.meld_id for e in events] == [2, 3]
    assert [(m.meld_id, m.owner) for m in s2.melds] == [(1, 1), (2, 0), (3, 0)]


def test_public_report_a_lay_off_names_its_target_when_a_card_fits_a_set_and_a_run() -> None:
    # timpalpant/rummy did not say which meld a lay-off extends; the target matters later.
    s = drawn(table(["7H 6H 2C 3D", "3C 4D 5C"]))
    s = replace(
        s,
        melds=(
            TableMeld(1, 1, "set", cards("7S 7D 7C")),
            TableMeld(2, 1, "run", cards("8H 9H 10H")),
        ),
    )
    on_run, _ = run(s, Rummy500LayOff(seat=0, turn_no=1, card=cards("7H")[0], meld_id=2, at_ms=0))
    assert on_run.melds[1].all_cards == cards("7H 8H 9H 10H") and not on_run.melds[0].layoffs
    # ... so 6H extends the run next; on the set instead, it would not.
    on_run2, _ = run(
        on_run, Rummy500LayOff(seat=0, turn_no=1, card=cards("6H")[0], meld_id=2, at_ms=0)
    )
    assert on_run2.melds[1].all_cards == cards("6H 7H 8H 9H 10H")
    on_set, _ = run(s, Rummy500LayOff(seat=0, turn_no=1, card=cards("7H")[0], meld_id=1, at_ms=0))
    assert on_set.melds[0].all_cards == cards("7C 7D 7H 7S")
    with pytest.raises(RuleViolation):
        play.decide(
            on_set, Rummy500LayOff(seat=0, turn_no=1, card=cards("6H")[0], meld_id=2, at_ms=0)
        )


def test_a_lay_off_on_another_seats_meld_scores_for_the_seat_that_laid_it() -> None:
    s = drawn(table(["JH 2C", "3C 4D"]))
    s = replace(s, melds=(TableMeld(1, 1, "run", cards("8H 9H 10H")),))
    s2, _ = run(s, Rummy500LayOff(seat=0, turn_no=1, card=cards("JH")[0], meld_id=1, at_ms=0))
    assert s2.melds[0].points_for(0, False) == 10
    assert s2.melds[0].points_for(1, False) == 27


def test_public_report_two_identical_cards_of_two_decks_never_share_a_group() -> None:
    # machocam/rummikub accepted two identical tiles in one group.
    assert group_kind(cards("7H 7H' 7S")) is None
    assert group_kind(cards("7H 7S 7D 7C 7H'")) is None
    assert group_kind(cards("6H 7H 7H' 8H")) is None
    s = drawn(table(["7H 7H' 7S 2C", "3C 4D"]))
    with pytest.raises(RuleViolation):
        play.decide(s, Rummy500Meld(seat=0, turn_no=1, groups=(cards("7H 7H' 7S"),), at_ms=0))
    s = replace(s, melds=(TableMeld(1, 1, "set", cards("7H 7S 7D")),))
    with pytest.raises(RuleViolation):
        play.decide(s, Rummy500LayOff(seat=0, turn_no=1, card=cards("7H'")[0], meld_id=1, at_ms=0))


@pytest.mark.parametrize(
    ("group", "kind"),
    [
        ("QH KH AH", "run"),
        ("AH 2H 3H", "run"),
        ("KH AH 2H", None),
        ("QH KH AH 2H", None),
        ("AH 2H 3H 4H 5H 6H 7H 8H 9H 10H JH QH KH", "run"),
        ("7C 8C 10C", None),
        ("7C 7D", None),
        ("7C 7D 7H", "set"),
    ],
)
def test_a_run_has_the_ace_high_or_low_never_both_and_never_wraps(
    group: str, kind: str | None
) -> None:
    assert group_kind(cards(group)) == kind


def test_a_lay_off_keeps_the_ace_at_one_end_only() -> None:
    low = TableMeld(1, 0, "run", cards("AH 2H 3H"))
    high = TableMeld(2, 0, "run", cards("QH KH AH"))
    assert low.takes(cards("4H")[0]) and not low.takes(cards("KH")[0])
    assert high.takes(cards("JH")[0]) and not high.takes(cards("2H")[0])


# -- going out and the end of a round --------------------------------------------------------------


def test_going_out_without_a_discard_ends_the_round_at_once() -> None:
    s = drawn(table(["7C 8C 9C", "3C 4D 5S"]))
    s2, events = run(s, Rummy500Meld(seat=0, turn_no=1, groups=(cards("7C 8C 9C"),), at_ms=0))
    assert isinstance(events[-1], Rummy500RoundEnded)
    assert events[-1].reason == "went_out" and events[-1].out_seat == 0
    assert s2.phase is play.Phase.ENDED and s2.turn_seat is None


def test_going_out_with_a_discard_ends_the_round_at_once() -> None:
    s = drawn(table(["9S", "3C 4D 5S"]))
    _, events = run(s, Discard(seat=0, turn_no=1, card=cards("9S")[0], at_ms=0))
    assert isinstance(events[0], CardDiscarded) and isinstance(events[1], Rummy500RoundEnded)
    assert events[1].out_seat == 0


def test_go_out_melds_and_lays_off_every_card_or_is_refused() -> None:
    s = drawn(table(["7C 8C 9C JH", "3C 4D 5S"]))
    s = replace(s, melds=(TableMeld(1, 1, "run", cards("8H 9H 10H")),))
    go = Rummy500GoOut(
        seat=0,
        turn_no=1,
        groups=(cards("7C 8C 9C"),),
        layoffs=(Rummy500LayoffTarget(card=cards("JH")[0], meld_id=1),),
        at_ms=0,
    )
    _, events = run(s, go)
    assert events[-1].reason == "went_out"
    with pytest.raises(RuleViolation):
        play.decide(s, replace(go, layoffs=()))


def test_an_empty_stock_and_nothing_taken_ends_the_round_as_it_stands() -> None:
    s = table(["9S 2C", "3C 4D 5S"], pile="KD")
    _, events = run(s, DrawFromStock(seat=0, turn_no=1, at_ms=0))
    assert [type(e) for e in events] == [Rummy500TookNothing, Rummy500RoundEnded]
    assert events[0].seat == 0 and events[1].reason == "stock_empty"
    assert [x.score for x in events[1].scores] == [-11, -12]


# -- scores ----------------------------------------------------------------------------------------


def test_a_round_scores_melded_and_laid_off_cards_minus_cards_in_hand_aces_fifteen() -> None:
    s = table(["KD 3S", "2C"], stock="")
    s = replace(
        s,
        melds=(
            TableMeld(1, 0, "set", cards("AH AS AD")),
            TableMeld(2, 0, "run", cards("7C 8C 9C")),
        ),
    )
    _, events = run(s, DrawFromStock(seat=0, turn_no=1, at_ms=0))
    assert events[-1].scores[0].score == 56  # FR01: 45 + 24 - 13


def test_public_report_the_low_ace_option_scores_the_ace_of_a_2_3_as_one() -> None:
    # timpalpant/rummy scored the ace of A-2-3 as 15 where its own option said 1.
    meld = TableMeld(1, 0, "run", cards("AH 2H 3H"))
    assert meld.points_for(0, low_ace_one=True) == 6
    assert meld.points_for(0, low_ace_one=False) == 20
    assert TableMeld(2, 0, "run", cards("QH KH AH")).points_for(0, low_ace_one=True) == 35


def test_a_round_score_can_be_negative() -> None:
    s = replace(table(["KS QS JH", "2C"]), melds=(TableMeld(1, 0, "run", cards("3D 4D 5D")),))
    _, events = run(s, DrawFromStock(seat=0, turn_no=1, at_ms=0))
    assert events[-1].scores[0].score == -18  # FR07


# -- timeouts and leavers --------------------------------------------------------------------------


def test_a_timed_out_turn_draws_discards_its_highest_card_and_never_melds() -> None:
    s = table(["7C 8C 9C KS KH 2D", "3C 4D 5S"], stock="QD")
    s2, events = run(s, TurnTimeout(turn_no=1, at_ms=0))
    discard = next(e for e in events if isinstance(e, CardDiscarded))
    assert discard.card == cards("KS")[0]  # K, Q: 10 each; the king, then spades above hearts
    assert not s2.melds and s2.turn_seat == 1 and s2.misses[0] == 1
    assert not [e for e in events if isinstance(e, Rummy500Melded)]


def test_a_timed_out_turn_with_an_empty_stock_ends_the_round() -> None:
    s = table(["7C 2D", "3C 4D 5S"])
    _, events = run(s, TurnTimeout(turn_no=1, at_ms=0))
    assert events[-1].reason == "stock_empty"


def test_a_leaver_is_out_of_the_turns_and_its_melds_stay_and_count_for_it() -> None:
    r = Round(seats=3, dealer=2)
    hands = ["7C 8C 9C 2D 4S 6H 10S", "3H 4H 5H KD 10C JS 9D", "AS 2S 3S 5D 6D 8H JH"]
    r.deal_script(hands, "KS", "KC")
    r.run(DrawFromStock(seat=0, turn_no=1, at_ms=r.now))
    r.run(Rummy500Meld(seat=0, turn_no=1, groups=(cards("7C 8C 9C"),), at_ms=r.now))
    r.run(Discard(seat=0, turn_no=1, card=cards("KC")[0], at_ms=r.now))
    r.run(DrawFromStock(seat=1, turn_no=2, at_ms=r.now))  # AC, the stock's next card
    r.run(LeaveHand(seat=0, at_ms=r.now))  # off turn: seat 1 plays on
    assert r.play.left == {0} and r.play.turn_seat == 1
    # Another seat lays off on the leaver's meld: it scores for the layer.
    r.run(Rummy500LayOff(seat=1, turn_no=2, card=cards("10C")[0], meld_id=1, at_ms=r.now))
    r.run(Discard(seat=1, turn_no=2, card=cards("KD")[0], at_ms=r.now))
    assert r.play.turn_seat == 2  # seat 0 is skipped from now on
    r.run(LeaveHand(seat=2, at_ms=r.now))  # on turn; one seat is left: the round ends
    ended = r.state.result
    assert isinstance(ended, HandEnded)
    by_seat = {x.seat: x for x in ended.results}
    assert [by_seat[s].outcome for s in (0, 1, 2)] == ["left", "scored", "left"]
    assert by_seat[0].score == 24 - (2 + 4 + 6 + 10)
    assert by_seat[1].score == 10 - (3 + 4 + 5 + 10 + 9 + 15)
    assert ended.winner_seat == 1
    result = deal_result(ended)
    assert result.left == {0, 2} and dict(result.scores) == {0: 2, 1: -36, 2: -49}


def test_a_seat_off_turn_is_refused_and_a_stale_turn_is_refused() -> None:
    s = table(["7C 8C", "3C 4D"], stock="QD")
    with pytest.raises(RuleViolation) as err:
        play.decide(s, DrawFromStock(seat=1, turn_no=1, at_ms=0))
    assert err.value.code is ErrorCode.NOT_YOUR_TURN
    with pytest.raises(RuleViolation) as err:
        play.decide(s, DrawFromStock(seat=0, turn_no=2, at_ms=0))
    assert err.value.code is ErrorCode.STALE_TURN


# -- views -----------------------------------------------------------------------------------------


def test_a_view_shows_own_cards_every_meld_with_owner_and_lay_offs_the_whole_pile_and_counts() -> (
    None
):
    r = Round(seats=3, dealer=2)
    r.deal_script(
        ["7C 8C 9C 2D 4S 6H 10S", "3H 4H 5H KD QC JS 9D", "AS 2S 3S 5D 6D 8H JH"], "KS", "10C"
    )
    r.run(DrawFromStock(seat=0, turn_no=1, at_ms=r.now))
    r.run(Rummy500Meld(seat=0, turn_no=1, groups=(cards("7C 8C 9C"),), at_ms=r.now))
    r.run(Rummy500LayOff(seat=0, turn_no=1, card=cards("10C")[0], meld_id=1, at_ms=r.now))
    r.run(Discard(seat=0, turn_no=1, card=cards("2D")[0], at_ms=r.now))
    v = RUMMY500.view(r.state, 1)
    assert v.cards == cards("3H 4H 5H KD QC JS 9D")
    assert v.discard_pile == cards("KS 2D")
    assert [s.card_count for s in v.seats] == [3, 7, 7]
    rv = v.variant_view
    assert isinstance(rv, play.Rummy500View)
    assert rv.melds[0].owner == 0 and rv.melds[0].layoffs[0].card == cards("10C")[0]
    assert [s.table_points for s in rv.seats] == [34, 0, 0]
    # never another seat's hand, in the view or in any redacted event
    others = set(cards("7C 8C 9C 2D 4S 6H 10S AS 2S 3S 5D 6D 8H JH")) - {*cards("7C 8C 9C 10C 2D")}
    seen = {c for e in r.events for c in _cards_in(RUMMY500.redact(e, 1))}
    assert not (seen & others)


def _cards_in(event: object) -> set[Card]:
    out: set[Card] = set()

    def walk(x: object) -> None:
        if isinstance(x, Card):
            out.add(x)
        elif isinstance(x, tuple):
            for y in x:
                walk(y)
        elif hasattr(x, "__dataclass_fields__"):
            for name in x.__dataclass_fields__:
                walk(getattr(x, name))

    walk(event)
    return out
