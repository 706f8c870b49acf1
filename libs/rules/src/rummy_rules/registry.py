"""The variants a host can play, found by the name a hand pinned.

A hand's ``HandStarted`` pins its rule set (``RuleSet.variant``, and its label
``"<name>/<version>"``, the envelope's ``rules_version``); a host (the table, the dealer, replay)
calls :func:`lookup` with them and plays the hand through the ``rummy_rules.variant.Variant``
interface without knowing its rules.

No variant is named here. Each is a bundle (``rummy_game.bundle.VariantBundle``: its rules, wire,
payload modules, codec classes, bot, verifier script and docs) installed by one call:

- a package that ships a variant declares it in the entry-point group :data:`ENTRY_POINT_GROUP`
  (``[project.entry-points."rummy.variants"]`` in its ``pyproject.toml``, the value an object
  with an ``install()`` method, e.g. ``"rummy_game.indian:INDIAN_BUNDLE"``); the first lookup
  (:func:`discover`) loads every such entry point and calls ``install()`` on it, so an installed
  package adds a game with no edit to this tree (the product's Indian points is found so);
- a module that is not installed (a test suite's toy, ``RUMMY_VARIANT_PLUGINS``) calls its
  bundle's ``install()`` when imported; :func:`register` is what that call does here.
"""

from __future__ import annotations

from importlib.metadata import entry_points
from typing import Any, Protocol

from .variant import Variant

#: The Python entry-point group a package declares its variant bundles in.
ENTRY_POINT_GROUP = "rummy.variants"

_VARIANTS: dict[str, Variant[Any]] = {}

#: The variant of records written before a hand's events named one (every such hand is Indian
#: points, whose bundle is installed by the product): what the upcast of a record that leaves
#: the variant out names (``rummy_game.upcast.variant_of``, ``rummy_dealer.application.upcast``;
#: ``docs/rules/event-tags.md#old-shapes``), so :func:`lookup` is always asked for a name. A
#: name only: nothing here imports that variant.
LEGACY_VARIANT = "indian-points"


class UnknownVariant(LookupError):
    """No registered variant has this name, or it does not play this rule-set label."""


class Installable(Protocol):
    """What an entry point of :data:`ENTRY_POINT_GROUP` names: a bundle that installs itself
    into every host registry (``rummy_game.bundle.VariantBundle``)."""

    def install(self) -> None: ...


_discovered = False


def discover() -> None:
    """Load every entry point of :data:`ENTRY_POINT_GROUP` and install it, once per process
    (later calls return at once). Raises TypeError naming an entry point whose object has no
    ``install()``; an entry point that fails to import raises its error."""
    global _discovered
    if _discovered:
        return
    _discovered = True
    for point in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda p: p.name):
        bundle = point.load()
        install = getattr(bundle, "install", None)
        if not callable(install):
            raise TypeError(
                f"entry point {point.name!r} ({point.value}) of group {ENTRY_POINT_GROUP!r} is "
                f"not a variant bundle (no install())"
            )
        install()


def register(variant: Variant[Any]) -> None:
    """Make ``variant`` findable by its name (a bundle's ``install()`` calls it). Raises
    ValueError if another variant holds it."""
    known = _VARIANTS.get(variant.name)
    if known is not None and known is not variant:
        raise ValueError(f"another variant is registered as {variant.name!r}")
    _VARIANTS[variant.name] = variant


def names() -> tuple[str, ...]:
    """Every registered variant's name, sorted (the installed bundles discovered first)."""
    discover()
    return tuple(sorted(_VARIANTS))


def variants() -> tuple[Variant[Any], ...]:
    """Every registered variant, by name."""
    discover()
    return tuple(_VARIANTS[name] for name in sorted(_VARIANTS))


def lookup(name: str, rules_version: str | None = None) -> Variant[Any]:
    """The variant registered as ``name`` (a record that names none is upcast to
    :data:`LEGACY_VARIANT` before it is looked up: ``""`` is no variant's name); with
    ``rules_version`` (``"bombay-baazi/1"``; ``""`` or None: not checked), one that plays it.
    Raises UnknownVariant."""
    discover()
    variant = _VARIANTS.get(name)
    if variant is None:
        raise UnknownVariant(f"no variant {name!r} is registered (known: {', '.join(names())})")
    if rules_version and rules_version not in variant.rules_versions:
        raise UnknownVariant(f"variant {variant.name!r} does not play rules {rules_version!r}")
    return variant
