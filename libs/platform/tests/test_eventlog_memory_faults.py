"""The in-memory event log's faults and group controls, which the simulator (issue 33) calls
between its steps: on the fake only, because the real client cannot be made to show them on
demand in a test (a commit whose answer is lost, a commit interrupted after its records were
written, a client cut off from the broker, a member dropped while it still polls, a rebalance at
a chosen moment). What both adapters do is in ``test_eventlog_group_contract.py``.
"""

from __future__ import annotations

import uuid

import pytest
from test_eventlog_contract import PARTITIONS, Topics, card_drawn

from rummy_platform.eventlog import (
    CommitOutcomeUnknown,
    EventLogError,
    GenerationFenced,
    GroupConsumer,
    InMemoryEventLog,
    TopicPartition,
    WriterFenced,
    partition_for,
)
from rummy_platform.eventlog.memory import GroupView, MemberMetadata
from rummy_platform.topics import TopicSpec, event_topic_specs


@pytest.fixture
def log() -> InMemoryEventLog:
    return InMemoryEventLog(groups=True)


@pytest.fixture
def topics(log: InMemoryEventLog) -> Topics:
    log.ensure_topics(event_topic_specs(PARTITIONS, prefix="t-"))
    return Topics("t-")


def poll_all(*members: GroupConsumer, rounds: int = 3) -> None:
    """Poll each member in turn ``rounds`` times (a rebalance ends within two)."""
    for _ in range(rounds):
        for member in members:
            member.poll()


def owned(*members: GroupConsumer) -> list[frozenset[TopicPartition]]:
    return [m.assignment() for m in members]


def everything(topic: str, partitions: int = PARTITIONS) -> frozenset[TopicPartition]:
    return frozenset(TopicPartition(topic, p) for p in range(partitions))


def test_a_commit_that_landed_but_whose_answer_was_lost_is_in_the_log(
    log: InMemoryEventLog, topics: Topics
) -> None:
    table = f"table-{uuid.uuid4()}"
    consumed = {TopicPartition(topics.ledger, 0): 3}
    lost, other = log.transactional_writer("lost"), log.transactional_writer("other")
    log.fail_next_commit(CommitOutcomeUnknown("answer lost"), written=True, transactional_id="lost")

    other.append(topics.table, card_drawn(table, 1))  # another writer's commit is not touched
    with pytest.raises(CommitOutcomeUnknown):
        lost.append_batch([(topics.table, card_drawn(table, 2))], consumed=consumed, group_id="g")

    assert [r.envelope.stream_version for r in log.read_stream(topics.table, table)] == [1, 2]
    with log.consumer("g", [topics.ledger]) as member:
        assert member.committed(TopicPartition(topics.ledger, 0)) == 3


def test_a_commit_that_did_not_land_and_whose_caller_got_an_error_left_nothing(
    log: InMemoryEventLog, topics: Topics
) -> None:
    table = f"table-{uuid.uuid4()}"
    writer = log.transactional_writer("w")
    log.fail_next_commit(CommitOutcomeUnknown("coordinator unreachable"), written=False)

    with pytest.raises(CommitOutcomeUnknown):
        writer.append_batch(
            [(topics.table, card_drawn(table, 1))],
            consumed={TopicPartition(topics.ledger, 0): 3},
            group_id="g",
        )

    assert log.read_stream(topics.table, table) == []
    with log.consumer("g", [topics.ledger]) as member:
        assert member.committed(TopicPartition(topics.ledger, 0)) is None
    writer.append(topics.table, card_drawn(table, 2))  # the fault was for one commit
    assert len(log.read_stream(topics.table, table)) == 1


@pytest.mark.parametrize("lands", [True, False], ids=["landed", "lost"])
def test_an_interrupted_commit_stays_open_until_its_writer_writes_again(
    log: InMemoryEventLog, topics: Topics, lands: bool
) -> None:
    table = f"table-{uuid.uuid4()}"
    tp = TopicPartition(topics.table, partition_for(table, PARTITIONS))
    writer = log.transactional_writer("w")
    log.interrupt_next_commit(lands=lands, transactional_id="w")

    with pytest.raises(CommitOutcomeUnknown):
        writer.append_batch(
            [(topics.table, card_drawn(table, 1))],
            consumed={TopicPartition(topics.ledger, 0): 3},
            group_id="g",
        )
    log.append(topics.table, card_drawn(table, 2))  # behind the open transaction

    assert log.open_transactions() == {"w"}
    assert log.read_stream(topics.table, table) == []
    assert log.end_offsets([tp]) == {tp: 0}
    assert log.high_watermarks([tp]) == {tp: 2}  # an unstable partition
    with log.consumer("g", [topics.ledger]) as member:
        assert member.committed(TopicPartition(topics.ledger, 0)) is None
    writer.ready()  # the real writer's new producer: the coordinator finishes the transaction

    assert log.open_transactions() == frozenset()
    versions = [r.envelope.stream_version for r in log.read_stream(topics.table, table)]
    assert versions == ([1, 2] if lands else [2])
    assert log.end_offsets([tp]) == {tp: 2}
    with log.consumer("g", [topics.ledger]) as member:
        assert member.committed(TopicPartition(topics.ledger, 0)) == (3 if lands else None)


