"""What must hold after every step of a world, read from the log and the stores as an auditor
would (never from a service's memory):

- ``tokens``: the ledger's balances sum to zero, every balance and hold equals its journal
  entries and held reservations (the in-memory store's ``invariant_violations``), and the
  issuance account has issued exactly what the operator granted (no token made or lost);
- ``resolution``: no hand's reservations are resolved twice: at most one ``HandSettled``,
  ``SettlementRefused`` or ``ReservationsReleased`` per hand in ledger-events (a republished
  row keeps its event id and is the same event);
- ``holds``: no hold is settled or released before its hand ended (its ``HandEnded`` or
  ``HandAborted`` in the table stream);
- ``replay``: every hand that ended (or was aborted) equals its replay through the same checks
  as ``rummy replay`` (``rummy_ops.replay.checks.replay_hand``: the rules, the commitment and
  deal, the settlement), and at the world's end also against the ledger's journal;
- ``commands``: every command the table answered OK is in the table stream exactly once: its
  events (caused by ``account/client_request_id``) are there, none of their types twice.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import TYPE_CHECKING

from rummy.ledger.v1 import events_pb2 as ledger_events
from rummy.table.v1 import events_pb2 as table_events
from rummy_ops.replay.checks import LedgerRows, replay_hand
from rummy_ops.replay.ledger import ledger_rows
from rummy_ops.replay.sources import Selection, select
from rummy_platform.envelope import Envelope, type_name
from rummy_platform.eventlog import InMemoryEventLog, Record
from rummy_platform.topics import LEDGER_EVENTS, TABLE_EVENTS

if TYPE_CHECKING:
    from rummy_sim.world import World

RESOLUTIONS = frozenset(
    type_name(m)
    for m in (
        ledger_events.HandSettled,
        ledger_events.SettlementRefused,
        ledger_events.ReservationsReleased,
    )
)
#: The replay's notes (what it could not check) are not violations; its findings are.
Violation = tuple[str, str]


class _Reader:
    """Every new committed record of one topic, in order per partition (an auditor's consumer)."""

    def __init__(self, log: InMemoryEventLog, topic: str) -> None:
        self._consumer = log.consumer(f"sim-audit-{topic}", [topic], lambda ps: {p: 0 for p in ps})

    def new(self) -> list[Record]:
        return self._consumer.poll(0.0, max_records=1_000_000)


class Checks:
    """The invariants of one world, checked incrementally after each step."""

    def __init__(self, world: World) -> None:
        self._world = world
        self._table = _Reader(world.log, TABLE_EVENTS)
        self._ledger = _Reader(world.log, LEDGER_EVENTS)
        self._resolved: dict[str, set[str]] = {}
        self._answered: dict[str, str] = {}
        self._unchecked: list[str] = []
        self._caused: dict[str, Counter[str]] = {}
        self._endings: list[str] = []
        self._ended: list[tuple[str, str]] = []  # (table id, hand id)
        self._early: set[str] = set()  # hands whose holds were resolved before they ended
        #: What the operator granted (hundredths): all the tokens there may be.
        self.granted = 0

    def answered(self, account_id: str, client_request_id: str, rpc: str) -> None:
        """The table answered ``rpc`` OK (checked after the step)."""
        key = f"{account_id}/{client_request_id}"
        self._answered[key] = rpc
        self._unchecked.append(key)

    def take_endings(self) -> list[str]:
        """The kinds of the hands that ended since the last call."""
        out, self._endings = self._endings, []
        return out

    def after_step(self) -> list[Violation]:
        found: list[Violation] = []
        found.extend(self._tokens())
        found.extend(self._new_ledger_events())
        found.extend(self._new_table_events())
        found.extend(self._holds())
        for key in self._unchecked:
            if not self._caused.get(key) and self._answered[key] != "Play":
                found.append(
                    ("commands", f"{self._answered[key]} {key} answered OK, not in the log")
                )
        self._unchecked = []
        return found

    def at_end(self) -> list[Violation]:
        """After the drain: every ended hand replayed again, now against the ledger's journal."""
        found: list[Violation] = []
        envelopes = self._stream()
        for table_id, hand_id in self._ended:
            found.extend(self._replay(envelopes, table_id, hand_id, with_ledger=True))
        return found

    # -- the invariants ----------------------------------------------------------------------

    def _tokens(self) -> Iterator[Violation]:
        store = self._world.ledger_store
        for problem in store.invariant_violations():
            yield ("tokens", problem)
        state = store.state
        issued = -sum(
            state.balances.get(account, 0)
            for account, kind in state.accounts.items()
            if kind.value == "issuance"
        )
        if issued != self.granted:
            yield ("tokens", f"{issued} hundredths issued, {self.granted} granted")

    def _holds(self) -> Iterator[Violation]:
        ended = {hand for _, hand in self._ended}
        for r in self._world.ledger_store.state.reservations:
            if r.state != "held" and r.hand_id not in ended and r.hand_id not in self._early:
                self._early.add(r.hand_id)
                yield ("holds", f"hand {r.hand_id}: seat {r.seat}'s hold {r.state} before it ended")

    def _new_ledger_events(self) -> Iterator[Violation]:
        for record in self._ledger.new():
            envelope = record.envelope
            if envelope.type not in RESOLUTIONS:
                continue
            hand_id = getattr(envelope.payload, "hand_id", "")
            ids = self._resolved.setdefault(hand_id, set())
            ids.add(envelope.event_id)
            if len(ids) > 1:
                yield ("resolution", f"hand {hand_id} resolved {len(ids)} times ({envelope.type})")

    def _new_table_events(self) -> Iterator[Violation]:
        new = self._table.new()
        ended = []
        for record in new:
            envelope = record.envelope
            key = envelope.causation_id
            if key in self._answered:
                types = self._caused.setdefault(key, Counter())
                types[envelope.type] += 1
                if types[envelope.type] > 1:
                    yield ("commands", f"{self._answered[key]} {key}: {envelope.type} twice")
            payload = envelope.payload
            if isinstance(payload, table_events.HandEnded):
                ended.append((envelope.stream_id, payload.hand_id))
                outcomes = sorted({r.outcome for r in payload.results} - {"won"})
                self._endings.append("+".join(outcomes) or "won")
            elif isinstance(payload, table_events.HandAborted):
                ended.append((envelope.stream_id, payload.hand_id))
                self._endings.append("aborted")
        if ended:
            envelopes = self._stream()
            for table_id, hand_id in ended:
                self._ended.append((table_id, hand_id))
                yield from self._replay(envelopes, table_id, hand_id, with_ledger=False)

    def _stream(self) -> list[Envelope]:
        log = self._world.log
        tables = {t for t, _ in self._ended} | {self._world_table()}
        return [r.envelope for t in sorted(tables) for r in log.read_stream(TABLE_EVENTS, t)]

    def _world_table(self) -> str:
        tables = self._world.table.app.projection.tables
        return next(iter(sorted(tables)), "")

    def _replay(
        self, envelopes: list[Envelope], table_id: str, hand_id: str, *, with_ledger: bool
    ) -> Iterator[Violation]:
        (chosen,) = select(envelopes, Selection(hand_id=hand_id, table_id=table_id))
        report = replay_hand(
            table_id,
            hand_id,
            chosen[2],
            self._journal if with_ledger else None,
            now=self._world.clock.now(),
        )
        for finding in report.findings:
            yield ("replay", f"hand {hand_id}: {finding}")
        if report.unverifiable:
            yield ("replay", f"hand {hand_id}: unverifiable: {report.notes}")

    def _journal(self, hand_id: str) -> LedgerRows | None:
        """The hand's settlement in the ledger's store, as ``rummy replay`` reads it from the
        journal (``rummy_ops.replay.ledger``)."""
        state = self._world.ledger_store.state
        ids = {t.id for t in state.transactions if t.kind == "settlement" and t.hand_id == hand_id}
        return ledger_rows(
            [
                (e.transaction_id, e.account_id, e.amount, e.line_kind, e.seat, e.points)
                for e in state.entries
                if e.transaction_id in ids
            ]
        )
