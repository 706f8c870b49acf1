"""A variant registered outside the product, loaded as a plug-in (``RUMMY_VARIANT_PLUGINS``) by
real service processes on the real brokers, and a hand of it through fairness, the dealer, the
clock and the ledger.

The test plays the table service (:class:`ToyTable`): it decides the toy hand with the toy's own
rules (``toy_variant``, the test suite's five-card knock: 3 seats, 5 cards from one 52-card deck,
no cut, no jokers, a pot shared by the lowest totals, at most 25 points lost), appends the
table-stream facts the table would (encoded by the table's stream codec), and turns the other
services' events into the toy's commands as the table would (SeedCommitted into
RecordSeedCommitment, SeedWindowClosed and
TurnDeadlinePassed into TurnTimeout, the dealer's HandDealt into Deal).

Held here: every service exits with status 2 before serving when a plug-in cannot be imported,
naming it; a process with the plug-in says so in its log and on ``/metrics``; fairness commits
before the deal and reveals a seed that hashes to the commitment; the dealer deals the toy's
layout, exactly what ``rummy_rules.shuffle.deal`` gives for the revealed seeds; the clock fires the
toy's seed window and turn deadlines (at the speed it runs) with their deadlines; the ledger
reserves 25 points x point value per seat and settles a two-winner HandEnded once (each winner
its share, the house its commission, the journal checked to the hundredth) however often it is
delivered; a dealer started without the plug-in skips the toy hand (counted, logged once) and
deals nothing.

The same toy through the table service too, played by bots over its public gRPC API and verified
by ``rummy replay``: ``tests/e2e/test_toy_variant_end_to_end.py``. The toy's wire (its options and
its ``Knocked`` on the table stream, ``rummy_game.variant_wires``) is loaded by the same plug-in
module.
"""

from __future__ import annotations

import functools
import hashlib
import json
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, replace
from importlib import import_module
from importlib.metadata import entry_points

import psycopg
import pytest
from google.protobuf.message import Message

import toy_variant
from rummy.clock.v1 import events_pb2 as clock_events
from rummy.dealer.v1 import events_pb2 as dealer_events
from rummy.fairness.v1 import events_pb2 as fairness_events
from rummy.ledger.v1 import events_pb2 as ledger_events
from rummy.ledger.v1 import ledger_service_pb2 as ledger_pb
from rummy.ledger.v1 import ledger_service_pb2_grpc as ledger_grpc
from rummy.table.v1 import events_pb2 as table_events
from rummy_game import stream_payloads
from rummy_platform.auth import Role, authorized_channel
from rummy_platform.config import PLUGINS_VARIABLE
from rummy_platform.envelope import Envelope, has_payload
from rummy_platform.eventlog import drop_redelivered
from rummy_platform.topics import (
    CLOCK_EVENTS,
    DEALER_EVENTS,
    FAIRNESS_EVENTS,
    LEDGER_EVENTS,
    TABLE_EVENTS,
    event_topic_specs,
)
from rummy_rules import events as ev
from rummy_rules.commands import (
    Command,
    ContributeClientSeed,
    Deal,
    Discard,
    DrawFromStock,
    RecordSeedCommitment,
    StartHand,
    TurnTimeout,
)
from rummy_rules.shuffle import SHUFFLE_VERSION, ShuffleInputs, deal
from rummy_testing.service_process import (
    EVENT_TIMEOUT_S,
    IsolatedRun,
    M,
    ServiceProcess,
    isolated_run,
    start_service,
    variant_plugin_env,
)
from rummy_testing.token_keys import issuer_authority, token_environment
from rummy_testing.waiting import wait_until
from toy_variant.game import SHOE, card_value

#: slow and integration: every service as a process, with and without the plug-in
#: (docs/testing.md#tests).
pytestmark = [pytest.mark.slow, pytest.mark.integration]

CLOCK_SPEED = 10.0
#: Hundredths of a House Token a point, and the commission: odd enough that shares and the
#: commission round.
POINT_VALUE, COMMISSION_BPS = 37, 1250
#: A turn-1 timeout, then this many turns drawing and discarding before the toy's showdown.
DRAWING_TURNS = 21
# This process encodes the toy's facts as the table would: with the toy's wire, which the plug-in
# module registers in every process that loads it.
import_module("toy_variant.plugin")

