"""The event log: typed envelopes appended to and read from Kafka topics.

``KafkaEventLog`` is the real adapter; ``InMemoryEventLog`` is the fake for unit tests and the
simulator (``memory``: the log and its faults; ``memory_group``: groups, members, rebalances and
generations; ``memory_writer``: writers and open transactions; ``memory_state``: records and
transactions). Both pass the same contract suites
(``libs/platform/tests/test_eventlog_contract.py``, ``test_eventlog_group_contract.py``).

This package is the only place that imports kafka-python (an import contract in pyproject.toml
holds every other module to it). Its Kafka modules, one job each:

- ``kafka_log``: :class:`KafkaEventLog` (appends, stream reads, end offsets; builds the others);
- ``kafka_writer``: the transactional writer; ``kafka_group``: the consumer-group member;
- ``kafka_records``: whole partitions read outside a group (:class:`PartitionReader`), records
  that are not envelopes (:class:`RecordProducer`), :func:`unstable_partitions`;
- ``kafka_backup``: topics copied out whole and written back into an empty broker (``rummy
  backup`` / ``restore``);
- ``kafka_admin``: topics and the brokers' probe (:func:`cluster_probe`);
- ``kafka_client``: the clients' settings (each departure from kafka-python's defaults,
  measured) and record headers; ``kafka_poll``: the workarounds of group polling;
- ``kafka_security``: how clients authenticate (:class:`KafkaSecurity`, TLS and SASL/SCRAM,
  :func:`use_kafka_security`); ``kafka_acls``: the principals' grants on a secured broker;
- ``partitioner``: :func:`partition_for`, the partition of a stream.

The in-memory fake (``InMemoryEventLog``; ``memory*`` modules) is deterministic: no thread,
clock or randomness of its own; every rebalance and fault happens at an explicit call. What it
does as Kafka does (each checked on both by the contract suites):

- records stored as bytes with the event-type header, on Kafka's partition for their stream, so
  offsets and order are Kafka's; readers are ``read_committed``: the records of an open
  transaction are invisible and hold back every later record of their partition (the *last
  stable offset*, which :meth:`~EventLog.end_offsets` gives; ``high_watermarks`` includes
  them), an aborted transaction's records are never seen but keep their offsets, and the
  offsets a transaction sends are stored only if it commits;
- a new writer of a transactional id fences the earlier ones (WriterFenced) and finishes the
  id's open transaction;
- a member resumes a partition it is granted from what ``on_assigned`` returned, else its
  group's committed offset, else the start, so what it read without storing or committing is
  delivered again;
- consumer groups: by default a consumer is the one member of its group and owns every
  partition of its topics (what the services' unit tests use); with ``groups=True`` (the
  simulator's log) members share a group's partitions by range, a member joining or leaving
  (or :meth:`~InMemoryEventLog.rebalance`, :meth:`~InMemoryEventLog.expire_member`) starts an
  eager rebalance (each member gives up its partitions at its next poll; once all have, the
  next generation is assigned), and offsets sent under the metadata of a generation that ended,
  in a transaction or a commit, are refused with GenerationFenced (KIP-447).

Its faults, for tests and the simulator: a lost commit outcome, applied or not
(``fail_next_commit``), a commit left open until its writer writes again
(``interrupt_next_commit``), transactions held open (``open_transaction``,
``complete_transaction``), a client cut off from the log (``cut_off``, ``reconnect``), a member
dropped (``expire_member``), and a consumer's ``pause``, ``resume`` and ``fetchable`` (which
partitions a poll delivers from). Where it differs from Kafka, by design: a poll never waits;
there are no sessions (a member is dropped by ``expire_member`` only); a commit's records are
visible as it returns (Kafka writes the markers just after); transaction markers take no offset.
"""

from .base import (
    EVENT_TYPE_HEADER,
    CommitOutcomeUnknown,
    EventLog,
    EventLogError,
    GenerationFenced,
    GroupConsumer,
    OnAssigned,
    OnRevoked,
    Position,
    Record,
    TopicDescription,
    TopicMismatch,
    TopicPartition,
    TransactionalWriter,
    UnknownTopic,
    WriterFenced,
    decode_consumed,
    decode_if_used,
    decode_known,
)
from .dedupe import Deduplicator, by_causation_id, by_event_id, drop_redelivered
from .group_commit import GroupCommitMetrics, GroupCommitWriter
from .kafka_admin import cluster_probe
from .kafka_backup import (
    Cut,
    PartitionLoader,
    StoredRecord,
    cut_log,
    export_partition,
    group_offsets,
    partition_counts,
    set_group_offsets,
)
from .kafka_log import KafkaEventLog
from .kafka_records import PartitionReader, RawRecord, RecordProducer, unstable_partitions
from .kafka_security import (
    KAFKA_SECURITY_VARIABLES,
    KafkaCredentials,
    KafkaSecurity,
    ensure_password_file,
    read_password,
    use_kafka_security,
)
from .memory import InMemoryEventLog
from .partitioner import partition_for

__all__ = [
    "CommitOutcomeUnknown",
    "Cut",
    "EVENT_TYPE_HEADER",
    "Deduplicator",
    "EventLog",
    "EventLogError",
    "GenerationFenced",
    "GroupCommitMetrics",
    "GroupCommitWriter",
    "GroupConsumer",
    "InMemoryEventLog",
    "KAFKA_SECURITY_VARIABLES",
    "KafkaCredentials",
    "KafkaEventLog",
    "KafkaSecurity",
    "OnAssigned",
    "OnRevoked",
    "PartitionLoader",
    "PartitionReader",
    "Position",
    "RawRecord",
    "Record",
    "RecordProducer",
    "StoredRecord",
    "TopicDescription",
    "TopicMismatch",
    "TopicPartition",
    "TransactionalWriter",
    "UnknownTopic",
    "WriterFenced",
    "by_causation_id",
    "by_event_id",
    "cluster_probe",
    "cut_log",
    "decode_consumed",
    "decode_if_used",
    "decode_known",
    "drop_redelivered",
    "ensure_password_file",
    "export_partition",
    "group_offsets",
    "partition_for",
    "partition_counts",
    "read_password",
    "set_group_offsets",
    "unstable_partitions",
    "use_kafka_security",
]
