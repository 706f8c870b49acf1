"""The ledger as a separate process (``python -m rummy_ledger``) on real Kafka and PostgreSQL.

The test plays the table service: it appends table-events built with the table protos and reads
ledger-events; it plays the operator and the players through the gRPC API. Each module run has
its own topic prefix and database.

Held here (docs/rules/promises.md#tokens-are-conserved,
docs/rules/promises.md#nobody-loses-more-than-they-had,
docs/rules/promises.md#bad-input-changes-nothing, docs/rules/promises.md#nothing-lost,
docs/rules/promises.md#identity): a hand's settlement ends with balances
worked out by hand; a free table moves nothing; a seat that cannot cover its reservation gets
StakeRejected with the reason; the same HandEnded delivered three times settles once; a ledger
killed between its settlement's commit and its publish, then restarted, publishes HandSettled
once after dropping repeats by event id, and the journal still sums to zero; Grant is idempotent,
operator-only and refuses a bad amount; a player reads only its own balance.
"""

from __future__ import annotations

import signal
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime

import grpc
import psycopg
import pytest
from google.protobuf.message import Message

from rummy.common.v1 import cards_pb2
from rummy.ledger.v1 import events_pb2 as ledger_events
from rummy.ledger.v1 import ledger_service_pb2 as pb
from rummy.ledger.v1 import ledger_service_pb2_grpc as pb_grpc
from rummy.table.v1 import events_pb2 as table_events
from rummy_platform.auth import Role, TokenAuthority, authorized_channel
from rummy_platform.envelope import Envelope
from rummy_platform.eventlog import drop_redelivered
from rummy_platform.topics import LEDGER_EVENTS, TABLE_EVENTS, event_topic_specs
from rummy_testing.service_process import (
    START_TIMEOUT_S,
    IsolatedRun,
    ServiceProcess,
    fresh_database,
    isolated_run,
    start_service,
)
from rummy_testing.waiting import wait_for_count

#: slow: ledger processes (README.md#tests).
pytestmark = pytest.mark.slow

SECRET = "ledger-service-test-secret-0123456789abcdef"
RULES_VERSION = "indian13-points/1"
SHUFFLE_VERSION = "bb-shuffle-v1"
EVENT_TIMEOUT_S = 60.0
HOUSE = "house:commission"
ISSUANCE = "house:issuance"


# -- the ledger process ---------------------------------------------------------------------------


def ledger_stub(ledger: ServiceProcess, account_id: str, role: Role) -> pb_grpc.LedgerServiceStub:
    """A LedgerService stub calling as ``account_id`` with ``role``."""
    token = TokenAuthority(SECRET).issue(account_id, role)
    channel = authorized_channel(grpc.insecure_channel(ledger.target), token)
    return pb_grpc.LedgerServiceStub(channel)


def start_ledger(env: dict[str, str], *, wait: bool = True) -> ServiceProcess:
    return start_service(
        "rummy_ledger", env, wait=wait, health_service="rummy.ledger.v1.LedgerService"
    )


@dataclass
class Stack(IsolatedRun):
    """The run of this module's ledger processes, and the table's side of it: table-events
    appended, ledger-events read."""

    def table(self, table_id: str, hand_id: str, payload: Message) -> Envelope:
        """Append a table event (as the table service would) and return it."""
        envelope = Envelope.new(
            payload,
            stream_id=table_id,
            stream_version=1,  # the ledger does not read the table's versions
            occurred_at=datetime.now(UTC),
            correlation_id=hand_id,
            rules_version=RULES_VERSION,
            shuffle_version=SHUFFLE_VERSION,
        )
        self.redeliver(envelope)
        return envelope

    def redeliver(self, envelope: Envelope) -> None:
        self.log.append(self.prefix + TABLE_EVENTS, envelope)

    def published(self, stream_id: str, payload_type: type[Message]) -> list[Envelope]:
        return [
            r.envelope
            for r in self.log.read_stream(self.prefix + LEDGER_EVENTS, stream_id)
            if isinstance(r.envelope.payload, payload_type)
        ]

    def wait_for(
        self, stream_id: str, payload_type: type[Message], count: int = 1
    ) -> list[Envelope]:
        """The ``payload_type`` events of ``stream_id`` on ledger-events, once there are at
        least ``count`` (AssertionError after EVENT_TIMEOUT_S)."""
        return wait_for_count(
            f"{payload_type.__name__} on {stream_id}",
            lambda: self.published(stream_id, payload_type),
            count,
            EVENT_TIMEOUT_S,
        )