RULES = toy_variant.toy_rule_set(3, POINT_VALUE, COMMISSION_BPS, max_turns=DRAWING_TURNS + 1)
RULES_LABEL = f"{RULES.name}/{RULES.version}"
HOUSE = "house:commission"
SERVICES = ("rummy_table", "rummy_dealer", "rummy_ledger", "rummy_fairness", "rummy_clock")


# -- processes ------------------------------------------------------------------------------------


@dataclass
class Stack(IsolatedRun):
    """This module's run: topics under its prefix, its own database."""

    def events(self, topic: str, stream_id: str, payload_type: type[M]) -> list[Envelope[M]]:
        """The ``payload_type`` events of ``stream_id`` on ``topic``, repeats dropped."""
        read = self.log.read_stream(self.prefix + topic, stream_id)
        return [
            envelope
            for envelope in drop_redelivered([r.envelope for r in read])
            if has_payload(envelope, payload_type)
        ]


@pytest.fixture(scope="module")
def stack(kafka_bootstrap: str, database_url: str) -> Iterator[Stack]:
    with isolated_run(kafka_bootstrap, database_url, "variant_plugins", Stack) as run:
        yield run


@pytest.fixture(scope="module")
def services(stack: Stack) -> Iterator[dict[str, ServiceProcess]]:
    """Fairness, dealer, ledger and clock, each with the test suite's plug-ins (``stack.env()``)."""
    started: dict[str, ServiceProcess] = {}
    try:
        started["fairness"] = start_service("rummy_fairness", stack.env())
        started["dealer"] = start_service(
            "rummy_dealer", stack.env(RUMMY_FAIRNESS_ADDRESS=started["fairness"].target)
        )
        started["ledger"] = start_service("rummy_ledger", stack.env())
        started["clock"] = start_service(
            "rummy_clock", stack.env(RUMMY_CLOCK_SPEED=str(CLOCK_SPEED))
        )
        yield started
    finally:
        for process in started.values():
            process.stop()


def ledger_stub(ledger: ServiceProcess) -> ledger_grpc.LedgerServiceStub:
    token = issuer_authority().issue("operator-1", Role.OPERATOR)
    return ledger_grpc.LedgerServiceStub(authorized_channel(ledger.channel(), token))


def funded(ledger: ServiceProcess, count: int, amount: int) -> list[str]:
    stub = ledger_stub(ledger)
    accounts = [f"player-{uuid.uuid4().hex[:8]}" for _ in range(count)]
    for account in accounts:
        stub.Grant(
            ledger_pb.GrantRequest(
                account_id=account, amount_hundredths=amount, idempotency_key=str(uuid.uuid4())
            ),
            timeout=10,
        )
    return accounts


def balance(ledger: ServiceProcess, account: str) -> tuple[int, int]:
    """``(balance, reserved)`` in hundredths."""
    b = ledger_stub(ledger).GetBalance(ledger_pb.GetBalanceRequest(account_id=account), timeout=10)
    return b.balance_hundredths, b.reserved_hundredths


def json_lines(process: ServiceProcess) -> list[dict[str, object]]:
    entries = []
    for line in process.lines:
        try:
            entries.append(json.loads(line))
        except ValueError:
            continue
    return entries


# -- the table's side -----------------------------------------------------------------------------


def now_ms() -> int:
    return time.time_ns() // 1_000_000


