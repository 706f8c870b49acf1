"""The payloads a hand's commands cause, decided in turn (:mod:`rummy_game.hand_decisions`):
what the replay's ``rules`` check compares with the table's stream. The table service decides
the same way in its domain and writes the payloads in its application
(``rummy_table.application.stream_facts``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from google.protobuf.message import Message

from rummy_game import stream_payloads
from rummy_game.hand_decisions import Decide, Decided, decide_in_turn
from rummy_rules.commands import Command
from rummy_rules.variant import Variant


def payload_of(decided: Decided, ctx: stream_payloads.HandContext) -> Message:
    """The payload the event ``decided`` (of hand ``ctx``) is written as."""
    return stream_payloads.to_payload(
        decided.event,
        ctx,
        top_discard=decided.top_discard,
        automatic=decided.automatic,
        wild_cut=decided.wild_cut,
    )


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
    return [(payload_of(d, ctx), d.state) for d in decide_in_turn(variant, state, commands, decide)]
