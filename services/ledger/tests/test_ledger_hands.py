"""A hand's money through the ledger's use cases on the in-memory unit of work (the same suite
of storage semantics runs on PostgreSQL: test_ledger_storage_contract.py): reserve, settle,
abort, statements."""

from __future__ import annotations

import pytest
from ledger_support import balance_of, funded_player, house_rule_set, new_id

from rummy_ledger.adapters.memory import InMemoryUnitOfWork
from rummy_ledger.application.accounts import (
    ConsumedPosition,
    Outbox,
    OutgoingEvent,
    ReserveResult,
    abort_hand,
    get_balance,
    get_statement,
    refuse_settlement,
    reserve_stakes,
    settle_hand,
)
from rummy_ledger.domain.accounts import (
    HOUSE_COMMISSION_ACCOUNT,
    ISSUANCE_ACCOUNT,
    AbortHand,
    AccountNotFound,
    Conflict,
    RefuseSettlement,
    ReserveStakes,
    SeatResult,
    SeatStake,
    SettleHand,
    SettlementRefused,
)
from rummy_rules.settlement import reservation_hundredths, settle, settle_shared
from toy_variant import toy_rule_set


def _reserve(
    uow: InMemoryUnitOfWork,
    hand: str,
    table: str,
    accounts: list[str],
    amount: int,
    *,
    outbox: Outbox = (),
) -> ReserveResult:
    seats = tuple(SeatStake(seat, account, amount) for seat, account in enumerate(accounts))
    return reserve_stakes(uow, ReserveStakes(hand, table, seats), outbox=outbox)


def _house(uow: InMemoryUnitOfWork) -> int:
    return get_balance(uow, HOUSE_COMMISSION_ACCOUNT).balance_hundredths


def test_a_settlement_worked_by_hand_pays_the_winner_net_of_commission_rounded_down(
    uow: InMemoryUnitOfWork,
) -> None:
    # Point value 25 hundredths, commission 1250 bps (12.5%), reservation 130 x 25 = 3250.
    # Losers 40 / 20 / 80 points pay 1000 / 500 / 2000: total 3500. Commission
    # floor(3500 x 1250 / 10000) = floor(437.5) = 437. The winner receives 3500 - 437 = 3063.
    winner, b, c, d = (funded_player(uow, 5000) for _ in range(4))
    hand, table = new_id("hand"), new_id("table")
    house_before = _house(uow)
    reserved = _reserve(uow, hand, table, [winner, b, c, d], 3250)
    assert [s.reserved for s in reserved.seats] == [True, True, True, True]
    assert balance_of(uow, b) == (5000, 3250, 1750)

    rules = house_rule_set(4, point_value_hundredths=25, commission_bps=1250)
    settlement = settle(rules, winner_seat=0, points_by_seat={1: 40, 2: 20, 3: 80})
    result = settle_hand(uow, SettleHand.from_settlement(hand, table, settlement))

    assert balance_of(uow, winner) == (8063, 0, 8063)
    assert balance_of(uow, b) == (4000, 0, 4000)
    assert balance_of(uow, c) == (4500, 0, 4500)
    assert balance_of(uow, d) == (3000, 0, 3000)
    assert _house(uow) - house_before == 437
    assert result.commission_hundredths == 437
    lines = {(ln.account_id, ln.line_kind): ln.amount_hundredths for ln in result.lines}
    assert lines == {
        (winner, "win"): 3500,
        (winner, "commission"): -437,
        (HOUSE_COMMISSION_ACCOUNT, "commission"): 437,
        (b, "loss"): -1000,
        (c, "loss"): -500,
        (d, "loss"): -2000,
    }
    states = [
        (r.seat, r.state, r.settled_amount_hundredths) for r in uow.reservations.of_hand(hand)
    ]
    assert states == [
        (0, "settled", 0),
        (1, "settled", 1000),
        (2, "settled", 500),
        (3, "settled", 2000),
    ]
    assert uow.invariant_violations() == []


