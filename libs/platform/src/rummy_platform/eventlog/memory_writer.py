"""The in-memory event log's writers (:mod:`.memory`): :class:`InMemoryWriter`, transactions
left open (:class:`OpenTransaction`) and the threaded tests' :class:`CommitGate`."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Unpack

from rummy_platform.envelope import Envelope

from .base import (
    CommitOutcomeUnknown,
    EventLogError,
    OffsetCommit,
    Position,
    TransactionalWriter,
    WriterFenced,
    offsets_to_commit,
)
from .memory_group import check_generation
from .memory_state import MemoryState, Txn, TxnState


class CommitGate:
    """Holds every transaction of a log at its start until :meth:`open` (from
    :meth:`InMemoryEventLog.hold_commits`), so a test can line callers up behind a transaction in
    flight. ``sizes``: the event count of each transaction that went through, in order; ``fail``:
    the transactions (counted from 0) that fail, with their error (nothing written)."""

    def __init__(self, fail: Mapping[int, EventLogError] | None = None) -> None:
        self._opened = threading.Event()
        self.entered = threading.Event()
        self.fail = dict(fail or {})
        self.sizes: list[int] = []

    def open(self) -> None:
        self._opened.set()

    def _pass(self, events: int) -> EventLogError | None:
        self.entered.set()
        if not self._opened.wait(30):
            raise EventLogError("the test's commit gate was never opened")
        error = self.fail.get(len(self.sizes))
        self.sizes.append(events)
        return error


class OpenTransaction:
    """A transaction left open by :meth:`InMemoryEventLog.open_transaction`: ``positions`` of
    its records; :meth:`commit` or :meth:`abort` it (once)."""

    def __init__(self, state: MemoryState, txn: Txn) -> None:
        self._state = state
        self._txn = txn

    @property
    def positions(self) -> list[Position]:
        return list(self._txn.positions)

    def commit(self) -> None:
        """Make its records visible and store its offsets. Raises WriterFenced when a newer
        producer of its id aborted it meanwhile."""
        with self._state.lock:
            if self._txn.state is TxnState.ABORTED:
                raise WriterFenced(
                    f"transaction of {self._txn.transactional_id!r} was aborted by a newer "
                    "producer with its id"
                )
            self._state.finish(self._txn, commit=True)

    def abort(self) -> None:
        """Drop its records for good (their offsets stay taken) and its offsets."""
        with self._state.lock:
            self._state.finish(self._txn, commit=False)


class InMemoryWriter(TransactionalWriter):
    def __init__(self, state: MemoryState, transactional_id: str, epoch: int) -> None:
        self._state = state
        self.transactional_id = transactional_id
        self._epoch = epoch

    def _usable(self) -> None:
        """Raise WriterFenced once fenced, EventLogError while cut off; resolve this writer's
        interrupted transaction (the real one recreates its producer). Call with the lock."""
        if self._state.epochs[self.transactional_id] != self._epoch:
            raise WriterFenced(
                f"writer {self.transactional_id!r} was fenced by a newer writer with the same id"
            )
        if self in self._state.cut_off:
            raise EventLogError(f"writer {self.transactional_id!r} is cut off from the log")
        self._state.resolve(self.transactional_id)

    def ready(self) -> None:
        with self._state.lock:
            self._usable()

    def append_batch(
        self, events: Sequence[tuple[str, Envelope]], **commit: Unpack[OffsetCommit]
    ) -> list[Position]:
        gate = self._state.gate
        gated_error = gate._pass(len(events)) if gate is not None else None
        with self._state.lock:
            if gated_error is not None:
                raise gated_error
            self._usable()
            consumed, group_id, metadata = offsets_to_commit(commit)
            for topic, _ in events:
                self._state.topic(topic)
            check_generation(self._state, metadata)
            failure = self._state.take_failure(self.transactional_id)
            if failure is not None and failure.error is not None and not failure.written:
                raise failure.error
            txn = self._state.open_transaction(self.transactional_id, events, consumed, group_id)
            if failure is not None and failure.error is None:
                txn.lands = failure.written
                raise CommitOutcomeUnknown(
                    f"commit of {self.transactional_id!r} not confirmed (interrupted)"
                )
            self._state.finish(txn, commit=True)
            if failure is not None and failure.error is not None:
                raise failure.error
            return list(txn.positions)

    def close(self) -> None:
        pass