@pytest.fixture(scope="module")
def stack(kafka_bootstrap: str, database_url: str) -> Iterator[Stack]:
    with isolated_run(kafka_bootstrap, database_url, "ledger_service", SECRET, Stack) as run:
        yield run


@pytest.fixture(scope="module")
def ledger(stack: Stack) -> Iterator[ServiceProcess]:
    process = start_ledger(stack.env())
    try:
        yield process
    finally:
        process.stop()


# -- helpers --------------------------------------------------------------------------------------


def new_ids() -> tuple[str, str]:
    return f"table-{uuid.uuid4().hex[:8]}", f"hand-{uuid.uuid4().hex[:8]}"


def funded(ledger: ServiceProcess, *amounts: int) -> list[str]:
    """New player accounts, each granted its amount by an operator through the API."""
    operator = ledger_stub(ledger, "operator-1", Role.OPERATOR)
    accounts = []
    for amount in amounts:
        account = f"player-{uuid.uuid4().hex[:8]}"
        operator.Grant(
            pb.GrantRequest(
                account_id=account, amount_hundredths=amount, idempotency_key=str(uuid.uuid4())
            ),
            timeout=10,
        )
        accounts.append(account)
    return accounts


def balance(ledger: ServiceProcess, account: str) -> tuple[int, int, int]:
    """``(balance, reserved, available)`` in hundredths, read by an operator."""
    b = ledger_stub(ledger, "operator-1", Role.OPERATOR).GetBalance(
        pb.GetBalanceRequest(account_id=account), timeout=10
    )
    return b.balance_hundredths, b.reserved_hundredths, b.available_hundredths


def hand_started(hand_id: str, accounts: list[str], pv: int) -> table_events.HandStarted:
    return table_events.HandStarted(
        hand_id=hand_id,
        hand_no=1,
        seats=[cards_pb2.Seat(seat=s, account_id=a) for s, a in enumerate(accounts)],
        dealer_seat=len(accounts) - 1,
        point_value_hundredths=pv,
        commission_bps=1250,
        shoe=cards_pb2.ShoeSpec(decks=2, printed_jokers=2),
        reservation_hundredths=130 * pv,  # Bombay Baazi: uncapped, 130 points x point value
    )


def hand_ended(
    hand_id: str,
    accounts: list[str],
    points: list[int],
    amounts: list[int],
    commission: int,
    pv: int,
) -> table_events.HandEnded:
    """Won by seat 0, with the settlement lines the table computed (``amounts`` by seat)."""
    return table_events.HandEnded(
        hand_id=hand_id,
        winner_seat=0,
        results=[
            table_events.SeatResult(
                seat=s, account_id=a, points=p, outcome="won" if s == 0 else "counted"
            )
            for s, (a, p) in enumerate(zip(accounts, points, strict=True))
        ],
        settlement=[
            table_events.SettlementLine(seat=s, account_id=a, points=p, amount_hundredths=m)
            for s, (a, p, m) in enumerate(zip(accounts, points, amounts, strict=True))
        ],
        commission_hundredths=commission,
        point_value_hundredths=pv,
        commission_bps=1250,
    )


def reserve_worked_hand(stack: Stack, ledger: ServiceProcess) -> tuple[str, str, list[str]]:
    """Four players granted 10000 each and a hand at 25 hundredths a point (12.5% commission)
    started, its stakes reserved. Returns (table id, hand id, accounts)."""
    table_id, hand_id = new_ids()
    accounts = funded(ledger, 10000, 10000, 10000, 10000)
    stack.table(table_id, hand_id, hand_started(hand_id, accounts, 25))
    stack.wait_for(table_id, ledger_events.StakesReserved)
    return table_id, hand_id, accounts


