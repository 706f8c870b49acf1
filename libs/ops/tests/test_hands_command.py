"""``rummy hands ACCOUNT``: what it prints of a player's hands and matches, its JSON, paging
through the ledger's own servicer in-process, and a ledger that refuses or does not answer."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from click.testing import CliRunner
from prometheus_client import CollectorRegistry

from rummy.ledger.v1 import ledger_service_pb2 as pb
from rummy_ledger.adapters.memory import InMemoryUnitOfWork
from rummy_ledger.application.ports import PlayedEntry
from rummy_ledger.application.reactions import Ledger
from rummy_ledger.entrypoints import grpc as grpc_adapter
from rummy_ops.hands_command import as_json, describe, hands
from rummy_platform.auth import Role
from rummy_platform.config import Settings
from rummy_platform.server import ServiceHost
from rummy_testing.token_keys import issuer_authority, token_settings

NOON = datetime(2026, 3, 4, 12, 0, tzinfo=UTC)


def entry(n: int, **fields: object) -> pb.PlayedEntry:
    message = pb.PlayedEntry(
        kind="hand",
        hand_id=f"h{n}",
        table_id="t1",
        variant="indian-points",
        format="single",
        result="won",
        net_hundredths=1300,
    )
    for name, value in fields.items():
        setattr(message, name, value)
    message.ended_at.FromDatetime(NOON.replace(minute=n))
    return message


def test_each_entry_is_one_line_with_its_table_by_name_and_its_net_in_tokens() -> None:
    match = entry(2, kind="match", hand_id="", match_id="m1", format="pool-101", result="lost")
    match.net_hundredths = -1005
    assert describe([entry(3), match], {"t1": "silver-6"}) == [
        "2026-03-04T12:03:00Z  hand   h3  table silver-6  indian-points  single  won  +13.00",
        "2026-03-04T12:02:00Z  match  m1  table silver-6  indian-points  pool-101  lost  -10.05",
    ]
    assert as_json([match], "next")["entries"][0]["net_hundredths"] == -1005


@pytest.fixture()
def served() -> Iterator[str]:
    """The ledger's servicer in-process (in-memory storage) holding seven ended hands of alice,
    a minute apart; its address."""
    uow = InMemoryUnitOfWork(clock=lambda: NOON)
    with uow.transaction():
        uow.history.add(
            [
                PlayedEntry(
                    "alice",
                    "hand",
                    f"h{n}",
                    "t1",
                    "gin",
                    "single",
                    100 * n,
                    "won",
                    NOON + timedelta(minutes=n),
                )
                for n in range(3, 10)
            ]
        )
    settings = Settings(**token_settings(), grpc_port=0, metrics_port=0)
    host = ServiceHost("ledger", settings, registry=CollectorRegistry())
    servicer = grpc_adapter.LedgerServicer(Ledger(clock=lambda: NOON), uow)
    host.add_servicer(grpc_adapter.add_to_server, servicer, grpc_adapter.SERVICE_NAME)
    host.start()
    try:
        yield host.address
    finally:
        host.stop(grace_seconds=1)


def test_it_pages_to_its_limit_and_says_where_to_go_on(served: str) -> None:
    token = issuer_authority().issue("ops", Role.OPERATOR)
    given = ["alice", "--address", served, "--token", token]
    result = CliRunner().invoke(hands, [*given, "--limit", "5"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert [line.split()[2] for line in lines[:5]] == ["h9", "h8", "h7", "h6", "h5"]
    assert lines[0].endswith("gin  single  won  +9.00")
    more = lines[5].removeprefix("more: --page-token ")
    rest = CliRunner().invoke(hands, [*given, "--page-token", more, "--json"])
    printed = json.loads(rest.output)
    assert [e["hand_id"] for e in printed["entries"]] == ["h4", "h3"]
    assert printed["entries"][0]["net_hundredths"] == 400
    assert printed["next_page_token"] == ""
    refused = CliRunner().invoke(hands, ["bob", "--address", served, "--token", "t"])
    assert refused.exit_code == 1
    assert "UNAUTHENTICATED" in refused.output


def test_a_ledger_that_does_not_answer_exits_1_with_the_status() -> None:
    result = CliRunner().invoke(
        hands, ["alice", "--address", "127.0.0.1:1", "--token", "t"], catch_exceptions=False
    )
    assert result.exit_code == 1
    assert "Error: cannot reach the ledger service at 127.0.0.1:1: connection refused" in (
        result.output
    ), result.output
