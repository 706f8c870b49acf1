"""Consumer groups of the in-memory event log (:mod:`.memory`): the members, their assignment
and their rebalances, stepped only by the members' own calls and the log's explicit ones.

A log made with ``groups=True`` runs each group as Kafka's coordinator does with kafka-python's
eager protocol, without a thread or a clock:

- A member joins when it is created and leaves when it closes; either starts a *rebalance*, as
  does :meth:`InMemoryEventLog.rebalance` (a member rejoining, a topic's metadata changing) and
  :meth:`InMemoryEventLog.expire_member` (a member whose session or poll interval ran out).
- In a rebalance every member *rejoins* at its next :meth:`~GroupConsumer.poll`: it gives up
  every partition it owned (``on_revoked``, with the empty set too, as kafka-python does). Once
  every member has rejoined, the generation goes up by one and the partitions are assigned by
  range (per topic, in member-id order, the first members taking one more when they do not
  divide evenly; Kafka's default). Each member gets its share at its next poll (``on_assigned``,
  then it resumes each partition from the offset ``on_assigned`` returned, else from the group's
  committed offset, else from 0); records of the partitions come from the polls after that.
  A member that does not poll holds the rebalance up, as on Kafka, until it is expired.
- :meth:`GroupConsumer.group_metadata` is a :class:`MemberMetadata` of the generation the member
  was last granted in; a transaction or :meth:`~GroupConsumer.commit` carrying the metadata of
  a generation the group has left, or of a member it dropped, is refused with
  :class:`~.base.GenerationFenced` (KIP-447).
- A member dropped by :meth:`InMemoryEventLog.expire_member` learns it at its next poll (once it
  is not cut off): ``on_revoked`` of what it owned (lost), then it joins again under a new id.
- A member that closes leaves at once (kafka-python's LeaveGroup), unless it is cut off then;
  one that is cut off, or never closed (its process crashed), stays in the group, holding its
  partitions and any rebalance, until it is expired.

Without ``groups`` (the default, for unit tests) every consumer is a group of its own with one
member that owns every partition of its topics from its first call on, until it closes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from rummy_platform.envelope import PayloadRegistry

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
from .memory_state import MemoryState, StoredRecord


@dataclass(frozen=True, slots=True)
class MemberMetadata:
    """A member's group membership, named as kafka-python's ``ConsumerGroupMetadata`` names it:
    the group, the generation the member was last granted partitions in (-1 before its first
    grant) and its member id."""

    group_id: str
    generation_id: int
    member_id: str


@dataclass(frozen=True, slots=True)
class GroupView:
    """A group as its coordinator sees it now: the generation, the members (ids, in the order
    they joined), each one's partitions in that generation, and whether a rebalance is under
    way (the members not in ``rejoined`` have yet to poll)."""

    generation: int
    members: tuple[str, ...]
    assignment: Mapping[str, frozenset[TopicPartition]]
    rebalancing: bool
    rejoined: frozenset[str]


@dataclass
class Group:
    """One group's coordinator (see the module doc)."""

    group_id: str
    generation: int = 0
    members: dict[str, InMemoryConsumer] = field(default_factory=dict)
    assignment: dict[str, frozenset[TopicPartition]] = field(default_factory=dict)
    rebalancing: bool = False
    rejoined: set[str] = field(default_factory=set)

    def view(self) -> GroupView:
        return GroupView(
            self.generation,
            tuple(self.members),
            dict(self.assignment),
            self.rebalancing,
            frozenset(self.rejoined),
        )

    def join(self, member: InMemoryConsumer, number: int) -> str:
        member_id = f"{self.group_id}-member-{number:06d}"
        self.members[member_id] = member
        self.rebalance()
        return member_id

    def leave(self, member_id: str) -> None:
        if self.members.pop(member_id, None) is not None:
            self.assignment.pop(member_id, None)
            self.rebalance()

    def rebalance(self) -> None:
        self.rebalancing = True
        self.rejoined = set()
        self._complete_if_all_rejoined()

    def rejoin(self, member_id: str) -> None:
        self.rejoined.add(member_id)
        self._complete_if_all_rejoined()

    def _complete_if_all_rejoined(self) -> None:
        if not self.rebalancing or not self.rejoined >= set(self.members):
            return
        self.generation += 1
        self.assignment = range_assignment(
            {member_id: member.subscription() for member_id, member in self.members.items()}
        )
        self.rebalancing = False

    def is_current(self, metadata: MemberMetadata) -> bool:
        return metadata.member_id in self.members and metadata.generation_id == self.generation


