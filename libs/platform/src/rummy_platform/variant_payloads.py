"""The event payload modules of the variants (one line per variant), and the old type names
their events were recorded under.

Every reader of an event stream (:func:`rummy_platform.envelope.event_payloads`) knows these
payloads, so a service that hosts no rules of a variant (the ledger reading ``table-events``)
still decodes a stream holding that variant's events. A variant outside this repository's protos
(a plug-in, the test suite's toy) adds its module with :func:`register_module`.
"""

from __future__ import annotations

from types import ModuleType

from rummy.indian.v1 import events_pb2 as indian_events

_MODULES: list[ModuleType] = [
    indian_events,
]

#: Type names written before a variant's events had their own package -> the message they are
#: read as (same field numbers). Indian hands recorded before the move wrote ``rummy.table.v1``.
ALIASES: dict[str, str] = {
    "rummy.table.v1.Declared": "rummy.indian.v1.Declared",
    "rummy.table.v1.DeclarationRejected": "rummy.indian.v1.DeclarationRejected",
    "rummy.table.v1.PlayerDropped": "rummy.indian.v1.PlayerDropped",
}


def register_module(module: ModuleType) -> None:
    """Make every top-level message of a variant's generated ``*_pb2`` module known to every
    registry made from then on (registering a module twice is harmless)."""
    if module not in _MODULES:
        _MODULES.append(module)


def modules() -> tuple[ModuleType, ...]:
    """Every variant's event payload module, in the order registered."""
    return tuple(_MODULES)