def test_an_open_transaction_is_aborted_by_a_new_writer_of_its_id_or_finished_explicitly(
    log: InMemoryEventLog, topics: Topics
) -> None:
    table = f"table-{uuid.uuid4()}"
    zombie = log.open_transaction("w", [(topics.table, card_drawn(table, 1))])
    log.transactional_writer("w")  # init_transactions: aborts it and fences its producer

    with pytest.raises(WriterFenced):
        zombie.commit()
    assert log.read_stream(topics.table, table) == []
    log.open_transaction("v", [(topics.table, card_drawn(table, 2))])
    log.complete_transaction("v", commit=True)  # its coordinator completes it
    assert [r.envelope.stream_version for r in log.read_stream(topics.table, table)] == [2]


def test_a_writer_cut_off_from_the_log_writes_nothing_until_it_is_reconnected(
    log: InMemoryEventLog, topics: Topics
) -> None:
    table = f"table-{uuid.uuid4()}"
    writer = log.transactional_writer("w")
    log.cut_off(writer)

    with pytest.raises(EventLogError, match="cut off"):
        writer.append(topics.table, card_drawn(table, 1))
    with pytest.raises(EventLogError, match="cut off"):
        writer.ready()
    assert log.read_stream(topics.table, table) == []
    log.reconnect(writer)
    writer.append(topics.table, card_drawn(table, 2))
    assert [r.envelope.stream_version for r in log.read_stream(topics.table, table)] == [2]


def test_a_member_cut_off_holds_a_rebalance_up_until_it_is_expired_and_then_is_a_zombie(
    log: InMemoryEventLog, topics: Topics
) -> None:
    topic = topics.table
    revoked: list[frozenset[TopicPartition]] = []
    cut = log.consumer("g", [topic], on_revoked=revoked.append)
    other = log.consumer("g", [topic])
    poll_all(cut, other)
    generation = log.group("g").generation
    stale, before_cut = cut.group_metadata(), cut.assignment()
    log.cut_off(cut)
    with pytest.raises(EventLogError):
        cut.commit({TopicPartition(topic, 0): 1})
    assert cut.poll() == []

    log.rebalance("g")
    poll_all(cut, other)
    assert log.group("g").rebalancing  # waits for the member that does not poll
    log.expire_member(cut)
    poll_all(cut, other)

    assert owned(other) == [everything(topic)]
    assert log.group("g").generation == generation + 1
    with (
        log.transactional_writer("w") as writer,
        pytest.raises(GenerationFenced, match="generation"),
    ):
        writer.append_batch(
            [(topics.ledger, card_drawn("t", 1))],
            consumed={TopicPartition(topic, 0): 1},
            group_id="g",
            group_metadata=stale,
        )
    assert log.read_stream(topics.ledger, "t") == []
    revoked.clear()
    log.reconnect(cut)
    poll_all(cut, other)  # it learns it was dropped, and joins again under a new id

    assert revoked[0] == before_cut  # lost
    assert sorted(len(o) for o in owned(cut, other)) == [1, 2]
    assert cut.group_metadata() != stale


def test_a_commit_of_a_member_whose_generation_ended_is_refused(
    log: InMemoryEventLog, topics: Topics
) -> None:
    first, second = log.consumer("g", [topics.table]), log.consumer("g", [topics.table])
    poll_all(first, second)
    log.rebalance("g")
    first.poll()  # first rejoins, still holding the generation that is ending
    second.poll()  # the last member rejoins: the next generation is assigned
    assert not log.group("g").rebalancing

    with pytest.raises(GenerationFenced):  # first was not granted the new generation yet
        first.commit({TopicPartition(topics.table, 0): 1})
    assert first.committed(TopicPartition(topics.table, 0)) is None
    first.poll()
    first.commit(dict.fromkeys(first.assignment(), 1))
    assert {first.committed(tp) for tp in first.assignment()} == {1}


def test_a_rebalance_asked_for_gives_every_member_a_new_generation_and_the_same_range(
    log: InMemoryEventLog, topics: Topics
) -> None:
    events: list[tuple[str, frozenset[TopicPartition]]] = []

    def assigned(partitions: frozenset[TopicPartition]) -> dict[TopicPartition, int]:
        events.append(("assigned", partitions))
        return {}

    members = [
        log.consumer(
            "g", [topics.table], assigned, on_revoked=lambda p: events.append(("revoked", p))
        )
        for _ in range(2)
    ]
    poll_all(*members)
    before = log.group("g")
    events.clear()

    log.rebalance("g")
    poll_all(*members)

    after = log.group("g")
    assert after.generation == before.generation + 1
    assert after.assignment == before.assignment
    assert [kind for kind, _ in events] == ["revoked", "revoked", "assigned", "assigned"]
    assert [m.group_metadata() for m in members] == [
        MemberMetadata("g", after.generation, member_id) for member_id in after.members
    ]


