"""One world in one process: the five services' application layers and domains as they ship, on
the in-memory event log (:class:`rummy_platform.eventlog.InMemoryEventLog`), the ledger's and
fairness's in-memory stores (the fakes their storage contract suites hold to PostgreSQL's
semantics), a virtual clock and one ``random.Random(seed)`` for everything that draws.

No thread, socket or sleep. Each consumer is the service's own sans-I/O consumer core
(:class:`rummy_platform.consumer_loop.RecordCore`, the object its
:class:`~rummy_platform.consumer_loop.ConsumerLoop` runs), fed one record at a time by a
:class:`Member` (the loop's poll and seeks, stepped by the scheduler):

- **table**: :class:`rummy_table.application.app.TableApp` behind its gRPC servicer
  (:class:`rummy_table.entrypoints.grpc.TableServicer`, called in-process with the caller's
  principal set, so every bot command goes through the table's decode path); its inputs
  (ledger, fairness, dealer, clock events) to the input loop's core
  (:func:`rummy_table.entrypoints.inputs.input_core`: ``TableApp.on_inputs``, facts and
  consumed offsets in one transaction); ``TableApp.tick`` starts hands;
- **dealer**: the service's reactor (``rummy_dealer.entrypoints.events.table_reactor``), its
  :class:`~rummy_platform.reactor.TransactionalCore` stepped (its loop never opened);
- **ledger**, **fairness**: ``PostgresReactor``'s core,
  :class:`~rummy_platform.consumer_loop.EachRecord`, whose unit is each reaction on the
  in-memory store with the offset the core gives (``PostgresReactor.handle`` runs on a psycopg
  pool: the one piece not run here), and an outbox relay step that publishes one row;
- **clock**: :class:`rummy_clock.application.deadlines.ClockApplication` behind the clock
  loop's core (:func:`rummy_clock.entrypoints.events.clock_core`), which also takes the
  catch-up at a start; a firing step publishes what is due at the virtual time.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

import grpc

from rummy.ledger.v1 import ledger_service_pb2 as ledger_api
from rummy_clock.application.deadlines import TABLE_EVENTS_USED, ClockApplication
from rummy_clock.entrypoints.events import clock_core
from rummy_dealer.application.dealing import Dealer
from rummy_dealer.entrypoints import events as dealer_entrypoint
from rummy_fairness.adapters.memory import InMemoryUnitOfWork as FairnessStore
from rummy_fairness.application.seeds import Fairness
from rummy_fairness.entrypoints import events as fairness_entrypoint
from rummy_game import stream_payloads
from rummy_ledger.adapters.memory import InMemoryUnitOfWork as LedgerStore
from rummy_ledger.application.reactions import Ledger
from rummy_ledger.entrypoints import events as ledger_entrypoint
from rummy_ledger.entrypoints.grpc import LedgerServicer
from rummy_platform.auth import Principal, Role, acting_as
from rummy_platform.backoff import KeyedBackoff
from rummy_platform.consumer_loop import EachRecord, RecordCore
from rummy_platform.envelope import Envelope, decode, event_payloads
from rummy_platform.eventlog import (
    CommitOutcomeUnknown,
    GroupCommitWriter,
    InMemoryEventLog,
    Record,
    TopicPartition,
    TransactionalWriter,
)
from rummy_platform.isolation import StreamIsolation
from rummy_platform.reactor import OUTAGES
from rummy_platform.topics import (
    CLOCK_EVENTS,
    DEALER_EVENTS,
    FAIRNESS_EVENTS,
    LEDGER_EVENTS,
    TABLE_EVENTS,
    event_topic_specs,
)
from rummy_table.application.app import TableApp
from rummy_table.application.commit import INPUT_GROUP
from rummy_table.entrypoints.grpc import TableServicer
from rummy_table.entrypoints.inputs import input_core
from rummy_table.entrypoints.views import player_view

#: The virtual clock's start (ms since the epoch): 2027-01-15.
T0_MS = 1_800_000_000_000
#: Partitions of every event topic in a world.
PARTITIONS = 2
TABLE_INPUTS = (LEDGER_EVENTS, FAIRNESS_EVENTS, DEALER_EVENTS, CLOCK_EVENTS)
OPERATOR = Principal("sim-operator", Role.OPERATOR)


class Draws:
    """Everything random in a world, drawn from one ``random.Random(seed)``: ids (UUID-shaped,
    version 4) and bytes (server seeds)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def uuid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def bytes(self, n: int) -> bytes:
        return self.rng.randbytes(n)


