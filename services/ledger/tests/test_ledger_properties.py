"""Random sequences of grants, reservations, settlements, aborts and redeliveries keep every
ledger invariant, and leave each player exactly where a simple in-memory model says."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from ledger_support import house_rule_set, new_id, wall_clock

from rummy_ledger.adapters.memory import InMemoryUnitOfWork
from rummy_ledger.application.accounts import (
    abort_hand,
    get_balance,
    grant,
    reserve_stakes,
    settle_hand,
)
from rummy_ledger.domain.accounts import AbortHand, Grant, ReserveStakes, SeatStake, SettleHand
from rummy_rules.rules import RuleSet
from rummy_rules.settlement import reservation_hundredths, settle

PLAYERS = 4

grants = st.tuples(st.just("grant"), st.integers(0, PLAYERS - 1), st.integers(1, 6000))
starts = st.tuples(
    st.just("start"),
    st.lists(st.integers(0, PLAYERS - 1), min_size=2, max_size=PLAYERS, unique=True),
    st.sampled_from([0, 5, 25]),  # point value, hundredths
    st.sampled_from([0, 1000, 1250]),  # commission, bps
)
ends = st.tuples(
    st.just("end"),
    st.integers(0, 50),  # which open hand
    st.integers(0, PLAYERS - 1),  # which of its seats wins
    st.lists(st.integers(0, 130), min_size=PLAYERS, max_size=PLAYERS),  # loser points
    st.booleans(),  # delivered twice
)
aborts = st.tuples(st.just("abort"), st.integers(0, 50), st.booleans())
operations = st.lists(st.one_of(grants, starts, ends, aborts), min_size=1, max_size=12)


@dataclass
class Model:
    balance: list[int] = field(default_factory=lambda: [0] * PLAYERS)
    reserved: list[int] = field(default_factory=lambda: [0] * PLAYERS)
    # hand id -> (table id, rule set, {seat: player index} of the seats reserved, amount)
    open_hands: dict[str, tuple[str, RuleSet, dict[int, int], int]] = field(default_factory=dict)


@settings(max_examples=25)
@given(ops=operations)
def test_random_hands_conserve_tokens_and_never_overdraw(ops: list[tuple[Any, ...]]) -> None:
    uow = InMemoryUnitOfWork(clock=wall_clock)
    players = [new_id("player") for _ in range(PLAYERS)]
    model = Model()
    for op in ops:
        if op[0] == "grant":
            _, who, amount = op
            grant(uow, Grant("op", players[who], amount, new_id("grant")))
            model.balance[who] += amount
        elif op[0] == "start":
            _, who, point_value, bps = op
            rules = house_rule_set(4, point_value, bps)
            amount = reservation_hundredths(rules)
            hand, table = new_id("hand"), new_id("table")
            stakes = tuple(SeatStake(seat, players[p], amount) for seat, p in enumerate(who))
            result = reserve_stakes(uow, ReserveStakes(hand, table, stakes))
            seated = {}
            for seat, p in enumerate(who):
                fits = model.balance[p] - model.reserved[p] >= amount
                assert result.seats[seat].reserved == fits
                if fits:
                    model.reserved[p] += amount
                    seated[seat] = p
            model.open_hands[hand] = (table, rules, seated, amount)
        elif op[0] == "end" and model.open_hands:
            _, pick, win_pick, points, twice = op
            hand = sorted(model.open_hands)[pick % len(model.open_hands)]
            table, rules, seated, amount = model.open_hands[hand]
            if len(seated) < 2:
                continue
            seats = sorted(seated)
            winner = seats[win_pick % len(seats)]
            charged = {s: points[i] for i, s in enumerate(seats) if s != winner}
            settlement = settle(rules, winner, charged)
            command = SettleHand.from_settlement(hand, table, settlement)
            for _ in range(2 if twice else 1):
                settle_hand(uow, command)
            del model.open_hands[hand]
            for seat, p in seated.items():
                model.reserved[p] -= amount
                model.balance[p] += settlement.amount_for(seat)
        elif op[0] == "abort" and model.open_hands:
            _, pick, twice = op
            hand = sorted(model.open_hands)[pick % len(model.open_hands)]
            for _ in range(2 if twice else 1):
                abort_hand(uow, AbortHand(hand))
            _, _, seated, amount = model.open_hands.pop(hand)
            for p in seated.values():
                model.reserved[p] -= amount

        for i, account in enumerate(players):
            if model.balance[i] or model.reserved[i]:
                b = get_balance(uow, account)
                assert (b.balance_hundredths, b.reserved_hundredths) == (
                    model.balance[i],
                    model.reserved[i],
                )
                assert b.balance_hundredths >= 0 and b.available_hundredths >= 0

    assert uow.invariant_violations() == []
