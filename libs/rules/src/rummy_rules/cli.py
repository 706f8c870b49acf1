"""``rummy-rules evaluate``: judge rules cases, one JSON object a line, from stdin to stdout.

Each line is a JSON object with an ``id`` and a ``game``; the installed variant that judges that
game answers it (``rummy_rules.cases``: its bundle's ``cli_cases``; Indian points judges
``indian13``, ``indian14`` and ``indian-group``, ``rummy_rules.indian.cases``), with the CLI
switches the variants declare. Output, one object a line: the variant's answer; for a game no
installed variant judges ``{"id", "error": "unsupported game: ..."}``; for a malformed line
``{"id", "error": "..."}`` (``id`` null when unknown), and the run goes on.

Exit status 0 when every line parsed, 2 otherwise.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any, NoReturn, TextIO

from rummy_rules.cases import CaseError, judge_of, judges
from rummy_rules.console import run_console


def evaluate_case(case: Any, flags: frozenset[str] = frozenset()) -> dict[str, Any]:
    """The output object for one decoded case under the CLI switches ``flags`` (their names).
    Raises CaseError for a malformed case."""
    if not isinstance(case, dict):
        raise CaseError("a case must be a JSON object")
    game = case.get("game")
    if not isinstance(game, str):
        raise CaseError("missing or non-string field 'game'")
    cases = judge_of(game)
    if cases is None:
        return {"id": case.get("id"), "error": f"unsupported game: {game}"}
    return cases.judge(game, case, flags)


def evaluate_stream(source: TextIO, sink: TextIO, flags: frozenset[str] = frozenset()) -> int:
    """Judge every non-blank line of source into sink. Returns the exit status (0 or 2)."""
    status = 0
    for number, line in enumerate(source):
        if number == 0:
            line = line.removeprefix("\ufeff")  # a byte order mark is not part of the JSON
        if not line.strip():
            continue
        case_id = None
        try:
            case = json.loads(line)
        except (ValueError, RecursionError) as exc:  # also nesting or numbers too big to read
            sink.write(json.dumps({"id": None, "error": f"invalid JSON: {exc}"}) + "\n")
            status = 2
            continue
        if isinstance(case, dict) and isinstance(case.get("id"), str | int | float | bool):
            case_id = case.get("id")
        try:
            out = evaluate_case(case, flags)
        except CaseError as exc:
            out = {"id": case_id, "error": str(exc)}
            status = 2
        sink.write(json.dumps(out) + "\n")
    return status


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``rummy-rules`` / ``python -m rummy_rules``. Returns the exit status."""
    parser = argparse.ArgumentParser(prog="rummy-rules", description="Rummy rules tools.")
    commands = parser.add_subparsers(dest="command", required=True)
    evaluate = commands.add_parser(
        "evaluate", help="judge rules cases (JSON lines on stdin) and print results (JSON lines)"
    )
    declared: list[str] = []
    for cases in judges():
        for flag in cases.flags:
            if flag.name not in declared:
                declared.append(flag.name)
                evaluate.add_argument(f"--{flag.name}", action="store_true", help=flag.help)
    args = vars(parser.parse_args(argv))
    flags = frozenset(name for name in declared if args.get(name.replace("-", "_")))
    # a reader that goes away (`| head`) is the console wrapper's (script, rummy_rules.console)
    return evaluate_stream(sys.stdin, sys.stdout, flags)


def script() -> NoReturn:
    """The ``rummy-rules`` console script: :func:`main` inside
    :func:`~rummy_rules.console.run_console` (a closed pipe ends it quietly)."""
    run_console(main)
