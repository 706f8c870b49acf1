"""The other services' events (ledger, fairness, dealer, clock) turned into the table's facts:
each recorded with the consumed offsets in one transaction, a batch's tables in parallel."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from google.protobuf.message import Message

from rummy.clock.v1 import events_pb2 as clock_pb
from rummy.dealer.v1 import events_pb2 as dealer_pb
from rummy.fairness.v1 import events_pb2 as fairness_pb
from rummy.ledger.v1 import events_pb2 as ledger_pb
from rummy_game import stream_payloads
from rummy_platform.envelope import Envelope
from rummy_platform.errors import (
    FailedPrecondition,
    Unavailable,
)
from rummy_platform.eventlog import (
    EventLogError,
    Record,
    TopicPartition,
    WriterFenced,
)
from rummy_platform.logging import get_logger, log_context
from rummy_rules import commands as rc
from rummy_rules.errors import RuleViolation
from rummy_rules.events import HandDealt
from rummy_table.domain import closing, match_hosting
from rummy_table.domain.errors import WrongState
from rummy_table.domain.facts import (
    HandSettled,
    MatchMoneyHeld,
    MatchMoneyRejected,
    MatchSettled,
    SeedRevealed,
    SettlementRefused,
    StakeRejected,
)
from rummy_table.domain.table import Fact

from . import stream_facts
from .commit import TableCore
from .held_table import HeldTable

_log = get_logger(__name__)


def on_input(
    core: TableCore, envelope: Envelope, position: TopicPartition, next_offset: int
) -> bool:
    """Turn another service's event into the table's facts, appended with the consumed
    offset in one transaction. Returns True if facts were appended. A seed reveal or settlement
    is recorded for any hand of the table (it closes that hand's proof, even after the next
    hand started); other inputs act on the current hand only. Inputs of unknown tables, of
    other hands, already recorded (by causation id), or refused by the rules are consumed
    without effect. Raises Unavailable once fenced, EventLogError when the transaction
    failed (nothing recorded: retry the input)."""
    return _record_input(core, envelope, lambda: {position: next_offset})


def on_inputs(
    core: TableCore, records: Sequence[Record], caps: Mapping[TopicPartition, int] | None = None
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
        if not core._owns(table_records[0].envelope.stream_id):
            return  # handed over: the new owner consumes them (no offset of ours moves)
        for i, record in enumerate(table_records):
            tp = TopicPartition(record.topic, record.partition)
            try:
                _record_input(
                    core, record.envelope, progress.for_record(tp, record.offset), alone=False
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
        for future in [core._workers().submit(run, group) for group in groups]:
            future.result()
    # What is committed but not handed out yet (inputs without effect, or whose offsets
    # waited for an earlier input): never past a record not committed, so also after a
    # failed transaction of the batch.
    rest = progress.unsent() if outcome.fenced is None else {}
    if rest:
        try:  # offsets only: an unknown outcome re-reads that table, harmlessly
            core._append([], records[-1].envelope.stream_id, rest)
        except (WriterFenced, Unavailable) as exc:
            outcome.fenced = exc
        except EventLogError as exc:
            outcome.log_error = outcome.log_error or exc
    return outcome


def _record_input(
    core: TableCore,
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
    if not core._owns(envelope.stream_id):
        return False
    with core._command(envelope.stream_id) as table:
        facts: list[Fact] = []
        at = core.now_ms()
        if table is not None and envelope.event_id not in table.answers:
            hand_id = getattr(envelope.payload, "hand_id", "")
            with log_context(table_id=table.table_id, hand_id=hand_id or None):
                try:
                    facts = react(core, table, envelope.payload, hand_id, at)
                except RuleViolation as exc:
                    _log.info("input refused by the rules", reason=exc.code.value)
                except (WrongState, FailedPrecondition, stream_payloads.StreamPayloadError) as exc:
                    _log.info("input ignored", reason=str(exc))
        if table is None or not facts:
            offsets = consumed() if alone else {}
            if offsets:
                core._append([], envelope.stream_id, offsets)
            return False
        offsets = consumed()
        core.commit(table, facts, at, causation_id=envelope.event_id, consumed=offsets or None)
        return True


def react(core: TableCore, table: HeldTable, payload: Message, hand_id: str, at: int) -> list[Fact]:
    """The facts another service's event ``payload`` (about hand ``hand_id``, received at
    ``at``) causes at ``table``; none for an event of another hand or one the table does not
    take. Raises as the domain's decisions (WrongState, RuleViolation), StreamPayloadError
    for a payload that maps to no fact."""
    fact = stream_facts.fact_of(payload, at)
    if isinstance(fact, SeedRevealed | HandSettled | SettlementRefused):
        return table.close_proof(fact)
    if isinstance(fact, MatchMoneyHeld | MatchMoneyRejected):
        return match_hosting.match_money(table, fact, at)
    if isinstance(fact, MatchSettled):
        return match_hosting.match_settled(table, fact)
    ctx = table.ctx
    if ctx is None or hand_id != ctx.hand_id:
        return []
    if isinstance(fact, StakeRejected):
        return closing.stake_rejected(table, fact, at)
    if isinstance(payload, ledger_pb.StakesReserved):
        cmds: list[rc.Command] = [
            rc.RecordStakeReserved(seat=r.seat, amount_hundredths=r.amount_hundredths, at_ms=at)
            for r in payload.reservations
        ]
        return table.hand_commands(cmds)
    if isinstance(payload, fairness_pb.SeedCommitted):
        return table.hand_commands(
            [rc.RecordSeedCommitment(commitment=payload.commitment_sha256.hex(), at_ms=at)]
        )
    if isinstance(payload, dealer_pb.HandDealt):
        (dealt,) = stream_payloads.from_payload(payload, ctx, at)
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
        stock = tuple(stream_payloads.card_from_pb(c, ctx.shoe) for c in payload.stock)
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
