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
from rummy_game.match_payloads import events_to_pb, format_to_pb, settlement_to_pb
from rummy_ledger.application.accounts import get_statement
from rummy_ledger.domain.accounts import HOUSE_COMMISSION_ACCOUNT
from rummy_platform.envelope import Envelope
from rummy_platform.topics import TABLE_EVENTS
from rummy_rules.commands import Command
from rummy_rules.events import SeatAccount
from rummy_rules.formats import DealResult, GameScoring, MatchFormat, make_format
from rummy_rules.formats.messages import BeginDeal, RecordDeal
from rummy_rules.formats.messages import StartMatch as StartMatchCommand
from rummy_rules.formats.money import (
    MatchSettlement,
    MoneyLine,
    game_stake_hundredths,
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
    assert (settlement.commission_hundredths, settlement.amount_for(1)) == (300, 1702)
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
    assert [line.amount_hundredths for line in settlement.lines] == [200, 200, 201, -1001]
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
    assert [line.amount_hundredths for line in settlement.lines] == [-100, -100]
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
    stake = game_stake_hundredths(150, 10)  # 150 x 0.10 = 15.00 from each seat
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
        {0: 120, 1: 70, 2: -60},
        0,
        max_game_points=150,
        point_value_hundredths=10,
        commission_bps=500,
    )
    assert [line.amount_hundredths for line in settlement.lines] == [1900, -500, -1500]
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
            replace(line, amount_hundredths=a) for line, a in zip(s.lines, amounts, strict=True)
        ),
    )


