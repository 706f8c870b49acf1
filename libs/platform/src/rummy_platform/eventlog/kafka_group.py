"""A consumer-group member on Kafka (:class:`KafkaGroupConsumer`), made by
:meth:`~.kafka_log.KafkaEventLog.consumer`: offsets controlled by the caller, rebalances
reported to its callbacks, and kafka-python's rebalance and polling troubles worked around
(:mod:`.kafka_poll`)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any

import kafka.errors as kafka_errors
from kafka import ConsumerRebalanceListener, KafkaConsumer, OffsetAndMetadata
from kafka import TopicPartition as KafkaTopicPartition

from rummy_platform.envelope import PayloadRegistry
from rummy_platform.logging import get_logger
from rummy_platform.metrics import ConsumerLagReporter

from .base import (
    EventLogError,
    GenerationFenced,
    GroupConsumer,
    OnAssigned,
    OnRevoked,
    Record,
    TopicPartition,
    decode_consumed,
)
from .kafka_client import GROUP_FETCH, GROUP_FETCH_IDLE, GROUP_IDLE_AFTER_S, header_type
from .kafka_poll import (
    EmptyAssignmentWatch,
    FetchPacing,
    PollGuard,
    kafka_consumer_lag,
    wait_for_partitions,
)

_log = get_logger(__name__)

#: Seconds past a member's session after which an assignment still empty means kafka-python's
#: hang (see :class:`KafkaGroupConsumer`, "Rejoining"), not a rebalance in progress.
REJOIN_MARGIN_S = 2.0


def rejoin_after_s(session_timeout_s: float) -> float:
    """How long a member's assignment may stay empty before it leaves and joins again: its
    session plus :data:`REJOIN_MARGIN_S` seconds. A rebalance that waits for a member that is
    gone (a killed process: no LeaveGroup) ends when that member's session expires, so a new
    member is assigned within about one session of joining; one still empty after that is stuck
    (a start of the table service after a SIGKILL waited 18.6 s for its partitions at the former
    fixed 15 s, issue 34)."""
    return session_timeout_s + REJOIN_MARGIN_S


class KafkaGroupConsumer(GroupConsumer):
    """A consumer-group member; created by :meth:`KafkaEventLog.consumer`.

    Joining: the member subscribes only once its client sees every topic's partitions (up to
    ``metadata_wait_s`` seconds): a member that joins while a topic it subscribes to is still
    being created gets an empty assignment.

    Granting: ``on_assigned`` runs on the polling thread, in the :meth:`poll` that got the
    assignment, after kafka-python's own poll returned, never inside kafka-python's rebalance
    listener. kafka-python 3.0.12 calls a (synchronous) listener on its IO thread, where it
    blocks the member's heartbeats: a table instance rebuilding its partitions there for more
    than the session (6 s) was dropped from the group in the middle of it, rejoined two
    generations later, so the rebuilt tables were thrown away and rebuilt again, and again while
    each rebuild outlasted the session (the 45.9 s start of issue 34). So the listener only
    pauses the assigned partitions (no record of theirs is fetched or returned) and notes them;
    :meth:`poll` then calls ``on_assigned``, seeks and resumes them, while the IO thread keeps
    heartbeating. A rebalance cannot come in between: kafka-python joins and calls the listener
    only inside a poll. ``on_assigned`` raising leaves the partitions paused and noted, and the
    next :meth:`poll` calls it again. ``on_revoked`` stays in the listener (the partitions must
    be let go before the group hands them over) and is not called for partitions whose
    ``on_assigned`` has not run. A poll that grants may therefore take as long as
    ``on_assigned`` does: the member's ``max_poll_interval_s`` (kafka-python's
    ``max_poll_interval_ms``) must exceed that, or the member leaves the group after it.

    Rejoining: kafka-python 3.0 can get stuck in a rebalance for good (seen on fresh stacks, in
    the first join or in the rebalance right after it: the leader logs "performing partition
    assignments" and then never gets an assignment, no heartbeat, the broker drops the member;
    every ``poll`` returns nothing). So when an empty ``poll`` finds the member without
    partitions (none assigned since subscribing or since the last revocation) for
    ``rejoin_after_s`` seconds (:meth:`KafkaEventLog.consumer` gives :func:`rejoin_after_s` of
    the member's session), the client is closed and a new one joins the group (see
    :class:`EmptyAssignmentWatch`; the wait doubles up to ``max_rejoin_after_s``). A
    member of a group with more members than partitions therefore rejoins now and then, which
    is harmless. Nothing is lost: an empty assignment has no uncommitted positions.

    Broker trouble: polls go through a :class:`PollGuard` (back off instead of raising a
    retriable error or spinning); a rejoin that fails because the broker is unreachable is tried
    again at the next poll.

    Types: with ``types``, records of other payload types are dropped (see
    :meth:`EventLog.consumer`, :func:`~.base.decode_if_used`); with ``skip_undecodable``, so are
    records whose bytes are no envelope (:func:`~.base.decode_consumed`).

    Fetching: ``busy_fetch`` (:data:`~.kafka_client.GROUP_FETCH`, or the member's own
    batch wait) while records come, and
    :data:`~.kafka_client.GROUP_FETCH_IDLE` once none came for ``GROUP_IDLE_AFTER_S``
    (:class:`~.kafka_poll.FetchPacing`): an idle member fetches twice a second, not ten times.

    Lag: a poll (while the broker answers) sets ``rummy_consumer_lag_events`` for the owned
    partitions at most every ``lag_interval_s`` seconds (:meth:`lag`, one ListOffsets request).
    """

    def __init__(
        self,
        factory: Callable[[], KafkaConsumer],
        registry: PayloadRegistry,
        group_id: str,
        topics: Sequence[str],
        on_assigned: OnAssigned | None,
        *,
        metadata_wait_s: float = 30.0,
        rejoin_after_s: float = 15.0,
        max_rejoin_after_s: float = 120.0,
        lag_interval_s: float = 15.0,
        types: Collection[str] | None = None,
        on_revoked: OnRevoked | None = None,
        skip_undecodable: bool = False,
        busy_fetch: Mapping[str, Any] = GROUP_FETCH,
    ) -> None:
        self._skip_undecodable = skip_undecodable
        self._on_revoked = on_revoked
        self._factory = factory
        self._types = None if types is None else frozenset(types)
        self._registry = registry
        self.group_id = group_id
        self._topics = list(topics)
        self._on_assigned = on_assigned
        self._metadata_wait_s = metadata_wait_s
        self._watch = EmptyAssignmentWatch(rejoin_after_s, max_rejoin_after_s)
        #: True from an assignment of at least one partition until the next revocation: during
        #: a rebalance kafka-python still reports the old assignment, so that is not a sign.
        self._owns_partitions = False
        #: Partitions assigned whose ``on_assigned`` has not run yet (paused meanwhile).
        self._pending: frozenset[KafkaTopicPartition] | None = None
        self._guard = PollGuard(group_id)
        self._lag_reporter = ConsumerLagReporter(group_id, interval_s=lag_interval_s)
        self.pacing = FetchPacing(busy_fetch, GROUP_FETCH_IDLE, GROUP_IDLE_AFTER_S)
        self._consumer: KafkaConsumer | None = self._join()

    def _join(self) -> KafkaConsumer:
        consumer = self._factory()
        self._owns_partitions = False
        self._pending = None
        self.pacing.joined()
        wait_for_partitions(consumer, self._topics, self._metadata_wait_s, self.group_id)
        consumer.subscribe(self._topics, listener=_Listener(self))
        _log.info("consumer subscribed", group_id=self.group_id, topics=self._topics)
        return consumer

    def _rejoin_if_stuck(self) -> None:
        if not self._watch.due(self._owns_partitions):
            return
        _log.warning(
            "consumer has no partitions; leaving and joining the group again",
            group_id=self.group_id,
        )
        self._leave()
        self._consumer = self._joined()

    def _joined(self) -> KafkaConsumer | None:
        """A new member, or None (after waiting out the backoff) when the broker cannot be
        reached; the next poll tries again."""
        try:
            return self._join()
        except kafka_errors.KafkaError as exc:
            self._guard.failed(exc)
            return None

    def _leave(self) -> None:
        if self._consumer is not None:
            with contextlib.suppress(Exception):  # a stuck client may fail to leave cleanly
                self._consumer.close(autocommit=False)
            self._consumer = None

    def _client(self) -> KafkaConsumer:
        if self._consumer is None:
            raise EventLogError(f"group {self.group_id!r}: not joined (broker unreachable)")
        return self._consumer

    def _resume(self, assigned: Iterable[KafkaTopicPartition]) -> None:
        if self._on_assigned is None:
            return
        owned = frozenset(TopicPartition(tp.topic, tp.partition) for tp in assigned)
        for tp, offset in self._on_assigned(owned).items():
            if tp in owned:
                self._client().seek(KafkaTopicPartition(tp.topic, tp.partition), offset)

    def _revoked(self, revoked: Iterable[KafkaTopicPartition]) -> None:
        # Partitions whose on_assigned never ran were never granted to the caller.
        pending, self._pending = self._pending or frozenset(), None
        granted = frozenset(revoked) - pending
        if self._on_revoked is not None:
            self._on_revoked(frozenset(TopicPartition(tp.topic, tp.partition) for tp in granted))

    def _assigned(self, assigned: Iterable[KafkaTopicPartition]) -> None:
        """In kafka-python's listener (its IO thread): pause ``assigned`` and note them for
        :meth:`_grant_pending` (see the class doc)."""
        partitions = frozenset(assigned)
        if partitions and self._consumer is not None:
            self._consumer.pause(*partitions)
        self._pending = partitions

    def _grant_pending(self) -> None:
        """On the polling thread: ``on_assigned`` of the partitions noted by :meth:`_assigned`,
        its seeks, then the partitions resumed. Raising keeps them noted (and paused)."""
        if self._pending is None or self._consumer is None:
            return
        pending = self._pending
        self._resume(pending)
        if self._pending is pending:  # not revoked meanwhile
            self._pending = None
            if pending:
                self._consumer.resume(*pending)

    def poll(self, timeout_s: float = 1.0, max_records: int = 500) -> list[Record]:
        if self._consumer is None:
            self._consumer = self._joined()
            if self._consumer is None:
                return []
        batches = self._guard.poll(self._consumer, int(timeout_s * 1000), max_records)
        self._grant_pending()
        self.pacing.polled(self._consumer, bool(batches))
        if not self._guard.backoff.failing:
            self._lag_reporter.maybe_report(self.lag)
        if not batches:
            self._rejoin_if_stuck()
        records = []
        for tp in sorted(batches, key=lambda t: (t.topic, t.partition)):
            for m in batches[tp]:
                envelope = decode_consumed(
                    m.value,
                    header_type(m.headers),
                    self._registry,
                    self._types,
                    self.group_id,
                    skip_undecodable=self._skip_undecodable,
                    topic=tp.topic,
                    partition=tp.partition,
                    offset=m.offset,
                )
                if envelope is not None:
                    records.append(Record(tp.topic, tp.partition, m.offset, envelope))
        return records

    def assignment(self) -> frozenset[TopicPartition]:
        if self._consumer is None:
            return frozenset()
        return frozenset(
            TopicPartition(tp.topic, tp.partition) for tp in self._consumer.assignment()
        )

    def lag(self) -> dict[TopicPartition, int]:
        if self._consumer is None or not self._owns_partitions:
            return {}
        return kafka_consumer_lag(self._consumer)

    def seek(self, partition: TopicPartition, offset: int) -> None:
        self._client().seek(KafkaTopicPartition(partition.topic, partition.partition), offset)

    def position(self, partition: TopicPartition) -> int:
        try:
            position = self._client().position(
                KafkaTopicPartition(partition.topic, partition.partition)
            )
        except kafka_errors.KafkaError as exc:
            raise EventLogError(f"position in {partition}: {exc}") from exc
        return int(position)

    def commit(self, offsets: Mapping[TopicPartition, int]) -> None:
        try:
            self._client().commit(
                {
                    KafkaTopicPartition(tp.topic, tp.partition): OffsetAndMetadata(offset)
                    for tp, offset in offsets.items()
                }
            )
        except kafka_errors.CommitFailedError as exc:
            raise GenerationFenced(f"group {self.group_id!r} refused the commit: {exc}") from exc
        except kafka_errors.KafkaError as exc:
            raise EventLogError(f"group {self.group_id!r}: commit failed: {exc}") from exc

    def group_metadata(self) -> object | None:
        return None if self._consumer is None else self._consumer.group_metadata()

    def committed(self, partition: TopicPartition) -> int | None:
        try:
            value = self._client().committed(
                KafkaTopicPartition(partition.topic, partition.partition)
            )
        except kafka_errors.KafkaError as exc:
            raise EventLogError(f"committed offset of {partition}: {exc}") from exc
        return None if value is None else int(value)

    def close(self) -> None:
        """Leave the group at once (LeaveGroup: the others get the partitions without waiting
        out the session), after ``on_revoked`` of the partitions owned (kafka-python calls the
        listener on close)."""
        if self._consumer is not None:
            self._consumer.close(autocommit=False)
            self._consumer = None


class _Listener:
    """Logs every rebalance and seeks to the caller's stored offsets when partitions are assigned
    (registered below as a kafka-python ConsumerRebalanceListener rather than subclassing an
    untyped class)."""

    def __init__(self, owner: KafkaGroupConsumer) -> None:
        self._owner = owner

    def on_partitions_revoked(self, revoked: Any) -> None:
        self._owner._owns_partitions = False
        _log.info(
            "consumer partitions revoked", group_id=self._owner.group_id, partitions=_names(revoked)
        )
        self._owner._revoked(revoked)

    def on_partitions_assigned(self, assigned: Any) -> None:
        _log.info(
            "consumer partitions assigned",
            group_id=self._owner.group_id,
            count=len(assigned),
            partitions=_names(assigned),
        )
        self._owner._owns_partitions = bool(assigned)
        self._owner._assigned(assigned)

    def on_partitions_lost(self, lost: Any) -> None:
        self._owner._owns_partitions = False
        _log.info(
            "consumer partitions lost", group_id=self._owner.group_id, partitions=_names(lost)
        )
        self._owner._revoked(lost)


ConsumerRebalanceListener.register(_Listener)


def _names(partitions: Iterable[KafkaTopicPartition]) -> list[str]:
    return sorted(f"{tp.topic}[{tp.partition}]" for tp in partitions)
