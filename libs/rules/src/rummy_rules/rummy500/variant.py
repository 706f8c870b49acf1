"""Rummy 500 behind the variant interface: :data:`RUMMY500` (``rummy_rules.variant.Variant``).

The round's life is the one every variant follows (``docs/rules/hand-flow.md``): ``HandStarted``
(2-8 seats, the dealer, the rule set), the ledger's ``StakeReserved`` for each seat and the
fairness service's ``SeedCommitted``, the seed window, the dealer's ``HandDealt`` (7 or 13 cards
each, no cut, the upcard, the stock), then turns (``TurnStarted`` with the clock's deadline)
played by the round's state machine (``rummy_rules.rummy500.play``), and ``HandEnded``: every
seat's outcome word, its signed round score (``SeatResult.score``) and an all-zero settlement
(a round charges nobody; the match to 500, ``rummy_rules.formats.race_to``, holds the money).

Seat outcomes (``SeatResult.outcome``): the seat that went out ``went_out``; a seat that left
mid-round ``left``; every other ``scored``. The hand's winner (``winner_seat``) is the seat that
went out, else the highest score among the seats still in (ties: the first in turn order).
``docs/rules/rummy500.md``.
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
    Event,
    HandDealt,
    HandEnded,
    ScoredGroup,
    SeatResult,
)
from ..events import redact as generic_redact
from ..formats.messages import LEFT_OUTCOME, DealRules
from ..lifecycle import HandPhase
from ..lifecycle import require_phase as _require
from ..rules import RuleSet, VariantOptions
from ..settlement import settle
from ..shuffle import deal_order
from ..variant import Variant
from ..view import PlayerView, SeatView
from . import play
from .melds import hand_points
from .play import Rummy500Play, Rummy500RoundEnded
from .rules import (
    RUMMY500_NAME,
    RUMMY500_RULES_VERSION,
    RUMMY500_VARIANT,
    Rummy500Options,
    rummy500_options,
    rummy500_rule_set,
)

WENT_OUT_OUTCOME = "went_out"
SCORED_OUTCOME = "scored"


@json_form.tag("rummy500.State")
@dataclass(frozen=True)
class Rummy500State(lifecycle.SeatedHand):
    """One round around its play: the hand's life (``lifecycle.SeatedHand``: seats, stakes,
    seeds, the turn's deadline, the closing event) and the play itself (from the deal)."""

    play: Rummy500Play = Rummy500Play()


json_form.register(Rummy500State, Rummy500Play)


def _deal(state: Rummy500State, c: Deal) -> list[Event]:
    lifecycle.check_deal(state, c, Rummy500Options.deal_shape)
    dealt = HandDealt(
        hands=tuple(sorted(c.hands, key=lambda h: h.seat)),
        wild_cut=None,
        first_open=c.first_open,
        stock=c.stock,
        stock_count=len(c.stock),
    )
    return [dealt, *_next(apply(state, dealt), c.at_ms)]


def hand_ended(state: Rummy500State, ending: Rummy500RoundEnded, at_ms: int) -> HandEnded:
    """The HandEnded of a round whose play ended with ``ending``."""
    assert state.rule_set is not None
    order = state.play.seats
    scores = {s.seat: s for s in ending.scores}
    if ending.out_seat is not None:
        winner = ending.out_seat
    else:
        still = [s for s in order if s not in state.play.left] or list(order)
        winner = max(still, key=lambda s: (scores[s].score, -order.index(s)))

    def outcome(seat: int) -> str:
        if seat in state.play.left:
            return LEFT_OUTCOME
        return WENT_OUT_OUTCOME if seat == ending.out_seat else SCORED_OUTCOME

    results = tuple(
        SeatResult(
            seat=acc.seat,
            account_id=acc.account_id,
            outcome=outcome(acc.seat),
            points=0,
            cards=scores[acc.seat].cards,
            melds=tuple(
                ScoredGroup(m.kind, m.cards) for m in state.play.melds if m.owner == acc.seat
            ),
            deadwood=scores[acc.seat].cards,
            score=scores[acc.seat].score,
        )
        for acc in state.seats
    )
    return HandEnded(
        winner_seat=winner,
        results=results,
        settlement=settle(state.rule_set, winner, {s.seat: 0 for s in state.seats}),
        at_ms=at_ms,
    )


