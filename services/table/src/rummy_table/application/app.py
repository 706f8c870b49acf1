"""The table service's handlers: one per use case, over the projection and the stream writer.

Every write follows one path (:meth:`TableApp._commit`), under the table's command lock (one
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
:func:`rummy_platform.envelope.request_digest`) on every event it produced; a retried id with the
same digest is answered from those events (the maps are rebuilt on replay and kept in the
snapshots), one with another digest (another RPC, table or body) is ALREADY_EXISTS; both within the
table's window of its last :data:`~rummy_game.table.ANSWER_WINDOW` commands and inputs. An input
from another service is recorded with ``causation_id`` = its event id and is dropped when seen
again (within that window; an older one is refused by the rules or by the recorded reveal and
settlement).
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from google.protobuf import any_pb2
from google.protobuf.message import DecodeError, Message

from rummy.clock.v1 import events_pb2 as clock_pb
from rummy.common.v1 import cards_pb2
from rummy.dealer.v1 import events_pb2 as dealer_pb
from rummy.fairness.v1 import events_pb2 as fairness_pb
from rummy.ledger.v1 import events_pb2 as ledger_pb
from rummy.match.v1 import match_pb2 as match_pb
from rummy.table.v1 import events_pb2 as pb
from rummy_game import match_wire, proof, wires
from rummy_game import stream_codec as codec
from rummy_game.match_host import MatchHost
from rummy_game.table import Table
from rummy_game.wire import VariantWire
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
from rummy_platform.limits import MAX_CLIENT_SEED_BYTES, check_request, check_size
from rummy_platform.logging import get_logger, log_context
from rummy_platform.topics import TABLE_EVENTS
from rummy_rules import commands as rc
from rummy_rules import registry
from rummy_rules.errors import RuleViolation
from rummy_rules.events import HandDealt
from rummy_rules.rules import (
    DEFAULT_MAX_RESERVATION_CENTS,
    RuleSet,
    RuleSetError,
    validate_table_options,
)
from rummy_rules.shuffle import SHUFFLE_VERSION

from . import commands as c
from .ownership import NotOwner, Ownership
from .ports import Action, Metrics, ViewRenderer
from .projection import Projection
from .results import TableSummary

_log = get_logger(__name__)
_TABLE_NS = uuid.UUID("2a7c1f4e-5b0d-4c36-9e8a-7d1b3f6a9c20")
#: The consumer group of the table's inputs (ledger, fairness, dealer, clock events).
INPUT_GROUP = "table"
#: How long (seconds, before the clock speed) a hand may wait for another service's answer.
DEFAULT_SERVICE_DEADLINE_SECONDS = 60


@dataclass
class TableApp:
    """The handlers. ``now_ms``: the clock (ms since the epoch); ``speed``: how many times faster
    than real time start delays pass (``RUMMY_CLOCK_SPEED``, shared with the clock service);
    ``max_reservation_hundredths``: the most a table may reserve per seat and hand (max loss x
    point value), checked when a table is opened (``RUMMY_TABLE_MAX_RESERVATION_HUNDREDTHS``);
    ``service_deadline_seconds``: how long a hand may wait for another service's answer before
    the tick aborts it (``RUMMY_TABLE_SERVICE_DEADLINE_SECONDS``; wall-clock seconds, not
    divided by ``speed``: an outage of another service lasts real time)."""

    writer: TransactionalWriter
    projection: Projection = field(default_factory=Projection)
    now_ms: Callable[[], int] = field(default=lambda: int(time.time() * 1000))
    new_hand_id: Callable[[], str] = field(default=lambda: str(uuid.uuid4()))
    speed: float = 1.0
    max_reservation_hundredths: int = DEFAULT_MAX_RESERVATION_CENTS
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
    #: The tables the other instances serve, for ListTables (``limit``, ``after`` as
    #: :meth:`list_tables`); None: only this instance's.
    peer_tables: Callable[[int | None, str | None], list[TableSummary]] | None = None
    #: When a table whose hand start failed is tried again (0.5 s, doubling, at most 30 s).
    start_retries: KeyedBackoff = field(
        default_factory=lambda: KeyedBackoff("starting a table's hand", first_s=0.5, cap_s=30.0)
    )

    def __post_init__(self) -> None:
        if self.projection.on_decision is None:
            self.projection.on_decision = self.metrics.count_decision

    # -- start -------------------------------------------------------------------------------

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

    # -- the write path ----------------------------------------------------------------------

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

    def _commit(
        self,
        table: Table,
        payloads: Sequence[Message],
        at_ms: int,
        causation_id: str = "",
        consumed: dict[TopicPartition, int] | None = None,
        request_digest: str = "",
    ) -> list[Envelope]:
        """Append ``payloads`` (and, at a closing table whose hand they end, the seats' exits
        and TableClosed) as the next envelopes of ``table`` (its command lock held) and fold
        them. Raises as :meth:`_append`."""
        payloads = [*payloads, *table.follow_up(payloads, at_ms)]
        correlation = table.correlation_ids(payloads)
        occurred = codec.ms_to_datetime(at_ms)
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
    def _command(self, table_id: str, *, opening: bool = False) -> Iterator[Table | None]:
        """Hold ``table_id``'s command lock; yields its table (None if there is none), re-read
        from the log first when its last commit's outcome was unknown. No lock is made for an
        unknown id unless ``opening`` (ids from requests cost nothing). Raises EventLogError if
        the re-read fails (the table stays to be re-read)."""
        if self.ownership is not None:
            with self.ownership.serving(table_id), self._owned_command(table_id, opening) as table:
                yield table
        else:
            with self._owned_command(table_id, opening) as table:
                yield table

    @contextmanager
    def _owned_command(self, table_id: str, opening: bool) -> Iterator[Table | None]:
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

    def _table(self, table_id: str) -> Table:
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

    # -- operators ---------------------------------------------------------------------------

    def open_table(self, request: c.OpenTable) -> str:
        """Open a table; returns its id (the same id for a retried client_request_id).
        The variant is ``rule_set.variant`` (``rummy_game.stream_codec.rule_set_from_pb``).
        Raises InvalidArgument naming the field and its bounds for any option the rules'
        validation refuses (an unknown variant; as the variant says: the seat counts it plays,
        its own options; clock seconds, commission, a point value within int64 and within
        ``max_reservation_hundredths``)."""
        operator = request.account_id
        key, digest = self._request(request)
        table_id = str(uuid.uuid5(_TABLE_NS, key))
        start_delay = codec.start_delay_seconds_from_pb(request.rule_set)
        try:
            rules = codec.rule_set_from_pb(
                request.rule_set,
                request.seat_count,
                request.point_value_hundredths,
                request.commission_bps,
            )
            validate_table_options(rules, start_delay, self.max_reservation_hundredths)
        except RuleSetError as exc:
            raise _service_error(exc, codec.variant_of(request.rule_set)) from None
        match = self._match_options(request, rules)
        options = codec.rule_set_to_pb(rules, start_delay)
        opened = pb.TableOpened(
            table_id=table_id,
            name=request.name or table_id[:8],
            seat_count=request.seat_count,
            point_value_hundredths=request.point_value_hundredths,
            commission_bps=request.commission_bps,
            rule_set=options,
            operator_account_id=operator,
            match=match,
        )
        with self._command(table_id, opening=True) as existing:
            if existing is not None:
                self._request(request)  # again under the lock: a racing first open
                return table_id
            at = self.now_ms()
            occurred = codec.ms_to_datetime(at)
            envelope = Envelope.new(
                opened,
                stream_id=table_id,
                stream_version=1,
                occurred_at=occurred,
                causation_id=key,
                request_digest=digest,
            )
            with _unavailable_on_log_errors():
                positions = self._append([envelope], table_id)
            self._fold([envelope], positions)
            self.metrics.table_opened()
        _log.info("table opened", table_id=table_id, seats=request.seat_count)
        return table_id

    def _match_options(self, request: c.OpenTable, rules: RuleSet) -> match_pb.MatchOptions | None:
        """The format options to record (None: a points table). Raises InvalidArgument for an
        unknown format, options out of bounds, a point value at a match table, a seat count the
        format does not seat, or a variant that plays no such deals."""
        given = request.match
        try:
            fmt = match_wire.format_from_pb(given, request.commission_bps)
        except RuleSetError as exc:
            raise InvalidArgument(match_wire.option_message(exc, given)) from None
        if not match_wire.is_match(given):
            return None
        if request.point_value_hundredths != 0:
            raise InvalidArgument(
                f"point_value_hundredths must be 0 at a {fmt.name} table (the format owns the "
                f"money: match.{match_wire.arm_of(given)}), got {request.point_value_hundredths}"
            )
        if not fmt.min_seats <= request.seat_count <= fmt.max_seats:
            raise InvalidArgument(
                f"seat_count must be {fmt.min_seats}..{fmt.max_seats} at a {fmt.name} table, "
                f"got {request.seat_count}"
            )
        if fmt.hold_cents > self.max_reservation_hundredths:
            raise InvalidArgument(
                f"match.{match_wire.arm_of(given)}: a {fmt.name} table reserves "
                f"{fmt.hold_cents} hundredths per seat at once (an entry fee, or a game's "
                f"max_game_points x point value), above this service's most, "
                f"{self.max_reservation_hundredths} (RUMMY_TABLE_MAX_RESERVATION_HUNDREDTHS)"
            )
        try:
            MatchHost.for_table(fmt, rules, registry.lookup(rules.variant))
        except RuleSetError as exc:
            raise InvalidArgument(
                f"match: variant {rules.variant!r} does not play the deals of a {fmt.name} match "
                f"({codec.wire_message(exc, rules.variant)})"
            ) from None
        return match_wire.format_to_pb(fmt)

    def close_table(self, request: c.CloseTable) -> str:
        """Close a table for the operator ``request.account_id``: no new hand and no new seat; a
        hand being played plays out, then every seated player is stood up. Returns ``closed``
        when it closed at once, else ``closing`` (a retried client_request_id answers with the
        table's state now). Raises NotFound, AlreadyExists (the request id was used for another
        request), FailedPrecondition (already closing or closed)."""
        with _unavailable_on_log_errors(), self._command(request.table_id) as table:
            # the request id checked under the table's command lock, which it commits under
            key, digest = self._request(request)
            operator = request.account_id
            if table is None:
                raise self._missing(request.table_id)
            if key not in table.answers:
                at = self.now_ms()
                with log_context(table_id=table.table_id, hand_id=table.hand_id or None):
                    payloads = table.close(operator, request.reason, at)
                    self._commit(table, payloads, at, causation_id=key, request_digest=digest)
                    _log.info("table closing", operator=operator, state=table.state_name)
            with self.projection.lock:
                return table.state_name

    def list_tables(
        self, limit: int | None = None, after: str | None = None, *, everywhere: bool = True
    ) -> list[TableSummary]:
        """The tables not closed (open or closing) in table-id order: those whose id sorts
        after ``after`` (all when None), at most ``limit`` of them (all when None). With
        ``everywhere``, those every other instance serves too (:attr:`peer_tables`: each asked
        for the same page, the pages merged); else this instance's only."""
        mine = self._local_tables(limit, after)
        if not everywhere or self.peer_tables is None:
            return mine
        merged = {t.table_id: t for t in [*self.peer_tables(limit, after), *mine]}
        return [merged[t] for t in sorted(merged)][:limit]

    def _local_tables(self, limit: int | None, after: str | None) -> list[TableSummary]:
        with self.projection.lock:
            ids = sorted(
                t
                for t, table in self.projection.tables.items()
                if not table.closed and (after is None or t > after)
            )
            page = [self.projection.tables[t] for t in ids[:limit]]
            return [
                TableSummary(
                    table_id=t.table_id,
                    name=t.opened.name,
                    seat_count=t.opened.seat_count,
                    seats_taken=len(t.seats),
                    point_value_hundredths=t.opened.point_value_hundredths,
                    commission_bps=t.opened.commission_bps,
                    variant=t.rule_set.variant,
                    turn_seconds=t.rule_set.turn_seconds,
                    start_delay_seconds=t.start_delay_ms // 1000,
                    state=t.state_name,
                    match_format=t.match.fmt.name if t.match is not None else "single",
                )
                for t in page
            ]

    # -- players -----------------------------------------------------------------------------

    def _act(
        self,
        request: c.TableCommand,
        decide: Callable[[Table, int], list[Message]],
        *,
        action: Action,
    ) -> list[Message]:
        """Answer a retried ``request`` (a player's command on its ``table_id``) from its first
        events, or decide, commit and return the payloads appended. Raises AlreadyExists for a
        request id used for another request."""
        table_id = request.table_id
        started = time.perf_counter()
        with _unavailable_on_log_errors(), self._command(table_id) as table:
            # the request id checked under the table's command lock, which it commits under
            key, digest = self._request(request)
            if table is None:
                raise self._missing(table_id)
            if key in table.answers:
                return table.answers[key]
            at = self.now_ms()
            with log_context(table_id=table_id, hand_id=table.hand_id or None):
                try:
                    payloads = decide(table, at)
                except RuleViolation as exc:
                    raise _service_error(exc) from None
                self._commit(table, payloads, at, causation_id=key, request_digest=digest)
        self.metrics.action_answered(action, time.perf_counter() - started)
        return payloads

    def take_seat(self, request: c.TakeSeat) -> int:
        """Seat ``request.account_id`` (at ``request.seat``, or the first free seat); returns the
        seat."""
        account_id, wanted = request.account_id, request.seat
        payloads = self._act(
            request,
            lambda t, _at: t.take_seat(account_id, wanted),
            action="take_seat",
        )
        seated: pb.TablePlayerSeated = _first(payloads, pb.TablePlayerSeated)
        return seated.seat

    def leave_table(self, request: c.LeaveTable) -> None:
        account_id = request.account_id
        self._act(
            request,
            lambda t, at: t.leave(account_id, at),
            action="leave_table",
        )

    def _seat_in_hand(self, table: Table, account_id: str, hand_id: str) -> int:
        seat = table.seat_of(account_id)
        if seat is None or table.ctx is None or seat not in table.ctx.accounts:
            raise PermissionDenied("you are not dealt into a hand at this table")
        if table.ctx.accounts.get(seat) != account_id:
            raise PermissionDenied("your seat is not dealt into this hand")
        if hand_id and hand_id != table.ctx.hand_id:
            raise FailedPrecondition(f"hand {hand_id} is not the current hand of this table")
        return seat

    def _hand_action(
        self,
        request: c.HandCommand,
        make: Callable[[int, int], rc.Command],
        action: Action,
    ) -> list[Message]:
        """:meth:`_act` for a command on the current hand (``request.hand_id``)."""
        account_id, hand_id = request.account_id, request.hand_id

        def decide(table: Table, at: int) -> list[Message]:
            seat = self._seat_in_hand(table, account_id, hand_id)
            with log_context(seat=seat):
                return table.hand_commands([make(seat, at)])

        return self._act(request, decide, action=action)

    def contribute_seed(self, request: c.ContributeSeed) -> None:
        check_size("client_seed", request.client_seed, MAX_CLIENT_SEED_BYTES)
        self._hand_action(
            request,
            lambda seat, at: rc.ContributeClientSeed(
                seat=seat, seed_hex=request.client_seed.hex(), at_ms=at
            ),
            "contribute_seed",
        )

    def draw(self, request: c.DrawCard) -> cards_pb2.Card:
        """Draw from ``request.source``; returns the card drawn (a retry: the first draw's)."""
        if request.source == pb.DRAW_SOURCE_STOCK:
            cls: type[rc.DrawFromStock] | type[rc.DrawFromDiscardPile] = rc.DrawFromStock
        elif request.source == pb.DRAW_SOURCE_DISCARD_PILE:
            cls = rc.DrawFromDiscardPile
        else:
            raise InvalidArgument("source must be DRAW_SOURCE_STOCK or DRAW_SOURCE_DISCARD_PILE")
        payloads = self._hand_action(
            request,
            lambda seat, at: cls(seat=seat, turn_no=request.turn_no, at_ms=at),
            "draw",
        )
        drawn: pb.CardDrawn = _first(payloads, pb.CardDrawn)
        return drawn.card

    def _card(self, table_id: str, card: cards_pb2.Card) -> object:
        with self.projection.lock:
            table = self._table(table_id)
            if table.ctx is None:
                raise FailedPrecondition("no hand is being played at this table")
            try:
                return codec.card_from_pb(card, table.ctx.shoe)
            except codec.StreamCodecError as exc:
                raise InvalidArgument(str(exc)) from None

    def discard(self, request: c.DiscardCard) -> None:
        def make(seat: int, at: int) -> rc.Command:
            card = self._card(request.table_id, request.card)
            return rc.Discard(seat=seat, turn_no=request.turn_no, card=card, at_ms=at)  # type: ignore[arg-type]

        self._hand_action(request, make, "discard")

    def play(self, request: c.Play) -> Message | None:
        """A command of the hand's variant (``request.command``: a ``google.protobuf.Any`` of a
        message of the variant's ``command_types``); returns the variant's answer (None: it
        gives none). Raises InvalidArgument (an unknown type, another variant's command, bytes
        that do not parse, a malformed command: nothing is appended), and as every hand command
        does."""

        if match_wire.is_match_command(request.command.TypeName()):
            return self._match_play(request)

        def resolve(wire: VariantWire) -> Message:
            return _unpack_command(wire, request.command)

        wire, message, payloads = self._play(request, resolve, "play")
        return wire.answer(message, payloads)

    def _match_play(self, request: c.Play) -> Message:
        """A match command (``rummy.match.v1`` AcceptRejoin, DeclineRejoin, RequestSplit) for
        the account's seat, answered with MatchCommandAnswer."""
        account_id = request.account_id
        type_name = request.command.TypeName()
        cls = next(c for c in match_wire.COMMAND_TYPES if c.DESCRIPTOR.full_name == type_name)
        message = cls()
        try:
            if not request.command.Unpack(message):
                raise DecodeError("type mismatch")
        except DecodeError:
            raise InvalidArgument(f"command: the bytes are not a valid {type_name}") from None
        payloads = self._act(
            request,
            lambda t, at: t.match_command(account_id, message, at),
            action="play",
        )
        return match_wire.answer(payloads)

    def play_older_rpc(self, command: c.PlayOlderRpc) -> Message | None:
        """An older per-command RPC (Declare, Drop): the hand's variant's command of that name
        (:meth:`play`), made and answered by the variant's wire from the RPC's request; returns
        the RPC's response. Raises InvalidArgument when the variant has no such command."""
        request = command.request

        def resolve(wire: VariantWire) -> Message:
            message = wire.request_command(request)
            if message is None:
                rpc = type(request).DESCRIPTOR.name.removesuffix("Request")
                raise InvalidArgument(
                    f"variant {wire.variant!r} has no {rpc}; send its commands with Play"
                )
            return message

        wire, message, payloads = self._play(command, resolve, command.action)
        return wire.request_answer(request, wire.answer(message, payloads))

    def _play(
        self,
        request: c.Play | c.PlayOlderRpc,
        resolve: Callable[[VariantWire], Message],
        action: Action,
    ) -> tuple[VariantWire, Message, list[Message]]:
        """Decide the variant's command that ``resolve`` makes of ``request`` (table_id,
        hand_id, turn_no, client_request_id) for the account's seat in the current hand; the
        wire, the command message and the payloads appended (or first appended, for a retry)."""
        chosen: list[tuple[VariantWire, Message]] = []

        def make(seat: int, at: int) -> rc.Command:
            with self.projection.lock:
                table = self._table(request.table_id)
                if table.ctx is None:
                    raise FailedPrecondition("no hand is being played at this table")
                wire = self._wire(table)
                message = resolve(wire)
                chosen.append((wire, message))
                try:
                    return wire.command(message, seat, request.turn_no, at, table.ctx)
                except codec.StreamCodecError as exc:
                    raise InvalidArgument(f"command: {exc}") from None

        payloads = self._hand_action(request, make, action)
        if not chosen:  # a retried request, answered from its first events
            with self.projection.lock:
                wire = self._wire(self._table(request.table_id))
            chosen.append((wire, resolve(wire)))
        wire, message = chosen[-1]
        return wire, message, payloads

    @staticmethod
    def _wire(table: Table) -> VariantWire:
        try:
            return wires.lookup(table.rule_set.variant)
        except wires.UnknownWire as exc:
            raise FailedPrecondition(str(exc)) from None

    # -- reads -------------------------------------------------------------------------------

    def get_hand_result(self, account_id: str | None, table_id: str, hand_id: str) -> pb.HandEnded:
        """Every seat's points, cards, arrangement, settlement lines and commission, once the hand
        ended (:meth:`voided_reason` says if the ledger refused them); a hand older than the
        table's last RESULT_WINDOW is read back from the log from its HandStarted on. Raises
        NotFound (no such hand, or it was aborted), FailedPrecondition (not ended yet),
        Unavailable (the log cannot be read)."""
        self._check_owner(table_id)
        with self.projection.lock:
            tables = [self._table(table_id)] if table_id else list(self.projection.tables.values())
            table = next((t for t in tables if hand_id in t.hands), None)
            if table is None:
                raise NotFound(f"no ended hand {hand_id!r}")
            if hand_id in table.results:
                return table.results[hand_id]
            if table.hand_id == hand_id:  # the current hand, not ended (running or aborted)
                raise FailedPrecondition(f"hand {hand_id} has not ended")
            found_table, offset = table.table_id, table.hands[hand_id]
        # An older hand: its HandEnded is read back from the log, from the hand's start on.
        for envelope in self._hand_envelopes(found_table, offset):
            payload = envelope.payload
            if isinstance(payload, pb.HandEnded) and payload.hand_id == hand_id:
                return payload
        raise NotFound(f"no ended hand {hand_id!r}")

    def _hand_envelopes(self, table_id: str, offset: int) -> list[Envelope]:
        """``table_id``'s envelopes from ``offset`` of its partition on (from its first when
        ``offset`` is -1 or no offset reader is set). Raises Unavailable when the log cannot
        be read."""
        try:
            if self.read_stream_from is not None and offset >= 0:
                return self.read_stream_from(table_id, offset)
            if self.read_stream is None:
                raise Unavailable("this table-service instance cannot read its stream")
            return self.read_stream(table_id)
        except EventLogError as exc:
            raise Unavailable(f"cannot read the stream of table {table_id}: {exc}") from None

    def get_hand_proof(self, account_id: str | None, table_id: str, hand_id: str) -> str:
        """The proof bundle of an ended hand as canonical JSON (``rummy_game.proof``), read from
        the table's stream (so old hands too). ``account_id``: a player's account (it must have
        been seated in the hand), or None for an operator. Raises NotFound (no such hand),
        PermissionDenied (a player not dealt in), FailedPrecondition (running, aborted, or the
        seed not revealed yet), Unavailable (this instance cannot read its stream)."""
        self._check_owner(table_id)
        with self.projection.lock:
            tables = [self._table(table_id)] if table_id else list(self.projection.tables.values())
            table = next((t for t in tables if hand_id in t.hands), None)
            if table is None:
                raise NotFound(f"no hand {hand_id!r}")
            found_table, offset = table.table_id, table.hands[hand_id]
            if table.hand_id == hand_id and table.hand_running:
                raise FailedPrecondition(f"hand {hand_id} has not ended (or was aborted)")
            if hand_id not in table.revealed:
                raise FailedPrecondition(f"the server seed of hand {hand_id} is not revealed yet")
        try:
            envelopes = self._hand_envelopes(found_table, offset)
            bundle = proof.hand_proof(found_table, hand_id, envelopes)
        except proof.ProofNotReady as exc:
            raise FailedPrecondition(str(exc)) from None
        if account_id is not None:
            started = next(e for e in bundle["events"] if e["event"]["type"] == "HandStarted")
            if account_id not in {s["account_id"] for s in started["event"]["seats"]}:
                raise PermissionDenied(
                    f"only the players of hand {hand_id} and operators get its proof"
                )
        return proof.canonical_json(bundle)

    def voided_reason(self, table_id: str, hand_id: str) -> str:
        """Why the ledger refused the hand's settlement (the hand is void, no token moved), or ""
        when it did not (settled, or not yet)."""
        with self.projection.lock:
            tables = [self._table(table_id)] if table_id else list(self.projection.tables.values())
            return next((t.voided[hand_id] for t in tables if hand_id in t.voided), "")

    def view_after(self, account_id: str | None, table_id: str, after_version: int = 0) -> Any:
        """The caller's view (``account_id`` None: a spectator's; as :attr:`render_view` renders
        it) once the table's stream is past ``after_version`` (at once for 0), else None. Raises
        NotFound."""
        with self.projection.lock:
            table = self._table(table_id)
            return self.render_view(table, account_id) if table.version > after_version else None

    def view(self, account_id: str | None, table_id: str) -> Any:
        """The caller's view now. Raises NotFound."""
        found = self.view_after(account_id, table_id)
        assert found is not None  # every table's stream holds at least its TableOpened
        return found

    def check_watch(self, table_id: str, after_version: int) -> None:
        """Raise NotFound (no such table) or InvalidArgument (``after_version`` beyond the
        table's version) or NotOwner (another instance serves the table) for a watch that
        cannot start."""
        self._check_owner(table_id)
        with self.projection.lock:
            version = self._table(table_id).version
        if after_version > version:
            raise InvalidArgument(
                f"after_stream_version {after_version} is beyond the table's version {version}"
            )

    # -- time: starting hands ----------------------------------------------------------------

    def tick(self) -> list[str]:
        """Abort every hand that waited longer than the service deadline for another service's
        answer (:meth:`abort_overdue_hands`), then start a hand at every table whose start delay
        has passed (the tables in parallel, each under its command lock); returns the hand ids
        started.

        A table whose start raises is logged (table_id, hand_id), counted
        (``rummy_table_hand_start_failures_total``) and tried again after a backoff
        (``start_retries``); the other tables start their hands all the same. Raises
        Unavailable once fenced."""
        now = self.now_ms()
        self.abort_overdue_hands(now)
        with self.projection.lock:
            due = [
                t.table_id
                for t in self.projection.tables.values()
                if (at := t.start_due_ms(self.speed)) is not None
                and at <= now
                and self.start_retries.ready(t.table_id)
                and self._owns(t.table_id)
            ]
        if len(due) <= 1:
            started = [self._start_hand(table_id, now) for table_id in due]
            return [h for h in started if h is not None]
        futures = [self._workers().submit(self._start_hand, table_id, now) for table_id in due]
        hands, fenced = [], None
        for future in futures:
            try:
                hand_id = future.result()
            except Unavailable as exc:
                fenced = exc
                continue
            if hand_id is not None:
                hands.append(hand_id)
        if fenced is not None:
            raise fenced
        return hands

    def abort_overdue_hands(self, now: int) -> list[str]:
        """Abort the hand of every table (of this instance) that waited for another service's
        answer (the ledger's stakes, fairness's commitment, the dealer's deal) for
        ``service_deadline_seconds`` (wall-clock) since its last fact, through the variant's
        AbortHand with a reason naming what is missing (at a match table the deal is voided,
        and the match aborted when no redeal is possible: ``Table.abort_overdue``). Each is
        logged (table_id, hand_id) and counted (``rummy_table_overdue_aborts_total``). A match
        table with no hand running whose match waited that long for the ledger to hold its money
        has its match aborted (every entry released). Returns the aborted hands' (or matches')
        ids. Raises Unavailable once fenced."""
        wait_ms = int(self.service_deadline_seconds * 1000)  # real time, whatever the speed
        wait_text = f"{self.service_deadline_seconds} s"
        with self.projection.lock:
            overdue = [
                t.table_id
                for t in self.projection.tables.values()
                if t.overdue_reason(now, wait_ms, wait_text) is not None
                and self.start_retries.ready(t.table_id)
                and self._owns(t.table_id)
            ]
        aborted = []
        for table_id in overdue:
            try:
                hand_id = self._abort_overdue(table_id, now, wait_ms, wait_text)
            except NotOwner:
                continue
            if hand_id is not None:
                aborted.append(hand_id)
        return aborted

    def _abort_overdue(self, table_id: str, now: int, wait_ms: int, wait_text: str) -> str | None:
        with self._command(table_id) as table:
            if table is None:
                return None
            reason = table.overdue_reason(now, wait_ms, wait_text)
            if reason is None:  # an answer arrived meanwhile
                return None
            hand_id = table.hand_id if table.hand_running else ""
            with log_context(table_id=table_id, hand_id=hand_id or None):
                try:
                    self._commit(table, table.abort_overdue(reason, now), now)
                except Unavailable:
                    raise
                except Exception as exc:  # logged, counted, retried after the backoff
                    self._start_failed(table_id, hand_id, exc)
                    return None
                self.start_retries.succeeded(table_id)
                if not hand_id:  # no deal could start: the match's money was not held in time
                    _log.warning("match aborted", match_id=table.match_id, reason=reason)
                    self.metrics.overdue_aborted("match")
                    return table.match_id
                _log.warning("hand aborted: a service is gone past its deadline", reason=reason)
                self.metrics.overdue_aborted("hand")
            return hand_id

    def _start_hand(self, table_id: str, now: int) -> str | None:
        """Start ``table_id``'s hand if it is still due; None when not (or when the start
        failed: logged, counted, retried later; or when the table was handed over meanwhile).
        Raises Unavailable once fenced."""
        try:
            return self._start_owned_hand(table_id, now)
        except NotOwner:
            return None

    def _start_owned_hand(self, table_id: str, now: int) -> str | None:
        with self._command(table_id) as table:
            if table is None:
                return None
            due = table.start_due_ms(self.speed)
            if due is None or due > now:
                return None
            hand_id = self.new_hand_id()
            with log_context(table_id=table_id, hand_id=hand_id):
                try:
                    payloads = table.start_hand(hand_id, now)
                    self._commit(table, payloads, now)
                except Unavailable:
                    raise
                except Exception as exc:
                    self._start_failed(table_id, hand_id, exc)
                    return None
                self.start_retries.succeeded(table_id)
                if any(isinstance(p, pb.HandStarted) for p in payloads):
                    _log.info("hand started", hand_no=table.hand_no)
                else:  # a match table: the match started, or a game's stakes are asked first
                    _log.info("match waits for its money", match_id=table.match_id)
                    return None
            return hand_id

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

    def _start_failed(self, table_id: str, hand_id: str, error: Exception) -> None:
        reason = f"{type(error).__name__}: {error}"
        if table_id not in self.start_retries.failing:
            _log.error(
                "starting a hand failed; this table waits, the others go on",
                table_id=table_id,
                hand_id=hand_id,
                error=reason,
                exc_info=error,
            )
        self.start_retries.failed(table_id, reason, table_id=table_id, hand_id=hand_id)
        self.metrics.hand_start_failed()

    # -- inputs from other services ----------------------------------------------------------

    def on_input(self, envelope: Envelope, position: TopicPartition, next_offset: int) -> bool:
        """Turn another service's event into the table's facts, appended with the consumed
        offset in one transaction. Returns True if facts were appended. A seed reveal or settlement
        is recorded for any hand of the table (it closes that hand's proof, even after the next
        hand started); other inputs act on the current hand only. Inputs of unknown tables, of
        other hands, already recorded (by causation id), or refused by the rules are consumed
        without effect. Raises Unavailable once fenced, EventLogError when the transaction
        failed (nothing recorded: retry the input)."""
        return self._record_input(envelope, lambda: {position: next_offset})

    def on_inputs(
        self, records: Sequence[Record], caps: Mapping[TopicPartition, int] | None = None
    ) -> InputsOutcome:
        """:meth:`on_input` for one poll's records: grouped by table, the tables in parallel
        (their transactions shared with every other table's, see ``GroupCommitWriter``), each
        table's records in order. A record's transaction carries its partition's consumed
        offset only as far as every earlier record of the batch in that partition is committed
        (:class:`ConsumedProgress`), and never past ``caps[tp]`` (the first input held for a
        retry); what is left is committed by one offsets-only transaction at the end.

        A table whose record raises stops there: the record and the table's later ones are in
        the outcome (``failed``, ``held``); the other tables go on. WriterFenced/Unavailable
        and EventLogError are reported (``fenced``, ``log_error``) with the records not
        committed (``not_done``), after every other table's work finished."""
        progress = ConsumedProgress(records, caps or {})
        by_table: dict[str, list[Record]] = {}
        for record in records:
            by_table.setdefault(record.envelope.stream_id, []).append(record)
        outcome = InputsOutcome()

        def run(table_records: list[Record]) -> None:
            if not self._owns(table_records[0].envelope.stream_id):
                return  # handed over: the new owner consumes them (no offset of ours moves)
            for i, record in enumerate(table_records):
                tp = TopicPartition(record.topic, record.partition)
                try:
                    self._record_input(
                        record.envelope, progress.for_record(tp, record.offset), alone=False
                    )
                except (WriterFenced, Unavailable) as exc:
                    outcome.fail_all(exc, table_records[i:], fenced=True)
                    return
                except EventLogError as exc:
                    outcome.fail_all(exc, table_records[i:], fenced=False)
                    return
                except Exception as exc:
                    progress.block(tp, record.offset)
                    outcome.park(record, exc, table_records[i + 1 :])
                    return
                progress.done(tp, record.offset)

        groups = list(by_table.values())
        if len(groups) == 1:
            run(groups[0])
        else:
            for future in [self._workers().submit(run, group) for group in groups]:
                future.result()
        # What is committed but not handed out yet (inputs without effect, or whose offsets
        # waited for an earlier input): never past a record not committed, so also after a
        # failed transaction of the batch.
        rest = progress.unsent() if outcome.fenced is None else {}
        if rest:
            try:  # offsets only: an unknown outcome re-reads that table, harmlessly
                self._append([], records[-1].envelope.stream_id, rest)
            except (WriterFenced, Unavailable) as exc:
                outcome.fenced = exc
            except EventLogError as exc:
                outcome.log_error = outcome.log_error or exc
        return outcome

    def _record_input(
        self,
        envelope: Envelope,
        consumed: Callable[[], dict[TopicPartition, int]],
        *,
        alone: bool = True,
    ) -> bool:
        """:meth:`on_input` with the consumed offsets asked of ``consumed()`` right before the
        append (an empty answer: none this time). An input without effect commits its offsets
        alone when ``alone``; otherwise (in a batch) nothing is appended for it and a later
        transaction of the batch carries its offset. An input of a table this instance no
        longer owns is left alone (False): the new owner consumes it."""
        if not self._owns(envelope.stream_id):
            return False
        with self._command(envelope.stream_id) as table:
            payloads: list[Message] = []
            at = self.now_ms()
            if table is not None and envelope.event_id not in table.answers:
                hand_id = getattr(envelope.payload, "hand_id", "")
                with log_context(table_id=table.table_id, hand_id=hand_id or None):
                    try:
                        payloads = self._react(table, envelope.payload, hand_id, at)
                    except RuleViolation as exc:
                        _log.info("input refused by the rules", reason=exc.code.value)
                    except (FailedPrecondition, codec.StreamCodecError) as exc:
                        _log.info("input ignored", reason=str(exc))
            if table is None or not payloads:
                offsets = consumed() if alone else {}
                if offsets:
                    self._append([], envelope.stream_id, offsets)
                return False
            offsets = consumed()
            self._commit(
                table, payloads, at, causation_id=envelope.event_id, consumed=offsets or None
            )
            return True

    def _react(self, table: Table, payload: Message, hand_id: str, at: int) -> list[Message]:
        if isinstance(
            payload, fairness_pb.SeedRevealed | ledger_pb.HandSettled | ledger_pb.SettlementRefused
        ):
            return table.close_proof(payload)
        if isinstance(payload, ledger_pb.MatchMoneyHeld | ledger_pb.MatchMoneyRejected):
            return table.match_money(payload, at)
        if isinstance(payload, ledger_pb.MatchSettled):
            return table.match_settled(payload)
        ctx = table.ctx
        if ctx is None or hand_id != ctx.hand_id:
            return []
        if isinstance(payload, ledger_pb.StakeRejected):
            return table.stake_rejected(payload, at)
        if isinstance(payload, ledger_pb.StakesReserved):
            cmds: list[rc.Command] = [
                rc.RecordStakeReserved(seat=r.seat, amount_cents=r.amount_hundredths, at_ms=at)
                for r in payload.reservations
            ]
            return table.hand_commands(cmds)
        if isinstance(payload, fairness_pb.SeedCommitted):
            return table.hand_commands(
                [rc.RecordSeedCommitment(commitment=payload.commitment_sha256.hex(), at_ms=at)]
            )
        if isinstance(payload, dealer_pb.HandDealt):
            (dealt,) = codec.from_payload(payload, ctx, at)
            assert isinstance(dealt, HandDealt)
            deal = rc.Deal(
                hands=dealt.hands,
                wild_cut=dealt.wild_cut,
                first_open=dealt.first_open,
                stock=dealt.stock,
                at_ms=at,
            )
            return table.hand_commands([deal])
        if isinstance(payload, dealer_pb.StockReshuffled):
            stock = tuple(codec.card_from_pb(c, ctx.shoe) for c in payload.stock)
            return table.hand_commands(
                [rc.RecordStockReshuffled(reshuffle_no=payload.reshuffle_no, stock=stock, at_ms=at)]
            )
        if isinstance(payload, clock_pb.TurnDeadlinePassed):
            return table.hand_commands([rc.TurnTimeout(turn_no=payload.turn_no, at_ms=at)])
        if isinstance(payload, clock_pb.SeedWindowClosed):
            return table.hand_commands([rc.TurnTimeout(turn_no=0, at_ms=at)])
        return []


