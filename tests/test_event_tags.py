"""The tags of the stored messages are written down (docs/rules/event-tags.md lists exactly the
rules library's registered tags, each with its old tag), and the browser verifier's table of old
tags (web/verify/verify.js) is the rules library's (rummy_rules.upcast.LEGACY_TAGS)."""

from __future__ import annotations

import re
from pathlib import Path

from rummy_rules import json_form
from rummy_rules.upcast import LEGACY_TAGS

ROOT = Path(__file__).resolve().parents[1]
#: A tag as ``rummy_rules.json_form.TAG_SHAPE`` has it (a namespace may hold digits: ``rummy500``).
TAG = r"[a-z][a-z0-9_-]*\.[A-Za-z0-9]+"
ROW = re.compile(rf"^\| `({TAG})` \| \w+ \| `([\w.]+)` \| `(\w+)` \|$", re.M)


def test_the_tags_page_lists_every_registered_tag_of_the_rules_library_with_its_old_tag() -> None:
    text = (ROOT / "docs" / "rules" / "event-tags.md").read_text(encoding="utf-8")
    rows = {tag: (where, old) for tag, where, old in ROW.findall(text)}
    tags = {t: c for t, c in json_form.tags().items() if c.__module__.startswith("rummy_rules.")}
    assert set(rows) == set(tags)
    for tag, cls in tags.items():
        assert rows[tag] == (f"{cls.__module__}.{cls.__name__}", cls.__name__)
        assert LEGACY_TAGS[cls.__name__] == tag


def test_the_browser_verifiers_old_tags_are_the_rules_librarys() -> None:
    text = (ROOT / "web" / "verify" / "verify.js").read_text(encoding="utf-8")
    block = text[text.index("const LEGACY_TAGS = Object.freeze({") :]
    block = block[: block.index("});")]
    in_js = dict(re.findall(rf"^\s+(\w+): \"({TAG})\",$", block, re.M))
    assert in_js == LEGACY_TAGS
