"""docs/operations.md's grpcurl calls, as written there, against the five services: ``list``,
``describe`` of a service and of a single method (reflection v1, no token), and one authorised
call with a token from ``rummy token``.

The lines are read from that page's grpcurl section (its fenced block of ``grpcurl`` lines), the
table service's default address replaced by the stack's, and run by bash from the repository
root, as a reader pastes them. grpcurl is not a Debian package: .ci/run installs the version the
page pins with ``go install`` into ``$(go env GOPATH)/bin``, where this test looks when it is not
on PATH; without it the test is skipped, saying so.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from rummy.table.v1 import table_service_pb2 as api
from rummy_platform.auth import Role, bearer_metadata
from rummy_testing.players import Operator
from rummy_testing.stacks import RunningStack

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "operations.md"
DEFAULT_TABLE = "127.0.0.1:15051"
TABLE_SERVICE = "rummy.table.v1.TableService"


def _section() -> str:
    text = PAGE.read_text(encoding="utf-8")
    start = text.index("\n## grpcurl\n")
    end = text.index("\n## ", start + 1)
    return text[start:end]


def _calls(fence: str = "text") -> list[str]:
    """The ``grpcurl ...`` lines of the section's fenced blocks of info string ``fence``
    (``text``, the default: the plaintext stack's; ``shell``: a TLS stack's), in order."""
    blocks = re.findall(rf"^```{fence}\n(.*?)^```$", _section(), re.MULTILINE | re.DOTALL)
    return [line for block in blocks for line in block.splitlines() if line.startswith("grpcurl ")]


def _grpcurl() -> str | None:
    found = shutil.which("grpcurl")
    if found:
        return found
    go = shutil.which("go")
    if go is None:
        return None
    gopath = subprocess.run(
        [go, "env", "GOPATH"], capture_output=True, text=True, check=False, timeout=60
    ).stdout.strip()
    candidate = Path(gopath or Path.home() / "go") / "bin" / "grpcurl"
    return str(candidate) if candidate.is_file() and os.access(candidate, os.X_OK) else None


def test_the_page_pins_the_version_ci_installs() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    (version,) = re.findall(r'^GRPCURL_VERSION="(v[\d.]+)"$', ci, re.MULTILINE)
    assert f"go install github.com/fullstorydev/grpcurl/cmd/grpcurl@{version}" in _section()


def test_the_tls_calls_are_the_plaintext_ones_with_the_local_certificates() -> None:
    flags = (
        "-cacert .local/certs/ca.pem -cert .local/certs/client.pem -key .local/certs/client-key.pem"
    )
    assert [call.replace(flags, "-plaintext") for call in _calls("shell")] == _calls()


def test_the_pages_grpcurl_calls_work_against_a_running_stack(rummy_stack: RunningStack) -> None:
    grpcurl = _grpcurl()
    if grpcurl is None:
        pytest.skip(
            "grpcurl is not installed (not on PATH nor in $(go env GOPATH)/bin): "
            "go install github.com/fullstorydev/grpcurl/cmd/grpcurl@v1.9.3 (.ci/run does)"
        )
    calls = _calls("shell" if rummy_stack.stack.config.tls_dir is not None else "text")
    assert len(calls) == 4 and all(DEFAULT_TABLE in call for call in calls), calls
    env = {
        **os.environ,
        "PATH": f"{Path(grpcurl).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        **rummy_stack.endpoints.token_keys.issuer_environment(),
    }

    def run(line: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["bash", "-c", line.replace(DEFAULT_TABLE, rummy_stack.endpoints.table)],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )

    listed, described, method, call = (run(line) for line in calls)
    for done in (listed, described, method, call):
        assert done.returncode == 0, (done.args, done.stdout, done.stderr)
    assert set(listed.stdout.split()) >= {
        TABLE_SERVICE,
        "grpc.health.v1.Health",
        "grpc.reflection.v1.ServerReflection",
        "grpc.reflection.v1alpha.ServerReflection",
    }
    assert described.stdout.startswith(f"{TABLE_SERVICE} is a service:")
    assert "rpc ListTables ( .rummy.table.v1.ListTablesRequest )" in described.stdout
    assert method.stdout.startswith(f"{TABLE_SERVICE}.ListTables is a method:")
    assert "rpc ListTables ( .rummy.table.v1.ListTablesRequest )" in method.stdout
    assert "rpc TakeSeat" not in method.stdout  # the one method, not the whole service
    assert isinstance(json.loads(call.stdout), dict)

    # the same call without the page's token is refused: the token is what authorises it
    anonymous = run(re.sub(r'-H "authorization: Bearer \$\([^)]*\)" ', "", calls[3]))
    assert anonymous.returncode != 0
    assert "Unauthenticated" in anonymous.stderr, anonymous.stderr


CLIENT_PAGE = ROOT / "docs" / "client.md"
DEFAULT_LEDGER = "127.0.0.1:15053"


def _client_page_script() -> str:
    """docs/client.md's block that opens a table and grants its players (under "Running the
    example"), as a reader pastes it into a shell."""
    text = CLIENT_PAGE.read_text(encoding="utf-8")
    start = text.index("\n## Running the example\n")
    section = text[start : text.index("\n## ", start + 1)]
    blocks: list[str] = re.findall(r"^```sh\n(.*?)^```$", section, re.MULTILINE | re.DOTALL)
    (script,) = [block for block in blocks if "OpenTable" in block]
    return script


def test_the_client_pages_calls_open_a_table_and_fund_its_players(
    rummy_stack: RunningStack, operator: Operator
) -> None:
    grpcurl = _grpcurl()
    if grpcurl is None:
        pytest.skip("grpcurl is not installed (not on PATH nor in $(go env GOPATH)/bin)")
    script = _client_page_script()
    assert DEFAULT_TABLE in script and DEFAULT_LEDGER in script, script
    assert re.search(r'^TLS="-cacert .*"$', script, re.MULTILINE), script
    if rummy_stack.stack.config.tls_dir is None:  # a plaintext run (RUMMY_INSECURE=1)
        script = re.sub(r'^TLS=".*"$', "TLS=-plaintext", script, flags=re.MULTILINE)
    script = script.replace(DEFAULT_TABLE, rummy_stack.endpoints.table)
    script = script.replace(DEFAULT_LEDGER, rummy_stack.endpoints.ledger)
    done = subprocess.run(
        ["bash", "-e", "-c", script],
        cwd=ROOT,
        env={
            **os.environ,
            "PATH": f"{Path(grpcurl).parent}{os.pathsep}{os.environ.get('PATH', '')}",
            **rummy_stack.endpoints.token_keys.issuer_environment(),
        },
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, (done.stdout, done.stderr)
    decoder, answers, at = json.JSONDecoder(), [], 0
    while done.stdout[at:].strip():
        at += len(done.stdout[at:]) - len(done.stdout[at:].lstrip())
        answer, at = decoder.raw_decode(done.stdout, at)
        answers.append(answer)
    opened, *granted = answers
    assert "table_id" in opened, answers
    assert len(granted) == 2, answers
    ops = bearer_metadata(operator.authority.issue("ops", Role.OPERATOR, 600))
    listed = operator.table.ListTables(
        api.ListTablesRequest(page_size=500), metadata=ops, timeout=30
    )
    (table,) = [t for t in listed.tables if t.table_id == opened["table_id"]]
    assert (table.seat_count, table.point_value_hundredths) == (4, 10), table
    for player, grant in zip(("alice", "bob"), granted, strict=True):
        assert int(grant["balance_hundredths"]) >= 100_000, grant
        assert operator.balance(player).balance_hundredths >= 100_000
