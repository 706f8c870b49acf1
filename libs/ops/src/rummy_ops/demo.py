"""``rummy demo``: bots play real hands through the public gRPC API, and the books are checked.

:func:`play` does the work against running services (the e2e tests call it with their own stack);
the ``demo`` command (:func:`demo`) starts the stack (:mod:`rummy_ops.stack`) around it.

1. Grants House Tokens to every bot account through the ledger's operator API (``Grant``, with an
   idempotency key per account and run).
2. Opens the tables of :data:`DEFAULT_TABLES` (4, 6 and 8 seats; one free, the others at different
   point values and commission rates) and seats one bot per seat, each with its own player token.
3. Bots play until every table has finished its share of the hands; an operator watch on each
   table records every hand's ``HandEnded`` and prints one line per hand (table, hand, winner, each
   seat's points, commission, net token movement), with a progress bar of hands completed.
4. At the end: every account's balance, the house's commission total, the conservation check
   (the sum of the bots' balances plus the commission equals the tokens granted), how many hands
   ended each way, the slowest player action, and the replay verdict (:func:`replay_verdict`).

Money is in hundredths of a House Token throughout and printed as tokens with two decimals.
"""

from __future__ import annotations

import importlib
import random
import secrets
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import click
import grpc
from tqdm import tqdm

from rummy.common.v1 import cards_pb2
from rummy.ledger.v1 import ledger_service_pb2 as ledger_api
from rummy.ledger.v1 import ledger_service_pb2_grpc as ledger_grpc
from rummy.table.v1 import events_pb2 as table_events
from rummy.table.v1 import table_service_pb2 as table_api
from rummy.table.v1 import table_service_pb2_grpc as table_grpc
from rummy_ops.bots.client import Bot
from rummy_ops.bots.record import PlayerRecord
from rummy_ops.bots.strategy import BotBrain, Temperament
from rummy_ops.replay.render import winners
from rummy_ops.stack import (
    Stack,
    StackConfig,
    StackError,
    interrupt_on_sigterm,
    repository_root,
    shielded_from_interrupts,
)
from rummy_platform.auth import Role, TokenAuthority, bearer_metadata
from rummy_platform.limits import open_channel
from rummy_platform.table_routing import TableRouter
from rummy_rules import registry
from rummy_rules.melds import MeldOptions

OPERATOR_ACCOUNT = "ops-demo"
HOUSE_COMMISSION_ACCOUNT = "house:commission"


@dataclass(frozen=True)
class TablePlan:
    """A table to open: ``point_value_hundredths`` per point (0 = free), ``commission_bps`` on
    the winner's take (basis points); ``players`` bots are seated (default: every seat)."""

    name: str
    seats: int
    point_value_hundredths: int
    commission_bps: int
    players: int | None = None

    @property
    def bots(self) -> int:
        return self.players or self.seats


DEFAULT_TABLES: tuple[TablePlan, ...] = (
    TablePlan("free-4", 4, 0, 0, players=2),  # heads-up: a drop or a wrong declare ends it
    TablePlan("silver-6", 6, 10, 1000),
    TablePlan("gold-8", 8, 25, 500),
)


@dataclass(frozen=True)
class DemoOptions:
    """``hands``: hands to play in all, shared among the tables; ``seed``: the bots' randomness;
    ``turn_seconds`` / ``seed_window_seconds`` / ``start_delay_seconds``: the tables' rule-set
    seconds (the services divide them by their ``RUMMY_CLOCK_SPEED``); ``grant_hundredths``: what
    each bot is granted; ``mischief``: scales how often bots stall or declare wrongly;
    ``timeout_seconds``: give up waiting for hands after this long."""

    hands: int = 30
    seed: int = 7
    tables: tuple[TablePlan, ...] = DEFAULT_TABLES
    turn_seconds: int = 20
    seed_window_seconds: int = 10
    start_delay_seconds: int = 10
    grant_hundredths: int = 500_00
    mischief: float = 1.0
    timeout_seconds: float = 900.0
    #: Where each bot keeps its own record (``<account>.jsonl``, rummy_ops.bots.record); None: none.
    records_dir: Path | None = None
    #: The tables' variant and its options as OpenTable takes them (``variant``,
    #: ``variant_options``; the seconds above are set on it); None: the house variant's house
    #: rule set. The bots play it with the variant's own strategy (``rummy_rules.registry``).
    rule_set: cards_pb2.RuleSet | None = None


