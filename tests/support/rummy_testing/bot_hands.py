"""One hand of any variant played in-process by bot brains (``rummy_ops.bots.strategy.BotBrain``)
through the variant interface: each seat sees its own view, chooses among the variant's
``legal_commands`` and the rules decide. The services' records the variant asks for before the
deal (a stake, the seed commitment) are given as the services would; a stock that runs out is
reshuffled as the dealer does. Not a test module."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from typing import Any

from rummy_ops.bots.strategy import BotBrain
from rummy_rules.bot import Situation
from rummy_rules.commands import (
    Command,
    DrawFromDiscardPile,
    RecordSeedCommitment,
    RecordStakeReserved,
    RecordStockReshuffled,
    StartHand,
    TurnTimeout,
)
from rummy_rules.errors import RuleViolation
from rummy_rules.events import CardDrawn, Event, SeatAccount, StockExhausted
from rummy_rules.rules import RuleSet
from rummy_rules.shuffle import ShuffleInputs, reshuffle
from rummy_rules.variant import Variant

from .variant_play import shuffled_deal

T0 = 1_700_000_000_000


@dataclass
class BotHand:
    """A hand played by bots: its state, events and every move chosen, by seat."""

    variant: Variant[Any]
    rule_set: RuleSet
    server_seed: bytes
    hand_id: str = "bot-hand"
    state: Any = None
    events: list[Event] = field(default_factory=list)
    moves: list[Command] = field(default_factory=list)
    now: int = T0
    seats: tuple[int, ...] = ()

    def run(self, command: Command) -> tuple[Event, ...]:
        new = self.variant.decide(self.state, command)
        self.state = self.variant.fold(new, self.state)
        self.events.extend(new)
        self.now += 1000
        for event in new:
            if isinstance(event, StockExhausted):
                seats = dict.fromkeys(sorted(self.seats), b"")
                inputs = ShuffleInputs.of(self.server_seed, self.hand_id, seats)
                stock = reshuffle(inputs, self.rule_set.shoe, event.cards, event.reshuffle_no)
                self.run(
                    RecordStockReshuffled(
                        reshuffle_no=event.reshuffle_no, stock=stock, at_ms=self.now
                    )
                )
        return new


def play_hand(
    variant: Variant[Any],
    rule_set: RuleSet,
    brains: dict[int, BotBrain],
    server_seed: bytes,
    dealer: int | None = None,
    max_steps: int = 2000,
) -> BotHand:
    """Start, deal and play one hand among the seats of ``brains`` (seat -> brain) until it is
    over (or ``max_steps`` commands); a brain that stalls lets its turn time out."""
    seats = sorted(brains)
    hand = BotHand(
        variant, rule_set, server_seed, state=variant.initial_state(), seats=tuple(seats)
    )
    hand.run(
        StartHand(
            hand_id=hand.hand_id,
            seats=tuple(SeatAccount(s, f"acct-{s}") for s in seats),
            dealer_seat=seats[0] if dealer is None else dealer,
            rule_set=rule_set,
            at_ms=hand.now,
        )
    )
    for seat in seats:  # a variant that holds no stakes refuses these: nothing to record
        try:
            hand.run(RecordStakeReserved(seat=seat, amount_hundredths=0, at_ms=hand.now))
        except RuleViolation:
            break
    commitment = hashlib.sha256(server_seed).hexdigest()
    hand.run(RecordSeedCommitment(commitment=commitment, at_ms=hand.now))
    hand.run(TurnTimeout(turn_no=0, at_ms=hand.now))
    inputs = ShuffleInputs.of(server_seed, hand.hand_id, dict.fromkeys(seats, b""))
    first = seats[0] if dealer is None else dealer
    hand.run(shuffled_deal(variant, rule_set, inputs, seats, first, hand.now))
    for brain in brains.values():
        brain.new_hand()
    taken: dict[tuple[int, int], Any] = {}
    for _ in range(max_steps):
        if variant.is_over(hand.state):
            break
        on_turn = variant.view(hand.state, -1).turn_seat
        assert on_turn is not None
        seat = on_turn
        legal = variant.legal_commands(hand.state, seat)
        own = variant.view(hand.state, seat)
        situation = Situation(
            seat=seat,
            cards=own.cards,
            discard_top=own.discard_pile[-1] if own.discard_pile else None,
            wild_cut=own.wild_cut,
            has_drawn=own.has_drawn,
            taken_from_pile=taken.get((seat, own.turn_no)),
            discard_pile=own.discard_pile,
        )
        chosen = brains[seat].choose(situation, legal, own.turn_no)
        if chosen is None:
            deadline = variant.deadline(hand.state)
            assert deadline is not None
            hand.run(TurnTimeout(turn_no=deadline.turn_no, at_ms=deadline.due_ms))
            continue
        assert chosen in legal
        hand.moves.append(chosen)
        new = hand.run(replace(chosen, at_ms=hand.now))  # type: ignore[type-var]
        if isinstance(chosen, DrawFromDiscardPile):
            drawn = next(e for e in new if isinstance(e, CardDrawn))
            taken[(seat, own.turn_no)] = drawn.card
    return hand
