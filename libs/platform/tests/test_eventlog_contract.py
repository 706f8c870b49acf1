"""The event log contract: one suite that the in-memory fake (with and without ``groups``) and
the Kafka adapter both pass (several members of a group and transactions left open:
``test_eventlog_group_contract.py``).

The Kafka half runs on a real broker from the shared ``kafka_bootstrap`` fixture
(tests/support/rummy_testing: ``KAFKA_BOOTSTRAP_SERVERS`` wins, else deploy/local; without a
broker, a failure). Every test uses topics, groups and transactional ids of
its own. No assertion is timed: consumers are polled until what a test waits for came, and a
transaction's records are read back once they show up (:func:`read_back`: Kafka answers a
commit before it writes the transaction's markers); the timeouts only end a test that would
otherwise hang.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime, timedelta

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer
from prometheus_client import REGISTRY

from rummy.common.v1 import cards_pb2
from rummy.ledger.v1 import events_pb2 as ledger_events
from rummy.table.v1 import events_pb2 as table_events
from rummy_platform.envelope import Envelope, EnvelopeError, encode, event_payloads, type_name
from rummy_platform.eventlog import (
    EVENT_TYPE_HEADER,
    Deduplicator,
    EventLog,
    GroupCommitWriter,
    GroupConsumer,
    InMemoryEventLog,
    KafkaEventLog,
    Position,
    Record,
    TopicMismatch,
    TopicPartition,
    UnknownTopic,
    WriterFenced,
    by_causation_id,
    drop_redelivered,
    partition_for,
)
from rummy_platform.eventlog.kafka_client import GROUP_FETCH, GROUP_FETCH_IDLE, GROUP_IDLE_AFTER_S
from rummy_platform.eventlog.kafka_group import KafkaGroupConsumer
from rummy_platform.eventlog.memory import StoredRecord
from rummy_platform.topics import EVENT_TOPICS, TopicSpec, event_topic_specs
from rummy_testing.waiting import wait_until

PARTITIONS = 3
#: A group member's session in the grant tests (seconds): the broker's minimum.
GRANT_SESSION_S = 6.0
T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
#: The longest a wait for records here may take (seconds): only a hung test meets it.
WAIT_S = 60.0


class Topics:
    """The five event topics of one test, under a unique prefix."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.table = prefix + "table-events"
        self.ledger = prefix + "ledger-events"


def card_drawn(table_id: str, version: int, *, hand_id: str = "hand-1") -> Envelope:
    """The ``version``-th event of ``table_id``'s stream: seat 0 draws card ``version``."""
    payload = table_events.CardDrawn(
        hand_id=hand_id,
        seat=0,
        turn_no=version,
        source=table_events.DRAW_SOURCE_STOCK,
        card=cards_pb2.Card(index=version, face="?"),
    )
    return Envelope.new(
        payload,
        stream_id=table_id,
        stream_version=version,
        occurred_at=T0 + timedelta(seconds=version, microseconds=123),
        correlation_id=hand_id,
        rules_version="indian13-points/1",
        shuffle_version="bb-shuffle-v1",
    )


def append_all(log: EventLog, topic: str, events: list[Envelope]) -> list[Envelope]:
    """Append ``events`` to ``topic`` one by one, in order; returns them."""
    for envelope in events:
        log.append(topic, envelope)
    return events


def drawn_stream(log: EventLog, topic: str, count: int) -> tuple[str, list[Envelope]]:
    """A new table's stream of ``count`` CardDrawn events (versions 1 to ``count``), appended
    to ``topic``: the table's id and the events."""
    table = f"table-{uuid.uuid4()}"
    return table, append_all(log, topic, [card_drawn(table, v) for v in range(1, count + 1)])


CARD_DRAWN = type_name(table_events.CardDrawn)
STAKES = {type_name(ledger_events.StakesReserved)}


def stakes_reserved(table_id: str, version: int) -> Envelope:
    """A ledger event as the table records it in its own stream (another payload type)."""
    return Envelope.new(
        ledger_events.StakesReserved(hand_id="hand-1"),
        stream_id=table_id,
        stream_version=version,
        occurred_at=T0 + timedelta(seconds=version),
        correlation_id="hand-1",
    )


