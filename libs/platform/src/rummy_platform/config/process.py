"""The process's own variables: its log level, the topic prefix, the variant plug-ins, the
supervisor's pid and the test-only fault point."""

from __future__ import annotations

LOG_LEVELS = ("debug", "info", "warning", "error")

#: ``RUMMY_SUPERVISOR_PID``: set by the stack supervisor; the service ends when it is gone.
SUPERVISOR_PID_VARIABLE = "RUMMY_SUPERVISOR_PID"
#: ``RUMMY_TOPIC_PREFIX``: prepended to every topic and consumer-group name (tests isolate runs).
TOPIC_PREFIX_VARIABLE = "RUMMY_TOPIC_PREFIX"
#: ``RUMMY_FAULT_POINT``: test-only; names a point where the process kills itself with SIGKILL.
FAULT_POINT_VARIABLE = "RUMMY_FAULT_POINT"
#: ``RUMMY_VARIANT_PLUGINS``: comma-separated module names, each registering its variant(s).
PLUGINS_VARIABLE = "RUMMY_VARIANT_PLUGINS"


def module_names(raw: str) -> tuple[str, ...]:
    from rummy_platform.plugins import PluginError, plugin_names

    try:
        return plugin_names(raw)
    except PluginError as error:
        raise ValueError(str(error)) from None
