"""The gin family behind the variant interface: :data:`GIN` (``rummy_rules.variant.Variant``).

The hand's life is the one every variant follows (``docs/rules/hand-flow.md``): ``HandStarted``
(two seats, the dealer, the rule set), the ledger's ``StakeReserved`` for each seat and the
fairness service's ``SeedCommitted``, the seed window (``SeedWindowOpened``, client seeds,
``SeedsLocked``), the dealer's ``HandDealt`` (ten cards each, no cut, the upcard as the first
open card, the stock), then turns (``TurnStarted`` with the clock's deadline) played by the gin
hand's state machine (``rummy_rules.gin.hand``: the first-turn offer, draws, discards, knock,
gin, big gin, the wall, timeouts), and ``HandEnded``: every seat's outcome word and points and
the settlement. A match format reads it as a ``DealResult`` (``formats.messages.deal_result``):
the loser is charged the hand's score, the wall is a drawn deal (both seats ``drawn``, charged
0), a seat that forfeits on missed turns is ``timed_out`` and one that leaves is ``left`` (both
charged 0: the format takes the game from them at the cap).

Seat outcomes (``SeatResult.outcome``): the hand's winner ``knock``, ``undercut``, ``gin`` or
``big_gin``; its loser ``lost``; at the wall both ``drawn``; ``timed_out`` / ``left`` and the
other seat ``won``. ``docs/rules/gin.md``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from .. import json_form, lifecycle
from ..bot import VariantBot
from ..cards import Card
from ..commands import (
    Command,
    Deal,
    LeaveHand,
    TurnTimeout,
)
from ..events import (
    CardDrawn,
    Event,
    HandDealt,
    HandEnded,
    SeatAccount,
    SeatResult,
)
from ..formats.messages import DRAWN_OUTCOME, LEFT_OUTCOME, TIMED_OUT_OUTCOME, DealRules
from ..lifecycle import HandPhase
from ..lifecycle import require_phase as _require
from ..rules import RuleSet, RuleSetError, VariantOptions
from ..settlement import settle
from ..shuffle import deal_order
from ..variant import Variant
from ..view import PlayerView, SeatView
from . import hand
from .arrangement import card_value
from .hand import (
    GinHand,
    GinHandScored,
    GinHandStarted,
    GinKnocked,
    GinSeatForfeited,
    GinWallReached,
)
from .rules import (
    GIN_RULES_VERSION,
    GIN_RUMMY_NAME,
    GIN_VARIANT,
    OKLAHOMA_GIN_NAME,
    GinOptions,
    gin_options,
    gin_rule_set,
)
from .scoring import HandRules

WON_OUTCOME = "won"
LOST_OUTCOME = "lost"


GinPhase = HandPhase  # the hand's phases are every variant's (``rummy_rules.lifecycle``)


@json_form.tag("gin.State")
@dataclass(frozen=True)
class GinState(lifecycle.SeatedHand):
    """One gin hand around its play: the hand's life (``lifecycle.SeatedHand``: the seats and
    their accounts, the stakes recorded, the seed commitment, window and client seeds, the
    clock's deadline of the turn on, the closing event) and the play itself (``play``, the gin
    hand's state machine, from the deal)."""

    play: GinHand = GinHand()

    @property
    def options(self) -> GinOptions:
        assert self.rule_set is not None
        return gin_options(self.rule_set)


json_form.register(GinState, GinHand, HandRules)


def _seated(state: GinState, seat: int) -> SeatAccount:
    lifecycle.require_seated(state, seat)
    found = state.account(seat)
    assert found is not None
    return found


# --- before the deal ----------------------------------------------------------------------------


def _deal(state: GinState, c: Deal) -> list[Event]:
    lifecycle.check_deal(state, c, GinOptions.deal_shape)
    hands = tuple(sorted(c.hands, key=lambda h: h.seat))
    dealt = HandDealt(
        hands=hands, wild_cut=None, first_open=c.first_open, stock=c.stock, stock_count=len(c.stock)
    )
    return [dealt, *_next(apply(state, dealt), c.at_ms)]


