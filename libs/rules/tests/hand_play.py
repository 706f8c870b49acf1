"""Test helpers for driving Indian points hands through the variant interface (not a test module).

``Table`` keeps the live state and the event log, runs commands through ``decide``/``apply`` and
deals real shoes with ``rummy_rules.shuffle``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

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
from rummy_rules.rules import RuleSet, bombay_baazi
from rummy_rules.settlement import reservation_cents
from rummy_rules.shuffle import ShuffleInputs, deal, reshuffle

T0 = 1_700_000_000_000  # ms since the epoch; the tests' clock starts here


@dataclass
class Table:
    """A live hand: state, the events so far, and the seeds that shuffle it."""

    rule_set: RuleSet
    hand_id: str = "hand-1"
    server_seed: bytes = b"\x07" * 32
    state: HandState = field(default_factory=HandState)
    events: list[Event] = field(default_factory=list)
    now_ms: int = T0

    def run(self, command: object) -> tuple[Event, ...]:
        new = INDIAN_POINTS.decide(self.state, command)  # type: ignore[arg-type]
        for e in new:
            self.state = INDIAN_POINTS.apply(self.state, e)
        self.events.extend(new)
        return new

    def tick(self, ms: int = 1000) -> int:
        self.now_ms += ms
        return self.now_ms

    def inputs(self) -> ShuffleInputs:
        seeds = {s.seat: bytes.fromhex(s.seed_hex or "") for s in self.state.seats}
        return ShuffleInputs.of(self.server_seed, self.hand_id, seeds)

    def start(self, seats: list[int], dealer: int, client_seeds: dict[int, str]) -> None:
        """Start, reserve, commit, collect seeds (then the window's timeout), deal from the shoe."""
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
                    seat=s, amount_cents=reservation_cents(self.rule_set), at_ms=self.tick()
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


def table(seats: int = 4, point_value_cents: int = 100, commission_bps: int = 1000) -> Table:
    return Table(bombay_baazi(seats, point_value_cents, commission_bps))
