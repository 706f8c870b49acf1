"""Closing and aborts: an operator's CloseTable, and a hand (or match) aborted because another
service did not answer in time, or because the ledger could not hold a seat's stake.

Closing: from TableClosing on no hand starts and no seat is taken; a hand being played plays
out, and the facts that end it are followed (in the same transaction) by a TablePlayerLeft for
every seat still taken and TableClosed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rummy_rules.commands import AbortHand

from . import match_host, match_hosting
from .errors import WrongState
from .facts import PlayerLeft, StakeRejected, TableClosed, TableClosing

if TYPE_CHECKING:
    from .table import Fact, Table

#: The reason of a match aborted by an operator's CloseTable.
_CLOSED_MID_MATCH = "the table was closed by an operator mid-match"
#: A match whose deals were voided this many times in a row (the last one by a service gone past
#: its deadline) is aborted: no redeal is possible within the deadline.
MAX_DEALS_VOIDED_IN_A_ROW = 2
#: The other services' answers a hand's start waits for, by the names ``Table.hand_inputs``
#: records them under (the full names of their payloads on the log; a snapshot keeps these
#: names).
STAKES_RESERVED = "rummy.ledger.v1.StakesReserved"
SEED_COMMITTED = "rummy.fairness.v1.SeedCommitted"
SEEDS_LOCKED = "rummy.table.v1.SeedsLocked"
HAND_DEALT = "rummy.dealer.v1.HandDealt"


def close(table: Table, operator_account_id: str, reason: str, at_ms: int = 0) -> list[Fact]:
    """TableClosing by ``operator_account_id``; when no hand is being played, also every
    seat's PlayerLeft and TableClosed. Raises WrongState if the table is
    already closing or closed."""
    if table.closing:
        raise WrongState(f"table {table.table_id} is already {table.state_name}")
    out: list[Fact] = [TableClosing(operator_account_id=operator_account_id, reason=reason)]
    if not table.hand_running:
        out += match_hosting.abort_match(table, out, _CLOSED_MID_MATCH, at_ms)
        out += stand_up_and_close(table, out)
    return out


def follow_up(table: Table, decided: Sequence[Fact], at_ms: int) -> list[Fact]:
    """What follows ``decided`` (about to be appended) in the same transaction: at a match
    table, the deal's result when they end its hand (RecordDeal; an aborted hand voids the
    deal); at a closing table whose hand they end, the match aborted (when it is not over),
    every seat still taken stood up and the table closed; else nothing."""
    ended = next((p for p in decided if table.ends_hand(p)), None)
    if ended is None:
        return []
    out = match_hosting.record_deal(table, decided, ended, at_ms)
    if table.closing and not table.closed:
        before = [*decided, *out]
        out += match_hosting.abort_match(table, before, _CLOSED_MID_MATCH, at_ms)
        out += stand_up_and_close(table, [*before, *out])
    return out


def stand_up_and_close(table: Table, before: Sequence[Fact]) -> list[Fact]:
    left = {p.seat for p in before if isinstance(p, PlayerLeft)}
    out: list[Fact] = [
        PlayerLeft(seat=seat, account_id=info.account_id, during_hand=False)
        for seat, info in sorted(table.seats.items())
        if seat not in left
    ]
    return [*out, TableClosed()]


def overdue_reason(table: Table, now_ms: int, wait_ms: int, wait_text: str) -> str | None:
    """Why the current hand (or match) is to be aborted at ``now_ms``: the hand runs,
    nothing in it is timed by the clock (the variant's ``deadline`` is None: it waits for
    another service's answer, the ledger's stakes, fairness's commitment or the dealer's
    deal) and its last fact is ``wait_ms`` (ms) old or older. The reason names what is
    missing and ends "within ``wait_text``" (e.g. "the dealer did not deal within 60 s").
    At a match table with no hand running: the money the match awaits (entries, a rejoin,
    a game's stake) was asked for ``wait_ms`` ago or more. None when nothing is overdue."""
    if not table.hand_running:
        return money_overdue(table, now_ms, wait_ms, wait_text)
    if table.variant.deadline(table.hand) is not None:
        return None
    if now_ms - table.hand_since_ms < wait_ms:
        return None
    return f"{missing_answer(table)} within {wait_text}"


def money_overdue(table: Table, now_ms: int, wait_ms: int, wait_text: str) -> str | None:
    match = table.match
    since = match.awaiting_since_ms() if match is not None and match.running else None
    if match is None or since is None or now_ms - since < wait_ms:
        return None
    asked = " and ".join(sorted({purpose for purpose, _ in match.awaiting}))
    return f"no deal could start: the ledger did not hold the {asked} within {wait_text}"


def missing_answer(table: Table) -> str:
    got = table.hand_inputs
    if SEEDS_LOCKED in got and HAND_DEALT not in got:
        return "the dealer did not deal"
    missing = [
        text
        for name, text in (
            (STAKES_RESERVED, "the ledger did not reserve the stakes"),
            (SEED_COMMITTED, "fairness did not commit the seed"),
        )
        if name not in got
    ]
    if missing:
        return " and ".join(missing)
    phase = table.variant.view(table.hand, -1).phase
    return f"no service answered the hand waiting in phase {phase}"


def abort_overdue(table: Table, reason: str, at_ms: int) -> list[Fact]:
    """The current hand aborted for ``reason`` (a service gone past its deadline, see
    :meth:`overdue_reason`): every reservation is released, the seed revealed, nothing else
    moves. At a match table the deal is voided (replayed with the same seats); when that
    makes :data:`MAX_DEALS_VOIDED_IN_A_ROW` voided deals in a row, no redeal is possible
    within the deadline and the match is aborted too (every entry released). Raises
    WrongState if no hand runs, RuleViolation if the variant refuses the abort.

    With no hand running, the match whose money the ledger did not hold in time is
    aborted (no deal can start: every entry released)."""
    if not table.hand_running:
        return match_hosting.abort_match(table, [], reason, at_ms)
    out = table.hand_commands([AbortHand(reason=reason, at_ms=at_ms)])
    ended = next((p for p in out if table.aborts_hand(p)), None)
    match = table.match
    if ended is None or match is None:
        return out
    out += match_hosting.record_deal(table, out, ended, at_ms)
    voided = match_host.deals_voided(out)
    if voided and match.deals_voided_in_a_row() + voided >= MAX_DEALS_VOIDED_IN_A_ROW:
        why = f"no redeal was possible within the deadline ({reason})"
        out += match_hosting.abort_match(table, out, why, at_ms)
    return out


def stake_rejected(table: Table, rejected: StakeRejected, at_ms: int) -> list[Fact]:
    """The ledger could not hold a seat's reservation: record it (the seat sits out of later
    hands) and abort the hand before the deal (every reservation is released, nothing else
    moves); the next hand starts without that seat."""
    out: list[Fact] = [rejected]
    if table.hand_running:
        reason = f"seat {rejected.seat} could not cover the reservation"
        out += table.hand_commands([AbortHand(reason=reason, at_ms=at_ms)])
    return out
