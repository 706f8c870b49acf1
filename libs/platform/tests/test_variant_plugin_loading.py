"""Variant plug-ins (``RUMMY_VARIANT_PLUGINS``, ``rummy_platform.plugins``): which modules a
setting names, which variant each one brought, a module that fails to import or registers no
variant named in a clear error, and what a service's start logs and exports. The plug-ins here
register into a registry of their own (a module under ``tmp_path``), so no test leaks a variant
into the real one."""

from __future__ import annotations

import json
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import pytest
from prometheus_client import CollectorRegistry

from rummy_platform.config import PLUGINS_VARIABLE, Settings
from rummy_platform.plugins import (
    PluginError,
    import_plugins,
    load_variant_plugins,
    plugin_names,
)
from rummy_testing.token_keys import token_settings


class LedgerLike(Settings):
    service: ClassVar[str] = "ledger"


class FakeRegistry:
    """Where the plug-in modules of a test register their variants (a module they import)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def names(self) -> tuple[str, ...]:
        return tuple(sorted(sys.modules[self.name].NAMES))


@pytest.fixture
def plugins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[FakeRegistry, str]]:
    """A fake registry already holding ``indian-points``, and a unique module prefix for the
    test's plug-ins (written with :func:`write_plugin`)."""
    prefix = f"plug_{uuid.uuid4().hex[:8]}"
    registry = f"{prefix}_registry"
    (tmp_path / f"{registry}.py").write_text('NAMES = {"indian-points"}\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    __import__(registry)
    yield FakeRegistry(registry), prefix
    for name in [m for m in sys.modules if m.startswith(prefix)]:
        del sys.modules[name]


def write_plugin(registry: FakeRegistry, module: str, body: str) -> None:
    folder = Path(sys.modules[registry.name].__file__ or "").parent
    (folder / f"{module}.py").write_text(f"import {registry.name} as registry\n{body}\n")


def test_the_setting_names_modules_in_order_without_blanks_or_repeats() -> None:
    env = {PLUGINS_VARIABLE: " toy_variant.plugin, acme.gin ,,toy_variant.plugin, "}
    assert plugin_names(env[PLUGINS_VARIABLE]) == ("toy_variant.plugin", "acme.gin")
    assert plugin_names("") == () and plugin_names(" , ") == ()


@pytest.mark.parametrize("bad", ["acme-gin", "acme..gin", "9lives", "acme/gin", "gin.", "a b"])
def test_a_name_that_is_not_a_module_name_is_refused_naming_it(bad: str) -> None:
    with pytest.raises(PluginError, match=f"{PLUGINS_VARIABLE}: {bad!r} is not an importable"):
        plugin_names(f"toy_variant,{bad}")


def test_each_variant_is_credited_to_the_plug_in_that_registered_it(
    plugins: tuple[FakeRegistry, str],
) -> None:
    registry, prefix = plugins
    write_plugin(registry, f"{prefix}_gin", 'registry.NAMES |= {"gin-rummy", "oklahoma-gin"}')
    write_plugin(registry, f"{prefix}_500", 'registry.NAMES.add("rummy-500")')
    loaded = import_plugins([f"{prefix}_gin", f"{prefix}_500"], registry.names)
    assert loaded.plugins == (f"{prefix}_gin", f"{prefix}_500")
    assert loaded.variants == {
        "gin-rummy": f"{prefix}_gin",
        "indian-points": "",
        "oklahoma-gin": f"{prefix}_gin",
        "rummy-500": f"{prefix}_500",
    }


def test_a_plug_in_that_fails_to_import_is_named_with_the_reason(
    plugins: tuple[FakeRegistry, str],
) -> None:
    registry, prefix = plugins
    write_plugin(registry, f"{prefix}_ok", 'registry.NAMES.add("gin-rummy")')
    write_plugin(registry, f"{prefix}_broken", 'raise RuntimeError("no licence for this game")')
    with pytest.raises(PluginError) as error:
        import_plugins([f"{prefix}_ok", f"{prefix}_broken", f"{prefix}_never"], registry.names)
    assert str(error.value) == (
        f"variant plug-in '{prefix}_broken' ({PLUGINS_VARIABLE}) failed to import: "
        "RuntimeError: no licence for this game"
    )
    with pytest.raises(PluginError, match=f"'{prefix}_missing'.*ModuleNotFoundError"):
        import_plugins([f"{prefix}_missing"], registry.names)


def test_a_plug_in_that_imports_but_registers_no_variant_is_refused_naming_it(
    plugins: tuple[FakeRegistry, str],
) -> None:
    registry, prefix = plugins
    write_plugin(registry, f"{prefix}_gin", 'registry.NAMES.add("gin-rummy")')
    write_plugin(registry, f"{prefix}_empty", "GAMES = []  # forgot to register")
    write_plugin(registry, f"{prefix}_again", 'registry.NAMES.add("gin-rummy")')
    for empty in (f"{prefix}_empty", f"{prefix}_again"):
        with pytest.raises(PluginError) as error:
            import_plugins([f"{prefix}_gin", empty], registry.names)
        assert str(error.value).startswith(
            f"variant plug-in '{empty}' ({PLUGINS_VARIABLE}) registered no variant"
        )
    assert "gin-rummy" in registry.names()  # what the plug-in before it registered stays


def test_a_plug_in_loaded_again_in_the_same_process_is_credited_again(
    plugins: tuple[FakeRegistry, str],
) -> None:
    registry, prefix = plugins
    write_plugin(registry, f"{prefix}_gin", 'registry.NAMES.add("gin-rummy")')
    first = import_plugins([f"{prefix}_gin"], registry.names)
    again = import_plugins([f"{prefix}_gin"], registry.names)  # e.g. a second `rummy` call
    assert first == again
    assert again.variants == {"gin-rummy": f"{prefix}_gin", "indian-points": ""}


def test_a_service_start_logs_and_exports_what_it_loaded(
    plugins: tuple[FakeRegistry, str], capsys: pytest.CaptureFixture[str]
) -> None:
    registry, prefix = plugins
    write_plugin(registry, f"{prefix}_gin", 'registry.NAMES.add("gin-rummy")')
    write_plugin(registry, f"{prefix}_early", "")
    __import__(f"{prefix}_early")  # imported before the loader: what it registered is unknown
    metrics = CollectorRegistry()
    settings = Settings(
        **token_settings(),
        grpc_port=0,
        metrics_port=0,
        variant_plugins=(f"{prefix}_gin", f"{prefix}_early"),
    )
    loaded = load_variant_plugins(settings, registry.names, registry=metrics)

    assert loaded.variants == {"gin-rummy": f"{prefix}_gin", "indian-points": ""}
    value = metrics.get_sample_value
    assert value("rummy_variants_loaded", {"variant": "gin-rummy", "plugin": f"{prefix}_gin"}) == 1
    assert value("rummy_variants_loaded", {"variant": "indian-points", "plugin": ""}) == 1
    lines = [json.loads(line) for line in capsys.readouterr().err.splitlines()]
    [info] = [e for e in lines if e["event"] == "variants loaded"]
    assert info["variants"] == ["gin-rummy", "indian-points"]
    assert info["plugins"] == [f"{prefix}_gin", f"{prefix}_early"]
    [warning] = [e for e in lines if e["event"] == "variant plug-in registered no new variant"]
    assert warning["plugin"] == f"{prefix}_early"


def test_a_service_whose_plug_in_fails_exits_2_with_the_reason_on_stderr(
    plugins: tuple[FakeRegistry, str], capsys: pytest.CaptureFixture[str]
) -> None:
    registry, prefix = plugins
    settings = LedgerLike(
        **token_settings(), grpc_port=0, metrics_port=0, variant_plugins=(f"{prefix}_absent",)
    )
    with pytest.raises(SystemExit) as exit_:
        load_variant_plugins(settings, registry.names, registry=CollectorRegistry())
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert f"rummy ledger: configuration error: variant plug-in '{prefix}_absent'" in err
