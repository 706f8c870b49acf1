"""A hand driven through a variant's interface, as a host drives it (not a test module).

:class:`VariantPlay` keeps the live state and the event log of one hand of ``variant``: ``run``
decides a command in the current state and applies each event it returns. The suites' hand
harnesses (gin, Rummy 500, the gin view, Indian points) build on it with their own deals;
:func:`shuffled_deal` is the dealer's ``Deal`` of a variant's layout from a seeded shuffle.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Generic, TypeVar

from rummy_rules.commands import Deal
from rummy_rules.events import Event
from rummy_rules.rules import RuleSet
from rummy_rules.shuffle import ShuffleInputs, deal
from rummy_rules.variant import Variant

S = TypeVar("S")


class VariantPlay(Generic[S]):
    """``state`` (``variant``'s, from its initial state) and ``events`` (every event so far)."""

    def __init__(self, variant: Variant[S]) -> None:
        self.variant = variant
        self.state: S = variant.initial_state()
        self.events: list[Event] = []

    def run(self, command: Any) -> tuple[Event, ...]:
        """The events ``command`` decides in the current state, each applied and logged.
        Raises RuleViolation (nothing applied) for a command the variant refuses."""
        new = self.variant.decide(self.state, command)
        for event in new:
            self.state = self.variant.apply(self.state, event)
        self.events.extend(new)
        return new


def shuffled_deal(
    variant: Variant[Any],
    rule_set: RuleSet,
    inputs: ShuffleInputs,
    seats: Sequence[int],
    dealer: int,
    at_ms: int,
) -> Deal:
    """The dealer's ``Deal`` of a hand of ``rule_set``: ``variant``'s layout (shoe, hand size,
    shape) dealt from ``inputs`` to ``seats``, from the seat after ``dealer``, at ``at_ms``."""
    layout = variant.deal_layout(rule_set)
    dealt = deal(inputs, layout.shoe, seats, dealer, layout.hand_size, layout.shape)
    assert dealt.first_open is not None
    return Deal(
        hands=dealt.hands,
        wild_cut=dealt.wild_cut,
        first_open=dealt.first_open,
        stock=dealt.stock,
        at_ms=at_ms,
    )