BAD_SETTLEMENTS: dict[str, Callable[[MatchSettlement], MatchSettlement]] = {
    # the commission is not floor(3003 x 10%) = 300 (a commission taken twice; one above the rate)
    "commission": lambda s: replace(_lines(s, -1001, 1701, -1001), commission_hundredths=301),
    # the lines do not sum to zero with the commission
    "sum": lambda s: _lines(s, -1001, 1703, -1001),
    # seat 0 would pay more than the 1001 it holds
    "beyond": lambda s: _lines(s, -1101, 1802, -1001),
    # a line says seat 2 held less than the ledger holds (and pays more than that)
    "held": lambda s: replace(s, lines=(*s.lines[:2], MoneyLine(2, 900, -1001))),
    # the pool is not every hold
    "pool": lambda s: replace(s, pool_hundredths=4004),
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


# -- the gin family's money: a game with game bonus, boxes and a wall; Hollywood's one hold -----

#: Gin's game-end scoring (docs/rules/formats.md#game-end-scoring): game bonus 100, shutout 200,
#: 25 a box.
GIN_SCORING = GameScoring(game_bonus=100, shutout_game_bonus=200, box_points=25)


def play_format(
    match: Match,
    fmt: MatchFormat,
    games: list[list[tuple[int | None, int]]],
    hold_back: bool = False,
) -> list[Message]:
    """Play a two-seat match of ``fmt`` as the table does (its events through the match wire,
    on ``match``'s table stream; MatchStarted is already there): each game's deals won by
    ``(winner, points charged to the other)``, a winner None a drawn deal (the wall). The
    ledger is run after each game's holds, as the table waits for them. ``hold_back``: the
    settlements (GameEnded, MatchEnded) are not written. Returns the payloads."""
    seats = tuple(SeatAccount(s, a) for s, a in enumerate(match.accounts))
    state = fmt.initial_state()
    written: list[Message] = []

    def do(command: Command) -> None:
        nonlocal state
        events = fmt.decide(state, command)
        for payload in events_to_pb(events, state, hand_id=new_id("hand")):
            if isinstance(payload, match_pb2.MatchStarted):
                continue
            written.append(payload)
            if not (hold_back and isinstance(payload, match_pb2.GameEnded | match_pb2.MatchEnded)):
                match.write(payload)
        state = fmt.fold(events, state)

    do(StartMatchCommand(match_id=match.match_id, seats=seats, at_ms=1))
    for deals in games:
        for winner, charged in deals:
            do(BeginDeal(at_ms=1))
            if any(isinstance(p, match_pb2.MoneyReserved) for p in written[-3:]):
                match.published()  # the stakes held before the deal's hand
            points = tuple((s, 0 if s == winner or winner is None else charged) for s in (0, 1))
            winners = () if winner is None else (winner,)
            do(RecordDeal(result=DealResult(points=points, winners=winners), at_ms=1))
    assert state.is_over, "the deals given do not end the match"
    return written


def test_a_gin_game_with_bonus_boxes_and_a_wall_and_a_shutout_game_settle_each_on_its_stakes(
    where: Where,
) -> None:
    wired = Wired(where)
    accounts = [funded_player(where, 10_000) for _ in range(2)]
    fmt = make_format(
        "game-to",
        target=100,
        games=2,
        point_value_hundredths=10,
        max_game_points=300,
        commission_bps=500,
        missed_turns_lose_game=True,
        scoring=GIN_SCORING,
        max_seats=2,
    )
    match = Match(wired, accounts, bps=500, options=format_to_pb(fmt), match_format=fmt.name)
    written = play_format(
        match,
        fmt,
        [
            # Game 1: ann 30, a wall, ann 40, bob 20, ann 35: ann 105 + 100 + 3 x 25 = 280,
            # bob 20 + 25 = 45; bob pays min(235, 300) x 0.10 = 23.50; 5% = 1.17 (rounded
            # down); ann receives 22.33.
            [(0, 30), (None, 0), (0, 40), (1, 20), (0, 35)],
            # Game 2: bob 60, bob 50: bob 110 + shutout 200 + 2 x 25 = 360, ann 0; ann pays the
            # cap, 300 x 0.10 = 30.00 (all she holds); 5% = 1.50; bob receives 28.50.
            [(1, 60), (1, 50)],
        ],
    )
    events = match.published()
    holds = payloads(events, ledger_events.MatchMoneyHeld)
    assert [(h.purpose, h.game_no, held(h)) for h in holds] == [
        ("stake", 1, [(0, 3000), (1, 3000)]),
        ("stake", 2, [(0, 3000), (1, 3000)]),
    ]
    games = [p for p in written if isinstance(p, match_pb2.GameEnded)]
    assert [[(t.seat, t.points) for t in g.totals] for g in games] == [
        [(0, 280), (1, 45)],
        [(0, 0), (1, 360)],
    ]
    settled = payloads(events, ledger_events.MatchSettled)
    assert [(s.game_no, s.commission_hundredths) for s in settled] == [(1, 117), (2, 150)]
    assert [sorted((ln.account_id, ln.amount_hundredths) for ln in s.lines) for s in settled] == [
        sorted([(accounts[0], 2233), (accounts[1], -2350), (HOUSE_COMMISSION_ACCOUNT, 117)]),
        sorted([(accounts[0], -3000), (accounts[1], 2850), (HOUSE_COMMISSION_ACCOUNT, 150)]),
    ]
    # ann 100.00 + 22.33 - 30.00 = 92.33; bob 100.00 - 23.50 + 28.50 = 105.00; the house 2.67:
    # 200.00 in all, nothing held.
    assert [balance_of(where, a) for a in accounts] == [(9233, 0, 9233), (10500, 0, 10500)]
    assert not payloads(events, ledger_events.MatchSettlementRefused)
    assert storage(where).invariant_violations() == []


def _hollywood(where: Where) -> tuple[Wired, Match, list[str], MatchFormat]:
    wired = Wired(where)
    accounts = [funded_player(where, 10_000) for _ in range(2)]
    fmt = make_format(
        "hollywood",
        target=50,
        point_value_hundredths=10,
        max_game_points=200,
        commission_bps=1000,
        missed_turns_lose_game=True,
        scoring=GIN_SCORING,
    )
    match = Match(wired, accounts, bps=1000, options=format_to_pb(fmt), match_format=fmt.name)
    return wired, match, accounts, fmt


#: ann 30 (column 1), ann 25 (columns 1 and 2: column 1 ends 55 - 0, a shutout: 305 - 0),
#: bob 40 (column 2), a wall, bob 20 (columns 2 and 3: column 2 ends 25 - 60: 50 - 210),
#: ann 50 (column 3, the only one running: it ends 50 - 20: 175 - 45).
HOLLYWOOD_DEALS: list[tuple[int | None, int]] = [
    (0, 30), (0, 25), (1, 40), (None, 0), (1, 20), (0, 50)
]  # fmt: skip


def test_a_hollywood_match_holds_three_caps_once_and_settles_the_sum_of_its_columns_nets(
    where: Where,
) -> None:
    wired, match, accounts, fmt = _hollywood(where)
    assert fmt.hold_hundredths == 3 * 200 * 10
    written = play_format(match, fmt, [HOLLYWOOD_DEALS])
    events = match.published()
    [answer] = payloads(events, ledger_events.MatchMoneyHeld)
    assert (answer.purpose, answer.game_no, held(answer)) == ("stake", 1, [(0, 6000), (1, 6000)])
    [game] = [p for p in written if isinstance(p, match_pb2.GameEnded)]
    # Capped nets (cap 200): column 1 ann +200, column 2 bob +160, column 3 ann +130: ann +170;
    # bob pays 170 x 0.10 = 17.00 of the 60.00 he holds; 10% = 1.70; ann receives 15.30.
    assert [(t.seat, t.points) for t in game.totals] == [(0, 170), (1, -170)]
    [settled] = payloads(events, ledger_events.MatchSettled)
    assert (settled.game_no, settled.commission_hundredths) == (1, 170)
    assert sorted((ln.account_id, ln.amount_hundredths) for ln in settled.lines) == sorted(
        [(accounts[0], 1530), (accounts[1], -1700), (HOUSE_COMMISSION_ACCOUNT, 170)]
    )
    assert [balance_of(where, a) for a in accounts] == [(11530, 0, 11530), (8300, 0, 8300)]
    assert storage(where).invariant_violations() == []


def _one_columns_hold(s: match_pb2.MatchSettlement) -> None:
    for line in s.lines:
        line.held_hundredths = 2000  # 200 x 0.10: one column's cap, not three


def _more_than_held(s: match_pb2.MatchSettlement) -> None:
    # bob pays 60.01, more than the 3 x 200 x 0.10 he holds; the rest still adds up.
    s.pool_hundredths, s.commission_hundredths = 6001, 600
    s.lines[0].amount_hundredths, s.lines[1].amount_hundredths = 6001 - 600, -6001


@pytest.mark.parametrize(
    ("tamper", "says"),
    [
        (_one_columns_hold, "seat 0's line says it held 2000 hundredths, the ledger holds 6000"),
        (_more_than_held, "seat 1 would pay 6001 hundredths, more than the 6000 it holds"),
    ],
    ids=["one-columns-hold", "more-than-held"],
)
def test_a_hollywood_settlement_not_matching_its_one_hold_is_refused_and_releases_it(
    where: Where, tamper: Callable[[match_pb2.MatchSettlement], None], says: str
) -> None:
    wired, match, accounts, fmt = _hollywood(where)
    written = play_format(match, fmt, [HOLLYWOOD_DEALS], hold_back=True)
    [game] = [p for p in written if isinstance(p, match_pb2.GameEnded)]
    tamper(game.settlement)
    match.write(game)
    [refused] = payloads(match.published(), ledger_events.MatchSettlementRefused)
    assert says in refused.reason
    assert sorted(held_released(refused)) == [(0, 6000), (1, 6000)]
    assert not payloads(match.published(), ledger_events.MatchSettled)
    assert [balance_of(where, a) for a in accounts] == [(10_000, 0, 10_000)] * 2
    assert storage(where).invariant_violations() == []