def test_a_free_table_moves_nothing_but_shows_the_points(uow: InMemoryUnitOfWork) -> None:
    winner, loser = funded_player(uow, 700), funded_player(uow, 300)
    hand, table = new_id("hand"), new_id("table")
    house_before = _house(uow)
    _reserve(uow, hand, table, [winner, loser], 0)
    settlement = settle(house_rule_set(4, 0, 1250), winner_seat=0, points_by_seat={1: 65})
    settle_hand(uow, SettleHand.from_settlement(hand, table, settlement))

    assert balance_of(uow, winner) == (700, 0, 700)
    assert balance_of(uow, loser) == (300, 0, 300)
    assert _house(uow) == house_before
    latest = get_statement(uow, loser, limit=1)[0]
    assert (latest.hand_id, latest.points, latest.amount_hundredths) == (hand, 65, 0)


def test_a_seat_that_cannot_cover_its_reservation_is_rejected_with_the_reason_and_nothing_moves(
    uow: InMemoryUnitOfWork,
) -> None:
    rich, poor = funded_player(uow, 5000), funded_player(uow, 1200)
    hand, table = new_id("hand"), new_id("table")

    def events(result: ReserveResult) -> list[OutgoingEvent]:
        return [
            OutgoingEvent(
                new_id("evt"), "ledger-events", table, "StakeRejected", s.account_id.encode()
            )
            for s in result.rejected
        ] + [OutgoingEvent(new_id("evt"), "ledger-events", table, "StakesReserved", b"")]

    result = _reserve(uow, hand, table, [rich, poor], 2600, outbox=events)

    assert [(s.seat, s.reserved) for s in result.seats] == [(0, True), (1, False)]
    assert result.rejected[0].reason == "balance 1200 < reservation 2600 hundredths"
    assert balance_of(uow, poor) == (1200, 0, 1200)
    assert balance_of(uow, rich) == (5000, 2600, 2400)
    written = [(r.type, r.payload) for r in uow.outbox.unpublished() if r.key == table]
    assert written == [("StakeRejected", poor.encode()), ("StakesReserved", b"")]


def test_a_second_reservation_counts_what_is_already_held(uow: InMemoryUnitOfWork) -> None:
    player, other = funded_player(uow, 5000), funded_player(uow, 5000)
    _reserve(uow, new_id("hand"), new_id("table"), [player, other], 3250)
    second = _reserve(uow, new_id("hand"), new_id("table"), [player, other], 3250)
    assert second.rejected[0].reason == (
        "available 1750 < reservation 3250 hundredths (balance 5000, 3250 already reserved)"
    )


def test_the_same_settlement_delivered_three_times_settles_once(uow: InMemoryUnitOfWork) -> None:
    winner, loser = funded_player(uow, 4000), funded_player(uow, 4000)
    hand, table = new_id("hand"), new_id("table")
    _reserve(uow, hand, table, [winner, loser], 2000)
    command = SettleHand.from_settlement(
        hand, table, settle(house_rule_set(4, 10, 1000), winner_seat=0, points_by_seat={1: 80})
    )
    results = [
        settle_hand(
            uow,
            command,
            consumed=ConsumedPosition("table-events", 2, 40 + i),
            outbox=[OutgoingEvent(new_id("evt"), "ledger-events", table, "HandSettled", b"x")],
        )
        for i in range(3)
    ]

    assert results[0] == results[1] == results[2]
    assert [r.replayed for r in results] == [False, True, True]
    assert balance_of(uow, winner) == (4720, 0, 4720)  # +800 less commission 80
    assert balance_of(uow, loser) == (3200, 0, 3200)
    settlements = [i for i in get_statement(uow, loser) if i.hand_id == hand]
    published = [r for r in uow.outbox.unpublished() if r.key == table]
    offsets = uow.offsets.next_offsets("ledger")
    assert len(settlements) == 1
    assert len(published) == 1
    assert offsets[("table-events", 2)] == 43


