"""The ledger's one upcast step: the one old shape it reads of the table stream's payloads, made
current before it records a table's or a hand's variant. Listed with every other old shape in
``docs/rules/event-tags.md#deprecated``.

- a recorded ``rummy.common.v1.RuleSet`` (``TableOpened.rule_set``, ``HandStarted.rule_set``)
  that names no variant (written before ``RuleSet.variant``; every such table or hand was the
  legacy variant's, ``rummy_rules.registry.LEGACY_VARIANT``): read as naming it (row
  ``rule-set-no-variant``; when it may be dropped: ``docs/rules/event-tags.md#may-drop``).

The ledger has its own module rather than the table stream's upcast (``rummy_game.upcast``, which
reads the same rule sets so), as the dealer has (``rummy_dealer.application.upcast``): it
depends on the rules library and the platform only, not on ``rummy_game``, and it reads a
variant's name only (it looks no variant up).
"""

from __future__ import annotations

from rummy.common.v1 import cards_pb2
from rummy_rules.registry import LEGACY_VARIANT


def variant_name(rule_set: cards_pb2.RuleSet) -> str:
    """The variant a table event's rule set names, in the current shape (left out: the legacy
    variant, :data:`rummy_rules.registry.LEGACY_VARIANT`; set and empty: ``""``). A name only:
    the ledger looks no variant up. Never raises."""
    return rule_set.variant if rule_set.HasField("variant") else LEGACY_VARIANT