def worked_hand_end(hand_id: str, accounts: list[str]) -> table_events.HandEnded:
    """The worked hand's end. Losers 40 / 20 / 80 points x 25 = 1000 / 500 / 2000, total 3500;
    commission floor(3500 x 12.5%) = floor(437.5) = 437; the winner receives 3500 - 437 = 3063."""
    return hand_ended(hand_id, accounts, [0, 40, 20, 80], [3063, -1000, -500, -2000], 437, 25)


def play_worked_hand(stack: Stack, ledger: ServiceProcess) -> tuple[str, str, list[str]]:
    """:func:`reserve_worked_hand`, then its HandEnded appended."""
    table_id, hand_id, accounts = reserve_worked_hand(stack, ledger)
    stack.table(table_id, hand_id, worked_hand_end(hand_id, accounts))
    return table_id, hand_id, accounts


# -- hands ----------------------------------------------------------------------------------------


def test_a_settlement_worked_by_hand_pays_the_winner_net_of_commission_and_clears_reservations(
    stack: Stack, ledger: ServiceProcess
) -> None:
    house_before = balance(ledger, HOUSE)[0]
    table_id, hand_id, (winner, b, c, d) = play_worked_hand(stack, ledger)
    [reserved] = stack.published(table_id, ledger_events.StakesReserved)
    assert [r.amount_hundredths for r in reserved.payload.reservations] == [3250] * 4

    [settled] = stack.wait_for(table_id, ledger_events.HandSettled)
    assert settled.payload.hand_id == hand_id and settled.correlation_id == hand_id
    assert (settled.rules_version, settled.shuffle_version) == (RULES_VERSION, SHUFFLE_VERSION)
    assert settled.payload.commission_hundredths == 437
    assert sorted((ln.account_id, ln.amount_hundredths) for ln in settled.payload.lines) == sorted(
        [(winner, 3500), (winner, -437), (HOUSE, 437), (b, -1000), (c, -500), (d, -2000)]
    )
    assert balance(ledger, winner) == (13063, 0, 13063)
    assert balance(ledger, b) == (9000, 0, 9000)
    assert balance(ledger, c) == (9500, 0, 9500)
    assert balance(ledger, d) == (8000, 0, 8000)
    assert balance(ledger, HOUSE)[0] - house_before == 437

    # The loser's own statement shows the hand's points, cost and commission.
    loser = ledger_stub(ledger, b, Role.PLAYER)
    [entry, grant] = loser.GetStatement(pb.GetStatementRequest(), timeout=10).entries
    assert (entry.hand_id, entry.table_id, entry.kind) == (hand_id, table_id, "settlement")
    assert (entry.points, entry.cost_hundredths, entry.commission_hundredths) == (40, 1000, 437)
    assert (entry.amount_hundredths, entry.balance_after_hundredths) == (-1000, 9000)
    assert (grant.kind, grant.amount_hundredths, grant.HasField("points")) == (
        "grant",
        10000,
        False,
    )
    winner_stub = ledger_stub(ledger, winner, Role.PLAYER)
    [won, _] = winner_stub.GetStatement(pb.GetStatementRequest(), timeout=10).entries
    assert (won.points, won.winnings_hundredths, won.commission_hundredths) == (0, 3500, 437)
    assert won.amount_hundredths == 3063

    assert ledger.metric("rummy_ledger_settlements_total") >= 1
    assert ledger.metric("rummy_ledger_invariant_violations") == 0


def test_a_free_table_moves_nothing(stack: Stack, ledger: ServiceProcess) -> None:
    table_id, hand_id = new_ids()
    winner, loser = funded(ledger, 700, 300)
    house_before = balance(ledger, HOUSE)[0]
    stack.table(table_id, hand_id, hand_started(hand_id, [winner, loser], 0))
    [reserved] = stack.wait_for(table_id, ledger_events.StakesReserved)
    assert [r.amount_hundredths for r in reserved.payload.reservations] == [0, 0]
    stack.table(table_id, hand_id, hand_ended(hand_id, [winner, loser], [0, 65], [0, 0], 0, 0))

    [settled] = stack.wait_for(table_id, ledger_events.HandSettled)
    assert {ln.amount_hundredths for ln in settled.payload.lines} == {0}
    assert balance(ledger, winner) == (700, 0, 700)
    assert balance(ledger, loser) == (300, 0, 300)
    assert balance(ledger, HOUSE)[0] == house_before


