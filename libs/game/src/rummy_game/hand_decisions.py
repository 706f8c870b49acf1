"""A hand's commands decided in turn, with what each event's record also notes: the one step the
table service's domain and the replay's ``rules`` check share (pure: no wire).

Why this stays in a library (issue 28): the table's domain lives in its service
(``rummy_table.domain``), which ops may not import; the replay must re-decide a recorded hand
exactly as the table does (same events, same records: the top discard, the automatic flag of a
timed-out seat's draw and discard, the wild cut), so that step is one function here that both
call (:func:`rummy_game.hand_payloads.hand_payloads` writes its records as payloads).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from rummy_rules import events as ev
from rummy_rules.cards import Card
from rummy_rules.commands import Command
from rummy_rules.variant import Variant

#: The variant's ``decide`` (``(state, command) -> events``; raises RuleViolation).
Decide = Callable[[Any, Command], tuple[ev.Event, ...]]


@dataclass(frozen=True)
class Decided:
    """One event decided, the hand state after it, and what its record notes besides:
    ``top_discard``, the discard pile's top after it (None when the pile is empty);
    ``automatic``, a draw or discard played for a timed-out seat; ``wild_cut``, the hand's cut
    card (None when it cut none)."""

    event: ev.Event
    state: Any
    top_discard: Card | None
    automatic: bool
    wild_cut: Card | None


def decide_in_turn(
    variant: Variant[Any],
    state: Any,
    commands: Sequence[Command],
    decide: Decide | None = None,
) -> list[Decided]:
    """Each event ``commands`` cause (decided in turn from hand state ``state``), in order.
    ``decide``: the variant's, by default ``variant.decide``. Raises RuleViolation when the
    rules refuse a command."""
    decide = variant.decide if decide is None else decide
    out: list[Decided] = []
    automatic = False
    for command in commands:
        for event in decide(state, command):
            state = variant.apply(state, event)
            if isinstance(event, ev.TurnTimedOut):
                automatic = True
            elif isinstance(event, ev.TurnStarted):
                automatic = False
            public = variant.view(state, -1)
            out.append(
                Decided(
                    event,
                    state,
                    top_discard=public.discard_pile[-1] if public.discard_pile else None,
                    automatic=automatic and isinstance(event, ev.CardDrawn | ev.CardDiscarded),
                    wild_cut=public.wild_cut,
                )
            )
    return out
