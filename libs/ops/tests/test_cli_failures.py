"""Fast, clear failures in the ``rummy`` command (issue 31): an unreachable Kafka, PostgreSQL or
table service is one ``Error:`` line naming the address within seconds (rummy_ops.reach: 5 s at
most; kafka-python alone waited 30 s and more, the table router retried UNAVAILABLE for its
wait), exit status 1, no traceback; ``rummy export`` says what it wrote; a closed pipe ends the
run quietly; no progress bar off a terminal; every abbreviation the lines print is explained in
``--help``."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click
import grpc
import pytest
from click.testing import CliRunner

import rummy_ops.demo.command as demo_command
import rummy_ops.replay.command as replay_command
from rummy_game.bundle import bundles
from rummy_ops.cli import main
from rummy_ops.reach import Unreachable, connect_postgres, require_grpc, require_kafka
from rummy_ops.replay.jsonl import read_jsonl
from rummy_ops.stack import Stack, StackError
from rummy_rules.console import CLOSED_PIPE_STATUS

KEPT = Path(__file__).resolve().parents[3] / "tests" / "data" / "kept"
EXPORT = KEPT / "indian-points.export.jsonl"
#: Nothing listens on port 1 (a privileged port): every connection to it is refused.
CLOSED = "127.0.0.1:1"
RUMMY = Path(sys.executable).parent / "rummy"


@contextmanager
def silent_listener() -> Iterator[int]:
    """A port that accepts TCP connections (the kernel's backlog) and never answers a byte."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        yield server.getsockname()[1]


@pytest.mark.parametrize(
    "command",
    [
        ["replay", "--all"],
        ["export", "--all", "-o", "{tmp}/out.jsonl"],
        ["proof", "--hand", "h-1", "-o", "{tmp}/proof.json"],
        ["audit"],
    ],
    ids=lambda c: c[0],
)
def test_a_command_given_an_unreachable_kafka_says_so_at_once(
    command: list[str], tmp_path: Path
) -> None:
    args = [a.format(tmp=tmp_path) for a in command] + ["--bootstrap", CLOSED]
    started = time.monotonic()
    result = CliRunner(env={"DATABASE_URL": ""}).invoke(main, args)
    took = time.monotonic() - started
    assert result.exit_code == 1, result.output
    assert f"Error: cannot reach Kafka at {CLOSED}: {CLOSED}: connection refused" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert took < 15, took  # 5 s is the goal; kafka-python alone gave up after 30 s


@pytest.mark.parametrize(
    "command",
    [
        ["close-table", "gold-8", "--address", CLOSED],
        ["close-table", "00000000-0000-4000-8000-000000000001", "--address", CLOSED],
        ["tables", "--address", CLOSED],
        ["replay", "--table", "gold-8", "--table-address", CLOSED, "--bootstrap", CLOSED],
    ],
    ids=["close-table-name", "close-table-id", "tables", "replay-table-name"],
)
def test_a_command_given_a_table_service_address_where_nothing_listens_says_so_at_once(
    command: list[str],
) -> None:
    started = time.monotonic()
    result = CliRunner(env={"DATABASE_URL": ""}).invoke(main, [*command, "--token", "t"])
    took = time.monotonic() - started
    assert result.exit_code == 1, result.output
    assert f"Error: cannot reach the table service at {CLOSED}: connection refused" in (
        result.output
    ), result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert took < 15, took  # 5 s is the goal; the router alone retried UNAVAILABLE 10-30 s


@pytest.mark.parametrize("command", [["hands", "alice"], ["limits", "alice"]], ids=lambda c: c[0])
def test_a_ledger_command_given_an_address_where_nothing_listens_says_so_at_once(
    command: list[str],
) -> None:
    result = CliRunner().invoke(main, [*command, "--address", CLOSED, "--token", "t"])
    assert result.exit_code == 1, result.output
    assert f"Error: cannot reach the ledger service at {CLOSED}: connection refused" in (
        result.output
    ), result.output
    assert "UNAVAILABLE" not in result.output


@pytest.mark.parametrize("command", ["hands", "limits"])
@pytest.mark.parametrize("account", ["", "  "], ids=["empty", "blank"])
def test_an_empty_account_id_is_refused_before_any_call(command: str, account: str) -> None:
    result = CliRunner().invoke(main, [command, account, "--address", CLOSED, "--token", "t"])
    assert result.exit_code == 2, result.output
    assert "Invalid value for 'ACCOUNT_ID': an account id is required" in result.output
    assert "INVALID_ARGUMENT" not in result.output
    assert "cannot reach" not in result.output


@contextmanager
def no_service() -> Iterator[str]:
    """The address of a gRPC server that serves nothing: every call is UNIMPLEMENTED."""
    from concurrent.futures import ThreadPoolExecutor

    server = grpc.server(ThreadPoolExecutor(max_workers=2))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        yield f"127.0.0.1:{port}"
    finally:
        server.stop(None)


@pytest.mark.parametrize(
    ("command", "service"),
    [
        (["hands", "alice"], "the ledger service"),
        (["limits", "alice"], "the ledger service"),
        (["tables"], "the table service"),
        (["close-table", "00000000-0000-4000-8000-000000000001", "--no-wait"], "the table service"),
    ],
    ids=lambda c: c[0] if isinstance(c, list) else "",
)
def test_a_command_pointed_at_another_service_names_the_service_it_expected(
    command: list[str], service: str
) -> None:
    with no_service() as address:
        result = CliRunner().invoke(main, [*command, "--address", address, "--token", "t"])
    assert result.exit_code == 1, result.output
    assert f"Error: the service at {address} is not {service} (UNIMPLEMENTED)" in (result.output), (
        result.output
    )
    assert "Method not found" not in result.output


def test_a_port_that_answers_no_grpc_fails_within_the_timeout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("RUMMY_TLS_CA_FILE", "RUMMY_TLS_CERT_FILE", "RUMMY_TLS_KEY_FILE"):
        monkeypatch.delenv(name, raising=False)
    with silent_listener() as port:
        started = time.monotonic()
        with pytest.raises(Unreachable) as raised:
            require_grpc("the table service", f"127.0.0.1:{port}", timeout_s=1.0)
        took = time.monotonic() - started
    assert f"cannot reach the table service at 127.0.0.1:{port}: " in raised.value.message
    assert "no gRPC server answered within 1 s" in raised.value.message
    # a plaintext client is told that the stack serves TLS and which variables it lacks
    assert "in plaintext" in raised.value.message
    assert "RUMMY_TLS_CA_FILE" in raised.value.message
    assert took < 30, took


@pytest.mark.parametrize(
    "command", [["tables"], ["watch", "some-table"], ["hands", "some-hand"]], ids=lambda c: c[0]
)
def test_a_missing_tls_file_is_one_error_line_not_a_traceback(
    command: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = tmp_path / "nope.pem"
    for name in ("RUMMY_TLS_CA_FILE", "RUMMY_TLS_CERT_FILE", "RUMMY_TLS_KEY_FILE"):
        monkeypatch.setenv(name, str(missing))
    monkeypatch.delenv("RUMMY_INSECURE", raising=False)
    with silent_listener() as port:
        result = CliRunner().invoke(
            main, [*command, "--address", f"127.0.0.1:{port}", "--token", "t"]
        )
    assert result.exit_code == 1, result.output
    assert f"Error: TLS file '{missing}' does not exist" in result.output, result.output
    assert "Traceback" not in result.output
    assert isinstance(result.exception, SystemExit), result.exception


def test_a_listening_grpc_server_passes_the_check() -> None:
    from concurrent.futures import ThreadPoolExecutor

    server = grpc.server(ThreadPoolExecutor(max_workers=1))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        require_grpc("the table service", f"127.0.0.1:{port}", timeout_s=30.0)
    finally:
        server.stop(None)


@pytest.mark.parametrize("command", [["up"], ["demo", "--hands", "1"]], ids=lambda c: c[0])
def test_up_and_demo_given_brokers_that_do_not_answer_say_so_before_starting_anything(
    command: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[str] = []

    def start(self: Stack) -> None:  # the stack would start here: record it, start nothing
        started.append("start")
        raise StackError("the stack was started")

    monkeypatch.setattr(Stack, "start", start)
    env = {
        "KAFKA_BOOTSTRAP_SERVERS": CLOSED,
        "DATABASE_URL": "postgresql://rummy:rummy@127.0.0.1:1/rummy",
    }
    result = CliRunner(env=env).invoke(main, command)
    assert result.exit_code == 1, result.output
    assert f"Error: cannot reach Kafka at {CLOSED}: {CLOSED}: connection refused" in result.output
    assert started == []


@pytest.mark.integration  # starts a process
def test_the_console_script_prints_the_error_line_and_no_traceback() -> None:
    run = subprocess.run(
        [str(RUMMY), "replay", "--all", "--bootstrap", CLOSED],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "DATABASE_URL": ""},
    )
    assert run.returncode == 1
    refused = f"Error: cannot reach Kafka at {CLOSED}: {CLOSED}: connection refused"
    assert run.stderr.strip() == refused


def test_an_unknown_host_is_named_with_why() -> None:
    with pytest.raises(Unreachable, match=r"Kafka at kafka\.invalid:9092: .*unknown host"):
        require_kafka("kafka.invalid:9092")


def test_a_port_that_answers_no_kafka_fails_within_the_timeout() -> None:
    with silent_listener() as port:
        started = time.monotonic()
        with pytest.raises(Unreachable) as raised:
            require_kafka(f"127.0.0.1:{port}", timeout_s=1.0)
        took = time.monotonic() - started
    assert f"cannot reach Kafka at 127.0.0.1:{port}: " in raised.value.message
    assert "no Kafka broker answered within 1 s" in raised.value.message
    assert took < 30, took


def test_an_unreachable_ledger_database_is_named_without_its_password() -> None:
    url = "postgresql://rummy:s3cret@127.0.0.1:1/rummy"
    result = CliRunner().invoke(main, ["replay", "--from-file", str(EXPORT), "--database-url", url])
    assert result.exit_code == 1, result.output
    assert "Error: cannot reach PostgreSQL at postgresql://rummy:***@127.0.0.1:1/rummy: " in (
        result.output
    )
    assert "Connection refused" in result.output and "s3cret" not in result.output


def test_a_database_that_does_not_answer_fails_within_the_timeout() -> None:
    with silent_listener() as port:
        started = time.monotonic()
        with pytest.raises(Unreachable, match=f"PostgreSQL at postgresql://u@127.0.0.1:{port}/d"):
            connect_postgres(f"postgresql://u@127.0.0.1:{port}/d", timeout_s=1.0)
        assert time.monotonic() - started < 30


# -- export says what it wrote ---------------------------------------------------------------------


@pytest.fixture()
def kept_stream(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """``rummy export`` reads the kept Indian points export as if from Kafka."""
    envelopes = list(read_jsonl(EXPORT))
    monkeypatch.setattr(replay_command, "require_kafka", lambda bootstrap: None)
    monkeypatch.setattr(replay_command, "read_kafka", lambda *_args, **_kw: envelopes)
    return envelopes


def test_export_says_how_many_events_and_hands_it_wrote_where(
    kept_stream: list[Any], tmp_path: Path
) -> None:
    out = tmp_path / "all.jsonl"
    result = CliRunner().invoke(main, ["export", "--all", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert result.stderr == f"exported {len(kept_stream)} events of 2 hands (1 table) to {out}\n"
    assert list(read_jsonl(out)) == kept_stream


def test_proof_names_the_file_it_wrote_in_the_command_that_checks_it(tmp_path: Path) -> None:
    bundle = tmp_path / "x.json"
    args = ["proof", "--from-file", str(EXPORT), "--hand", "hand-5", "-o", str(bundle)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert bundle.is_file()
    assert f"run: node web/verify/cli.mjs {bundle}" in result.output, result.output
    assert "BUNDLE.json" not in result.output


def test_export_to_standard_output_says_so_on_standard_error(kept_stream: list[Any]) -> None:
    result = CliRunner().invoke(main, ["export", "--all", "-o", "-"])
    assert result.exit_code == 0, result.output
    assert len(result.stdout.splitlines()) == len(kept_stream)
    assert result.stderr == (
        f"exported {len(kept_stream)} events of 2 hands (1 table) to standard output\n"
    )


# -- a closed pipe ---------------------------------------------------------------------------------


@pytest.mark.integration  # starts a process
def test_a_reader_that_goes_away_ends_rummy_quietly() -> None:
    # `rummy replay --from-file ... | head -1`, made certain: the reader is gone before the
    # first line is written
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        run = subprocess.run(
            [str(RUMMY), "replay", "--from-file", str(EXPORT)],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    finally:
        os.close(write_end)
    assert "Traceback" not in run.stderr and "BrokenPipeError" not in run.stderr, run.stderr
    assert run.stderr == ""
    assert run.returncode == CLOSED_PIPE_STATUS


@pytest.mark.integration  # starts a process
def test_rummy_piped_into_head_prints_no_traceback() -> None:
    run = subprocess.run(
        f"'{RUMMY}' replay --from-file '{EXPORT}' | head -1",
        shell=True,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.stdout.startswith("table ") and run.stdout.count("\n") == 1
    assert "Traceback" not in run.stderr, run.stderr


# -- no progress bar off a terminal ----------------------------------------------------------------


def test_the_demo_draws_no_progress_bar_when_its_output_is_not_a_terminal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked: dict[str, Any] = {}

    class Stack:
        def health(self) -> dict[str, str]:
            return {}

        def broken(self) -> None:
            return None

    @contextmanager
    def running_stack(*_args: Any, **_kwargs: Any) -> Iterator[Stack]:
        yield Stack()

    def play(*_args: Any, **kwargs: Any) -> None:
        asked.update(kwargs)
        raise click.ClickException("stopped here")

    monkeypatch.setattr(demo_command, "running_stack", running_stack)
    monkeypatch.setattr(demo_command, "stack_endpoints", lambda stack: None)
    monkeypatch.setattr(demo_command, "play", play)
    result = CliRunner().invoke(main, ["demo", "--hands", "1"])  # CliRunner's output: no tty
    assert "stopped here" in result.output
    assert asked["progress"] is False


# -- every abbreviation explained ------------------------------------------------------------------


def test_the_demos_help_explains_every_outcome_mark_of_every_installed_variant() -> None:
    result = CliRunner().invoke(main, ["demo", "--help"], terminal_width=200)
    assert result.exit_code == 0
    legend = result.output.split("In its output:", 1)[1]
    rows = {line.split(None, 1)[0]: line for line in legend.splitlines() if line.strip()}
    marks = [(o.short, o.label, b.variant.name) for b in bundles() for o in b.outcomes if o.short]
    assert {"W", "fd", "to", "wd"} <= {short for short, _label, _variant in marks}
    for short, label, variant in marks:
        assert short in rows, short
        assert label in rows[short] and variant in rows[short], rows[short]
    for term in ("sN", "net", "x:", "lv:", "pts", "released", "13.00"):
        assert term in legend, term


def test_the_demos_help_lists_every_game_it_accepts() -> None:
    from rummy_ops.demo.plans import games

    shown = " ".join(CliRunner().invoke(main, ["demo", "--help"]).output.split())
    listed = shown.split("--game TEXT", 1)[1].split("Default: every game", 1)[0]
    names = set(re.findall(r"[\w-]+", listed))
    assert set(games()) <= names, (set(games()) - names, listed)


def test_the_replay_help_explains_the_timelines_abbreviations() -> None:
    result = CliRunner().invoke(main, ["replay", "--help"], terminal_width=200)
    assert result.exit_code == 0
    legend = result.output.split("In its output:", 1)[1]
    for term in ("sN", "%", "House Tokens", "--json", "(auto)", "cut", "stock", "!", "pt"):
        assert term in legend, term


# -- secure by default -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "insecure"),
    [([], False), (["--insecure"], True), (["--tls"], False)],
    ids=["default", "insecure", "tls-ignored"],
)
def test_up_and_demo_start_over_tls_unless_insecure_is_given(
    options: list[str], insecure: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    import rummy_ops.stack_command as stack_command

    asked: list[bool] = []

    @contextmanager
    def running_stack(*_args: Any, **kwargs: Any) -> Iterator[None]:
        asked.append(kwargs["insecure"])
        raise click.ClickException("stopped here")
        yield

    for module in (demo_command, stack_command):
        monkeypatch.setattr(module, "running_stack", running_stack)
    for command in (["up"], ["demo", "--hands", "1"]):
        result = CliRunner().invoke(main, [*command, *options])
        assert "stopped here" in result.output, result.output
    assert asked == [insecure, insecure]


def test_a_plaintext_start_says_so_loudly() -> None:
    from rummy_ops.stack_command import tls_line

    assert tls_line(None).startswith("INSECURE: gRPC is plaintext on every port")
    assert "--insecure or RUMMY_INSECURE=1" in tls_line(None)
    assert tls_line(Path("/c")) == "gRPC over mutual TLS on every port (CA and certificates in /c)"
