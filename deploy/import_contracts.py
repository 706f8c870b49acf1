"""A contract type for import-linter (``.venv/bin/lint-imports``, the root ``pyproject.toml``):
``variant_free``, "these host modules import no variant's package", over every variant that is
installed, with no list of variants and no exemption for any.

A variant is the bundle an entry point of the group ``rummy.variants`` names
(``rummy_game.bundle.VariantBundle``). Its packages are where its pieces live: the package of its
rules class (``rummy_rules.indian``), its wire's module (``rummy_game.indian``) and the package of
each of its payload modules (``rummy.indian.v1``). A contract of this type is a ``forbidden``
contract whose forbidden modules are those packages of every installed variant, found when the
linter runs (so a variant installed later is covered by the same rule); it takes the
``forbidden`` contract's other options (``source_modules``, ``allow_indirect_imports``, ...).
"""

from __future__ import annotations

from importlib.metadata import entry_points
from typing import Any

from importlinter.contracts.forbidden import ForbiddenContract
from importlinter.contracts.independence import IndependenceContract

#: The entry-point group of the variant bundles (``rummy_rules.registry.ENTRY_POINT_GROUP``).
GROUP = "rummy.variants"


def _package(module: str, roots: frozenset[str]) -> str:
    """The package a variant's module stands for: the module itself when it sits directly in a
    root package (``rummy_game.indian``), else its parent (``rummy_rules.indian.variant`` ->
    ``rummy_rules.indian``, ``rummy.indian.v1.events_pb2`` -> ``rummy.indian.v1``)."""
    parent = module.rpartition(".")[0]
    return module if parent in roots or not parent else parent


def _bundles() -> list[tuple[str, Any]]:
    """``(entry point name, bundle)`` of every installed variant. Raises TypeError for an entry
    point that is no bundle."""
    found = []
    for point in entry_points(group=GROUP):
        bundle = point.load()
        if getattr(bundle, "variant", None) is None or getattr(bundle, "wire", None) is None:
            raise TypeError(f"entry point {point.name!r} ({point.value}) is not a variant bundle")
        found.append((point.name, bundle))
    return found


def variant_packages(roots: frozenset[str]) -> list[str]:
    """Every installed variant's packages, sorted. Raises TypeError for an entry point that is
    no bundle."""
    found: set[str] = set()
    for _, bundle in _bundles():
        modules = [type(bundle.variant).__module__, type(bundle.wire).__module__]
        modules += [m.__name__ for m in getattr(bundle, "payload_modules", ())]
        found.update(_package(m, roots) for m in modules)
    return sorted(found)


def variant_rules_packages(roots: frozenset[str]) -> list[str]:
    """The package of every installed variant's rules class (``rummy_rules.indian``), sorted."""
    return sorted({_package(type(b.variant).__module__, roots) for _, b in _bundles()})


class VariantFreeContract(ForbiddenContract):
    """``forbidden``, with ``forbidden_modules`` = :func:`variant_packages`."""

    type_name = "variant_free"

    def __init__(
        self, name: str, session_options: dict[str, Any], contract_options: dict[str, Any]
    ) -> None:
        roots = frozenset(session_options.get("root_packages", ()))
        options = {**contract_options, "forbidden_modules": variant_packages(roots)}
        super().__init__(name, session_options, options)


class VariantsIndependentContract(IndependenceContract):
    """``independence`` over :func:`variant_rules_packages`: no variant's rules import another's
    (what two variants share lives in the generic modules)."""

    type_name = "variants_independent"

    def __init__(
        self, name: str, session_options: dict[str, Any], contract_options: dict[str, Any]
    ) -> None:
        roots = frozenset(session_options.get("root_packages", ()))
        options = {**contract_options, "modules": variant_rules_packages(roots)}
        super().__init__(name, session_options, options)
