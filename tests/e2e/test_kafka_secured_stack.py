"""The five services on a secured Kafka broker (issue 32): each connects over SASL_SSL as its own
principal (rummy_ops.stack's ``kafka_credentials``), with only the ACL table's grants
(rummy_platform.eventlog.kafka_acls), and a hand is still dealt, dropped and settled: every
service wrote its own topic and read what it consumes; ``rummy replay`` proves the hand reading
as ``ops`` (its ``RUMMY_KAFKA_*`` variables), and reaches nothing without them. The broker is the
session's own (``secure_kafka``), the database the shared one's.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import closing

import pytest

from rummy.dealer.v1 import events_pb2 as dealer_events
from rummy.ledger.v1 import events_pb2 as ledger_events
from rummy.table.v1 import events_pb2 as table_events
from rummy.table.v1 import table_service_pb2 as api
from rummy_ops.own_brokers import OwnBrokers
from rummy_platform.eventlog import KAFKA_SECURITY_VARIABLES
from rummy_platform.eventlog.kafka_acls import OPS_USER
from rummy_platform.topics import DEALER_EVENTS, LEDGER_EVENTS, TABLE_EVENTS
from rummy_testing.demo_runs import replay_once_settled, rummy_replay
from rummy_testing.players import Operator, Table, on_turn, operator_for, rule_set
from rummy_testing.players import seed_and_wait_for_play as wait_for_play
from rummy_testing.stacks import RunningStack, running_stack


@pytest.fixture(scope="module")
def secured_stack(secure_kafka: OwnBrokers, database_url: str) -> Iterator[RunningStack]:
    with running_stack(
        secure_kafka.kafka.address,
        database_url,
        "kafkasec",
        kafka_credentials=secure_kafka.kafka_credentials,
        grant=secure_kafka.grant_kafka,
    ) as running:
        yield running


def test_a_hand_is_dealt_dropped_and_settled_with_every_service_its_own_principal(
    secured_stack: RunningStack, secure_kafka: OwnBrokers
) -> None:
    with closing(operator_for(secured_stack)) as operator:
        table_id, hand_id = _drop_a_hand(operator, secured_stack)
    # Read back as ops: the table's, the dealer's and the ledger's streams of the table.
    kinds = {type(p) for p in secured_stack.payloads(TABLE_EVENTS, table_id)}
    assert {table_events.HandStarted, table_events.HandEnded} <= kinds
    assert any(
        isinstance(p, dealer_events.HandDealt)
        for p in secured_stack.payloads(DEALER_EVENTS, table_id)
    )
    assert any(
        isinstance(p, ledger_events.HandSettled)
        for p in secured_stack.payloads(LEDGER_EVENTS, table_id)
    )
    # `rummy replay` proves the hand reading as ops (the RUMMY_KAFKA_* variables); without them
    # its plaintext client gets no answer from the SASL_SSL listener.
    plain = {k: v for k, v in os.environ.items() if k not in KAFKA_SECURITY_VARIABLES}
    as_ops = {**plain, **secure_kafka.kafka_credentials.environment(OPS_USER)}
    code, doc, hands = replay_once_settled(secured_stack, table_id, as_ops, until_clean=True)
    assert code == 0 and doc["ok"], doc
    assert hand_id in {h["hand_id"] for h in hands} and all(h["ok"] for h in hands), hands
    refused = rummy_replay(secured_stack, table_id, plain)
    assert refused.returncode != 0
    unreached = f"Error: cannot reach Kafka at {secured_stack.kafka_bootstrap}"
    assert refused.stderr.startswith(unreached), refused.stderr


def _drop_a_hand(operator: Operator, stack: RunningStack) -> tuple[str, str]:
    """Two seats; the first on turn drops at once (a first drop, 20 points); both are settled.
    Returns the table's id and the hand's."""
    table = Table(operator, stack.endpoints.table, 2, 10, 500, rule_set())
    try:
        players = table.seated("sec", 2, grant=5000)
        view = wait_for_play(players)
        dropper = on_turn(players, view)
        dropper.drop(view.turn_no)
        other = next(p for p in players if p is not dropper)
        result = other.wait_phase(api.HAND_PHASE_ENDED).result
        hand_id = result.hand_id
        assert {r.account_id: (r.outcome, r.points) for r in result.results} == {
            dropper.account_id: ("first_drop", 20),
            other.account_id: ("won", 0),
        }
        # 20 points x 10 = 200; commission floor(200 x 500 / 10000) = 10; the winner gets 190.
        assert operator.settled_balances([dropper.account_id, other.account_id]) == {
            dropper.account_id: 4800,
            other.account_id: 5190,
        }
    finally:
        table.close()
    return table.table_id, hand_id
