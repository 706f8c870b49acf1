"""The example client of docs/client.md (``docs/examples/client.py``) plays hands to their end
and its saved files verify.

A stack of the module's own (the five services as processes on the real brokers) and a second
table-service instance. Each example runs as a subprocess, as a reader runs it, with a token
minted by ``rummy token`` as the page says; each must exit 0 having saved one ended hand's proof
bundle and its own record (the commitment it was shown, the seed it sent), the record must agree
with the table's stream (``SeedCommitted`` and ``ClientSeedContributed`` of that hand), its seat
must have drawn and discarded, and ``node web/verify/cli.mjs <bundle> --record <record>`` must
verify the hand with the record.

- Against two bots (``rummy_ops.bots``), at a table the second instance serves, the example
  pointed at the first: its first call is redirected (``rummy_table.contract.TableRouter``), its
  watch follows the table there, and it says it followed a redirect.
- Two examples alone at a table: neither declares, so one drops at the turn given by
  ``--give-up-at`` (through ``Play``, the variant's own command) and the other wins. Then two
  more at the same table, whose first view shows that ended hand: they take only the hand they
  are dealt into as theirs and play it. Every example stands up as it exits: the table's view
  shows none of them seated.
- An example stopped by SIGTERM while it waits for a hand exits 130 and has left its seat.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from click.testing import CliRunner

from rummy.fairness.v1 import events_pb2 as fairness_pb
from rummy.table.v1 import events_pb2 as table_pb
from rummy.table.v1 import table_service_pb2 as api
from rummy_ops.bots.client import Bot
from rummy_ops.bots.strategy import BotBrain, Temperament
from rummy_ops.cli import main
from rummy_platform.auth import Role, TokenAuthority, bearer_metadata
from rummy_platform.topics import TABLE_EVENTS
from rummy_table.contract import TableRouter
from rummy_testing.players import SHOES, Operator, rule_set
from rummy_testing.processes import ExtraService
from rummy_testing.stacks import RunningStack, running_stack
from rummy_testing.tools import required_executable

ROOT = Path(__file__).resolve().parents[2]
CLIENT = ROOT / "docs" / "examples" / "client.py"
VERIFIER = ROOT / "web" / "verify" / "cli.mjs"
#: Tables opened at most while looking for one the second instance serves (each lands on either
#: instance by its id's partition, about one in two on the second).
MOST_TABLES = 16
#: The client's whole run: seat, one hand to its end, the proof (seconds).
CLIENT_TIMEOUT_S = 150


@pytest.fixture(scope="module")
def stack(kafka_bootstrap: str, database_url: str) -> Iterator[RunningStack]:
    with running_stack(kafka_bootstrap, database_url, "client") as running:
        yield running


@pytest.fixture(scope="module")
def second(stack: RunningStack) -> Iterator[str]:
    """A second table-service instance; its address."""
    process = ExtraService(stack.stack, "table", "second", same_ports=False).start()
    try:
        yield process.address
    finally:
        process.stop()


@pytest.fixture
def operator(stack: RunningStack) -> Iterator[Operator]:
    op = Operator(stack.endpoints.table, stack.endpoints.ledger, authority(stack))
    yield op
    op.close()


def authority(stack: RunningStack) -> TokenAuthority:
    return TokenAuthority.of_issuer(stack.endpoints.token_keys)


def owner_of(table_id: str, start: str, metadata: tuple[tuple[str, str], ...]) -> str:
    """The address of the instance serving ``table_id`` (a first WatchTable view there, the
    redirect from ``start`` followed); waits out a handover (UNAVAILABLE naming no owner)."""
    return first_view(table_id, start, metadata)[0]


def first_view(
    table_id: str, start: str, metadata: tuple[tuple[str, str], ...]
) -> tuple[str, api.PlayerView]:
    """The address of the instance serving ``table_id`` and its first WatchTable view there (the
    redirect from ``start`` followed); waits out a handover (UNAVAILABLE naming no owner)."""
    router = TableRouter(start)
    deadline = time.monotonic() + 60
    try:
        while True:
            address = router.address_for(table_id)
            call = router.stub(address).WatchTable(
                api.WatchTableRequest(table_id=table_id), metadata=metadata, timeout=10
            )
            try:
                return address, next(iter(call)).view
            except grpc.RpcError as error:
                if not router.follow(error, table_id, address) or time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
            finally:
                call.cancel()
    finally:
        router.close()


def mint(stack: RunningStack, account: str) -> str:
    """``rummy token --role player --account <account>`` with the stack's issuer key."""
    result = CliRunner().invoke(
        main,
        ["token", "--role", "player", "--account", account],
        env=stack.endpoints.token_keys.issuer_environment(),
    )
    assert result.exit_code == 0, result.output
    return result.stdout.strip().splitlines()[-1]


