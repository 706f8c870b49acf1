"""A table as this instance holds it: the domain's :class:`~rummy_table.domain.table.Table` and the
application's own part of it, its answer window (:mod:`.answers`), folded together from the
table's stream (live after an append, and on replay)."""

from __future__ import annotations

from dataclasses import dataclass, field

from rummy.table.v1 import events_pb2 as pb
from rummy_platform.envelope import Envelope
from rummy_table.domain.table import Table

from .answers import CLOSED_ANSWER_WINDOW, AnswerWindow


@dataclass
class HeldTable(Table):
    """The domain's table with its :class:`~.answers.AnswerWindow` (``answers``)."""

    answers: AnswerWindow = field(default_factory=AnswerWindow)
    #: The full protobuf name of the last event folded (``""`` before the first since this process
    #: loaded the table): what a watcher's next view is the cause of.
    last_cause: str = ""

    def apply(self, envelope: Envelope, offset: int = -1) -> None:
        """Fold one envelope of this table's stream into the table and the answer window;
        ``offset``: where it lies in the table's partition (-1: not known)."""
        self.answers.remember(envelope)
        super().apply(envelope, offset)
        self.last_cause = envelope.payload.DESCRIPTOR.full_name
        if isinstance(envelope.payload, pb.TableClosed):
            self.answers.trim(CLOSED_ANSWER_WINDOW)