@dataclass(frozen=True)
class Endpoints:
    """Where the services answer and the secret their tokens are signed with; and, for the
    replay of the hands afterwards, where their event log and ledger live (``topic_prefix`` as
    the services' ``RUMMY_TOPIC_PREFIX``)."""

    table: str
    ledger: str
    jwt_secret: str
    kafka_bootstrap_servers: str = ""
    database_url: str = ""
    topic_prefix: str = ""


def stack_endpoints(stack: Stack) -> Endpoints:
    """The :class:`Endpoints` of a started ``stack`` (its table and ledger, secret, brokers and
    ``RUMMY_TOPIC_PREFIX``)."""
    return Endpoints(
        table=stack.address("table"),
        ledger=stack.address("ledger"),
        jwt_secret=stack.config.jwt_secret,
        kafka_bootstrap_servers=stack.kafka_bootstrap_servers,
        database_url=stack.database_url,
        topic_prefix=stack.config.extra_env.get("RUMMY_TOPIC_PREFIX", ""),
    )


#: ``--clock-speed`` of the commands that start a stack (``rummy demo``, ``rummy soak``).
clock_speed_option = click.option(
    "--clock-speed",
    default=10.0,
    show_default=True,
    type=click.FloatRange(min=0.01),
    help="How many times faster than real time deadlines pass (RUMMY_CLOCK_SPEED).",
)


@dataclass
class HandRecord:
    """One hand as the operator's watch saw it end (``result``) or abort (``aborted_reason``)."""

    table: str
    table_id: str
    hand_no: int
    hand_id: str
    result: table_events.HandEnded | None = None
    aborted_reason: str = ""


@dataclass
class DemoReport:
    """Everything :func:`play` measured. Money in hundredths of a House Token."""

    run_id: str
    endpoints: Endpoints | None = None
    tables: dict[str, str] = field(default_factory=dict)  # name -> table id
    hands: list[HandRecord] = field(default_factory=list)
    balances: dict[str, int] = field(default_factory=dict)  # bot account -> posted balance
    reserved: dict[str, int] = field(default_factory=dict)
    granted_hundredths: int = 0
    commission_hundredths: int = 0
    house_commission_delta: int | None = None  # the ledger's house account, before vs after
    endings: Counter[str] = field(default_factory=Counter)
    wall_seconds: float = 0.0
    slowest_action_seconds: float = 0.0
    slowest_action: str = ""
    bot_errors: list[str] = field(default_factory=list)
    bot_actions: int = 0
    stalled_turns: int = 0
    refused_actions: int = 0  # the turn had moved on (a deadline raced the bot)
    finished: bool = False
    stopped_because: str = ""

    @property
    def ended(self) -> list[HandRecord]:
        return [h for h in self.hands if h.result is not None]

    @property
    def conserved(self) -> bool:
        """The bots' balances plus the commission taken equal the tokens granted."""
        return sum(self.balances.values()) + self.commission_hundredths == self.granted_hundredths


# -- how a hand ended ----------------------------------------------------------------------------

VALID_DECLARE = "valid declare"
LAST_SEAT = "last seat standing after drops"
WRONG_DECLARE = "with a wrong declare"
TIMEOUT_DROP = "with a timeout auto-drop"
ENDINGS = (VALID_DECLARE, LAST_SEAT, WRONG_DECLARE, TIMEOUT_DROP)


def endings_of(result: table_events.HandEnded) -> list[str]:
    """The ways a hand ended (:data:`ENDINGS`): exactly one of a valid declare (the winner shows
    melds) or the last seat standing, plus any of a wrong declare and a timeout auto-drop."""
    winner = next((r for r in result.results if r.seat == result.winner_seat), None)
    declared = winner is not None and len(winner.arrangement.melds) > 0
    out = [VALID_DECLARE if declared else LAST_SEAT]
    outcomes = {r.outcome for r in result.results}
    if "wrong_declare" in outcomes:
        out.append(WRONG_DECLARE)
    if "timed_out" in outcomes:
        out.append(TIMEOUT_DROP)
    return out


def tokens(hundredths: int, signed: bool = False) -> str:
    """Hundredths of a House Token as tokens with two decimals (``-12.05``, ``+3.40``)."""
    sign = "-" if hundredths < 0 else ("+" if signed else "")
    whole, cents = divmod(abs(hundredths), 100)
    return f"{sign}{whole}.{cents:02d}"


