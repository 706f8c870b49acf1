"""The toy variant as a plug-in: ``RUMMY_VARIANT_PLUGINS=toy_variant.plugin`` makes a service
process, ``rummy`` or a test harness load it (``rummy_platform.plugins``). Importing this module
registers the toy with every registry a host looks a variant up in: the rules'
(``rummy_rules.registry``), the wires' (``rummy_game.wires``: its options, its ``Knocked`` and
its ``Knock`` on the wire) and the event payloads' (``rummy_platform.variant_payloads``)."""

from __future__ import annotations

from .game import TOY
from .wire import register_toy

register_toy()

__all__ = ["TOY"]