@dataclass
class InputsOutcome:
    """What :meth:`TableApp.on_inputs` could not do: ``failed`` records whose handling raised
    (each with the table's later records of the batch, not tried, in ``held``); ``fenced`` /
    ``log_error`` when the writer was fenced or a transaction failed, with the records of the
    tables it stopped in ``not_done``."""

    failed: list[tuple[Record, Exception]] = field(default_factory=list)
    held: dict[str, list[Record]] = field(default_factory=dict)
    fenced: Exception | None = None
    log_error: EventLogError | None = None
    not_done: list[Record] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def park(self, record: Record, error: Exception, later: list[Record]) -> None:
        with self._lock:
            self.failed.append((record, error))
            self.held[record.envelope.stream_id] = later

    def fail_all(self, error: Exception, records: list[Record], *, fenced: bool) -> None:
        with self._lock:
            if fenced:
                self.fenced = error
            elif isinstance(error, EventLogError):
                self.log_error = error
            self.not_done.extend(records)


class ConsumedProgress:
    """The consumed offsets a batch of inputs may commit, per partition: up to the end of the
    longest run of the batch's records (in offset order) that are committed, a record being
    counted committed in its own transaction, never past ``caps[tp]``, never lower than what was
    handed out before. Thread-safe."""

    def __init__(self, records: Sequence[Record], caps: Mapping[TopicPartition, int]) -> None:
        self._lock = threading.Lock()
        self._offsets: dict[TopicPartition, list[int]] = {}
        for record in records:
            tp = TopicPartition(record.topic, record.partition)
            self._offsets.setdefault(tp, []).append(record.offset)
        for offsets in self._offsets.values():
            offsets.sort()
        self._caps = dict(caps)
        self._done: set[tuple[TopicPartition, int]] = set()
        self._blocked: set[tuple[TopicPartition, int]] = set()
        self._sent: dict[TopicPartition, int] = {}

    def _reach(self, tp: TopicPartition, also: int | None = None) -> int | None:
        """The offset to resume ``tp`` from: after its committed run of records, i.e. the first
        record of the batch not committed (or held), or after the last one."""
        reach = None
        for offset in self._offsets.get(tp, ()):
            if (tp, offset) in self._blocked or (offset != also and (tp, offset) not in self._done):
                reach = offset
                break
            reach = offset + 1
        if reach is None:
            return None
        cap = self._caps.get(tp)
        return reach if cap is None else min(reach, cap)

    def _hand_out(self, tp: TopicPartition, reach: int | None) -> dict[TopicPartition, int]:
        if reach is None or reach <= self._sent.get(tp, -1):
            return {}
        self._sent[tp] = reach
        return {tp: reach}

    def consumed_with(self, tp: TopicPartition, offset: int) -> dict[TopicPartition, int]:
        """The offsets the transaction of the record at ``offset`` of ``tp`` carries."""
        with self._lock:
            return self._hand_out(tp, self._reach(tp, also=offset))

    def for_record(
        self, tp: TopicPartition, offset: int
    ) -> Callable[[], dict[TopicPartition, int]]:
        """What :meth:`TableApp._record_input` asks for the record at ``offset`` of ``tp``."""
        return lambda: self.consumed_with(tp, offset)

    def done(self, tp: TopicPartition, offset: int) -> None:
        with self._lock:
            self._done.add((tp, offset))

    def block(self, tp: TopicPartition, offset: int) -> None:
        """The record failed (held for a retry): the offsets never pass it."""
        with self._lock:
            self._blocked.add((tp, offset))

    def unsent(self) -> dict[TopicPartition, int]:
        """What is committed but not yet handed out (for a last, offsets-only transaction)."""
        with self._lock:
            out: dict[TopicPartition, int] = {}
            for tp in self._offsets:
                out.update(self._hand_out(tp, self._reach(tp)))
            return out


