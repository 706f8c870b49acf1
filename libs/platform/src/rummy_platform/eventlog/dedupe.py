"""Dropping redelivered events downstream.

Kafka delivers at least once: a producer retry after a lost acknowledgement, or a consumer that
restarts before storing its offset, shows the same event again. Every event carries a unique
``event_id``, and a re-recorded input carries the source event's id as ``causation_id``; a consumer
keeps the keys it has handled (in memory here; a service keeps them in Postgres with its effects)
and skips repeats.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

from rummy_platform.envelope import Envelope

#: Any envelope (``Envelope[SeedCommitted]`` ...): what is kept is what was given.
E = TypeVar("E", bound=Envelope)

DedupeKey = Callable[[Envelope], str]


def by_event_id(envelope: Envelope) -> str:
    """The envelope's own id: the same event seen twice."""
    return envelope.event_id


def by_causation_id(envelope: Envelope) -> str:
    """The id of the event it reacts to: the same input recorded twice.

    Raises ValueError if the envelope has no causation id.
    """
    if not envelope.causation_id:
        raise ValueError(f"event {envelope.event_id} ({envelope.type}) has no causation_id")
    return envelope.causation_id


class Deduplicator:
    """Remembers the keys of handled events; :meth:`first_time` is True once per key."""

    def __init__(self, key: DedupeKey = by_event_id, seen: Iterable[str] = ()) -> None:
        self._key = key
        self._seen: set[str] = set(seen)

    def first_time(self, envelope: Envelope) -> bool:
        """True (and remember it) if this envelope's key was not seen before, else False."""
        key = self._key(envelope)
        if key in self._seen:
            return False
        self._seen.add(key)
        return True

    def __len__(self) -> int:
        return len(self._seen)


def drop_redelivered(envelopes: Iterable[E], key: DedupeKey = by_event_id) -> list[E]:
    """The envelopes without repeats of an earlier key, in their order."""
    dedupe = Deduplicator(key)
    return [envelope for envelope in envelopes if dedupe.first_time(envelope)]
