"""The ledger's pure core: settlement journal shapes and validation, without a database; and the
property that every table the rules' validation accepts settles within the ledger's checks."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rummy_ledger.domain.accounts import (
    HOUSE_COMMISSION_ACCOUNT,
    Grant,
    HeldReservation,
    InvalidCommand,
    JournalTransaction,
    LineKind,
    Posting,
    SeatResult,
    SettleHand,
    SettlementRefused,
    TransactionKind,
    check_settlement,
    rejection_reason,
    request_hash,
    settlement_transaction,
)
from rummy_rules.indian.rules import (
    BOMBAY_BAAZI_SHOES,
    PENALTY_OPTIONS,
    IndianPointsRules,
    bombay_baazi,
)
from rummy_rules.rules import (
    BASIS_POINTS_PER_UNIT,
    INT64_MAX,
    MAX_MISSED_TURNS,
    MAX_SEED_WINDOW_SECONDS,
    MAX_TURN_SECONDS,
    RuleSet,
)
from rummy_rules.settlement import reservation_hundredths, settle
from rummy_rules.wild import MAX_CARD_POINTS
from rummy_testing.profiles import examples

HELD = (
    HeldReservation(0, "alice", 3250),
    HeldReservation(1, "bob", 3250),
    HeldReservation(2, "carol", 3250),
)
TWO_HELD = HELD[:2]


def _hand(*seats: SeatResult, commission: int, winner: int = 0, bps: int = 1000) -> SettleHand:
    return SettleHand("h1", "t1", winner, tuple(seats), commission, 25, bps)


def test_a_settlement_debits_losers_credits_the_winner_and_shows_the_commission_twice() -> None:
    # Losers 40 and 20 points at 25 hundredths: 1000 + 500 = 1500; commission 10% = 150.
    command = _hand(
        SeatResult(0, 0, 1350), SeatResult(1, 40, -1000), SeatResult(2, 20, -500), commission=150
    )
    transaction, settled = settlement_transaction(command, HELD)

    assert transaction.id == "settlement:h1"
    assert {(p.account_id, p.line_kind, p.amount_hundredths) for p in transaction.postings} == {
        ("bob", LineKind.LOSS, -1000),
        ("carol", LineKind.LOSS, -500),
        ("alice", LineKind.WIN, 1500),
        ("alice", LineKind.COMMISSION, -150),
        (HOUSE_COMMISSION_ACCOUNT, LineKind.COMMISSION, 150),
    }
    assert settled == {0: 0, 1: 1000, 2: 500}


def test_credits_are_posted_before_debits_so_the_winner_never_dips_below_zero() -> None:
    command = _hand(SeatResult(0, 0, 90), SeatResult(1, 10, -100), commission=10)
    transaction, _ = settlement_transaction(command, TWO_HELD)
    amounts = [p.amount_hundredths for p in transaction.in_posting_order()]
    assert amounts == sorted(amounts, reverse=True)
    assert amounts[0] == 100


def test_a_loser_charged_beyond_its_reservation_is_refused() -> None:
    command = _hand(SeatResult(0, 0, 3300), SeatResult(1, 132, -3300), commission=0)
    with pytest.raises(SettlementRefused, match="seat 1 would pay 3300 hundredths"):
        settlement_transaction(command, TWO_HELD)


def test_a_seat_without_a_held_reservation_is_refused() -> None:
    command = _hand(SeatResult(0, 0, 100), SeatResult(5, 10, -100), commission=0)
    with pytest.raises(SettlementRefused, match="seat 5 holds no reservation"):
        settlement_transaction(command, HELD)
    with pytest.raises(SettlementRefused, match="no reservation is held"):
        settlement_transaction(command, ())


@pytest.mark.parametrize(
    ("seats", "commission", "message"),
    [
        # it sums to zero with the commission
        ((SeatResult(0, 0, 1000), SeatResult(1, 40, -1000)), 100, "does not sum to zero"),
        ((SeatResult(0, 0, 1001), SeatResult(1, 40, -1000)), 0, "does not sum to zero"),
        ((SeatResult(0, 5, 1000), SeatResult(1, 40, -1000)), 0, "winner is charged 5 points"),
        ((SeatResult(0, 0, -10), SeatResult(1, 40, 10)), 0, "lost but receives"),
        # every seat of the hand is covered once
        ((SeatResult(0, 0, 0),), 0, r"held seats \[1\] have no line"),
        (
            (SeatResult(0, 0, 100), SeatResult(1, 4, -100), SeatResult(1, 4, -100)),
            0,
            "lists a seat twice",
        ),
        # the commission is within the table's rate (10% of 1000 rounds to at most 100)
        ((SeatResult(0, 0, 899), SeatResult(1, 40, -1000)), 101, "outside the table's rate"),
        ((SeatResult(0, 0, 1010), SeatResult(1, 40, -1000)), -10, "outside the table's rate"),
    ],
)
def test_a_settlement_failing_an_invariant_is_refused(
    seats: tuple[SeatResult, ...], commission: int, message: str
) -> None:
    with pytest.raises(SettlementRefused, match=message):
        settlement_transaction(_hand(*seats, commission=commission), TWO_HELD)


def test_a_commission_rounded_down_at_the_rate_is_accepted_and_a_rate_above_100_is_not() -> None:
    # 12.5% of 1010 is 126.25: 126 is the most, and less is the house's loss, not the players'.
    for commission in (126, 0):
        seats = (SeatResult(0, 0, 1010 - commission), SeatResult(1, 40, -1010))
        settlement_transaction(_hand(*seats, commission=commission, bps=1250), TWO_HELD)
    seats = (SeatResult(0, 0, 883), SeatResult(1, 40, -1010))
    with pytest.raises(SettlementRefused, match=r"0\.\.126"):
        settlement_transaction(_hand(*seats, commission=127, bps=1250), TWO_HELD)
    with pytest.raises(SettlementRefused, match=r"commission_bps must be 0\.\.10000"):
        settlement_transaction(_hand(*seats, commission=127, bps=10_001), TWO_HELD)


def test_a_settlement_naming_no_hand_is_invalid() -> None:
    command = SettleHand("", "t1", 0, (SeatResult(0, 0, 0), SeatResult(1, 0, 0)), 0)
    with pytest.raises(InvalidCommand, match="names its hand"):
        settlement_transaction(command, TWO_HELD)


def test_an_unbalanced_journal_transaction_cannot_be_built() -> None:
    with pytest.raises(InvalidCommand, match="does not sum to zero"):
        JournalTransaction(
            "x",
            TransactionKind.GRANT,
            (Posting("a", 5, LineKind.GRANT), Posting("b", -4, LineKind.ISSUANCE)),
        )


def test_the_rejection_reason_names_both_amounts_in_hundredths() -> None:
    assert rejection_reason(1200, 0, 2600) == "balance 1200 < reservation 2600 hundredths"
    assert rejection_reason(2600, 0, 2600) is None


def test_an_idempotency_key_binds_the_whole_body() -> None:
    base = Grant("op", "alice", 100, "k")
    assert request_hash(base) == request_hash(Grant("op", "alice", 100, "k"))
    assert request_hash(base) != request_hash(Grant("op", "alice", 101, "k"))


# -- every table the rules let an operator open settles within the ledger's checks ---------


@st.composite
def valid_rule_sets(draw: st.DrawFn) -> RuleSet:
    """A rule set drawn over the whole space the rules' validation accepts (every bound, its
    edges included); building it must succeed."""
    seats = draw(st.sampled_from([s for s, _ in BOMBAY_BAAZI_SHOES]))
    cap = draw(st.one_of(st.none(), st.integers(1, 13 * MAX_CARD_POINTS)))
    counted = 13 * MAX_CARD_POINTS if cap is None else cap
    # Any: the keys are the option names, which a type checker cannot match to the fields
    penalties: dict[str, Any] = {name: draw(st.integers(0, counted)) for name in PENALTY_OPTIONS}
    base = bombay_baazi(
        seats,
        0,
        draw(st.integers(0, BASIS_POINTS_PER_UNIT)),
        turn_seconds=draw(st.integers(1, MAX_TURN_SECONDS)),
        seed_window_seconds=draw(st.integers(1, MAX_SEED_WINDOW_SECONDS)),
        max_missed_turns=draw(st.integers(1, MAX_MISSED_TURNS)),
    )
    indian = IndianPointsRules(points_cap=cap, **penalties)
    rules = dataclasses.replace(base, options=indian)
    most = rules.max_point_value_hundredths
    pv = draw(st.one_of(st.integers(0, 10_000), st.integers(0, most), st.just(most)))
    return dataclasses.replace(rules, point_value_hundredths=pv)


@settings(max_examples=examples(ci=300, dev=60))
@given(rules=valid_rule_sets(), data=st.data())
def test_every_settlement_the_rules_compute_for_a_valid_table_passes_the_ledgers_checks(
    rules: RuleSet, data: st.DataObject
) -> None:
    dealt = data.draw(st.integers(2, rules.seats))
    seats = sorted(
        data.draw(st.sets(st.integers(0, rules.seats - 1), min_size=dealt, max_size=dealt))
    )
    winner = data.draw(st.sampled_from(seats))
    options = rules.options
    assert isinstance(options, IndianPointsRules)  # what valid_rule_sets draws
    # Any charge a hand can make: counted cards (capped), a drop or a wrong declare.
    charges = st.one_of(
        st.integers(0, 13 * MAX_CARD_POINTS).map(options.capped),
        st.sampled_from([getattr(options, name) for name in PENALTY_OPTIONS]),
    )
    points = {seat: data.draw(charges) for seat in seats if seat != winner}
    settlement = settle(rules, winner, points)
    reserved = reservation_hundredths(rules)
    held = tuple(HeldReservation(seat, f"player-{seat}", reserved) for seat in seats)
    command = SettleHand.from_settlement("hand", "table", settlement)

    check_settlement(command, held)  # raises SettlementRefused on any failed invariant
    transaction, settled = settlement_transaction(command, held)
    assert sum(p.amount_hundredths for p in transaction.postings) == 0
    assert all(abs(p.amount_hundredths) <= INT64_MAX for p in transaction.postings)
    assert set(settled) == set(seats)


def test_a_one_winner_settle_command_binds_the_body_it_bound_before_shared_pots() -> None:
    # A command stored before co_winner_seats existed is replayed after the upgrade under its
    # idempotency key: its hash must be the one stored then (computed by the earlier code).
    command = _hand(SeatResult(0, 0, 90), SeatResult(1, 10, -100), commission=10)
    before = "30beba55374fd58dc528f32a84b69ac33e2503b56d2d3389d0f7289c19f09d88"
    assert request_hash(command) == before
    assert request_hash(dataclasses.replace(command, co_winner_seats=(1,))) != before


def test_a_shared_pot_posts_a_win_line_per_winner_and_the_house_commission() -> None:
    # Seat 2 pays 40 x 25 = 1000; commission 100; 900 shared: 450 to seats 1 and 0.
    command = dataclasses.replace(
        _hand(
            SeatResult(0, 0, 450), SeatResult(1, 0, 450), SeatResult(2, 40, -1000), commission=100
        ),
        winner_seat=1,
        co_winner_seats=(0,),
    )
    transaction, settled = settlement_transaction(command, HELD)
    assert sorted(
        (p.account_id, p.line_kind, p.amount_hundredths) for p in transaction.postings
    ) == [
        ("alice", LineKind.WIN, 450),
        ("bob", LineKind.WIN, 450),
        ("carol", LineKind.LOSS, -1000),
        (HOUSE_COMMISSION_ACCOUNT, LineKind.COMMISSION, 100),
    ]
    assert settled == {0: 0, 1: 0, 2: 1000}
    assert transaction.metadata["co_winner_seats"] == [0]
