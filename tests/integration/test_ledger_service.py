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
operator-only and refuses a bad amount; a player reads only its own balance. Match money
(docs/rules/formats.md#money): a pool's entries held and paid to the winner net of a commission
rounded down, once whatever is redelivered; a rejoin's entry and a split's remainder; game stakes
settled per game and the open game's released by an abort; a settlement failing an invariant
refused; a seat short of its entry rejected, the others held until the match is aborted.
"""

from __future__ import annotations

import signal
import time
import uuid
from collections.abc import Callable, Iterator
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
from rummy.match.v1 import match_pb2
from rummy.table.v1 import events_pb2 as table_events
from rummy_game.match_payloads import settlement_to_pb
from rummy_platform.auth import Role, authorized_channel
from rummy_platform.envelope import Envelope
from rummy_platform.eventlog import drop_redelivered
from rummy_platform.topics import LEDGER_EVENTS, TABLE_EVENTS, event_topic_specs
from rummy_rules.formats.money import (
    game_stake_hundredths,
    settle_game,
    settle_split,
    settle_winner,
)
from rummy_testing.service_process import (
    EVENT_TIMEOUT_S,
    START_TIMEOUT_S,
    IsolatedRun,
    ServiceProcess,
    fresh_database,
    isolated_run,
    start_service,
)
from rummy_testing.token_keys import issuer_authority

#: slow: ledger processes (docs/testing.md#tests).
pytestmark = pytest.mark.slow

RULES_VERSION = "indian13-points/1"
SHUFFLE_VERSION = "bb-shuffle-v1"
HOUSE = "house:commission"
ISSUANCE = "house:issuance"


# -- the ledger process ---------------------------------------------------------------------------


def ledger_stub(ledger: ServiceProcess, account_id: str, role: Role) -> pb_grpc.LedgerServiceStub:
    """A LedgerService stub calling as ``account_id`` with ``role``."""
    token = issuer_authority().issue(account_id, role)
    channel = authorized_channel(ledger.channel_as(role), token)
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


@pytest.fixture(scope="module")
def stack(kafka_bootstrap: str, database_url: str) -> Iterator[Stack]:
    with isolated_run(kafka_bootstrap, database_url, "ledger_service", Stack) as run:
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
    stack.wait_for(LEDGER_EVENTS, table_id, ledger_events.StakesReserved)
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
    [reserved] = stack.events(LEDGER_EVENTS, table_id, ledger_events.StakesReserved)
    assert [r.amount_hundredths for r in reserved.payload.reservations] == [3250] * 4

    [settled] = stack.wait_for(LEDGER_EVENTS, table_id, ledger_events.HandSettled)
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
    [reserved] = stack.wait_for(LEDGER_EVENTS, table_id, ledger_events.StakesReserved)
    assert [r.amount_hundredths for r in reserved.payload.reservations] == [0, 0]
    stack.table(table_id, hand_id, hand_ended(hand_id, [winner, loser], [0, 65], [0, 0], 0, 0))

    [settled] = stack.wait_for(LEDGER_EVENTS, table_id, ledger_events.HandSettled)
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

    [reserved] = stack.wait_for(LEDGER_EVENTS, table_id, ledger_events.StakesReserved)
    [rejected] = stack.events(LEDGER_EVENTS, table_id, ledger_events.StakeRejected)
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
    stack.wait_for(LEDGER_EVENTS, table_id, ledger_events.ReservationsReleased)
    assert balance(ledger, rich) == (5000, 0, 5000)


def test_the_same_hand_ended_delivered_three_times_settles_once(
    stack: Stack, ledger: ServiceProcess
) -> None:
    table_id, hand_id, (winner, b, _, _) = play_worked_hand(stack, ledger)
    [first] = stack.wait_for(LEDGER_EVENTS, table_id, ledger_events.HandSettled)
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
    stack.wait_for(LEDGER_EVENTS, table_id, ledger_events.ReservationsReleased)

    assert stack.events(LEDGER_EVENTS, table_id, ledger_events.HandSettled) == [first]
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
        on_topic = len(own.events(LEDGER_EVENTS, table_id, ledger_events.HandSettled))
        assert on_topic == (1 if fault_point == "settlement-after-publish" else 0)

        restarted = start_ledger(own.env())
        try:
            own.wait_for(LEDGER_EVENTS, table_id, ledger_events.HandSettled, on_topic + 1)
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
        copies = own.events(LEDGER_EVENTS, table_id, ledger_events.HandSettled)

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
    assert key in (conflict.value.details() or "")
    assert balance(ledger, account) == (1500, 0, 1500)
    [granted] = stack.wait_for(
        LEDGER_EVENTS, account, ledger_events.TokensGranted
    )  # keyed by account id
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
        assert "positive amount" in (invalid.value.details() or "")
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
    calls: list[tuple[Callable[..., object], Message]] = [
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
        assert "NUL character" in (invalid.value.details() or "")
    assert balance(ledger, account) == (100, 0, 100)
    assert balance(ledger, ISSUANCE) == issuance_before


# -- match money (docs/rules/formats.md#money) ---------------------------------------------------


def open_match(
    stack: Stack, accounts: list[str], options: match_pb2.MatchOptions, match_format: str, bps: int
) -> tuple[str, str]:
    """A table hosting a match format opened at ``bps``, its match started with ``accounts`` in
    seats 0, 1, ...; returns (table id, match id). The match's events carry correlation id =
    the match id, as the table writes them."""
    table_id, match_id = new_ids()
    opened = table_events.TableOpened(table_id=table_id, commission_bps=bps, match=options)
    stack.table(table_id, match_id, opened)
    seats = [cards_pb2.Seat(seat=s, account_id=a) for s, a in enumerate(accounts)]
    started = match_pb2.MatchStarted(match_id=match_id, match_format=match_format, seats=seats)
    stack.table(table_id, match_id, started)
    return table_id, match_id


def hold(
    stack: Stack,
    table_id: str,
    match_id: str,
    purpose: str,
    amounts: dict[int, int],
    game_no: int = 0,
) -> None:
    for seat, amount in amounts.items():
        asked = match_pb2.MoneyReserved(
            seat=seat, amount_hundredths=amount, purpose=purpose, game_no=game_no
        )
        stack.table(table_id, match_id, asked)


def journal_of(stack: Stack, table_id: str) -> list[tuple[str, int, str, int | None]]:
    """The table's settlement lines in the journal: (account, amount, line kind, seat)."""
    with psycopg.connect(stack.database_url) as conn:
        rows = conn.execute(
            "SELECT e.account_id, e.amount, e.line_kind, e.seat FROM ledger.journal_transactions t "
            "JOIN ledger.journal_entries e ON e.transaction_id = t.id "
            "WHERE t.table_id = %s AND t.kind = 'settlement' ORDER BY e.id",
            (table_id,),
        ).fetchall()
    return sorted((str(a), int(m), str(k), s) for a, m, k, s in rows)


POOL_101 = match_pb2.MatchOptions(
    pool=match_pb2.PoolOptions(target=101, entry_fee_hundredths=1001, rejoin=True, split=True)
)


def test_a_pool_match_pays_the_winner_net_of_commission_once_and_a_redelivery_moves_nothing(
    stack: Stack, ledger: ServiceProcess
) -> None:
    house_before = balance(ledger, HOUSE)[0]
    a, b, c = funded(ledger, 5000, 5000, 5000)
    table_id, match_id = open_match(stack, [a, b, c], POOL_101, "pool-101", 1000)
    hold(stack, table_id, match_id, "entry", {0: 1001, 1: 1001, 2: 1001})
    [held] = stack.wait_for(LEDGER_EVENTS, table_id, ledger_events.MatchMoneyHeld)
    assert held.correlation_id == match_id
    assert [(r.seat, r.amount_hundredths) for r in held.payload.reservations] == [
        (0, 1001), (1, 1001), (2, 1001),
    ]  # fmt: skip
    assert balance(ledger, a) == (5000, 1001, 3999)

    # Pool 3 x 10.01 = 30.03. Commission floor(3003 x 1000 / 10000) = floor(300.3) = 300 = 3.00.
    # The winner (seat 0) receives 30.03 - 3.00 = 27.03, a net of 27.03 - 10.01 = +17.02; seats
    # 1 and 2 forfeit their 10.01. 1702 - 1001 - 1001 + 300 = 0.
    settlement = settle_winner({0: 1001, 1: 1001, 2: 1001}, 0, 1000)
    end = stack.table(
        table_id,
        match_id,
        match_pb2.MatchEnded(winners=[0], settlement=settlement_to_pb(settlement)),
    )
    stack.redeliver(end)  # the same record again
    stack.table(table_id, match_id, end.payload)  # re-recorded under a new event id
    hold(stack, table_id, match_id, "entry", {1: 1001})  # a hold redelivered after the end
    [settled] = stack.wait_for(LEDGER_EVENTS, table_id, ledger_events.MatchSettled)
    assert (settled.payload.match_id, settled.payload.game_no) == (match_id, 0)
    assert settled.payload.commission_hundredths == 300
    assert balance(ledger, a) == (6702, 0, 6702)
    assert balance(ledger, b) == (3999, 0, 3999)
    assert balance(ledger, c) == (3999, 0, 3999)
    assert balance(ledger, HOUSE)[0] - house_before == 300
    assert journal_of(stack, table_id) == sorted(
        [(a, 1702, "prize", 0), (b, -1001, "forfeit", 1), (c, -1001, "forfeit", 2),
         (HOUSE, 300, "commission", None)]
    )  # fmt: skip
    time.sleep(1.0)  # what the repeats would have published by now
    assert len(stack.events(LEDGER_EVENTS, table_id, ledger_events.MatchSettled)) == 1
    assert len(stack.events(LEDGER_EVENTS, table_id, ledger_events.MatchMoneyHeld)) == 1
    assert ledger.metric('rummy_ledger_match_settlements_total{purpose="entry"}') >= 1
    refused = 'rummy_ledger_refused_events_total{type="rummy.match.v1.%s"}'
    assert ledger.metric(refused % "MoneyReserved") == ledger.metric(refused % "MatchEnded") == 0


def test_a_rejoin_adds_an_entry_and_a_split_of_three_gives_the_remainder_to_the_lowest_totals(
    stack: Stack, ledger: ServiceProcess
) -> None:
    accounts = funded(ledger, 5000, 5000, 5000, 5000)
    table_id, match_id = open_match(stack, accounts, POOL_101, "pool-101", 1000)
    hold(stack, table_id, match_id, "entry", {s: 1001 for s in range(4)})
    stack.wait_for(LEDGER_EVENTS, table_id, ledger_events.MatchMoneyHeld)
    hold(stack, table_id, match_id, "rejoin", {3: 1001})  # seat 3 eliminated, rejoins
    [_, rejoin] = stack.wait_for(LEDGER_EVENTS, table_id, ledger_events.MatchMoneyHeld, 2)
    assert (rejoin.payload.purpose, [r.seat for r in rejoin.payload.reservations]) == (
        "rejoin",
        [3],
    )
    assert balance(ledger, accounts[3]) == (5000, 2002, 2998)

    # Seat 3 is out again; seats 0, 1, 2 split at totals 95, 60, 80. Pool 5 x 10.01 = 50.05;
    # commission floor(500.5) = 500; 4505 shared by 3 = 1501 and 2 left over, one each to the
    # lowest totals (seat 1 at 60, seat 2 at 80): 1501, 1502, 1502. Nets: +500, +501, +501;
    # seat 3 forfeits 20.02. 500 + 501 + 501 - 2002 + 500 = 0.
    settlement = settle_split({0: 1001, 1: 1001, 2: 1001, 3: 2002}, {0: 95, 1: 60, 2: 80}, 1000)
    ended = match_pb2.MatchEnded(
        winners=[0, 1, 2], reason="split", settlement=settlement_to_pb(settlement)
    )
    stack.table(table_id, match_id, ended)
    [settled] = stack.wait_for(LEDGER_EVENTS, table_id, ledger_events.MatchSettled)
    assert settled.payload.commission_hundredths == 500
    assert [balance(ledger, a) for a in accounts] == [
        (5500, 0, 5500), (5501, 0, 5501), (5501, 0, 5501), (2998, 0, 2998),
    ]  # fmt: skip
    assert journal_of(stack, table_id) == sorted(
        [(accounts[0], 500, "prize", 0), (accounts[1], 501, "prize", 1),
         (accounts[2], 501, "prize", 2), (accounts[3], -2002, "forfeit", 3),
         (HOUSE, 500, "commission", None)]
    )  # fmt: skip


def test_game_stakes_settle_each_game_and_an_aborted_match_releases_the_open_games_stakes(
    stack: Stack, ledger: ServiceProcess
) -> None:
    a, b = funded(ledger, 5000, 5000)
    options = match_pb2.MatchOptions(
        game_to=match_pb2.GameToOptions(
            target=100, games=3, point_value_hundredths=10, max_game_points=100
        )
    )
    table_id, match_id = open_match(stack, [a, b], options, "game-to-100", 500)
    stake = game_stake_hundredths(100, 10)  # 100 points x 0.10 = 10.00 from each seat
    stack.table(table_id, match_id, match_pb2.GameStarted(game_no=1, seats=[0, 1]))
    hold(stack, table_id, match_id, "stake", {0: stake, 1: stake}, game_no=1)
    stack.wait_for(LEDGER_EVENTS, table_id, ledger_events.MatchMoneyHeld)
    assert balance(ledger, b) == (5000, 1000, 4000)

    # Seat 1 wins at 100 against 37: seat 0 pays min(63, 100) x 10 = 630; commission
    # floor(630 x 5%) = floor(31.5) = 31; seat 1 receives 599. 599 - 630 + 31 = 0.
    settlement = settle_game(
        {0: 37, 1: 100}, 1, max_game_points=100, point_value_hundredths=10, commission_bps=500
    )
    game = match_pb2.GameEnded(game_no=1, winner=1, settlement=settlement_to_pb(settlement))
    stack.table(table_id, match_id, game)
    [settled] = stack.wait_for(LEDGER_EVENTS, table_id, ledger_events.MatchSettled)
    assert (settled.payload.game_no, settled.payload.commission_hundredths) == (1, 31)
    assert balance(ledger, a) == (4370, 0, 4370) and balance(ledger, b) == (5599, 0, 5599)

    stack.table(table_id, match_id, match_pb2.GameStarted(game_no=2, seats=[0, 1]))
    hold(stack, table_id, match_id, "stake", {0: stake, 1: stake}, game_no=2)
    stack.wait_for(LEDGER_EVENTS, table_id, ledger_events.MatchMoneyHeld, 2)
    assert balance(ledger, a) == (4370, 1000, 3370)
    aborted = stack.table(table_id, match_id, match_pb2.MatchAborted(reason="table closed"))
    stack.table(table_id, match_id, aborted.payload)  # re-recorded: released once
    [released] = stack.wait_for(LEDGER_EVENTS, table_id, ledger_events.MatchHoldsReleased)
    assert sorted((r.seat, r.amount_hundredths) for r in released.payload.released) == [
        (0, 1000), (1, 1000),
    ]  # fmt: skip
    assert balance(ledger, a) == (4370, 0, 4370) and balance(ledger, b) == (5599, 0, 5599)
    assert journal_of(stack, table_id) == sorted(
        [(a, -630, "forfeit", 0), (b, 599, "prize", 1), (HOUSE, 31, "commission", None)]
    )


def test_a_match_settlement_failing_an_invariant_is_refused_and_a_short_seat_rejected_then_aborted(
    stack: Stack, ledger: ServiceProcess
) -> None:
    refused_before = ledger.metric("rummy_ledger_settlements_refused_total")
    a, b, c = funded(ledger, 5000, 5000, 5000)
    table_id, match_id = open_match(stack, [a, b, c], POOL_101, "pool-101", 1000)
    hold(stack, table_id, match_id, "entry", {0: 1001, 1: 1001, 2: 1001})
    stack.wait_for(LEDGER_EVENTS, table_id, ledger_events.MatchMoneyHeld)
    # A commission of 3.01 where floor(30.03 x 10%) is 3.00 (the winner's line 17.01 to sum to 0).
    good = settle_winner({0: 1001, 1: 1001, 2: 1001}, 0, 1000)
    bad = replace(
        good,
        commission_hundredths=301,
        lines=(replace(good.lines[0], amount_hundredths=1701), *good.lines[1:]),
    )
    stack.table(
        table_id, match_id, match_pb2.MatchEnded(winners=[0], settlement=settlement_to_pb(bad))
    )
    [refused] = stack.wait_for(LEDGER_EVENTS, table_id, ledger_events.MatchSettlementRefused)
    assert "commission" in refused.payload.reason
    assert [balance(ledger, x) for x in (a, b, c)] == [(5000, 0, 5000)] * 3
    assert journal_of(stack, table_id) == []
    assert ledger.metric("rummy_ledger_settlements_refused_total") == refused_before + 1

    # Another match: seat 1 cannot cover its entry; seats 0 and 2 stay held until the abort.
    d, e, f = funded(ledger, 5000, 500, 5000)
    table_id, match_id = open_match(stack, [d, e, f], POOL_101, "pool-101", 1000)
    hold(stack, table_id, match_id, "entry", {0: 1001, 1: 1001, 2: 1001})
    [rejected] = stack.wait_for(LEDGER_EVENTS, table_id, ledger_events.MatchMoneyRejected)
    [held] = stack.wait_for(LEDGER_EVENTS, table_id, ledger_events.MatchMoneyHeld)
    assert (rejected.payload.seat, rejected.payload.available_hundredths) == (1, 500)
    assert [r.seat for r in held.payload.reservations] == [0, 2]
    assert balance(ledger, d) == (5000, 1001, 3999)
    stack.table(table_id, match_id, match_pb2.MatchAborted(reason="an entry was not held"))
    stack.wait_for(LEDGER_EVENTS, table_id, ledger_events.MatchHoldsReleased)
    assert [balance(ledger, x) for x in (d, e, f)] == [
        (5000, 0, 5000),
        (500, 0, 500),
        (5000, 0, 5000),
    ]
    assert ledger.metric("rummy_ledger_invariant_violations") == 0
