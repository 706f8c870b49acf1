"""Every link in the project's Markdown resolves, and README.md stays a five-minute read.

README.md keeps what the product is, the two commands, what the demo shows, the layout and where to
go next; the rest lives in ``docs/`` by reader (operations, configuration, development, testing,
benchmarks) and in each service's README. These tests read every tracked Markdown file (and every
citation ``<file>.md#<anchor>`` in the tree's code and config) and fail when a relative link names
a file that does not exist or an anchor that the target does not define: a section moved between
files breaks no reader's link.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

from rummy_testing.checkout import checkout_files

ROOT = Path(__file__).resolve().parents[1]
#: README's length budget (issue 31: "a README a newcomer reads in five minutes").
README_MAX_LINES = 250
#: A Markdown link or image: ``[text](target)``; the target up to a space or the closing paren.
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
#: An explicit anchor: ``<a id="...">`` (or ``name=``).
EXPLICIT_ANCHOR = re.compile(r"<a\s+(?:id|name)=\"([^\"]+)\"")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^\s*(```|~~~)")
#: A citation of a Markdown section from code or config: ``README.md#layout``,
#: ``docs/testing.md#ci``, ``services/ledger/README.md#rooms``.
CITATION = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w.-]+\.md)#([A-Za-z0-9_-]+)")
#: Files whose text is data or someone else's (kept records, generated code, the lock file).
SKIP_PREFIXES = ("tests/data/", "libs/proto/src/", "uv.lock")


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation but ``-`` and ``_`` dropped,
    spaces as ``-`` (inline code and links reduced to their text first)."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = text.replace("`", "").strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


@cache
def anchors(path: Path) -> frozenset[str]:
    """Every anchor a Markdown file defines: its headings' slugs (repeated ones numbered as
    GitHub numbers them) and its explicit ``<a id>`` anchors."""
    found: set[str] = set()
    seen: dict[str, int] = {}
    fenced = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            continue
        found.update(EXPLICIT_ANCHOR.findall(line))
        heading = HEADING.match(line)
        if heading:
            base = slug(heading.group(2))
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
    return frozenset(found)


def markdown_files() -> list[Path]:
    return [
        path
        for path in checkout_files()
        if path.suffix == ".md" and not str(path.relative_to(ROOT)).startswith(SKIP_PREFIXES)
    ]


def links(path: Path) -> Iterator[tuple[int, str]]:
    """``(line number, target)`` of every link of a Markdown file outside code fences."""
    fenced = False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            for target in LINK.findall(line):
                yield number, target


def broken(path: Path, target: str) -> str | None:
    """Why a link of ``path`` does not resolve, or None."""
    if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:, file:
        return None
    file_part, _, anchor = target.partition("#")
    destination = (path.parent / file_part).resolve() if file_part else path
    if not destination.exists():
        return f"no file {file_part}"
    if anchor and destination.suffix == ".md" and anchor not in anchors(destination):
        return f"{destination.relative_to(ROOT)} has no anchor #{anchor}"
    return None


def test_readme_is_a_five_minute_read() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").count("\n")
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines (at most {README_MAX_LINES})"


def test_readme_names_the_two_commands_and_every_docs_page() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "bash deploy/local/demo.sh" in readme
    assert "bash deploy/local/test.sh" in readme
    linked = {target.partition("#")[0] for _, target in links(ROOT / "README.md")}
    pages = {str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md")}
    assert pages - linked == set(), "docs pages README.md does not link"


@pytest.mark.parametrize("path", markdown_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(path: Path) -> None:
    failures = [
        f"{path.relative_to(ROOT)}:{number}: ({target}) {why}"
        for number, target in links(path)
        if (why := broken(path, target)) is not None
    ]
    assert failures == []


def test_every_citation_of_a_markdown_section_resolves() -> None:
    failures = []
    for path in checkout_files():
        relative = str(path.relative_to(ROOT))
        if relative.startswith(SKIP_PREFIXES) or path.suffix in {".md", ".png", ".json"}:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for number, line in enumerate(text.splitlines(), start=1):
            for cited, anchor in CITATION.findall(line):
                target = ROOT / cited
                if cited.startswith("docs/rules/"):
                    continue  # test_rules_docs holds the rules pages' citations
                if "/" not in cited and cited != "README.md":
                    continue  # a link inside a generated page's text, relative to that page
                if not target.exists():
                    failures.append(f"{relative}:{number}: no file {cited}")
                elif anchor not in anchors(target):
                    failures.append(f"{relative}:{number}: {cited} has no anchor #{anchor}")
    assert failures == []


def test_the_slug_is_githubs() -> None:
    assert slug("The demo's time") == "the-demos-time"
    assert slug("Two commands on a fresh machine") == "two-commands-on-a-fresh-machine"
    assert slug("`rummy up` and `--prometheus`") == "rummy-up-and---prometheus"
    assert slug("Several table-service instances") == "several-table-service-instances"
