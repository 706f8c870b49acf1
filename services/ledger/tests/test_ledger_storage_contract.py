"""One contract for the ledger's storage, run on the in-memory fake and on PostgreSQL.

Each test runs twice (``[memory]``, ``[postgresql]``, the latter on a real database and marked
integration): what the application relies on (idempotent keys, transactions undone on an
exception, nested savepoints, the outbox and offsets, statements) and what the schema refuses
by constraint (the fake raises ``ConstraintViolation`` where PostgreSQL raises an
``IntegrityError``). What only PostgreSQL can show stays in test_ledger_schema_guards.py and
test_ledger_concurrency.py.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime

import psycopg
import pytest
from ledger_support import new_id, wall_clock

from rummy_ledger.adapters.memory import ConstraintViolation, InMemoryUnitOfWork
from rummy_ledger.application.ports import LedgerUnitOfWork, OutgoingEvent, PlayedEntry
from rummy_ledger.contract import match_settlement_key
from rummy_ledger.domain.accounts import (
    HOUSE_COMMISSION_ACCOUNT,
    ISSUANCE_ACCOUNT,
    Conflict,
    JournalTransaction,
    LineKind,
    Posting,
    TransactionKind,
)
from rummy_ledger.domain.limits import Pending, PlayerLimits
from rummy_ledger.domain.matches import HoldBatch, MatchBook, SeatHold
from rummy_testing.storage import IMPLEMENTATIONS, Storage


@pytest.fixture(params=IMPLEMENTATIONS)
def storage(request: pytest.FixtureRequest) -> Storage[LedgerUnitOfWork]:
    if request.param == "memory":
        return Storage(InMemoryUnitOfWork(clock=wall_clock), ConstraintViolation)
    return Storage(request.getfixturevalue("pg_uow"), psycopg.IntegrityError)


def _grant(account: str, amount: int) -> JournalTransaction:
    return JournalTransaction(
        id=new_id("grant"),
        kind=TransactionKind.GRANT,
        postings=(
            Posting(ISSUANCE_ACCOUNT, -amount, LineKind.ISSUANCE),
            Posting(account, amount, LineKind.GRANT),
        ),
    )


def _funded(uow: LedgerUnitOfWork, amount: int) -> str:
    account = new_id("player")
    with uow.transaction():
        uow.accounts.ensure_players([account])
        uow.journal.insert(_grant(account, amount))
    return account


def _balance(uow: LedgerUnitOfWork, account: str) -> tuple[int, int] | None:
    with uow.transaction():
        row = uow.accounts.balance(account)
    return None if row is None else (row.balance_hundredths, row.reserved_hundredths)


def test_a_command_key_is_claimed_once_and_then_returns_its_first_result_as_json(
    storage: Storage[LedgerUnitOfWork],
) -> None:
    uow, key = storage.uow, new_id("key")
    with uow.transaction():
        assert uow.commands.claim(key, "Grant", "hash-1") is None
        uow.commands.store_result(key, {"seats": (1, 2), "reason": None})
    with uow.transaction():
        stored = uow.commands.claim(key, "Grant", "hash-1")
    assert stored is not None and stored.result == {"seats": [1, 2], "reason": None}
    with pytest.raises(Conflict, match=key), uow.transaction():
        uow.commands.claim(key, "Grant", "hash-2")
    with pytest.raises(Conflict), uow.transaction():
        uow.commands.claim(key, "ReserveStakes", "hash-1")


def test_an_exception_inside_a_transaction_undoes_everything_done_in_it(
    storage: Storage[LedgerUnitOfWork],
) -> None:
    uow, account, key = storage.uow, new_id("player"), new_id("key")
    with pytest.raises(RuntimeError), uow.transaction():
        uow.commands.claim(key, "Grant", "h")
        uow.accounts.ensure_players([account])
        uow.journal.insert(_grant(account, 500))
        raise RuntimeError("fails before the end")
    assert _balance(uow, account) is None
    with uow.transaction():
        assert uow.commands.claim(key, "Grant", "other body") is None  # the key is free again


def test_a_nested_transaction_is_a_savepoint_undone_alone(
    storage: Storage[LedgerUnitOfWork],
) -> None:
    uow, kept, dropped = storage.uow, new_id("player"), new_id("player")
    with uow.transaction():
        uow.accounts.ensure_players([kept])
        with pytest.raises(RuntimeError), uow.transaction():
            uow.accounts.ensure_players([dropped])
            raise RuntimeError("the inner one fails")
    assert _balance(uow, kept) == (0, 0)
    assert _balance(uow, dropped) is None


def test_entries_move_balances_and_no_player_goes_below_zero(
    storage: Storage[LedgerUnitOfWork],
) -> None:
    uow = storage.uow
    account = _funded(uow, 700)
    assert _balance(uow, account) == (700, 0)
    with pytest.raises(storage.violation), uow.transaction():
        uow.journal.insert(_grant(account, -701))  # the player pays issuance more than it has
    assert _balance(uow, account) == (700, 0)


def test_a_player_id_may_not_look_like_a_house_account(storage: Storage[LedgerUnitOfWork]) -> None:
    with pytest.raises(storage.violation), storage.uow.transaction():
        storage.uow.accounts.ensure_players([f"house:{new_id('x')}"])


def test_reservations_hold_the_available_balance_and_resolve_exactly_once(
    storage: Storage[LedgerUnitOfWork],
) -> None:
    uow, hand = storage.uow, new_id("hand")
    account, other = _funded(uow, 1000), _funded(uow, 1000)
    with uow.transaction():
        uow.reservations.insert(hand, "t", 0, account, 600)
        uow.reservations.insert(hand, "t", 1, other, 600)
    assert _balance(uow, account) == (1000, 600)
    with pytest.raises(storage.violation), uow.transaction():
        uow.reservations.insert(new_id("hand"), "t", 0, account, 401)  # available is 400
    with pytest.raises(storage.violation), uow.transaction():
        uow.reservations.insert(hand, "t", 0, _funded(uow, 10), 5)  # seat 0 is taken
    with pytest.raises(storage.violation), uow.transaction():
        uow.reservations.settle(hand, 0, 601)  # more than was held
    with uow.transaction():
        held = uow.reservations.lock_held(hand)
        uow.reservations.settle(hand, 0, 250)
        uow.reservations.release(hand, 1)
        uow.reservations.settle(hand, 1, 0)  # no longer held: changes nothing
        uow.reservations.release(hand, 0)
    assert [(r.seat, r.account_id, r.amount_hundredths) for r in held] == [
        (0, account, 600),
        (1, other, 600),
    ]
    with uow.transaction():
        assert uow.reservations.lock_held(hand) == []
        rows = uow.reservations.of_hand(hand)
    assert [(r.seat, r.state, r.settled_amount_hundredths) for r in rows] == [
        (0, "settled", 250),
        (1, "released", None),
    ]
    assert _balance(uow, account) == (1000, 0)


def _settlement(hand: str, winner: str, loser: str, amount: int) -> JournalTransaction:
    return JournalTransaction(
        id=new_id("settlement"),
        kind=TransactionKind.SETTLEMENT,
        postings=(
            Posting(winner, amount, LineKind.WIN, seat=0, points=0),
            Posting(loser, -amount, LineKind.LOSS, seat=1, points=10),
        ),
        hand_id=hand,
        table_id="t",
    )


def test_a_loss_must_match_a_reservation_settled_at_that_amount_and_a_hand_settles_once(
    storage: Storage[LedgerUnitOfWork],
) -> None:
    uow, hand = storage.uow, new_id("hand")
    winner, loser = _funded(uow, 1000), _funded(uow, 1000)
    with uow.transaction():
        uow.reservations.insert(hand, "t", 0, winner, 300)
        uow.reservations.insert(hand, "t", 1, loser, 300)
    with pytest.raises(storage.violation), uow.transaction():
        uow.journal.insert(_settlement(hand, winner, loser, 200))  # nothing settled yet
    with uow.transaction():
        uow.reservations.settle(hand, 0, 0)
        uow.reservations.settle(hand, 1, 200)
        uow.journal.insert(_settlement(hand, winner, loser, 200))
    assert _balance(uow, loser) == (800, 0) and _balance(uow, winner) == (1200, 0)
    with pytest.raises(storage.violation), uow.transaction():
        uow.journal.insert(_settlement(hand, winner, loser, 200))  # a second settlement
    assert uow.invariant_violations() == []


def _match_settlement(key: str, payer: str, receiver: str, amount: int) -> JournalTransaction:
    return JournalTransaction(
        id=new_id("settlement"),
        kind=TransactionKind.SETTLEMENT,
        postings=(
            Posting(receiver, amount, LineKind.PRIZE, seat=0),
            Posting(payer, -amount, LineKind.FORFEIT, seat=1),
        ),
        hand_id=key,
        table_id="t",
    )


def test_a_forfeit_equals_what_its_settlements_holds_were_settled_at_and_a_prize_is_not_negative(
    storage: Storage[LedgerUnitOfWork],
) -> None:
    uow, key = storage.uow, match_settlement_key("t", new_id("match"), 0)
    receiver, payer = _funded(uow, 5000), _funded(uow, 5000)
    with uow.transaction():  # an entry and a rejoin for the payer, in two groups of the match
        uow.reservations.insert(f"{key}:entry", "t", 0, receiver, 1001)
        uow.reservations.insert(f"{key}:entry", "t", 1, payer, 1001)
        uow.reservations.insert(f"{key}:rejoin", "t", 1, payer, 1001)
    with pytest.raises(storage.violation), uow.transaction():
        uow.journal.insert(_match_settlement(key, payer, receiver, 2002))  # nothing settled yet
    with pytest.raises(storage.violation), uow.transaction():
        uow.reservations.settle(f"{key}:entry", 1, 1001)
        uow.journal.insert(_match_settlement(key, payer, receiver, 2002))  # only one settled
    with pytest.raises(storage.violation), uow.transaction():
        uow.reservations.settle(f"{key}:entry", 1, 1001)  # a hold of another match's key
        uow.reservations.settle(f"{key}:rejoin", 1, 1001)
        uow.journal.insert(_match_settlement(f"{key}0", payer, receiver, 2002))
    with uow.transaction():
        uow.reservations.settle(f"{key}:entry", 0, 0)
        uow.reservations.settle(f"{key}:entry", 1, 1001)
        uow.reservations.settle(f"{key}:rejoin", 1, 1001)
        uow.journal.insert(_match_settlement(key, payer, receiver, 2002))
    assert _balance(uow, payer) == (2998, 0) and _balance(uow, receiver) == (7002, 0)
    negative_prize = JournalTransaction(
        id=new_id("settlement"),
        kind=TransactionKind.SETTLEMENT,
        postings=(
            Posting(receiver, -5, LineKind.PRIZE, seat=0),
            Posting(HOUSE_COMMISSION_ACCOUNT, 5, LineKind.COMMISSION),
        ),
        hand_id=match_settlement_key("t", new_id("match"), 1),
        table_id="t",
    )
    with pytest.raises(storage.violation), uow.transaction():
        uow.journal.insert(negative_prize)
    assert uow.invariant_violations() == []


def test_a_match_book_is_stored_and_locked_and_a_tables_first_rate_stays(
    storage: Storage[LedgerUnitOfWork],
) -> None:
    uow, table, match = storage.uow, new_id("table"), new_id("match")
    with uow.transaction():
        assert uow.matches.lock(table, match) is None
        assert uow.matches.table_commission_bps(table) is None
        uow.matches.record_table(table, 1000)
        uow.matches.record_table(table, 500)
    book = MatchBook(table, match, "pool-101", 1000, ((0, "a"), (1, "b")), games=((1, (0, 1)),))
    with uow.transaction():
        assert uow.matches.table_commission_bps(table) == 1000
        uow.matches.save(book)
    batch = HoldBatch("entry", 0, (0, 1), (SeatHold(0, "a", 1001, True, 5000),), False)
    with uow.transaction():
        assert uow.matches.lock(table, match) == book
        uow.matches.save(book.with_batch(batch))
    with pytest.raises(RuntimeError), uow.transaction():  # undone with its transaction
        uow.matches.save(replace(book, aborted=True))
        raise RuntimeError
    with uow.transaction():
        assert uow.matches.lock(table, match) == book.with_batch(batch)
    with pytest.raises(storage.violation), uow.transaction():
        uow.matches.record_table(new_id("table"), 10001)


def test_played_rows_add_their_nets_end_once_and_page_newest_first_by_end_then_id(
    storage: Storage[LedgerUnitOfWork],
) -> None:
    uow, table, account = storage.uow, new_id("table"), new_id("player")
    noon, one = datetime(2026, 5, 1, 12, tzinfo=UTC), datetime(2026, 5, 1, 13, tzinfo=UTC)

    def entry(ref: str, net: int, result: str | None, at: datetime | None) -> PlayedEntry:
        return PlayedEntry(account, "match", ref, table, "gin", "game-to-100", net, result, at)

    with uow.transaction():
        uow.history.record_table_variant(table, "gin")
        uow.history.record_table_variant(table, "rummy-500")  # the first stays
        assert uow.history.table_variant(table) == "gin"
        uow.history.add([entry("m1", 300, None, None)])  # a game settled: not listed yet
        assert uow.history.page(account, 10, None) == []
        uow.history.add([entry("m1", -100, "won", noon), entry("m2", 0, "lost", noon)])
        uow.history.add([entry("m1", 0, "lost", one)])  # ended already: stays as it ended
        uow.history.add([entry("m3", 5, "won", one)])
    with uow.transaction():
        rows = uow.history.page(account, 10, None)
        assert [(r.ref_id, r.result, r.net_hundredths) for r in rows] == [
            ("m3", "won", 5),
            ("m2", "lost", 0),
            ("m1", "won", 200),
        ]
        assert rows[1].ended_at == noon and rows[1].id > rows[2].id
        after = uow.history.page(account, 1, (rows[1].ended_at, rows[1].id))
        assert [r.ref_id for r in after] == ["m1"]
    with pytest.raises(storage.violation), uow.transaction():
        uow.history.add([replace(entry("m4", 0, "won", noon), kind="game")])


def test_the_outbox_keeps_its_order_refuses_a_repeated_id_and_versions_stay_dense(
    storage: Storage[LedgerUnitOfWork],
) -> None:
    uow, stream = storage.uow, new_id("table")
    first, second = (OutgoingEvent(new_id("evt"), "ledger-events", stream, "T", b"1") for _ in "ab")
    with uow.transaction():
        assert uow.outbox.next_stream_version(stream) == 1
        uow.outbox.write([first, second])
    with pytest.raises(RuntimeError), uow.transaction():
        assert uow.outbox.next_stream_version(stream) == 2
        raise RuntimeError("rolled back: version 2 is taken again")
    with uow.transaction():
        assert uow.outbox.next_stream_version(stream) == 2
    with pytest.raises(storage.violation), uow.transaction():
        uow.outbox.write([first])
    with uow.transaction():
        mine = [r.event_id for r in uow.outbox.unpublished() if r.key == stream]
        uow.outbox.mark_published([first.event_id])
        left = [r.event_id for r in uow.outbox.unpublished() if r.key == stream]
    assert mine == [first.event_id, second.event_id]
    assert left == [second.event_id]


def test_a_stored_offset_never_goes_back(storage: Storage[LedgerUnitOfWork]) -> None:
    uow, group = storage.uow, new_id("group")
    with uow.transaction():
        uow.offsets.store(group, "table-events", 3, 41)
        uow.offsets.store(group, "table-events", 3, 7)
        uow.offsets.store(group, "table-events", 0, 0)
        assert uow.offsets.next_offsets(group) == {("table-events", 3): 42, ("table-events", 0): 1}


def test_a_statement_is_newest_first_with_the_running_balance_and_pages_by_seq(
    storage: Storage[LedgerUnitOfWork],
) -> None:
    uow = storage.uow
    account = _funded(uow, 100)
    with uow.transaction():
        uow.journal.insert(_grant(account, 250))
        uow.journal.insert(_grant(account, 50))
        rows = uow.journal.statement(account, 10, None)
        older = uow.journal.statement(account, 1, rows[0].seq)
    assert [(r.net_hundredths, r.balance_after_hundredths) for r in rows] == [
        (50, 400),
        (250, 350),
        (100, 100),
    ]
    assert [r.lines for r in rows] == [(("grant", a, None, None),) for a in (50, 250, 100)]
    assert [r.kind for r in rows] == ["grant"] * 3
    assert [r.seq for r in older] == [rows[1].seq]


def test_a_players_limits_are_stored_whole_and_period_losses_add_up_per_period(
    storage: Storage[LedgerUnitOfWork],
) -> None:
    uow, account = storage.uow, new_id("player")
    at = datetime(2026, 3, 29, 0, 30, tzinfo=UTC)
    limits = PlayerLimits(
        account,
        loss_limits=(("day", 500), ("month", 9_000)),
        time_zone="Europe/Berlin",
        break_until=at,
        pending=(Pending("day", None, at, at),),
    )
    with uow.transaction():
        assert uow.limits.of(account) is None
        uow.limits.save(limits)
        uow.limits.save(replace(limits, stake_limit_hundredths=100))
    with uow.transaction():
        assert uow.limits.of(account) == replace(limits, stake_limit_hundredths=100)
    day, other = date(2026, 3, 29), date(2026, 3, 30)
    with uow.transaction():
        uow.limits.add_loss(account, "day", day, 300)
        uow.limits.add_loss(account, "day", day, -120)
        uow.limits.add_loss(account, "day", other, 999)
        uow.limits.add_loss(account, "month", date(2026, 3, 1), 300)
    with uow.transaction():
        assert uow.limits.losses(account, [("day", day), ("week", day)]) == {"day": 180, "week": 0}
    with pytest.raises(storage.violation), uow.transaction():
        uow.limits.add_loss(account, "fortnight", day, 1)