_SHORT = {
    "won": "W",
    "counted": "",
    "first_drop": "fd",
    "middle_drop": "md",
    "timed_out": "to",
    "wrong_declare": "wd",
    "left": "lv",
}


def hand_line(record: HandRecord) -> str:
    """One line for a hand: table, hand, winner, each seat's points (with how it went out),
    the commission and each seat's net token movement."""
    if record.result is None:
        return f"{record.table:<9} hand {record.hand_no:>3}  aborted: {record.aborted_reason}"
    r = record.result
    points = " ".join(f"s{x.seat}:{x.points}{_SHORT.get(x.outcome, x.outcome)}" for x in r.results)
    net = " ".join(f"s{x.seat}:{tokens(x.amount_hundredths, True)}" for x in r.settlement)
    how = ", ".join(endings_of(r))
    return (
        f"{record.table:<9} hand {record.hand_no:>3}  {winners(r)}  points [{points}]  "
        f"commission {tokens(r.commission_hundredths)}  net [{net}]  ({how})"
    )


# -- the replay seam -----------------------------------------------------------------------------

#: ``verify(report) -> (ok, summary)``: replays the report's hands (``report.hands``: table id,
#: hand id) from the event log at ``report.endpoints`` (Kafka, topic prefix, PostgreSQL) and checks
#: them. The ``rummy replay`` step provides it as ``rummy_ops.replay.verify_demo``; until then the
#: demo says the replay is not available.
ReplayCheck = Callable[[DemoReport], tuple[bool, str]]


def replay_verdict(report: DemoReport, check: ReplayCheck | None = None) -> tuple[bool | None, str]:
    """The replay verdict of the report's hands: ``(ok, summary)``, or ``(None, why not)`` when
    no replay check exists yet. ``check`` defaults to ``rummy_ops.replay.verify_demo``."""
    if check is None:
        try:
            module = importlib.import_module("rummy_ops.replay")
        except ImportError:
            return None, "replay: not available yet (`rummy replay` is not installed)"
        check = module.verify_demo
    began = time.monotonic()
    ok, text = check(report)
    return ok, f"{text} (replay step {time.monotonic() - began:.1f} s)"


# -- playing -------------------------------------------------------------------------------------


def _temperament(index: int, rng: random.Random, mischief: float) -> Temperament:
    """Seat 0 of each table sometimes stalls a whole hand, seat 1 sometimes declares wrongly,
    everyone stalls a turn now and then; ``mischief`` scales all of it (0 = well behaved)."""
    m = max(0.0, mischief)
    if index == 0:
        return Temperament(stall_hand=min(1.0, 0.15 * m), stall_turn=min(1.0, 0.05 * m))
    if index == 1:
        return Temperament(wrong_declare=min(1.0, 0.03 * m), stall_turn=min(1.0, 0.01 * m))
    return Temperament(
        stall_turn=min(1.0, 0.01 * m),
        wrong_declare=min(1.0, 0.003 * m),
        drop_hopeless=rng.choice([0.3, 0.5, 0.8]),
    )


def _rule_set(options: DemoOptions) -> cards_pb2.RuleSet:
    """The demo tables' options: ``options.rule_set`` (none: the house variant's) with the demo's
    seconds; every rule left out is the variant's house rule."""
    out = cards_pb2.RuleSet()
    if options.rule_set is not None:
        out.CopyFrom(options.rule_set)
    out.turn_seconds = options.turn_seconds
    out.seed_window_seconds = options.seed_window_seconds
    out.start_delay_seconds = options.start_delay_seconds
    return out


def _share(total: int, parts: int) -> list[int]:
    base, extra = divmod(total, parts)
    return [base + (1 if i < extra else 0) for i in range(parts)]