def _next(state: Rummy500State, at_ms: int) -> list[Event]:
    """What follows play events just applied: the HandEnded once the round has ended, else
    the next TurnStarted."""
    p = state.play
    if p.ending is not None:
        return [hand_ended(state, p.ending, at_ms)]
    assert state.rule_set is not None and p.turn_seat is not None
    return [lifecycle.turn_started(state.rule_set, p.turn_seat, p.turn_no, at_ms)]


def _then(state: Rummy500State, events: list[Event], at_ms: int) -> list[Event]:
    if not events:
        return []
    after = _fold(events, state)
    if after.play.ending is None and after.play.turn_no == state.play.turn_no:
        return events  # the same turn goes on
    return [*events, *_next(after, at_ms)]


def _play(state: Rummy500State, c: Command) -> list[Event]:
    if isinstance(c, TurnTimeout) and state.phase is not HandPhase.PLAYING:
        if lifecycle.closes_seed_window(state, c):
            return [lifecycle.seeds_locked(state)]
        return []  # stale
    _require(state, HandPhase.PLAYING)
    return _then(state, list(play.decide(state.play, c)), getattr(c, "at_ms", 0))


def _leave(state: Rummy500State, c: LeaveHand) -> list[Event]:
    aborted = lifecycle.leave_before_deal(state, c)
    if aborted is not None:
        return aborted
    _require(state, HandPhase.PLAYING)
    return _then(state, play.leave(state.play, c.seat), c.at_ms)


def decide(state: Rummy500State, command: Command) -> tuple[Event, ...]:
    """The events ``command`` causes in ``state``; ``()`` for a stale timeout. Raises
    RuleViolation."""
    lived = lifecycle.decide_before_play(state, command, RUMMY500.check_rule_set, apply)
    if lived is not None:
        return lived
    if isinstance(command, Deal):
        return tuple(_deal(state, command))
    if isinstance(command, LeaveHand):
        return tuple(_leave(state, command))
    return tuple(_play(state, command))


def apply(state: Rummy500State, event: Event) -> Rummy500State:
    """The state after ``event`` (never raises on a history ``decide`` produced)."""
    lived = lifecycle.apply_seated(state, event)
    if lived is not None:
        return lived
    if isinstance(event, HandDealt):
        assert state.rule_set is not None
        order = deal_order(state.seat_numbers(), state.dealer_seat)
        by_seat = {h.seat: h.cards for h in event.hands}
        started = play.start(
            order,
            state.dealer_seat,
            [by_seat[s] for s in order],
            event.first_open,
            event.stock,
            rummy500_options(state.rule_set).low_ace_one,
        )
        return replace(state, phase=HandPhase.PLAYING, play=started)
    return replace(state, play=play.apply(state.play, event))


def _fold(events: Iterable[Event], state: Rummy500State) -> Rummy500State:
    for event in events:
        state = apply(state, event)
    return state


def legal_commands(state: Rummy500State, seat: int) -> tuple[Command, ...]:
    """The moves ``seat`` may make now (``play.legal_commands``); none outside play."""
    if state.phase is not HandPhase.PLAYING:
        return ()
    return play.legal_commands(state.play, seat)


def _status(state: Rummy500State, seat: int) -> str:
    if state.phase in (HandPhase.PLAYING, HandPhase.ENDED, HandPhase.ABORTED):
        if isinstance(state.result, HandEnded):
            return next(r.outcome for r in state.result.results if r.seat == seat)
        if seat in state.play.left:
            return LEFT_OUTCOME
        return "playing"
    return "waiting"