def test_a_seat_that_cannot_cover_its_reservation_gets_stake_rejected_with_the_reason(
    stack: Stack, ledger: ServiceProcess
) -> None:
    table_id, hand_id = new_ids()
    rich, poor = funded(ledger, 5000, 1200)
    stack.table(table_id, hand_id, hand_started(hand_id, [rich, poor], 20))  # reserve 2600

    [reserved] = stack.wait_for(table_id, ledger_events.StakesReserved)
    [rejected] = stack.published(table_id, ledger_events.StakeRejected)
    assert (rejected.payload.seat, rejected.payload.account_id) == (1, poor)
    assert rejected.payload.reason == ledger_events.STAKE_REJECTION_REASON_INSUFFICIENT_BALANCE
    assert (rejected.payload.available_hundredths, rejected.payload.required_hundredths) == (
        1200,
        2600,
    )
    assert rejected.stream_version < reserved.stream_version  # rejections come first
    assert [(r.seat, r.account_id) for r in reserved.payload.reservations] == [(0, rich)]
    assert balance(ledger, rich) == (5000, 2600, 2400)
    assert balance(ledger, poor) == (1200, 0, 1200)
    assert ledger.metric('rummy_ledger_reservations_total{outcome="rejected"}') >= 1

    stack.table(table_id, hand_id, table_events.HandAborted(hand_id=hand_id, reason="one seat"))
    stack.wait_for(table_id, ledger_events.ReservationsReleased)
    assert balance(ledger, rich) == (5000, 0, 5000)


def test_the_same_hand_ended_delivered_three_times_settles_once(
    stack: Stack, ledger: ServiceProcess
) -> None:
    table_id, hand_id, (winner, b, _, _) = play_worked_hand(stack, ledger)
    [first] = stack.wait_for(table_id, ledger_events.HandSettled)
    ended = next(
        r.envelope
        for r in stack.log.read_stream(stack.prefix + TABLE_EVENTS, table_id)
        if isinstance(r.envelope.payload, table_events.HandEnded)
    )
    stack.redeliver(ended)  # the second and third deliveries of the very same event
    stack.redeliver(ended)
    # A later event on the same table shows the ledger consumed the repeats before it.
    _, marker = new_ids()
    stack.table(table_id, marker, table_events.HandAborted(hand_id=marker, reason="marker"))
    stack.wait_for(table_id, ledger_events.ReservationsReleased)

    assert stack.published(table_id, ledger_events.HandSettled) == [first]
    assert balance(ledger, winner) == (13063, 0, 13063)
    assert balance(ledger, b) == (9000, 0, 9000)


