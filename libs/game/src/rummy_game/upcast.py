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
  table stream v2;
- a ``rummy.table.v1.HandEnded`` whose seats' ``Arrangement.deadwood_points`` a writer before
  issue 29 counted in Indian points' card values whatever the hand's variant (a gin or Rummy 500
  ace as 10): read, with the hand's context (:func:`hand_payload`), as its variant counts it
  (``Variant.deadwood_points``). May be dropped with table stream v2.
"""

from __future__ import annotations

from google.protobuf.message import Message

from rummy.common.v1 import cards_pb2
from rummy.table.v1 import events_pb2 as table_pb
from rummy_rules import registry
from rummy_rules.cards import Card
from rummy_rules.rules import RuleSetError
from rummy_rules.wild import hand_points

from . import variant_wires
from .variant_wire import HandContext, StreamPayloadError, cards_from_pb


def payload(message: Message) -> Message:
    """``message`` in the current shape: a copy when an old shape was upcast, else ``message``
    itself (never changed in place). Never raises."""
    if isinstance(message, table_pb.SeedsLocked) and not message.variant:
        copy = table_pb.SeedsLocked()
        copy.CopyFrom(message)
        copy.variant = registry.LEGACY_VARIANT
        return copy
    return message


def hand_payload(message: Message, ctx: HandContext, wild_cut: Card | None = None) -> Message:
    """A payload of the hand ``ctx`` in the current shape (:func:`payload`, and the old shapes
    that only the hand tells: its variant, ``wild_cut`` its cut card, None if it cut none): a
    copy when an old shape was upcast, else ``message`` itself (never changed in place). Never
    raises: what it cannot read (a card outside the shoe, a variant not installed) is left for
    the reader to refuse."""
    message = payload(message)
    if isinstance(message, table_pb.HandEnded):
        return _hand_ended(message, ctx, wild_cut)
    return message


def _hand_ended(
    message: table_pb.HandEnded, ctx: HandContext, wild_cut: Card | None
) -> table_pb.HandEnded:
    """Each seat's deadwood points as the hand's variant counts them, where the record holds
    what the writer before issue 29 counted instead (``rummy_rules.wild.hand_points``, Indian
    points' values, under the hand's wild rank) and the two differ; any other recorded value is
    kept, for the reader to judge."""
    wild_rank = None if wild_cut is None else wild_cut.rank
    try:
        variant = registry.lookup(ctx.rule_set.variant)
        now = []
        for r in message.results:
            deadwood = cards_from_pb(r.arrangement.deadwood, ctx.shoe)
            old = hand_points(deadwood, wild_rank)
            now.append((old, variant.deadwood_points(ctx.rule_set, wild_cut, deadwood)))
    except (registry.UnknownVariant, StreamPayloadError, RuleSetError):
        return message
    moved = [
        k
        for k, (r, (old, today)) in enumerate(zip(message.results, now, strict=True))
        if r.arrangement.deadwood_points == old != today
    ]
    if not moved:
        return message
    copy = table_pb.HandEnded()
    copy.CopyFrom(message)
    for k in moved:
        copy.results[k].arrangement.deadwood_points = now[k][1]
    return copy


def rule_set(options: cards_pb2.RuleSet) -> cards_pb2.RuleSet:
    """A recorded rule set in the current shape, by its variant's wire (left out: the legacy
    variant): a copy when something changed, else ``options`` itself. Never raises: a rule set
    of a variant without a wire here is returned as it is (its reader refuses it)."""
    name = options.variant if options.HasField("variant") else registry.LEGACY_VARIANT
    try:
        wire = variant_wires.lookup(name)
    except variant_wires.UnknownWire:
        return options
    return wire.upcast_options(options)
