"""The reads: a hand's result and proof (from the log for an older hand), why a settlement was
refused, a caller's view (rendered by the edge) and the check before a watch starts. They take
the projection's short lock only, never a table's command lock."""

from __future__ import annotations

import contextlib
from typing import Any, cast

from rummy.dealer.v1 import events_pb2 as dealer_pb
from rummy.table.v1 import events_pb2 as pb
from rummy_game import proof, stream_payloads, upcast
from rummy_platform.envelope import Envelope
from rummy_platform.errors import (
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    Unavailable,
)
from rummy_platform.eventlog import (
    EventLogError,
)
from rummy_rules.cards import Card

from .commit import TableCore


def get_hand_result(
    core: TableCore, account_id: str | None, table_id: str, hand_id: str
) -> pb.HandEnded:
    """Every seat's points, cards, arrangement, settlement lines and commission, once the hand
    ended (:meth:`voided_reason` says if the ledger refused them); a hand older than the
    table's last RESULT_WINDOW is read back from the log from its HandStarted on. Raises
    NotFound (no such hand, or it was aborted), FailedPrecondition (not ended yet),
    Unavailable (the log cannot be read)."""
    core._check_owner(table_id)
    with core.projection.lock:
        tables = [core._table(table_id)] if table_id else list(core.projection.tables.values())
        table = next((t for t in tables if hand_id in t.hands), None)
        if table is None:
            raise NotFound(f"no ended hand {hand_id!r}")
        if hand_id in table.results:
            return table.results[hand_id]
        if table.hand_id == hand_id:  # the current hand, not ended (running or aborted)
            raise FailedPrecondition(f"hand {hand_id} has not ended")
        found_table, offset = table.table_id, table.hands[hand_id]
    # An older hand: its HandEnded is read back from the log, from the hand's start on, in
    # today's shape (rummy_game.upcast.hand_payload, under the hand's context and cut card).
    ctx: stream_payloads.HandContext | None = None
    cut: Card | None = None
    for envelope in _hand_envelopes(core, found_table, offset):
        payload = envelope.payload
        if getattr(payload, "hand_id", None) != hand_id:
            continue
        if isinstance(payload, pb.HandStarted):
            ctx = stream_payloads.hand_context(payload)
        elif isinstance(payload, dealer_pb.HandDealt) and payload.HasField("wild_cut"):
            # no cut: the upcast reads none
            with contextlib.suppress(stream_payloads.StreamPayloadError):
                cut = (
                    None
                    if ctx is None
                    else stream_payloads.card_from_pb(payload.wild_cut, ctx.shoe)
                )
        elif isinstance(payload, pb.HandEnded):
            return (
                payload
                if ctx is None
                else cast(pb.HandEnded, upcast.hand_payload(payload, ctx, cut))
            )
    raise NotFound(f"no ended hand {hand_id!r}")


def _hand_envelopes(core: TableCore, table_id: str, offset: int) -> list[Envelope]:
    """``table_id``'s envelopes from ``offset`` of its partition on (from its first when
    ``offset`` is -1 or no offset reader is set). Raises Unavailable when the log cannot
    be read."""
    try:
        if core.read_stream_from is not None and offset >= 0:
            return core.read_stream_from(table_id, offset)
        if core.read_stream is None:
            raise Unavailable("this table-service instance cannot read its stream")
        return core.read_stream(table_id)
    except EventLogError as exc:
        raise Unavailable(f"cannot read the stream of table {table_id}: {exc}") from None


def get_hand_proof(core: TableCore, account_id: str | None, table_id: str, hand_id: str) -> str:
    """The proof bundle of an ended hand as canonical JSON (``rummy_game.proof``), read from
    the table's stream (so old hands too). ``account_id``: a player's account (it must have
    been seated in the hand), or None for an operator. Raises NotFound (no such hand),
    PermissionDenied (a player not dealt in), FailedPrecondition (running, aborted, or the
    seed not revealed yet), Unavailable (this instance cannot read its stream)."""
    core._check_owner(table_id)
    with core.projection.lock:
        tables = [core._table(table_id)] if table_id else list(core.projection.tables.values())
        table = next((t for t in tables if hand_id in t.hands), None)
        if table is None:
            raise NotFound(f"no hand {hand_id!r}")
        found_table, offset = table.table_id, table.hands[hand_id]
        if table.hand_id == hand_id and table.hand_running:
            raise FailedPrecondition(f"hand {hand_id} has not ended (or was aborted)")
        if hand_id not in table.revealed:
            raise FailedPrecondition(f"the server seed of hand {hand_id} is not revealed yet")
    try:
        envelopes = _hand_envelopes(core, found_table, offset)
        bundle = proof.hand_proof(found_table, hand_id, envelopes)
    except proof.ProofNotReady as exc:
        raise FailedPrecondition(str(exc)) from None
    if account_id is not None:
        started = next(e for e in bundle["events"] if e["event"]["type"] == "table.HandStarted")
        if account_id not in {s["account_id"] for s in started["event"]["seats"]}:
            raise PermissionDenied(
                f"only the players of hand {hand_id} and operators get its proof"
            )
    return proof.canonical_json(bundle)


def voided_reason(core: TableCore, table_id: str, hand_id: str) -> str:
    """Why the ledger refused the hand's settlement (the hand is void, no token moved), or ""
    when it did not (settled, or not yet)."""
    with core.projection.lock:
        tables = [core._table(table_id)] if table_id else list(core.projection.tables.values())
        return next((t.voided[hand_id] for t in tables if hand_id in t.voided), "")


def view_after(
    core: TableCore, account_id: str | None, table_id: str, after_version: int = 0
) -> Any:
    """The caller's view (``account_id`` None: a spectator's; as :attr:`render_view` renders
    it) once the table's stream is past ``after_version`` (at once for 0), else None. Raises
    NotFound."""
    with core.projection.lock:
        table = core._table(table_id)
        return core.render_view(table, account_id) if table.version > after_version else None


def view(core: TableCore, account_id: str | None, table_id: str) -> Any:
    """The caller's view now. Raises NotFound."""
    found = view_after(core, account_id, table_id)
    assert found is not None  # every table's stream holds at least its TableOpened
    return found


def check_watch(core: TableCore, table_id: str, after_version: int) -> None:
    """Raise NotFound (no such table) or InvalidArgument (``after_version`` beyond the
    table's version) or NotOwner (another instance serves the table) for a watch that
    cannot start."""
    core._check_owner(table_id)
    with core.projection.lock:
        version = core._table(table_id).version
    if after_version > version:
        raise InvalidArgument(
            f"after_stream_version {after_version} is beyond the table's version {version}"
        )
