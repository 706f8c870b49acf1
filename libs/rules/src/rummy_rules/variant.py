"""The variant interface: what a host (the table service, the replay tool) calls to play a hand
without knowing its rules.

A **variant** is a rule set plus a state machine: ``decide(state, command) -> events`` (raises
``RuleViolation``, never changes anything), ``apply(state, event) -> state`` (never raises on a
history ``decide`` produced), ``fold(events) -> state``. Around them, the host asks
``deadline(state)`` what the clock should wait for, ``is_over(state)``, ``result(state)`` (the
HandEnded or HandAborted event), ``deadwood_points`` (what a seat's deadwood of that HandEnded
is worth) and ``view(state, seat)``, and sends each seat ``redact(event, seat)``. Nothing here
fixes the number of cards, decks or seats, or assumes one hand per match: a match format (one
deal, pool, deals, game to N) wraps hands and is not part of this interface.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from enum import Enum
from typing import Generic, Protocol, TypeVar

from .bot import VariantBot
from .cards import Card
from .commands import Command
from .events import Event, HandAborted, HandEnded
from .formats.messages import DealRules
from .rules import DealLayout, DealShape, RuleSet, RuleSetError, VariantOptions
from .view import PlayerView

S = TypeVar("S")


class DeadlineKind(Enum):
    SEED_WINDOW = "seed_window"
    TURN = "turn"


@dataclass(frozen=True)
class Deadline:
    """What the clock should wait for: at ``due_ms`` (ms since the Unix epoch) send
    ``TurnTimeout(turn_no)``. The seed window is turn number 0; turns count from 1."""

    kind: DeadlineKind
    turn_no: int
    due_ms: int


def clock_deadline(
    seed_deadline_ms: int | None, turn_no: int, turn_deadline_ms: int | None
) -> Deadline | None:
    """What the clock waits for: the seed window (turn 0) while ``seed_deadline_ms`` is given
    (the window is open), else turn ``turn_no`` while ``turn_deadline_ms`` is given (a turn is
    being played), else None. Times in ms since the Unix epoch."""
    if seed_deadline_ms is not None:
        return Deadline(DeadlineKind.SEED_WINDOW, 0, seed_deadline_ms)
    if turn_deadline_ms is not None:
        return Deadline(DeadlineKind.TURN, turn_no, turn_deadline_ms)
    return None


class Variant(Protocol, Generic[S]):
    """One game's rules behind the interface every host uses. ``S`` is the variant's state."""

    name: str
    #: The rule-set labels (``"<rule set name>/<version>"``) whose hands this variant plays.
    rules_versions: frozenset[str]
    #: The type of ``RuleSet.options`` this variant plays by.
    options_type: type[VariantOptions]
    #: What its deal turns up besides the hands (a wild cut, an upcard).
    deal_shape: DealShape

    @property
    def bot(self) -> VariantBot | None:
        """The variant's bot strategy (``rummy_rules.bot.VariantBot``: one of the legal moves,
        chosen from what the seat knows), or None if it has none."""
        ...

    def house_rule_set(
        self, seats: int, point_value_hundredths: int, commission_bps: int
    ) -> RuleSet:
        """The variant's house rule set for a table of ``seats`` seats (``point_value_hundredths``
        in hundredths of a House Token a point, ``commission_bps`` in basis points). Raises
        RuleSetError for values out of bounds."""
        ...

    def check_rule_set(self, rule_set: RuleSet) -> None:
        """Raise RuleSetError unless this variant plays ``rule_set`` (its variant name, label and
        options type). Its bounds were checked when it was built."""
        ...

    def deal_layout(self, rule_set: RuleSet) -> DealLayout:
        """What the dealer deals for a hand of ``rule_set``: the shape, the shoe, the hand size."""
        ...

    def max_loss_points(self, rule_set: RuleSet) -> int:
        """The most points one seat can be charged in a hand of ``rule_set`` (what is reserved,
        times the point value)."""
        ...

    def deadwood_points(
        self, rule_set: RuleSet, wild_cut: Card | None, deadwood: Sequence[Card]
    ) -> int:
        """What ``deadwood`` counts against the seat that holds it, in points, by this variant's
        card values, uncapped: ``deadwood`` is a ``SeatResult.deadwood`` of a hand of
        ``rule_set`` (the cards the variant left out of the seat's melds; ``()``: 0) and
        ``wild_cut`` the hand's cut card (``HandDealt.wild_cut``; None when its deal cuts none or
        it ended before the deal). The table writes it into every seat's ``Arrangement.
        deadwood_points`` of a HandEnded, so that a host shows what a seat's deadwood is worth
        without knowing what a card is worth; it is not what the seat was charged
        (``SeatResult.points``: a cap or a penalty may differ). Raises RuleSetError for a rule
        set this variant does not play."""
        ...

    def deal_rule_set(self, table_rule_set: RuleSet, deal_rules: DealRules) -> RuleSet:
        """The rule set of one deal of a match format at a table of ``table_rule_set`` (its
        seats and clock) under the format's ``deal_rules`` (drops, wrong declare, the cap), played
        free (point value 0: the format owns the money). Raises RuleSetError (option
        ``format``) if this variant plays no such deals, or for a value out of its bounds."""
        ...

    def initial_state(self) -> S:
        """The state before any event (a hand not yet started)."""
        ...

    def decide(self, state: S, command: Command) -> tuple[Event, ...]:
        """The events ``command`` causes in ``state``; ``()`` for an ignorable stale timeout.
        Raises RuleViolation (with an ErrorCode) for a command the rules refuse."""
        ...

    def legal_commands(self, state: S, seat: int) -> tuple[Command, ...]:
        """The moves ``seat`` may make now (OpenSpiel's ``legal_actions``): a finite tuple of
        commands, each one ``decide`` accepts in ``state``, in the variant's order; ``()`` when
        the seat has none (not its turn, no hand in play). Their ``at_ms`` is 0: a host stamps
        its own time (``dataclasses.replace``). Moves are the commands of play (draws,
        discards, the variant's own: a declare, a knock); leaving, seeds, timeouts and the
        services' records are not. A bot, a fuzzer, the clock's automatic play and a view take
        legality from here, never working it out again."""
        ...

    def apply(self, state: S, event: Event) -> S:
        """The state after ``event``. Never raises on a history that ``decide`` produced."""
        ...

    def fold(self, events: Iterable[Event], state: S | None = None) -> S:
        """``apply`` each event in order, from ``state`` or the initial state."""
        ...

    def view(self, state: S, seat: int) -> PlayerView:
        """What ``seat`` may see of ``state`` (never another seat's cards or the stock order)."""
        ...

    def redact(self, event: Event, seat: int) -> Event:
        """The copy of ``event`` that ``seat`` may see."""
        ...

    def deadline(self, state: S) -> Deadline | None:
        """What the clock should wait for now, or None (nothing to time)."""
        ...

    def is_over(self, state: S) -> bool:
        """True once the hand has ended or been aborted."""
        ...

    def result(self, state: S) -> HandEnded | HandAborted | None:
        """The event that closed the hand, or None while it runs."""
        ...


class VariantRules:
    """The pre-hand half of :class:`Variant` from the class attributes ``name``,
    ``rules_versions``, ``options_type`` and ``deal_shape``; a variant class inherits it and adds
    its state machine and ``house_rule_set``."""

    name: str
    rules_versions: frozenset[str]
    options_type: type[VariantOptions]
    deal_shape: DealShape

    def check_rule_set(self, rule_set: RuleSet) -> None:
        if rule_set.variant != self.name:
            raise RuleSetError("variant", repr(self.name), repr(rule_set.variant))
        label = f"{rule_set.name}/{rule_set.version}"
        if label not in self.rules_versions:
            allowed = ", ".join(sorted(self.rules_versions))
            raise RuleSetError("version", f"one of {allowed}", label)
        if not isinstance(rule_set.options, self.options_type):
            raise RuleSetError(
                "options", f"a {self.options_type.__name__}", type(rule_set.options).__name__
            )

    def deal_layout(self, rule_set: RuleSet) -> DealLayout:
        self.check_rule_set(rule_set)
        return rule_set.layout

    def max_loss_points(self, rule_set: RuleSet) -> int:
        self.check_rule_set(rule_set)
        return rule_set.max_loss_points

    def free_rule_set(self, table_rule_set: RuleSet) -> RuleSet:
        """``table_rule_set`` (checked) played free, point value and commission 0: the rule set
        of a deal whose money the match format holds (gin's games, Rummy 500's match). Raises
        RuleSetError."""
        self.check_rule_set(table_rule_set)
        return replace(table_rule_set, point_value_hundredths=0, commission_bps=0)

    def deal_rule_set(self, table_rule_set: RuleSet, deal_rules: DealRules) -> RuleSet:
        """A variant that plays no format's deals (the default): refused."""
        raise RuleSetError(
            "format",
            f"a format without deal rules (variant {self.name!r} has none)",
            "a format with deal rules",
        )


class Folds(Protocol, Generic[S]):
    """What :func:`fold_with` needs of a variant: its initial state and ``apply``."""

    def initial_state(self) -> S: ...

    def apply(self, state: S, event: Event) -> S: ...


def fold_with(variant: Folds[S], events: Iterable[Event], state: S | None = None) -> S:
    """The one fold: ``variant.apply`` over ``events`` from ``state`` (default: initial state)."""
    current = variant.initial_state() if state is None else state
    for event in events:
        current = variant.apply(current, event)
    return current


def run(variant: Variant[S], state: S, command: Command) -> tuple[S, tuple[Event, ...]]:
    """Decide ``command`` and apply its events: ``(new state, events)``. Raises RuleViolation."""
    events = variant.decide(state, command)
    return fold_with(variant, events, state), events
