"""docs/client.md and its example, ``docs/examples/client.py``, cannot drift apart.

- Every ```python excerpt of the page is the example's own code: a run of its consecutive lines,
  as they are there but for their common indentation.
- The example imports what the page says a client needs and nothing else of this repository:
  the standard library, ``grpc``, ``google.protobuf``, the generated stubs (``rummy.*_pb2``,
  ``rummy.*_pb2_grpc``) and the redirect helper ``rummy_table.contract``.

- A token file it cannot read is argparse's one-line error, exit 2.

Playing it against the services is ``tests/e2e/test_example_client.py``.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "client.md"
EXAMPLE = ROOT / "docs" / "examples" / "client.py"
EXCERPT = re.compile(r"^```python\n(.*?)^```$", re.MULTILINE | re.DOTALL)
STUB = re.compile(r"^rummy(\.\w+)*\.\w+_pb2(_grpc)?$")


def excerpts() -> list[str]:
    return EXCERPT.findall(PAGE.read_text(encoding="utf-8"))


def is_in_example(excerpt: str, lines: list[str]) -> bool:
    """``excerpt`` is ``len`` consecutive lines of ``lines``, dedented together."""
    want = excerpt.rstrip("\n")
    size = len(want.splitlines())
    return any(
        textwrap.dedent("\n".join(lines[start : start + size])) == want
        for start in range(len(lines) - size + 1)
    )


def test_every_python_excerpt_of_the_page_is_the_example_s_own_code() -> None:
    lines = EXAMPLE.read_text(encoding="utf-8").splitlines()
    found = excerpts()
    assert len(found) >= 8, "the page walks through the example in excerpts"
    drifted = [excerpt for excerpt in found if not is_in_example(excerpt, lines)]
    assert drifted == [], "excerpts of docs/client.md not in docs/examples/client.py as written"


def test_the_check_tells_a_changed_excerpt() -> None:
    lines = EXAMPLE.read_text(encoding="utf-8").splitlines()
    excerpt = excerpts()[1]
    assert is_in_example(excerpt, lines)
    assert not is_in_example(excerpt.replace("self", "me", 1), lines)


def imported(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def allowed(name: str) -> bool:
    top = name.split(".")[0]
    return (
        top in sys.stdlib_module_names
        or top == "grpc"
        or name.startswith("google.protobuf.")
        or bool(STUB.match(name))
        or name.startswith("rummy_table.contract.")
    )


def test_the_example_imports_only_the_stubs_the_router_and_the_standard_library() -> None:
    names = imported(EXAMPLE)
    assert "rummy_table.contract.TableRouter" in names
    assert sorted(n for n in names if not allowed(n)) == []


def test_a_token_file_it_cannot_read_is_one_usage_error_not_a_traceback(tmp_path: Path) -> None:
    missing = tmp_path / "missing.token"
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), "--table", "127.0.0.1:1", "--token-file", str(missing),
         "--table-id", "t"],
        capture_output=True, text=True, check=False, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.splitlines()[-1] == (
        f"client.py: error: --token-file {missing}: No such file or directory"
    )