def test_the_same_hand_settled_with_other_results_is_a_conflict(uow: InMemoryUnitOfWork) -> None:
    winner, loser = funded_player(uow, 4000), funded_player(uow, 4000)
    hand, table = new_id("hand"), new_id("table")
    _reserve(uow, hand, table, [winner, loser], 2000)
    rules = house_rule_set(4, 10, 0)
    settle_hand(uow, SettleHand.from_settlement(hand, table, settle(rules, 0, {1: 30})))
    with pytest.raises(Conflict):
        settle_hand(uow, SettleHand.from_settlement(hand, table, settle(rules, 0, {1: 31})))
    assert balance_of(uow, loser) == (3700, 0, 3700)


def test_a_loser_charged_more_than_its_reservation_is_refused_and_nothing_moves(
    uow: InMemoryUnitOfWork,
) -> None:
    winner, loser = funded_player(uow, 9000), funded_player(uow, 9000)
    hand, table = new_id("hand"), new_id("table")
    _reserve(uow, hand, table, [winner, loser], 2000)
    too_much = SettleHand(hand, table, 0, (SeatResult(0, 0, 2500), SeatResult(1, 100, -2500)), 0)
    with pytest.raises(SettlementRefused, match="would pay 2500 hundredths, more than the 2000"):
        settle_hand(uow, too_much, consumed=ConsumedPosition("table-events", 7, 5))
    assert balance_of(uow, loser) == (9000, 2000, 7000)
    assert ("table-events", 7) not in uow.offsets.next_offsets("ledger")


def test_an_aborted_hand_releases_every_reservation_once_and_cannot_be_settled(
    uow: InMemoryUnitOfWork,
) -> None:
    a, b = funded_player(uow, 3000), funded_player(uow, 3000)
    hand, table = new_id("hand"), new_id("table")
    _reserve(uow, hand, table, [a, b], 1300)
    first = abort_hand(uow, AbortHand(hand))
    again = abort_hand(uow, AbortHand(hand))

    assert [(r.account_id, r.amount_hundredths) for r in first.released] == [(a, 1300), (b, 1300)]
    assert again == first and again.replayed
    assert balance_of(uow, a) == (3000, 0, 3000)
    command = SettleHand(hand, table, 0, (SeatResult(0, 0, 100), SeatResult(1, 10, -100)), 0)
    with pytest.raises(SettlementRefused, match="no reservation is held"):
        settle_hand(uow, command)
    assert balance_of(uow, b) == (3000, 0, 3000)


def test_a_result_missing_a_held_seat_is_refused_and_nothing_moves(uow: InMemoryUnitOfWork) -> None:
    a, b, c = (funded_player(uow, 3000) for _ in range(3))
    hand, table = new_id("hand"), new_id("table")
    _reserve(uow, hand, table, [a, b, c], 1000)
    command = SettleHand(hand, table, 0, (SeatResult(0, 0, 200), SeatResult(1, 20, -200)), 0)
    with pytest.raises(SettlementRefused, match=r"held seats \[2\] have no line"):
        settle_hand(uow, command)
    assert balance_of(uow, b) == balance_of(uow, c) == (3000, 1000, 2000)


def test_a_refused_settlement_releases_every_hold_of_the_hand_once(uow: InMemoryUnitOfWork) -> None:
    a, b = funded_player(uow, 3000), funded_player(uow, 3000)
    hand, table = new_id("hand"), new_id("table")
    _reserve(uow, hand, table, [a, b], 1300)
    first = refuse_settlement(uow, RefuseSettlement(hand, table), "seat 1 pays too much")
    again = refuse_settlement(uow, RefuseSettlement(hand, table), "another reason")
    assert [(r.account_id, r.amount_hundredths) for r in first.released] == [(a, 1300), (b, 1300)]
    assert again == first and again.replayed and again.reason == "seat 1 pays too much"
    assert balance_of(uow, a) == balance_of(uow, b) == (3000, 0, 3000)
    command = SettleHand(hand, table, 0, (SeatResult(0, 0, 100), SeatResult(1, 10, -100)), 0)
    with pytest.raises(SettlementRefused, match="no reservation is held"):
        settle_hand(uow, command)


