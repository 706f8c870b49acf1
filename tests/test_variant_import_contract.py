"""The one import rule over variants (``deploy/import_contracts.py``, type ``variant_free``): its
forbidden modules are the packages of every installed variant, found from the bundles, so the
rule names no variant and exempts none."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from deploy.import_contracts import variant_packages  # noqa: E402

ROOTS = frozenset({"rummy", "rummy_rules", "rummy_game", "rummy_platform", "rummy_ops"})


#: The product's own variants' pieces (Indian points, the gin family): their rules package, their
#: wire's module and their payload package.
PRODUCT_PIECES = {
    "rummy.indian.v1", "rummy_game.indian", "rummy_rules.indian",
    "rummy.gin.v1", "rummy_game.gin", "rummy_rules.gin",
}  # fmt: skip


def test_the_forbidden_packages_are_the_installed_variants_pieces() -> None:
    assert variant_packages(ROOTS) == sorted(PRODUCT_PIECES)


def test_the_contracts_name_no_variant_package() -> None:
    config = (ROOT / "pyproject.toml").read_text()
    contracts = config[config.index("[tool.importlinter]") :]
    for package in variant_packages(ROOTS):
        assert f'"{package}' not in contracts, package
