"""A table as this instance holds it: the domain's :class:`~rummy_table.domain.table.Table` and the
application's own part of it, its answer window (:mod:`.answers`), folded together from the
table's stream (live after an append, and on replay)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Self

from rummy.table.v1 import events_pb2 as pb
from rummy_game import stream_payloads
from rummy_platform.envelope import Envelope
from rummy_table.domain.table import DecisionObserver, Table

from . import stream_facts
from .answers import CLOSED_ANSWER_WINDOW, AnswerWindow


@dataclass
class HeldTable(Table):
    """The domain's table with its :class:`~.answers.AnswerWindow` (``answers``)."""

    answers: AnswerWindow = field(default_factory=AnswerWindow)
    #: The full protobuf name of the last event folded (``""`` before the first since this process
    #: loaded the table): what a watcher's next view is the cause of.
    last_cause: str = ""

    @classmethod
    def opened_from(cls, envelope: Envelope, on_decision: DecisionObserver | None = None) -> Self:
        """The table an envelope carrying TableOpened creates (``on_decision`` is told of each
        decision it asks of the rules). Raises ValueError for bad options."""
        opened = envelope.payload
        assert isinstance(opened, pb.TableOpened)
        table = cls.for_opened(opened, on_decision)
        table.apply(envelope)
        return table

    def apply(self, envelope: Envelope, offset: int = -1) -> None:
        """Fold one envelope of this table's stream into the table (its payload as the
        domain's fact, :mod:`.stream_facts`) and the answer window; ``offset``: where it lies in
        the table's partition (-1: not known). Raises ValueError for a payload that maps to no
        fact (:func:`.stream_facts.fact_of`)."""
        self.answers.remember(envelope)
        at_ms = stream_payloads.datetime_to_ms(envelope.occurred_at)
        fact = stream_facts.fact_of(envelope.payload, at_ms)
        self.fold(fact, at_ms, envelope.stream_version, offset)
        self.last_cause = envelope.payload.DESCRIPTOR.full_name
        if isinstance(envelope.payload, pb.TableClosed):
            self.answers.trim(CLOSED_ANSWER_WINDOW)
