"""The ledger and a match's money (docs/rules/formats.md#money): holds at the match or game start,
the settlement of a match's end or of one game, an aborted match; each test twice, ``[memory]``
on the in-memory unit of work and ``[postgresql]`` through the real reactor and outbox relay
(``ledger_support.Wired``: the test plays the table, writing a hand-built table stream).

The settlements are built with ``rummy_rules.formats.money`` (as the table builds them); the
expected balances are worked by hand in the comments. (The same on real Kafka, the ledger a
process: tests/integration/test_ledger_service.py.)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TypeVar

import pytest
from google.protobuf.message import Message
from ledger_support import Where, Wired, balance_of, funded_player, new_id, storage

from rummy.common.v1 import cards_pb2
from rummy.ledger.v1 import events_pb2 as ledger_events
from rummy.match.v1 import match_pb2
from rummy.table.v1 import events_pb2 as table_events
from rummy_game.match_wire import settlement_to_pb
from rummy_ledger.application.accounts import get_statement
from rummy_ledger.domain.accounts import HOUSE_COMMISSION_ACCOUNT
from rummy_platform.envelope import Envelope
from rummy_platform.topics import TABLE_EVENTS
from rummy_rules.formats.money import (
    MatchSettlement,
    MoneyLine,
    game_stake_cents,
    settle_game,
    settle_split,
    settle_winner,
)

GRANT = 5000
M = TypeVar("M", bound=Message)


class Match:
    """A table hosting one match, as the table service writes it (stream id = table id,
    correlation id = match id)."""

    def __init__(
        self,
        wired: Wired,
        accounts: list[str],
        *,
        bps: int = 1000,
        options: match_pb2.MatchOptions | None = None,
        match_format: str = "pool-101",
    ) -> None:
        self.wired, self.accounts = wired, accounts
        self.table_id, self.match_id = new_id("table"), new_id("match")
        options = options or match_pb2.MatchOptions(
            pool=match_pb2.PoolOptions(target=101, entry_fee_hundredths=1001, rejoin=True)
        )
        self.write(
            table_events.TableOpened(table_id=self.table_id, commission_bps=bps, match=options)
        )
        self.write(
            match_pb2.MatchStarted(
                match_id=self.match_id,
                match_format=match_format,
                seats=[cards_pb2.Seat(seat=s, account_id=a) for s, a in enumerate(accounts)],
            )
        )

    def write(self, payload: Message) -> Envelope:
        return self.wired.table(self.table_id, self.match_id, payload)

    def hold(self, purpose: str, amounts: dict[int, int], game_no: int = 0) -> list[Envelope]:
        return [
            self.write(
                match_pb2.MoneyReserved(
                    seat=seat, amount_hundredths=amount, purpose=purpose, game_no=game_no
                )
            )
            for seat, amount in amounts.items()
        ]

    def published(self) -> list[Message]:
        """Every ledger event published so far for this table."""
        return [e.payload for e in self.wired.run() if e.stream_id == self.table_id]


def payloads(events: list[Message], kind: type[M]) -> list[M]:
    """The ``kind`` messages among ``events``, in order."""
    return [e for e in events if isinstance(e, kind)]


def held(
    message: ledger_events.MatchMoneyHeld | ledger_events.StakesReserved,
) -> list[tuple[int, int]]:
    """(seat, hundredths) of each hold the answer reports."""
    return [(r.seat, r.amount_hundredths) for r in message.reservations]


def test_a_pool_of_three_entries_pays_the_winner_the_pool_less_a_commission_rounded_down(
    where: Where,
) -> None:
    wired = Wired(where)
    accounts = [funded_player(where, GRANT) for _ in range(3)]
    match = Match(wired, accounts)
    match.hold("entry", {0: 1001, 1: 1001, 2: 1001})
    events = match.published()
    [answer] = payloads(events, ledger_events.MatchMoneyHeld)
    assert (answer.match_id, answer.purpose, answer.game_no) == (match.match_id, "entry", 0)
    assert held(answer) == [(0, 1001), (1, 1001), (2, 1001)]
    assert [balance_of(where, a) for a in accounts] == [(5000, 1001, 3999)] * 3
    match.hold("entry", {0: 1001, 2: 1001})  # re-recorded under new event ids: held once
    assert len(payloads(match.published(), ledger_events.MatchMoneyHeld)) == 1
    assert [balance_of(where, a) for a in accounts] == [(5000, 1001, 3999)] * 3
    assert wired.counted.count("entry held") == 3

    # Pool 3 x 10.01 = 30.03; commission floor(3003 x 1000 / 10000) = floor(300.3) = 300 (3.00);
    # the winner (seat 1) receives 30.03 - 3.00 = 27.03: a net of 27.03 - 10.01 = +17.02.
    settlement = settle_winner({0: 1001, 1: 1001, 2: 1001}, winner=1, commission_bps=1000)
    assert (settlement.commission_cents, settlement.amount_for(1)) == (300, 1702)
    end = match.write(
        match_pb2.MatchEnded(
            winners=[1], reason="last_seat", settlement=settlement_to_pb(settlement)
        )
    )
    wired.log.append(wired.prefix + TABLE_EVENTS, end)  # redelivered as it was
    match.write(end.payload)  # and re-recorded under a new event id
    events = match.published()
    [settled] = payloads(events, ledger_events.MatchSettled)
    assert (settled.match_id, settled.game_no, settled.commission_hundredths) == (
        match.match_id,
        0,
        300,
    )
    assert sorted((ln.account_id, ln.amount_hundredths) for ln in settled.lines) == sorted(
        [
            (accounts[0], -1001),
            (accounts[1], 1702),
            (accounts[2], -1001),
            (HOUSE_COMMISSION_ACCOUNT, 300),
        ]
    )
    assert [balance_of(where, a) for a in accounts] == [
        (3999, 0, 3999),
        (6702, 0, 6702),
        (3999, 0, 3999),
    ]
    assert storage(where).invariant_violations() == []
    assert wired.counted.count("entry settled 300") == 1
    [item] = get_statement(storage(where), accounts[1], limit=1)
    assert (item.amount_hundredths, item.winnings_hundredths, item.commission_hundredths) == (
        1702,
        1702,
        300,
    )


def test_a_rejoin_holds_one_more_entry_and_the_pool_counts_it(where: Where) -> None:
    wired = Wired(where)
    accounts = [funded_player(where, GRANT) for _ in range(3)]
    match = Match(wired, accounts)
    match.hold("entry", {0: 1001, 1: 1001, 2: 1001})
    match.hold("rejoin", {2: 1001})
    events = match.published()
    answers = payloads(events, ledger_events.MatchMoneyHeld)
    assert [(a.purpose, held(a)) for a in answers] == [
        ("entry", [(0, 1001), (1, 1001), (2, 1001)]),
        ("rejoin", [(2, 1001)]),
    ]
    assert balance_of(where, accounts[2]) == (5000, 2002, 2998)

    # Pool 4 x 10.01 = 40.04; commission floor(400.4) = 400; winner seat 0 receives
    # 40.04 - 4.00 = 36.04, a net of +26.03; seat 2 forfeits both its entries (20.02).
    settlement = settle_winner({0: 1001, 1: 1001, 2: 2002}, winner=0, commission_bps=1000)
    match.write(match_pb2.MatchEnded(winners=[0], settlement=settlement_to_pb(settlement)))
    [settled] = payloads(match.published(), ledger_events.MatchSettled)
    assert settled.commission_hundredths == 400
    assert [balance_of(where, a)[0] for a in accounts] == [7603, 3999, 2998]
    assert balance_of(where, accounts[2])[1] == 0
    assert storage(where).invariant_violations() == []


def test_a_split_of_three_shares_the_pool_less_commission_with_the_remainder_to_the_lowest_totals(
    where: Where,
) -> None:
    wired = Wired(where)
    accounts = [funded_player(where, GRANT) for _ in range(4)]
    match = Match(wired, accounts, bps=1000)
    match.hold("entry", {s: 1001 for s in range(4)})
    match.published()
    # Pool 4 x 10.01 = 40.04; commission floor(400.4) = 400; 3604 shared by seats 0, 1, 2:
    # 1201 each and 1 left over, to the lowest total (seat 2 at 40): 1201, 1201, 1202.
    # Nets: 1201 - 1001 = +200, +200, +201; seat 3 (eliminated) forfeits 1001.
    settlement = settle_split(
        {s: 1001 for s in range(4)}, totals_left={0: 70, 1: 55, 2: 40}, commission_bps=1000
    )
    assert [line.amount_cents for line in settlement.lines] == [200, 200, 201, -1001]
    match.write(
        match_pb2.MatchEnded(
            winners=[0, 1, 2], reason="split", settlement=settlement_to_pb(settlement)
        )
    )
    [settled] = payloads(match.published(), ledger_events.MatchSettled)
    assert settled.commission_hundredths == 400
    assert [balance_of(where, a)[0] for a in accounts] == [5200, 5200, 5201, 3999]
    assert storage(where).invariant_violations() == []


def test_a_split_with_nobody_eliminated_has_every_seat_pay_its_share_of_the_commission(
    where: Where,
) -> None:
    wired = Wired(where)
    accounts = [funded_player(where, GRANT) for _ in range(2)]
    match = Match(wired, accounts, bps=1000)
    match.hold("entry", {0: 1001, 1: 1001})
    match.published()
    # Pool 20.02; commission floor(200.2) = 200; 1802 shared by 2 = 901 each: each line is
    # 901 - 1001 = -100, taken from its entry (settled at 100, the rest released).
    settlement = settle_split({0: 1001, 1: 1001}, {0: 30, 1: 50}, commission_bps=1000)
    assert [line.amount_cents for line in settlement.lines] == [-100, -100]
    ended = match_pb2.MatchEnded(
        winners=[0, 1], reason="split", settlement=settlement_to_pb(settlement)
    )
    match.write(ended)
    [settled] = payloads(match.published(), ledger_events.MatchSettled)
    assert settled.commission_hundredths == 200
    assert [balance_of(where, a) for a in accounts] == [(4900, 0, 4900)] * 2
    assert storage(where).invariant_violations() == []


def test_game_stakes_hold_cap_times_point_value_and_each_loser_pays_its_capped_difference(
    where: Where,
) -> None:
    wired = Wired(where)
    accounts = [funded_player(where, GRANT) for _ in range(3)]
    options = match_pb2.MatchOptions(
        game_to=match_pb2.GameToOptions(
            target=100, games=2, point_value_hundredths=10, max_game_points=150
        )
    )
    match = Match(wired, accounts, bps=500, options=options, match_format="game-to-100")
    stake = game_stake_cents(150, 10)  # 150 x 0.10 = 15.00 from each seat
    match.write(match_pb2.GameStarted(game_no=1, seats=[0, 1, 2]))
    match.hold("stake", {0: stake, 1: stake, 2: stake}, game_no=1)
    [answer] = payloads(match.published(), ledger_events.MatchMoneyHeld)
    assert (answer.purpose, answer.game_no, held(answer)) == (
        "stake",
        1,
        [(s, 1500) for s in range(3)],
    )

    # Seat 0 wins at 120; seat 1 at 70 pays min(50, 150) x 10 = 500; seat 2 at -60 pays
    # min(180, 150) x 10 = 1500 (the cap). Paid 2000; commission floor(2000 x 5%) = 100;
    # the winner receives 1900.
    settlement = settle_game(
        {0: 120, 1: 70, 2: -60}, 0, max_game_points=150, point_value_cents=10, commission_bps=500
    )
    assert [line.amount_cents for line in settlement.lines] == [1900, -500, -1500]
    match.write(match_pb2.GameEnded(game_no=1, winner=0, settlement=settlement_to_pb(settlement)))
    [settled] = payloads(match.published(), ledger_events.MatchSettled)
    assert (settled.game_no, settled.commission_hundredths) == (1, 100)
    assert [balance_of(where, a) for a in accounts] == [
        (6900, 0, 6900),
        (4500, 0, 4500),
        (3500, 0, 3500),
    ]

    # Game 2's stakes are held, then the match is aborted: they are released; game 1 stands.
    match.write(match_pb2.GameStarted(game_no=2, seats=[0, 1, 2]))
    match.hold("stake", {0: stake, 1: stake, 2: stake}, game_no=2)
    match.published()
    assert balance_of(where, accounts[2]) == (3500, 1500, 2000)
    abort = match.write(match_pb2.MatchAborted(reason="operator closed the table"))
    match.write(abort.payload)  # re-recorded: released once
    [released] = payloads(match.published(), ledger_events.MatchHoldsReleased)
    assert sorted(held_released(released)) == [(s, 1500) for s in range(3)]
    assert [balance_of(where, a) for a in accounts] == [
        (6900, 0, 6900),
        (4500, 0, 4500),
        (3500, 0, 3500),
    ]
    assert wired.counted.count("match aborted") == 1
    assert storage(where).invariant_violations() == []


def held_released(
    message: ledger_events.MatchHoldsReleased | ledger_events.MatchSettlementRefused,
) -> list[tuple[int, int]]:
    """(seat, hundredths) of each hold the answer releases."""
    return [(r.seat, r.amount_hundredths) for r in message.released]


def test_a_seat_short_of_its_entry_is_rejected_and_the_others_stay_held_until_the_match_aborts(
    where: Where,
) -> None:
    wired = Wired(where)
    accounts = [funded_player(where, GRANT), funded_player(where, 500), funded_player(where, GRANT)]
    match = Match(wired, accounts)
    match.hold("entry", {0: 1001, 1: 1001, 2: 1001})
    events = match.published()
    assert [type(e).__name__ for e in events] == ["MatchMoneyRejected", "MatchMoneyHeld"]
    rejected, answer = events
    assert isinstance(rejected, ledger_events.MatchMoneyRejected)
    assert isinstance(answer, ledger_events.MatchMoneyHeld)
    assert (rejected.seat, rejected.account_id, rejected.reason) == (
        1,
        accounts[1],
        ledger_events.STAKE_REJECTION_REASON_INSUFFICIENT_BALANCE,
    )
    assert (rejected.available_hundredths, rejected.required_hundredths) == (500, 1001)
    assert held(answer) == [(0, 1001), (2, 1001)]
    assert balance_of(where, accounts[0]) == (5000, 1001, 3999)

    match.write(match_pb2.MatchAborted(reason="an entry was not held"))
    [released] = payloads(match.published(), ledger_events.MatchHoldsReleased)
    assert held_released(released) == [(0, 1001), (2, 1001)]
    assert [balance_of(where, a) for a in accounts] == [
        (5000, 0, 5000),
        (500, 0, 500),
        (5000, 0, 5000),
    ]
    assert wired.counted.count("entry rejected") == 1


def test_a_seat_whose_account_the_ledger_does_not_know_is_rejected_as_an_unknown_account(
    where: Where,
) -> None:
    wired = Wired(where)
    accounts = [funded_player(where, GRANT), new_id("nobody")]
    match = Match(wired, accounts)
    match.hold("entry", {0: 1001, 1: 1001})
    rejected, answer = match.published()
    assert isinstance(rejected, ledger_events.MatchMoneyRejected)
    assert rejected.reason == ledger_events.STAKE_REJECTION_REASON_UNKNOWN_ACCOUNT
    assert isinstance(answer, ledger_events.MatchMoneyHeld)
    assert held(answer) == [(0, 1001)]


def _pool_of_three(where: Where) -> tuple[Wired, Match, list[str], MatchSettlement]:
    wired = Wired(where)
    accounts = [funded_player(where, GRANT) for _ in range(3)]
    match = Match(wired, accounts)
    match.hold("entry", {0: 1001, 1: 1001, 2: 1001})
    match.published()
    return wired, match, accounts, settle_winner({s: 1001 for s in range(3)}, 1, 1000)


def _lines(s: MatchSettlement, *amounts: int) -> MatchSettlement:
    return replace(
        s,
        lines=tuple(
            replace(line, amount_cents=a) for line, a in zip(s.lines, amounts, strict=True)
        ),
    )


BAD_SETTLEMENTS: dict[str, Callable[[MatchSettlement], MatchSettlement]] = {
    # the commission is not floor(3003 x 10%) = 300 (a commission taken twice; one above the rate)
    "commission": lambda s: replace(_lines(s, -1001, 1701, -1001), commission_cents=301),
    # the lines do not sum to zero with the commission
    "sum": lambda s: _lines(s, -1001, 1703, -1001),
    # seat 0 would pay more than the 1001 it holds
    "beyond": lambda s: _lines(s, -1101, 1802, -1001),
    # a line says seat 2 held less than the ledger holds (and pays more than that)
    "held": lambda s: replace(s, lines=(*s.lines[:2], MoneyLine(2, 900, -1001))),
    # the pool is not every hold
    "pool": lambda s: replace(s, pool_cents=4004),
    # the rate is not the table's 10% (10.01% gives the same commission: only the rate differs)
    "rate": lambda s: replace(s, commission_bps=1001),
    # a seat that is not a winner receives
    "receiver": lambda s: _lines(s, 1702, -1001, -1001),
    # a winner outside the match beside the real one
    "winner": lambda s: replace(s, winners=(1, 7)),
    # a held seat has no line (the others still sum to zero: seat 1 takes 701)
    "missing": lambda s: replace(s, lines=_lines(s, -1001, 701, 0).lines[:2]),
}


@pytest.mark.parametrize("bad", sorted(BAD_SETTLEMENTS))
def test_a_match_settlement_failing_an_invariant_is_refused_its_holds_released_nothing_posted(
    where: Where, bad: str
) -> None:
    wired, match, accounts, good = _pool_of_three(where)
    settlement = BAD_SETTLEMENTS[bad](good)
    match.write(match_pb2.MatchEnded(winners=[1], settlement=settlement_to_pb(settlement)))
    events = match.published()
    assert payloads(events, ledger_events.MatchSettled) == []
    [refused] = payloads(events, ledger_events.MatchSettlementRefused)
    assert (refused.match_id, refused.game_no) == (match.match_id, 0)
    assert refused.reason
    assert held_released(refused) == [(0, 1001), (1, 1001), (2, 1001)]
    assert [balance_of(where, a) for a in accounts] == [(5000, 0, 5000)] * 3
    assert wired.counted.count("entry settlement refused") == 1
    # the good settlement sent after it moves nothing: the match's settlement is over
    match.write(match_pb2.MatchEnded(winners=[1], settlement=settlement_to_pb(good)))
    assert payloads(match.published(), ledger_events.MatchSettled) == []
    assert [balance_of(where, a) for a in accounts] == [(5000, 0, 5000)] * 3
    assert storage(where).invariant_violations() == []


def test_a_free_match_reserves_and_settles_nothing_and_publishes_nothing(where: Where) -> None:
    wired = Wired(where)
    accounts = [funded_player(where, GRANT) for _ in range(2)]
    options = match_pb2.MatchOptions(deals=match_pb2.DealsOptions(deals=2))
    match = Match(wired, accounts, bps=0, options=options, match_format="deals-2")
    match.write(match_pb2.MatchEnded(winners=[0], reason="most_chips"))
    assert match.published() == []
    assert [balance_of(where, a) for a in accounts] == [(5000, 0, 5000)] * 2
    assert not any("refused" in c for c in wired.counted)


def test_a_deal_of_a_match_is_a_hand_at_point_value_zero_that_holds_and_moves_nothing(
    where: Where,
) -> None:
    wired = Wired(where)
    accounts = [funded_player(where, GRANT) for _ in range(2)]
    match = Match(wired, accounts)
    hand_id = new_id("hand")
    seats = [cards_pb2.Seat(seat=s, account_id=a) for s, a in enumerate(accounts)]
    wired.table(
        match.table_id,
        hand_id,
        table_events.HandStarted(hand_id=hand_id, hand_no=1, seats=seats, reservation_hundredths=0),
    )
    wired.table(
        match.table_id,
        hand_id,
        table_events.HandEnded(
            hand_id=hand_id,
            winner_seat=0,
            settlement=[
                table_events.SettlementLine(seat=0, account_id=accounts[0], points=0),
                table_events.SettlementLine(seat=1, account_id=accounts[1], points=40),
            ],
            commission_bps=1000,
        ),
    )
    events = match.published()
    [reserved] = payloads(events, ledger_events.StakesReserved)
    assert held(reserved) == [(0, 0), (1, 0)]
    [settled] = payloads(events, ledger_events.HandSettled)
    assert all(line.amount_hundredths == 0 for line in settled.lines)
    assert payloads(events, ledger_events.SettlementRefused) == []
    assert [balance_of(where, a) for a in accounts] == [(5000, 0, 5000)] * 2


def test_a_hold_asked_again_with_another_amount_or_of_an_unknown_match_is_refused_moving_nothing(
    where: Where,
) -> None:
    wired = Wired(where)
    accounts = [funded_player(where, GRANT) for _ in range(2)]
    match = Match(wired, accounts)
    match.hold("entry", {0: 1001})
    match.hold("entry", {0: 2002})  # the same key (table, match, entry, seat 0, game 0)
    match.hold("entry", {5: 1001})  # not a seat of the match
    match.hold("stake", {0: 1001}, game_no=3)  # a game never started
    wired.table(
        match.table_id, new_id("match"), match_pb2.MoneyReserved(seat=0, amount_hundredths=1)
    )
    wired.table(match.table_id, "m\x00", match_pb2.MoneyReserved(seat=0, amount_hundredths=1))
    for account in ("a\x00b", "house:commission"):  # PostgreSQL text holds no NUL; no house seat
        seats = [cards_pb2.Seat(seat=0, account_id=account), cards_pb2.Seat(seat=1, account_id="b")]
        started = match_pb2.MatchStarted(match_id="m2", match_format="pool-101", seats=seats)
        wired.table(match.table_id, "m2", started)
    wired.table(match.table_id, "m2", match_pb2.MoneyReserved(seat=1, amount_hundredths=1))
    match.write(match_pb2.GameEnded(game_no=0, winner=0))  # game 0 is the match's end, not a game
    assert match.published() == []
    refused = [c.removeprefix("refused rummy.match.v1.") for c in wired.counted if "refused" in c]
    assert refused == ["MoneyReserved"] * 5 + ["MatchStarted"] * 2 + ["MoneyReserved", "GameEnded"]
    assert balance_of(where, accounts[0]) == (5000, 1001, 3999)