@contextmanager
def _unavailable_on_log_errors() -> Iterator[None]:
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


_RULE_ERRORS: dict[str, type[ServiceError]] = {
    "FAILED_PRECONDITION": FailedPrecondition,
    "INVALID_ARGUMENT": InvalidArgument,
    "PERMISSION_DENIED": PermissionDenied,
}


def _service_error(error: RuleViolation | RuleSetError, variant: str = "") -> ServiceError:
    """The one table from the rules' errors to the caller's status: a refused command by its
    ErrorCode's status, an option out of bounds INVALID_ARGUMENT naming the request field (of
    the rule set of ``variant``)."""
    if isinstance(error, RuleSetError):
        return InvalidArgument(codec.wire_message(error, variant))
    return _RULE_ERRORS[error.code.status](error.message)


def _unpack_command(wire: VariantWire, packed: any_pb2.Any) -> Message:
    """The command message ``packed`` holds, of one of ``wire``'s command types. Raises
    InvalidArgument for an unknown type, another variant's command, bytes that do not parse, or a
    field of the command over its request limit (``rummy_platform.limits``)."""
    if not packed.type_url:
        raise InvalidArgument(
            "command is missing: PlayRequest.command holds the variant's command message packed "
            "in a google.protobuf.Any"
        )
    type_name = packed.TypeName()
    command_type = next(
        (c for c in wire.command_types if c.DESCRIPTOR.full_name == type_name), None
    )
    if command_type is None:
        owner = wires.owner_of_command(type_name)
        if owner is not None:
            raise InvalidArgument(
                f"command: {type_name} is a command of variant {owner.variant!r}; this table "
                f"plays {wire.variant!r}"
            )
        known = ", ".join(c.DESCRIPTOR.full_name for c in wire.command_types)
        raise InvalidArgument(
            f"command: unknown command type {type_name[:100]!r} (variant {wire.variant!r} "
            f"plays {known})"
        )
    message = command_type()
    try:
        if not packed.Unpack(message):
            raise DecodeError("type mismatch")
    except DecodeError:
        raise InvalidArgument(f"command: the bytes are not a valid {type_name}") from None
    check_request(message, "command.")
    return message


def _first(payloads: Sequence[Message], cls: type) -> Any:
    for p in payloads:
        if isinstance(p, cls):
            return p
    raise FailedPrecondition("the request's first answer holds no such event")
