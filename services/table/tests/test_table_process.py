"""The table service as a process on the real Kafka broker: it opens tables and starts hands
from gRPC calls, is rebuilt from table-events after SIGKILL, and is fenced by a second instance
with the same writer id."""

from __future__ import annotations

import signal
import time
import uuid
from collections.abc import Callable, Iterator

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from rummy.common.v1 import cards_pb2
from rummy.table.v1 import events_pb2 as pb
from rummy.table.v1 import table_service_pb2 as api
from rummy.table.v1 import table_service_pb2_grpc as api_grpc
from rummy_platform.auth import Role, authorized_channel
from rummy_platform.eventlog import KafkaEventLog
from rummy_platform.topics import TABLE_EVENTS
from rummy_table.config import TableSettings
from rummy_testing.service_process import ServiceProcess, start_service
from rummy_testing.settings_env import use_settings_environment
from rummy_testing.token_keys import issuer_authority, token_environment

pytestmark = pytest.mark.slow  # starts service processes (docs/testing.md)

TIMEOUT_S = 60.0


def table_stub(table: ServiceProcess, account: str, role: Role) -> api_grpc.TableServiceStub:
    """A TableService stub calling as ``account`` with ``role``."""
    token = issuer_authority().issue(account, role)
    channel = authorized_channel(table.channel_as(role), token)
    return api_grpc.TableServiceStub(channel)


def start(env: dict[str, str]) -> ServiceProcess:
    return start_service("rummy_table", env, timeout_s=TIMEOUT_S)


def wait_for(predicate: Callable[[], object], what: str) -> None:
    deadline = time.monotonic() + TIMEOUT_S
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture
def env(kafka_bootstrap: str) -> Iterator[dict[str, str]]:
    yield {
        "KAFKA_BOOTSTRAP_SERVERS": kafka_bootstrap,
        **token_environment(),
        "RUMMY_GRPC_PORT": "0",
        "RUMMY_METRICS_PORT": "0",
        "RUMMY_TOPIC_PREFIX": f"tbl{uuid.uuid4().hex[:8]}-",
        "RUMMY_CLOCK_SPEED": "10",
    }


def test_the_service_starts_hands_and_a_restart_after_sigkill_rebuilds_the_table_and_plays_on(
    env: dict[str, str], kafka_bootstrap: str
) -> None:
    first = start(env)
    processes = [first]
    log = KafkaEventLog(kafka_bootstrap)
    topic = env["RUMMY_TOPIC_PREFIX"] + TABLE_EVENTS
    try:
        with first.channel() as channel:
            health = health_pb2_grpc.HealthStub(channel).Check(  # type: ignore[attr-defined]  # HealthStub's stub lists no methods
                health_pb2.HealthCheckRequest()
            )
            assert health.status == health_pb2.HealthCheckResponse.SERVING  # no token needed

        operator = table_stub(first, "op-1", Role.OPERATOR)
        table_id = operator.OpenTable(
            api.OpenTableRequest(
                client_request_id="open-1",
                seat_count=6,
                point_value_hundredths=50,
                commission_bps=500,
                rule_set=cards_pb2.RuleSet(start_delay_seconds=1),
            )
        ).table_id
        with pytest.raises(grpc.RpcError) as denied:
            table_stub(first, "alice", Role.PLAYER).OpenTable(
                api.OpenTableRequest(client_request_id="x", seat_count=6)
            )
        assert denied.value.code() == grpc.StatusCode.PERMISSION_DENIED
        for account in ("alice", "bob"):
            table_stub(first, account, Role.PLAYER).TakeSeat(
                api.TakeSeatRequest(table_id=table_id, client_request_id=f"sit-{account}")
            )

        def started() -> list[pb.HandStarted]:
            return [
                r.envelope.payload
                for r in log.read_stream(topic, table_id)
                if isinstance(r.envelope.payload, pb.HandStarted)
            ]

        wait_for(started, "HandStarted on table-events")
        (hand,) = started()
        assert [s.account_id for s in hand.seats] == ["alice", "bob"]
        assert hand.reservation_hundredths == 130 * 50

        first.process.send_signal(signal.SIGKILL)
        first.process.wait(10)
        second = start(env)
        processes.append(second)
        alice = table_stub(second, "alice", Role.PLAYER)
        view = next(iter(alice.WatchTable(api.WatchTableRequest(table_id=table_id)))).view
        assert view.hand_id == hand.hand_id and view.my_seat == 0
        assert view.phase == api.HAND_PHASE_RESERVING
        again = alice.TakeSeat(
            api.TakeSeatRequest(table_id=table_id, client_request_id="sit-alice")
        )
        assert again.seat == 0  # a retried request id answered from the rebuilt table

        # The restarted instance plays on (a raw client: the partition is owned by then).
        carol = table_stub(second, "carol", Role.PLAYER).TakeSeat(
            api.TakeSeatRequest(table_id=table_id, client_request_id="sit-carol")
        )
        assert carol.seat == 2
        assert len(started()) == 1
    finally:
        for proc in processes:
            proc.stop()
        log.close()


TABLE_ENV = {**token_environment(), "KAFKA_BOOTSTRAP_SERVERS": "127.0.0.1:1"}


@pytest.mark.parametrize("raw", ["0", "-1", "10001", "eight", "1e3", "٣"])
def test_a_watch_bound_per_account_that_is_not_1_to_10000_stops_the_start_naming_it(
    raw: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    use_settings_environment(monkeypatch, {**TABLE_ENV, "RUMMY_TABLE_MAX_WATCHES_PER_ACCOUNT": raw})
    with pytest.raises(SystemExit) as stopped:
        TableSettings.load_or_exit()
    assert stopped.value.code == 2
    assert capsys.readouterr().err.startswith(
        f"rummy table: configuration error: RUMMY_TABLE_MAX_WATCHES_PER_ACCOUNT='{raw}': "
    )


def test_the_watch_bound_per_account_is_8_unless_set(monkeypatch: pytest.MonkeyPatch) -> None:
    use_settings_environment(monkeypatch, TABLE_ENV)
    assert TableSettings.load().max_watches_per_account == 8
    use_settings_environment(
        monkeypatch, {**TABLE_ENV, "RUMMY_TABLE_MAX_WATCHES_PER_ACCOUNT": " 40 "}
    )
    assert TableSettings.load().max_watches_per_account == 40


def test_the_table_s_own_settings_default_as_documented(monkeypatch: pytest.MonkeyPatch) -> None:
    use_settings_environment(monkeypatch, {**TABLE_ENV, "RUMMY_GRPC_PORT": "0"})
    settings = TableSettings.load()
    assert (settings.grpc_max_workers, settings.session_seconds) == (48, 6)
    assert (settings.snapshot_events, settings.snapshot_seconds) == (2000, 30)
    assert settings.max_reservation_hundredths == 100_000_000
    assert settings.address == "127.0.0.1:0"
    assert settings.transactional_id == "table-writer-127.0.0.1:0"
    use_settings_environment(
        monkeypatch,
        {**TABLE_ENV, "RUMMY_TOPIC_PREFIX": "p-", "RUMMY_TABLE_ADVERTISED_ADDRESS": "t1:5",
         "RUMMY_TABLE_WRITER_ID": "w1", "RUMMY_CLOCK_SPEED": "10"},
    )  # fmt: skip
    settings = TableSettings.load()
    assert (settings.address, settings.transactional_id) == ("t1:5", "p-w1")
    assert settings.clock_speed == 10.0
