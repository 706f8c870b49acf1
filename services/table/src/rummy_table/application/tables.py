"""The operators' and the lobby's use cases: open a table (its options validated by the rules
and the match format, INVALID_ARGUMENT naming the field), close it, list the tables."""

from __future__ import annotations

import uuid

from rummy.match.v1 import match_pb2 as match_pb
from rummy.table.v1 import events_pb2 as pb
from rummy_game import match_payloads, stream_payloads
from rummy_platform.envelope import Envelope
from rummy_platform.errors import (
    InvalidArgument,
)
from rummy_platform.logging import get_logger, log_context
from rummy_rules import registry
from rummy_rules.rules import (
    RuleSet,
    RuleSetError,
    validate_table_options,
)
from rummy_table.domain import closing
from rummy_table.domain.match_host import MatchHost

from . import commands as c
from .commit import TableCore, service_error, unavailable_on_log_errors
from .results import TableSummary

_log = get_logger(__name__)
_TABLE_NS = uuid.UUID("2a7c1f4e-5b0d-4c36-9e8a-7d1b3f6a9c20")


def open_table(core: TableCore, request: c.OpenTable) -> str:
    """Open a table; returns its id (the same id for a retried client_request_id).
    The variant is ``rule_set.variant`` (``rummy_game.stream_payloads.rule_set_from_pb``).
    Raises InvalidArgument naming the field and its bounds for any option the rules'
    validation refuses (an unknown variant; as the variant says: the seat counts it plays,
    its own options; clock seconds, commission, a point value within int64 and within
    ``max_reservation_hundredths``)."""
    operator = request.account_id
    key, digest = core._request(request)
    table_id = str(uuid.uuid5(_TABLE_NS, key))
    start_delay = stream_payloads.start_delay_seconds_from_pb(request.rule_set)
    try:
        rules = stream_payloads.rule_set_from_pb(
            request.rule_set,
            request.seat_count,
            request.point_value_hundredths,
            request.commission_bps,
        )
        validate_table_options(rules, start_delay, core.max_reservation_hundredths)
    except RuleSetError as exc:
        raise service_error(exc, stream_payloads.variant_of(request.rule_set)) from None
    match = _match_options(core, request, rules)
    options = stream_payloads.rule_set_to_pb(rules, start_delay)
    opened = pb.TableOpened(
        table_id=table_id,
        name=request.name or table_id[:8],
        seat_count=request.seat_count,
        point_value_hundredths=request.point_value_hundredths,
        commission_bps=request.commission_bps,
        rule_set=options,
        operator_account_id=operator,
        match=match,
    )
    with core._command(table_id, opening=True) as existing:
        if existing is not None:
            core._request(request)  # again under the lock: a racing first open
            return table_id
        at = core.now_ms()
        occurred = stream_payloads.ms_to_datetime(at)
        envelope = Envelope.new(
            opened,
            stream_id=table_id,
            stream_version=1,
            occurred_at=occurred,
            causation_id=key,
            request_digest=digest,
            event_id=core.new_event_id(),
        )
        with unavailable_on_log_errors():
            positions = core._append([envelope], table_id)
        core._fold([envelope], positions)
        core.metrics.table_opened()
    _log.info("table opened", table_id=table_id, seats=request.seat_count)
    return table_id