class ToyTable:
    """The table service's part in one toy hand: the toy's rules decide, the stream codec encodes,
    every fact is appended to table-events as the table stamps it."""

    def __init__(self, stack: Stack, accounts: list[str], dealer_seat: int = 2) -> None:
        self.stack = stack
        self.table_id, self.hand_id = f"table-{uuid.uuid4().hex[:8]}", str(uuid.uuid4())
        self.accounts = accounts
        self.ctx = stream_payloads.HandContext(
            self.hand_id, 1, RULES, dict(enumerate(accounts)), dealer_seat
        )
        self.state = toy_variant.TOY.initial_state()
        self.version = 0
        self.appended: list[Envelope] = []

    def append(self, payload: Message, at_ms: int) -> Envelope:
        self.version += 1
        envelope = Envelope.new(
            payload,
            stream_id=self.table_id,
            stream_version=self.version,
            occurred_at=stream_payloads.ms_to_datetime(at_ms),
            correlation_id=self.hand_id,
            rules_version=RULES_LABEL,
            shuffle_version=SHUFFLE_VERSION,
        )
        self.stack.log.append(self.stack.prefix + TABLE_EVENTS, envelope)
        self.appended.append(envelope)
        return envelope

    def play(self, command: Command, at_ms: int) -> tuple[ev.Event, ...]:
        """Decide ``command`` with the toy's rules, fold and append what it caused."""
        events = toy_variant.TOY.decide(self.state, command)
        self.record(events, at_ms)
        return events

    def record(self, events: tuple[ev.Event, ...], at_ms: int) -> None:
        self.state = toy_variant.TOY.fold(events, self.state)
        for event in events:
            if isinstance(event, ev.HandStarted):
                self.append(toy_hand_started_pb(event), at_ms)
            else:
                self.append(stream_payloads.to_payload(event, self.ctx), at_ms)


def toy_hand_started_pb(started: ev.HandStarted) -> table_events.HandStarted:
    """The toy's HandStarted as the table service writes it
    (``stream_payloads.hand_started_to_pb``: its
    options through the toy's wire, in ``rule_set.other_variant``)."""
    return stream_payloads.hand_started_to_pb(started, 1)


CLIENT_SEEDS = {0: b"toy seat zero", 1: b"\x00\x01\x02"}  # seat 2 sends none


def open_hand(table: ToyTable) -> int:
    """StartHand and the client seeds; returns the time the hand started (ms)."""
    started_at = now_ms()
    seats = tuple(ev.SeatAccount(s, a) for s, a in enumerate(table.accounts))
    table.play(
        StartHand(
            hand_id=table.hand_id,
            seats=seats,
            dealer_seat=table.ctx.dealer_seat,
            rule_set=RULES,
            at_ms=started_at,
        ),
        started_at,
    )
    for seat, seed in CLIENT_SEEDS.items():
        table.play(ContributeClientSeed(seat=seat, seed_hex=seed.hex(), at_ms=now_ms()), now_ms())
    return started_at


def record_commitment(table: ToyTable, commitment: bytes) -> None:
    """Fairness's SeedCommitted as the table turns it into the toy's command: the hand is
    committed and its seed window opens."""
    at_ms = now_ms()
    table.play(RecordSeedCommitment(commitment=commitment.hex(), at_ms=at_ms), at_ms)


def lock_seeds(table: ToyTable, at_ms: int) -> Envelope[table_events.SeedsLocked]:
    """The window's timeout: the toy's SeedsLocked, carrying the commitment it recorded."""
    table.play(TurnTimeout(turn_no=0, at_ms=at_ms), at_ms)
    locked = table.appended[-1]
    assert has_payload(locked, table_events.SeedsLocked)
    return locked


def shared_pot_line(table: ToyTable) -> list[int]:
    """The card (its index in the shoe) each seat on turn discards, turn by turn, for the
    remaining DRAWING_TURNS turns to end with two seats sharing the lowest total and the third
    above it (the toy's tie). Each turn draws the top of the stock; a depth-first search over
    the values kept. Raises AssertionError when the deal allows none (not seen in 2000 deals)."""
    state = table.state
    assert state.turn_seat is not None
    order = [(state.turn_seat + k) % 3 for k in range(3)]
    stock = [card_value(c) for c in state.stock]

    def shared(totals: list[int]) -> bool:
        low, middle, high = sorted(totals)
        return low == middle < high

    @functools.cache
    def search(k: int, hands: tuple[tuple[int, ...], ...]) -> tuple[int, ...] | None:
        if k == DRAWING_TURNS:
            return () if shared([sum(h) for h in hands]) else None
        i = k % 3
        drawn = tuple(sorted((*hands[i], stock[k])))
        for value in sorted(set(drawn)):
            kept = list(drawn)
            kept.remove(value)
            rest = search(k + 1, (*hands[:i], tuple(kept), *hands[i + 1 :]))
            if rest is not None:
                return (value, *rest)
        return None

    seats = {s.seat: s.cards for s in state.seats}
    values = search(0, tuple(tuple(sorted(card_value(c) for c in seats[s])) for s in order))
    assert values is not None, "no line of play ends this deal in a shared pot"
    return list(values)


