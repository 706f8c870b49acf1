"""The audit trail's reading of events: who did what to which table or account."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from rummy.ledger.v1 import events_pb2 as ledger_pb
from rummy.table.v1 import events_pb2 as table_pb
from rummy_ops.audit import audit_trail
from rummy_platform.envelope import Envelope

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def event(payload: object, stream_id: str, minutes: int, causation_id: str = "") -> Envelope:
    return Envelope.new(
        payload,  # type: ignore[arg-type]
        stream_id=stream_id,
        stream_version=1,
        occurred_at=T0 + timedelta(minutes=minutes),
        causation_id=causation_id,
    )


def test_each_operator_action_is_one_entry_oldest_first_and_other_events_none() -> None:
    granted = event(
        ledger_pb.TokensGranted(
            account_id="alice", amount_hundredths=5000, idempotency_key="k1",
            operator_account_id="ops-2",
        ),
        "alice",
        2,
    )  # fmt: skip
    trail = audit_trail(
        [
            event(table_pb.TableClosing(operator_account_id="ops-3", reason="late"), "t1", 3),
            granted,
            granted,  # republished by the outbox relay: one action
            event(table_pb.TablePlayerSeated(seat=0, account_id="alice"), "t1", 1),
            event(
                table_pb.TableOpened(
                    table_id="t1", name="gold", seat_count=6, operator_account_id="ops-1"
                ),
                "t1",
                0,
                causation_id="ops-1/req-1",
            ),
        ]
    )
    assert [(e.operator, e.action, e.target) for e in trail] == [
        ("ops-1", "open-table", "t1"),
        ("ops-2", "grant", "alice"),
        ("ops-3", "close-table", "t1"),
    ]
    assert (
        trail[0]
        .line()
        .startswith("2026-12-01T09:00:00.000+00:00  ops-1  open-table  t1  name=gold")
    )
    assert trail[2].details == {"reason": "late"}
    # a person reads the money in tokens and the commission as a percent; --json (the details)
    # keeps integer hundredths and basis points
    assert "point_value=0.00 commission=0.00%" in trail[0].line()
    assert " amount=50.00 " in trail[1].line() and "hundredths" not in trail[1].line()
    assert trail[1].details["amount_hundredths"] == 5000


def test_a_table_opened_before_events_named_the_operator_takes_it_from_the_request_key() -> None:
    (entry,) = audit_trail(
        [event(table_pb.TableOpened(table_id="t0", seat_count=4), "t0", 0, "ops-old/req-9")]
    )
    assert entry.operator == "ops-old"


def test_a_players_change_of_its_own_limits_is_in_the_trail_beside_the_operators() -> None:
    changed = ledger_pb.LimitChanged(
        account_id="alice", change="raise_pending", what="day", amount_hundredths=9_000
    )
    changed.effective_at.FromDatetime(T0 + timedelta(hours=24))
    excluded = ledger_pb.LimitChanged(
        account_id="bob", change="excluded", what="self_exclusion", months=6
    )
    excluded.effective_at.FromDatetime(T0)
    trail = audit_trail([event(changed, "alice", 0), event(excluded, "bob", 1)])
    assert [(e.operator, e.action, e.target) for e in trail] == [
        ("alice", "limits-raise_pending", "alice"),
        ("bob", "limits-excluded", "bob"),
    ]
    assert trail[0].details == {
        "what": "day",
        "amount_hundredths": 9_000,
        "effective_at": "2026-12-02T09:00:00+00:00",
    }
    assert trail[1].details["months"] == 6