def _match_options(
    core: TableCore, request: c.OpenTable, rules: RuleSet
) -> match_pb.MatchOptions | None:
    """The format options to record (None: a points table). Raises InvalidArgument for an
    unknown format, options out of bounds, a point value at a match table, a seat count the
    format does not seat, or a variant that plays no such deals."""
    given = request.match
    try:
        fmt = match_payloads.format_from_pb(given, request.commission_bps)
    except RuleSetError as exc:
        raise InvalidArgument(match_payloads.option_message(exc, given)) from None
    if not match_payloads.is_match(given):
        return None
    if request.point_value_hundredths != 0:
        raise InvalidArgument(
            f"point_value_hundredths must be 0 at a {fmt.name} table (the format owns the "
            f"money: match.{match_payloads.arm_of(given)}), got {request.point_value_hundredths}"
        )
    if not fmt.min_seats <= request.seat_count <= fmt.max_seats:
        raise InvalidArgument(
            f"seat_count must be {fmt.min_seats}..{fmt.max_seats} at a {fmt.name} table, "
            f"got {request.seat_count}"
        )
    if fmt.hold_hundredths > core.max_reservation_hundredths:
        raise InvalidArgument(
            f"match.{match_payloads.arm_of(given)}: a {fmt.name} table reserves "
            f"{fmt.hold_hundredths} hundredths per seat at once (an entry fee, or a game's "
            f"max_game_points x point value), above this service's most, "
            f"{core.max_reservation_hundredths} (RUMMY_TABLE_MAX_RESERVATION_HUNDREDTHS)"
        )
    try:
        MatchHost.for_table(fmt, rules, registry.lookup(rules.variant))
    except RuleSetError as exc:
        raise InvalidArgument(
            f"match: variant {rules.variant!r} does not play the deals of a {fmt.name} match "
            f"({stream_payloads.wire_message(exc, rules.variant)})"
        ) from None
    return match_payloads.format_to_pb(fmt)


def close_table(core: TableCore, request: c.CloseTable) -> str:
    """Close a table for the operator ``request.account_id``: no new hand and no new seat; a
    hand being played plays out, then every seated player is stood up. Returns ``closed``
    when it closed at once, else ``closing`` (a retried client_request_id answers with the
    table's state now). Raises NotFound, AlreadyExists (the request id was used for another
    request), FailedPrecondition (already closing or closed)."""
    with unavailable_on_log_errors(), core._command(request.table_id) as table:
        # the request id checked under the table's command lock, which it commits under
        key, digest = core._request(request)
        operator = request.account_id
        if table is None:
            raise core._missing(request.table_id)
        if key not in table.answers:
            at = core.now_ms()
            with log_context(table_id=table.table_id, hand_id=table.hand_id or None):
                payloads = closing.close(table, operator, request.reason, at)
                core.commit(table, payloads, at, causation_id=key, request_digest=digest)
                _log.info("table closing", operator=operator, state=table.state_name)
        with core.projection.lock:
            return table.state_name


def list_tables(
    core: TableCore,
    limit: int | None = None,
    after: str | None = None,
    *,
    everywhere: bool = True,
    include_closed: bool = False,
) -> list[TableSummary]:
    """The tables not closed (open or closing; closed ones too with ``include_closed``) in
    table-id order: those whose id sorts after ``after`` (all when None), at most ``limit`` of
    them (all when None). With ``everywhere``, those every other instance serves too
    (:attr:`peer_tables`: each asked for the same page, the pages merged); else this
    instance's only."""
    mine = _local_tables(core, limit, after, include_closed)
    if not everywhere or core.peer_tables is None:
        return mine
    theirs = core.peer_tables(limit, after, include_closed)
    merged = {t.table_id: t for t in [*theirs, *mine]}
    return [merged[t] for t in sorted(merged)][:limit]


def _local_tables(
    core: TableCore, limit: int | None, after: str | None, include_closed: bool
) -> list[TableSummary]:
    with core.projection.lock:
        ids = sorted(
            t
            for t, table in core.projection.tables.items()
            if (include_closed or not table.closed) and (after is None or t > after)
        )
        page = [core.projection.tables[t] for t in ids[:limit]]
        return [
            TableSummary(
                table_id=t.table_id,
                name=t.opened.name,
                seat_count=t.opened.seat_count,
                seats_taken=len(t.seats),
                point_value_hundredths=t.opened.point_value_hundredths,
                commission_bps=t.opened.commission_bps,
                variant=t.rule_set.variant,
                turn_seconds=t.rule_set.turn_seconds,
                start_delay_seconds=t.start_delay_ms // 1000,
                state=t.state_name,
                match_format=t.match.fmt.name if t.match is not None else "single",
                hands_played=t.hand_no,
                match=t.opened.match if t.opened.HasField("match") else None,
            )
            for t in page
        ]