def play_out(table: ToyTable, values: list[int]) -> ev.HandEnded:
    """Each seat on turn draws from the stock and discards a card of the value given."""
    for value in values:
        state = table.state
        seat, turn = state.turn_seat, state.turn_no
        assert seat is not None
        table.play(DrawFromStock(seat=seat, turn_no=turn, at_ms=now_ms()), now_ms())
        own = table.state.seat(seat)
        assert own is not None
        card = next(c for c in own.cards if card_value(c) == value)
        table.play(Discard(seat=seat, turn_no=turn, card=card, at_ms=now_ms()), now_ms())
    ended = table.state.result
    assert isinstance(ended, ev.HandEnded)
    return ended


#: The variants the product's own packages install (their entry points), which every service plays.
PRODUCT_VARIANTS = frozenset(
    point.load().variant.name for point in entry_points(group="rummy.variants")
)


#: Broker addresses nothing answers on (port 9, discard, is closed on loopback).
UNREACHABLE_KAFKA = "127.0.0.1:9"
UNREACHABLE_DATABASE = "postgresql://rummy:rummy@127.0.0.1:9/rummy"


# -- tests ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("module", SERVICES)
def test_a_service_whose_plug_in_cannot_be_imported_exits_2_before_serving_naming_it(
    module: str,
) -> None:
    # A whole configuration, whatever the environment holds (CI exports the brokers' addresses,
    # a user's shell does not), with brokers where nothing listens: the service must stop on the
    # plug-in before it connects to anything.
    env = {
        **variant_plugin_env(),
        "KAFKA_BOOTSTRAP_SERVERS": UNREACHABLE_KAFKA,
        "DATABASE_URL": UNREACHABLE_DATABASE,
        **token_environment(),
        "RUMMY_GRPC_PORT": "0",
        "RUMMY_METRICS_PORT": "0",
        PLUGINS_VARIABLE: "toy_variant.plugin, no_such_variant_plugin",
    }
    process = start_service(module, env, wait=False)
    assert process.process.wait(60) == 2
    time.sleep(0.2)  # the reader thread collects the last lines
    output = "".join(process.lines)
    assert "no_such_variant_plugin" in output and "failed to import" in output
    assert "must be set" not in output, output
    assert not process.started.is_set()


def test_a_service_started_with_the_plug_in_logs_and_exports_the_variants_it_can_play(
    services: dict[str, ServiceProcess],
) -> None:
    for name, process in services.items():
        [loaded] = [e for e in json_lines(process) if e.get("event") == "variants loaded"]
        assert loaded["variants"] == sorted({*PRODUCT_VARIANTS, toy_variant.TOY_NAME}), name
        assert loaded["plugins"] == ["toy_variant.plugin"], name
        series = 'rummy_variants_loaded{plugin="%s",variant="%s"}'
        assert process.metric(series % ("toy_variant.plugin", toy_variant.TOY_NAME)) == 1, name
        assert process.metric(series % ("", "indian-points")) == 1, name


