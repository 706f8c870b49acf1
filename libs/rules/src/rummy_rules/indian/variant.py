"""Indian points rummy (Bombay Baazi) behind the variant interface: ``INDIAN_POINTS``."""

from __future__ import annotations

from collections.abc import Sequence

from .. import lifecycle
from ..bot import VariantBot
from ..cards import Card
from ..events import HandEnded, redact
from ..formats.messages import DealRules
from ..rules import RuleSet, RuleSetError, VariantOptions
from ..variant import Variant
from ..view import PlayerView, SeatView
from ..wild import hand_points
from .bot import INDIAN_BOT
from .decide import decide, legal_commands
from .rules import (
    BOMBAY_BAAZI_NAME,
    BOMBAY_BAAZI_VERSION,
    INDIAN_POINTS_VARIANT,
    IndianPointsRules,
    IndianShoes,
    bombay_baazi,
    match_deal_rule_set,
)
from .state import HandState, Phase, SeatState, apply


def _status(state: HandState, seat: SeatState) -> str:
    if state.phase in (Phase.NOT_STARTED, Phase.PREPARING, Phase.SEED_WINDOW, Phase.AWAITING_DEAL):
        return "waiting"
    if isinstance(state.result, HandEnded) and state.result.winner_seat == seat.seat:
        return "won"
    return seat.status.value


def player_view(state: HandState, seat: int) -> PlayerView:
    """What ``seat`` may see (any other number: a spectator's view, with no cards of its own).

    While the hand runs: its own cards, the discard pile, each seat's card count and status, the
    stock's size, the turn, the cut card and wild rank. At the end, ``result`` adds every seat's
    cards and scored arrangement. Never another seat's cards or the stock order before the end
    (``docs/rules/hand-flow.md#views``).
    """
    own = state.seat_state(seat)
    return PlayerView(
        hand_id=state.hand_id,
        seat=seat,
        phase=state.phase.value,
        cards=own.cards if own is not None else (),
        discard_pile=state.discard_pile,
        stock_count=len(state.stock),
        wild_cut=state.wild_cut,
        wild_rank=state.wild_rank,
        seats=tuple(
            SeatView(s.seat, s.account_id, len(s.cards), _status(state, s), s.misses_in_a_row)
            for s in state.seats
        ),
        turn_seat=state.turn_seat if state.phase is Phase.PLAYING else None,
        turn_no=state.turn_no,
        turn_deadline_ms=state.turn_deadline_ms if state.phase is Phase.PLAYING else None,
        has_drawn=state.drawn_card is not None,
        result=state.result,
        commitment=state.commitment,
    )


class IndianPoints(lifecycle.LifecycleVariant[HandState]):
    """Indian 13-card points rummy. Stateless: every method is a pure function of its inputs."""

    name = INDIAN_POINTS_VARIANT
    rules_versions = frozenset({f"{BOMBAY_BAAZI_NAME}/{BOMBAY_BAAZI_VERSION}"})
    options_type: type[VariantOptions] = IndianPointsRules
    deal_shape = IndianPointsRules.deal_shape
    bot: VariantBot | None = INDIAN_BOT

    def __init__(self) -> None:
        super().__init__(
            initial_state=HandState,
            decide=decide,
            legal_commands=legal_commands,
            apply=apply,
            view=player_view,
            redact=redact,
            turn_no=lambda state: state.turn_no,
        )

    def house_rule_set(
        self, seats: int, point_value_hundredths: int, commission_bps: int
    ) -> RuleSet:
        """Bombay Baazi; on the rulebook's shoes at a seat count Bombay Baazi's have no shoe
        for (2, 3 or 5 seats)."""
        shoes = IndianShoes.BOMBAY_BAAZI
        if seats not in dict(shoes.shoes):
            shoes = IndianShoes.RULEBOOK
            if seats not in dict(shoes.shoes):
                counts = sorted({*dict(IndianShoes.BOMBAY_BAAZI.shoes), *dict(shoes.shoes)})
                raise RuleSetError(
                    "seats",
                    f"one of {'/'.join(str(n) for n in counts)}",
                    seats,
                    "4, 6 or 8 on Bombay Baazi's shoes, 2 to 6 on the rulebook's",
                )
        return bombay_baazi(seats, point_value_hundredths, commission_bps, shoes=shoes)

    def deal_rule_set(self, table_rule_set: RuleSet, deal_rules: DealRules) -> RuleSet:
        """:func:`~rummy_rules.indian.rules.match_deal_rule_set` at the table's seat count and
        clock, on the rulebook's shoe (its one-deck heads-up option when the table chose it)."""
        self.check_rule_set(table_rule_set)
        heads_up = IndianShoes.RULEBOOK_ONE_DECK_HEADS_UP
        shoes = heads_up if table_rule_set.shoes == heads_up.shoes else IndianShoes.RULEBOOK
        return match_deal_rule_set(
            table_rule_set.seats,
            deal_rules,
            shoes=shoes,
            turn_seconds=table_rule_set.turn_seconds,
            seed_window_seconds=table_rule_set.seed_window_seconds,
            max_missed_turns=table_rule_set.max_missed_turns,
        )

    def deadwood_points(
        self, rule_set: RuleSet, wild_cut: Card | None, deadwood: Sequence[Card]
    ) -> int:
        """Every card's points (``docs/rules/cards.md#card-points``): 0 for a printed joker or a
        card of the wild rank (the cut card's rank; a printed joker cut: none), A/K/Q/J/10 10,
        others their face value; uncapped (the seat is charged the capped sum)."""
        self.check_rule_set(rule_set)
        return hand_points(deadwood, None if wild_cut is None else wild_cut.rank)


INDIAN_POINTS: Variant[HandState] = IndianPoints()
"""The Indian points variant (Bombay Baazi), typed as the interface hosts use."""
