"""A table as this instance holds it: the domain's :class:`~rummy_table.domain.table.Table` and the
application's own part of it, folded together from the table's stream (live after an append, and
on replay): its answer window (:mod:`.answers`) and the payloads a reader is answered from, kept
as the log holds them (its TableOpened, the current hand's HandStarted and the context its
payloads are read under, the HandEnded of the last :data:`RESULT_WINDOW` ended hands).

Memory (flat in the number of hands played): older results are read back from the log
(``rummy_table.application.reads``); a closed table keeps none.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Self, cast

from google.protobuf.message import Message

from rummy.table.v1 import events_pb2 as pb
from rummy_game import stream_payloads, upcast
from rummy_platform.envelope import Envelope
from rummy_table.domain.facts import HandEvents
from rummy_table.domain.table import DecisionObserver, Fact, Table

from . import stream_facts
from .answers import CLOSED_ANSWER_WINDOW, AnswerWindow

#: Ended hands whose HandEnded a table keeps in memory (older ones are read from the log).
RESULT_WINDOW = 4


@dataclass
class HeldTable(Table):
    """The domain's table with its :class:`~.answers.AnswerWindow` (``answers``) and the
    payloads it is read from (``opened``, ``started``, ``ctx``, ``results``)."""

    answers: AnswerWindow = field(default_factory=AnswerWindow)
    #: The full protobuf name of the last event folded (``""`` before the first since this process
    #: loaded the table): what a watcher's next view is the cause of.
    last_cause: str = ""
    #: The table's TableOpened, as recorded.
    opened: pb.TableOpened = field(default_factory=pb.TableOpened)
    #: The current (or last) hand's HandStarted, as recorded, and the context its payloads are
    #: read and written under (``ctx`` is made from ``started``).
    started: pb.HandStarted | None = None
    ctx: stream_payloads.HandContext | None = None
    #: The HandEnded of the last RESULT_WINDOW ended hands, oldest first, in today's shape.
    results: dict[str, pb.HandEnded] = field(default_factory=dict)
    #: The payloads of the hand's events :meth:`payloads_of` wrote last, each with its fact, in
    #: order: folding those payloads (equal ones) once appended takes the facts decided
    #: instead of decoding them again.
    _decided: list[tuple[Message, HandEvents]] = field(
        default_factory=list, repr=False, compare=False
    )

    @classmethod
    def of_opened(cls, opened: pb.TableOpened, on_decision: DecisionObserver | None) -> Self:
        """A table of ``opened``'s options with nothing folded yet (``on_decision`` is told of
        each decision it asks of the rules). Raises ValueError for bad options."""
        table = cls.for_opened(stream_facts.opened_fact(opened), on_decision)
        table.opened = opened
        return table

    @classmethod
    def opened_from(cls, envelope: Envelope, on_decision: DecisionObserver | None = None) -> Self:
        """The table an envelope carrying TableOpened creates (as :meth:`of_opened`), that
        envelope folded. Raises ValueError for bad options."""
        opened = envelope.payload
        assert isinstance(opened, pb.TableOpened)
        table = cls.of_opened(opened, on_decision)
        table.apply(envelope)
        return table

    def restore_hand(self, started: pb.HandStarted) -> None:
        """Hold ``started`` as the current hand's HandStarted, in the domain's table too (a
        table loaded from a snapshot, its hand's state restored beside)."""
        self.hand_started = stream_facts.hand_started_fact(started)
        self.started, self.ctx = started, stream_payloads.hand_context(started)

    def payloads_of(self, facts: Sequence[Fact]) -> list[Message]:
        """The payloads ``facts`` (decided here, about to be appended in this order) are written
        as (:func:`.stream_facts.to_payloads`, a hand's events under the current hand's
        context). Raises as that."""
        payloads = stream_facts.to_payloads(facts, self.ctx)
        self._decided = [
            (payload, fact)
            for fact, payload in zip(facts, payloads, strict=True)
            if isinstance(fact, HandEvents)
        ]
        return payloads

    def _decided_fact(self, payload: Message) -> HandEvents | None:
        """The fact :meth:`payloads_of` wrote as ``payload``, when it is the next of those."""
        if not self._decided or not stream_payloads.is_hand_payload(payload):
            return None
        written, fact = self._decided.pop(0)
        if written == payload:
            return fact
        self._decided.clear()  # not the payloads written last: decode them all
        return None

    def apply(self, envelope: Envelope, offset: int = -1) -> None:
        """Fold one envelope of this table's stream into the table (its payload as the
        domain's fact, :func:`.stream_facts.record_of`), the payloads kept and the answer
        window; ``offset``: where it lies in the table's partition (-1: not known). Raises
        ValueError for a payload that maps to no fact."""
        self.answers.remember(envelope)
        payload = envelope.payload
        at_ms = stream_payloads.datetime_to_ms(envelope.occurred_at)
        fact = self._decided_fact(payload) or stream_facts.record_of(payload, at_ms, self.ctx)
        self.fold(fact, at_ms, envelope.stream_version, offset)
        if isinstance(payload, pb.HandStarted):
            self.started, self.ctx = payload, stream_payloads.hand_context(payload)
        elif isinstance(payload, pb.HandEnded) and self.ctx is not None:
            # a record of an older writer reads in today's shape (its deadwood points as the
            # variant counts them, under the hand's cut card)
            cut = self.variant.view(self.hand, -1).wild_cut
            self.results[payload.hand_id] = cast(
                pb.HandEnded, upcast.hand_payload(payload, self.ctx, cut)
            )
            while len(self.results) > RESULT_WINDOW:
                del self.results[next(iter(self.results))]
        elif isinstance(payload, pb.TableClosed):
            if self.hand_started is None:  # the domain's stub keeps no hand
                self.started, self.ctx = None, None
            self.results.clear()
            self._decided.clear()
            self.answers.trim(CLOSED_ANSWER_WINDOW)
        self.last_cause = payload.DESCRIPTOR.full_name
