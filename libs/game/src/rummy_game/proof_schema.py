"""The proof bundle's JSON Schema (``web/verify/proof-bundle.schema.json``) from the installed
variants: the host's own parts are written by hand in the file; the list of event types and the
fields each variant's own event requires are generated from every installed bundle
(:func:`installed`: its codec classes that are events), so the schema names no
variant and a newly installed variant's events are in it once it is regenerated::

    .venv/bin/python -m rummy_game.proof_schema          # rewrite the file
    .venv/bin/python -m rummy_game.proof_schema --check  # exit 1 if it is stale

A test holds the checked-in file to :func:`schema` (``tests/test_proof_schema.py``). An event of a
variant not installed when the file was generated still validates by the open second form of
``type`` (its own fields unchecked), as a verifier without that variant's file reports it.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from rummy_rules import events as ev
from rummy_rules import json_form, registry

from .bundle import VariantBundle

SCHEMA_PATH = Path(__file__).resolve().parents[4] / "web" / "verify" / "proof-bundle.schema.json"
#: The marker of a generated ``allOf`` entry (a variant's own event), so regeneration replaces it.
GENERATED = "generated from the installed variant bundles (rummy_game.proof_schema)"


def installed() -> list[VariantBundle]:
    """The bundles of the entry points (``rummy.variants``), by name: what a checkout installs,
    not a test suite's toy registered in this process."""
    points = entry_points(group=registry.ENTRY_POINT_GROUP)
    found = [p.load() for p in sorted(points, key=lambda p: p.name)]
    return [b for b in found if isinstance(b, VariantBundle)]


def _is_event(cls: object) -> bool:
    return isinstance(cls, type) and issubclass(cls, ev.Event) and cls is not ev.Event


def host_events() -> list[str]:
    """The events every variant shares (``rummy_rules.events``), by rules-codec tag."""
    return sorted(
        json_form.tag_of(c)
        for c in vars(ev).values()
        if _is_event(c) and c.__module__ == ev.__name__
    )


def variant_events() -> dict[str, list[str]]:
    """Each installed variant's own event -> the fields a bundle must carry (those without a
    default: an older record may lack a field added with one)."""
    out: dict[str, list[str]] = {}
    for bundle in installed():
        for cls in bundle.codec_classes:
            if _is_event(cls) and dataclasses.is_dataclass(cls):
                out[json_form.tag_of(cls)] = [
                    f.name
                    for f in dataclasses.fields(cls)
                    if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
                ]
    return dict(sorted(out.items()))


def schema(current: dict[str, Any]) -> dict[str, Any]:
    """``current`` (the checked-in schema) with its generated parts made from the installed
    bundles: the event type list and one ``allOf`` entry per variant event."""
    out: dict[str, Any] = json.loads(json.dumps(current))
    event = out["$defs"]["event"]
    own = variant_events()
    event["properties"]["type"]["anyOf"][0]["enum"] = sorted({*host_events(), *own})
    kept = [e for e in event["allOf"] if e.get("$comment") != GENERATED]
    made = [
        {
            "$comment": GENERATED,
            "if": {"properties": {"type": {"const": name}}},
            "then": {"required": fields},
        }
        for name, fields in own.items()
    ]
    event["allOf"] = kept + made
    outcomes = sorted({o.name for b in installed() for o in b.outcomes})
    results = next(e for e in kept if e["if"]["properties"]["type"]["const"] == "table.HandEnded")
    outcome = results["then"]["properties"]["results"]["items"]["properties"]["outcome"]
    outcome["examples"] = outcomes
    return out


def render(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> int:
    current = json.loads(SCHEMA_PATH.read_text())
    fresh = render(schema(current))
    if "--check" in argv:
        stale = SCHEMA_PATH.read_text() != fresh
        print("proof-bundle.schema.json is stale" if stale else "proof-bundle.schema.json is fresh")
        return 1 if stale else 0
    SCHEMA_PATH.write_text(fresh)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
