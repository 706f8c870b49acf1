"""Every table in memory, rebuilt by replaying the table stream, and the views WatchTable sends.

:class:`Projection` holds the :class:`~rummy_game.table.Table` of each table id and folds each
envelope into it (live after an append, or on replay at start). Two kinds of locks:

- ``lock`` guards the in-memory state of every table (folding an envelope, reading a view). It is
  held for microseconds and never across I/O, so a read never waits for a Kafka write.
- :meth:`Projection.command_lock` is one lock per table, held by a command from its decision
  through its commit to its fold: the commands of one table are strictly ordered and each sees
  the state its predecessor left, while other tables' commands proceed (and share transactions,
  see :class:`rummy_platform.eventlog.GroupCommitWriter`).

:attr:`Projection.on_change` is told the id of every table that changed (under ``lock``, from the
thread that folded it): the WatchTable streams hand it to their event loop and wake only the
watchers of that table.

:func:`player_view` is the one place a caller's view is built: the variant's view of the hand
for the caller's seat (rules ``view()``; a spectator gets the public view) plus the table's
seats. Never another seat's cards or the stock order while the hand runs.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable

from rummy.common.v1 import cards_pb2
from rummy.table.v1 import events_pb2 as pb
from rummy.table.v1 import table_service_pb2 as api
from rummy_game import stream_codec as codec
from rummy_game import wires
from rummy_game.table import DecisionObserver, Table
from rummy_platform.envelope import Envelope
from rummy_platform.eventlog import Record
from rummy_platform.logging import get_logger
from rummy_platform.skips import SKIPPED
from rummy_rules.cards import Card
from rummy_rules.deck import Shoe
from rummy_rules.rules import RuleSetError
from rummy_rules.variant import DeadlineKind

_log = get_logger(__name__)

#: The spectator's seat number for the rules' view (holds no cards).
SPECTATOR = -1

_PHASES = {
    "not_started": api.HAND_PHASE_WAITING,
    "preparing": api.HAND_PHASE_RESERVING,
    "seed_window": api.HAND_PHASE_SEEDING,
    "awaiting_deal": api.HAND_PHASE_DEALING,
    "playing": api.HAND_PHASE_PLAYING,
    "ended": api.HAND_PHASE_ENDED,
    "aborted": api.HAND_PHASE_ABORTED,
}


#: The wire state of a table by :attr:`Table.state_name`.
TABLE_STATES = {
    "open": api.TABLE_STATE_OPEN,
    "closing": api.TABLE_STATE_CLOSING,
    "closed": api.TABLE_STATE_CLOSED,
}


class Projection:
    """The tables, by id. Thread-safe under ``lock``. ``on_decision`` is given to every table
    (told of each decision a table asks of the rules; see ``Table.on_decision``)."""

    def __init__(self, on_decision: DecisionObserver | None = None) -> None:
        self.lock = threading.RLock()
        self.tables: dict[str, Table] = {}
        self._command_locks: dict[str, threading.Lock] = {}
        #: Called with a table's id after each change of it, under :attr:`lock` (it must be
        #: quick and never block: the watch streams only schedule a wake-up on their loop).
        self.on_change: Callable[[str], None] | None = None
        #: The request digest of every client command in a table's answer window, by causation
        #: id (``"<account>/<client_request_id>"``), over all tables (bounded as the windows).
        self.requests: dict[str, str] = {}
        #: Per partition of the table stream: the highest offset folded here (live or on
        #: replay). Every table's state covers all its events up to it, once no command of the
        #: table is in flight (see :mod:`rummy_table.adapters.snapshot`).
        self.folded: dict[int, int] = {}
        #: Per partition: envelopes folded since the last snapshot of it was taken.
        self.since_snapshot: dict[int, int] = {}
        self.on_decision = on_decision
        #: Tables this instance cannot serve (their TableOpened names a variant it does not
        #: host: a newer instance opened them, in a rolling deploy) -> why, naming the variant.
        #: Their commands fail with FAILED_PRECONDITION; every other table is served.
        self.unservable: dict[str, str] = {}

    def command_lock(self, table_id: str) -> threading.Lock:
        """The lock a command on ``table_id`` holds from its decision to its fold."""
        with self.lock:
            found = self._command_locks.get(table_id)
            if found is None:
                found = self._command_locks[table_id] = threading.Lock()
            return found

    def command_locks(self) -> list[str]:
        """The table ids that have a command lock (every table a command was begun for)."""
        with self.lock:
            return list(self._command_locks)

    def _changed(self, table_id: str) -> None:
        if self.on_change is not None:
            self.on_change(table_id)

    def rebuild(self, table_id: str, envelopes: Iterable[Envelope | Record]) -> Table | None:
        """Replace ``table_id``'s state by the fold of ``envelopes`` (its whole stream, as read
        back from the log; Records also say where each lies, which a snapshot of the table
        needs); returns the new table (None if the stream holds no table)."""
        table: Table | None = None
        where: list[tuple[int, int]] = []
        for item in envelopes:
            envelope = item.envelope if isinstance(item, Record) else item
            offset = item.offset if isinstance(item, Record) else -1
            if isinstance(item, Record):
                where.append((item.partition, item.offset))
            if isinstance(envelope.payload, pb.TableOpened):
                table = self._opened(envelope)
                if table is None:
                    break
            elif table is not None:
                table.apply(envelope, offset)
        with self.lock:
            for partition, offset in where:
                self._folded_at(partition, offset)
            if table is None:
                self.tables.pop(table_id, None)
            else:
                self.install(table)
            self._changed(table_id)
        return table

    def _opened(self, envelope: Envelope) -> Table | None:
        """The table a TableOpened creates, or None when it cannot be loaded (its later events
        are then those of an unknown table): a variant this instance does not host (recorded in
        :attr:`unservable`, counted as a skip), or options the rules refuse (a table opened
        before a bound was added: logged, never loaded, so it never starts a hand)."""
        opened = envelope.payload
        assert isinstance(opened, pb.TableOpened)
        variant = opened.rule_set.variant
        if opened.rule_set.HasField("variant") and variant not in wires.hosted_variants():
            reason = (
                f"table {envelope.stream_id} plays variant {variant!r}, which this table-service "
                f"instance does not host (it hosts: {', '.join(wires.hosted_variants())})"
            )
            with self.lock:
                self.unservable[envelope.stream_id] = reason
            SKIPPED.skipped(
                "unknown_variant",
                type_name=envelope.type,
                variant=variant,
                table_id=envelope.stream_id,
                consumer="table",
            )
            return None
        try:
            return Table.opened_from(envelope, self.on_decision)
        except RuleSetError as exc:
            _log.error(
                "table not loaded: the rules refuse its options",
                table_id=envelope.stream_id,
                reason=codec.wire_message(exc, codec.variant_of(opened.rule_set)),
            )
            return None

    def drop(self, table_ids: Iterable[str]) -> None:
        """Forget ``table_ids`` (handed over to another instance) with the request digests
        their events recorded; their watchers are woken (and end: the table is gone)."""
        with self.lock:
            for table_id in table_ids:
                table = self.tables.pop(table_id, None)
                if table is not None:
                    for key in table.answers:
                        self.requests.pop(key, None)
                self._command_locks.pop(table_id, None)
                self.unservable.pop(table_id, None)
                self._changed(table_id)

    def install(self, table: Table) -> None:
        """Hold ``table`` (rebuilt, or loaded from a snapshot) with its request digests."""
        with self.lock:
            table.on_decision = self.on_decision
            self.tables[table.table_id] = table
            for key, digest in table.digests.items():
                self.requests.setdefault(key, digest)
            table.evicted.clear()

    def _folded_at(self, partition: int, offset: int) -> None:
        if partition >= 0:
            self.since_snapshot[partition] = self.since_snapshot.get(partition, 0) + 1
            if offset > self.folded.get(partition, -1):
                self.folded[partition] = offset

    def _forget_evicted(self, table: Table) -> None:
        for key in table.evicted:
            if self.requests.get(key) is not None and key not in table.digests:
                del self.requests[key]
        table.evicted.clear()

    def apply(self, envelope: Envelope, partition: int = -1, offset: int = -1) -> Table | None:
        """Fold one table-stream envelope (``offset`` in ``partition`` of the table stream; -1
        when not known); returns its table (None for an event of an unknown table, or for a
        TableOpened whose options the rules refuse: a table opened before a bound was added is
        logged and not loaded)."""
        with self.lock:
            table = self._fold(envelope, partition, offset)
            if table is not None:
                self._changed(table.table_id)
            return table

    def apply_all(self, folded: Iterable[tuple[Envelope, int, int]]) -> None:
        """Fold envelopes appended together (each with its partition and offset, as
        :meth:`apply`) under one hold of :attr:`lock`; :attr:`on_change` is told of each table
        they changed once, after the last (a discard and the turn it starts wake each watcher
        once, not once per event)."""
        with self.lock:
            changed: dict[str, None] = {}
            for envelope, partition, offset in folded:
                table = self._fold(envelope, partition, offset)
                if table is not None:
                    changed[table.table_id] = None
            for table_id in changed:
                self._changed(table_id)

    def _fold(self, envelope: Envelope, partition: int, offset: int) -> Table | None:
        self._folded_at(partition, offset)
        if envelope.causation_id and envelope.request_digest:
            self.requests.setdefault(envelope.causation_id, envelope.request_digest)
        if isinstance(envelope.payload, pb.TableOpened):
            opened = self._opened(envelope)
            if opened is None:
                return None
            self.tables[opened.table_id] = opened
            return opened
        table = self.tables.get(envelope.stream_id)
        if table is None:
            return None
        table.apply(envelope, offset)
        if table.evicted:
            self._forget_evicted(table)
        return table


#: Each shoe's wire cards, made once: protobuf copies a message that a view is given
#: (``extend``, ``CopyFrom``), so a view's cards cost a look-up each instead of an index
#: computed and a message built (measured: 34 cards 303 -> 59 us); nobody mutates these. Per
#: shoe, then by ``(rank, id(suit), copy)``: hashing a Card itself runs ``Enum.__hash__``
#: (Python code) for its suit on every look-up (a 4-seat view mid-hand: 61 -> 53 us median);
#: a suit is a module-level singleton, so its id names it for the life of the process.
_WIRE_CARDS: dict[Shoe, dict[tuple[object, int, int], cards_pb2.Card]] = {}


def _wire_cards(shoe: Shoe) -> dict[tuple[object, int, int], cards_pb2.Card]:
    found = _WIRE_CARDS.get(shoe)
    if found is None:  # a few shoes at most
        found = _WIRE_CARDS[shoe] = {}
    return found


def _wire_in(
    card: Card, cards: dict[tuple[object, int, int], cards_pb2.Card], shoe: Shoe
) -> cards_pb2.Card:
    key = (card.rank, id(card.suit), card.copy)
    found = cards.get(key)
    if found is None:  # a few hundred cards per shoe at most: the cache stays small
        found = cards[key] = codec.card_to_pb(card, shoe)
    return found


def player_view(table: Table, account_id: str | None) -> api.PlayerView:
    """What ``account_id`` (None: a spectator) may see of ``table`` now."""
    seat = table.seat_of(account_id) if account_id is not None else None
    view = api.PlayerView(
        table_id=table.table_id,
        stream_version=table.version,
        table_state=TABLE_STATES[table.state_name],
    )
    if seat is not None:
        view.my_seat = seat
    if table.match is not None and table.match.state.match_id:
        view.match.CopyFrom(table.match.view_pb())
    seat_views: dict[int, api.SeatView] = {
        s: api.SeatView(
            seat=s,
            account_id=info.account_id,
            status="seated",
            sitting_out_reason=info.sitting_out_reason,
        )
        for s, info in table.seats.items()
    }
    if table.hand is None or table.ctx is None:
        view.phase = api.HAND_PHASE_WAITING
        view.seats.extend(seat_views[s] for s in sorted(seat_views))
        return view
    ctx, shoe = table.ctx, table.ctx.shoe
    in_hand = seat if seat is not None and seat in ctx.accounts else SPECTATOR
    hand = table.variant.view(table.hand, in_hand)
    view.hand_id = hand.hand_id
    view.hand_no = table.hand_no
    view.phase = _PHASES.get(hand.phase, api.HAND_PHASE_UNSPECIFIED)
    wire = _wire_cards(shoe)
    view.my_cards.extend([_wire_in(c, wire, shoe) for c in hand.cards])
    view.dealer_seat = ctx.dealer_seat
    if hand.wild_cut is not None:
        view.wild_cut.CopyFrom(_wire_in(hand.wild_cut, wire, shoe))
    view.discard_pile.extend([_wire_in(c, wire, shoe) for c in hand.discard_pile])
    view.stock_count = hand.stock_count
    view.turn_no = hand.turn_no
    if hand.turn_seat is not None:
        view.turn_seat = hand.turn_seat
    if hand.turn_deadline_ms is not None:
        view.turn_deadline.CopyFrom(codec.ms_to_timestamp(hand.turn_deadline_ms))
    deadline = table.variant.deadline(table.hand)
    if deadline is not None and deadline.kind is DeadlineKind.SEED_WINDOW:
        view.seed_deadline.CopyFrom(codec.ms_to_timestamp(deadline.due_ms))
    view.has_drawn = hand.has_drawn
    if hand.commitment:
        view.server_commitment_sha256 = bytes.fromhex(hand.commitment)
    for s in hand.seats:
        seat_view = seat_views.get(s.seat) or api.SeatView(seat=s.seat)
        seat_view.account_id = s.account_id
        seat_view.card_count = s.card_count
        seat_view.dealt_in = True
        seat_view.out = s.status not in ("waiting", "playing", "won")
        seat_view.missed_turns_in_a_row = s.misses_in_a_row
        seat_view.status = s.status
        seat_views[s.seat] = seat_view
    view.seats.extend(seat_views[s] for s in sorted(seat_views))
    result = table.results.get(hand.hand_id)
    if result is not None:
        view.result.CopyFrom(result)
    aborted = getattr(hand.result, "reason", "") if hand.phase == "aborted" else ""
    view.aborted_reason = aborted
    view.voided_reason = table.voided.get(hand.hand_id, "")
    return view
