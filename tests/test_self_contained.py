"""The repository is self-contained: a clone with nothing beside it runs and tests itself.

The team's spec and notes live in a ``shared`` folder beside the working copies (its ``notes``,
``seeds`` and design document); a user's clone has none of it. So no tracked file other than
Markdown may name such a path in what runs: code, scripts, tests and config are read whole,
except that in Python files docstrings and comments are left out. Those only cite (the rules
are written in ``docs/rules/`` and the docstrings cite it there; ``tests/test_rules_docs.py`` fails
when anything cites the shared folder), and citing is not reading. README's ``rummy-rules
evaluate`` example must name a tracked file and run.
"""

from __future__ import annotations

import ast
import io
import re
import shlex
import subprocess
import sys
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: A path outside the repository: the parent folder's ``shared`` (also as ``".." / "shared"``),
#: or the shared folder's notes, seeds or design (also as ``"shared" / "notes"`` and the like).
OUTSIDE = re.compile(r"\.\.[/\\\"'\s,()]*shared|shared[/\\\"'\s,()]*(?:notes|seeds|DESIGN)")


def tracked_files() -> list[Path]:
    """Every file git tracks in this checkout (a clone of it holds exactly these)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True, timeout=60
    ).stdout
    return [ROOT / name for name in listed.decode().split("\0") if name]


def python_code(source: str) -> str:
    """``source`` without its docstrings and comments (what the interpreter acts on)."""
    docstrings: set[tuple[int, int]] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if (
                body
                and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)
            ):
                docstrings.add((body[0].lineno, body[0].col_offset))
    kept = [
        token
        for token in tokenize.generate_tokens(io.StringIO(source).readline)
        if token.type != tokenize.COMMENT
        and not (token.type == tokenize.STRING and token.start in docstrings)
    ]
    return tokenize.untokenize(kept)


def run_time_text(path: Path) -> str | None:
    """What of ``path`` is read at run time, or None for Markdown and binary files."""
    if path.suffix == ".md":
        return None
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return None
    # Leaving out docstrings and comments only removes text: a file that never spells the folder's
    # name cannot name it in its code either, so only such files are tokenized (most are not).
    if path.suffix == ".py" and SHARED in text:
        return python_code(text)
    return text


def outside_references(text: str) -> list[str]:
    return [m.group(0) for m in OUTSIDE.finditer(text)]


#: The folder's name, kept apart in the examples below so that this file does not name it itself.
SHARED = "shared"
DESIGN = "DESIGN"


def test_the_pattern_finds_every_way_of_naming_the_shared_folder() -> None:
    for named in (
        f"../{SHARED}/notes/rules-cases.jsonl",
        f'ROOT / ".." / "{SHARED}"',
        f'Path("..") / "{SHARED}"',
        f'folder / "{SHARED}" / "notes" / "rules-cases.jsonl"',
        f"{SHARED}/seeds/000-rules.txt",
        f"cat {SHARED}/{DESIGN}.md",
    ):
        assert outside_references(named), named
    for fine in ("shared secret", "the shared plugin", "libs/rules/tests/data/rules-cases.jsonl"):
        assert not outside_references(fine), fine


def test_docstrings_and_comments_are_left_out_and_code_is_kept() -> None:
    source = (
        f'"""Cites ../{SHARED}/notes."""\n'
        f"# from {SHARED}/seeds/000\n"
        "def f():\n"
        f'    """See {SHARED}/{DESIGN}.md."""\n'
        f'    return Path("..") / "{SHARED}" / "notes"  # read at run time\n'
    )
    code = python_code(source)
    assert "Cites" not in code and "000" not in code and "DESIGN" not in code
    assert outside_references(code)


def test_no_tracked_file_reads_a_path_outside_the_repository() -> None:
    offenders = []
    for path in tracked_files():
        text = run_time_text(path)
        if text is None:
            continue
        for line_no, line in enumerate(text.splitlines(), 1):
            if outside_references(line):
                offenders.append(f"{path.relative_to(ROOT)}:{line_no}: {line.strip()}")
    assert not offenders, "paths outside the repository:\n" + "\n".join(offenders)


def test_the_readme_rules_example_names_a_tracked_file_and_runs() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    examples = re.findall(r"`\.venv/bin/rummy-rules evaluate < ([^`]+)`", readme)
    assert len(examples) == 1, examples
    (name,) = shlex.split(examples[0])
    cases = ROOT / name
    assert cases in tracked_files(), f"README's example reads {name}, which git does not track"
    done = subprocess.run(
        [sys.executable, "-m", "rummy_rules", "evaluate"],
        input=cases.read_bytes(),
        capture_output=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    answers = done.stdout.decode().splitlines()
    assert len(answers) == len(cases.read_text(encoding="utf-8").splitlines())