# --- play ---------------------------------------------------------------------------------------


def _ended(state: GinState, at_ms: int) -> HandEnded:
    """The HandEnded of a hand whose play has ended (``state.play.ending``)."""
    assert state.rule_set is not None
    play, ending = state.play, state.play.ending
    assert ending is not None
    seats = [s.seat for s in state.seats]

    def line(seat: int, outcome: str, points: int, knocked: GinKnocked | None = None) -> SeatResult:
        account = _seated(state, seat).account_id
        cards = play.hand_of(seat)
        if isinstance(ending, GinHandScored) and seat == ending.defender_seat:
            return SeatResult(
                seat,
                account,
                outcome,
                points,
                ending.defender_cards,
                ending.defender_melds,
                ending.defender_deadwood_cards,
            )
        if knocked is not None and seat == knocked.seat:
            return SeatResult(
                seat, account, outcome, points, cards, knocked.melds, knocked.deadwood_cards
            )
        return SeatResult(seat, account, outcome, points, cards, (), ())

    if isinstance(ending, GinHandScored):
        winner = ending.winner_seat
        loser = next(s for s in seats if s != winner)
        outcomes = {winner: ending.outcome, loser: LOST_OUTCOME}
        points = {winner: 0, loser: ending.points}
    elif isinstance(ending, GinWallReached):
        winner = play.dealer_seat
        outcomes = {s: DRAWN_OUTCOME for s in seats}
        points = {s: 0 for s in seats}
    else:
        assert isinstance(ending, GinSeatForfeited)
        winner = next(s for s in seats if s != ending.seat)
        outcomes = {winner: WON_OUTCOME, ending.seat: TIMED_OUT_OUTCOME}
        points = {s: 0 for s in seats}
    results = tuple(line(s, outcomes[s], points[s], play.knocked) for s in seats)
    return HandEnded(
        winner_seat=winner,
        results=results,
        settlement=settle(state.rule_set, winner, points),
        at_ms=at_ms,
    )


def _next(state: GinState, at_ms: int) -> list[Event]:
    """What follows the play's events just applied: the HandEnded once the play has ended, the
    next TurnStarted when the turn moved on, else nothing."""
    play = state.play
    if play.ending is not None:
        return [_ended(state, at_ms)]
    assert state.rule_set is not None and play.turn_seat is not None
    return [lifecycle.turn_started(state.rule_set, play.turn_seat, play.turn_no, at_ms)]


def _play(state: GinState, c: Command) -> list[Event]:
    if isinstance(c, TurnTimeout) and state.phase is not GinPhase.PLAYING:
        if lifecycle.closes_seed_window(state, c):
            return [lifecycle.seeds_locked(state)]
        return []  # stale
    _require(state, GinPhase.PLAYING)
    events = list(hand.decide(state.play, c))
    if not events:
        return []
    after = _fold(events, state)
    if after.play.ending is None and after.play.turn_no == state.play.turn_no:
        return events  # a draw: the same turn goes on
    return [*events, *_next(after, getattr(c, "at_ms", 0))]


def _leave(state: GinState, c: LeaveHand) -> list[Event]:
    aborted = lifecycle.leave_before_deal(state, c)
    if aborted is not None:
        return aborted
    _require(state, GinPhase.PLAYING)
    assert state.rule_set is not None
    winner = next(s.seat for s in state.seats if s.seat != c.seat)
    points = {s.seat: 0 for s in state.seats}
    results = tuple(
        SeatResult(
            s.seat,
            s.account_id,
            LEFT_OUTCOME if s.seat == c.seat else WON_OUTCOME,
            0,
            state.play.hand_of(s.seat),
            (),
            (),
        )
        for s in state.seats
    )
    return [
        HandEnded(
            winner_seat=winner,
            results=results,
            settlement=settle(state.rule_set, winner, points),
            at_ms=c.at_ms,
        )
    ]


