"""The variants' wires, found by the variant name a hand pinned.

A host (the table service, replay, the bots) finds a hand's
:class:`rummy_game.variant_wire.VariantWire`
with :func:`lookup` (by name: a record that names no variant is upcast first,
``rummy_game.upcast.variant_of``) and maps the variant's
events, options and commands through it without knowing them. No variant is named here: a
variant's bundle (``rummy_game.bundle.VariantBundle``) adds its wire with :func:`register` when it
is installed (found by entry point, ``rummy_rules.registry.discover``, or by a plug-in's import).
"""

from __future__ import annotations

from collections.abc import Iterator

from google.protobuf.message import Message

from rummy_rules import registry

from .variant_wire import VariantWire

_WIRES: dict[str, VariantWire] = {}


class UnknownWire(LookupError):
    """No wire is registered for this variant name."""


def register(wire: VariantWire) -> None:
    """Make ``wire`` findable by its variant's name. Raises ValueError if another wire holds
    it."""
    known = _WIRES.get(wire.variant)
    if known is not None and known is not wire:
        raise ValueError(f"another wire is registered for {wire.variant!r}")
    _WIRES[wire.variant] = wire


def lookup(variant: str) -> VariantWire:
    """The wire of the variant named ``variant``. Raises UnknownWire (for ``""`` too: no
    variant's name)."""
    registry.discover()
    wire = _WIRES.get(variant)
    if wire is None:
        raise UnknownWire(f"no wire is registered for variant {variant!r}")
    return wire


def all_wires() -> Iterator[VariantWire]:
    """Every registered wire."""
    registry.discover()
    return iter(tuple(_WIRES.values()))


def owner_of_command(message_type: str) -> VariantWire | None:
    """The wire whose command messages include the type ``message_type`` (a full protobuf
    name); None when no registered variant has it."""
    for wire in all_wires():
        if any(c.DESCRIPTOR.full_name == message_type for c in wire.command_types):
            return wire
    return None


def is_variant_event(payload: Message) -> bool:
    """Whether ``payload`` is one of some registered variant's own hand events."""
    return any(type(payload) in wire.event_types for wire in all_wires())


def metric_of(payload: Message) -> tuple[str, str] | None:
    """The table metric a variant's own event counts (``VariantWire.metric``), or None."""
    for wire in all_wires():
        if type(payload) in wire.event_types:
            return wire.metric(payload)
    return None


def hosted_variants() -> tuple[str, ...]:
    """The variants a host can play here, sorted: registered with both their rules
    (``rummy_rules.registry``) and their wire."""
    return tuple(name for name in registry.names() if name in _WIRES)