def test_a_statement_shows_each_hands_points_cost_and_commission_newest_first(
    uow: InMemoryUnitOfWork,
) -> None:
    winner, loser = funded_player(uow, 5000), funded_player(uow, 5000)
    hand, table = new_id("hand"), new_id("table")
    _reserve(uow, hand, table, [winner, loser], 3250)
    rules = house_rule_set(4, 25, 1250)
    settle_hand(uow, SettleHand.from_settlement(hand, table, settle(rules, 0, {1: 40})))

    won = get_statement(uow, winner)
    assert [(i.kind, i.amount_hundredths, i.balance_after_hundredths) for i in won] == [
        ("settlement", 875, 5875),  # 1000 less floor(1000 x 12.5%) = 125
        ("grant", 5000, 5000),
    ]
    assert (won[0].winnings_hundredths, won[0].commission_hundredths, won[0].points) == (
        1000,
        125,
        0,
    )
    lost = get_statement(uow, loser)[0]
    assert (lost.hand_id, lost.points, lost.cost_hundredths, lost.commission_hundredths) == (
        hand,
        40,
        1000,
        125,
    )
    older = get_statement(uow, winner, limit=1, before=won[0].seq)
    assert [i.kind for i in older] == ["grant"]


def test_the_journal_sums_to_zero_with_issuance_negative(uow: InMemoryUnitOfWork) -> None:
    player = funded_player(uow, 1234)
    assert uow.invariant_violations() == []
    issuance = get_balance(uow, ISSUANCE_ACCOUNT).balance_hundredths
    others = sum(get_balance(uow, a).balance_hundredths for a in (player, HOUSE_COMMISSION_ACCOUNT))
    assert issuance < 0 and issuance + others == 0


def test_reading_an_unknown_account_is_not_found(uow: InMemoryUnitOfWork) -> None:
    with pytest.raises(AccountNotFound):
        get_balance(uow, new_id("nobody"))


def test_a_shared_pot_worked_by_hand_pays_each_winner_its_share_once(
    uow: InMemoryUnitOfWork,
) -> None:
    # The toy variant at 25 hundredths a point, 12.5%, at most 25 points (reservation 625).
    # Seats 0 and 1 tie for the lowest total and share the pot; seat 2 is charged 25 points
    # and pays 625. Commission floor(625 x 1250 / 10000) = floor(78.125) = 78. 625 - 78 = 547
    # shared by two: 273 each and 1 over, to seat 0 (first in the toy's order).
    a, b, c = (funded_player(uow, 5000) for _ in range(3))
    hand, table = new_id("hand"), new_id("table")
    house_before = _house(uow)
    rules = toy_rule_set(3, 25, 1250, max_points=25)
    _reserve(uow, hand, table, [a, b, c], reservation_hundredths(rules))
    assert balance_of(uow, c) == (5000, 625, 4375)

    settlement = settle_shared(rules, (0, 1), {2: 25})
    command = SettleHand.from_settlement(hand, table, settlement)
    assert command.winner_seats == (0, 1)
    result = settle_hand(uow, command)

    assert balance_of(uow, a) == (5274, 0, 5274)
    assert balance_of(uow, b) == (5273, 0, 5273)
    assert balance_of(uow, c) == (4375, 0, 4375)
    assert _house(uow) - house_before == 78
    lines = sorted((ln.account_id, ln.line_kind, ln.amount_hundredths) for ln in result.lines)
    assert lines == sorted(
        [
            (a, "win", 274),
            (b, "win", 273),
            (c, "loss", -625),
            (HOUSE_COMMISSION_ACCOUNT, "commission", 78),
        ]
    )
    # exactly once: the same settlement again is the first result, and nothing moves
    again = settle_hand(uow, command)
    assert again.replayed and again.lines == result.lines
    assert balance_of(uow, a) == (5274, 0, 5274) and _house(uow) - house_before == 78
    # each winner's statement shows its share and the hand's commission
    mine = get_statement(uow, b, limit=1)[0]
    assert (mine.hand_id, mine.amount_hundredths, mine.winnings_hundredths) == (hand, 273, 273)
    assert (mine.points, mine.cost_hundredths, mine.commission_hundredths) == (0, 0, 78)
    states = [
        (r.seat, r.state, r.settled_amount_hundredths) for r in uow.reservations.of_hand(hand)
    ]
    assert states == [(0, "settled", 0), (1, "settled", 0), (2, "settled", 625)]
    assert uow.invariant_violations() == []