def range_assignment(
    subscriptions: Mapping[str, Mapping[str, int]],
) -> dict[str, frozenset[TopicPartition]]:
    """Kafka's range assignor: ``subscriptions`` maps each member id to its topics' partition
    counts; each topic's partitions are split in order among its members in member-id order, the
    first ``count % members`` of them taking one more."""
    owned: dict[str, set[TopicPartition]] = {member_id: set() for member_id in subscriptions}
    topics = sorted({item for subscribed in subscriptions.values() for item in subscribed.items()})
    for topic, count in topics:
        members = sorted(m for m, subscribed in subscriptions.items() if topic in subscribed)
        share, extra = divmod(count, len(members))
        start = 0
        for i, member_id in enumerate(members):
            size = share + (1 if i < extra else 0)
            owned[member_id].update(TopicPartition(topic, p) for p in range(start, start + size))
            start += size
    return {member_id: frozenset(partitions) for member_id, partitions in owned.items()}


class InMemoryConsumer(GroupConsumer):
    """A member of a group of the in-memory log (see the module doc); made by
    :meth:`InMemoryEventLog.consumer`."""

    def __init__(
        self,
        state: MemoryState,
        registry: PayloadRegistry,
        group_id: str,
        topics: tuple[str, ...],
        on_assigned: OnAssigned | None,
        types: frozenset[str] | None,
        on_revoked: OnRevoked | None = None,
        *,
        skip_undecodable: bool = False,
        grouped: bool = False,
    ) -> None:
        self._skip_undecodable = skip_undecodable
        self._on_revoked = on_revoked
        self._state = state
        self._registry = registry
        self.group_id = group_id
        self._topics = topics
        self._on_assigned = on_assigned
        self._types = types
        #: The partitions granted and the position in each; None: none granted.
        self._positions: dict[TopicPartition, int] | None = None
        self._generation = -1
        self._joined_once = False
        self._closed = False
        self._paused: set[TopicPartition] = set()
        self._group: Group | None = None
        #: This member's id in its group ("" without ``groups``).
        self.member_id = ""
        if grouped:
            self._group = state.groups.setdefault(group_id, Group(group_id))
            self.member_id = self._group.join(self, next(state.members_joined))

    def subscription(self) -> dict[str, int]:
        """The member's topics and their partition counts."""
        return {name: len(self._state.topic(name).partitions) for name in self._topics}

    def _reachable(self) -> None:
        if self in self._state.cut_off:
            raise EventLogError(f"group {self.group_id!r}: member cut off from the log")

    def _grant(self, owned: frozenset[TopicPartition]) -> dict[TopicPartition, int]:
        resume = dict(self._on_assigned(owned)) if self._on_assigned else {}
        self._positions = {
            tp: resume.get(tp, self._state.group_offsets.get((self.group_id, tp)) or 0)
            for tp in sorted(owned)
        }
        return self._positions

    def _assign(self) -> dict[TopicPartition, int]:
        """Without groups: every partition of the topics, granted at the first call."""
        if self._positions is None:
            owned = frozenset(tp for name in self._topics for tp in self._partitions_of(name))
            return self._grant(owned)
        return self._positions

    def _partitions_of(self, name: str) -> list[TopicPartition]:
        return [TopicPartition(name, p) for p in range(len(self._state.topic(name).partitions))]

    def _give_up(self) -> None:
        owned, self._positions = frozenset(self._positions or ()), None
        if self._on_revoked is not None:
            self._on_revoked(owned)

    def _step(self, group: Group) -> bool:
        """One poll's part in the group's protocol; True when the member owns its partitions
        (and may fetch) after it."""
        if self.member_id not in group.members:  # expired: its partitions are lost
            self._give_up()
            self._generation = -1
            self.member_id = group.join(self, next(self._state.members_joined))
        if group.rebalancing and self.member_id not in group.rejoined:
            if self._joined_once or self._positions is not None:
                self._give_up()
            self._joined_once = True
            group.rejoin(self.member_id)
        if group.rebalancing:
            return False
        if self._generation != group.generation:
            self._grant(group.assignment.get(self.member_id, frozenset()))
            self._generation = group.generation
            return False
        return True

    def poll(self, timeout_s: float = 1.0, max_records: int = 500) -> list[Record]:
        with self._state.lock:
            if self in self._state.cut_off or self._closed:
                return []
            if self._group is None:
                positions = self._assign()
            elif self._step(self._group) and self._positions is not None:
                positions = self._positions
            else:
                return []
            stored = self._fetch(positions, max_records)
        records: list[Record] = []
        for tp, offset, record in stored:
            envelope = decode_consumed(
                record.value,
                record.event_type,
                self._registry,
                self._types,
                self.group_id,
                skip_undecodable=self._skip_undecodable,
                topic=tp.topic,
                partition=tp.partition,
                offset=offset,
            )
            if envelope is not None:
                records.append(Record(tp.topic, tp.partition, offset, envelope))
        return records

    def _fetch(
        self, positions: dict[TopicPartition, int], max_records: int
    ) -> list[tuple[TopicPartition, int, StoredRecord]]:
        """The committed records from ``positions`` (moved past them and past aborted ones), up
        to each partition's last stable offset, ``max_records`` at most."""
        stored: list[tuple[TopicPartition, int, StoredRecord]] = []
        for tp, position in positions.items():
            if tp in self._paused:
                continue
            partition = self._state.partition(tp)
            end, offset = partition.stable_end, position
            while offset < end and len(stored) < max_records:
                entry = partition.entries[offset]
                if entry.visible:
                    stored.append((tp, offset, entry.record))
                offset += 1
            positions[tp] = offset
        return stored

    def pause(self, partitions: Iterable[TopicPartition]) -> None:
        """Fetch nothing from ``partitions`` until :meth:`resume` (Kafka's consumer ``pause``;
        kept across rebalances here): a simulator lets a member's next poll return records of
        the partitions it chose only."""
        self._paused.update(partitions)

    def resume(self, partitions: Iterable[TopicPartition]) -> None:
        """Fetch from ``partitions`` again."""
        self._paused.difference_update(partitions)

    def fetchable(self) -> dict[TopicPartition, int]:
        """How many committed records each owned partition has for the next polls (paused
        ones included), so a simulator can choose among them; ``{}`` before a grant."""
        with self._state.lock:
            return {
                tp: sum(
                    entry.visible
                    for entry in self._state.partition(tp).entries[
                        position : self._state.end_offset(tp)
                    ]
                )
                for tp, position in (self._positions or {}).items()
            }

    def _owned(self) -> dict[TopicPartition, int]:
        return self._assign() if self._group is None else (self._positions or {})

    def assignment(self) -> frozenset[TopicPartition]:
        return frozenset(self._positions or ())

    def seek(self, partition: TopicPartition, offset: int) -> None:
        positions = self._owned()
        if partition not in positions:
            raise ValueError(f"{partition} is not assigned to this consumer")
        positions[partition] = offset

    def position(self, partition: TopicPartition) -> int:
        self._reachable()
        positions = self._owned()
        if partition not in positions:
            raise ValueError(f"{partition} is not assigned to this consumer")
        return positions[partition]

    def group_metadata(self) -> object | None:
        if self._group is None:
            return None
        return MemberMetadata(self.group_id, self._generation, self.member_id)

    def commit(self, offsets: Mapping[TopicPartition, int]) -> None:
        with self._state.lock:
            self._reachable()
            if self._group is not None:
                check_generation(self._state, self.group_metadata())
            for tp, offset in offsets.items():
                self._state.group_offsets[(self.group_id, tp)] = offset

    def committed(self, partition: TopicPartition) -> int | None:
        self._reachable()
        return self._state.group_offsets.get((self.group_id, partition))

    def lag(self) -> dict[TopicPartition, int]:
        self._reachable()
        return {
            tp: max(0, self._state.end_offset(tp) - position)
            for tp, position in (self._positions or {}).items()
        }

    def close(self) -> None:
        with self._state.lock:
            if self._closed:
                return
            if self._group is None:
                if self._positions is not None:
                    self._give_up()
                return
            self._closed = True
            if self._joined_once or self._positions is not None:
                self._give_up()
            if self not in self._state.cut_off:  # else its LeaveGroup never arrives
                self._group.leave(self.member_id)


def check_generation(state: MemoryState, metadata: object | None) -> None:
    """Refuse (GenerationFenced) offsets committed under ``metadata`` (a
    :class:`MemberMetadata`) of a generation its group has left or of a member it dropped;
    other metadata (None, a bare group id) is not checked, as on Kafka."""
    if not isinstance(metadata, MemberMetadata):
        return
    group = state.groups.get(metadata.group_id)
    if group is None or not group.is_current(metadata):
        current = -1 if group is None else group.generation
        raise GenerationFenced(
            f"group {metadata.group_id!r} refused offsets of member {metadata.member_id!r} "
            f"of generation {metadata.generation_id} (the group is at generation {current})"
        )
