"""Test helpers for driving Indian points hands through the variant interface (not a test module).

``Table`` keeps the live state and the event log, runs commands through ``decide``/``apply`` and
deals real shoes with ``rummy_rules.shuffle``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass

from rummy_rules.cards import Card
from rummy_rules.commands import (
    ContributeClientSeed,
    Deal,
    RecordSeedCommitment,
    RecordStakeReserved,
    RecordStockReshuffled,
    StartHand,
)
from rummy_rules.events import Event, SeatAccount, StockExhausted
from rummy_rules.indian import INDIAN_POINTS, HandState
from rummy_rules.indian.rules import bombay_baazi
from rummy_rules.rules import RuleSet
from rummy_rules.settlement import reservation_hundredths
from rummy_rules.shuffle import Deal as ShuffleDeal
from rummy_rules.shuffle import SeatHand, ShuffleInputs, deal, reshuffle
from rummy_testing.variant_play import VariantPlay

T0 = 1_700_000_000_000  # ms since the epoch; the tests' clock starts here


@dataclass
class Table(VariantPlay[HandState]):
    """A live hand of Indian points: state, the events so far, and the seeds that shuffle it."""

    rule_set: RuleSet
    hand_id: str = "hand-1"
    server_seed: bytes = b"\x07" * 32
    now_ms: int = T0

    def __post_init__(self) -> None:
        super().__init__(INDIAN_POINTS)

    def tick(self, ms: int = 1000) -> int:
        self.now_ms += ms
        return self.now_ms

    def inputs(self) -> ShuffleInputs:
        seeds = {s.seat: bytes.fromhex(s.seed_hex or "") for s in self.state.seats}
        return ShuffleInputs.of(self.server_seed, self.hand_id, seeds)

    def start(
        self,
        seats: list[int],
        dealer: int,
        client_seeds: dict[int, str],
        rig: Callable[[ShuffleDeal], ShuffleDeal] | None = None,
    ) -> None:
        """Start, reserve, commit, collect seeds (then the window's timeout), deal from the shoe.
        ``rig`` may rearrange the shuffled deal (a test that needs a particular hand)."""
        self.run(
            StartHand(
                hand_id=self.hand_id,
                seats=tuple(SeatAccount(s, f"acct-{s}") for s in seats),
                dealer_seat=dealer,
                rule_set=self.rule_set,
                at_ms=self.now_ms,
            )
        )
        for s in seats:
            self.run(
                RecordStakeReserved(
                    seat=s,
                    amount_hundredths=reservation_hundredths(self.rule_set),
                    at_ms=self.tick(),
                )
            )
        commitment = hashlib.sha256(self.server_seed).hexdigest()
        self.run(RecordSeedCommitment(commitment=commitment, at_ms=self.tick()))
        for s, seed in client_seeds.items():
            self.run(ContributeClientSeed(seat=s, seed_hex=seed, at_ms=self.tick()))
        if self.state.phase.value == "seed_window":
            from rummy_rules.commands import TurnTimeout

            self.run(TurnTimeout(turn_no=0, at_ms=self.tick()))
        d = deal(self.inputs(), self.rule_set.shoe, seats, dealer, self.rule_set.hand_size)
        if rig is not None:
            d = rig(d)
        assert d.first_open is not None, "an Indian deal turns up the first open card"
        self.run(
            Deal(
                hands=d.hands,
                wild_cut=d.wild_cut,
                first_open=d.first_open,
                stock=d.stock,
                at_ms=self.tick(),
            )
        )

    def reshuffle_if_needed(self, new: tuple[Event, ...]) -> None:
        """Answer a StockExhausted the way the dealer does: reshuffle from the seed's sub-stream."""
        for e in new:
            if isinstance(e, StockExhausted):
                stock = reshuffle(self.inputs(), self.rule_set.shoe, e.cards, e.reshuffle_no)
                self.run(
                    RecordStockReshuffled(
                        reshuffle_no=e.reshuffle_no, stock=stock, at_ms=self.tick()
                    )
                )


def table(seats: int = 4, point_value_hundredths: int = 100, commission_bps: int = 1000) -> Table:
    return Table(bombay_baazi(seats, point_value_hundredths, commission_bps))


def give(d: ShuffleDeal, seat: int, wanted: list[Card]) -> ShuffleDeal:
    """``d`` with ``wanted`` swapped into ``seat``'s hand, the displaced cards put where the wanted
    ones were: still a permutation of the same shoe. The cut and the open card stay in place;
    raises ValueError if a wanted card is one of them."""
    if d.wild_cut in wanted or d.first_open in wanted:
        raise ValueError("cannot move the cut or the open card")
    hands = {h.seat: list(h.cards) for h in d.hands}
    stock = list(d.stock)
    target = hands[seat]
    spare = [c for c in target if c not in wanted]
    for card in wanted:
        if card in target:
            continue
        out = spare.pop()
        target[target.index(out)] = card
        for cards in [*hands.values(), stock]:
            if cards is not target and card in cards:
                cards[cards.index(card)] = out
                break
    return ShuffleDeal(
        order=d.order,
        hands=tuple(SeatHand(h.seat, tuple(hands[h.seat])) for h in d.hands),
        wild_cut=d.wild_cut,
        first_open=d.first_open,
        stock=tuple(stock),
    )


def fixed_deal(
    shuffled: ShuffleDeal,
    hands: dict[int, list[Card]],
    wild_cut: Card,
    first_open: Card,
    stock_top: list[Card],
) -> ShuffleDeal:
    """A deal with the given hands, cut, open card and top of the stock (``stock_top[0]`` drawn
    first); the rest of the shoe follows in ``shuffled``'s order. Raises ValueError if a card is
    given twice."""
    given = [c for cards in hands.values() for c in cards] + [wild_cut, first_open, *stock_top]
    if len(set(given)) != len(given):
        raise ValueError("a card is placed twice")
    assert shuffled.wild_cut is not None and shuffled.first_open is not None, "an Indian deal"
    everything = [c for h in shuffled.hands for c in h.cards]
    everything += [shuffled.wild_cut, shuffled.first_open, *shuffled.stock]
    taken = set(given)
    rest = [c for c in everything if c not in taken]
    return ShuffleDeal(
        order=shuffled.order,
        hands=tuple(SeatHand(h.seat, tuple(hands[h.seat])) for h in shuffled.hands),
        wild_cut=wild_cut,
        first_open=first_open,
        stock=(*stock_top, *rest),
    )