def seated(stack: RunningStack, table_id: str) -> set[str]:
    """The accounts seated at ``table_id`` now, by an operator's view of it."""
    watch = bearer_metadata(authority(stack).issue("example-ops", Role.OPERATOR, 600))
    view = first_view(table_id, stack.endpoints.table, watch)[1]
    return {s.account_id for s in view.seats if s.seated}


class Example:
    """``docs/examples/client.py`` as a subprocess for ``account`` (granted House Tokens, its
    token minted to a file) at ``table_id`` through ``address``; its stdout read as it comes,
    its files in ``folder/hands``."""

    def __init__(
        self,
        stack: RunningStack,
        operator: Operator,
        folder: Path,
        address: str,
        table_id: str,
        *extra: str,
    ) -> None:
        self.stack = stack
        self.table_id = table_id
        self.account = f"example-{uuid.uuid4().hex[:8]}"
        operator.grant(self.account, 100_000)
        folder.mkdir()
        token_file = folder / "player.token"
        token_file.write_text(mint(stack, self.account) + "\n", encoding="utf-8")
        self.out = folder / "hands"
        self.lines: list[str] = []
        self.process = subprocess.Popen(
            [sys.executable, "-u", str(CLIENT), "--table", address, "--token-file",
             str(token_file), "--table-id", table_id, "--out", str(self.out), *extra],
            cwd=ROOT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )  # fmt: skip
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line.rstrip("\n"))

    def seated(self, timeout: float = 60) -> str:
        """The example's ``seat ...`` line, once it printed it."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self.process.poll() is None:
            found = [line for line in self.lines if line.startswith("seat ")]
            if found:
                return found[0]
            time.sleep(0.1)
        raise AssertionError(f"the example did not sit down: {self.text()}")

    def text(self) -> str:
        self._reader.join(0 if self.process.poll() is None else 10)
        return "\n".join(self.lines)

    def finished(self, status: int = 0) -> str:
        """Its output once it exited with ``status`` (AssertionError with its output and the
        services' log tails when it did not within ``CLIENT_TIMEOUT_S``)."""
        try:
            code = self.process.wait(CLIENT_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.process.kill()
            raise AssertionError(
                f"the example did not finish a hand: {self.text()}\n{self.stack.log_tails()}"
            ) from None
        text = self.text()
        print(text)
        assert code == status, text
        return text

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)

    def verify(self, node: str) -> dict[str, Any]:
        """Check its one saved hand against the table's stream and with the verifier's CLI;
        returns the bundle."""
        bundles = sorted(self.out.glob("*.json"))
        assert len(bundles) == 1, (bundles, self.text())
        hand_id = bundles[0].stem
        record = self.out / "record.jsonl"
        facts = [json.loads(line) for line in record.read_text().splitlines()]
        assert [f["hand_id"] for f in facts] == [hand_id, hand_id], facts
        assert {f["account_id"] for f in facts} == {self.account}
        seat = facts[0]["seat"]

        # what the example kept is what the table recorded for the hand
        stream = self.stack.payloads(TABLE_EVENTS, self.table_id)
        (committed,) = [
            p for p in stream if isinstance(p, fairness_pb.SeedCommitted) and p.hand_id == hand_id
        ]
        (sent,) = [
            p
            for p in stream
            if isinstance(p, table_pb.ClientSeedContributed) and p.hand_id == hand_id
            if p.seat == seat
        ]
        assert facts[0]["commitment"] == committed.commitment_sha256.hex()
        assert facts[1]["seed_hex"] == sent.client_seed.hex() != ""

        # it played: its seat drew and discarded in the hand
        bundle: dict[str, Any] = json.loads(bundles[0].read_text())
        mine = [e["event"]["type"] for e in bundle["events"] if e["event"].get("seat") == seat]
        assert "table.CardDrawn" in mine and "table.CardDiscarded" in mine, mine

        verified = subprocess.run(
            [node, str(VERIFIER), str(bundles[0]), "--record", str(record)],
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
        assert verified.returncode == 0, verified.stdout + verified.stderr
        assert "your own record agrees with the bundle" in verified.stdout, verified.stdout
        return bundle


RULES = rule_set(turn_seconds=300, seed_window_seconds=30, start_delay_seconds=20)


def test_the_example_plays_a_hand_against_bots_through_a_redirect_and_its_files_verify(
    stack: RunningStack, second: str, operator: Operator, tmp_path: Path
) -> None:
    node = required_executable("node", "bash deploy/local/node.sh install")
    first = stack.endpoints.table
    watch = bearer_metadata(authority(stack).issue("example-ops", Role.OPERATOR, 600))
    for _ in range(MOST_TABLES):
        table_id = operator.open_table(4, 10, 500, RULES)
        if owner_of(table_id, first, watch) == second:
            break
    else:
        pytest.fail(f"none of {MOST_TABLES} tables is served by the second instance")

    example = Example(stack, operator, tmp_path / "example", first, table_id)
    bots: list[Bot] = []
    router = TableRouter(first)
    try:
        assert example.seated().endswith(f"served by {second}"), example.text()
        for n in range(2):  # once the example sits: the first hand deals it in
            account = f"example-bot-{uuid.uuid4().hex[:8]}"
            operator.grant(account, 100_000)
            token = authority(stack).issue(account, Role.PLAYER, 3600)
            # Bots that never drop: two first drops would end the hand before the example's
            # first turn, and this test checks the example's own moves.
            brain = BotBrain(seed=n, temperament=Temperament(give_up=0.0))
            bot = Bot(account, token, router, table_id, SHOES[4], brain)
            bot.take_seat()
            bots.append(bot)
        for bot in bots:
            bot.start()
        text = example.finished()
        assert re.search(r", [1-9]\d* redirect\(s\)$", text), text
        example.verify(node)
    finally:
        example.kill()
        for bot in bots:
            bot.stop(leave=False)
        router.close()


def test_two_examples_alone_at_a_table_end_their_hand_by_a_drop_and_both_verify(
    stack: RunningStack, operator: Operator, tmp_path: Path
) -> None:
    node = required_executable("node", "bash deploy/local/node.sh install")
    table_id = operator.open_table(4, 10, 500, RULES)
    examples: list[Example] = []
    hands: list[str] = []
    # the second pair sits at a table whose last hand has ended: their first view shows it
    for pair, give_up in (("first", "9"), ("second", "3")):
        two = [
            Example(
                stack, operator, tmp_path / f"{pair}-{name}", stack.endpoints.table, table_id,
                "--give-up-at", give_up,
            )
            for name in ("one", "two")
        ]  # fmt: skip
        examples += two
        try:
            for example in two:
                example.seated()
            texts = [example.finished() for example in two]
            bundles = [example.verify(node) for example in two]
            assert bundles[0]["hand_id"] == bundles[1]["hand_id"] not in hands
            hands.append(bundles[0]["hand_id"])
            dropped = [text for text in texts if "DropAnswer kind: DROP_KIND_MIDDLE" in text]
            assert len(dropped) == 1, texts
            assert all(re.search(r"points, net [+-]\d+\.\d\d tokens$", t, re.M) for t in texts)
        finally:
            for example in two:
                example.kill()
        assert seated(stack, table_id).isdisjoint(e.account for e in examples)


def test_an_example_stopped_by_sigterm_leaves_its_seat(
    stack: RunningStack, operator: Operator, tmp_path: Path
) -> None:
    table_id = operator.open_table(4, 10, 500, RULES)
    example = Example(stack, operator, tmp_path / "alone", stack.endpoints.table, table_id)
    try:
        example.seated()
        assert example.account in seated(stack, table_id)
        example.process.send_signal(signal.SIGTERM)  # alone: no hand starts, it waits
        text = example.finished(130)
        assert "left seat" in text, text
        assert example.account not in seated(stack, table_id)
    finally:
        example.kill()
