"""The one upcast step of the table stream's payloads (protobuf): a payload written by an older
table service becomes the current shape before a reader compares or folds it, so replay sees
current shapes only. Readers call :func:`payload`; the rules library's JSON has its own step
(``rummy_rules.upcast``), and the list of every old shape, with the version that may drop it, is
``docs/rules/event-tags.md#old-shapes``.

Old shapes read here (:func:`payload`, and :func:`rule_set` for a recorded rule set):

- a ``rummy.table.v1.SeedsLocked`` that names no variant (written before ``SeedsLocked.variant``;
  every such hand was played by the legacy variant, ``rummy_rules.registry.LEGACY_VARIANT``):
  read as naming it. May be dropped with table stream v2;
- a recorded ``rummy.common.v1.RuleSet`` of a writer before explicit presence, which left proto3
  zeros out: its variant's wire reads it as that writer meant it
  (``VariantWire.upcast_options``; Indian points: a switch left out was off). May be dropped with
  table stream v2.
"""

from __future__ import annotations

from google.protobuf.message import Message

from rummy.common.v1 import cards_pb2
from rummy.table.v1 import events_pb2 as table_pb
from rummy_rules import registry

from . import wires


def payload(message: Message) -> Message:
    """``message`` in the current shape: a copy when an old shape was upcast, else ``message``
    itself (never changed in place). Never raises."""
    if isinstance(message, table_pb.SeedsLocked) and not message.variant:
        copy = table_pb.SeedsLocked()
        copy.CopyFrom(message)
        copy.variant = registry.LEGACY_VARIANT
        return copy
    return message


def rule_set(options: cards_pb2.RuleSet) -> cards_pb2.RuleSet:
    """A recorded rule set in the current shape, by its variant's wire (left out: the legacy
    variant): a copy when something changed, else ``options`` itself. Never raises: a rule set
    of a variant without a wire here is returned as it is (its reader refuses it)."""
    name = options.variant if options.HasField("variant") else registry.LEGACY_VARIANT
    try:
        wire = wires.lookup(name)
    except wires.UnknownWire:
        return options
    return wire.upcast_options(options)