def test_a_toy_hand_is_committed_dealt_timed_reserved_and_settled_by_the_real_services(
    stack: Stack, services: dict[str, ServiceProcess]
) -> None:
    ledger = services["ledger"]
    accounts = funded(ledger, 3, 5000)
    house_before = balance(ledger, HOUSE)[0]
    table = ToyTable(stack, accounts)
    open_hand(table)

    # Fairness commits to a seed for the toy hand; the ledger holds the toy's max loss.
    [committed] = stack.wait_for(FAIRNESS_EVENTS, table.table_id, fairness_events.SeedCommitted)
    commitment = committed.payload.commitment_sha256
    assert committed.payload.hand_id == table.hand_id and len(commitment) == 32
    record_commitment(table, commitment)
    [reserved] = stack.wait_for(LEDGER_EVENTS, table.table_id, ledger_events.StakesReserved)
    assert [(r.seat, r.amount_hundredths) for r in reserved.payload.reservations] == [
        (seat, 25 * POINT_VALUE) for seat in range(3)
    ]
    assert [balance(ledger, a) for a in accounts] == [(5000, 25 * POINT_VALUE)] * 3

    # The clock closes the toy's 3 s seed window (0.3 s at its speed).
    [window] = [e for e in table.appended if has_payload(e, table_events.SeedWindowOpened)]
    [closed] = stack.wait_for(CLOCK_EVENTS, table.table_id, clock_events.SeedWindowClosed)
    assert closed.payload.hand_id == table.hand_id
    assert closed.payload.deadline == window.payload.deadline
    window_ms = stream_payloads.timestamp_to_ms(window.payload.deadline)
    assert window_ms - stream_payloads.datetime_to_ms(window.occurred_at) == 3000
    locked = lock_seeds(table, stream_payloads.datetime_to_ms(closed.occurred_at))
    assert locked.payload.server_commitment_sha256 == commitment
    assert locked.payload.variant == toy_variant.TOY_NAME and locked.payload.hand_size == 5

    # The dealer deals the toy's layout: 3 hands of 5 from one 52-card deck, no cut, an upcard.
    [dealt] = stack.wait_for(DEALER_EVENTS, table.table_id, dealer_events.HandDealt)
    assert dealt.causation_id == locked.event_id and dealt.occurred_at > committed.occurred_at
    assert not dealt.payload.HasField("wild_cut") and dealt.payload.HasField("first_open")
    assert [(h.seat, len(h.cards)) for h in dealt.payload.hands] == [(0, 5), (1, 5), (2, 5)]
    indices = [c.index for h in dealt.payload.hands for c in h.cards]
    indices += [dealt.payload.first_open.index, *(c.index for c in dealt.payload.stock)]
    assert sorted(indices) == list(range(52)) and len(dealt.payload.stock) == 36
    [deal_facts] = stream_payloads.from_payload(
        dealt.payload, table.ctx, stream_payloads.datetime_to_ms(dealt.occurred_at)
    )
    assert isinstance(deal_facts, ev.HandDealt)
    dealt_at = now_ms()
    table.play(
        Deal(
            hands=deal_facts.hands,
            wild_cut=deal_facts.wild_cut,
            first_open=deal_facts.first_open,
            stock=deal_facts.stock,
            at_ms=dealt_at,
        ),
        dealt_at,
    )

    # The clock times the toy's 20 s turn (2 s at its speed); its timeout passes the turn.
    [turn] = [e for e in table.appended if has_payload(e, table_events.TurnStarted)]
    assert stream_payloads.timestamp_to_ms(turn.payload.deadline) - dealt_at == 20_000
    [passed] = stack.wait_for(CLOCK_EVENTS, table.table_id, clock_events.TurnDeadlinePassed)
    assert (passed.payload.seat, passed.payload.turn_no) == (turn.payload.seat, 1)
    assert passed.payload.deadline == turn.payload.deadline
    assert stream_payloads.datetime_to_ms(passed.occurred_at) >= dealt_at + 20_000 / CLOCK_SPEED
    timed_out_at = stream_payloads.datetime_to_ms(passed.occurred_at)
    table.play(TurnTimeout(turn_no=1, at_ms=timed_out_at), timed_out_at)

    # Play to the toy's tie: two seats share the lowest total and the pot.
    ended = play_out(table, shared_pot_line(table))
    totals = {s.seat: sum(card_value(c) for c in s.cards) for s in table.state.seats}
    low = min(totals.values())
    winners = sorted(s for s, t in totals.items() if t == low)
    [loser] = [s for s in totals if s not in winners]
    points = min(totals[loser] - low, 25)
    pot = points * POINT_VALUE
    commission = pot * COMMISSION_BPS // 10_000
    share, remainder = divmod(pot - commission, 2)
    expected = {
        (accounts[winners[0]], "win"): share + remainder,
        (accounts[winners[1]], "win"): share,
        (accounts[loser], "loss"): -pot,
        (HOUSE, "commission"): commission,
    }
    assert ended.settlement.winner_seats == tuple(winners)
    [end] = [e for e in table.appended if has_payload(e, table_events.HandEnded)]
    assert list(end.payload.co_winner_seats) == winners[1:]

    # Fairness reveals the seed; it hashes to the commitment and deals exactly what was dealt.
    [revealed] = stack.wait_for(FAIRNESS_EVENTS, table.table_id, fairness_events.SeedRevealed)
    server_seed = revealed.payload.server_seed
    assert hashlib.sha256(server_seed).digest() == commitment
    seeds = tuple((s, CLIENT_SEEDS.get(s, b"")) for s in range(3))
    spec = deal(
        ShuffleInputs(server_seed, table.hand_id, seeds),
        SHOE,
        range(3),
        table.ctx.dealer_seat,
        5,
        toy_variant.TOY.deal_shape,
    )
    assert spec.wild_cut is None
    assert {h.seat: h.cards for h in spec.hands} == {h.seat: h.cards for h in deal_facts.hands}
    assert (spec.first_open, spec.stock) == (deal_facts.first_open, deal_facts.stock)

    # The ledger settles the shared pot once, however often the HandEnded is delivered.
    for _ in range(2):
        stack.log.append(stack.prefix + TABLE_EVENTS, end)
    [settled] = stack.wait_for(LEDGER_EVENTS, table.table_id, ledger_events.HandSettled)
    assert settled.payload.commission_hundredths == commission
    with psycopg.connect(stack.database_url) as conn:
        rows = conn.execute(
            "SELECT e.account_id, e.line_kind, e.amount FROM ledger.journal_entries e"
            " JOIN ledger.journal_transactions t ON t.id = e.transaction_id"
            " WHERE t.hand_id = %s",
            (table.hand_id,),
        ).fetchall()
    assert {(a, k): m for a, k, m in rows} == expected and len(rows) == 4
    assert balance(ledger, accounts[winners[0]]) == (5000 + share + remainder, 0)
    assert balance(ledger, accounts[winners[1]]) == (5000 + share, 0)
    assert balance(ledger, accounts[loser]) == (5000 - pot, 0)
    assert balance(ledger, HOUSE)[0] - house_before == commission
    time.sleep(2)  # the redeliveries were read: still one settlement
    assert len(stack.events(LEDGER_EVENTS, table.table_id, ledger_events.HandSettled)) == 1


