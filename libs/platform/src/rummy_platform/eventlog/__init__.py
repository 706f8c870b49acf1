"""The event log: typed envelopes appended to and read from Kafka topics.

``KafkaEventLog`` is the real adapter; ``InMemoryEventLog`` is the fake for unit tests. Both pass
the same contract suite (``libs/platform/tests/test_eventlog_contract.py``).

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
"""

from .base import (
    EVENT_TYPE_HEADER,
    CommitOutcomeUnknown,
    EventLog,
    EventLogError,
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
