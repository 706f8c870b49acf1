"""The dealer's one upcast step: the one old shape of the one payload it reads from the table
stream, made current before it deals. Listed with every other old shape in
``docs/rules/event-tags.md#deprecated``.

- a ``rummy.table.v1.SeedsLocked`` that names no variant (written before ``SeedsLocked.variant``;
  every such hand was the legacy variant's, ``rummy_rules.registry.LEGACY_VARIANT``): read as
  naming it (row ``seeds-locked-no-variant``; when it may be dropped:
  ``docs/rules/event-tags.md#may-drop``).

The dealer has its own module rather than the table stream's upcast (``rummy_game.upcast``, which
reads the same SeedsLocked so): the dealer depends on the rules library and the platform only,
not on ``rummy_game`` (the hosts' variant wires, bundles and rule-set mapping it has no use for),
and the platform, which names no variant and does not depend on the rules library, cannot say
which variant the old records played. The one fact both read, the legacy variant's name, is
``rummy_rules.registry.LEGACY_VARIANT``.
"""

from __future__ import annotations

from rummy.table.v1 import events_pb2 as table_events
from rummy_rules.registry import LEGACY_VARIANT


def seeds_locked(locked: table_events.SeedsLocked) -> table_events.SeedsLocked:
    """``locked`` in the current shape: a copy naming the legacy variant when it names none,
    else ``locked`` itself (never changed in place). Never raises."""
    if locked.HasField("variant"):
        return locked
    current = table_events.SeedsLocked()
    current.CopyFrom(locked)
    current.variant = LEGACY_VARIANT
    return current