def read_back(log: EventLog, topic: str, stream_id: str, count: int) -> list[Record]:
    """``stream_id``'s records in ``topic`` once at least ``count`` are there: what a transaction
    just committed (on Kafka its records become visible once the coordinator wrote its markers,
    just after the commit returned)."""

    def enough() -> list[Record]:
        records = log.read_stream(topic, stream_id)
        return records if len(records) >= count else []

    found: list[Record] = wait_until(f"{count} records of {stream_id} read", enough, WAIT_S, 0.05)
    return found


def poll_until(consumer: GroupConsumer, count: int, timeout_s: float = WAIT_S) -> list[Record]:
    """Poll until ``count`` records arrived (or the timeout passed), then poll once more briefly
    to catch any record beyond ``count``."""
    records: list[Record] = []
    deadline = time.monotonic() + timeout_s
    while len(records) < count and time.monotonic() < deadline:
        records.extend(consumer.poll(timeout_s=0.5))
    records.extend(consumer.poll(timeout_s=0.5))
    return records


def consume(log: EventLog, topic: str, count: int, types: set[str] | None = None) -> list[Envelope]:
    """The envelopes a new group (of ``types``, None: all) gets from ``topic`` (see
    :func:`poll_until`)."""
    with log.consumer(f"group-{uuid.uuid4()}", [topic], types=types) as consumer:
        return [r.envelope for r in poll_until(consumer, count)]


def poll_storing(
    consumer: GroupConsumer,
    count: int,
    stored: dict[TopicPartition, int],
    keep: Callable[[Record], bool] = lambda record: True,
    timeout_s: float = WAIT_S,
) -> list[Record]:
    """Poll as a service does: each record handled (``keep``) stores its next offset at once, so
    a rebalance on the way resumes after it. Until ``count`` distinct events arrived (or the
    timeout passed), then once more briefly; records not kept may come again after a rebalance."""
    records: list[Record] = []
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for record in consumer.poll(timeout_s=0.5):
            records.append(record)
            if keep(record):
                stored[TopicPartition(record.topic, record.partition)] = record.next_offset
        if len({r.envelope.event_id for r in records}) >= count:
            break
    records.extend(consumer.poll(timeout_s=0.5))
    return records


class TopicsOfEachTest:
    """A contract's ``topics``: the five event topics under a prefix of the test's own, on the
    ``log`` a subclass provides, deleted afterwards by :meth:`drop_topics`."""

    @pytest.fixture
    def log(self) -> Iterator[EventLog]:
        raise NotImplementedError

    @pytest.fixture
    def topics(self, log: EventLog) -> Iterator[Topics]:
        prefix = f"t{uuid.uuid4().hex[:10]}-"
        log.ensure_topics(event_topic_specs(PARTITIONS, prefix=prefix))
        yield Topics(prefix)
        self.drop_topics([prefix + name for name in EVENT_TOPICS])

    def drop_topics(self, names: list[str]) -> None:
        """Delete a test's topics afterwards (the event log itself never deletes a topic)."""