@dataclass
class VirtualClock:
    """The world's time, in ms since the epoch; it moves only when the scheduler advances it."""

    ms: int = T0_MS

    def now_ms(self) -> int:
        return self.ms

    def now(self) -> datetime:
        return stream_payloads.ms_to_datetime(self.ms)

    def seconds(self) -> float:
        """The time in seconds (a monotonic clock's reading, for backoffs)."""
        return self.ms / 1000


class SimRpcError(grpc.RpcError):
    """What a bot's call ends with when the servicer raised: the status the host's interceptor
    would end the call with (``rummy_platform.errors.status_for``) and its message."""

    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        super().__init__(details)
        self._code = code
        self._details = details

    def code(self) -> grpc.StatusCode:
        return self._code

    def details(self) -> str:
        return self._details


class HandlerParked(Exception):
    """A core parked a table: its handler raised something other than an outage of the log
    (the service would retry it after a backoff; in a world, a violation)."""


class Member:
    """One consumer of a group feeding the service's own consumer core
    (:class:`rummy_platform.consumer_loop.RecordCore`, the object the service's loop runs),
    stepped one record at a time: :meth:`pending` says which of its partitions have records,
    :meth:`deliver` reads the next record of one (others paused) and hands it to
    ``core.step`` (a record of a type the group does not consume is dropped by the log,
    undecoded, as on Kafka), then seeks back where the step says, as
    :meth:`ConsumerLoop.run_once` does. Resumes from the group's committed offsets, or
    ``resume``."""

    def __init__(
        self,
        log: InMemoryEventLog,
        group_id: str,
        topics: Sequence[str],
        types: frozenset[str] | None,
        core: RecordCore,
        resume: Mapping[TopicPartition, int] | None = None,
    ) -> None:
        given = dict(resume or {})
        self.consumer = log.consumer(
            group_id,
            topics,
            (lambda ps: {p: given[p] for p in ps if p in given}) if resume is not None else None,
            types=types,
        )
        self.core = core
        #: Where the last record handled lies (for a lost commit answer).
        self.last_handled: tuple[TopicPartition, int] | None = None
        self.partitions = sorted(
            (TopicPartition(t, p) for t in topics for p in range(PARTITIONS)),
            key=lambda tp: (tp.topic, tp.partition),
        )
        self.consumer.position(self.partitions[0])  # joined: its partitions granted

    def pending(self) -> list[TopicPartition]:
        """The partitions with records past the position (an aborted transaction's among them:
        a delivery passes over those)."""
        behind = self.consumer.lag()
        return [tp for tp in self.partitions if behind.get(tp, 0)]

    def deliver(self, partition: TopicPartition) -> list[Record]:
        """The next record of ``partition`` this group consumes (the ones of other types before
        it are passed over, as the consumer drops them by their header within one poll),
        handled; [] when only records of other types were left. Raises the step's error (an
        outage: the record is read again) or HandlerParked."""
        others = [tp for tp in self.partitions if tp != partition]
        self.consumer.pause(others)
        try:
            records: list[Record] = []
            while not records and self.consumer.lag().get(partition, 0):
                records = self.consumer.poll(0.0, max_records=1)
        finally:
            self.consumer.resume(others)
        if not records:
            return records
        step = self.core.step(records)
        # an outage (the commit failed or its outcome is unknown): the core says where to read
        # again (the record), the loop seeks there and raises
        for tp, offset in step.rewind.items():
            self.consumer.seek(tp, offset)
        if step.error is not None:
            raise step.error
        if self.core.isolation.parked:
            raise HandlerParked(f"parked tables {sorted(self.core.isolation.parked)}")
        self.last_handled = (partition, records[-1].offset)
        return records

    def rewind(self, stored: Mapping[TopicPartition, int]) -> None:
        """Read again from ``stored`` (0 where none is stored): a redelivery (as after a
        rebalance, the core forgets what it held, :meth:`StreamIsolation.reassigned`)."""
        self.core.isolation.reset()
        for tp in self.partitions:
            self.consumer.seek(tp, stored.get(tp, 0))

    def lose_last_answer(self) -> bool:
        """The last record's transaction committed but its answer was lost: the loop rewinds
        to that record and handles it again (at-least-once). False when none was handled."""
        if self.last_handled is None:
            return False
        self.consumer.seek(*self.last_handled)
        self.core.isolation.forget_from(*self.last_handled)
        self.last_handled = None
        return True

    def close(self) -> None:
        self.consumer.close()


