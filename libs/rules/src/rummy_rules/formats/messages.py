"""A match's commands and events, and the generic result of one deal a format consumes.

Frozen dataclasses, registered with ``rummy_rules.json_form`` like a hand's. Seats are table seat
numbers; points are ints; money is in hundredths of a House Token; ``at_ms`` is the host's clock
(ms since the Unix epoch), copied into events, never read here. ``docs/rules/formats.md``.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import json_form
from ..commands import Command
from ..events import Event, HandEnded, SeatAccount
from .money import MatchSettlement

#: The outcome words a variant's ``SeatResult`` uses for a seat that left mid-deal and for a seat
#: dropped on missed turns (Indian points and the toy variant use these), and the word every
#: seat of a drawn deal has (no winner, no points: gin's wall).
LEFT_OUTCOME = "left"
TIMED_OUT_OUTCOME = "timed_out"
DRAWN_OUTCOME = "drawn"


@dataclass(frozen=True)
class DealRules:
    """What a format asks of each deal, in the format's own terms (no variant's): its ``kind``
    (a key of ``rummy_rules.formats.FORMAT_KINDS``: ``pool``, ``deals``, ``best-of``) and its
    ``target`` (a pool's 101 or 201; 0 for a format without one). The variant answers with its
    rule set for such a deal (``Variant.deal_rule_set``: Indian points' drops, wrong declare and
    cap for that format, ``rummy_rules.indian.rules``), or refuses a format, or a seat count, it
    plays no deals of (RuleSetError). ``docs/rules/formats.md#deal-rules``."""

    kind: str
    target: int = 0


@json_form.tag("match.DealResult")
@dataclass(frozen=True)
class DealResult:
    """What a format reads of one deal's ``HandEnded`` (generic fields only).

    - ``points``: ``(seat, points charged)`` for every seat dealt in, ascending seats;
    - ``winners``: the deal's winner(s), ascending (charged 0);
    - ``left``: seats that left mid-deal (scored by the variant as its middle drop);
    - ``timed_out``: seats dropped on missed turns;
    - ``scores``: ``(seat, signed score)`` for every seat dealt in, ascending seats, in a game
      where every seat scores every deal (``SeatResult.score``: Rummy 500); what a format whose
      seats each add their own score reads (``rummy_rules.formats.race_to``); empty otherwise.

    A **drawn** deal (gin's wall: no score, the same dealer deals again) has no winners and
    charges every seat 0; only a format that takes drawn deals (game to N, Hollywood) accepts it.
    """

    points: tuple[tuple[int, int], ...]
    winners: tuple[int, ...]
    left: frozenset[int] = frozenset()
    timed_out: frozenset[int] = frozenset()
    scores: tuple[tuple[int, int], ...] = ()

    @property
    def seats(self) -> tuple[int, ...]:
        return tuple(seat for seat, _ in self.points)

    @property
    def drawn(self) -> bool:
        """No winner: a drawn deal (every seat must then be charged 0)."""
        return not self.winners


def deal_result(
    hand: HandEnded,
    *,
    left_outcome: str = LEFT_OUTCOME,
    timed_out_outcome: str = TIMED_OUT_OUTCOME,
    drawn_outcome: str = DRAWN_OUTCOME,
) -> DealResult:
    """The :class:`DealResult` of a variant's ``HandEnded``: each seat's points, the winners
    (``winner_seat`` and the settlement's co-winners) and the seats whose outcome word is
    ``left_outcome`` / ``timed_out_outcome``, and each seat's signed ``score`` when any is
    non-zero (none: ``scores`` empty, every seat's score read as 0). When every seat's outcome
    is ``drawn_outcome`` the deal is drawn: no winners (whatever seat the hand's all-zero
    settlement names)."""
    results = sorted(hand.results, key=lambda r: r.seat)
    if results and all(r.outcome == drawn_outcome for r in results):
        return DealResult(points=tuple((r.seat, r.points) for r in results), winners=())
    return DealResult(
        points=tuple((r.seat, r.points) for r in results),
        winners=hand.settlement.winner_seats,
        left=frozenset(r.seat for r in results if r.outcome == left_outcome),
        timed_out=frozenset(r.seat for r in results if r.outcome == timed_out_outcome),
        scores=tuple((r.seat, r.score) for r in results) if any(r.score for r in results) else (),
    )


# --------------------------------------------------------------------------------------------------
# Commands
# --------------------------------------------------------------------------------------------------


@json_form.tag("match.StartMatch")
@dataclass(frozen=True, kw_only=True)
class StartMatch(Command):
    """Start match ``match_id`` with every seat taken (ascending seats, one account each)."""

    match_id: str
    seats: tuple[SeatAccount, ...]
    at_ms: int


@json_form.tag("match.BeginDeal")
@dataclass(frozen=True, kw_only=True)
class BeginDeal(Command):
    """Deal the next deal (between deals): open rejoin offers and split requests lapse."""

    at_ms: int


@json_form.tag("match.RecordDeal")
@dataclass(frozen=True, kw_only=True)
class RecordDeal(Command):
    """The deal being played ended with ``result``. ``most_points``: the most one seat can be
    charged in the deal (points: its rule set's ``Variant.max_loss_points``, which the host
    knows); a result charging more is refused. None: no bound given."""

    result: DealResult
    at_ms: int
    most_points: int | None = None


@json_form.tag("match.RecordDealAborted")
@dataclass(frozen=True, kw_only=True)
class RecordDealAborted(Command):
    """The deal being played was aborted (a service gone past a deadline): it is void."""

    reason: str
    at_ms: int


@json_form.tag("match.LeaveMatch")
@dataclass(frozen=True, kw_only=True)
class LeaveMatch(Command):
    """``seat`` leaves the match (between deals, or mid-deal: the variant scores that deal)."""

    seat: int
    at_ms: int


@json_form.tag("match.AcceptRejoin")
@dataclass(frozen=True, kw_only=True)
class AcceptRejoin(Command):
    """``seat`` takes its rejoin offer (pool option): one more entry, back in the match."""

    seat: int
    at_ms: int


@json_form.tag("match.DeclineRejoin")
@dataclass(frozen=True, kw_only=True)
class DeclineRejoin(Command):
    seat: int
    at_ms: int


@json_form.tag("match.RejoinNotHeld")
@dataclass(frozen=True, kw_only=True)
class RejoinNotHeld(Command):
    """The ledger could not hold ``seat``'s rejoin entry: the rejoin is undone (the seat stays
    eliminated), the match goes on."""

    seat: int
    at_ms: int


@json_form.tag("match.RequestSplit")
@dataclass(frozen=True, kw_only=True)
class RequestSplit(Command):
    """``seat`` asks to split the pool (pool option, between deals)."""

    seat: int
    at_ms: int


@json_form.tag("match.AbortMatch")
@dataclass(frozen=True, kw_only=True)
class AbortMatch(Command):
    """The match cannot go on (no redeal within the abort deadline, or an operator closed the
    table mid-match: ``reason`` says which). Every hold is released."""

    reason: str
    at_ms: int


# --------------------------------------------------------------------------------------------------
# Events
# --------------------------------------------------------------------------------------------------


class MatchEvent(Event):
    """Marker base class of a match's events."""

    __slots__ = ()


@json_form.tag("match.MatchStarted")
@dataclass(frozen=True, kw_only=True)
class MatchStarted(MatchEvent):
    """The match began with these seats, under ``match_format`` (its name, e.g. ``pool-101``)."""

    match_id: str
    match_format: str
    seats: tuple[SeatAccount, ...]
    at_ms: int


@json_form.tag("match.MoneyReserved")
@dataclass(frozen=True, kw_only=True)
class MoneyReserved(MatchEvent):
    """``amount_hundredths`` is reserved from ``seat``: ``purpose`` ``entry``, ``rejoin`` or
    ``game``."""

    seat: int
    amount_hundredths: int
    purpose: str


@json_form.tag("match.GameStarted")
@dataclass(frozen=True, kw_only=True)
class GameStarted(MatchEvent):
    """Game ``game_no`` (1, 2, ...) of a game-to-N match began with these seats."""

    game_no: int
    seats: tuple[int, ...]


@json_form.tag("match.DealStarted")
@dataclass(frozen=True, kw_only=True)
class DealStarted(MatchEvent):
    """Deal ``deal_no`` (1, 2, ...; a voided deal is replayed under its number) is dealt to
    ``seats``; ``tie_break`` when it is played among tied seats only."""

    deal_no: int
    seats: tuple[int, ...]
    tie_break: bool
    at_ms: int


@json_form.tag("match.DealScored")
@dataclass(frozen=True, kw_only=True)
class DealScored(MatchEvent):
    """Deal ``deal_no`` counted: the points it charged, its winners, and the standings after it
    (``totals``: running points, or game totals; ``chips``: deals only; empty if unused)."""

    deal_no: int
    points: tuple[tuple[int, int], ...]
    winners: tuple[int, ...]
    totals: tuple[tuple[int, int], ...]
    chips: tuple[tuple[int, int], ...]
    timed_out: tuple[int, ...]


@json_form.tag("match.TieBreakDue")
@dataclass(frozen=True, kw_only=True)
class TieBreakDue(MatchEvent):
    """The top of the standings is tied: the next deal is played among ``seats`` only."""

    seats: tuple[int, ...]


@json_form.tag("match.DealVoided")
@dataclass(frozen=True, kw_only=True)
class DealVoided(MatchEvent):
    """Deal ``deal_no`` was aborted: void, replayed with the same seats; holds stay."""

    deal_no: int
    reason: str


@json_form.tag("match.SeatEliminated")
@dataclass(frozen=True, kw_only=True)
class SeatEliminated(MatchEvent):
    """``seat``'s total reached the pool's target: out of the match."""

    seat: int
    total: int


@json_form.tag("match.SeatLeft")
@dataclass(frozen=True, kw_only=True)
class SeatLeft(MatchEvent):
    """``seat`` left the match (``mid_deal``: during a deal, which still scores it); it forfeits
    what it holds and is out."""

    seat: int
    mid_deal: bool


@json_form.tag("match.SeatForfeitedGame")
@dataclass(frozen=True, kw_only=True)
class SeatForfeitedGame(MatchEvent):
    """``seat`` lost the current game at the cap (missed turns, game to N option)."""

    seat: int


@json_form.tag("match.RejoinOffered")
@dataclass(frozen=True, kw_only=True)
class RejoinOffered(MatchEvent):
    """Eliminated ``seat`` may buy in again for ``entry_hundredths`` and come back at ``total``."""

    seat: int
    total: int
    entry_hundredths: int


@json_form.tag("match.Rejoined")
@dataclass(frozen=True, kw_only=True)
class Rejoined(MatchEvent):
    """``seat`` is back in at ``total`` (its new entry follows as MoneyReserved)."""

    seat: int
    total: int


@json_form.tag("match.RejoinDeclined")
@dataclass(frozen=True, kw_only=True)
class RejoinDeclined(MatchEvent):
    seat: int


@json_form.tag("match.RejoinRefused")
@dataclass(frozen=True, kw_only=True)
class RejoinRefused(MatchEvent):
    """``seat``'s rejoin is undone (its entry could not be held): eliminated again at ``total``
    (its total before the rejoin), holding ``entry_hundredths`` less."""

    seat: int
    total: int
    entry_hundredths: int


@json_form.tag("match.SplitRequested")
@dataclass(frozen=True, kw_only=True)
class SplitRequested(MatchEvent):
    seat: int


@json_form.tag("match.GameEnded")
@dataclass(frozen=True, kw_only=True)
class GameEnded(MatchEvent):
    """Game ``game_no`` ended, won by ``winner`` with these game totals; its stakes settled."""

    game_no: int
    winner: int
    totals: tuple[tuple[int, int], ...]
    settlement: MatchSettlement


@json_form.tag("match.MatchEnded")
@dataclass(frozen=True, kw_only=True)
class MatchEnded(MatchEvent):
    """The match is over: ``winners`` (one, or every seat of a split), ``reason`` (``last_left``,
    ``split``, ``most_chips``, ``lowest_total``, ``games_played``, ``hand_ended``), and the
    entry-fee money (None where money moved with each hand or game)."""

    winners: tuple[int, ...]
    reason: str
    settlement: MatchSettlement | None
    at_ms: int


@json_form.tag("match.MatchAborted")
@dataclass(frozen=True, kw_only=True)
class MatchAborted(MatchEvent):
    """The match was aborted or closed: every hold in ``released`` (seat, cents) goes back."""

    reason: str
    released: tuple[tuple[int, int], ...]
    at_ms: int


json_form.register(
    DealResult,
    StartMatch,
    BeginDeal,
    RecordDeal,
    RecordDealAborted,
    LeaveMatch,
    AcceptRejoin,
    DeclineRejoin,
    RejoinNotHeld,
    RequestSplit,
    AbortMatch,
    MatchStarted,
    MoneyReserved,
    GameStarted,
    DealStarted,
    DealScored,
    TieBreakDue,
    DealVoided,
    SeatEliminated,
    SeatLeft,
    SeatForfeitedGame,
    RejoinOffered,
    Rejoined,
    RejoinDeclined,
    RejoinRefused,
    SplitRequested,
    GameEnded,
    MatchEnded,
    MatchAborted,
)