class EventLogContract(TopicsOfEachTest):
    """What every event log adapter promises. Subclasses provide the ``log`` fixture."""

    def write_raw(
        self, log: EventLog, topic: str, stream_id: str, value: bytes, event_type: str | None
    ) -> None:
        """Write one record as it is: ``value`` bytes keyed by ``stream_id``, with the event-type
        header ``event_type`` (None: no header, as builds before the header wrote)."""
        raise NotImplementedError

    def test_a_consumer_of_some_types_gets_only_those_intact_and_in_order(
        self, log: EventLog, topics: Topics
    ) -> None:
        table = f"table-{uuid.uuid4()}"
        sent = [card_drawn(table, 1), stakes_reserved(table, 2), card_drawn(table, 3)]
        sent.append(stakes_reserved(table, 4))
        append_all(log, topics.table, sent)

        assert consume(log, topics.table, 2, STAKES) == [sent[1], sent[3]]
        assert consume(log, topics.table, 4) == sent

    def test_a_record_of_an_unused_type_is_skipped_by_its_header_without_decoding(
        self, log: EventLog, topics: Topics
    ) -> None:
        table = f"table-{uuid.uuid4()}"
        # Not an envelope at all: decoding it would raise.
        self.write_raw(log, topics.table, table, b"\xff\xfe not an envelope", CARD_DRAWN)
        wanted = stakes_reserved(table, 2)
        log.append(topics.table, wanted)

        with log.consumer(f"group-{uuid.uuid4()}", [topics.table], types={wanted.type}) as consumer:
            records = poll_until(consumer, 1)

        assert [r.envelope for r in records] == [wanted]
        assert records[0].offset == 1  # the skipped record took offset 0

    def test_bytes_that_are_no_envelope_stop_a_consumer_unless_it_skips_them(
        self, log: EventLog, topics: Topics
    ) -> None:
        table = f"table-{uuid.uuid4()}"
        before, after = card_drawn(table, 1), card_drawn(table, 3)
        log.append(topics.table, before)
        self.write_raw(log, topics.table, table, b"\xff\xfe not an envelope", CARD_DRAWN)
        log.append(topics.table, after)

        strict = log.consumer(f"group-{uuid.uuid4()}", [topics.table])
        with strict, pytest.raises(EnvelopeError):
            poll_until(strict, 3)
        with log.consumer(
            f"group-{uuid.uuid4()}", [topics.table], skip_undecodable=True
        ) as lenient:
            records = poll_until(lenient, 2)

        assert [r.envelope for r in records] == [before, after]
        assert [r.offset for r in records] == [0, 2]

    def test_a_members_position_is_the_offset_after_the_last_record_it_polled(
        self, log: EventLog, topics: Topics
    ) -> None:
        table = f"table-{uuid.uuid4()}"
        for version in (1, 2, 3):
            log.append(topics.table, card_drawn(table, version))
        used = TopicPartition(topics.table, partition_for(table, PARTITIONS))

        with log.consumer(f"group-{uuid.uuid4()}", [topics.table]) as consumer:
            records = poll_until(consumer, 3)
            assert consumer.position(used) == records[-1].next_offset == 3
            consumer.seek(used, 1)
            assert consumer.position(used) == 1

    def test_records_without_the_type_header_are_decoded_and_kept_by_their_type(
        self, log: EventLog, topics: Topics
    ) -> None:
        table = f"table-{uuid.uuid4()}"
        old = [card_drawn(table, 1), stakes_reserved(table, 2)]
        for envelope in old:  # written before the header existed
            self.write_raw(log, topics.table, table, encode(envelope), None)
        new = stakes_reserved(table, 3)
        log.append(topics.table, new)

        assert consume(log, topics.table, 2, STAKES) == [old[1], new]
        assert consume(log, topics.table, 3) == [*old, new]
        assert [r.envelope for r in log.read_stream(topics.table, table)] == [*old, new]

    def test_a_consumer_of_some_types_resumes_after_the_last_record_it_got(
        self, log: EventLog, topics: Topics
    ) -> None:
        table = f"table-{uuid.uuid4()}"
        sent = [stakes_reserved(table, 1), card_drawn(table, 2), card_drawn(table, 3)]
        append_all(log, topics.table, sent)
        group = f"group-{uuid.uuid4()}"
        stored: dict[TopicPartition, int] = {}

        with log.consumer(
            group, [topics.table], on_assigned=lambda owned: stored, types=STAKES
        ) as first:
            assert [r.envelope for r in poll_storing(first, 1, stored)] == sent[:1]
        later = stakes_reserved(table, 4)
        log.append(topics.table, later)
        with log.consumer(
            group, [topics.table], on_assigned=lambda owned: stored, types=STAKES
        ) as second:
            resumed = poll_storing(second, 1, stored)

        assert [r.envelope for r in resumed] == [later]
        assert stored == {TopicPartition(topics.table, partition_for(table, PARTITIONS)): 4}

    def test_a_streams_events_read_back_in_append_order_and_intact(
        self, log: EventLog, topics: Topics
    ) -> None:
        table_a, table_b = f"table-{uuid.uuid4()}", f"table-{uuid.uuid4()}"
        sent_a = [card_drawn(table_a, v) for v in range(1, 6)]
        sent_b = [card_drawn(table_b, v) for v in range(1, 4)]
        positions = []
        for a, b in zip(sent_a, sent_b + [None, None], strict=True):
            positions.append(log.append(topics.table, a))
            if b is not None:
                log.append(topics.table, b)

        read_a = log.read_stream(topics.table, table_a)
        assert [r.envelope for r in read_a] == sent_a
        assert [r.envelope for r in log.read_stream(topics.table, table_b)] == sent_b
        assert {p.partition for p in positions} == {partition_for(table_a, PARTITIONS)}
        assert [r.offset for r in read_a] == [p.offset for p in positions]

    def test_reading_from_a_stored_offset_returns_only_the_later_events(
        self, log: EventLog, topics: Topics
    ) -> None:
        table, sent = drawn_stream(log, topics.table, 5)
        first = log.read_stream(topics.table, table)

        later = log.read_stream(topics.table, table, from_offset=first[2].next_offset)

        assert [r.envelope for r in later] == sent[3:]

    def test_a_redelivered_append_with_the_same_event_id_is_detected_downstream(
        self, log: EventLog, topics: Topics
    ) -> None:
        table = f"table-{uuid.uuid4()}"
        first, second = card_drawn(table, 1), card_drawn(table, 2)
        log.append(topics.table, first)
        log.append(topics.table, first)  # a producer retry after a lost acknowledgement
        log.append(topics.table, second)

        read = [r.envelope for r in log.read_stream(topics.table, table)]
        dedupe = Deduplicator()

        assert [e.event_id for e in read] == [first.event_id, first.event_id, second.event_id]
        assert [dedupe.first_time(e) for e in read] == [True, False, True]
        assert drop_redelivered(read) == [first, second]

    def test_an_input_recorded_twice_is_detected_by_its_causation_id(
        self, log: EventLog, topics: Topics
    ) -> None:
        table = f"table-{uuid.uuid4()}"
        stakes = Envelope.new(
            ledger_events.StakesReserved(hand_id="hand-1"),
            stream_id=table,
            stream_version=1,
            occurred_at=T0,
            correlation_id="hand-1",
        )
        source = log.append(topics.ledger, stakes)
        assert source.partition == partition_for(table, PARTITIONS)
        for version in (1, 2):  # the table records the same ledger event twice (a redelivery)
            recorded = Envelope.new(
                stakes.payload,
                stream_id=table,
                stream_version=version,
                occurred_at=T0,
                correlation_id="hand-1",
                causation_id=stakes.event_id,
            )
            log.append(topics.table, recorded)

        read = [r.envelope for r in log.read_stream(topics.table, table)]

        assert [e.type for e in read] == ["rummy.ledger.v1.StakesReserved"] * 2
        assert len(drop_redelivered(read)) == 2  # two distinct table events...
        assert len(drop_redelivered(read, key=by_causation_id)) == 1  # ...of one input

    def test_a_consumer_resumes_from_the_offset_it_stored_itself(
        self, log: EventLog, topics: Topics
    ) -> None:
        tables = [f"table-{uuid.uuid4()}" for _ in range(2)]
        sent = [card_drawn(t, v) for v in range(1, 4) for t in tables]
        append_all(log, topics.table, sent)
        group = f"group-{uuid.uuid4()}"
        stored: dict[TopicPartition, int] = {}  # what a service keeps in Postgres

        with log.consumer(group, [topics.table], on_assigned=lambda owned: stored) as first:
            # effects and offsets stored together for versions 1 and 2, then a crash
            seen = poll_storing(first, len(sent), stored, lambda r: r.envelope.stream_version <= 2)
        assert {r.envelope.event_id for r in seen} == {e.event_id for e in sent}

        with log.consumer(group, [topics.table], on_assigned=lambda owned: stored) as second:
            resumed = poll_storing(second, 2, stored)
            assert all(second.committed(tp) is None for tp in stored)  # Kafka stored nothing

        assert sorted(r.envelope.event_id for r in resumed) == sorted(
            e.event_id for e in sent if e.stream_version == 3
        )

    def test_a_new_group_member_resumes_from_explicitly_committed_offsets(
        self, log: EventLog, topics: Topics
    ) -> None:
        table, sent = drawn_stream(log, topics.table, 4)
        group = f"group-{uuid.uuid4()}"

        with log.consumer(group, [topics.table]) as first:
            seen = poll_until(first, 4)
            first.commit({TopicPartition(seen[1].topic, seen[1].partition): seen[1].next_offset})
        with log.consumer(group, [topics.table]) as second:
            resumed = poll_until(second, 2)

        # from the committed offset on, in order (a rebalance on the way may deliver them again)
        first_seen = list(dict.fromkeys(r.envelope.event_id for r in resumed))
        assert first_seen == [e.event_id for e in sent[2:]]
        assert {r.envelope.event_id: r.envelope for r in resumed}[sent[2].event_id] == sent[2]

    @pytest.mark.parametrize("batching", [False, True], ids=["plain", "group-commit"])
    def test_a_second_writer_with_the_same_transactional_id_fences_the_first(
        self, log: EventLog, topics: Topics, batching: bool
    ) -> None:
        table = f"table-{uuid.uuid4()}"
        writer_id = f"table-writer-{uuid.uuid4()}"
        e1, e2, e3 = (card_drawn(table, v) for v in (1, 2, 3))
        first = log.transactional_writer(writer_id)
        with GroupCommitWriter(first) if batching else first as old:
            old.append(topics.table, e1)
            with log.transactional_writer(writer_id) as new:
                with pytest.raises(WriterFenced, match="fenced"):
                    old.append(topics.table, e2)
                new.append(topics.table, e3)
                with pytest.raises(WriterFenced):
                    old.append(topics.table, e2)

        assert [r.envelope for r in read_back(log, topics.table, table, 2)] == [e1, e3]

    def test_a_transactional_batch_spans_topics_and_keeps_its_order(
        self, log: EventLog, topics: Topics
    ) -> None:
        table = f"table-{uuid.uuid4()}"
        events = [card_drawn(table, v) for v in (1, 2, 3)]
        with log.transactional_writer(f"writer-{uuid.uuid4()}") as writer:
            positions = writer.append_batch(
                [(topics.table, events[0]), (topics.ledger, events[1]), (topics.table, events[2])]
            )

        assert [p.topic for p in positions] == [topics.table, topics.ledger, topics.table]
        assert [r.envelope for r in read_back(log, topics.table, table, 2)] == [
            events[0],
            events[2],
        ]
        assert [r.envelope for r in read_back(log, topics.ledger, table, 1)] == [events[1]]

    def test_offsets_sent_with_a_transaction_are_where_the_group_resumes(
        self, log: EventLog, topics: Topics
    ) -> None:
        table = f"table-{uuid.uuid4()}"
        inputs = [card_drawn(table, v) for v in (1, 2, 3)]
        for envelope in inputs:
            log.append(topics.ledger, envelope)
        last_handled = log.read_stream(topics.ledger, table)[1]  # the table handled two inputs
        stored = {TopicPartition(topics.ledger, last_handled.partition): last_handled.next_offset}
        group = f"group-{uuid.uuid4()}"
        with log.transactional_writer(f"writer-{uuid.uuid4()}") as writer:
            writer.append_batch(
                [(topics.table, card_drawn(table, 1))],
                consumed=stored,
                group_id=group,
            )

        with log.consumer(group, [topics.ledger]) as consumer:
            resumed = poll_until(consumer, 1)

        assert [r.envelope for r in resumed] == inputs[2:]

    def test_concurrent_callers_of_a_group_commit_writer_each_get_their_own_events_in_order(
        self, log: EventLog, topics: Topics
    ) -> None:
        tables = [f"table-{uuid.uuid4()}" for _ in range(8)]
        sent = {t: [card_drawn(t, v) for v in range(1, 6)] for t in tables}
        answers: dict[str, list[Position]] = {}
        with GroupCommitWriter(log.transactional_writer(f"writer-{uuid.uuid4()}")) as writer:

            def one_table(table: str) -> None:
                answers[table] = [writer.append(topics.table, e) for e in sent[table]]

            threads = [threading.Thread(target=one_table, args=(t,)) for t in tables]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(60)
            assert writer.transactions <= 5 * len(tables)

        for table in tables:
            records = read_back(log, topics.table, table, len(sent[table]))
            assert [r.envelope for r in records] == sent[table]
            assert [(r.partition, r.offset) for r in records] == [
                (p.partition, p.offset) for p in answers[table]
            ]

    def test_event_topics_have_infinite_retention_and_one_partition_count(
        self, log: EventLog, topics: Topics
    ) -> None:
        for name in EVENT_TOPICS:
            described = log.describe_topic(topics.prefix + name)
            assert described.partitions == PARTITIONS
            assert described.config["retention.ms"] == "-1"

    def test_ensuring_topics_twice_is_harmless_but_a_changed_partition_count_is_refused(
        self, log: EventLog, topics: Topics
    ) -> None:
        log.ensure_topics(event_topic_specs(PARTITIONS, prefix=topics.prefix))
        with pytest.raises(TopicMismatch, match="partitions"):
            log.ensure_topics([TopicSpec(topics.table, PARTITIONS + 1)])

    def test_a_topic_that_was_never_created_is_reported_as_unknown(self, log: EventLog) -> None:
        missing = f"never-created-{uuid.uuid4().hex[:8]}"
        with pytest.raises(UnknownTopic):
            log.read_stream(missing, "table-1")
        with pytest.raises(UnknownTopic):
            log.describe_topic(missing)

    def test_the_end_of_a_partition_is_the_offset_after_its_last_event(
        self, log: EventLog, topics: Topics
    ) -> None:
        table = f"table-{uuid.uuid4()}"
        positions = [log.append(topics.table, card_drawn(table, v)) for v in range(1, 4)]
        used = TopicPartition(topics.table, positions[0].partition)
        unused = TopicPartition(topics.table, (used.partition + 1) % PARTITIONS)

        assert log.end_offsets([used, unused]) == {used: positions[-1].offset + 1, unused: 0}
        with pytest.raises(UnknownTopic):
            log.end_offsets([TopicPartition(topics.prefix + "never-created", 0)])

    def test_a_members_lag_counts_the_events_it_has_not_read_yet(
        self, log: EventLog, topics: Topics
    ) -> None:
        table, _ = drawn_stream(log, topics.table, 3)
        used = TopicPartition(topics.table, partition_for(table, PARTITIONS))

        with log.consumer(f"group-{uuid.uuid4()}", [topics.table]) as consumer:
            assert len(poll_until(consumer, 3)) == 3
            owned = consumer.assignment()
            assert used in owned
            assert consumer.lag() == dict.fromkeys(owned, 0)
            for v in range(4, 6):
                log.append(topics.table, card_drawn(table, v))
            assert consumer.lag() == {**dict.fromkeys(owned, 0), used: 2}


