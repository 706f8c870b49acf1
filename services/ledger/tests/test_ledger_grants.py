"""Operator grants: idempotent on their key, conflicting on a different body."""

from __future__ import annotations

import pytest
from ledger_support import balance_of, new_id

from rummy_ledger.adapters.memory import InMemoryUnitOfWork
from rummy_ledger.application.accounts import (
    Balance,
    ConsumedPosition,
    OutgoingEvent,
    get_balance,
    get_statement,
    grant,
)
from rummy_ledger.domain.accounts import AccountNotFound, Conflict, Grant, InvalidCommand


def test_a_retried_grant_with_the_same_key_and_body_returns_the_first_result(
    uow: InMemoryUnitOfWork,
) -> None:
    account, key = new_id("player"), new_id("grant")
    first = grant(uow, Grant("op", account, 2500, key))
    grant(uow, Grant("op", account, 100, new_id("grant")))  # the balance moves on meanwhile
    retry = grant(uow, Grant("op", account, 2500, key))

    assert retry == first and retry.replayed and not first.replayed
    assert (retry.transaction_id, retry.balance_hundredths) == (f"grant:{key}", 2500)
    assert balance_of(uow, account) == (2600, 0, 2600)


def test_the_same_grant_key_with_a_different_body_is_a_conflict_and_moves_nothing(
    uow: InMemoryUnitOfWork,
) -> None:
    account, key = new_id("player"), new_id("grant")
    grant(uow, Grant("op", account, 2500, key))
    with pytest.raises(Conflict, match=key):
        grant(uow, Grant("op", account, 2501, key))
    with pytest.raises(Conflict):
        grant(uow, Grant("op", new_id("player"), 2500, key))
    assert balance_of(uow, account) == (2500, 0, 2500)


def test_a_grant_must_move_a_positive_amount_to_a_player(uow: InMemoryUnitOfWork) -> None:
    with pytest.raises(InvalidCommand, match="positive amount"):
        grant(uow, Grant("op", new_id("player"), 0, new_id("grant")))
    with pytest.raises(InvalidCommand, match="house account"):
        grant(uow, Grant("op", "house:commission", 10, new_id("grant")))


def test_a_grant_writes_its_event_and_consumed_offset_in_the_same_transaction_once(
    uow: InMemoryUnitOfWork,
) -> None:
    account, key = new_id("player"), new_id("grant")
    event = OutgoingEvent(new_id("evt"), "ledger-events", account, "TokensGranted", b"\x01\x02")
    for offset in (9, 9, 10):
        grant(
            uow,
            Grant("op", account, 300, key),
            consumed=ConsumedPosition("ops-commands", 0, offset, consumer_group="ledger-test"),
            outbox=[event],
        )
    rows = [r for r in uow.outbox.unpublished() if r.key == account]
    assert [(r.event_id, r.type, r.payload) for r in rows] == [
        (event.event_id, "TokensGranted", b"\x01\x02")
    ]
    uow.outbox.mark_published([event.event_id])
    assert [r for r in uow.outbox.unpublished() if r.key == account] == []
    assert uow.offsets.next_offsets("ledger-test") == {("ops-commands", 0): 11}


def test_a_handler_inside_the_callers_transaction_commits_only_with_the_caller(
    uow: InMemoryUnitOfWork,
) -> None:
    kept, dropped = new_id("player"), new_id("player")
    with uow.transaction():
        grant(uow, Grant("op", kept, 700, new_id("grant")))
    with pytest.raises(RuntimeError), uow.transaction():
        grant(uow, Grant("op", dropped, 700, new_id("grant")))
        raise RuntimeError("the reactor's transaction fails after the handler")
    assert balance_of(uow, kept) == (700, 0, 700)
    with pytest.raises(AccountNotFound):
        balance_of(uow, dropped)


def test_an_account_never_posted_to_reads_as_zero_to_its_owner_and_is_unknown_to_anyone_else(
    uow: InMemoryUnitOfWork,
) -> None:
    # every player has a wallet, opened at 0 (services/ledger/README.md, gRPC): its owner reads
    # zeros and an empty statement; an operator naming it gets AccountNotFound (NOT_FOUND)
    account = new_id("player")
    assert get_balance(uow, account, opened_at_zero=True) == Balance(account, 0, 0, 0)
    assert get_statement(uow, account, opened_at_zero=True) == ()
    with pytest.raises(AccountNotFound):
        get_balance(uow, account)
    with pytest.raises(AccountNotFound):
        get_statement(uow, account)
    grant(uow, Grant("op", account, 700, new_id("grant")))
    assert get_balance(uow, account, opened_at_zero=True) == Balance(account, 700, 0, 700)
    assert [item.kind for item in get_statement(uow, account, opened_at_zero=True)] == ["grant"]
