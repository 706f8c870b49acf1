"""The ``rummy`` command loads the variant plug-ins of ``RUMMY_VARIANT_PLUGINS`` before any
subcommand (replay verifies their hands, the bots play them), and refuses to run one when a
plug-in cannot be imported."""

from __future__ import annotations

import sys

from click.testing import CliRunner

from rummy_ops.cli import main
from rummy_rules import registry


def test_rummy_loads_the_plug_ins_before_its_subcommand() -> None:
    sys.modules.pop("toy_variant.plugin", None)  # imported again only if rummy loads it
    result = CliRunner().invoke(
        main, ["token", "--help"], env={"RUMMY_VARIANT_PLUGINS": "toy_variant.plugin"}
    )
    assert result.exit_code == 0, result.output
    assert "toy_variant.plugin" in sys.modules
    assert "toy-knock" in registry.names()


def test_rummy_with_a_plug_in_that_cannot_be_imported_exits_2_naming_it() -> None:
    result = CliRunner().invoke(
        main, ["token", "--help"], env={"RUMMY_VARIANT_PLUGINS": "no_such_variant_plugin"}
    )
    assert result.exit_code == 2
    assert "variant plug-in 'no_such_variant_plugin' (RUMMY_VARIANT_PLUGINS) failed to import" in (
        result.output
    )
