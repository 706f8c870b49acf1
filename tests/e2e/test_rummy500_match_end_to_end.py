"""A Rummy 500 match to 500 through the five services, every round planned and every number
worked by the test's own rules (issue 29, "How we know it is done").

The services run with the fairness service's test-only seed key (``RUMMY_FAIRNESS_SEED_KEY``),
so the test knows each round's server seed; it contributes every client seed and chooses them
(``rummy500_planner``) so that the round goes as the test asks, then plays every seat through the
public gRPC API (DrawCard, DiscardCard, Play with TakeFromPile / Meld / LayOff / GoOut). The
planner's simulation and scores share no code with the rules under test
(``docs/rules/rummy500.md``), so every score, total and token below is the test's:

- round 1: a dig five cards deep whose deepest card is melded at once, a lay-off onto another
  seat's run (scored for the seat that laid it), a going out without a discard (``GoOut``), and a
  seat below zero (a negative running total); before the dig, refused digs (deeper than the pile,
  a meld without the deepest card, a lay-off onto no meld, the top card taken with nothing done)
  are each answered INVALID_ARGUMENT and append nothing;
- the rounds after it bring the two leaders up to 500 together, and the round that takes them
  over it ties them at the top (``docs/rules/formats.md#race-to``): one more round among the
  tied decides the match;
- the money: game stakes (``docs/rules/formats.md#money``), each loser pays
  min(winner's total - its total, 200) x 10 hundredths, the commission floor(paid x 5%), the
  winner receives the rest: checked in the table's GameEnded, the ledger's journal and the
  ledger's balances (gRPC GetBalance).

The rounds are different every run (hand ids are fresh), so the totals are the planner's, not
constants: each is the sum of the round scores the test computed, and the services must agree.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any, TypeVar

import grpc
import pytest
from gin_planner import face, refused, wire
from google.protobuf.message import Message
from rummy500_planner import (
    DIG_DEPTH,
    RUN,
    Move,
    Round,
    after,
    plan_match_round,
    play_round,
    points,
    seed_and_deal,
    tied_at_top,
    value,
)
from test_gin_match_end_to_end import assert_replay_clean, ended, journal, ops

from rummy.common.v1 import cards_pb2
from rummy.match.v1 import match_pb2 as mpb
from rummy.rummy500.v1 import events_pb2 as rpb
from rummy.table.v1 import events_pb2 as tpb
from rummy.table.v1 import table_service_pb2 as api
from rummy_platform.topics import TABLE_EVENTS
from rummy_testing.players import Operator, Player, Table, next_hand
from rummy_testing.stacks import RunningStack, running_stack

KEY = b"rummy500-e2e-planned-deals"
HOUSE = "house:commission"
#: Table seconds (the e2e clock runs 10x): a 60 s turn and seed window.
TURN_SECONDS, SEED_WINDOW_SECONDS, START_DELAY_SECONDS = 600, 600, 10
TARGET, POINT, CAP, BPS, GRANT = 500, 10, 200, 500, 5000
SEATS = (0, 1, 2)
M = TypeVar("M", bound=Message)
__all__ = ["ops"]  # the operator fixture, shared with the gin match test


@pytest.fixture(scope="module")
def keyed_stack(kafka_bootstrap: str, database_url: str) -> Iterator[RunningStack]:
    """The five services with this module's fairness seed key (``ops``, the gin test's
    fixture, is this stack's operator)."""
    env = {"RUMMY_FAIRNESS_SEED_KEY": KEY.decode()}
    with running_stack(kafka_bootstrap, database_url, "r500match", extra_env=env) as running:
        yield running


def rummy500_rules() -> cards_pb2.RuleSet:
    return cards_pb2.RuleSet(
        variant="rummy500",
        turn_seconds=TURN_SECONDS,
        seed_window_seconds=SEED_WINDOW_SECONDS,
        start_delay_seconds=START_DELAY_SECONDS,
    )


def by_hand(payloads: list[Any], kind: type[M]) -> dict[str, list[M]]:
    """The payloads of type ``kind`` by their ``hand_id``, in stream order."""
    found: dict[str, list[M]] = {}
    for p in payloads:
        if isinstance(p, kind):
            found.setdefault(getattr(p, "hand_id", ""), []).append(p)
    return found


