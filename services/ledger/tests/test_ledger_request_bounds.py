"""Bad input to the ledger's gRPC API never reaches the database (issue 12, repro 5): page tokens
are parsed strictly, ids and keys are bounded before the query, and grants are bounded per grant
and per balance. The real ServiceHost in-process, on a real PostgreSQL database."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import grpc
import pytest
from ledger_support import balance_of, new_id, storage, wall_clock
from prometheus_client import CollectorRegistry
from psycopg_pool import ConnectionPool

from rummy.ledger.v1 import ledger_service_pb2 as pb
from rummy.ledger.v1 import ledger_service_pb2_grpc as pb_grpc
from rummy_ledger.application.accounts import grant
from rummy_ledger.application.reactions import Ledger
from rummy_ledger.config import LedgerSettings
from rummy_ledger.domain.accounts import Grant, GrantLimits, InvalidCommand
from rummy_ledger.entrypoints import grpc as grpc_adapter
from rummy_platform.auth import Role, authorized_channel
from rummy_platform.config import ConfigError, Settings
from rummy_platform.limits import open_channel
from rummy_platform.server import ServiceHost
from rummy_testing.settings_env import use_settings_environment
from rummy_testing.token_keys import issuer_authority, token_environment, token_settings

pytestmark = pytest.mark.integration

LIMITS = GrantLimits(max_grant_hundredths=10_000, max_balance_hundredths=25_000)


@pytest.fixture(scope="module")
def host(pool: ConnectionPool) -> Iterator[ServiceHost]:
    settings = Settings(**token_settings(), grpc_port=0, metrics_port=0)
    served = ServiceHost("ledger", settings, registry=CollectorRegistry())
    served.add_servicer(
        grpc_adapter.add_to_server,
        grpc_adapter.LedgerServicer(Ledger(clock=wall_clock, grant_limits=LIMITS), storage(pool)),
        grpc_adapter.SERVICE_NAME,
    )
    served.start()
    try:
        yield served
    finally:
        served.stop(grace_seconds=1)


def operator(host: ServiceHost) -> pb_grpc.LedgerServiceStub:
    token = issuer_authority().issue("ops", Role.OPERATOR)
    return pb_grpc.LedgerServiceStub(authorized_channel(open_channel(host.address), token))


def status_of(call: Callable[[], object]) -> tuple[grpc.StatusCode, str]:
    """The status code and details of the ``grpc.RpcError`` that ``call`` raises (details
    ``""`` when the server sent none)."""
    with pytest.raises(grpc.RpcError) as error:
        call()
    return error.value.code(), error.value.details() or ""


def command_rows(pool: ConnectionPool, key_like: str) -> int:
    with pool.connection() as conn:
        row = conn.execute(
            "SELECT count(*) FROM command_results WHERE key LIKE %s", (key_like,)
        ).fetchone()
    assert row is not None
    return int(row[0])


@pytest.mark.parametrize("forged", ["9" * 30, "9" * 5000, "²", "-5", "007"])
def test_a_forged_statement_page_token_is_invalid_argument(
    host: ServiceHost, pool: ConnectionPool, forged: str
) -> None:
    account = new_id("player")
    ops = operator(host)
    ops.Grant(
        pb.GrantRequest(account_id=account, amount_hundredths=100, idempotency_key=new_id("g"))
    )
    request = pb.GetStatementRequest(account_id=account, page_token=forged)
    code, details = status_of(lambda: ops.GetStatement(request))
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    assert forged not in details
    assert len(ops.GetStatement(pb.GetStatementRequest(account_id=account)).entries) == 1


def test_an_account_id_or_idempotency_key_too_long_for_the_database_is_invalid_argument(
    host: ServiceHost, pool: ConnectionPool
) -> None:
    ops = operator(host)
    long_account = "a" * 201
    request = pb.GrantRequest(account_id=long_account, amount_hundredths=100, idempotency_key="k")
    code, details = status_of(lambda: ops.Grant(request))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "account_id is 201 bytes" in details
    long_key = "k" * 401
    request = pb.GrantRequest(
        account_id=new_id("p"), amount_hundredths=100, idempotency_key=long_key
    )
    code, details = status_of(lambda: ops.Grant(request))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "idempotency_key is 401 bytes" in details
    assert command_rows(pool, "grant:kkkk%") == 0
    code, _ = status_of(lambda: ops.GetBalance(pb.GetBalanceRequest(account_id=long_account)))
    assert code == grpc.StatusCode.INVALID_ARGUMENT


def test_a_9e18_grant_is_refused_and_later_grants_still_work(
    host: ServiceHost, pool: ConnectionPool
) -> None:
    ops = operator(host)
    account, key = new_id("player"), new_id("grant")
    huge = pb.GrantRequest(account_id=account, amount_hundredths=9 * 10**18, idempotency_key=key)
    code, details = status_of(lambda: ops.Grant(huge))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "at most 10000 hundredths" in details
    assert command_rows(pool, f"grant:{key}") == 0
    fine = pb.GrantRequest(account_id=account, amount_hundredths=10_000, idempotency_key=key)
    assert ops.Grant(fine).balance_hundredths == 10_000
    assert ops.Grant(fine).balance_hundredths == 10_000  # the same key and body: the first answer


def test_a_grant_that_would_pass_the_maximum_balance_is_refused_and_moves_nothing(
    host: ServiceHost, pool: ConnectionPool
) -> None:
    ops = operator(host)
    account = new_id("player")
    for _ in range(2):
        ops.Grant(
            pb.GrantRequest(
                account_id=account, amount_hundredths=10_000, idempotency_key=new_id("g")
            )
        )
    key = new_id("grant")
    over = pb.GrantRequest(account_id=account, amount_hundredths=5_001, idempotency_key=key)
    code, details = status_of(lambda: ops.Grant(over))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "maximum balance of 25000" in details
    assert balance_of(pool, account) == (20_000, 0, 20_000)
    up_to = pb.GrantRequest(account_id=account, amount_hundredths=5_000, idempotency_key=key)
    assert ops.Grant(up_to).balance_hundredths == 25_000  # the refused key was not taken


def test_the_grant_handler_checks_lengths_before_any_query(pool: ConnectionPool) -> None:
    with pytest.raises(InvalidCommand, match="account id is 129 bytes"):
        grant(storage(pool), Grant("op", "a" * 129, 100, new_id("grant")))
    with pytest.raises(InvalidCommand, match="idempotency key is 129 bytes"):
        grant(storage(pool), Grant("op", new_id("player"), 100, "k" * 129))


def test_grant_limits_come_from_the_ledger_settings_with_sane_defaults(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    required = {**token_environment(), "KAFKA_BOOTSTRAP_SERVERS": "k:1",
                "DATABASE_URL": "postgresql://x"}  # fmt: skip
    use_settings_environment(monkeypatch, required)
    assert LedgerSettings.load().grant_limits == GrantLimits()
    assert GrantLimits().max_grant_hundredths <= GrantLimits().max_balance_hundredths
    given = {
        "RUMMY_LEDGER_MAX_GRANT_HUNDREDTHS": "500",
        "RUMMY_LEDGER_MAX_BALANCE_HUNDREDTHS": "900",
    }
    use_settings_environment(monkeypatch, {**required, **given})
    assert LedgerSettings.load().grant_limits == GrantLimits(500, 900)
    for bad in (
        {"RUMMY_LEDGER_MAX_GRANT_HUNDREDTHS": "1e9"},
        {"RUMMY_LEDGER_MAX_GRANT_HUNDREDTHS": "0"},
        {"RUMMY_LEDGER_MAX_BALANCE_HUNDREDTHS": "9" * 30},
        {"RUMMY_LEDGER_MAX_GRANT_HUNDREDTHS": "900", "RUMMY_LEDGER_MAX_BALANCE_HUNDREDTHS": "500"},
    ):
        use_settings_environment(monkeypatch, {**required, **bad})
        with pytest.raises(ConfigError, match="RUMMY_LEDGER_MAX_(GRANT|BALANCE)_HUNDREDTHS"):
            LedgerSettings.load()