class _TableRun:
    """One table: its bots and the operator's watch that records hands and ends the table's
    play when its share of hands has ended."""

    def __init__(
        self,
        plan: TablePlan,
        table_id: str,
        target: int,
        stub: table_grpc.TableServiceStub,
        metadata: tuple[tuple[str, str]],
        on_hand: Callable[[HandRecord], None],
    ) -> None:
        self.plan, self.table_id, self.target = plan, table_id, target
        self.bots: list[Bot] = []
        self.records: dict[str, HandRecord] = {}
        self.ended = 0
        self.done = threading.Event()  # set once the bots have left (or were stopped)
        self._leaving = False
        self._stub, self._metadata, self._on_hand = stub, metadata, on_hand
        self._call: grpc.Future | None = None
        self._last: tuple[str, int] = ("", 0)
        self._lock = threading.Lock()
        self.thread = threading.Thread(target=self._watch, name=f"watch-{plan.name}", daemon=True)

    def _watch(self) -> None:
        while not self._leaving:
            try:
                self._call = self._stub.WatchTable(
                    table_api.WatchTableRequest(table_id=self.table_id), metadata=self._metadata
                )
                for response in self._call:
                    self._on_view(response.view)
                    if self._leaving:
                        return
            except grpc.RpcError as error:
                if self._leaving or error.code() == grpc.StatusCode.CANCELLED:
                    return
                time.sleep(0.5)

    def _on_view(self, view: table_api.PlayerView) -> None:
        previous_id, previous_no = self._last
        if view.hand_id and view.hand_id != previous_id:
            if previous_id:
                self._finish_from_service(previous_id, previous_no)  # its end view was skipped
            self._last = (view.hand_id, view.hand_no)
        if view.phase == table_api.HAND_PHASE_ENDED and view.HasField("result"):
            self._record(
                HandRecord(
                    self.plan.name, self.table_id, view.hand_no, view.hand_id, result=view.result
                )
            )
        elif view.phase == table_api.HAND_PHASE_ABORTED:
            self._record(
                HandRecord(
                    self.plan.name,
                    self.table_id,
                    view.hand_no,
                    view.hand_id,
                    aborted_reason=view.aborted_reason or "aborted",
                )
            )

    def _finish_from_service(self, hand_id: str, hand_no: int) -> None:
        if hand_id in self.records:
            return
        try:
            reply = self._stub.GetHandResult(
                table_api.GetHandResultRequest(table_id=self.table_id, hand_id=hand_id),
                metadata=self._metadata,
                timeout=10,
            )
            record = HandRecord(self.plan.name, self.table_id, hand_no, hand_id, reply.result)
        except grpc.RpcError as error:
            record = HandRecord(
                self.plan.name,
                self.table_id,
                hand_no,
                hand_id,
                aborted_reason=f"no result ({error.code().name})",
            )
        self._record(record)

    def _record(self, record: HandRecord) -> None:
        with self._lock:
            if record.hand_id in self.records:
                return
            self.records[record.hand_id] = record
            if record.result is not None:
                self.ended += 1
        self._on_hand(record)
        if self.ended >= self.target and not self._leaving:
            self._leaving = True
            for bot in self.bots:  # between hands: leaving costs nothing
                bot.stop(leave=True)
            self.done.set()

    def stop(self) -> None:
        """Stop the bots and the watch; wait for the watch thread. Bots still seated leave (a
        hand in progress counts that as leaving mid-hand), so no table keeps dealing to seats
        nobody plays."""
        self._leaving = True
        for bot in self.bots:
            bot.stop(leave=True)
        self.done.set()
        if self._call is not None:
            self._call.cancel()
        if self.thread.is_alive() and self.thread is not threading.current_thread():
            self.thread.join(15)


