"""The proof bundle's schema (web/verify/proof-bundle.schema.json) names no variant by hand: its
event types and each variant event's required fields are generated from the installed bundles
(rummy_game.proof_schema), the checked-in file matches, and gin bundles (tests/e2e/gin_bundles.py)
satisfy it as Indian ones do."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

from rummy_game.proof_schema import SCHEMA_PATH, installed, main, render, schema
from rummy_rules import json_form

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))


def _schema() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(SCHEMA_PATH.read_text())
    return data


def test_the_checked_in_schema_is_the_one_generated_from_the_installed_bundles() -> None:
    current = SCHEMA_PATH.read_text()
    assert render(schema(json.loads(current))) == current, "run python -m rummy_game.proof_schema"
    assert main(["--check"]) == 0


def test_every_installed_variants_events_and_outcomes_are_in_the_schema() -> None:
    event = _schema()["$defs"]["event"]
    named = set(event["properties"]["type"]["anyOf"][0]["enum"])
    required = {e["if"]["properties"]["type"]["const"] for e in event["allOf"]}
    for bundle in installed():
        own = {
            json_form.tag_of(c)
            for c in bundle.codec_classes
            if vars(c).get("codec_tag") in required
        }
        assert own, f"no event of {bundle.name} is described"
        assert own <= named
    assert {
        "gin.Knocked",
        "gin.HandScored",
        "indian.Declared",
        "indian.PlayerDropped",
    } <= named & required


def _check(bundle: dict[str, Any], data: dict[str, Any]) -> None:
    """The parts of the schema a bundle's events are held to: the top level's required and
    allowed keys, each event's type (listed, or the open name form) and the fields its type
    requires, and each seat's outcome word."""
    assert set(data["required"]) <= set(bundle) <= set(data["properties"])
    event = data["$defs"]["event"]
    listed, open_form = event["properties"]["type"]["anyOf"]
    for item in bundle["events"]:
        body = item["event"]
        kind = body["type"]
        assert kind in listed["enum"] or re.fullmatch(open_form["pattern"], kind)
        for rule in event["allOf"]:
            if rule["if"]["properties"]["type"]["const"] == kind:
                missing = set(rule["then"]["required"]) - set(body)
                assert not missing, f"{kind} lacks {missing}"
                outcome = rule["then"].get("properties", {}).get("results")
                if outcome:
                    pattern = outcome["items"]["properties"]["outcome"]["pattern"]
                    assert all(re.fullmatch(pattern, r["outcome"]) for r in body["results"])


def test_gin_bundles_satisfy_the_schema() -> None:
    from gin_bundles import gin_hand

    data = _schema()
    for name, kwargs in (("h0", {}), ("h25", {}), ("h0", {"knock": False}), ("h5", {"sleeper": 0})):
        bundle, _ = gin_hand(name, **kwargs)
        _check(bundle, data)
        own = {e["event"]["type"] for e in bundle["events"]} - set(
            data["$defs"]["event"]["properties"]["type"]["anyOf"][0]["enum"]
        )
        assert not own, f"gin events the schema does not list: {own}"
    tampered, _ = gin_hand("h0")
    knock = next(e["event"] for e in tampered["events"] if e["event"]["type"] == "gin.Knocked")
    del knock["deadwood"]
    try:
        _check(tampered, data)
    except AssertionError as exc:
        assert "gin.Knocked lacks {'deadwood'}" in str(exc)
    else:
        raise AssertionError("a GinKnocked without its deadwood passed the schema")