@pytest.fixture(scope="module")
def without_plugin(stack: Stack) -> Iterator[tuple[Stack, ServiceProcess, ServiceProcess]]:
    """Fairness and a dealer started without the plug-ins, on topics of their own."""
    run = replace(stack, prefix=f"t{uuid.uuid4().hex[:8]}-")
    run.log.ensure_topics(event_topic_specs(prefix=run.prefix))
    env = {PLUGINS_VARIABLE: ""}
    fairness = start_service("rummy_fairness", run.env(**env))
    dealer = None
    try:
        dealer = start_service(
            "rummy_dealer", run.env(RUMMY_FAIRNESS_ADDRESS=fairness.target, **env)
        )
        yield run, fairness, dealer
    finally:
        if dealer is not None:
            dealer.stop()
        fairness.stop()


def test_a_dealer_started_without_the_plug_in_skips_the_toy_hand_and_counts_it(
    without_plugin: tuple[Stack, ServiceProcess, ServiceProcess],
) -> None:
    run, _fairness, dealer = without_plugin
    [loaded] = [e for e in json_lines(dealer) if e.get("event") == "variants loaded"]
    assert loaded["variants"] == sorted(PRODUCT_VARIANTS) and loaded["plugins"] == []
    table = ToyTable(run, ["acct-0", "acct-1", "acct-2"])
    open_hand(table)
    # Fairness hosts any variant without knowing it: it commits all the same.
    [committed] = run.wait_for(FAIRNESS_EVENTS, table.table_id, fairness_events.SeedCommitted)
    record_commitment(table, committed.payload.commitment_sha256)
    lock_seeds(table, now_ms())

    def skipped() -> list[dict[str, object]]:
        return [
            e
            for e in json_lines(dealer)
            if e.get("hand_id") == table.hand_id and e.get("variant") == toy_variant.TOY_NAME
        ]

    # It skips the hand (rummy_platform.skips): logged once, counted, nothing dealt.
    [line] = wait_until("the dealer's skip of the toy hand", skipped, EVENT_TIMEOUT_S)
    assert line["reason"] == "unknown_variant" and line["consumer"] == "dealer"
    series = (
        'rummy_events_skipped_total{reason="unknown_variant",'
        f'type="rummy.table.v1.SeedsLocked",variant="{toy_variant.TOY_NAME}"}}'
    )
    assert dealer.metric(series) == 1
    time.sleep(1)
    assert run.events(DEALER_EVENTS, table.table_id, dealer_events.HandDealt) == []
