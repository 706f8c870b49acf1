"""The ``rummy`` command loads the variant plug-ins of ``RUMMY_VARIANT_PLUGINS`` before any
subcommand (replay verifies their hands, the bots play them), and refuses to run one when a
plug-in cannot be imported or registers no variant."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from click.testing import CliRunner

from rummy_ops.cli import main

#: Runs ``rummy token --help`` in a fresh interpreter, then prints whether the plug-in module was
#: imported and the registry's names: a first import, which this test process (where other tests
#: already imported and registered the toy) cannot show.
_FRESH_RUMMY = """
import sys
from click.testing import CliRunner
from rummy_ops.cli import main
from rummy_rules import registry
assert "toy_variant.plugin" not in sys.modules
result = CliRunner().invoke(main, ["token", "--help"])
print(result.exit_code, "toy_variant.plugin" in sys.modules, ",".join(registry.names()))
"""


def test_rummy_loads_the_plug_ins_before_its_subcommand() -> None:
    path = os.pathsep.join(p for p in sys.path if p)  # tests/support (the toy) is on pytest's
    env = {**os.environ, "RUMMY_VARIANT_PLUGINS": "toy_variant.plugin", "PYTHONPATH": path}
    run = subprocess.run(
        [sys.executable, "-c", _FRESH_RUMMY], env=env, capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0, run.stderr
    exit_code, imported, names = run.stdout.split()
    assert (exit_code, imported) == ("0", "True")
    assert "toy-knock" in names.split(",")


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
