"""What a hand's replay records: the events as recorded (:class:`Recorded`), the ledger's
rows of a hand (:class:`LedgerRows`), what differs (:class:`Finding`) and the hand's verdict
(:class:`HandReplay`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from google.protobuf.message import Message

from rummy_platform.envelope import Envelope
from rummy_rules import events as ev

#: Settlement rows of a hand from the ledger: ``fetch(hand_id) -> LedgerRows | None``.
LedgerFetch = Callable[[str], "LedgerRows | None"]
#: Seconds after HandEnded within which a journal without the hand's settlement is only a note
#: (the ledger consumes table-events asynchronously; it settles within a second or two).
DEFAULT_SETTLE_GRACE_S = 60.0


@dataclass(frozen=True)
class LedgerRows:
    """A hand's settlement in the journal: net amount and points charged per seat (hundredths,
    points) and the house's commission (hundredths)."""

    transaction_id: str
    net_by_seat: dict[int, int]
    points_by_seat: dict[int, int]
    commission_hundredths: int


@dataclass(frozen=True)
class Finding:
    """A place where replay and record differ: the event (stream version, id, payload type), the
    check that failed and what differs."""

    version: int
    event_id: str
    type: str
    check: str
    message: str

    def line(self) -> str:
        return f"v{self.version} {self.type} ({self.event_id}) [{self.check}]: {self.message}"


@dataclass
class HandReplay:
    """The replay of one hand: its events, what failed (``findings``, by stream order), what
    could not be checked (``notes``) and where a recorded arrangement differs from today's
    solver's but is equally good (``equivalent``: accepted, not a mismatch)."""

    table_id: str
    hand_id: str
    envelopes: list[Envelope]
    hand_no: int = 0
    outcome: str = "running"  # ended / voided (settlement refused) / aborted / running
    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)
    equivalent: list[str] = field(default_factory=list)
    #: Why the hand cannot be verified by this build (it pinned a variant or rules version this
    #: build does not know: a newer table service's), or "" when it was replayed.
    unverifiable: str = ""

    @property
    def ok(self) -> bool:
        """No finding, and the hand could be verified at all."""
        return not self.findings and not self.unverifiable

    @property
    def first(self) -> Finding | None:
        """The first event (by stream version) where replay and record differ."""
        return min(self.findings, key=lambda f: f.version) if self.findings else None


def short_type(envelope: Envelope) -> str:
    return envelope.payload.DESCRIPTOR.name


def finding(envelope: Envelope, check: str, message: str) -> Finding:
    return Finding(envelope.stream_version, envelope.event_id, short_type(envelope), check, message)


@dataclass
class Recorded:
    envelope: Envelope
    event: ev.Event


def of_type(recorded: list[Recorded], kind: type) -> list[Recorded]:
    return [r for r in recorded if isinstance(r.event, kind)]


def payloads_of(report: HandReplay, kind: type[Message]) -> list[Envelope]:
    return [e for e in report.envelopes if isinstance(e.payload, kind)]


def ended_of(recorded: list[Recorded]) -> Recorded | None:
    ended = of_type(recorded, ev.HandEnded)
    return ended[0] if ended else None
