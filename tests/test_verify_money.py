"""The verifier page's money formatter (web/verify/money.js, the page's and cli.mjs's one home of
it) writes every amount as the ops CLI does (``rummy_ops.money.tokens``, ``commission_text``):
seeded random amounts of every size (past 2**53 and past 64 bits, negative and positive, signed
and not), and the edges, formatted by both and compared as text."""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path

import pytest

from rummy_ops.money import commission_text, tokens
from rummy_testing.tools import required_executable

ROOT = Path(__file__).resolve().parents[1]

#: integration: runs node as a process (docs/testing.md#tests).
pytestmark = pytest.mark.integration

FORMAT_JS = """
import { readFileSync } from "node:fs";
import vm from "node:vm";
vm.runInThisContext(readFileSync(process.argv[1], "utf8"));
const V = globalThis.BBVerify;
const amounts = JSON.parse(readFileSync(0, "utf8"));
console.log(JSON.stringify(amounts.map((a) => [
  V.tokens(BigInt(a)), V.tokens(BigInt(a), true), V.tokens(a),
  BigInt(a) >= 0n ? V.percent(a) : null,
])));
"""


def amounts() -> list[int]:
    rng = random.Random(31)
    edges = [0, 1, 5, 9, 10, 99, 100, 101, 167, 1300, 2**53 - 1, 2**53, 2**53 + 1, 2**64 + 7]
    drawn = [
        rng.randrange(-(10 ** rng.randint(1, 40)), 10 ** rng.randint(1, 40)) for _ in range(500)
    ]
    return sorted({*edges, *(-e for e in edges), *drawn})


def test_the_page_writes_every_amount_as_the_ops_cli_does() -> None:
    node = required_executable("node", "bash deploy/local/node.sh install")
    values = amounts()
    # the amounts as JSON strings of digits: a Number past 2**53 would already be rounded
    done = subprocess.run(
        [node, "--input-type=module", "-e", FORMAT_JS, str(ROOT / "web/verify/money.js")],
        input=json.dumps([str(v) for v in values]),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    assert len(got) == len(values)
    for value, (plain, signed, from_text, percent) in zip(values, got, strict=True):
        assert plain == tokens(value) == from_text, value
        assert signed == tokens(value, signed=True), value
        if value >= 0:
            assert percent == commission_text(value), value
