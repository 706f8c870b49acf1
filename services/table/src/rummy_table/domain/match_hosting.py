"""Match hosting: a match table's match (``TableOpened.match`` of a format other than
``single``), held in a :class:`~.match_host.MatchHost`.

A match starts when every seat is taken (and the start delay passed) and its entries are held,
each deal is one hand of the seats still in (eliminated and left seats stay seated, not dealt
in), the hand's end is recorded as the deal's result in the same transaction, a leave is the
seat's LeaveMatch (mid-deal also the variant's LeaveHand), a close mid-match aborts the match
after the deal being played; once it is over, a new match starts when every seat is taken
again. Rejoin offers and split requests stay open for the start delay after a deal (the next
deal is dealt then, and they lapse).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from rummy_game.money_purposes import REJOIN
from rummy_rules import events as ev
from rummy_rules.commands import Command, StartHand
from rummy_rules.errors import ErrorCode, RuleViolation
from rummy_rules.formats import MatchPhase, MatchState, deal_result
from rummy_rules.formats import messages as fm

from . import seating
from .errors import NotPermitted, WrongState
from .facts import MatchMoney, MatchMoneyRejected, MatchSettled
from .match_host import asks_money

if TYPE_CHECKING:
    from .table import Fact, Table


def match_step(table: Table, hand_id: str, at_ms: int) -> list[Fact]:
    """The match's next step: start a match (its first deal at once at a free table), deal
    the next deal (its hand at once unless a game's stakes are to be held first), or start
    the hand of a deal whose money is now held."""
    match = table.match
    assert match is not None
    if match.running and match.state.phase is MatchPhase.IN_DEAL:
        return deal_hand(table, match.deal_hand_id, match.state, at_ms)
    out: list[Fact] = []
    state = match.state
    if not match.running:
        seats = tuple(
            ev.SeatAccount(s, table.seats[s].account_id) for s in seating.eligible_seats(table)
        )
        match_id = f"{table.table_id}/{match.matches + 1}"
        started, state = match.decide(
            [fm.StartMatch(match_id=match_id, seats=seats, at_ms=at_ms)],
            match.fmt.initial_state(),
        )
        out += started
        if asks_money(started):
            return out  # the first deal waits for the entries to be held
    begun, state = match.decide([fm.BeginDeal(at_ms=at_ms)], state, hand_id=hand_id)
    out += begun
    if asks_money(begun):
        return out  # the game's stakes are held before its first hand is dealt
    return out + deal_hand(table, hand_id, state, at_ms)


def deal_hand(table: Table, hand_id: str, state: MatchState, at_ms: int) -> list[Fact]:
    """The HandStarted of the deal ``state`` is in (its seats; the format's rule set). Its
    dealer is the last hand's when the format keeps it (the last deal counted was drawn:
    gin's wall, "same dealer redeals") and that seat is dealt in; otherwise the button
    moves (:meth:`next_dealer`)."""
    assert table.match is not None
    accounts = {s.seat: s.account_id for s in state.seats}
    seats = state.deal_seats
    dealer = table.dealer_seat
    if dealer is None or dealer not in seats or not table.match.fmt.keeps_dealer(state):
        dealer = seating.next_dealer(table, seats)
    command = StartHand(
        hand_id=hand_id,
        seats=tuple(ev.SeatAccount(s, accounts[s]) for s in seats),
        dealer_seat=dealer,
        rule_set=table.match.deal_rules,
        at_ms=at_ms,
    )
    return table.started_facts(command)


def match_due_ms(table: Table, speed: float) -> int | None:
    match = table.match
    assert match is not None
    if table.closing or table.hand_running or match.awaiting:
        return None
    delay = int(table.start_delay_ms / speed)
    if not match.running:
        full = len(seating.eligible_seats(table)) == table.seat_count
        return table.last_change_ms + delay if full else None
    if match.state.phase is MatchPhase.IN_DEAL:
        return None if match.deal_hand_started else table.last_change_ms
    return table.last_change_ms + delay


def match_money(table: Table, answer: MatchMoney, at_ms: int) -> list[Fact]:
    """Record the ledger's answer about the current match's money. A rejected rejoin undoes
    that seat's rejoin (it stays eliminated; the match goes on). Any other rejection aborts
    the match (every hold released by the ledger) and the seat sits out until its player
    leaves and sits again; the others wait for a full table. Raises WrongState for
    an answer about another match, or one not awaited (already recorded)."""
    match = table.match
    rejected = isinstance(answer, MatchMoneyRejected)
    # Every rejection of the current match is recorded (several seats may be short; the
    # first aborts the match), a hold only while it is awaited.
    about_it = match is not None and (
        match.answers_this_match(answer) or (rejected and answer.match_id == match.match_id)
    )
    if match is None or not about_it:
        raise WrongState(f"no hold of match {answer.match_id!r} ({answer.purpose}) is awaited here")
    out: list[Fact] = [answer]
    if isinstance(answer, MatchMoneyRejected) and answer.purpose == REJOIN and match.running:
        out += match.try_decide([fm.RejoinNotHeld(seat=answer.seat, at_ms=at_ms)])
    elif isinstance(answer, MatchMoneyRejected) and match.running:
        reason = f"seat {answer.seat} could not cover its {answer.purpose}"
        out += match.decide([fm.AbortMatch(reason=reason, at_ms=at_ms)])[0]
    return out


def match_settled(table: Table, settled: MatchSettled) -> list[Fact]:
    """Record the ledger's MatchSettled (what it posted for the match, or a game of it) on
    the table's stream, where the match's replay checks it against MatchEnded. Raises
    WrongState unless it settles this table's current (or last) match: a game of
    it (``game_no`` > 0, game to N) any time, the match itself once it is over. The input is
    recorded once (a redelivery is answered from the table's answers)."""
    match = table.match
    ours = match is not None and settled.match_id == match.match_id
    if match is None or not ours or (settled.game_no == 0 and match.running):
        raise WrongState(
            f"no settlement of match {settled.match_id!r} (game {settled.game_no}) is "
            "awaited at this table"
        )
    return [settled]


def match_command(
    table: Table, account_id: str, make: Callable[[int, int], Command], at_ms: int
) -> list[Fact]:
    """A player's match command (AcceptRejoin, DeclineRejoin, RequestSplit: ``make(seat,
    at_ms)`` for the account's seat in the match). Raises WrongState (not a match table, no
    match running), NotPermitted (not a seat of the match), RuleViolation (the format
    refuses it: nothing changes)."""
    match = table.match
    if match is None:
        raise WrongState("this table hosts no match (a points table)")
    if not match.running:
        raise WrongState("no match is being played at this table")
    seat = table.seat_of(account_id)
    if seat is None or match_seat_account(table, seat) != account_id:
        raise NotPermitted("you do not play this table's match")
    command = make(seat, at_ms)
    if isinstance(command, fm.AcceptRejoin) and match.awaiting:
        raise RuleViolation(ErrorCode.WRONG_PHASE, "the match's money is not held yet")
    return [*match.decide([command])[0]]


def match_seat_account(table: Table, seat: int) -> str:
    assert table.match is not None
    return next((s.account_id for s in table.match.state.seats if s.seat == seat), "")


def record_deal(table: Table, decided: Sequence[Fact], ended: Fact, at_ms: int) -> list[Fact]:
    match = table.match
    if match is None or table.hand_started is None or table.hand_id != match.deal_hand_id:
        return []
    state = match.state_after(decided)
    if state.phase is not MatchPhase.IN_DEAL:
        return []
    hand_ended = table.hand_end(ended, at_ms)
    if isinstance(hand_ended, ev.HandAborted):
        command: Command = fm.RecordDealAborted(reason=hand_ended.reason, at_ms=at_ms)
    else:
        command = fm.RecordDeal(
            result=deal_result(hand_ended),
            at_ms=at_ms,
            most_points=table.variant.max_loss_points(match.deal_rules),
        )
    return [*match.decide([command], state)[0]]


def abort_match(table: Table, before: Sequence[Fact], reason: str, at_ms: int) -> list[Fact]:
    """AbortMatch's facts when the match (after ``before``) is running, else none."""
    match = table.match
    if match is None:
        return []
    state = match.state_after(before)
    if state.phase is MatchPhase.NOT_STARTED or state.is_over:
        return []
    return [*match.decide([fm.AbortMatch(reason=reason, at_ms=at_ms)], state)[0]]
