"""Which tables this table-service instance serves: the partitions of ``table-events`` the input
consumer group assigned to it (``docs/rules/promises.md#scales-out``), and who serves the others.

Every topic the table service consumes is co-partitioned with ``table-events`` by table id and the
group assigns by range, so the member given partition ``p`` of the input topics owns partition
``p`` of ``table-events``: it rebuilds, serves and writes exactly the tables whose id hashes to
``p``. :class:`Ownership` holds, for each owned partition, the group metadata of the generation
that granted it: every transaction of the partition's tables carries that metadata (KIP-447), so
once the group moved on a stale owner's commit is refused by the broker and appends nothing.

A command enters through :meth:`Ownership.serving`, which refuses a table of a partition not owned
(:class:`NotOwner`: UNAVAILABLE naming the owner's address when the directory knows it) and counts
the command in flight; :meth:`Ownership.revoke` first stops new commands of the partitions, then
waits for those in flight to finish their commits. The directory (``table-owners``, see
``rummy_table.adapters.directory``) tells every instance who owns which partition.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass

from rummy_platform.errors import Unavailable
from rummy_platform.eventlog import partition_for
from rummy_platform.logging import get_logger
from rummy_table.contract import OWNER_METADATA_KEY

_log = get_logger(__name__)


@dataclass(frozen=True, slots=True)
class PartitionOwner:
    """A directory entry: ``address`` (gRPC ``host:port``) serves ``partition`` since the group
    ``generation``; ``writer_id`` is its transactional id."""

    partition: int
    address: str
    generation: int
    writer_id: str


class NotOwner(Unavailable):
    """The table belongs to a partition another instance serves (or one being handed over)."""


class Ownership:
    """The partitions this instance (``address``, transactional id ``writer_id``) owns among
    ``partitions`` partitions, and the directory of the others' owners. Thread-safe."""

    def __init__(
        self, partitions: int, address: str, writer_id: str, handover_wait_s: float = 5.0
    ) -> None:
        self.partitions = partitions
        #: How long a command or read of a partition being handed over (not owned, and the
        #: directory names no other owner) waits for the handover to end before NotOwner.
        self.handover_wait_s = handover_wait_s
        self.address = address
        self.writer_id = writer_id
        self._cond = threading.Condition()
        self._owned: dict[int, object] = {}
        self._in_flight: dict[int, int] = {}
        self._ends: dict[int, int] = {}
        self._directory: dict[int, PartitionOwner] = {}
        #: Set once the first assignment was rebuilt (the instance may report SERVING).
        self.ready = threading.Event()

    def partition_of(self, table_id: str) -> int:
        return partition_for(table_id, self.partitions)

    # -- what this instance owns --------------------------------------------------------------

    def owned(self) -> frozenset[int]:
        with self._cond:
            return frozenset(self._owned)

    def owns_table(self, table_id: str) -> bool:
        with self._cond:
            return self.partition_of(table_id) in self._owned

    def grant(self, partitions: frozenset[int], metadata: object, ends: Mapping[int, int]) -> None:
        """Own ``partitions`` (rebuilt already, each up to offset ``ends[p]`` of table-events)
        under the group ``metadata`` of their generation."""
        with self._cond:
            for p in partitions:
                self._owned[p] = metadata
                self._ends[p] = max(ends.get(p, 0), self._ends.get(p, 0))
            self._cond.notify_all()
        self.ready.set()

    def end_of(self, partition: int) -> int:
        """The table-events offset this instance rebuilt or wrote ``partition`` up to."""
        with self._cond:
            return self._ends.get(partition, 0)

    def wrote(self, partition: int, next_offset: int) -> None:
        with self._cond:
            self._ends[partition] = max(next_offset, self._ends.get(partition, 0))

    def revoke(self, partitions: frozenset[int], wait_s: float = 30.0) -> None:
        """Stop serving ``partitions``: new commands are refused at once, then this waits (up
        to ``wait_s`` seconds) for the commands in flight on them to finish."""
        deadline = time.monotonic() + wait_s
        with self._cond:
            for p in partitions:
                self._owned.pop(p, None)
            while any(self._in_flight.get(p) for p in partitions):
                left = deadline - time.monotonic()
                if left <= 0:
                    _log.warning(
                        "partitions revoked with commands still in flight",
                        partitions=sorted(p for p in partitions if self._in_flight.get(p)),
                    )
                    break
                self._cond.wait(left)

    def metadata_for(self, table_id: str) -> object:
        """The group metadata ``table_id``'s commits carry. Raises NotOwner."""
        partition = self.partition_of(table_id)
        with self._cond:
            if partition in self._owned:
                return self._owned[partition]
        raise self._not_owner(table_id, partition)

    def _await(self, partition: int) -> bool:
        """Wait (lock held) up to ``handover_wait_s`` while ``partition`` is being handed over
        (not owned, no other owner known); True once it is owned here."""
        deadline = time.monotonic() + self.handover_wait_s
        while partition not in self._owned:
            entry = self._directory.get(partition)
            left = deadline - time.monotonic()
            if (entry is not None and entry.address != self.address) or left <= 0:
                return False
            self._cond.wait(min(left, 0.5))
        return True

    def check(self, table_id: str) -> None:
        """Raise NotOwner unless this instance serves ``table_id`` (after waiting out a
        handover, see :attr:`handover_wait_s`)."""
        partition = self.partition_of(table_id)
        with self._cond:
            if self._await(partition):
                return
        raise self._not_owner(table_id, partition)

    @contextmanager
    def serving(self, table_id: str) -> Iterator[None]:
        """Hold ``table_id``'s partition for one command (a revocation waits for it; a
        handover is waited out first, see :attr:`handover_wait_s`). Raises NotOwner."""
        partition = self.partition_of(table_id)
        with self._cond:
            if not self._await(partition):
                raise self._not_owner(table_id, partition)
            self._in_flight[partition] = self._in_flight.get(partition, 0) + 1
        try:
            yield
        finally:
            with self._cond:
                self._in_flight[partition] -= 1
                self._cond.notify_all()

    # -- who owns the rest ----------------------------------------------------------------------

    def learn(self, entry: PartitionOwner) -> None:
        """Record a directory entry; one of an older generation than the one known for its
        partition (a late announcement of a superseded owner) is ignored."""
        with self._cond:
            known = self._directory.get(entry.partition)
            if known is None or entry.generation >= known.generation:
                self._directory[entry.partition] = entry
                self._cond.notify_all()

    def owner_of(self, partition: int) -> PartitionOwner | None:
        with self._cond:
            return self._directory.get(partition)

    def peers(self) -> list[str]:
        """The addresses of the other instances the directory names as owners, sorted."""
        with self._cond:
            return sorted(
                {e.address for p, e in self._directory.items() if e.address != self.address}
            )

    def _not_owner(self, table_id: str, partition: int) -> NotOwner:
        with self._cond:
            entry = self._directory.get(partition)
        if entry is None or entry.address == self.address:
            return NotOwner(
                f"table {table_id} (partition {partition}) is being handed over between "
                "table-service instances; retry shortly"
            )
        return NotOwner(
            f"table {table_id} (partition {partition}) is served by the table-service instance "
            f"at {entry.address}; call it there",
            trailing_metadata=((OWNER_METADATA_KEY, entry.address),),
        )
