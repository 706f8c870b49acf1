"""Helpers shared by the ledger tests (not fixtures: plain functions)."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import TypeVar

import grpc
import pytest
from google.protobuf.message import Message
from prometheus_client import CollectorRegistry
from psycopg_pool import ConnectionPool

from rummy.ledger.v1 import ledger_service_pb2_grpc as pb_grpc
from rummy_ledger.adapters.postgres import PostgresUnitOfWork
from rummy_ledger.application.accounts import get_balance, grant
from rummy_ledger.application.ports import Counters, LedgerUnitOfWork
from rummy_ledger.application.reactions import Ledger
from rummy_ledger.domain.accounts import Grant
from rummy_ledger.entrypoints import events
from rummy_ledger.entrypoints import grpc as grpc_adapter
from rummy_platform.auth import Role, authorized_channel
from rummy_platform.config import Settings
from rummy_platform.envelope import Envelope, decode, event_payloads
from rummy_platform.eventlog import InMemoryEventLog
from rummy_platform.limits import open_channel
from rummy_platform.outbox import OutboxRelay
from rummy_platform.reactor import PostgresReactor
from rummy_platform.server import ServiceHost
from rummy_platform.topics import LEDGER_EVENTS, TABLE_EVENTS, event_topic_specs
from rummy_rules.registry import lookup
from rummy_rules.rules import RuleSet
from rummy_testing.token_keys import issuer_authority, token_settings

RULES, SHUFFLE = "indian13-points/1", "bb-shuffle-v1"

#: The variant whose settlements these tests post (the ledger itself knows no variant).
VARIANT = "indian-points"


def house_rule_set(seats: int, point_value_hundredths: int, commission_bps: int) -> RuleSet:
    """The house rule set of :data:`VARIANT` for ``seats`` seats, found as a host finds it."""
    return lookup(VARIANT).house_rule_set(seats, point_value_hundredths, commission_bps)


def new_id(prefix: str) -> str:
    """A unique id, so tests sharing a module's database never see each other's rows."""
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def storage(where: LedgerUnitOfWork | ConnectionPool) -> LedgerUnitOfWork:
    """The unit of work itself, or the PostgreSQL one on a pool."""
    return PostgresUnitOfWork(where) if isinstance(where, ConnectionPool) else where


def funded_player(where: LedgerUnitOfWork | ConnectionPool, amount_hundredths: int) -> str:
    """A new player account granted ``amount_hundredths`` by an operator."""
    account = new_id("player")
    grant(storage(where), Grant("operator-1", account, amount_hundredths, new_id("grant")))
    return account


def balance_of(where: LedgerUnitOfWork | ConnectionPool, account: str) -> tuple[int, int, int]:
    """``(balance, reserved, available)`` in hundredths."""
    b = get_balance(storage(where), account)
    return b.balance_hundredths, b.reserved_hundredths, b.available_hundredths


Where = LedgerUnitOfWork | ConnectionPool


class TestClock:
    """An advanceable clock (UTC) for the ledger: starts at ``at`` or now."""

    __test__ = False

    def __init__(self, at: datetime | None = None) -> None:
        self.at = at or datetime.now(UTC)

    def __call__(self) -> datetime:
        return self.at

    def advance(self, by: timedelta) -> None:
        self.at += by


def wall_clock() -> datetime:
    """The system clock in UTC (the tests' clock when they do not move time)."""
    return datetime.now(UTC)


class Wired:
    """The ledger's reactions and outbox over an in-memory log; the test plays the table."""

    def __init__(self, where: Where, clock: TestClock | None = None) -> None:
        self.clock = clock or TestClock()
        self.prefix = new_id("t") + "-"
        self.log = InMemoryEventLog()
        self.log.ensure_topics(event_topic_specs(partitions=1, prefix=self.prefix))
        self.counted: list[str] = []
        counters = Counters(
            reservation=self.counted.append,
            settlement=lambda c: self.counted.append(f"settled {c}"),
            settlement_refused=lambda: self.counted.append("settlement refused"),
            refused=lambda t: self.counted.append(f"refused {t}"),
            match_hold=lambda purpose, outcome: self.counted.append(f"{purpose} {outcome}"),
            match_settlement=lambda p, c: self.counted.append(f"{p} settled {c}"),
            match_settlement_refused=lambda p: self.counted.append(f"{p} settlement refused"),
            match_aborted=lambda: self.counted.append("match aborted"),
            limit_refusal=lambda reason: self.counted.append(f"limit {reason}"),
        )
        self.ledger = Ledger(clock=self.clock, topic=self.prefix + LEDGER_EVENTS, counters=counters)
        self.versions: dict[str, int] = {}
        self.pool: ConnectionPool | None = None
        if isinstance(where, ConnectionPool):
            self.pool = where
            self.reactor: PostgresReactor = events.table_reactor(
                self.log,
                where,
                self.ledger,
                topic=self.prefix + TABLE_EVENTS,
                group_id=self.prefix + "ledger",
            )
            self.relay: OutboxRelay = OutboxRelay(where, self.log)
        else:
            self.uow = where
            self.handled: dict[str, int] = {}  # table id -> records handled
            self.reactions = events.reactions(self.ledger)

    def table(self, table_id: str, hand_id: str, payload: Message) -> Envelope:
        """Append a table event (correlation id ``hand_id``: a hand's, or a match's id)."""
        self.versions[table_id] = self.versions.get(table_id, 0) + 1
        envelope = Envelope.new(
            payload,
            stream_id=table_id,
            stream_version=self.versions[table_id],
            occurred_at=self.clock(),
            correlation_id=hand_id,
            rules_version=RULES,
            shuffle_version=SHUFFLE,
        )
        self.log.append(self.prefix + TABLE_EVENTS, envelope)
        return envelope

    def run(self) -> list[Envelope]:
        """Consume everything appended, publish the outbox; the ledger-events published."""
        if self.pool is not None:
            while self.reactor.run_once(0.05):
                pass
            while self.relay.publish_pending():
                pass
        else:
            self._run_in_memory()
        return [
            r.envelope
            for table in self.versions
            for r in self.log.read_stream(self.prefix + LEDGER_EVENTS, table)
        ]

    def _run_in_memory(self) -> None:
        for table in self.versions:
            records = self.log.read_stream(self.prefix + TABLE_EVENTS, table)
            for record in records[self.handled.get(table, 0) :]:
                reaction = self.reactions.get(record.envelope.type)
                if reaction is None:
                    continue  # the reactor drops other types undecoded
                with self.uow.transaction():
                    reaction(self.uow, record.envelope)
            self.handled[table] = len(records)
        with self.uow.transaction():
            rows = self.uow.outbox.unpublished()
            for row in rows:
                self.log.append(row.topic, decode(row.payload, event_payloads()))
            self.uow.outbox.mark_published([row.event_id for row in rows])

    def next_offsets(self) -> dict[tuple[str, int], int]:
        assert self.pool is not None
        uow = PostgresUnitOfWork(self.pool)
        with uow.transaction():
            return uow.offsets.next_offsets(self.prefix + "ledger")


class ServedLedger:
    """The ledger's servicer in a real ServiceHost in-process (not started), on ``uow`` with
    ``clock``; :meth:`stub` calls it with a token of ``subject`` and ``role``."""

    def __init__(self, uow: LedgerUnitOfWork, clock: TestClock) -> None:
        self.clock, self.uow = clock, uow
        settings = Settings(**token_settings(), grpc_port=0, metrics_port=0)
        self.host = ServiceHost("ledger", settings, registry=CollectorRegistry())
        self.host.add_servicer(
            grpc_adapter.add_to_server,
            grpc_adapter.LedgerServicer(Ledger(clock=clock), uow),
            grpc_adapter.SERVICE_NAME,
        )

    def stub(self, subject: str, role: Role = Role.PLAYER) -> pb_grpc.LedgerServiceStub:
        token = issuer_authority().issue(subject, role)
        return pb_grpc.LedgerServiceStub(authorized_channel(open_channel(self.host.address), token))


S = TypeVar("S", bound=ServedLedger)


@contextmanager
def serving(served: S) -> Iterator[S]:
    """``served`` started, stopped at the end."""
    served.host.start()
    try:
        yield served
    finally:
        served.host.stop(grace_seconds=1)


def status_of(call: Callable[[], object]) -> grpc.StatusCode:
    """The status code of the ``grpc.RpcError`` that ``call`` raises."""
    with pytest.raises(grpc.RpcError) as error:
        call()
    return error.value.code()
