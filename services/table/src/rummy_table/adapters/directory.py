"""The directory of table partitions: which table-service instance serves which partition.

A small compacted Kafka topic (``table-owners``, one partition, one record per table partition,
key = the partition number): an instance that was granted partitions and rebuilt their tables
announces ``partition -> address, generation, writer id`` there, and every instance tails it
from the start into its :class:`~rummy_table.application.ownership.Ownership`. Why a topic: the
instances already share Kafka and nothing else; compaction keeps it one record per partition
whatever its age, a new instance learns every owner by reading it once, and an entry is never
older than the owner's last rebalance. It only routes: a stale entry sends a client to an
instance that answers with its own (newer) entry or "being handed over", and writes stay fenced
by the group whatever the directory says.
"""

from __future__ import annotations

import json
import threading

from rummy_platform.eventlog import PartitionReader, RecordProducer
from rummy_platform.logging import get_logger
from rummy_platform.topics import TopicSpec
from rummy_table.application.ownership import Ownership, PartitionOwner

_log = get_logger(__name__)
#: The directory topic (under the services' topic prefix).
TABLE_OWNERS = "table-owners"


def directory_spec(prefix: str = "") -> TopicSpec:
    """The directory topic: one partition, compacted (the latest entry of each partition)."""
    return TopicSpec(prefix + TABLE_OWNERS, 1, config={"cleanup.policy": "compact"})


def encode_entry(entry: PartitionOwner) -> bytes:
    return json.dumps(
        {
            "partition": entry.partition,
            "address": entry.address,
            "generation": entry.generation,
            "writer_id": entry.writer_id,
        },
        sort_keys=True,
    ).encode()


def decode_entry(value: bytes) -> PartitionOwner | None:
    """The entry of a directory record, or None for one that is not an entry (logged)."""
    try:
        raw = json.loads(value)
        return PartitionOwner(
            int(raw["partition"]),
            str(raw["address"]),
            int(raw["generation"]),
            str(raw["writer_id"]),
        )
    except (ValueError, KeyError, TypeError):
        _log.warning("directory record ignored: not an entry", value=value[:200])
        return None


class Directory:
    """Announces this instance's partitions on ``topic`` and tails the others' into
    ``ownership`` (:meth:`run`, a BackgroundLoops loop)."""

    def __init__(self, bootstrap_servers: str, topic: str, ownership: Ownership) -> None:
        self._bootstrap = bootstrap_servers
        self._topic = topic
        self._ownership = ownership
        self._producer = RecordProducer(bootstrap_servers, client_id="table-directory")

    def announce(self, partitions: frozenset[int], generation: int) -> None:
        """Record that this instance serves ``partitions`` since ``generation`` (and learn it
        at once). Raises EventLogError when the broker does not take it within 10 s."""
        own = self._ownership
        for partition in sorted(partitions):
            entry = PartitionOwner(partition, own.address, generation, own.writer_id)
            own.learn(entry)
            self._producer.send(self._topic, str(partition).encode(), encode_entry(entry))
        self._producer.flush(timeout_s=10)
        _log.info("partitions announced", partitions=sorted(partitions), generation=generation)

    def run(self, stop: threading.Event) -> None:
        # Every record (the directory's writers are not transactional), from the beginning.
        with PartitionReader(
            self._bootstrap, client_id="table-directory", committed_only=False
        ) as reader:
            reader.assign(self._topic, {0: 0})
            while not stop.is_set():
                for record in reader.poll(0.2):
                    entry = None if record.value is None else decode_entry(record.value)
                    if entry is not None:
                        self._ownership.learn(entry)

    def close(self) -> None:
        self._producer.close(timeout_s=5)