class Service(Protocol):
    """What the scheduler steps of every service: its consumer, and the offsets it stored (where
    a redelivery reads from)."""

    inputs: Member

    def stored(self) -> dict[TopicPartition, int]: ...


class _Uncounted:
    """The table's metrics port, counting nothing (the simulator reads the log instead)."""

    def count_decision(self, command: object, outcome: str) -> None: ...
    def count(self, envelopes: Iterable[Envelope]) -> None: ...
    def tables_now(self, open_tables: int, seats_taken: int) -> None: ...
    def table_opened(self) -> None: ...
    def action_answered(self, action: object, seconds: float) -> None: ...
    def overdue_aborted(self, kind: object) -> None: ...
    def hand_start_failed(self) -> None: ...
    def snapshot_ignored(self, reason: str) -> None: ...
    def snapshot_written(self, size_bytes: int) -> None: ...


def all_records(log: InMemoryEventLog, topic: str) -> list[Record]:
    """Every committed record of ``topic``, partition by partition."""
    reader = log.consumer(f"sim-reader-{topic}", [topic], lambda ps: {p: 0 for p in ps})
    try:
        return reader.poll(0.0, max_records=10_000_000)
    finally:
        reader.close()


class TableService:
    """The table service: its app rebuilt from the table stream (as the service's start does),
    its servicer, and its input consumer (the input loop's core,
    ``entrypoints.inputs.input_core``)."""

    def __init__(self, world: World) -> None:
        log = world.log
        self.app = TableApp(
            GroupCommitWriter(log.transactional_writer("table-writer")),
            now_ms=world.clock.now_ms,
            new_hand_id=world.draws.uuid,
            new_event_id=world.draws.uuid,
            reread=lambda table_id: list(log.read_stream(TABLE_EVENTS, table_id)),
            read_stream=lambda table_id: [
                r.envelope for r in log.read_stream(TABLE_EVENTS, table_id)
            ],
            metrics=_Uncounted(),
            render_view=player_view,
            start_retries=KeyedBackoff(
                "starting a table's hand", first_s=0.5, cap_s=30.0, clock=world.clock.seconds
            ),
        )
        self.app.replay(all_records(log, TABLE_EVENTS))
        self.servicer = TableServicer(self.app)
        self.inputs = Member(log, INPUT_GROUP, TABLE_INPUTS, None, input_core(self.app))

    def stored(self) -> dict[TopicPartition, int]:
        return _committed(self.inputs)

    def call(self, account_id: str, rpc: str, request: Any, *, operator: bool = False) -> Any:
        """One RPC of a player (an operator with ``operator``), in-process: the servicer's method
        with the caller's principal set (no context: the table's unary methods use none).
        Raises SimRpcError as the host's interceptor would end the call."""
        role = Role.OPERATOR if operator else Role.PLAYER
        return _call(getattr(self.servicer, rpc), Principal(account_id, role), request)


def _committed(member: Member) -> dict[TopicPartition, int]:
    """The offsets the member's group committed (in the transactions of its outputs)."""
    out = {}
    for tp in member.partitions:
        offset = member.consumer.committed(tp)
        if offset is not None:
            out[tp] = offset
    return out