class TestInMemoryEventLog(EventLogContract):
    @pytest.fixture
    def log(self) -> Iterator[EventLog]:
        with InMemoryEventLog() as log:
            yield log

    def write_raw(
        self, log: EventLog, topic: str, stream_id: str, value: bytes, event_type: str | None
    ) -> None:
        assert isinstance(log, InMemoryEventLog)
        log.append_stored(topic, stream_id, StoredRecord(value, event_type))


class TestInMemoryEventLogWithGroups(TestInMemoryEventLog):
    """The same contract with ``groups=True`` (the simulator's log: members share a group)."""

    @pytest.fixture
    def log(self) -> Iterator[EventLog]:
        with InMemoryEventLog(groups=True) as log:
            yield log


class KafkaLog:
    """The Kafka half's ``log`` (the shared broker), and its test topics deleted afterwards."""

    @pytest.fixture
    def log(self, kafka_bootstrap: str) -> Iterator[EventLog]:
        self.bootstrap = kafka_bootstrap
        with KafkaEventLog(kafka_bootstrap, client_id="contract-test", timeout_s=20) as log:
            yield log

    def drop_topics(self, names: list[str]) -> None:
        admin = KafkaAdminClient(bootstrap_servers=self.bootstrap, client_id="contract-test")
        try:
            admin.delete_topics(names)
        finally:
            admin.close()