def player_view(state: Rummy500State, seat: int) -> PlayerView:
    """What ``seat`` may see (any other number: a spectator's): its own cards, the whole
    discard pile, each seat's card count, the stock's size, the turn; ``variant_view`` is the
    round's own view (``play.Rummy500View``: every meld with its owner and lay-offs, each seat's
    table points). Never another seat's hand or the stock order; running totals are the
    match's (``rummy_rules.formats.view``)."""
    p = state.play
    dealt = p.phase is not None
    playing = state.phase is HandPhase.PLAYING
    misses = dict(zip(p.seats, p.misses, strict=True)) if dealt else {}
    return PlayerView(
        hand_id=state.hand_id,
        seat=seat,
        phase=state.phase.value,
        cards=p.hand_of(seat) if dealt else (),
        discard_pile=p.pile,
        stock_count=len(p.stock),
        wild_cut=None,
        wild_rank=None,
        seats=tuple(
            SeatView(
                s.seat,
                s.account_id,
                len(p.hand_of(s.seat)) if dealt else 0,
                _status(state, s.seat),
                misses.get(s.seat, 0),
            )
            for s in state.seats
        ),
        turn_seat=p.turn_seat if playing else None,
        turn_no=p.turn_no,
        turn_deadline_ms=state.turn_deadline_ms if playing else None,
        has_drawn=p.phase is play.Phase.PLAY,
        result=state.result,
        commitment=state.commitment,
        variant_view=play.view(p) if dealt else None,
    )


class Rummy500(lifecycle.LifecycleVariant[Rummy500State]):
    """Rummy 500's rounds (``rummy-500/1``). Stateless: every method is a pure function. Its
    ``redact`` is every variant's (:func:`rummy_rules.events.redact`: the deal's other hands
    and stock, and a stock card another seat drew, removed); everything else of a round is
    public (melds, lay-offs, digs, the pile)."""

    name = RUMMY500_VARIANT
    rules_versions = frozenset({f"{RUMMY500_NAME}/{RUMMY500_RULES_VERSION}"})
    options_type: type[VariantOptions] = Rummy500Options
    deal_shape = Rummy500Options.deal_shape

    def __init__(self) -> None:
        super().__init__(
            initial_state=Rummy500State,
            decide=decide,
            legal_commands=legal_commands,
            apply=apply,
            view=player_view,
            redact=generic_redact,
            turn_no=lambda state: state.play.turn_no,
        )

    @property
    def bot(self) -> VariantBot | None:
        from .bot import RUMMY500_BOT  # the strategy reads this package's play

        return RUMMY500_BOT

    def house_rule_set(
        self, seats: int, point_value_hundredths: int, commission_bps: int
    ) -> RuleSet:
        """``rummy-500/1`` at ``seats`` (2-8). Its rounds are free: the money is the match's
        (game stakes), so the point value and commission given are not a round's. Raises
        RuleSetError for a seat count out of 2..8."""
        return rummy500_rule_set(seats)

    def deal_rule_set(self, table_rule_set: RuleSet, deal_rules: DealRules) -> RuleSet:
        """A round of the match to 500: the table's rule set, free (the format holds the
        money); ``deal_rules`` changes nothing of a round."""
        return self.free_rule_set(table_rule_set)

    def deadwood_points(
        self, rule_set: RuleSet, wild_cut: Card | None, deadwood: Sequence[Card]
    ) -> int:
        """What the cards left in hand count against the seat (``docs/rules/rummy500.md#scores``):
        ace 15 (``low_ace_one`` counts only a melded ace), jack, queen and king 10, others their
        face value; ``wild_cut`` is None (Rummy 500 cuts none)."""
        self.check_rule_set(rule_set)
        return hand_points(deadwood)


RUMMY500: Variant[Rummy500State] = Rummy500()
"""Rummy 500's variant, typed as the interface hosts use."""
