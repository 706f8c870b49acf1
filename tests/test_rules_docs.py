"""The rules are written down in the repository, and every citation of them resolves.

``docs/rules/`` states the rules and rulings the code implements; docstrings, comments, tests and
config cite its sections as ``docs/rules/<page>.md#<anchor>``. These tests read every file of the
checkout (tracked, or new and not ignored) and fail when such a citation names a page or an
anchor that does not exist, when a link between the rules pages does not resolve, when a section
has no explicit anchor, and when any file cites the team's shared folder (its design, seeds or
notes), which a user's clone does not have.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from rummy_testing.checkout import checkout_files

ROOT = Path(__file__).resolve().parents[1]
RULES_DOCS = ROOT / "docs" / "rules"

#: A citation of a rules page, with its anchor when it names one.
CITATION = re.compile(r"docs/rules/([A-Za-z0-9_.-]+\.md)(?:#([A-Za-z0-9_-]+))?")
#: A relative Markdown link between rules pages: ``[text](page.md#anchor)`` or ``(#anchor)``.
LINK = re.compile(r"\]\(((?:[A-Za-z0-9_.-]+\.md)?)(?:#([A-Za-z0-9_-]+))?\)")
#: An explicit anchor: ``<a id="...">`` (or ``name=``).
EXPLICIT_ANCHOR = re.compile(r"<a\s+(?:id|name)=\"([^\"]+)\"")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^\s*(```|~~~)")

#: The shared folder's name and its parts, kept apart so that this file does not cite it itself.
SHARED = "shared"
DESIGN = "DESIGN"
#: The parent folder's shared folder, its notes, seeds or design by path, the design file by name,
#: or the design named as a source (followed by a quoted section, a parenthesis, "rulings" or
#: "promise").
SHARED_CITATION = re.compile(
    rf"\.\./{SHARED}\b|\b{SHARED}/(?:notes|seeds|{DESIGN})"
    rf"|\b{DESIGN}(?:\.md\b|\s+(?:[\"(]|rulings?\b|promises?\b))"
)


def text_files() -> Iterator[tuple[Path, str]]:
    """``(path, text)`` of every checkout file that is UTF-8 text."""
    for path in checkout_files():
        try:
            yield path, path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue


def github_slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"<[^>]+>", "", heading)  # inline HTML
    text = re.sub(r"`([^`]*)`", r"\1", text).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def markdown_lines(text: str) -> Iterator[tuple[int, str]]:
    """``(line number, line)`` of a Markdown text outside fenced code blocks."""
    fenced = False
    for number, line in enumerate(text.splitlines(), start=1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            yield number, line


def anchors_of(text: str) -> set[str]:
    """Every anchor a Markdown page offers: explicit ``<a id>`` anchors and heading slugs."""
    found = set(EXPLICIT_ANCHOR.findall(text))
    seen: dict[str, int] = {}
    for _, line in markdown_lines(text):
        heading = HEADING.match(line)
        if heading:
            slug = github_slug(heading.group(2))
            count = seen.get(slug, 0)
            seen[slug] = count + 1
            found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def rules_pages() -> dict[str, set[str]]:
    """Page name -> its anchors, for every page of docs/rules."""
    return {
        page.name: anchors_of(page.read_text(encoding="utf-8")) for page in RULES_DOCS.glob("*.md")
    }


def broken(page: str, anchor: str | None, pages: dict[str, set[str]]) -> str | None:
    """Why ``page#anchor`` does not resolve, or None when it does."""
    if page not in pages:
        return f"no page docs/rules/{page}"
    if anchor is not None and anchor not in pages[page]:
        return f"no anchor #{anchor} in docs/rules/{page}"
    return None


def test_the_rules_pages_exist_with_their_index() -> None:
    pages = rules_pages()
    for page in (
        "README.md",
        "cards.md",
        "melds.md",
        "declaration.md",
        "scoring.md",
        "deal.md",
        "hand-flow.md",
        "money.md",
        "rule-set.md",
        "shuffle-spec.md",
        "promises.md",
    ):
        assert page in pages, f"docs/rules/{page} is missing"