def refusing_digs(
    stack: RunningStack,
    table_id: str,
    players: dict[int, Player],
    r: Round,
    hand_id: str,
    refusals: list[str],
) -> Callable[[Move], None]:
    """Before round ``r``'s dig :data:`DIG_DEPTH` deep: four digs the rules refuse, each
    INVALID_ARGUMENT with nothing appended (the seat's view and the table stream unchanged);
    each refusal's message is added to ``refusals``."""

    def before(move: Move) -> None:
        if move.kind != "dig" or move.turn_no != r.dig_turn:
            return
        p, t = players[move.seat], move.turn_no
        view = p.view
        assert [c.index for c in view.discard_pile] == list(r.pile_at_dig)
        assert len(r.pile_at_dig) >= DIG_DEPTH
        version = view.stream_version
        count = len(stack.payloads(TABLE_EVENTS, table_id))
        deepest = move.cards[0]
        meld = [wire(c) for c in move.meld]
        without = [wire(c) for c in move.meld if c != deepest]
        pile = len(r.pile_at_dig)
        tries = [
            (rpb.TakeFromPile(depth=pile + 1, meld=meld), f"the pile holds {pile} cards"),
            (rpb.TakeFromPile(depth=DIG_DEPTH, meld=without), "must hold the deepest card"),
            (rpb.TakeFromPile(depth=DIG_DEPTH, lay_off_on=99), "no meld 99 is on the table"),
            (rpb.TakeFromPile(depth=1), "one of the two"),
        ]
        for command, words in tries:
            error = refused(partial(p.play, command, hand_id, t))
            assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, (command, error)
            assert words in (error.details() or ""), (face(deepest), error.details())
            refusals.append(words)
        time.sleep(1.0)
        assert p.view.stream_version == version
        assert len(stack.payloads(TABLE_EVENTS, table_id)) == count

    return before


def settlement(totals: dict[int, int], winner: int) -> tuple[dict[int, int], int]:
    """Game stakes by hand: each loser pays min(winner's total - its total, CAP) x POINT; the
    commission is floor(what is paid x BPS / 10000); the winner receives the rest."""
    paid = {s: min(totals[winner] - t, CAP) * POINT for s, t in totals.items() if s != winner}
    commission = sum(paid.values()) * BPS // 10000
    lines = {s: -v for s, v in paid.items()}
    lines[winner] = sum(paid.values()) - commission
    return lines, commission