def _call(method: Callable[[Any, Any], Any], principal: Principal, request: Any) -> Any:
    from rummy_platform.errors import ServiceError, status_for

    try:
        with acting_as(principal):
            return method(request, None)
    except ServiceError as error:
        raise SimRpcError(status_for(error), str(error)) from error


class DealerService:
    """The dealer: its reactor's core (``TransactionalCore``: each input's outputs appended with
    its offset in one transaction, the stream versions forgotten on an abort); the seeds asked
    of fairness's application (the gRPC ``GetServerSeed``/``GetProof`` in the service)."""

    def __init__(self, world: World) -> None:
        self._world = world
        self.versions = _LogVersions(world.log, DEALER_EVENTS)
        self.dealer = Dealer(_FairnessSeeds(world), self.versions, clock=world.clock.now)
        writer = world.log.transactional_writer("dealer")
        # the service's reactor, built as its bootstrap builds it; its core is what is stepped
        # (the reactor's own loop, which would poll, is never opened)
        reactor = dealer_entrypoint.table_reactor(
            world.log, writer, self.dealer, self.versions.forget
        )
        self.inputs = Member(
            world.log,
            reactor.group_id,
            [TABLE_EVENTS],
            frozenset(dealer_entrypoint.handlers(self.dealer)),
            reactor.core,
        )

    def stored(self) -> dict[TopicPartition, int]:
        return _committed(self.inputs)


class _LogVersions:
    """The dealer's next stream version of a table in dealer-events, counted from the log (what
    ``rummy_dealer.adapters.stream_versions`` does on Kafka); :meth:`forget` after an abort."""

    def __init__(self, log: InMemoryEventLog, topic: str) -> None:
        self._log, self._topic = log, topic
        self._last: dict[str, int] = {}

    def next(self, stream_id: str) -> int:
        if stream_id not in self._last:
            versions = [
                r.envelope.stream_version for r in self._log.read_stream(self._topic, stream_id)
            ]
            self._last[stream_id] = max(versions, default=0)
        self._last[stream_id] += 1
        return self._last[stream_id]

    def forget(self) -> None:
        self._last.clear()


class _FairnessSeeds:
    """The dealer's seed source, answered by fairness's application on its store."""

    def __init__(self, world: World) -> None:
        self._world = world

    def server_seed(self, hand_id: str) -> bytes:
        fairness = self._world.fairness
        return fairness.fairness.get_server_seed(self._world.fairness_store, hand_id)

    def locked_client_seeds(self, hand_id: str) -> Sequence[tuple[int, bytes]]:
        fairness = self._world.fairness
        return fairness.fairness.get_proof(self._world.fairness_store, hand_id).client_seeds


class _StoreReactor:
    """The ledger's and fairness's consumer: ``PostgresReactor``'s core
    (:class:`rummy_platform.consumer_loop.EachRecord`, with the reactor's outages), whose unit
    is each record's reaction in one transaction of the in-memory store with the offset the core
    gives stored in it. (``PostgresReactor.handle`` itself runs on a psycopg pool: its unit is
    the one piece not run here.)"""

    group: str
    reactions: Mapping[str, Callable[[Any, Envelope], None]]

    def _join(self, log: InMemoryEventLog, store: Any) -> Member:
        return Member(
            log,
            self.group,
            [TABLE_EVENTS],
            frozenset(self.reactions),
            EachRecord(
                StreamIsolation(self.group),
                lambda record, offset: self._react(store, record, offset),
                outages=OUTAGES,
            ),
            resume=self.stored(),
        )

    def _react(self, store: Any, record: Record, offset: int) -> None:
        with store.transaction():
            self.reactions[record.envelope.type](store, record.envelope)
            self._store_offset(record, offset)

    def _store_offset(self, record: Record, offset: int) -> None:
        raise NotImplementedError

    def stored(self) -> dict[TopicPartition, int]:
        """The offsets stored with the last records' effects (where a restart resumes)."""
        raise NotImplementedError


