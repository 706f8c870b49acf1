"""The toy variant as a plug-in: ``RUMMY_VARIANT_PLUGINS=toy_variant.plugin`` makes a service
process, ``rummy`` or a test harness load it (``rummy_platform.plugins``). Importing this module
registers the toy with every registry a host looks a variant up in: today the rules' (its game
module registers :data:`toy_variant.TOY` with ``rummy_rules.registry`` on import)."""

from __future__ import annotations

from .game import TOY

__all__ = ["TOY"]
