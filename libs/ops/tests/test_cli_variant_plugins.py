"""The ``rummy`` command loads the variant plug-ins of ``RUMMY_VARIANT_PLUGINS`` before any
subcommand (replay verifies their hands, the bots play them), and refuses to run one when a
plug-in cannot be imported or registers no variant."""

from __future__ import annotations

import sys
import uuid
from pathlib import Path

import pytest
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


def test_rummy_with_a_plug_in_that_registers_no_variant_exits_2_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = f"empty_plugin_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{module}.py").write_text('"""A plug-in that forgot to register its variant."""\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        result = CliRunner().invoke(
            main, ["token", "--help"], env={"RUMMY_VARIANT_PLUGINS": module}
        )
    finally:
        sys.modules.pop(module, None)
    assert result.exit_code == 2
    assert f"variant plug-in {module!r} (RUMMY_VARIANT_PLUGINS) registered no variant" in (
        result.output
    )