@pytest.mark.parametrize("fault_point", ["settlement-before-publish", "settlement-after-publish"])
def test_a_ledger_killed_between_its_settlement_commit_and_publish_publishes_hand_settled_once(
    stack: Stack, database_url: str, fault_point: str
) -> None:
    with fresh_database(database_url, "ledger_crash") as crash_db:
        own = replace(stack, prefix=f"{stack.prefix}{fault_point}-", database_url=crash_db)
        own.log.ensure_topics(event_topic_specs(prefix=own.prefix))

        first = start_ledger(own.env())
        try:
            table_id, hand_id, accounts = reserve_worked_hand(own, first)
        finally:
            first.stop()
        winner, d = accounts[0], accounts[3]
        own.table(table_id, hand_id, worked_hand_end(hand_id, accounts))

        # Killed right after the settlement's commit, before (or right after) its publish.
        doomed = start_ledger(own.env(RUMMY_FAULT_POINT=fault_point), wait=False)
        assert doomed.process.wait(START_TIMEOUT_S) == -signal.SIGKILL, "".join(doomed.lines)
        with psycopg.connect(crash_db) as conn:
            posted = conn.execute(
                "SELECT count(*) FROM ledger.journal_transactions WHERE hand_id = %s", (hand_id,)
            ).fetchone()
            waiting = conn.execute(
                "SELECT count(*) FROM ledger.outbox "
                "WHERE type = 'rummy.ledger.v1.HandSettled' AND published_at IS NULL"
            ).fetchone()
        assert posted == (1,) and waiting == (1,)  # committed, not marked published
        on_topic = len(own.published(table_id, ledger_events.HandSettled))
        assert on_topic == (1 if fault_point == "settlement-after-publish" else 0)

        restarted = start_ledger(own.env())
        try:
            own.wait_for(table_id, ledger_events.HandSettled, on_topic + 1)
            deadline = time.monotonic() + EVENT_TIMEOUT_S
            while restarted.metric("rummy_ledger_outbox_unpublished") and (
                time.monotonic() < deadline
            ):
                time.sleep(0.2)
            assert balance(restarted, winner) == (13063, 0, 13063)
            assert balance(restarted, d) == (8000, 0, 8000)
            assert restarted.metric("rummy_ledger_invariant_violations") == 0
        finally:
            restarted.stop()
        copies = own.published(table_id, ledger_events.HandSettled)

        # The crash after the publish made the relay publish it again, under the same event id:
        # a consumer dropping repeats by event id sees it once.
        assert len(copies) == on_topic + 1
        assert len({e.event_id for e in copies}) == 1
        [settled] = drop_redelivered(copies)
        assert settled.payload.hand_id == hand_id
        with psycopg.connect(crash_db) as conn:
            journal_sum = conn.execute("SELECT sum(amount) FROM ledger.journal_entries").fetchone()
            unbalanced = conn.execute(
                "SELECT count(*) FROM (SELECT transaction_id FROM ledger.journal_entries "
                "GROUP BY transaction_id HAVING sum(amount) <> 0) t"
            ).fetchone()
            settlements = conn.execute(
                "SELECT count(*) FROM ledger.journal_transactions WHERE hand_id = %s", (hand_id,)
            ).fetchone()
        assert journal_sum == (0,) and unbalanced == (0,) and settlements == (1,)


# -- gRPC -----------------------------------------------------------------------------------------


def test_a_grant_retried_with_the_same_key_and_body_returns_the_first_result_and_moves_once(
    stack: Stack, ledger: ServiceProcess
) -> None:
    operator = ledger_stub(ledger, "operator-1", Role.OPERATOR)
    account, key = f"player-{uuid.uuid4().hex[:8]}", str(uuid.uuid4())
    request = pb.GrantRequest(account_id=account, amount_hundredths=1500, idempotency_key=key)
    first = operator.Grant(request, timeout=10)
    again = operator.Grant(request, timeout=10)
    assert first == again
    assert first.balance_hundredths == 1500
    assert balance(ledger, account) == (1500, 0, 1500)

    with pytest.raises(grpc.RpcError) as conflict:
        operator.Grant(
            pb.GrantRequest(account_id=account, amount_hundredths=9999, idempotency_key=key),
            timeout=10,
        )
    assert conflict.value.code() == grpc.StatusCode.ALREADY_EXISTS
    assert key in conflict.value.details()
    assert balance(ledger, account) == (1500, 0, 1500)
    [granted] = stack.wait_for(account, ledger_events.TokensGranted)  # keyed by account id
    assert (granted.payload.amount_hundredths, granted.payload.idempotency_key) == (1500, key)
    assert granted.payload.operator_account_id == "operator-1"


def test_a_grant_of_zero_or_a_negative_amount_is_invalid_and_moves_nothing(
    ledger: ServiceProcess,
) -> None:
    operator = ledger_stub(ledger, "operator-1", Role.OPERATOR)
    [account] = funded(ledger, 100)
    issuance_before = balance(ledger, ISSUANCE)
    for amount in (0, -500):
        with pytest.raises(grpc.RpcError) as invalid:
            operator.Grant(
                pb.GrantRequest(
                    account_id=account, amount_hundredths=amount, idempotency_key=str(uuid.uuid4())
                ),
                timeout=10,
            )
        assert invalid.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "positive amount" in invalid.value.details()
    assert balance(ledger, account) == (100, 0, 100)
    assert balance(ledger, ISSUANCE) == issuance_before


