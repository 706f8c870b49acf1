"""The one commit path of the table service's handlers, and the state they share (the
projection, the writer, the settings: :class:`TableCore`). The handlers are plain functions in the
modules beside it, one per group of use cases, each taking the core; every write of theirs goes
through :meth:`TableCore.act` (a client's command), :meth:`TableCore.hand_action` (a command on
the current hand) or, for the tick and the inputs, :meth:`TableCore.commit` under the table's
lock; :class:`~rummy_table.application.app.TableApp` names each RPC's handler.

Every write follows one path (:meth:`TableCore.commit`), under the table's command lock (one
lock per table, :meth:`Projection.command_lock`): decide (pure, on the table), append the
payloads as envelopes through the instance's one fenced writer (with the consumed offset, for an
input from another service), fold them into the projection, then answer. The writer is a
:class:`~rummy_platform.eventlog.GroupCommitWriter` in the service: the commands of every table
that has something ready share one Kafka transaction, so tables proceed in parallel while each
table's commands stay in order; reads take only the projection's short in-memory lock and never
wait for a write. A rejected command raises a ``rummy_platform.errors`` error (or a
``RuleViolation``, mapped by the gRPC adapter) and appends nothing. A failed transaction fails
exactly its commands (UNAVAILABLE, nothing appended); one whose commit was not confirmed
(CommitOutcomeUnknown) marks its table to be re-read from the log before its next command, so a
retry with the same request id gets the first answer when the commit did land.

Idempotency: a player's or operator's command is recorded with
``causation_id = "<account>/<client_request_id>"`` and ``request_digest`` (its RPC and body,
:func:`rummy_platform.envelope.request_digest`, computed at the edge from the request as it came
and carried by the command) on every event it produced; a retried id with the
same digest is answered from those events (the maps are rebuilt on replay and kept in the
snapshots), one with another digest (another RPC, table or body) is ALREADY_EXISTS; both within the
table's window of its last :data:`~rummy_table.application.answers.ANSWER_WINDOW` commands and
inputs (:mod:`.answers`). An input from another service is recorded with ``causation_id`` = its
event id and is dropped when seen again (within that window; an older one is refused by the
rules or by the recorded reveal and settlement).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from google.protobuf.message import Message

from rummy_game import stream_payloads
from rummy_platform.backoff import KeyedBackoff
from rummy_platform.envelope import Envelope
from rummy_platform.errors import (
    AlreadyExists,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    ServiceError,
    Unavailable,
)
from rummy_platform.eventlog import (
    CommitOutcomeUnknown,
    EventLogError,
    Position,
    Record,
    TopicPartition,
    TransactionalWriter,
    WriterFenced,
)
from rummy_platform.logging import get_logger, log_context
from rummy_platform.topics import TABLE_EVENTS
from rummy_rules import commands as rc
from rummy_rules.errors import RuleViolation
from rummy_rules.rules import (
    DEFAULT_MAX_RESERVATION_HUNDREDTHS,
    RuleSetError,
)
from rummy_rules.shuffle import SHUFFLE_VERSION
from rummy_table.domain import closing
from rummy_table.domain.errors import BadRequest, NotPermitted, TableRefused, WrongState
from rummy_table.domain.table import Fact

from . import commands as c
from .held_table import HeldTable
from .ownership import Ownership
from .ports import Action, Metrics, ViewRenderer
from .projection import Projection
from .results import TableSummary
from .seat_limits import SeatLimits

_log = get_logger(__name__)
#: The consumer group of the table's inputs (ledger, fairness, dealer, clock events).
INPUT_GROUP = "table"
#: How long (seconds, before the clock speed) a hand may wait for another service's answer.
DEFAULT_SERVICE_DEADLINE_SECONDS = 60


@dataclass
class TableCore:
    """What every handler works with (the projection, the writer, the settings) and the one
    commit path; the handlers are :class:`~rummy_table.application.app.TableApp`'s.
    ``now_ms``: the clock (ms since the epoch); ``speed``: how many times faster than real time
    start delays pass (``RUMMY_CLOCK_SPEED``, shared with the clock service);
    ``max_reservation_hundredths``: the most a table may reserve per seat and hand (max loss x
    point value), checked when a table is opened (``RUMMY_TABLE_MAX_RESERVATION_HUNDREDTHS``);
    ``service_deadline_seconds``: how long a hand may wait for another service's answer before
    the tick aborts it (``RUMMY_TABLE_SERVICE_DEADLINE_SECONDS``; wall-clock seconds, not
    divided by ``speed``: an outage of another service lasts real time)."""

    writer: TransactionalWriter
    projection: Projection = field(default_factory=Projection)
    now_ms: Callable[[], int] = field(default=lambda: int(time.time() * 1000))
    new_hand_id: Callable[[], str] = field(default=lambda: str(uuid.uuid4()))
    #: The event id of each envelope the table writes (a random UUID; the simulator draws it
    #: from its seed).
    new_event_id: Callable[[], str] = field(default=lambda: str(uuid.uuid4()))
    speed: float = 1.0
    max_reservation_hundredths: int = DEFAULT_MAX_RESERVATION_HUNDREDTHS
    service_deadline_seconds: int = DEFAULT_SERVICE_DEADLINE_SECONDS
    topic: str = TABLE_EVENTS
    input_group: str = INPUT_GROUP
    #: What it counts (``rummy_table.adapters.metrics.TableMetrics`` in the service).
    metrics: Metrics = field(kw_only=True)
    #: The caller's view of a table, built by the edge under the projection's lock (what
    #: :meth:`view_after` answers: ``rummy_table.entrypoints.views.player_view`` in the service).
    render_view: ViewRenderer = field(kw_only=True)
    #: A table's whole stream read back from the log (for a table whose last commit's outcome
    #: is unknown); None: such a table answers UNAVAILABLE until the instance restarts.
    reread: Callable[[str], Sequence[Envelope | Record]] | None = None
    #: The input consumer's group membership now (KIP-447 fencing of the offsets committed).
    input_group_metadata: Callable[[], object | None] = field(default=lambda: None)
    #: Tables whose hands start in parallel at most.
    start_workers: int = 16
    fenced: bool = False
    #: A table's stream, oldest first (``GetHandProof``); None: proofs are Unavailable here.
    read_stream: Callable[[str], list[Envelope]] | None = None
    #: A table's stream from an offset of its partition on (the results and proofs of hands
    #: no longer in memory are read from their HandStarted on); None: ``read_stream`` is used.
    read_stream_from: Callable[[str, int], list[Envelope]] | None = None
    #: Tables whose last commit's outcome is unknown (re-read before their next command).
    unsure: set[str] = field(default_factory=set)
    _pool: ThreadPoolExecutor | None = field(default=None, repr=False)
    #: The partitions this instance serves (None: every table, a single instance without a
    #: consumer group, as in unit tests). With it, every command on a table of another
    #: partition is refused (NotOwner, naming the owner) and every transaction carries the group
    #: metadata of the generation that granted the table's partition.
    ownership: Ownership | None = None
    #: The tables the other instances serve, for ListTables (``limit``, ``after``,
    #: ``include_closed`` as :meth:`list_tables`); None: only this instance's.
    peer_tables: Callable[[int | None, str | None, bool], list[TableSummary]] | None = None
    #: The ledger's check of a player's own limits before a seat is taken
    #: (:mod:`.seat_limits`; bootstrap sets it when the ledger's address is configured).
    seat_limits: SeatLimits | None = None
    #: When a table whose hand start failed is tried again (0.5 s, doubling, at most 30 s).
    start_retries: KeyedBackoff = field(
        default_factory=lambda: KeyedBackoff("starting a table's hand", first_s=0.5, cap_s=30.0)
    )

    def __post_init__(self) -> None:
        if self.projection.on_decision is None:
            self.projection.on_decision = self.metrics.count_decision

    def replay(self, envelopes: Iterable[Envelope | Record]) -> int:
        """Rebuild every table from its stream (in stream order per table; a Record also
        gives where the envelope lies); returns the count."""
        n = 0
        for item in envelopes:
            if isinstance(item, Record):
                self.projection.apply(item.envelope, item.partition, item.offset)
            else:
                self.projection.apply(item)
            n += 1
        self.count_tables()
        return n

    def count_tables(self) -> None:
        """Set the tables-open and seats-taken gauges from the projection (after a rebuild)."""
        with self.projection.lock:
            tables = self.projection.tables.values()
            self.metrics.tables_now(
                sum(not t.closed for t in tables), sum(len(t.seats) for t in tables)
            )

    def drop_partitions(self, partitions: frozenset[int]) -> int:
        """Forget the tables of ``partitions`` (revoked: another instance serves them now),
        with their request answers; their WatchTable streams end (clients follow the table to
        its new owner). Returns how many tables were dropped."""
        if self.ownership is None:
            return 0
        with self.projection.lock:
            gone = [
                t for t in self.projection.tables if self.ownership.partition_of(t) in partitions
            ]
            self.projection.drop(gone)
            for table_id in gone:
                self.unsure.discard(table_id)
        self.count_tables()
        return len(gone)

    def _owns(self, table_id: str) -> bool:
        """True unless another instance serves ``table_id``."""
        return self.ownership is None or self.ownership.owns_table(table_id)

    def _check_owner(self, table_id: str) -> None:
        """Raise NotOwner when another instance serves ``table_id``."""
        if self.ownership is not None and table_id:
            self.ownership.check(table_id)

    def _append(
        self,
        envelopes: Sequence[Envelope],
        table_id: str,
        consumed: dict[TopicPartition, int] | None = None,
    ) -> list[Position]:
        """Append ``envelopes`` of ``table_id`` (and ``consumed`` offsets) through the group
        writer; returns where they landed. Raises Unavailable once fenced, EventLogError if the
        transaction failed (nothing appended) or CommitOutcomeUnknown (``table_id`` is then
        re-read from the log before its next command)."""
        if self.fenced:
            raise Unavailable("this table-service instance was replaced; retry on the new one")
        metadata = self.input_group_metadata() if consumed else None
        if self.ownership is not None:
            # Every transaction carries the generation that granted the table's partition: once
            # the group moved on, the broker refuses it (KIP-447) and nothing is appended. A
            # command of a player consumed nothing: it commits the partition's table-events
            # offset it rebuilt or wrote up to, which moves no input.
            partition = self.ownership.partition_of(table_id)
            metadata = self.ownership.metadata_for(table_id)
            consumed = {
                TopicPartition(self.topic, partition): self.ownership.end_of(partition),
                **(consumed or {}),
            }
        try:
            positions = self.writer.append_batch(
                [(self.topic, e) for e in envelopes],
                consumed=consumed,
                group_id=self.input_group if consumed else None,
                group_metadata=metadata,
            )
        except WriterFenced:
            self.fenced = True
            _log.error("table writer fenced: this instance stops writing", table_id=table_id)
            raise Unavailable(
                "this table-service instance was replaced; retry on the new one"
            ) from None
        except CommitOutcomeUnknown:
            with self.projection.lock:
                self.unsure.add(table_id)
            _log.warning("commit outcome unknown: the table is re-read first", table_id=table_id)
            raise
        if self.ownership is not None and positions:
            last = positions[-1]
            self.ownership.wrote(last.partition, last.offset + 1)
        return positions

    def commit(
        self,
        table: HeldTable,
        facts: Sequence[Fact],
        at_ms: int,
        causation_id: str = "",
        consumed: dict[TopicPartition, int] | None = None,
        request_digest: str = "",
    ) -> list[Envelope]:
        """Append the payloads of ``facts`` (:meth:`HeldTable.payloads_of`; and, at a closing
        table whose hand they end, the seats' exits and TableClosed) as the next envelopes of
        ``table`` (its command lock held) and fold them. Raises as :meth:`_append`."""
        facts = [*facts, *closing.follow_up(table, facts, at_ms)]
        correlation = table.correlation_ids(facts)
        payloads = table.payloads_of(facts)
        occurred = stream_payloads.ms_to_datetime(at_ms)
        envelopes = [
            Envelope.new(
                payload,
                stream_id=table.table_id,
                stream_version=table.version + i + 1,
                occurred_at=occurred,
                correlation_id=correlation[i],
                causation_id=causation_id,
                rules_version=f"{table.rule_set.name}/{table.rule_set.version}",
                shuffle_version=SHUFFLE_VERSION,
                request_digest=request_digest,
                event_id=self.new_event_id(),
            )
            for i, payload in enumerate(payloads)
        ]
        positions = self._append(envelopes, table.table_id, consumed)
        self._fold(envelopes, positions)
        self.metrics.count(envelopes)
        return envelopes

    def _fold(self, envelopes: Sequence[Envelope], positions: Sequence[Position]) -> None:
        """Fold freshly appended ``envelopes`` (landed at ``positions``, when the writer says)."""
        where = [(p.partition, p.offset) for p in positions]
        if len(where) != len(envelopes):
            where = [(-1, -1)] * len(envelopes)
        self.projection.apply_all(
            (envelope, partition, offset)
            for envelope, (partition, offset) in zip(envelopes, where, strict=True)
        )

    @contextmanager
    def _command(self, table_id: str, *, opening: bool = False) -> Iterator[HeldTable | None]:
        """Hold ``table_id``'s command lock; yields its table (None if there is none), re-read
        from the log first when its last commit's outcome was unknown. No lock is made for an
        unknown id unless ``opening`` (ids from requests cost nothing). Raises EventLogError if
        the re-read fails (the table stays to be re-read)."""
        with refusals_as_statuses():
            if self.ownership is not None:
                with (
                    self.ownership.serving(table_id),
                    self._owned_command(table_id, opening) as table,
                ):
                    yield table
            else:
                with self._owned_command(table_id, opening) as table:
                    yield table

    @contextmanager
    def _owned_command(self, table_id: str, opening: bool) -> Iterator[HeldTable | None]:
        with self.projection.lock:
            known = table_id in self.projection.tables or table_id in self.unsure
        if not known and not opening:
            yield None
            return
        with self.projection.command_lock(table_id):
            with self.projection.lock:
                unsure = table_id in self.unsure
            if unsure:
                self._reread(table_id)
            with self.projection.lock:
                table = self.projection.tables.get(table_id)
            yield table

    def _reread(self, table_id: str) -> None:
        if self.reread is None:
            raise EventLogError(f"table {table_id} must be re-read and no log reader is set")
        before = self.projection.tables.get(table_id)
        table = self.projection.rebuild(table_id, self.reread(table_id))
        with self.projection.lock:
            self.unsure.discard(table_id)
        _log.warning(
            "table re-read from the log after a commit of unknown outcome",
            table_id=table_id,
            version_before=before.version if before is not None else 0,
            version_after=table.version if table is not None else 0,
        )

    def _table(self, table_id: str) -> HeldTable:
        table = self.projection.tables.get(table_id)
        if table is None:
            raise self._missing(table_id)
        return table

    def _missing(self, table_id: str) -> NotFound | FailedPrecondition:
        """The error of a command on a table this instance does not hold: FailedPrecondition
        naming the variant of a table it cannot serve (a variant it does not host), else
        NotFound."""
        reason = self.projection.unservable.get(table_id)
        if reason is not None:
            return FailedPrecondition(reason)
        return NotFound(f"no table {table_id!r}")

    def _request(self, command: c.ClientCommand) -> tuple[str, str]:
        """The causation key and request digest of a client's command (the digest as the edge
        computed it from the request). Raises InvalidArgument without a client_request_id,
        AlreadyExists when the id was recorded for another request (another RPC, table or
        body)."""
        client_request_id = command.client_request_id
        if not client_request_id:
            raise InvalidArgument("client_request_id is required (a UUID per attempted action)")
        key = f"{command.account_id}/{client_request_id}"
        digest = command.request_digest
        with self.projection.lock:
            recorded = self.projection.requests.get(key)
        if recorded is not None and recorded != digest:
            raise AlreadyExists(
                f"request id {client_request_id!r} was used for a different request"
            )
        return key, digest

    def act(
        self,
        request: c.TableCommand,
        decide: Callable[[HeldTable, int], list[Fact]],
        *,
        action: Action,
    ) -> list[Message]:
        """Answer a retried ``request`` (a player's command on its ``table_id``) from its first
        events, or decide, commit and return the payloads of the facts decided (as appended).
        Raises AlreadyExists for a request id used for another request."""
        table_id = request.table_id
        started = time.perf_counter()
        with unavailable_on_log_errors(), self._command(table_id) as table:
            # the request id checked under the table's command lock, which it commits under
            key, digest = self._request(request)
            if table is None:
                raise self._missing(table_id)
            answered = table.answers.answer(key)
            if answered is not None:
                return answered
            at = self.now_ms()
            with log_context(table_id=table_id, hand_id=table.hand_id or None):
                try:
                    facts = decide(table, at)
                except RuleViolation as exc:
                    raise service_error(exc) from None
                appended = self.commit(table, facts, at, causation_id=key, request_digest=digest)
        self.metrics.action_answered(action, time.perf_counter() - started)
        return [envelope.payload for envelope in appended[: len(facts)]]

    def _seat_in_hand(self, table: HeldTable, account_id: str, hand_id: str) -> int:
        seat = table.seat_of(account_id)
        if seat is None or table.ctx is None or seat not in table.ctx.accounts:
            raise PermissionDenied("you are not dealt into a hand at this table")
        if table.ctx.accounts.get(seat) != account_id:
            raise PermissionDenied("your seat is not dealt into this hand")
        if hand_id and hand_id != table.ctx.hand_id:
            raise FailedPrecondition(f"hand {hand_id} is not the current hand of this table")
        return seat

    def hand_action(
        self,
        request: c.HandCommand,
        make: Callable[[int, int], rc.Command],
        action: Action,
    ) -> list[Message]:
        """:meth:`act` for a command on the current hand (``request.hand_id``)."""
        account_id, hand_id = request.account_id, request.hand_id

        def decide(table: HeldTable, at: int) -> list[Fact]:
            seat = self._seat_in_hand(table, account_id, hand_id)
            with log_context(seat=seat):
                return table.hand_commands([make(seat, at)])

        return self.act(request, decide, action=action)

    def close(self) -> None:
        """Stop the hand-start workers (at shutdown, after the loops stopped)."""
        with self.projection.lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True)

    def _workers(self) -> ThreadPoolExecutor:
        with self.projection.lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.start_workers, "table-start")
            return self._pool


@contextmanager
def unavailable_on_log_errors() -> Iterator[None]:
    """A client's command whose transaction failed ends UNAVAILABLE (it may retry with the same
    client_request_id: a commit of unknown outcome is resolved before the table's next
    command, so the retry gets the first answer if there was one)."""
    try:
        yield
    except CommitOutcomeUnknown:
        raise Unavailable(
            "the event log did not confirm this command; retry with the same client_request_id"
        ) from None
    except EventLogError:
        raise Unavailable("the event log refused this command (nothing recorded); retry") from None


#: The caller's status of each refusal of the table's domain (its message is the details).
STATUS_OF_REFUSAL: dict[type[TableRefused], type[ServiceError]] = {
    BadRequest: InvalidArgument,
    WrongState: FailedPrecondition,
    NotPermitted: PermissionDenied,
}


@contextmanager
def refusals_as_statuses() -> Iterator[None]:
    """A refusal of the table's domain (:mod:`rummy_table.domain.errors`) raised inside ends the
    call with its status (:data:`STATUS_OF_REFUSAL`), the message unchanged."""
    try:
        yield
    except TableRefused as exc:
        raise STATUS_OF_REFUSAL[type(exc)](str(exc)) from None


_RULE_ERRORS: dict[str, type[ServiceError]] = {
    "FAILED_PRECONDITION": FailedPrecondition,
    "INVALID_ARGUMENT": InvalidArgument,
    "PERMISSION_DENIED": PermissionDenied,
}


def service_error(error: RuleViolation | RuleSetError, variant: str = "") -> ServiceError:
    """The one table from the rules' errors to the caller's status: a refused command by its
    ErrorCode's status, an option out of bounds INVALID_ARGUMENT naming the request field (of
    the rule set of ``variant``)."""
    if isinstance(error, RuleSetError):
        return InvalidArgument(stream_payloads.wire_message(error, variant))
    return _RULE_ERRORS[error.code.status](error.message)


def first_of(payloads: Sequence[Message], cls: type) -> Any:
    for p in payloads:
        if isinstance(p, cls):
            return p
    raise FailedPrecondition("the request's first answer holds no such event")