class TestKafkaEventLog(KafkaLog, EventLogContract):
    def write_raw(
        self, log: EventLog, topic: str, stream_id: str, value: bytes, event_type: str | None
    ) -> None:
        headers = [] if event_type is None else [(EVENT_TYPE_HEADER, event_type.encode())]
        producer = KafkaProducer(bootstrap_servers=self.bootstrap, client_id="contract-test")
        try:
            producer.send(topic, key=stream_id.encode(), value=value, headers=headers).get(20)
        finally:
            producer.close()

    def test_an_idle_member_fetches_answering_at_the_first_byte_and_batches_again_once_busy(
        self, log: EventLog, topics: Topics
    ) -> None:
        table = f"table-{uuid.uuid4()}"
        log.append(topics.table, card_drawn(table, 1))
        with log.consumer(f"group-{uuid.uuid4()}", [topics.table]) as consumer:
            assert isinstance(consumer, KafkaGroupConsumer)
            assert len(poll_until(consumer, 1)) == 1
            fetcher = consumer._consumer._fetcher  # type: ignore[union-attr]
            settings = ("fetch_min_bytes", "fetch_max_wait_ms")

            def fetch_settings() -> dict[str, int]:
                return {key: fetcher.config[key] for key in settings}

            idle_from = time.monotonic() + GROUP_IDLE_AFTER_S
            while time.monotonic() < idle_from + 0.5:
                assert consumer.poll(timeout_s=0.2) == []
            assert fetch_settings() == GROUP_FETCH_IDLE  # 2 fetches a second, not 10
            log.append(topics.table, card_drawn(table, 2))
            assert [r.envelope.stream_version for r in poll_until(consumer, 1)] == [2]
            assert fetch_settings() == GROUP_FETCH  # records come: batch them again

    def test_a_member_with_its_own_batch_wait_batches_that_long_while_records_come(
        self, log: EventLog, topics: Topics
    ) -> None:
        table = f"table-{uuid.uuid4()}"
        log.append(topics.table, card_drawn(table, 1))
        with log.consumer(f"group-{uuid.uuid4()}", [topics.table], batch_wait_s=0.5) as consumer:
            assert isinstance(consumer, KafkaGroupConsumer)
            assert len(poll_until(consumer, 1)) == 1
            fetcher = consumer._consumer._fetcher  # type: ignore[union-attr]
            busy = {"fetch_min_bytes": GROUP_FETCH["fetch_min_bytes"], "fetch_max_wait_ms": 500}
            assert {key: fetcher.config[key] for key in busy} == busy

    def test_every_append_carries_its_payload_type_as_a_record_header(
        self, log: EventLog, topics: Topics
    ) -> None:
        table = f"table-{uuid.uuid4()}"
        plain, in_transaction = card_drawn(table, 1), stakes_reserved(table, 2)
        log.append(topics.table, plain)
        with log.transactional_writer(f"writer-{uuid.uuid4()}") as writer:
            writer.append(topics.table, in_transaction)
        reader = KafkaConsumer(
            topics.table,
            bootstrap_servers=self.bootstrap,
            isolation_level="read_committed",
            auto_offset_reset="earliest",
        )
        headers: list[list[tuple[str, bytes]]] = []

        def both_read() -> bool:
            for messages in reader.poll(timeout_ms=200).values():
                headers.extend(m.headers for m in messages if m.key == table.encode())
            return len(headers) >= 2

        try:
            wait_until("both records read", both_read, WAIT_S, every_s=0)
        finally:
            reader.close()

        assert headers == [
            [(EVENT_TYPE_HEADER, plain.type.encode())],
            [(EVENT_TYPE_HEADER, in_transaction.type.encode())],
        ]

    def test_a_member_left_without_partitions_joins_the_group_again_and_consumes(
        self, log: EventLog, topics: Topics
    ) -> None:
        # Stands in for kafka-python 3.0 hanging in a rebalance: the first client is a group
        # member that never gets a partition (it subscribed to a topic that does not exist).
        clients: list[KafkaConsumer] = []

        def client() -> KafkaConsumer:
            consumer = KafkaConsumer(
                group_id=f"g-{uuid.uuid4().hex[:8]}",
                bootstrap_servers=self.bootstrap,
                enable_auto_commit=False,
                auto_offset_reset="earliest",
            )
            if not clients:
                real_subscribe = consumer.subscribe
                consumer.subscribe = lambda _topics, listener=None: real_subscribe(
                    [topics.prefix + "never-created"], listener=listener
                )
            clients.append(consumer)
            return consumer

        table, sent = drawn_stream(log, topics.table, 3)
        consumer = KafkaGroupConsumer(
            client, event_payloads(), "g", [topics.table], None, rejoin_after_s=2.0
        )
        try:
            records = poll_until(consumer, len(sent), timeout_s=30.0)
        finally:
            consumer.close()

        assert len(clients) == 2
        assert [r.envelope for r in records] == sent

    def test_a_grant_outlasting_the_session_keeps_the_member_and_runs_once_on_the_polling_thread(
        self, log: EventLog, topics: Topics
    ) -> None:
        # kafka-python 3.0.12 called the rebalance listener on its IO thread, where a long
        # on_assigned (a table instance rebuilding its partitions) blocked the heartbeats: the
        # member was dropped and granted again (issue 34, the 45.9 s start). Now on_assigned runs
        # on the polling thread while the IO thread heartbeats.
        topic = topics.table
        table = f"table-{uuid.uuid4()}"
        for version in range(1, 5):
            log.append(topic, card_drawn(table, version))
        used = TopicPartition(topic, partition_for(table, PARTITIONS))
        grants: list[tuple[frozenset[TopicPartition], threading.Thread]] = []
        revocations: list[frozenset[TopicPartition]] = []

        def rebuild(partitions: frozenset[TopicPartition]) -> Mapping[TopicPartition, int]:
            grants.append((partitions, threading.current_thread()))
            time.sleep(GRANT_SESSION_S * 1.5)  # a rebuild longer than the session
            return {used: 1}  # resume after the first event: the seek is applied

        consumer = log.consumer(
            f"g-{uuid.uuid4().hex[:8]}",
            [topic],
            rebuild,
            on_revoked=revocations.append,
            session_timeout_s=GRANT_SESSION_S,
        )
        try:
            records = poll_until(consumer, 3, timeout_s=60.0)
            # a few more polls: a member dropped during the grant would be granted again here
            for _ in range(6):
                records.extend(consumer.poll(timeout_s=0.5))
            owned = consumer.assignment()
        finally:
            consumer.close()

        everything = frozenset(TopicPartition(topic, p) for p in range(PARTITIONS))
        assert [(partitions, thread) for partitions, thread in grants] == [
            (everything, threading.current_thread())
        ]
        # at close only (kafka-python also reports empty revocations): never dropped
        assert [r for r in revocations if r] == [everything]
        assert owned == everything
        assert [r.envelope.stream_version for r in records] == [2, 3, 4]

    def test_a_member_that_closes_leaves_so_the_other_gets_its_partitions_before_its_session_ends(
        self, log: EventLog, topics: Topics
    ) -> None:
        topic = topics.table
        group = f"g-{uuid.uuid4().hex[:8]}"
        # Longer than the wait for the takeover below: only a LeaveGroup can hand over in time (a
        # member learns of a rebalance at its next heartbeat, every sixth of the session).
        session_s = 30.0
        everything = frozenset(TopicPartition(topic, p) for p in range(PARTITIONS))
        first = log.consumer(group, [topic], session_timeout_s=session_s)
        stop = threading.Event()

        def keep_polling() -> None:  # the first member rejoins when the second one joins
            while not stop.is_set():
                first.poll(timeout_s=0.2)

        try:
            deadline = time.monotonic() + 60
            while first.assignment() != everything and time.monotonic() < deadline:
                first.poll(timeout_s=0.2)
            assert first.assignment() == everything
            poller = threading.Thread(target=keep_polling)
            poller.start()
            second = log.consumer(group, [topic], session_timeout_s=session_s)
            try:
                deadline = time.monotonic() + 60
                while not second.assignment() and time.monotonic() < deadline:
                    second.poll(timeout_s=0.2)
                shared = second.assignment()
                stop.set()
                poller.join()
                first.close()
                deadline = time.monotonic() + session_s * 2 / 3
                while second.assignment() != everything and time.monotonic() < deadline:
                    second.poll(timeout_s=0.2)
                taken_over = second.assignment()
            finally:
                second.close()
        finally:
            stop.set()
            first.close()

        assert shared and shared != everything
        assert taken_over == everything

    def test_a_member_exports_its_lag_per_partition_as_a_gauge(
        self, log: EventLog, topics: Topics
    ) -> None:
        table, _ = drawn_stream(log, topics.table, 3)
        used = TopicPartition(topics.table, partition_for(table, PARTITIONS))
        group = f"g-{uuid.uuid4().hex[:8]}"
        labels = {"topic": used.topic, "partition": str(used.partition), "group": group}

        def client() -> KafkaConsumer:
            return KafkaConsumer(
                group_id=group,
                bootstrap_servers=self.bootstrap,
                enable_auto_commit=False,
                isolation_level="read_committed",
                auto_offset_reset="earliest",
            )

        def reported_after_a_poll() -> float | None:
            """Poll (one record at most) until a poll has set the gauge for ``used``; a
            rebalance in between removes the series until the partition is owned again."""
            deadline = time.monotonic() + WAIT_S
            while time.monotonic() < deadline:
                consumer.poll(timeout_s=0.2, max_records=1)
                value = REGISTRY.get_sample_value("rummy_consumer_lag_events", labels)
                if value is not None:
                    return value
            return None

        consumer = KafkaGroupConsumer(
            client, event_payloads(), group, [topics.table], None, lag_interval_s=0.0
        )
        try:
            assert len(poll_until(consumer, 3)) == 3
            assert reported_after_a_poll() == consumer.lag()[used] == 0
            for v in range(4, 6):
                log.append(topics.table, card_drawn(table, v))
            behind = reported_after_a_poll()
            assert behind is not None and behind == consumer.lag()[used] > 0
        finally:
            consumer.close()
