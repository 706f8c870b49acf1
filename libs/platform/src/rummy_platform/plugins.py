"""Variant plug-ins: rule sets that are not in the product, loaded once when a process starts.

``RUMMY_VARIANT_PLUGINS`` names importable modules, comma-separated
(``RUMMY_VARIANT_PLUGINS=toy_variant,acme_gin``). Each one installs its variant bundle(s)
(``rummy_game.bundle.VariantBundle.install``: one call) when imported; this module only imports
them, in order, and reports what the registry holds afterwards. An *installed* package needs no
setting: its bundle is an entry point of the group ``rummy.variants``, which every host discovers
(``rummy_rules.registry.discover``); the variable is for modules that are not installed.
It knows no variant and does not import the rules
library: the caller passes the registry's ``names`` (``rummy_rules.registry.names``).

Every service's bootstrap calls :func:`load_variant_plugins` first (a module that fails to import,
or imports but registers no variant, ends the process with status 2 before it serves: health never
SERVING), the ``rummy`` command calls :func:`import_plugins` before any subcommand (exit 2 alike).
What was loaded is logged once (``variants loaded``, JSON) and exported as
``rummy_variants_loaded{variant, plugin}`` (1 per variant the process can play; ``plugin`` is the
module that registered it, ``""`` for the product's own).

A plain setting beside the entry points: the same variable works for a service, the CLI
and a test harness without installing a distribution (a test suite's toy is a folder on
``PYTHONPATH``, not a package), an operator sees and chooses exactly which plug-ins a process runs
(an installed package cannot add a game to a running deployment behind its back), and the order of
loading is the order written.
"""

from __future__ import annotations

import functools
import importlib
import re
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from prometheus_client import REGISTRY, CollectorRegistry, Gauge

from rummy_platform.config import PLUGINS_VARIABLE, Settings
from rummy_platform.logging import configure_logging, get_logger

_MODULE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")

_log = get_logger(__name__)


class PluginError(RuntimeError):
    """A plug-in name is malformed, its module failed to import or registered no variant; the
    message names it."""


#: The variants each plug-in module registered when :func:`import_plugins` first imported it in
#: this process (importing it again runs nothing: it is credited with them again).
_BROUGHT: dict[str, tuple[str, ...]] = {}


@dataclass(frozen=True)
class LoadedVariants:
    """What a process can play after loading its plug-ins: ``plugins`` the modules imported, in
    order; ``variants`` each registered variant's name -> the plug-in module that registered it
    (``""``: the product's own, or registered before the plug-ins were loaded)."""

    plugins: tuple[str, ...]
    variants: Mapping[str, str]


def plugin_names(raw: str) -> tuple[str, ...]:
    """The module names of a ``RUMMY_VARIANT_PLUGINS`` value, in order, blanks and repeats
    left out; ``()`` for an empty one. Raises PluginError for a name that is not a dotted Python
    identifier. (A service gets them parsed as ``Settings.variant_plugins``.)"""
    names: list[str] = []
    for part in raw.split(","):
        name = part.strip()
        if not name:
            continue
        if _MODULE_NAME.fullmatch(name) is None:
            raise PluginError(
                f"{PLUGINS_VARIABLE}: {name[:80]!r} is not an importable module name "
                "(comma-separated dotted names, e.g. 'toy_variant,acme.gin')"
            )
        if name not in names:
            names.append(name)
    return tuple(names)


def import_plugins(
    modules: Iterable[str], registered: Callable[[], Iterable[str]]
) -> LoadedVariants:
    """Import each of ``modules`` in order; ``registered()`` gives the registry's variant names
    (called before and after each import, to tell which plug-in brought which variant). Raises
    PluginError naming the first module that fails to import (and why) or that imports but
    registers no variant not already registered; what the modules before it registered stays
    registered. A module imported before, outside this function, cannot be judged (what it
    registered then is credited to the product, ``""``)."""
    loaded: dict[str, str] = dict.fromkeys(registered(), "")
    plugins = tuple(modules)
    for module in plugins:
        imported_before = module in sys.modules
        try:
            importlib.import_module(module)
        except Exception as error:
            raise PluginError(
                f"variant plug-in {module!r} ({PLUGINS_VARIABLE}) failed to import: "
                f"{type(error).__name__}: {error}"
            ) from error
        new = tuple(v for v in registered() if v not in loaded)
        if not imported_before:
            _BROUGHT[module] = new
        brought = new or _BROUGHT.get(module, ())
        if not brought and (not imported_before or module in _BROUGHT):
            raise PluginError(
                f"variant plug-in {module!r} ({PLUGINS_VARIABLE}) registered no variant: it "
                f"imported, but the registry holds no new name after it (known: "
                f"{', '.join(sorted(loaded)) or 'none'})"
            )
        for variant in brought:
            loaded[variant] = module
    return LoadedVariants(plugins, dict(sorted(loaded.items())))


def load_variant_plugins(
    settings: Settings,
    registered: Callable[[], Iterable[str]],
    *,
    registry: CollectorRegistry = REGISTRY,
) -> LoadedVariants:
    """A service bootstrap's first step: import the plug-ins of ``settings.variant_plugins``
    (``RUMMY_VARIANT_PLUGINS``, :func:`import_plugins`), log ``variants loaded`` (JSON, at
    ``settings.log_level``) and set ``rummy_variants_loaded{variant, plugin}`` in ``registry``.
    On a PluginError, print ``rummy <service>: configuration error: ...`` to stderr, log it, and
    exit with status 2."""
    configure_logging(settings.log_level)
    try:
        loaded = import_plugins(settings.variant_plugins, registered)
    except PluginError as error:
        _log.error("variant plug-in not loaded", service=settings.service, reason=str(error))
        print(f"rummy {settings.service}: configuration error: {error}", file=sys.stderr)
        raise SystemExit(2) from None
    report_loaded(loaded, registry)
    return loaded


def report_loaded(loaded: LoadedVariants, registry: CollectorRegistry = REGISTRY) -> None:
    """Log ``variants loaded`` and set ``rummy_variants_loaded`` for ``loaded``; a plug-in
    credited with no variant (imported before the plug-ins were loaded, see
    :func:`import_plugins`) is warned about."""
    gauge = variants_loaded_gauge(registry)
    for variant, plugin in loaded.variants.items():
        gauge.labels(variant=variant, plugin=plugin).set(1)
    _log.info("variants loaded", variants=list(loaded.variants), plugins=list(loaded.plugins))
    for plugin in loaded.plugins:
        if plugin not in loaded.variants.values():
            _log.warning("variant plug-in registered no new variant", plugin=plugin)


@functools.cache
def variants_loaded_gauge(registry: CollectorRegistry = REGISTRY) -> Gauge:
    """The ``rummy_variants_loaded`` gauge of ``registry``, created on first use."""
    return Gauge(
        "rummy_variants_loaded",
        "Variants this process can play (1 each), by the plug-in module that registered it "
        "('' for the product's own).",
        ["variant", "plugin"],
        registry=registry,
    )
