"""The event log: typed envelopes appended to and read from Kafka topics.

``KafkaEventLog`` is the real adapter; ``InMemoryEventLog`` is the fake for unit tests. Both pass
the same contract suite (``libs/platform/tests/test_eventlog_contract.py``).
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
    decode_if_used,
    decode_known,
)
from .dedupe import Deduplicator, by_causation_id, by_event_id, drop_redelivered
from .group_commit import GroupCommitWriter
from .kafka_log import KafkaEventLog
from .memory import InMemoryEventLog

__all__ = [
    "CommitOutcomeUnknown",
    "EVENT_TYPE_HEADER",
    "Deduplicator",
    "EventLog",
    "EventLogError",
    "GroupCommitWriter",
    "GroupConsumer",
    "InMemoryEventLog",
    "KafkaEventLog",
    "OnAssigned",
    "OnRevoked",
    "Position",
    "Record",
    "TopicDescription",
    "TopicMismatch",
    "TopicPartition",
    "TransactionalWriter",
    "UnknownTopic",
    "WriterFenced",
    "by_causation_id",
    "by_event_id",
    "decode_if_used",
    "decode_known",
    "drop_redelivered",
]