def play(
    endpoints: Endpoints,
    options: DemoOptions,
    echo: Callable[[str], None] = print,
    progress: bool = True,
    broken: Callable[[], str | None] = lambda: None,
    seated: Callable[[dict[str, list[Bot]]], None] | None = None,
) -> DemoReport:
    """Grant, open the tables, seat the bots, play ``options.hands`` hands, check the books.

    ``broken`` is polled every second while hands are played; a message from it (e.g. "table
    exited (1)") stops the play early, recorded in ``report.stopped_because``. ``seated`` is
    called once every bot plays, with each table's bots (by plan name; ``rummy soak`` watches
    their calls in flight). Returns the
    :class:`DemoReport` (``finished`` False when the timeout passed or the stack broke first).
    Raises grpc.RpcError when a grant, an OpenTable or a TakeSeat is refused.
    """
    started = time.monotonic()
    run_id = secrets.token_hex(3)
    report = DemoReport(run_id=run_id, endpoints=endpoints)
    authority = TokenAuthority(endpoints.jwt_secret)
    operator = bearer_metadata(authority.issue(OPERATOR_ACCOUNT, Role.OPERATOR, 6 * 3600))
    table_router = TableRouter(endpoints.table)
    ledger_channel = open_channel(endpoints.ledger)
    ledger_stub = ledger_grpc.LedgerServiceStub(ledger_channel)
    rng = random.Random(options.seed)
    house_before = _house_commission(ledger_stub, operator)

    bar: tqdm | None = None
    lock = threading.Lock()

    def on_hand(record: HandRecord) -> None:
        with lock:
            report.hands.append(record)
            if progress:
                tqdm.write(hand_line(record))
            else:
                echo(hand_line(record))
            if record.result is not None:
                report.commission_hundredths += record.result.commission_hundredths
                for ending in endings_of(record.result):
                    report.endings[ending] += 1
                if bar is not None:
                    bar.update(1)

    rule_set = _rule_set(options)
    variant = registry.lookup(rule_set.variant or registry.LEGACY_VARIANT)
    runs: list[_TableRun] = []
    try:
        for plan, target in zip(
            options.tables, _share(options.hands, len(options.tables)), strict=True
        ):
            reply = table_router.call(
                "OpenTable",
                table_api.OpenTableRequest(
                    client_request_id=f"demo-{run_id}-{plan.name}",
                    name=f"{plan.name}-{run_id}",
                    seat_count=plan.seats,
                    point_value_hundredths=plan.point_value_hundredths,
                    commission_bps=plan.commission_bps,
                    rule_set=rule_set,
                ),
                metadata=operator,
                timeout=30,
            )
            report.tables[plan.name] = reply.table_id
            run = _TableRun(
                plan,
                reply.table_id,
                target,
                table_router.stub_for(reply.table_id),
                operator,
                on_hand,
            )
            # the shoe of the variant's house rule set for the table's seats
            shoe = variant.house_rule_set(plan.seats, 0, 0).shoe
            for index in range(plan.bots):
                account = f"bot-{run_id}-{plan.name}-{index + 1}"
                ledger_stub.Grant(
                    ledger_api.GrantRequest(
                        account_id=account,
                        amount_hundredths=options.grant_hundredths,
                        idempotency_key=f"demo-grant-{account}",
                        memo="rummy demo",
                    ),
                    metadata=operator,
                    timeout=30,
                )
                report.granted_hundredths += options.grant_hundredths
                brain = BotBrain(
                    seed=rng.getrandbits(64),
                    temperament=_temperament(index, rng, options.mischief),
                    options=MeldOptions(jokers_only_group_is_sequence=True),
                    variant=variant.name,
                )
                token = authority.issue(account, Role.PLAYER, 6 * 3600)
                record = (
                    PlayerRecord(options.records_dir / f"{account}.jsonl", account)
                    if options.records_dir is not None
                    else None
                )
                run.bots.append(
                    Bot(account, token, table_router, reply.table_id, shoe, brain, record)
                )
            runs.append(run)
            echo(
                f"opened {plan.name} ({plan.seats} seats, point value "
                f"{tokens(plan.point_value_hundredths)}, commission {plan.commission_bps / 100:g}%)"
                f" as {reply.table_id}; {plan.bots} bots seated, granted "
                f"{tokens(options.grant_hundredths)} each; {target} hands to play"
            )
        bar = tqdm(total=options.hands, unit="hand", desc="hands", disable=not progress)
        for run in runs:
            run.thread.start()
            for bot in run.bots:
                bot.take_seat()
                bot.start()
        if seated is not None:
            seated({run.plan.name: run.bots for run in runs})
        deadline = started + options.timeout_seconds
        while not all(run.done.is_set() for run in runs):
            if time.monotonic() > deadline:
                report.stopped_because = f"the timeout of {options.timeout_seconds:.0f} s passed"
                break
            reason = broken()
            if reason:
                report.stopped_because = reason
                break
            time.sleep(0.5)
        report.finished = all(run.done.is_set() for run in runs)
    finally:
        for run in runs:
            run.stop()
        if bar is not None:
            bar.close()

    for run in runs:
        for bot in run.bots:
            report.bot_errors.extend(f"{bot.account_id}: {e}" for e in bot.stats.errors)
            report.bot_actions += bot.stats.actions
            report.stalled_turns += bot.stats.stalls
            report.refused_actions += bot.stats.refused
            if bot.stats.slowest_action_seconds > report.slowest_action_seconds:
                report.slowest_action_seconds = bot.stats.slowest_action_seconds
                report.slowest_action = bot.stats.slowest_action
    accounts = [bot.account_id for run in runs for bot in run.bots]
    _settle_wait(ledger_stub, operator, accounts, report)
    house_after = _house_commission(ledger_stub, operator)
    if house_before is not None and house_after is not None:
        report.house_commission_delta = house_after - house_before
    report.wall_seconds = time.monotonic() - started
    table_router.close()
    ledger_channel.close()
    return report