def test_a_shared_pot_with_two_losers_gives_the_remainder_along_the_variants_order(
    uow: InMemoryUnitOfWork,
) -> None:
    # Bombay Baazi's rule set at 10 a point, 5% (reservation 1300), with seats 3, 1 and 2 sharing
    # the pot in that order: seat 0 pays 33 x 10 = 330, seat 4 pays 10 x 10 = 100; total 430,
    # commission floor(21.5) = 21, 409 for three: 136 each and 1 over, to seat 3.
    accounts = [funded_player(uow, 2000) for _ in range(5)]
    hand, table = new_id("hand"), new_id("table")
    house_before = _house(uow)
    rules = house_rule_set(6, point_value_hundredths=10, commission_bps=500)
    _reserve(uow, hand, table, accounts, reservation_hundredths(rules))
    settlement = settle_shared(rules, (3, 1, 2), {0: 33, 4: 10})
    settle_hand(uow, SettleHand.from_settlement(hand, table, settlement))
    assert [balance_of(uow, x)[0] for x in accounts] == [1670, 2136, 2136, 2137, 1900]
    assert _house(uow) - house_before == 21
    assert sum(balance_of(uow, x)[0] for x in accounts) + 21 == 5 * 2000


@pytest.mark.parametrize(
    ("winner", "co_winners", "seats", "commission", "reason"),
    [
        # a winner charged points, or paying
        (0, (1,), ((0, 0, 100), (1, 5, 100), (2, 10, -200)), 0, "winner seat 1 is charged 5"),
        (0, (1,), ((0, 0, 300), (1, 0, -100), (2, 10, -200)), 0, "winner seat 1 would pay 100"),
        # the winners' shares and the commission do not add up to what the losers pay
        (0, (1,), ((0, 0, 100), (1, 0, 101), (2, 10, -200)), 0, "does not sum to zero"),
        (0, (1,), ((0, 0, 90), (1, 0, 89), (2, 10, -200)), 21, "outside the table's rate"),
        # a winner without a seat in the hand, listed twice, or nobody left to pay
        (0, (5,), ((0, 0, 100), (1, 0, 100), (2, 10, -200)), 0, r"winner \(seats \[0, 5\]\)"),
        (0, (0,), ((0, 0, 200), (1, 0, 0), (2, 10, -200)), 0, "list a seat twice"),
        (0, (1, 2), ((0, 0, 0), (1, 0, 0), (2, 0, 0)), 0, "and a loser"),
        # a loser beyond its reservation
        (0, (1,), ((0, 0, 700), (1, 0, 700), (2, 140, -1400)), 0, "more than the 1300"),
    ],
)
def test_a_shared_pot_failing_an_invariant_is_refused_and_nothing_moves(
    uow: InMemoryUnitOfWork,
    winner: int,
    co_winners: tuple[int, ...],
    seats: tuple[tuple[int, int, int], ...],
    commission: int,
    reason: str,
) -> None:
    accounts = [funded_player(uow, 3000) for _ in range(3)]
    hand, table = new_id("hand"), new_id("table")
    _reserve(uow, hand, table, accounts, 1300)
    command = SettleHand(
        hand,
        table,
        winner,
        tuple(SeatResult(*s) for s in seats),
        commission,
        10,
        1000,
        co_winner_seats=co_winners,
    )
    with pytest.raises(SettlementRefused, match=reason):
        settle_hand(uow, command)
    assert [balance_of(uow, x) for x in accounts] == [(3000, 1300, 1700)] * 3
