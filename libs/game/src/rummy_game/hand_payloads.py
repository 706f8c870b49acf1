"""The payloads a hand's commands cause, decided in turn: the one step the table service and the
replay's ``rules`` check share.

Why this stays in a library (issue 28): the table's domain lives in its service
(``rummy_table.domain``), which ops may not import; the replay must re-decide a recorded hand
exactly as the table does (same events, same payloads: the top discard, the automatic flag of a
timed-out seat's draw and discard, the wild cut), so that step is one function here that both
call, and nothing else of the table is shared.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from google.protobuf.message import Message

from rummy_game import stream_payloads
from rummy_rules import events as ev
from rummy_rules.commands import Command
from rummy_rules.variant import Variant

#: The variant's ``decide`` (``(state, command) -> events``; raises RuleViolation).
Decide = Callable[[Any, Command], tuple[ev.Event, ...]]


def hand_payloads(
    variant: Variant[Any],
    state: Any,
    ctx: stream_payloads.HandContext,
    commands: Sequence[Command],
    decide: Decide | None = None,
) -> list[tuple[Message, Any]]:
    """Each payload the events of ``commands`` (decided in turn from hand state ``state`` of the
    hand ``ctx``) are written as, with the hand state after it. ``decide``: the variant's, by
    default ``variant.decide``. Raises RuleViolation when the rules refuse a command."""
    decide = variant.decide if decide is None else decide
    out: list[tuple[Message, Any]] = []
    automatic = False
    for command in commands:
        for event in decide(state, command):
            state = variant.apply(state, event)
            if isinstance(event, ev.TurnTimedOut):
                automatic = True
            elif isinstance(event, ev.TurnStarted):
                automatic = False
            public = variant.view(state, -1)
            payload = stream_payloads.to_payload(
                event,
                ctx,
                top_discard=public.discard_pile[-1] if public.discard_pile else None,
                automatic=automatic and isinstance(event, ev.CardDrawn | ev.CardDiscarded),
                wild_cut=public.wild_cut,
            )
            out.append((payload, state))
    return out