def test_partitions_are_assigned_by_range_in_member_order_the_same_way_every_time() -> None:
    def run() -> GroupView:
        log = InMemoryEventLog(groups=True)
        log.ensure_topics([TopicSpec("a", 8), TopicSpec("b", 8)])
        members = [log.consumer("g", ["a", "b"]) for _ in range(3)]
        poll_all(*members)
        return log.group("g")

    view = run()

    assert view == run()
    assert [len(view.assignment[m]) for m in view.members] == [6, 6, 4]  # 3, 3, 2 of each
    first = view.assignment[view.members[0]]
    assert first == {TopicPartition(t, p) for t in "ab" for p in (0, 1, 2)}


def test_without_groups_every_consumer_owns_every_partition() -> None:
    log = InMemoryEventLog()
    log.ensure_topics([TopicSpec("x", 2)])
    first, second = (log.consumer("g", ["x"]) for _ in range(2))
    poll_all(first, second)

    assert owned(first, second) == [everything("x", 2)] * 2
    assert first.group_metadata() is None


def test_a_member_closed_while_cut_off_or_never_closed_keeps_its_partitions_until_expired(
    log: InMemoryEventLog, topics: Topics
) -> None:
    crashed, cut, other = (log.consumer("g", [topics.table]) for _ in range(3))
    poll_all(crashed, cut, other)
    log.cut_off(cut)
    cut.close()  # its LeaveGroup never arrives
    # crashed: its process died; nobody closes it

    log.rebalance("g")
    poll_all(other)
    assert log.group("g").rebalancing
    log.expire_member(crashed)
    log.expire_member(cut)
    poll_all(other)

    assert owned(other) == [everything(topics.table)]
    assert log.group("g").members == (other.member_id,)


def test_a_member_redelivers_what_it_had_not_committed_when_its_partitions_come_back(
    log: InMemoryEventLog, topics: Topics
) -> None:
    table = f"table-{uuid.uuid4()}"
    tp = TopicPartition(topics.table, partition_for(table, PARTITIONS))
    for version in (1, 2, 3):
        log.append(topics.table, card_drawn(table, version))
    member = log.consumer("g", [topics.table])
    member.poll()  # granted
    assert [r.envelope.stream_version for r in member.poll()] == [1, 2, 3]
    member.commit({tp: 1})

    log.rebalance("g")
    member.poll()  # revoked, then granted again in the next generation
    assert [r.envelope.stream_version for r in member.poll()] == [2, 3]


def test_after_a_rebalance_a_member_resumes_from_the_offset_its_service_stored(
    log: InMemoryEventLog, topics: Topics
) -> None:
    table = f"table-{uuid.uuid4()}"
    tp = TopicPartition(topics.table, partition_for(table, PARTITIONS))
    for version in (1, 2, 3, 4):
        log.append(topics.table, card_drawn(table, version))
    stored: dict[TopicPartition, int] = {}  # what a service keeps with its effects
    member = log.consumer("g", [topics.table], on_assigned=lambda owned: stored)
    member.poll()  # granted
    for record in member.poll():
        if record.envelope.stream_version <= 2:
            stored[tp] = record.next_offset  # handled 1 and 2; 3 and 4 read, not handled
    member.commit({tp: 4})  # the group's offset is not where a service resumes

    log.rebalance("g")
    member.poll()  # revoked, then granted from what on_assigned returned
    assert [r.envelope.stream_version for r in member.poll()] == [3, 4]


def test_a_simulator_chooses_the_partition_a_poll_delivers_from_by_pausing_the_others(
    log: InMemoryEventLog, topics: Topics
) -> None:
    tables: dict[int, str] = {}
    while len(tables) < PARTITIONS:  # one table on each partition
        table = f"table-{uuid.uuid4()}"
        tables.setdefault(partition_for(table, PARTITIONS), table)
    for table in tables.values():
        log.append(topics.table, card_drawn(table, 1))
    member = log.consumer("g", [topics.table])
    assert member.fetchable() == {}
    member.poll()  # granted
    assert member.fetchable() == dict.fromkeys(everything(topics.table), 1)
    last = TopicPartition(topics.table, PARTITIONS - 1)
    member.pause(everything(topics.table) - {last})

    assert [r.envelope.stream_id for r in member.poll()] == [tables[PARTITIONS - 1]]
    member.resume(everything(topics.table))
    assert len(member.poll()) == PARTITIONS - 1
    assert set(member.fetchable().values()) == {0}
