"""Time: the tick that aborts the hands (and matches) waiting past the service deadline for
another service, and starts a hand at every table whose start delay has passed."""

from __future__ import annotations

from rummy_platform.errors import (
    Unavailable,
)
from rummy_platform.logging import get_logger, log_context
from rummy_table.domain import closing
from rummy_table.domain.facts import HandStarted

from .commit import TableCore
from .ownership import NotOwner

_log = get_logger(__name__)


def tick(core: TableCore) -> list[str]:
    """Abort every hand that waited longer than the service deadline for another service's
    answer (:meth:`abort_overdue_hands`), then start a hand at every table whose start delay
    has passed (the tables in parallel, each under its command lock); returns the hand ids
    started.

    A table whose start raises is logged (table_id, hand_id), counted
    (``rummy_table_hand_start_failures_total``) and tried again after a backoff
    (``start_retries``); the other tables start their hands all the same. Raises
    Unavailable once fenced."""
    now = core.now_ms()
    abort_overdue_hands(core, now)
    with core.projection.lock:
        due = [
            t.table_id
            for t in core.projection.tables.values()
            if (at := t.start_due_ms(core.speed)) is not None
            and at <= now
            and core.start_retries.ready(t.table_id)
            and core._owns(t.table_id)
        ]
    if len(due) <= 1:
        started = [_start_hand(core, table_id, now) for table_id in due]
        return [h for h in started if h is not None]
    futures = [core._workers().submit(_start_hand, core, table_id, now) for table_id in due]
    hands, fenced = [], None
    for future in futures:
        try:
            hand_id = future.result()
        except Unavailable as exc:
            fenced = exc
            continue
        if hand_id is not None:
            hands.append(hand_id)
    if fenced is not None:
        raise fenced
    return hands


def abort_overdue_hands(core: TableCore, now: int) -> list[str]:
    """Abort the hand of every table (of this instance) that waited for another service's
    answer (the ledger's stakes, fairness's commitment, the dealer's deal) for
    ``service_deadline_seconds`` (wall-clock) since its last fact, through the variant's
    AbortHand with a reason naming what is missing (at a match table the deal is voided,
    and the match aborted when no redeal is possible: ``Table.abort_overdue``). Each is
    logged (table_id, hand_id) and counted (``rummy_table_overdue_aborts_total``). A match
    table with no hand running whose match waited that long for the ledger to hold its money
    has its match aborted (every entry released). Returns the aborted hands' (or matches')
    ids. Raises Unavailable once fenced."""
    wait_ms = int(core.service_deadline_seconds * 1000)  # real time, whatever the speed
    wait_text = f"{core.service_deadline_seconds} s"
    with core.projection.lock:
        overdue = [
            t.table_id
            for t in core.projection.tables.values()
            if closing.overdue_reason(t, now, wait_ms, wait_text) is not None
            and core.start_retries.ready(t.table_id)
            and core._owns(t.table_id)
        ]
    aborted = []
    for table_id in overdue:
        try:
            hand_id = _abort_overdue(core, table_id, now, wait_ms, wait_text)
        except NotOwner:
            continue
        if hand_id is not None:
            aborted.append(hand_id)
    return aborted


def _abort_overdue(
    core: TableCore, table_id: str, now: int, wait_ms: int, wait_text: str
) -> str | None:
    with core._command(table_id) as table:
        if table is None:
            return None
        reason = closing.overdue_reason(table, now, wait_ms, wait_text)
        if reason is None:  # an answer arrived meanwhile
            return None
        hand_id = table.hand_id if table.hand_running else ""
        with log_context(table_id=table_id, hand_id=hand_id or None):
            try:
                core.commit(table, closing.abort_overdue(table, reason, now), now)
            except Unavailable:
                raise
            except Exception as exc:  # logged, counted, retried after the backoff
                _start_failed(core, table_id, hand_id, exc)
                return None
            core.start_retries.succeeded(table_id)
            if not hand_id:  # no deal could start: the match's money was not held in time
                _log.warning("match aborted", match_id=table.match_id, reason=reason)
                core.metrics.overdue_aborted("match")
                return table.match_id
            _log.warning("hand aborted: a service is gone past its deadline", reason=reason)
            core.metrics.overdue_aborted("hand")
        return hand_id


def _start_hand(core: TableCore, table_id: str, now: int) -> str | None:
    """Start ``table_id``'s hand if it is still due; None when not (or when the start
    failed: logged, counted, retried later; or when the table was handed over meanwhile).
    Raises Unavailable once fenced."""
    try:
        return _start_owned_hand(core, table_id, now)
    except NotOwner:
        return None


def _start_owned_hand(core: TableCore, table_id: str, now: int) -> str | None:
    with core._command(table_id) as table:
        if table is None:
            return None
        due = table.start_due_ms(core.speed)
        if due is None or due > now:
            return None
        hand_id = core.new_hand_id()
        with log_context(table_id=table_id, hand_id=hand_id):
            try:
                facts = table.start_hand(hand_id, now)
                core.commit(table, facts, now)
            except Unavailable:
                raise
            except Exception as exc:
                _start_failed(core, table_id, hand_id, exc)
                return None
            core.start_retries.succeeded(table_id)
            if any(isinstance(f, HandStarted) for f in facts):
                _log.info("hand started", hand_no=table.hand_no)
            else:  # a match table: the match started, or a game's stakes are asked first
                _log.info("match waits for its money", match_id=table.match_id)
                return None
        return hand_id


def _start_failed(core: TableCore, table_id: str, hand_id: str, error: Exception) -> None:
    reason = f"{type(error).__name__}: {error}"
    if table_id not in core.start_retries.failing:
        _log.error(
            "starting a hand failed; this table waits, the others go on",
            table_id=table_id,
            hand_id=hand_id,
            error=reason,
            exc_info=error,
        )
    core.start_retries.failed(table_id, reason, table_id=table_id, hand_id=hand_id)
    core.metrics.hand_start_failed()