def test_a_player_reads_only_its_own_balance_and_cannot_grant(ledger: ServiceProcess) -> None:
    mine, theirs = funded(ledger, 400, 900)
    me = ledger_stub(ledger, mine, Role.PLAYER)
    own = me.GetBalance(pb.GetBalanceRequest(), timeout=10)
    assert (own.account_id, own.balance_hundredths, own.available_hundredths) == (mine, 400, 400)

    with pytest.raises(grpc.RpcError) as denied:
        me.GetBalance(pb.GetBalanceRequest(account_id=theirs), timeout=10)
    assert denied.value.code() == grpc.StatusCode.PERMISSION_DENIED
    with pytest.raises(grpc.RpcError) as denied_statement:
        me.GetStatement(pb.GetStatementRequest(account_id=theirs), timeout=10)
    assert denied_statement.value.code() == grpc.StatusCode.PERMISSION_DENIED

    with pytest.raises(grpc.RpcError) as not_operator:
        me.Grant(
            pb.GrantRequest(account_id=mine, amount_hundredths=100, idempotency_key="self-help"),
            timeout=10,
        )
    assert not_operator.value.code() == grpc.StatusCode.PERMISSION_DENIED
    assert balance(ledger, mine) == (400, 0, 400)


def test_an_unknown_account_reads_as_zero_for_its_player_and_not_found_for_an_operator(
    ledger: ServiceProcess,
) -> None:
    newcomer = f"player-{uuid.uuid4().hex[:8]}"
    own = ledger_stub(ledger, newcomer, Role.PLAYER).GetBalance(pb.GetBalanceRequest(), timeout=10)
    assert (own.balance_hundredths, own.reserved_hundredths, own.available_hundredths) == (0, 0, 0)
    with pytest.raises(grpc.RpcError) as missing:
        ledger_stub(ledger, "operator-1", Role.OPERATOR).GetBalance(
            pb.GetBalanceRequest(account_id=newcomer), timeout=10
        )
    assert missing.value.code() == grpc.StatusCode.NOT_FOUND


def test_a_statement_pages_newest_first(ledger: ServiceProcess) -> None:
    [account] = funded(ledger, 100)
    operator = ledger_stub(ledger, "operator-1", Role.OPERATOR)
    for amount in (200, 300):
        operator.Grant(
            pb.GrantRequest(
                account_id=account, amount_hundredths=amount, idempotency_key=str(uuid.uuid4())
            ),
            timeout=10,
        )
    me = ledger_stub(ledger, account, Role.PLAYER)
    first = me.GetStatement(pb.GetStatementRequest(page_size=2), timeout=10)
    assert [e.amount_hundredths for e in first.entries] == [300, 200]
    assert [e.balance_after_hundredths for e in first.entries] == [600, 300]
    second = me.GetStatement(
        pb.GetStatementRequest(page_size=2, page_token=first.next_page_token), timeout=10
    )
    assert [e.amount_hundredths for e in second.entries] == [100]
    assert second.next_page_token == ""


def test_a_nul_character_in_an_account_id_or_key_is_invalid_argument_and_moves_nothing(
    ledger: ServiceProcess,
) -> None:
    # PostgreSQL text cannot hold U+0000: these reached the database and answered INTERNAL.
    operator = ledger_stub(ledger, "operator-1", Role.OPERATOR)
    [account] = funded(ledger, 100)
    issuance_before = balance(ledger, ISSUANCE)
    calls = [
        (operator.GetBalance, pb.GetBalanceRequest(account_id=account + "\x00")),
        (operator.GetStatement, pb.GetStatementRequest(account_id="\x00")),
        (operator.Grant, pb.GrantRequest(account_id=f"{account}\x00x", amount_hundredths=5,
                                         idempotency_key=str(uuid.uuid4()))),
        (operator.Grant, pb.GrantRequest(account_id=account, amount_hundredths=5,
                                         idempotency_key=f"k\x00{uuid.uuid4()}")),
    ]  # fmt: skip
    for method, request in calls:
        with pytest.raises(grpc.RpcError) as invalid:
            method(request, timeout=10)
        assert invalid.value.code() == grpc.StatusCode.INVALID_ARGUMENT, invalid.value.details()
        assert "NUL character" in invalid.value.details()
    assert balance(ledger, account) == (100, 0, 100)
    assert balance(ledger, ISSUANCE) == issuance_before