def test_a_three_seat_match_to_500_digs_lays_off_goes_out_ties_and_settles(
    ops: Operator, keyed_stack: RunningStack
) -> None:
    options = mpb.MatchOptions(
        race_to=mpb.RaceToOptions(target=TARGET, point_value_hundredths=POINT, max_game_points=CAP)
    )
    table = Table(ops, keyed_stack.endpoints.table, 3, 0, BPS, rummy500_rules(), options)
    house_before = ops.balance(HOUSE).balance_hundredths
    try:
        players = {s: table.player(f"r5{s}", grant=GRANT) for s in SEATS}
        for s, p in players.items():
            assert p.take_seat(s) == s
        totals = dict.fromkeys(SEATS, 0)
        rounds: list[tuple[str, Round, dict[int, int]]] = []
        done: set[str] = set()
        tie: tuple[int, ...] = ()
        refusals: list[str] = []
        while True:
            view = next_hand(players[0], done, timeout=90)
            assert view.phase == api.HAND_PHASE_SEEDING, "the seed window closed before the plan"
            hand_id = view.hand_id
            done.add(hand_id)
            seats = tie or SEATS
            r = plan_match_round(
                KEY,
                hand_id,
                view.dealer_seat,
                seats,
                totals,
                TARGET,
                first=not rounds,
                tie_break=bool(tie),
            )
            seed_and_deal(players, r, hand_id)
            before = refusing_digs(keyed_stack, table.table_id, players, r, hand_id, refusals)
            play_round(players, r, hand_id, before if not rounds else lambda _m: None)
            players[seats[0]].wait(ended(hand_id), 60, f"hand {hand_id} ended")
            totals = after(totals, r)
            rounds.append((hand_id, r, dict(totals)))
            if tie:
                break
            tie = tied_at_top(totals, TARGET)
            assert tie or max(totals.values()) < TARGET, totals
        payloads = keyed_stack.payloads(TABLE_EVENTS, table.table_id)
        round_ends = by_hand(payloads, rpb.Rummy500RoundEnded)
        hand_ends = by_hand(payloads, tpb.HandEnded)
        # Every round: the services' scores are the planner's (melded and laid-off cards minus
        # cards in hand, ace 15), how it ended, every seat's outcome word.
        for hand_id, r, _ in rounds:
            (end,) = round_ends[hand_id]
            assert end.reason == r.reason
            assert (end.out_seat if end.HasField("out_seat") else None) == r.out_seat
            assert {s.seat: (s.table_points, s.hand_points, s.score) for s in end.scores} == {
                s: (r.table_points(s), r.hand_points(s), r.score(s)) for s in r.deal.order
            }
            (hand,) = hand_ends[hand_id]
            assert {x.seat: x.score for x in hand.results} == r.scores()
            words = {x.seat: x.outcome for x in hand.results}
            assert words == {s: "went_out" if s == r.out_seat else "scored" for s in r.deal.order}
            assert list(hand.settlement) == [] or all(
                line.amount_hundredths == 0 for line in hand.settlement
            )
        # Round 1: the refused digs were sent (and changed nothing); the dig five deep, its
        # deepest card melded in the same command.
        assert len(refusals) == 4, refusals
        first_id, first, first_totals = rounds[0]
        in_first = [p for p in payloads if getattr(p, "hand_id", None) == first_id]
        (dig,) = [m for m in first.moves if m.kind == "dig" and m.turn_no == first.dig_turn]
        taken = [
            p for p in in_first if isinstance(p, rpb.Rummy500PileTaken) and p.turn_no == dig.turn_no
        ]
        assert [[c.index for c in p.cards] for p in taken] == [list(dig.cards)]
        assert len(taken[0].cards) == DIG_DEPTH
        assert sorted(c.index for c in taken[0].meld) == sorted(dig.meld)
        k = in_first.index(taken[0])
        from_pile = in_first[k + 1]
        assert isinstance(from_pile, rpb.Rummy500Melded) and from_pile.from_pile
        assert dig.cards[0] in {c.index for c in from_pile.cards}
        # A lay-off onto another seat's run, scored for the seat that laid it.
        melded = {p.meld_id: p for p in in_first if isinstance(p, rpb.Rummy500Melded)}
        laid = [p for p in in_first if isinstance(p, rpb.Rummy500LaidOff)]
        foreign = [
            p for p in laid if melded[p.meld_id].seat != p.seat and melded[p.meld_id].kind == RUN
        ]
        assert [(p.seat, p.card.index, p.meld_id) for p in foreign] == first.foreign_run_layoffs
        # Each seat's table points from the services' own events: the cards of its melds and
        # the cards it laid off, wherever (ace 15): a lay-off counts for who laid it.
        (end,) = round_ends[first_id]
        worked = dict.fromkeys(first.deal.order, 0)
        for meld in melded.values():
            worked[meld.seat] += points(c.index for c in meld.cards)
        for lay in laid:
            worked[lay.seat] += value(lay.card.index)
        assert {s.seat: s.table_points for s in end.scores} == worked
        assert {s.seat: s.hand_points for s in end.scores} == {
            s.seat: points(c.index for c in s.cards) for s in end.scores
        }
        # Going out without a discard: the seat out discarded nothing in its last turn.
        assert end.reason == "went_out" and not first.discarded_out
        assert not [
            p for p in in_first if isinstance(p, tpb.CardDiscarded) and p.turn_no == end.turn_no
        ]
        # A running total below zero after round 1, in the match's DealScored.
        scored = [p for p in payloads if isinstance(p, mpb.DealScored)]
        assert [{t.seat: t.points for t in d.totals} for d in scored] == [
            {s: t[s] for s in SEATS} for _, _, t in rounds
        ]
        assert min(first_totals.values()) < 0, first_totals
        # The tie at the top over 500 plays one more round among the tied only.
        tied = tie
        assert len(tied) >= 2
        (due,) = [p for p in payloads if isinstance(p, mpb.TieBreakDue)]
        assert tuple(due.seats) == tied
        # This match's deals: once it settles the table starts the next match, whose first
        # DealStarted may already be in the log when it is read.
        played = {hand_id for hand_id, _, _ in rounds}
        deals = [p for p in payloads if isinstance(p, mpb.DealStarted) and p.hand_id in played]
        assert [(tuple(d.seats), d.tie_break, d.hand_id) for d in deals][-1] == (
            tied,
            True,
            rounds[-1][0],
        )
        assert all(not d.tie_break for d in deals[:-1])
        # The match: the tie-break's highest wins; the money by hand.
        final = rounds[-1][2]
        winner = max(tied, key=lambda s: final[s])
        lines, commission = settlement(final, winner)
        (game,) = [p for p in payloads if isinstance(p, mpb.GameEnded)]
        assert game.winner == winner
        assert {t.seat: t.points for t in game.totals} == final
        assert {x.seat: x.amount_hundredths for x in game.settlement.lines} == lines
        assert game.settlement.commission_hundredths == commission
        (settled,) = keyed_stack.match_settlements(table.table_id, 1)
        accounts = {s: players[s].account_id for s in SEATS}
        assert journal(settled) == {
            **{accounts[s]: v for s, v in lines.items()},
            HOUSE: commission,
        }
        # The table starts its next match START_DELAY_SECONDS after this one ends (every seat is
        # still taken), and that match holds each seat's stake again: the posted balances are
        # this match's settlement, and a reservation still held can only be the next match's
        # hold (the cap times the point value), never one of this match's.
        got = {a: ops.balance(a) for a in accounts.values()}
        assert {a: b.balance_hundredths for a, b in got.items()} == {
            accounts[s]: GRANT + lines[s] for s in SEATS
        }
        assert all(b.reserved_hundredths in (0, CAP * POINT) for b in got.values()), got
        assert ops.balance(HOUSE).balance_hundredths - house_before == commission
        # The match's end as the table recorded it (a view may show the next match already).
        recorded = keyed_stack.payloads(TABLE_EVENTS, table.table_id)
        ends = [p for p in recorded if isinstance(p, mpb.MatchEnded)]
        assert ends and list(ends[0].winners) == [winner], ends
        assert_replay_clean(keyed_stack, table.table_id)
    finally:
        table.close()