def _balances(
    stub: ledger_grpc.LedgerServiceStub, metadata: tuple[tuple[str, str]], accounts: Sequence[str]
) -> dict[str, ledger_api.GetBalanceResponse]:
    return {
        a: stub.GetBalance(
            ledger_api.GetBalanceRequest(account_id=a), metadata=metadata, timeout=10
        )
        for a in accounts
    }


def _settle_wait(
    stub: ledger_grpc.LedgerServiceStub,
    metadata: tuple[tuple[str, str]],
    accounts: Sequence[str],
    report: DemoReport,
    timeout_seconds: float = 60.0,
) -> None:
    """Read the bots' balances once the ledger has settled every hand (no reservation left and
    the books balance), or after ``timeout_seconds``."""
    deadline = time.monotonic() + timeout_seconds
    while True:
        got = _balances(stub, metadata, accounts)
        report.balances = {a: b.balance_hundredths for a, b in got.items()}
        report.reserved = {a: b.reserved_hundredths for a, b in got.items()}
        settled = not any(report.reserved.values()) and report.conserved
        if settled or time.monotonic() > deadline:
            return
        time.sleep(0.5)


def _house_commission(
    stub: ledger_grpc.LedgerServiceStub, metadata: tuple[tuple[str, str]]
) -> int | None:
    try:
        reply = stub.GetBalance(
            ledger_api.GetBalanceRequest(account_id=HOUSE_COMMISSION_ACCOUNT),
            metadata=metadata,
            timeout=10,
        )
    except grpc.RpcError as error:
        if error.code() == grpc.StatusCode.NOT_FOUND:
            return 0  # no commission taken yet
        return None
    return int(reply.balance_hundredths)


def summary(report: DemoReport, replay: tuple[bool | None, str]) -> list[str]:
    """The closing lines: balances, commission, conservation, endings, timing, replay."""
    lines = ["", "balances (posted; reserved in brackets when not zero):"]
    for account in sorted(report.balances):
        reserved = report.reserved.get(account, 0)
        extra = f" [{tokens(reserved)} reserved]" if reserved else ""
        lines.append(f"  {account:<28} {tokens(report.balances[account]):>10}{extra}")
    lines.append(f"house commission (from the hands): {tokens(report.commission_hundredths)}")
    if report.house_commission_delta is not None:
        lines.append(
            f"house commission account moved:   {tokens(report.house_commission_delta)}"
            " (every table of this ledger, this run's and any other's)"
        )
    total = sum(report.balances.values())
    verdict = "OK" if report.conserved else "MISMATCH"
    lines.append(
        f"conservation: balances {tokens(total)} + commission "
        f"{tokens(report.commission_hundredths)} = {tokens(total + report.commission_hundredths)}"
        f" vs granted {tokens(report.granted_hundredths)}: {verdict}"
    )
    ended = report.ended
    aborted = len(report.hands) - len(ended)
    lines.append(f"hands ended: {len(ended)}" + (f" (and {aborted} aborted)" if aborted else ""))
    for ending in ENDINGS:
        lines.append(f"  {ending:<32} {report.endings.get(ending, 0)}")
    rate = len(ended) / report.wall_seconds if report.wall_seconds else 0.0
    lines.append(
        f"wall time {report.wall_seconds:.1f} s, {rate:.2f} hands/s, slowest player action "
        f"{report.slowest_action_seconds * 1000:.0f} ms ({report.slowest_action or '-'})"
    )
    lines.append(
        f"bot calls {report.bot_actions}, turns stalled on purpose {report.stalled_turns}, "
        f"refused because the turn had moved on {report.refused_actions}"
    )
    if report.bot_errors:
        lines.append(f"bot errors ({len(report.bot_errors)}), first: {report.bot_errors[0]}")
    if not report.finished:
        why = report.stopped_because or "stopped early"
        lines.append(f"NOT FINISHED: {why} before every table played its hands")
    ok, text = replay
    lines.append(text if ok is None else f"replay: {'OK' if ok else 'MISMATCH'}: {text}")
    return lines