def decide(state: GinState, command: Command) -> tuple[Event, ...]:
    """The events ``command`` causes in ``state``; ``()`` for a stale timeout. Raises
    RuleViolation."""
    lived = lifecycle.decide_before_play(state, command, GIN.check_rule_set, apply)
    if lived is not None:
        return lived
    if isinstance(command, Deal):
        return tuple(_deal(state, command))
    if isinstance(command, LeaveHand):
        return tuple(_leave(state, command))
    return tuple(_play(state, command))


def legal_commands(state: GinState, seat: int) -> tuple[Command, ...]:
    """The moves ``seat`` may make now (the gin hand's ``legal_commands``); none outside play."""
    if state.phase is not GinPhase.PLAYING:
        return ()
    return hand.legal_commands(state.play, seat)


# --- apply --------------------------------------------------------------------------------------


def apply(state: GinState, event: Event) -> GinState:
    """The state after ``event`` (never raises on a history ``decide`` produced)."""
    lived = lifecycle.apply_seated(state, event)
    if lived is not None:
        return lived
    if isinstance(event, HandDealt):
        assert state.rule_set is not None
        order = deal_order([s.seat for s in state.seats], state.dealer_seat)
        by_seat = {h.seat: h.cards for h in event.hands}
        seats = (order[0], order[1])
        started = GinHandStarted(
            hand_id=state.hand_id,
            seats=seats,
            dealer_seat=state.dealer_seat,
            hands=(by_seat[seats[0]], by_seat[seats[1]]),
            upcard=event.first_open,
            stock=event.stock,
            stock_count=len(event.stock),
            rules=state.options.hand_rules(event.first_open),
            max_missed_turns=(
                state.rule_set.max_missed_turns if state.options.missed_turns_forfeit else 0
            ),
            at_ms=0,
        )
        return replace(state, phase=GinPhase.PLAYING, play=hand.apply(state.play, started))
    return replace(state, play=hand.apply(state.play, event))


def _fold(events: Iterable[Event], state: GinState) -> GinState:
    for event in events:
        state = apply(state, event)
    return state


# --- views --------------------------------------------------------------------------------------


def _status(state: GinState, seat: int) -> str:
    if state.phase in (GinPhase.NOT_STARTED, GinPhase.PREPARING, GinPhase.SEED_WINDOW):
        return "waiting"
    if state.phase is GinPhase.AWAITING_DEAL:
        return "waiting"
    if isinstance(state.result, HandEnded):
        return next(r.outcome for r in state.result.results if r.seat == seat)
    knocked = state.play.knocked
    if knocked is not None and knocked.seat == seat:
        return "knocked"
    return "playing"


def player_view(state: GinState, seat: int) -> PlayerView:
    """What ``seat`` may see (any other number: a spectator's, with no cards of its own): its own
    cards, the discard pile, each seat's card count, the stock's size, the turn; once the hand
    has ended, ``result`` holds both hands and their arrangements. Never the other hand or the
    stock order before that (``docs/rules/gin.md#views``). Once dealt, ``variant_view`` is the
    gin hand's own view (:func:`gin_view`: the knock limit, the doubling, the knocker's melds
    and deadwood once it has knocked, the score with the lay-offs at the end)."""
    play = state.play
    dealt = (
        state.phase in (GinPhase.PLAYING, GinPhase.ENDED, GinPhase.ABORTED)
        and play.phase is not None
    )
    mine = play.hand_of(seat) if dealt and seat in play.seats else ()
    playing = state.phase is GinPhase.PLAYING
    return PlayerView(
        hand_id=state.hand_id,
        seat=seat,
        phase=state.phase.value,
        cards=mine,
        discard_pile=play.pile,
        stock_count=len(play.stock),
        wild_cut=None,
        wild_rank=None,
        seats=tuple(
            SeatView(
                s.seat,
                s.account_id,
                len(play.hand_of(s.seat)) if dealt else 0,
                _status(state, s.seat),
                play.misses[play.position(s.seat)] if dealt else 0,
            )
            for s in state.seats
        ),
        turn_seat=play.turn_seat if playing else None,
        turn_no=play.turn_no,
        turn_deadline_ms=state.turn_deadline_ms if playing else None,
        has_drawn=play.phase is hand.Phase.DISCARD,
        result=state.result,
        commitment=state.commitment,
        variant_view=gin_view(state, seat) if dealt else None,
    )