def test_every_rules_page_is_listed_in_the_index() -> None:
    index = (RULES_DOCS / "README.md").read_text(encoding="utf-8")
    linked = {page for page, _ in LINK.findall(index) if page}
    unlisted = sorted(set(rules_pages()) - linked - {"README.md"})
    assert not unlisted, f"docs/rules/README.md does not link {unlisted}"


def test_every_section_of_a_rules_page_has_an_explicit_anchor() -> None:
    missing = []
    for page in sorted(RULES_DOCS.glob("*.md")):
        previous = ""
        for number, line in markdown_lines(page.read_text(encoding="utf-8")):
            heading = HEADING.match(line)
            if heading and len(heading.group(1)) >= 2 and not EXPLICIT_ANCHOR.search(previous):
                missing.append(f"{page.name}:{number}: {line.strip()}")
            if line.strip():
                previous = line
    assert not missing, "sections without an <a id> anchor on the line above:\n" + "\n".join(
        missing
    )


def test_every_citation_of_the_rules_in_the_tree_names_an_existing_page_and_anchor() -> None:
    pages = rules_pages()
    problems, cited = [], 0
    for path, text in text_files():
        for number, line in enumerate(text.splitlines(), start=1):
            for match in CITATION.finditer(line):
                cited += 1
                why = broken(match.group(1), match.group(2), pages)
                if why:
                    problems.append(f"{path.relative_to(ROOT)}:{number}: {match.group(0)}: {why}")
    assert cited > 0, "no file cites docs/rules: the pattern or the file list is wrong"
    assert not problems, "citations that do not resolve:\n" + "\n".join(problems)


def test_every_link_between_rules_pages_resolves() -> None:
    pages = rules_pages()
    problems = []
    for page in sorted(RULES_DOCS.glob("*.md")):
        for number, line in markdown_lines(page.read_text(encoding="utf-8")):
            for target, anchor in LINK.findall(line):
                why = broken(target or page.name, anchor or None, pages)
                if why:
                    problems.append(f"{page.name}:{number}: ({target}#{anchor}): {why}")
    assert not problems, "links that do not resolve:\n" + "\n".join(problems)


def test_no_file_cites_the_team_shared_folder() -> None:
    problems = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()[:120]}"
        for path, text in text_files()
        for number, line in enumerate(text.splitlines(), start=1)
        if SHARED_CITATION.search(line)
    ]
    assert not problems, (
        "cite docs/rules/<page>.md#<anchor> instead of the shared folder:\n" + "\n".join(problems)
    )


@pytest.mark.parametrize(
    ("text", "cites"),
    [
        (f"see ``{SHARED}/seeds/000``", True),
        (f"the rulings in ``{SHARED}/{DESIGN}.md``", True),
        (f"{DESIGN}.md promise 9", True),
        (f"< ../{SHARED}/notes/rules-cases.jsonl", True),
        (f"{SHARED}/notes/rules-cases.jsonl", True),
        (f'refused as {DESIGN} "Money by format" says', True),
        (f"the {DESIGN} rulings", True),
        ("the Kafka adapter differs by design", False),
        ("DESIGN_NOTES = 1", False),
        ("docs/rules/money.md#commission", False),
        ("a shared secret from an environment variable", False),
        ("the shared pytest plugin", False),
    ],
)
def test_the_shared_folder_pattern_finds_its_citations_and_nothing_else(
    text: str, cites: bool
) -> None:
    assert bool(SHARED_CITATION.search(text)) is cites


@pytest.mark.parametrize(
    ("heading", "slug"),
    [
        ("## 1. Inputs", "1-inputs"),
        ("## Uniform integers (rejection sampling)", "uniform-integers-rejection-sampling"),
        (
            "### The ace runs low and high, never round the corner",
            "the-ace-runs-low-and-high-never-round-the-corner",
        ),
        ("## Shuffle spec `bb-shuffle-v1`", "shuffle-spec-bb-shuffle-v1"),
    ],
)
def test_a_heading_offers_the_anchor_github_gives_it(heading: str, slug: str) -> None:
    assert slug in anchors_of(heading + "\n")
