"""The ledger's pure core: settlement journal shapes and validation, without a database."""

from __future__ import annotations

import pytest

from rummy_ledger.domain import (
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
    rejection_reason,
    request_hash,
    settlement_transaction,
)

HELD = (
    HeldReservation(0, "alice", 3250),
    HeldReservation(1, "bob", 3250),
    HeldReservation(2, "carol", 3250),
)


def _hand(*seats: SeatResult, commission: int, winner: int = 0) -> SettleHand:
    return SettleHand("h1", "t1", winner, tuple(seats), commission)


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
    transaction, _ = settlement_transaction(command, HELD)
    amounts = [p.amount_hundredths for p in transaction.in_posting_order()]
    assert amounts == sorted(amounts, reverse=True)
    assert amounts[0] == 100


def test_a_loser_charged_beyond_its_reservation_is_refused() -> None:
    command = _hand(SeatResult(0, 0, 3300), SeatResult(1, 132, -3300), commission=0)
    with pytest.raises(SettlementRefused, match="seat 1 would pay 3300 hundredths"):
        settlement_transaction(command, HELD)


def test_a_seat_without_a_held_reservation_is_refused() -> None:
    command = _hand(SeatResult(0, 0, 100), SeatResult(5, 10, -100), commission=0)
    with pytest.raises(SettlementRefused, match="seat 5 holds no reservation"):
        settlement_transaction(command, HELD)


@pytest.mark.parametrize(
    ("seats", "commission", "message"),
    [
        ((SeatResult(0, 0, 1000), SeatResult(1, 40, -1000)), 100, "is not the losers' total"),
        ((SeatResult(0, 5, 1000), SeatResult(1, 40, -1000)), 0, "winner is charged 5 points"),
        ((SeatResult(0, 0, -10), SeatResult(1, 40, 10)), 0, "lost but receives"),
        ((SeatResult(0, 0, 0),), 0, "needs a winner and a loser"),
    ],
)
def test_inconsistent_results_are_invalid(
    seats: tuple[SeatResult, ...], commission: int, message: str
) -> None:
    with pytest.raises(InvalidCommand, match=message):
        settlement_transaction(_hand(*seats, commission=commission), HELD)


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
