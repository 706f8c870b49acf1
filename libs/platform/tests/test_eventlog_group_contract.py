"""The event log's contract for groups of several members and for transactions left open: what
the in-memory fake with ``groups=True`` (the simulator's log) and the Kafka adapter both do, so
the fake lies only the ways Kafka does (issue 33).

Members share a group's partitions by range and rebalance with a new generation each time; a
transaction carrying the group metadata of a generation the group has left is refused
(KIP-447); records of an open transaction are invisible to readers (and hold back everything
after them on their partitions) until it commits, those of an aborted one for good, and the
offsets it sends are stored only if it commits; a member resumes a partition from the group's
committed offset, so what it read without committing is delivered again.

The Kafka half runs on the shared broker (``kafka_bootstrap``); every test has topics, groups
and transactional ids of its own. Nothing here is timed: members are polled until the group
settles (on Kafka that takes the broker's time, on the fake a poll or two), and a reader waits
for a committed transaction's records to show up (Kafka answers a commit before it writes the
transaction's markers, so they become visible just after it; on the fake at once). Delivery is
at least once on both: a rebalance on the way may deliver records again, so deliveries are
compared by their first arrival. The timeouts only end a test that would otherwise hang. What
the real client cannot be made to show on demand (a lost commit outcome, a client cut off, a
member expired while it still polls) is in ``test_eventlog_memory_faults.py``, on the fake only.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Protocol

import pytest
from kafka import KafkaProducer, OffsetAndMetadata
from kafka import TopicPartition as KafkaTopicPartition
from test_eventlog_contract import (
    PARTITIONS,
    KafkaLog,
    Topics,
    TopicsOfEachTest,
    card_drawn,
    read_back,
)

from rummy_platform.envelope import Envelope, encode
from rummy_platform.eventlog import (
    EventLog,
    GenerationFenced,
    GroupConsumer,
    InMemoryEventLog,
    KafkaEventLog,
    Record,
    TopicPartition,
    drop_redelivered,
    partition_for,
)
from rummy_platform.eventlog.kafka_client import record_headers
from rummy_testing.waiting import wait_until

#: A member's session here (seconds): twice the services' 6 s, so a loaded machine starving a
#: member's heartbeats does not drop it; no wait depends on it (every member leaves by closing).
SESSION_S = 12.0
#: The longest a group takes to get where a test waits for (seconds): only a hung test meets it.
SETTLE_TIMEOUT_S = 120.0


class Txn(Protocol):
    """A transaction written and left open: commit or abort it."""

    def commit(self) -> None: ...

    def abort(self) -> None: ...


Events = Sequence[tuple[str, Envelope]]
Offsets = Mapping[TopicPartition, int]


def a_table(topic: str) -> tuple[str, TopicPartition, dict[TopicPartition, int]]:
    """A new table's id, its partition of ``topic``, and offsets (of another partition) for a
    transaction to send."""
    table = f"table-{uuid.uuid4()}"
    tp = TopicPartition(topic, partition_for(table, PARTITIONS))
    return table, tp, {TopicPartition(topic, (tp.partition + 1) % PARTITIONS): 5}


class _KafkaTransaction:
    def __init__(self, producer: KafkaProducer) -> None:
        self._producer = producer

    def commit(self) -> None:
        try:
            self._producer.commit_transaction()
        finally:
            self._producer.close()

    def abort(self) -> None:
        try:
            self._producer.abort_transaction()
        finally:
            self._producer.close()


class Members:
    """The members of one group made by a test, and how it polls them."""

    def __init__(self, log: EventLog, group: str, topic: str) -> None:
        self.log, self.group, self.topic = log, group, topic
        self.everything = frozenset(TopicPartition(topic, p) for p in range(PARTITIONS))
        self.all: list[GroupConsumer] = []
        self.events: dict[GroupConsumer, list[tuple[str, frozenset[TopicPartition]]]] = {}
        self.records: dict[GroupConsumer, list[Record]] = {}

    def join(self, resume: Mapping[TopicPartition, int] | None = None) -> GroupConsumer:
        """A new member; its grants and revocations are noted in :attr:`events`, its records
        in :attr:`records`."""
        events: list[tuple[str, frozenset[TopicPartition]]] = []

        def assigned(owned: frozenset[TopicPartition]) -> Mapping[TopicPartition, int]:
            events.append(("assigned", owned))
            return {tp: offset for tp, offset in (resume or {}).items() if tp in owned}

        def revoked(owned: frozenset[TopicPartition]) -> None:
            events.append(("revoked", owned))

        member = self.log.consumer(
            self.group, [self.topic], assigned, on_revoked=revoked, session_timeout_s=SESSION_S
        )
        self.all.append(member)
        self.events[member] = events
        self.records[member] = []
        return member

    def leave(self, member: GroupConsumer) -> None:
        """Close ``member`` (it leaves the group) and poll it no more."""
        member.close()
        self.all.remove(member)

    def poll(self, until: Callable[[], bool], what: str = "the group got there") -> None:
        """Poll every open member in turn until ``until()`` holds."""

        def polled() -> bool:
            if until():
                return True
            for member in self.all:
                self.records[member].extend(member.poll(timeout_s=0.2))
            return until()

        wait_until(what, polled, SETTLE_TIMEOUT_S, every_s=0)

    def delivered(self, member: GroupConsumer) -> list[Envelope]:
        """What ``member`` got, each event once, in the order it first came."""
        return drop_redelivered(r.envelope for r in self.records[member])

    def settled(self, members: Sequence[GroupConsumer]) -> Callable[[], bool]:
        """Whether ``members`` share every partition, one generation, and are stable: each
        saw its latest grant (no rebalance under way)."""

        def check() -> bool:
            owned = [m.assignment() for m in members]
            metadata = [m.group_metadata() for m in members]
            generations = {getattr(md, "generation_id", -1) for md in metadata}
            stable = all(getattr(md, "state", "<stable>") == "<stable>" for md in metadata)
            granted = all(self.events[m] and self.events[m][-1][0] == "assigned" for m in members)
            return (
                stable
                and granted
                and len(generations) == 1
                and min(generations) >= 1
                and sum(len(o) for o in owned) == PARTITIONS
                and frozenset().union(*owned) == self.everything
            )

        return check

    def settle(self, members: Sequence[GroupConsumer]) -> None:
        """Poll until :meth:`settled`, and a few polls more to see it stay so (a Kafka member
        just past its first join often joins again at once)."""
        for _ in range(3):
            self.poll(self.settled(members), "the group settled")
            for member in self.all:
                self.records[member].extend(member.poll(timeout_s=0.2))
        self.poll(self.settled(members), "the group settled")

    def close(self) -> None:
        for member in self.all:
            member.close()


class GroupContract(TopicsOfEachTest):
    """Subclasses provide ``log`` and the way to leave a transaction open."""

    def open_transaction(self, log: EventLog, events: Events, consumed: Offsets, group: str) -> Txn:
        raise NotImplementedError

    @pytest.fixture
    def topic(self, topics: Topics) -> str:
        """The topic the group consumes."""
        return topics.table

    @pytest.fixture
    def members(self, log: EventLog, topic: str) -> Iterator[Members]:
        group = Members(log, f"group-{uuid.uuid4().hex[:10]}", topic)
        yield group
        group.close()

    def test_two_members_share_the_partitions_by_range_and_read_only_their_own(
        self, log: EventLog, topic: str, members: Members
    ) -> None:
        first, second = members.join(), members.join()
        members.settle([first, second])
        for records in members.records.values():
            records.clear()  # what came in an earlier generation
        tables = [f"table-{uuid.uuid4()}" for _ in range(12)]
        for table in tables:
            log.append(topic, card_drawn(table, 1))

        members.poll(
            lambda: sum(len(members.delivered(m)) for m in (first, second)) >= len(tables),
            "every table's record delivered",
        )
        members.settle([first, second])  # the assignment to check them against

        assert sorted(len(m.assignment()) for m in (first, second)) == [1, 2]
        assert not first.assignment() & second.assignment()
        for member in (first, second):
            assert {
                TopicPartition(r.topic, r.partition) for r in members.records[member]
            } <= member.assignment()

    def test_a_member_joining_starts_a_new_generation_that_revokes_before_it_assigns(
        self, members: Members
    ) -> None:
        first = members.join()
        members.settle([first])
        generation = getattr(first.group_metadata(), "generation_id", -1)
        members.events[first].clear()

        second = members.join()
        members.settle([first, second])

        assert getattr(first.group_metadata(), "generation_id", -1) > generation
        kinds = [kind for kind, _ in members.events[first]]
        assert kinds[0] == "revoked" and members.events[first][0][1] == members.everything
        assert kinds[-1] == "assigned" and members.events[first][-1][1] == first.assignment()
        assert first.assignment() < members.everything

    def test_a_zombie_members_transaction_is_refused_and_the_successors_is_not(
        self, log: EventLog, topics: Topics, members: Members
    ) -> None:
        topic, out = topics.table, topics.ledger
        table = f"table-{uuid.uuid4()}"
        input_tp = TopicPartition(topic, partition_for(table, PARTITIONS))
        zombie = members.join()
        members.settle([zombie])
        stale = zombie.group_metadata()
        members.leave(zombie)  # its partitions move on; it still holds its old metadata
        successor = members.join()
        members.settle([successor])

        with log.transactional_writer(f"writer-{uuid.uuid4()}") as writer:
            with pytest.raises(GenerationFenced):
                writer.append_batch(
                    [(out, card_drawn(table, 1))],
                    consumed={input_tp: 1},
                    group_id=members.group,
                    group_metadata=stale,
                )
            assert log.read_stream(out, table) == []  # aborted: never visible
            assert successor.committed(input_tp) is None
            accepted = card_drawn(table, 2)
            writer.append_batch(  # the writer carries on, under the current generation
                [(out, accepted)],
                consumed={input_tp: 2},
                group_id=members.group,
                group_metadata=successor.group_metadata(),
            )

        assert [r.envelope for r in read_back(log, out, table, 1)] == [accepted]
        assert successor.committed(input_tp) == 2

    def test_an_open_transaction_is_invisible_and_holds_back_later_records_until_it_commits(
        self, log: EventLog, topic: str, members: Members
    ) -> None:
        table, tp, consumed = a_table(topic)
        before = log.end_offsets([tp])[tp]
        in_txn = [card_drawn(table, 1), card_drawn(table, 2)]
        transaction = self.open_transaction(
            log, [(topic, e) for e in in_txn], consumed, members.group
        )
        after = card_drawn(table, 3)
        log.append(topic, after)  # a plain append behind the open transaction

        assert log.read_stream(topic, table) == []
        assert log.end_offsets([tp])[tp] == before  # the last stable offset stops at it
        transaction.commit()

        member = members.join()
        members.poll(lambda: len(members.delivered(member)) >= 3, "the records delivered")
        assert members.delivered(member) == [*in_txn, after]
        assert [r.envelope for r in log.read_stream(topic, table)] == [*in_txn, after]
        assert {tp: member.committed(tp) for tp in consumed} == consumed

    def test_an_aborted_transactions_records_and_offsets_are_never_seen(
        self, log: EventLog, topic: str, members: Members
    ) -> None:
        table, tp, consumed = a_table(topic)
        transaction = self.open_transaction(
            log, [(topic, card_drawn(table, 1))], consumed, members.group
        )
        transaction.abort()
        kept = card_drawn(table, 2)
        log.append(topic, kept)

        member = members.join()
        members.poll(lambda: len(members.delivered(member)) >= 1, "the record delivered")
        assert members.delivered(member) == [kept]
        assert members.records[member][0].offset >= 1  # the aborted record took an offset
        assert [r.envelope for r in log.read_stream(topic, table)] == [kept]
        assert {tp: member.committed(tp) for tp in consumed} == dict.fromkeys(consumed)

    def test_what_a_member_read_without_committing_is_delivered_again_to_the_next_owner(
        self, log: EventLog, topic: str, members: Members
    ) -> None:
        table = f"table-{uuid.uuid4()}"
        tp = TopicPartition(topic, partition_for(table, PARTITIONS))
        sent = [card_drawn(table, v) for v in range(1, 5)]
        for envelope in sent:
            log.append(topic, envelope)
        first = members.join()
        members.settle([first])  # so the commit below is of the generation it reads in
        members.poll(lambda: len(members.delivered(first)) >= len(sent), "the records delivered")
        first.commit({tp: members.records[first][0].next_offset})  # handled one, then crashed
        members.leave(first)

        second = members.join()
        members.poll(lambda: len(members.delivered(second)) >= len(sent) - 1, "delivered again")

        assert members.delivered(second) == sent[1:]


class TestInMemoryGroups(GroupContract):
    @pytest.fixture
    def log(self) -> Iterator[EventLog]:
        with InMemoryEventLog(groups=True) as log:
            yield log

    def open_transaction(self, log: EventLog, events: Events, consumed: Offsets, group: str) -> Txn:
        assert isinstance(log, InMemoryEventLog)
        return log.open_transaction(
            f"writer-{uuid.uuid4()}", events, consumed=consumed, group_id=group
        )


class TestKafkaGroups(KafkaLog, GroupContract):
    def open_transaction(self, log: EventLog, events: Events, consumed: Offsets, group: str) -> Txn:
        assert isinstance(log, KafkaEventLog)
        producer = KafkaProducer(**log.producer_config(), transactional_id=f"writer-{uuid.uuid4()}")
        producer.init_transactions()
        producer.begin_transaction()
        for topic, envelope in events:
            producer.send(
                topic, key=envelope.key, value=encode(envelope), headers=record_headers(envelope)
            ).get(20)
        producer.send_offsets_to_transaction(
            {
                KafkaTopicPartition(tp.topic, tp.partition): OffsetAndMetadata(offset)
                for tp, offset in consumed.items()
            },
            group,
        )
        return _KafkaTransaction(producer)
