"""The gRPC adapter's pure parts: who may read which account, page tokens, statement entries,
and the one table from ledger errors to status codes."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import grpc
import pytest

from rummy_ledger.application.accounts import StatementItem, StatementLine
from rummy_ledger.domain.accounts import (
    AccountNotFound,
    Conflict,
    InvalidCommand,
    SettlementRefused,
)
from rummy_ledger.entrypoints.grpc import ledger_errors, readable_account
from rummy_ledger.entrypoints.grpc_messages import statement_entry
from rummy_platform import errors
from rummy_platform.auth import Principal, Role


def test_a_player_reads_its_own_account_whether_or_not_it_names_it() -> None:
    alice = Principal("alice", Role.PLAYER)
    assert readable_account(alice, "") == "alice"
    assert readable_account(alice, "alice") == "alice"


def test_a_player_naming_another_account_is_denied() -> None:
    with pytest.raises(errors.PermissionDenied, match="only its own account"):
        readable_account(Principal("alice", Role.PLAYER), "bob")


@pytest.mark.parametrize("role", [Role.OPERATOR, Role.SERVICE])
def test_operators_and_services_read_any_account_but_must_name_it(role: Role) -> None:
    principal = Principal("ops", role)
    assert readable_account(principal, "bob") == "bob"
    with pytest.raises(errors.InvalidArgument, match="account_id is required"):
        readable_account(principal, "")


@pytest.mark.parametrize(
    ("raised", "status"),
    [
        (InvalidCommand("bad"), grpc.StatusCode.INVALID_ARGUMENT),
        (AccountNotFound("none"), grpc.StatusCode.NOT_FOUND),
        (Conflict("key reused"), grpc.StatusCode.ALREADY_EXISTS),
        (SettlementRefused("aborted"), grpc.StatusCode.FAILED_PRECONDITION),
    ],
)
def test_each_ledger_error_ends_the_call_with_its_status_and_message(
    raised: Exception, status: grpc.StatusCode
) -> None:
    with pytest.raises(errors.ServiceError) as caught, ledger_errors():
        raise raised
    assert errors.status_for(caught.value) == status
    assert str(caught.value) == str(raised)


#: A hand's statement item (a loss of 10.00 at 40 points); tests change what they look at.
_ITEM = StatementItem(
    seq=7,
    transaction_id="settlement:h1",
    kind="settlement",
    hand_id="h1",
    table_id="t1",
    posted_at=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
    amount_hundredths=-1000,
    balance_after_hundredths=9000,
    points=40,
    cost_hundredths=1000,
    winnings_hundredths=0,
    commission_hundredths=437,
    lines=(StatementLine("loss", -1000, 1, 40),),
)


def _item(**changes: Any) -> StatementItem:
    """:data:`_ITEM` with ``changes`` (field name -> value)."""
    return replace(_ITEM, **changes)


def test_a_loser_statement_entry_shows_points_cost_and_the_hand_commission() -> None:
    entry = statement_entry(_item())
    assert (entry.points, entry.cost_hundredths, entry.commission_hundredths) == (40, 1000, 437)
    assert (entry.hand_id, entry.table_id, entry.kind) == ("h1", "t1", "settlement")
    assert entry.memo == "hand h1: lost, 40 points, cost 1000"
    assert entry.posted_at.ToDatetime(tzinfo=UTC) == datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def test_a_winner_entry_shows_its_winnings_and_the_commission_it_paid() -> None:
    entry = statement_entry(
        _item(points=0, cost_hundredths=0, winnings_hundredths=3500, amount_hundredths=3063)
    )
    assert entry.memo == "hand h1: won 3500, commission 437"
    assert entry.HasField("points") and entry.points == 0


def test_a_grant_entry_has_no_points_and_no_hand() -> None:
    entry = statement_entry(
        _item(
            kind="grant",
            hand_id=None,
            table_id=None,
            points=None,
            cost_hundredths=0,
            commission_hundredths=0,
            amount_hundredths=5000,
        )
    )
    assert not entry.HasField("points")
    assert (entry.memo, entry.hand_id, entry.table_id) == ("grant", "", "")
