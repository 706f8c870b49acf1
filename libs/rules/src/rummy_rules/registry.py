"""The variants a host can play, found by the name a hand pinned: one line per variant.

A hand's ``HandStarted`` pins its rule set (``RuleSet.variant``, and its label
``"<name>/<version>"``, the envelope's ``rules_version``); a host (the table, the dealer, replay)
calls :func:`lookup` with them and plays the hand through the ``rummy_rules.variant.Variant``
interface without knowing its rules. A variant outside this library (a test suite's toy, a
plug-in) adds itself with :func:`register`.
"""

from __future__ import annotations

from typing import Any

from .indian.variant import INDIAN_POINTS
from .variant import Variant

_VARIANTS: dict[str, Variant[Any]] = {
    INDIAN_POINTS.name: INDIAN_POINTS,
}

#: The variant of records written before a hand's events named one (every such hand is Indian
#: points): what a host assumes when a record leaves the variant out.
LEGACY_VARIANT = INDIAN_POINTS.name


class UnknownVariant(LookupError):
    """No registered variant has this name, or it does not play this rule-set label."""


def register(variant: Variant[Any]) -> None:
    """Make ``variant`` findable by its name. Raises ValueError if another variant holds it."""
    known = _VARIANTS.get(variant.name)
    if known is not None and known is not variant:
        raise ValueError(f"another variant is registered as {variant.name!r}")
    _VARIANTS[variant.name] = variant


def names() -> tuple[str, ...]:
    """Every registered variant's name, sorted."""
    return tuple(sorted(_VARIANTS))


def lookup(name: str, rules_version: str | None = None) -> Variant[Any]:
    """The variant registered as ``name`` (``""`` means :data:`LEGACY_VARIANT`); with
    ``rules_version`` (``"bombay-baazi/1"``; ``""`` or None: not checked), one that plays it.
    Raises UnknownVariant."""
    variant = _VARIANTS.get(name or LEGACY_VARIANT)
    if variant is None:
        raise UnknownVariant(f"no variant {name!r} is registered (known: {', '.join(names())})")
    if rules_version and rules_version not in variant.rules_versions:
        raise UnknownVariant(f"variant {variant.name!r} does not play rules {rules_version!r}")
    return variant
