"""The one upcast step of the table stream's protobuf (payloads and recorded rule sets): a
payload or rule set written by an older table service becomes the current shape, exactly as
today's writer writes it, before a host folds it or replay compares it, so hosts, replay and
the verifier see current shapes only. The rules library's JSON has its own step
(``rummy_rules.upcast``), the dealer its own for the one payload it reads
(``rummy_dealer.application.upcast``), the ledger its own for the rule sets' variant it reads
(``rummy_ledger.application.upcast``); the one list of every old shape, what reads it and the
version that may drop it, is ``docs/rules/event-tags.md#old-shapes``.

Old shapes read here (each a row of that list, which says when it may be dropped:
``#may-drop``):

- :data:`TYPE_ALIASES`: the deprecated ``rummy.table.v1`` types the Indian events were recorded
  under before they had their own package (same field numbers), read as ``rummy.indian.v1.*``
  (the Indian bundle's ``payload_aliases``; ``rummy_platform.envelope.event_payloads`` unpacks
  them so);
- a rule set that names no variant (:func:`variant_of`; every such table or hand is the legacy
  variant's, ``rummy_rules.registry.LEGACY_VARIANT``), and a ``rummy.table.v1.SeedsLocked`` that
  names none (:func:`payload`): read as naming it, so no lookup is asked for ``""``;
- a recorded ``rummy.common.v1.RuleSet`` (:func:`rule_set`; :func:`payload` for a
  ``TableOpened`` or ``HandStarted``) of a writer before explicit presence, which left proto3
  zeros out, or before ``RuleSet.variant_options``, which wrote the Indian options in the flat
  fields 2-5, 7 and 8 only: its variant's wire reads it as that writer meant it and adds what
  today's writer adds (``VariantWire.upcast_options``, with the variant's house rule set at the
  record's seat count: the shoes such a hand was dealt from);
- a ``rummy.table.v1.HandEnded`` whose seats' ``Arrangement.deadwood_points`` a writer before
  issue 29 counted in Indian points' card values whatever the hand's variant (a gin or Rummy 500
  ace as 10): read, with the hand's context (:func:`hand_payload`), as its variant counts it
  (``Variant.deadwood_points``).

The older per-command RPCs' requests (``rummy.table.v1.DeclareRequest``, ``DropRequest``) are
not records: the hand's variant's wire turns one into the command message a ``PlayRequest``
carries today (``VariantWire.request_command``), as the table's ``play`` reads it.
"""

from __future__ import annotations

from typing import TypeVar

from google.protobuf.message import Message

from rummy.common.v1 import cards_pb2
from rummy.table.v1 import events_pb2 as table_pb
from rummy_rules import registry
from rummy_rules.cards import Card
from rummy_rules.rules import RuleSet, RuleSetError
from rummy_rules.wild import hand_points

from . import variant_wires
from .variant_wire import HandContext, StreamPayloadError, cards_from_pb

#: Old full type name -> the message it is read as (same field numbers): the Indian events as the
#: table service recorded them before they had their own package (``rummy.table.v1.Declared``,
#: ``DeclarationRejected``, ``PlayerDropped``, deprecated in ``protos/rummy/table/v1/events.proto``,
#: with their ``DropKind``). Frozen: a variant's new messages live in its own package.
TYPE_ALIASES: dict[str, str] = {
    f"rummy.table.v1.{name}": f"rummy.indian.v1.{name}"
    for name in ("Declared", "DeclarationRejected", "PlayerDropped")
}


def variant_of(options: cards_pb2.RuleSet) -> str:
    """The variant a rule set names (a record or request that leaves it out: the legacy variant,
    ``rummy_rules.registry.LEGACY_VARIANT``; set and empty: ``""``, for the reader to refuse)."""
    return options.variant if options.HasField("variant") else registry.LEGACY_VARIANT


def payload(message: Message) -> Message:
    """``message`` in the current shape: a copy when an old shape was upcast (a SeedsLocked that
    names no variant; the rule set of a TableOpened or HandStarted, :func:`rule_set` at its
    seat count), else ``message`` itself (never changed in place). Never raises."""
    if isinstance(message, table_pb.SeedsLocked) and not message.variant:
        copy = table_pb.SeedsLocked()
        copy.CopyFrom(message)
        copy.variant = registry.LEGACY_VARIANT
        return copy
    if isinstance(message, table_pb.TableOpened):
        return _rule_set_upcast(message)
    if isinstance(message, table_pb.HandStarted):
        return _rule_set_upcast(message)
    return message


_Opening = TypeVar("_Opening", table_pb.TableOpened, table_pb.HandStarted)


def _rule_set_upcast(message: _Opening) -> _Opening:
    """``message`` with its rule set upcast (:func:`rule_set` at its seat count): a copy when
    that changed it, else ``message`` itself."""
    given = message.rule_set
    current = rule_set(given, message.seat_count)
    if current is given:
        return message
    copied = type(message)()
    copied.CopyFrom(message)
    copied.rule_set.CopyFrom(current)
    return copied


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


def rule_set(options: cards_pb2.RuleSet, seats: int) -> cards_pb2.RuleSet:
    """A recorded rule set of a table of ``seats`` seats in the current shape, exactly as today's
    writer writes the rule set it decodes to: its variant named (:func:`variant_of`), its
    variant's options as that variant's wire upcasts them (``VariantWire.upcast_options``, with
    the variant's house rule set at ``seats``). A copy when something changed, else ``options``
    itself. Never raises: a rule set of a variant without a wire here keeps its options as they
    are (its reader refuses it)."""
    name = variant_of(options)
    current = options
    if not options.HasField("variant"):
        current = cards_pb2.RuleSet()
        current.CopyFrom(options)
        current.variant = name
    try:
        wire = variant_wires.lookup(name)
        variant = registry.lookup(name)
    except (variant_wires.UnknownWire, registry.UnknownVariant):
        return current
    try:
        house: RuleSet | None = variant.house_rule_set(seats, 0, 0)
    except RuleSetError:  # no house rule set at that seat count: the reader refuses it
        house = None
    return wire.upcast_options(current, house)
