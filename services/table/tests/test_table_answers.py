"""The answer window (rummy_table.application.answers): the application's, not the domain's; it
keeps the last ANSWER_WINDOW causation ids with a client request's payloads and digest, an input's
id alone, and a closed table's last CLOSED_ANSWER_WINDOW."""

from __future__ import annotations

from datetime import UTC, datetime

from google.protobuf.message import Message

from rummy.table.v1 import events_pb2 as pb
from rummy_platform.envelope import Envelope
from rummy_table.application.answers import ANSWER_WINDOW, CLOSED_ANSWER_WINDOW, AnswerWindow
from rummy_table.application.held_table import HeldTable
from rummy_table.domain.table import Table

AT = datetime(2026, 1, 1, tzinfo=UTC)


def envelope(payload: Message, version: int, causation_id: str, digest: str = "") -> Envelope:
    return Envelope.new(
        payload,
        stream_id="t-1",
        stream_version=version,
        occurred_at=AT,
        causation_id=causation_id,
        request_digest=digest,
    )


def test_the_domain_table_holds_no_answers() -> None:
    fields = Table.__dataclass_fields__
    assert not {"answers", "digests", "evicted"} & set(fields)
    assert "answers" in HeldTable.__dataclass_fields__


def test_a_request_keeps_its_payloads_and_digest_an_input_only_its_id() -> None:
    window = AnswerWindow()
    seated = pb.TablePlayerSeated(seat=1, account_id="ann")
    window.remember(envelope(seated, 2, "ann/r-1", "d-1"))
    window.remember(envelope(pb.TablePlayerLeft(seat=1), 3, "ann/r-1", "d-1"))
    window.remember(envelope(pb.HandAborted(hand_id="h"), 4, "event-9"))
    window.remember(envelope(pb.TableClosing(), 5, ""))  # a tick's: not remembered
    assert window.answer("ann/r-1") == [seated, pb.TablePlayerLeft(seat=1)]
    assert window.answer("event-9") == [] and "event-9" in window
    assert window.answer("never") is None and "" not in window
    assert window.digests == {"ann/r-1": "d-1"}


def test_the_oldest_beyond_the_window_are_dropped_and_their_request_keys_told() -> None:
    window = AnswerWindow()
    for i in range(ANSWER_WINDOW + 3):
        digest = "d" if i % 2 == 0 else ""  # requests and inputs in turn
        window.remember(envelope(pb.TablePlayerSeated(seat=i), i + 1, f"k-{i}", digest))
    assert len(window.payloads) == ANSWER_WINDOW
    assert next(iter(window.payloads)) == "k-3"
    assert window.evicted == ["k-0", "k-2"]  # k-1 was an input: no digest to forget
    window.trim(CLOSED_ANSWER_WINDOW)
    assert list(window.payloads) == [f"k-{i}" for i in range(ANSWER_WINDOW - 5, ANSWER_WINDOW + 3)]
