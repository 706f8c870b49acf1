"""Records rewritten into an old shape, for the tests of the upcasts that read them (each a row
of ``docs/rules/event-tags.md#deprecated``)."""

from __future__ import annotations

from collections.abc import Callable
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


def without_deal_shape(bundle: dict[str, Any]) -> dict[str, Any]:
    """A proof bundle of an Indian points hand (a new dict) as a build before bundles said their
    deal's shape wrote it (row ``bundle-no-deal-shape``): no ``deal_shape``."""
    assert bundle["deal_shape"] == {"wild_cut": True, "upcard": True}, "an Indian points deal"
    return {k: v for k, v in bundle.items() if k != "deal_shape"}


#: Each old shape a kept Indian bundle can be rewritten in, by the row it is of.
INDIAN_BUNDLE_SHAPES: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "json-rule-set-indian": with_old_rule_sets,
    "bundle-no-deal-shape": without_deal_shape,
}