def succeeded(report: DemoReport, replay: tuple[bool | None, str]) -> bool:
    """The exit verdict: finished, books conserved, no reservation left, replay not failed."""
    return (
        report.finished
        and report.conserved
        and not any(report.reserved.values())
        and replay[0] is not False
    )


# -- the command ---------------------------------------------------------------------------------


@click.command()
@click.option(
    "--hands",
    default=30,
    show_default=True,
    type=click.IntRange(min=1),
    help="Hands to play in all, shared among the three tables.",
)
@click.option(
    "--seed",
    default=7,
    show_default=True,
    type=int,
    help="Seed of the bots' randomness (their choices are reproducible from it).",
)
@click.option(
    "--turn-seconds",
    default=10,
    show_default=True,
    type=click.IntRange(min=1),
    help="The tables' turn time in rule-set seconds (divided by --clock-speed).",
)
@clock_speed_option
@click.option(
    "--grant",
    "grant_tokens",
    default=500,
    show_default=True,
    type=click.IntRange(min=1),
    help="House Tokens granted to each bot.",
)
@click.option(
    "--mischief",
    default=1.0,
    show_default=True,
    type=click.FloatRange(min=0),
    help="Scales how often bots stall or declare wrongly (0: never).",
)
@click.option(
    "--timeout",
    "timeout_seconds",
    default=900.0,
    show_default=True,
    type=click.FloatRange(min=1),
    help="Seconds to wait for the hands at most.",
)
@click.option(
    "--keep-running", is_flag=True, help="Leave the services and brokers running at the end."
)
def demo(
    hands: int,
    seed: int,
    turn_seconds: int,
    clock_speed: float,
    grant_tokens: int,
    mischief: float,
    timeout_seconds: float,
    keep_running: bool,
) -> None:
    """Start Kafka, PostgreSQL and the five services, let bots play HANDS hands at three tables
    (4, 6 and 8 seats), print every hand and check the books. Stops what it started on exit
    (also on Ctrl-C) unless --keep-running. Exit status 1 when a check fails."""
    options = DemoOptions(
        hands=hands,
        seed=seed,
        turn_seconds=turn_seconds,
        grant_hundredths=grant_tokens * 100,
        mischief=mischief,
        timeout_seconds=timeout_seconds,
        records_dir=repository_root() / ".local" / "records",
    )
    # --keep-running: the services must outlive this process, so they are not tied to it.
    stack = Stack(StackConfig.from_env(clock_speed=clock_speed, supervised=not keep_running))
    click.echo(f"starting the infrastructure and the services (logs in {stack.config.log_dir})")
    with interrupt_on_sigterm():
        try:
            stack.start()
            for service, status in stack.health().items():
                click.echo(f"  {service:<9} {stack.address(service):<16} {status}")
            endpoints = stack_endpoints(stack)
            report = play(endpoints, options, echo=click.echo, broken=stack.broken)
            verdict = replay_verdict(report)
            for line in summary(report, verdict):
                click.echo(line)
            from rummy_ops.proof import write_demo_proofs  # imports the replay tool

            click.echo(write_demo_proofs(report, repository_root() / ".local" / "proofs"))
        except StackError as error:
            raise click.ClickException(str(error)) from None
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            keep_running = False
            raise SystemExit(130) from None
        finally:
            if keep_running:
                detached = stack.detach()
                pids = ", ".join(f"{name} {pid}" for name, pid in detached.items())
                brokers = (
                    " and then the brokers with `bash deploy/local/stack.sh down`"
                    if stack.owns_brokers
                    else " (the brokers were already running and are not ours to stop)"
                )
                click.echo(
                    f"still running ({pids}); stop the services with "
                    f"`kill {' '.join(str(pid) for pid in detached.values())}`{brokers}"
                )
            else:
                with shielded_from_interrupts():
                    brokers = " and the brokers" if stack.owns_brokers else ""
                    click.echo(f"stopping the services{brokers}")
                    stack.stop()
    if not succeeded(report, verdict):
        raise SystemExit(1)
