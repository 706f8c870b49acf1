"""The answer window of one table: what makes a retried request (or a redelivered input) idempotent.

Every envelope a command or input caused carries its ``causation_id``: ``"<account>/<client
request id>"`` for a player's or operator's command (with the ``request_digest`` of the request
as it came), the event id for another service's input. A table's window remembers the last
:data:`ANSWER_WINDOW` causation ids, oldest first: for a client's request the payloads it caused
and its digest (a retry with the same digest is answered from them, one with another digest is
ALREADY_EXISTS: ``rummy_table.application.commit``), for an input only that it was seen (it is
dropped when seen again). A closed table keeps its last :data:`CLOSED_ANSWER_WINDOW`.

The window is folded from the table's stream with the table (:class:`~.held_table.HeldTable`),
live and on replay alike, and kept in the snapshots (``rummy_table.adapters.snapshot``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from google.protobuf.message import Message

from rummy_platform.envelope import Envelope

#: Commands and inputs (by causation id) whose answers a table keeps: a client retrying a
#: request id within its table's last 256 commands and inputs gets the first answer.
ANSWER_WINDOW = 256
#: The answers a closed table keeps.
CLOSED_ANSWER_WINDOW = 8


@dataclass
class AnswerWindow:
    """One table's last causation ids. ``payloads``: causation id -> the payloads it caused,
    oldest first (a client's request only; an input's event id maps to ``[]``: it is only ever
    looked up); ``digests``: the request digest of each client request in ``payloads``;
    ``evicted``: client request keys dropped since the projection last looked (it forgets their
    digests)."""

    payloads: dict[str, list[Message]] = field(default_factory=dict)
    digests: dict[str, str] = field(default_factory=dict)
    evicted: list[str] = field(default_factory=list, repr=False, compare=False)

    def __contains__(self, causation_id: object) -> bool:
        return causation_id in self.payloads

    def answer(self, causation_id: str) -> list[Message] | None:
        """The payloads ``causation_id`` caused, or None when it is not in the window."""
        return self.payloads.get(causation_id)

    def remember(self, envelope: Envelope) -> None:
        """Record the envelope's causation id (and, for a client's request, its payload and
        digest), dropping the oldest beyond :data:`ANSWER_WINDOW`. An envelope without a
        causation id (a hand the tick started) is not remembered."""
        key = envelope.causation_id
        if not key:
            return
        found = self.payloads.get(key)
        if found is None:
            found = self.payloads[key] = []
            if envelope.request_digest:
                self.digests[key] = envelope.request_digest
            self.trim(ANSWER_WINDOW)
        if envelope.request_digest:
            found.append(envelope.payload)

    def trim(self, keep: int) -> None:
        """Drop the oldest causation ids beyond ``keep``."""
        while len(self.payloads) > keep:
            oldest = next(iter(self.payloads))
            del self.payloads[oldest]
            if self.digests.pop(oldest, None) is not None:
                self.evicted.append(oldest)
