"""Test helpers for Rummy 500 rounds (not a test module): a round through the variant interface
from HandStarted, dealt from the seeded shuffle or from a script of hands, upcard and stock."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from rummy_rules.cards import Card, parse_cards
from rummy_rules.commands import (
    ContributeClientSeed,
    Deal,
    RecordSeedCommitment,
    RecordStakeReserved,
    StartHand,
)
from rummy_rules.events import SeatAccount
from rummy_rules.rules import RuleSet
from rummy_rules.rummy500.play import Rummy500Play, start
from rummy_rules.rummy500.rules import rummy500_rule_set
from rummy_rules.rummy500.variant import RUMMY500, Rummy500State
from rummy_rules.shuffle import SeatHand, ShuffleInputs
from rummy_testing.variant_play import VariantPlay, shuffled_deal

T0 = 1_700_000_000_000


class Round(VariantPlay[Rummy500State]):
    """A round through ``RUMMY500``: ``run`` decides and applies, ``events`` is the log."""

    def __init__(self, rule_set: RuleSet | None = None, seats: int = 3, dealer: int = 0) -> None:
        self.rule_set = rule_set or rummy500_rule_set(seats)
        self.seat_nos = tuple(range(seats))
        self.dealer = dealer
        super().__init__(RUMMY500)
        self.now = T0

    def _prepare(self) -> None:
        self.run(
            StartHand(
                hand_id="r500-1",
                seats=tuple(SeatAccount(s, f"acct-{s}") for s in self.seat_nos),
                dealer_seat=self.dealer,
                rule_set=self.rule_set,
                at_ms=self.now,
            )
        )
        for s in self.seat_nos:
            self.run(RecordStakeReserved(seat=s, amount_hundredths=0, at_ms=self.now))
        self.run(RecordSeedCommitment(commitment="ab" * 32, at_ms=self.now))
        for s in self.seat_nos:
            self.run(ContributeClientSeed(seat=s, seed_hex="", at_ms=self.now))

    def deal_seeded(self, server_seed: bytes = b"s" * 32) -> None:
        self._prepare()
        inputs = ShuffleInputs.of(server_seed, "r500-1", {s: b"" for s in self.seat_nos})
        self.run(
            shuffled_deal(RUMMY500, self.rule_set, inputs, self.seat_nos, self.dealer, self.now)
        )

    def deal_script(
        self, hands: Sequence[str], upcard: str, stock_top: str = "", *, two_decks: bool = False
    ) -> None:
        """Deal ``hands`` (by seat, in the notation) and ``upcard``; the stock is ``stock_top``
        then every other card of the shoe in canonical order."""
        self._prepare()
        dealt = [_cards(h) for h in hands]
        up = _cards(upcard)[0]
        top = list(_cards(stock_top))
        used = [c for h in dealt for c in h] + [up] + top
        rest = [c for c in self.rule_set.shoe.cards if c not in used]
        self.run(
            Deal(
                hands=tuple(SeatHand(s, h) for s, h in zip(self.seat_nos, dealt, strict=True)),
                wild_cut=None,
                first_open=up,
                stock=(*top, *rest),
                at_ms=self.now,
            )
        )

    @property
    def play(self) -> Rummy500Play:
        return self.state.play


def _cards(text: str) -> tuple[Card, ...]:
    """Cards in the notation, ``7H'`` (a prime) for the second deck's copy."""
    out = []
    for item in text.split():
        copy = item.count("'")
        (card,) = parse_cards(item.rstrip("'"))
        out.append(replace(card, copy=copy))
    return tuple(out)


def cards(text: str) -> tuple[Card, ...]:
    return _cards(text)


def table(
    hands: Sequence[str],
    *,
    pile: str = "",
    stock: str = "",
    low_ace_one: bool = False,
    turn_seat: int = 0,
) -> Rummy500Play:
    """A round's play state built directly (no deal checks): seats 0.. in turn order."""
    seats = tuple(range(len(hands)))
    state = start(
        seats, seats[-1], [_cards(h) for h in hands], _cards("2C")[0], _cards(stock), low_ace_one
    )
    return replace(state, pile=_cards(pile), turn_seat=turn_seat)
