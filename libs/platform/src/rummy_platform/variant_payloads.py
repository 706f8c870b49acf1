"""The event payload modules of the variants, and the old type names their events were
recorded under.

Every reader of an event stream (:func:`rummy_platform.envelope.event_payloads`) knows these
payloads, so a service that hosts no rules of a variant (the ledger reading ``table-events``)
still decodes a stream holding that variant's events. No variant is named here: a variant's
bundle (``rummy_game.bundle.VariantBundle``) adds its modules with :func:`register_module` and its
old names with :func:`register_aliases` when it is installed, by its entry point in the group
:data:`ENTRY_POINT_GROUP` (discovered on first use, as ``rummy_rules.registry.discover`` does) or
by a plug-in's import.
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib.metadata import entry_points
from types import ModuleType

#: The entry-point group of the variant bundles (``rummy_rules.registry.ENTRY_POINT_GROUP``).
ENTRY_POINT_GROUP = "rummy.variants"

_MODULES: list[ModuleType] = []

#: Type names written before a variant's events had their own package -> the message they are
#: read as (same field numbers), as the variants' bundles declare them (each bundle's table is
#: its layer's upcast, a row of the one list of deprecated paths:
#: ``docs/rules/event-tags.md#deprecated``).
_ALIASES: dict[str, str] = {}

_discovered = False


def discover() -> None:
    """Install every variant bundle of :data:`ENTRY_POINT_GROUP` once per process (each bundle's
    ``install()`` registers its modules here). Raises TypeError for an entry point that is no
    bundle."""
    global _discovered
    if _discovered:
        return
    _discovered = True
    for point in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda p: p.name):
        install = getattr(point.load(), "install", None)
        if not callable(install):
            raise TypeError(f"entry point {point.name!r} ({point.value}) is not a variant bundle")
        install()


def register_module(module: ModuleType) -> None:
    """Make every top-level message of a variant's generated ``*_pb2`` module known to every
    registry made from then on (registering a module twice is harmless)."""
    if module not in _MODULES:
        _MODULES.append(module)


def register_aliases(aliases: Mapping[str, str]) -> None:
    """Read the old type names of ``aliases`` (old full name -> the message's full name) as
    their messages. Raises ValueError if an old name is already read as another message."""
    for old, new in aliases.items():
        if _ALIASES.get(old, new) != new:
            raise ValueError(f"{old!r} is already read as {_ALIASES[old]!r}")
        _ALIASES[old] = new


def modules() -> tuple[ModuleType, ...]:
    """Every variant's event payload module, in the order registered."""
    discover()
    return tuple(_MODULES)


def aliases() -> dict[str, str]:
    """Every old type name -> the message it is read as."""
    discover()
    return dict(_ALIASES)
