"""The toy variant as a plug-in: ``RUMMY_VARIANT_PLUGINS=toy_variant.plugin`` makes a service
process, ``rummy`` or a test harness load it (``rummy_platform.plugins``). Importing this module
installs the toy's bundle (``toy_variant.wire.TOY_BUNDLE``, one call): its rules, its wire (its
options, its ``Knocked`` and its ``Knock``), its event payloads and codec classes."""

from __future__ import annotations

from .game import TOY
from .wire import register_toy

register_toy()

__all__ = ["TOY"]