class LedgerService(_StoreReactor):
    """The ledger: its reactions (``entrypoints.events.reactions``) on the in-memory unit of work
    (the store outlives a crash), its servicer for the operator's grants."""

    group = "ledger"

    def __init__(self, world: World) -> None:
        self._store = world.ledger_store
        self.ledger = world.ledger_type(clock=world.clock.now)
        self.reactions = ledger_entrypoint.reactions(self.ledger)
        self.servicer = LedgerServicer(self.ledger, self._store)
        self.inputs = self._join(world.log, self._store)

    def _store_offset(self, record: Record, offset: int) -> None:
        self._store.offsets.store(self.group, record.topic, record.partition, offset)

    def stored(self) -> dict[TopicPartition, int]:
        return {
            TopicPartition(t, p): o
            for (t, p), o in self._store.offsets.next_offsets(self.group).items()
        }

    def grant(self, account_id: str, amount_hundredths: int, key: str) -> None:
        request = ledger_api.GrantRequest(
            account_id=account_id, amount_hundredths=amount_hundredths, idempotency_key=key
        )
        _call(self.servicer.Grant, OPERATOR, request)


class FairnessService(_StoreReactor):
    """Fairness: its reactions (``entrypoints.events.reactions``) on the in-memory store (which
    outlives a crash), server seeds drawn from the world's random source (the OS's CSPRNG in the
    service); its stored offsets (``consumer_offsets`` in its schema) kept beside the store."""

    group = "fairness"

    def __init__(self, world: World) -> None:
        self._world = world
        self.fairness = Fairness(
            seed_source=lambda _hand: world.draws.bytes(32), clock=world.clock.now
        )
        self.reactions = fairness_entrypoint.reactions(self.fairness)
        self.inputs = self._join(world.log, world.fairness_store)

    def _store_offset(self, record: Record, offset: int) -> None:
        self._world.fairness_offsets[TopicPartition(record.topic, record.partition)] = offset

    def stored(self) -> dict[TopicPartition, int]:
        return dict(self._world.fairness_offsets)


class ClockService:
    """The clock: its application behind the clock loop's core; on a start the core reads both
    topics to their ends before anything fires (the clock loop's catch-up), here from offset 0,
    then takes the table events live."""

    def __init__(self, world: World) -> None:
        self._world = world
        self.app = ClockApplication()
        self.writer: TransactionalWriter = world.log.transactional_writer("clock")
        self._live = False
        core = clock_core(self.app, table_topic=TABLE_EVENTS, live=lambda: self._live)
        # the catch-up: both topics to their ends through the core (firings read back not live)
        core.step(all_records(world.log, TABLE_EVENTS) + all_records(world.log, CLOCK_EVENTS))
        if core.isolation.parked:
            raise HandlerParked(f"clock catch-up parked tables {sorted(core.isolation.parked)}")
        self.app.caught_up(range(PARTITIONS))
        self._live = True
        ends = world.log.end_offsets(TopicPartition(TABLE_EVENTS, p) for p in range(PARTITIONS))
        self.inputs = Member(
            world.log,
            "clock",
            [TABLE_EVENTS],
            TABLE_EVENTS_USED,
            core,
            resume=ends,
        )

    def fire(self) -> list[Envelope]:
        """Publish what is due at the virtual time (one transaction); the firings."""
        now = self._world.clock.now()
        due = self.app.due(now)
        if not due:
            return []
        envelopes = [self.app.publication(d) for d in due]
        positions = self.writer.append_batch([(CLOCK_EVENTS, e) for e in envelopes])
        self.app.published(due, [p.offset for p in positions], now)
        return envelopes

    def stored(self) -> dict[TopicPartition, int]:
        return {}


