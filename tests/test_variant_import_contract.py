"""The one import rule over variants (``deploy/import_contracts.py``, type ``variant_free``): its
forbidden modules are the packages of every installed variant, found from the bundles, so the
rule names no variant and exempts none."""

from __future__ import annotations

import importlib
import pkgutil
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from deploy.import_contracts import variant_packages, variant_rules_packages  # noqa: E402

ROOTS = frozenset({"rummy", "rummy_rules", "rummy_game", "rummy_platform", "rummy_ops"})


#: The product's own variants' pieces (Indian points, the gin family, Rummy 500): their rules
#: package, their wire's module and their payload package.
PRODUCT_PIECES = {
    "rummy.indian.v1", "rummy_game.indian", "rummy_rules.indian",
    "rummy.gin.v1", "rummy_game.gin", "rummy_rules.gin",
    "rummy.rummy500.v1", "rummy_game.rummy500", "rummy_rules.rummy500",
}  # fmt: skip


def test_the_forbidden_packages_are_the_installed_variants_pieces() -> None:
    assert variant_packages(ROOTS) == sorted(PRODUCT_PIECES)


def test_the_contracts_name_no_variant_package() -> None:
    config = (ROOT / "pyproject.toml").read_text()
    contracts = config[config.index("[tool.importlinter]") :]
    for package in variant_packages(ROOTS):
        assert f'"{package}' not in contracts, package


def _words(name: str) -> set[str]:
    """The lower-case words of an identifier (``INDIAN_DEAL_RULES``, ``BeginDeal``)."""
    return {
        w.lower() for part in name.split("_") for w in re.findall(r"[A-Z]?[a-z0-9]+|[A-Z]+", part)
    }


def test_no_name_in_the_match_formats_names_a_variant() -> None:
    """Beyond imports: a generic module may not hold a variant's rules under its name either
    (the formats once held ``INDIAN_FORMAT_SEATS`` and ``INDIAN_DEAL_RULES``; a format asks its
    variant, ``Variant.deal_rule_set``). The variants are the installed ones' rules packages."""
    variants = {p.rpartition(".")[2] for p in variant_rules_packages(ROOTS)}
    assert {"indian", "gin"} <= variants
    package = importlib.import_module("rummy_rules.formats")
    for info in pkgutil.iter_modules(package.__path__, "rummy_rules.formats."):
        module = importlib.import_module(info.name)
        own = [
            n for n, v in vars(module).items() if getattr(v, "__module__", info.name) == info.name
        ]
        for name in own:
            assert not _words(name) & variants, f"{info.name}.{name} names a variant"
