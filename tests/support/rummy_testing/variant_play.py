"""A hand driven through a variant's interface, as a host drives it (not a test module).

:class:`VariantPlay` keeps the live state and the event log of one hand of ``variant``: ``run``
decides a command in the current state and applies each event it returns. The suites' hand
harnesses (gin, Rummy 500, the gin view) build on it with their own deals.
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar

from rummy_rules.events import Event
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