@dataclass
class World:
    """A whole system for one seed. ``ledger_type``: the ledger's application, the real one but
    in a test of a planted bug (``rummy_sim.planted``, wrapping the real one)."""

    seed: int
    ledger_type: type[Ledger] = Ledger
    rng: random.Random = field(init=False)
    draws: Draws = field(init=False)
    clock: VirtualClock = field(default_factory=VirtualClock)
    log: InMemoryEventLog = field(default_factory=InMemoryEventLog)
    ledger_store: LedgerStore = field(init=False)
    fairness_store: FairnessStore = field(init=False)
    fairness_offsets: dict[TopicPartition, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)
        self.draws = Draws(self.rng)
        self.log.ensure_topics(event_topic_specs(partitions=PARTITIONS))
        self.ledger_store = LedgerStore(clock=self.clock.now)
        self.fairness_store = FairnessStore(clock=self.clock.now)
        self.table = TableService(self)
        self.fairness = FairnessService(self)
        self.dealer = DealerService(self)
        self.ledger = LedgerService(self)
        self.clock_service = ClockService(self)

    def service(self, name: str) -> Service:
        """The service called ``name`` (one of ``rummy_platform.ports.SERVICES``)."""
        services: dict[str, Service] = {
            "table": self.table,
            "dealer": self.dealer,
            "ledger": self.ledger,
            "fairness": self.fairness,
            "clock": self.clock_service,
        }
        return services[name]

    def restart(self, name: str) -> None:
        """Crash ``name`` and start it again: its memory is lost, it is rebuilt from the log and
        its store as the real one is at its start."""
        old = self.service(name)
        old.inputs.close()
        if name == "table":
            self.table = TableService(self)
        elif name == "dealer":
            self.dealer = DealerService(self)
        elif name == "ledger":
            self.ledger = LedgerService(self)
        elif name == "fairness":
            self.fairness = FairnessService(self)
        else:
            self.clock_service = ClockService(self)

    def lose_answer(self, name: str) -> None:
        """``name``'s store committed its last record's transaction but the answer was lost
        (a dropped connection at COMMIT): it handles the record again. The simulator calls the
        reactions without the reactor's ``processed_events`` guard, so the redelivery reaches
        the application's own idempotency (stricter than the service)."""
        self.service(name).inputs.lose_last_answer()

    def lose_commit(self, writer: str, *, landed: bool) -> None:
        """The next transaction of ``writer`` (``table-writer``, ``dealer``, ``clock``) is sent
        but its outcome never confirmed (``CommitOutcomeUnknown``): ``landed`` or not."""
        self.log.fail_next_commit(
            CommitOutcomeUnknown(f"{writer}: commit outcome lost (simulated)"),
            written=landed,
            transactional_id=writer,
        )

    def redeliver(self, name: str) -> None:
        """``name``'s consumer reads again from its last stored offsets (a rebalance or a
        restart of the consumer without losing the service's memory)."""
        service = self.service(name)
        service.inputs.rewind(service.stored())

    def log_contents(self) -> list[tuple[str, list[tuple[int, bytes]]]]:
        """Every committed record's bytes, by topic and partition (``topic/partition``)."""
        out = []
        for topic in sorted({TABLE_EVENTS, *TABLE_INPUTS}):
            for p in range(PARTITIONS):
                records = self.log.committed_values(TopicPartition(topic, p))
                out.append((f"{topic}/{p}", records))
        return out

    # -- outbox relays ----------------------------------------------------------------------

    def relay_pending(self) -> list[str]:
        """The services with an outbox row waiting to be published."""
        out = []
        if self.ledger_store.outbox.unpublished(1):
            out.append("ledger")
        if self.fairness_store.outbox.unpublished():
            out.append("fairness")
        return out

    def relay(self, name: str) -> Envelope:
        """Publish the oldest unpublished row of ``name``'s outbox and mark it published (the
        platform's ``OutboxRelay``, one row)."""
        if name == "ledger":
            row = self.ledger_store.outbox.unpublished(1)[0]
            envelope = decode(bytes(row.payload), event_payloads())
            self.log.append(row.topic, envelope)
            self.ledger_store.outbox.mark_published([row.event_id])
            return envelope
        state = self.fairness_store.state
        topic, envelope = next((t, e) for t, e in state.outbox if e.event_id not in state.published)
        self.log.append(topic, envelope)
        state.published.add(envelope.event_id)
        return envelope
