"""Records rewritten into an old shape, for the tests of the upcasts that read them
(``docs/rules/event-tags.md#deprecated``)."""

from __future__ import annotations

from typing import Any

#: The Indian options' tags: today's, and their class name (row ``json-class-tag``), as the kept
#: bundles carry it.
INDIAN_OPTIONS_TAGS = ("indian.PointsRules", "IndianPointsRules")


def with_old_rule_sets(value: Any) -> Any:
    """``value`` (a codec dict, or any JSON value in it; a new object) as a build before a rule
    set carried each variant's options under one name wrote it (row ``json-rule-set-indian``): a
    rule set's Indian options under ``indian``, untagged."""
    if isinstance(value, list):
        return [with_old_rule_sets(v) for v in value]
    if not isinstance(value, dict):
        return value
    out = {k: with_old_rule_sets(v) for k, v in value.items()}
    options = out.get("options")
    if isinstance(options, dict) and options.get("type") in INDIAN_OPTIONS_TAGS:
        out["indian"] = {k: v for k, v in out.pop("options").items() if k != "type"}
    return out