def gin_view(state: GinState, seat: int) -> hand.GinView:
    """The gin hand's own view of ``seat`` (``rummy_rules.gin.hand.view``): the knock limit, the
    doubling, the knocker's melds and deadwood after a knock, the score at the end."""
    return hand.view(state.play, seat)


def redact(event: Event, seat: int) -> Event:
    """The copy of ``event`` that ``seat`` may see: the other hand and the stock of the deal, a
    stock card the other seat drew, the face-down knock card (until the result) removed."""
    from ..events import redact as generic

    if isinstance(event, GinKnocked | CardDrawn):
        return hand.redact(event, seat)
    return generic(event, seat)


class Gin(lifecycle.LifecycleVariant[GinState]):
    """Gin Rummy, Oklahoma Gin and Hollywood Gin's hands (one variant, see
    ``rummy_rules.gin.rules``). Stateless: every method is a pure function of its inputs."""

    name = GIN_VARIANT
    rules_versions = frozenset(
        {f"{GIN_RUMMY_NAME}/{GIN_RULES_VERSION}", f"{OKLAHOMA_GIN_NAME}/{GIN_RULES_VERSION}"}
    )
    options_type: type[VariantOptions] = GinOptions
    deal_shape = GinOptions.deal_shape

    def __init__(self) -> None:
        super().__init__(
            initial_state=GinState,
            decide=decide,
            legal_commands=legal_commands,
            apply=apply,
            view=player_view,
            redact=redact,
            turn_no=lambda state: state.play.turn_no,
        )

    @property
    def bot(self) -> VariantBot | None:
        from .bot import GIN_BOT  # the strategy reads this package's hand

        return GIN_BOT

    def check_rule_set(self, rule_set: RuleSet) -> None:
        """As every variant's, and the rule set's name says whether it is Oklahoma's."""
        super().check_rule_set(rule_set)
        oklahoma = rule_set.name == OKLAHOMA_GIN_NAME
        if gin_options(rule_set).oklahoma != oklahoma:
            raise RuleSetError(
                "oklahoma", f"{oklahoma} under rule set {rule_set.name!r}", not oklahoma
            )

    def house_rule_set(
        self, seats: int, point_value_hundredths: int, commission_bps: int
    ) -> RuleSet:
        """Gin Rummy (``gin-rummy/1``) at two seats. Raises RuleSetError for another seat
        count."""
        if seats != 2:
            raise RuleSetError("seats", "2", seats, "gin is for two players")
        return gin_rule_set(point_value_hundredths, commission_bps)

    def deal_rule_set(self, table_rule_set: RuleSet, deal_rules: DealRules) -> RuleSet:
        """A gin table's rule set, free (the format holds the money): a gin hand has no drops,
        wrong declares or cap, so ``deal_rules`` changes nothing of it."""
        return self.free_rule_set(table_rule_set)

    def deadwood_points(
        self, rule_set: RuleSet, wild_cut: Card | None, deadwood: Sequence[Card]
    ) -> int:
        """The cards' values (``docs/rules/gin.md#deck``, Oklahoma's
        alike): ace 1, jack, queen and king 10, others their face value; ``wild_cut`` is
        None (gin cuts none)."""
        self.check_rule_set(rule_set)
        return sum(map(card_value, deadwood))


GIN: Variant[GinState] = Gin()
"""The gin family's variant, typed as the interface hosts use."""
