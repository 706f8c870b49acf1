"""Playing the demo (:func:`play`) against running services: grant every bot, open the tables,
seat the bots, play until every table has ended its share of the hands, read the books."""

from __future__ import annotations

import random
import secrets
import threading
import time
from collections.abc import Callable
from typing import Any

from tqdm import tqdm

from rummy.ledger.v1 import ledger_service_pb2 as ledger_api
from rummy.ledger.v1 import ledger_service_pb2_grpc as ledger_grpc
from rummy.table.v1 import table_service_pb2 as table_api
from rummy_ops.bots.client import Bot
from rummy_ops.bots.record import PlayerRecord
from rummy_ops.bots.strategy import BotBrain, Temperament
from rummy_ops.demo.books import house_commission, settle_wait
from rummy_ops.demo.endpoints import Endpoints
from rummy_ops.demo.plans import DemoOptions, TablePlan, share, table_rule_set
from rummy_ops.demo.report import DemoReport, HandRecord, endings_of, hand_line, tokens
from rummy_ops.demo.watch import TableRun
from rummy_platform.auth import Role, TokenAuthority, bearer_metadata
from rummy_platform.limits import open_channel
from rummy_platform.table_routing import TableRouter
from rummy_rules import registry
from rummy_rules.melds import MeldOptions
from rummy_rules.variant import Variant

OPERATOR_ACCOUNT = "ops-demo"
_TOKEN_SECONDS = 6 * 3600


def temperament(index: int, rng: random.Random, mischief: float) -> Temperament:
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


class _Demo:
    """One run's clients, operator token, bots' randomness and report."""

    def __init__(self, endpoints: Endpoints, options: DemoOptions, echo: Callable[[str], None]):
        self.options, self.echo = options, echo
        self.report = DemoReport(run_id=secrets.token_hex(3), endpoints=endpoints)
        self.authority = TokenAuthority(endpoints.jwt_secret)
        self.operator = bearer_metadata(
            self.authority.issue(OPERATOR_ACCOUNT, Role.OPERATOR, _TOKEN_SECONDS)
        )
        self.router = TableRouter(endpoints.table)
        self.ledger_channel = open_channel(endpoints.ledger)
        self.ledger = ledger_grpc.LedgerServiceStub(self.ledger_channel)
        self.rng = random.Random(options.seed)
        self.rule_set = table_rule_set(options)
        self.variant: Variant[Any] = registry.lookup(
            self.rule_set.variant or registry.LEGACY_VARIANT
        )

    def open_table(
        self, plan: TablePlan, target: int, on_hand: Callable[[HandRecord], None]
    ) -> TableRun:
        """Open ``plan``'s table and grant and seat (not yet start) its bots."""
        run_id = self.report.run_id
        reply = self.router.call(
            "OpenTable",
            table_api.OpenTableRequest(
                client_request_id=f"demo-{run_id}-{plan.name}",
                name=f"{plan.name}-{run_id}",
                seat_count=plan.seats,
                point_value_hundredths=plan.point_value_hundredths,
                commission_bps=plan.commission_bps,
                rule_set=self.rule_set,
            ),
            metadata=self.operator,
            timeout=30,
        )
        self.report.tables[plan.name] = reply.table_id
        run = TableRun(
            plan,
            reply.table_id,
            target,
            self.router.stub_for(reply.table_id),
            self.operator,
            on_hand,
        )
        # the shoe of the variant's house rule set for the table's seats
        shoe = self.variant.house_rule_set(plan.seats, 0, 0).shoe
        for index in range(plan.bots):
            account = f"bot-{run_id}-{plan.name}-{index + 1}"
            self._grant(account)
            run.bots.append(
                Bot(
                    account,
                    self.authority.issue(account, Role.PLAYER, _TOKEN_SECONDS),
                    self.router,
                    reply.table_id,
                    shoe,
                    self._brain(index),
                    self._record(account),
                )
            )
        self.echo(
            f"opened {plan.name} ({plan.seats} seats, point value "
            f"{tokens(plan.point_value_hundredths)}, commission {plan.commission_bps / 100:g}%)"
            f" as {reply.table_id}; {plan.bots} bots seated, granted "
            f"{tokens(self.options.grant_hundredths)} each; {target} hands to play"
        )
        return run

    def _grant(self, account: str) -> None:
        self.ledger.Grant(
            ledger_api.GrantRequest(
                account_id=account,
                amount_hundredths=self.options.grant_hundredths,
                idempotency_key=f"demo-grant-{account}",
                memo="rummy demo",
            ),
            metadata=self.operator,
            timeout=30,
        )
        self.report.granted_hundredths += self.options.grant_hundredths

    def _brain(self, index: int) -> BotBrain:
        return BotBrain(
            seed=self.rng.getrandbits(64),
            temperament=temperament(index, self.rng, self.options.mischief),
            options=MeldOptions(jokers_only_group_is_sequence=True),
            variant=self.variant.name,
        )

    def _record(self, account: str) -> PlayerRecord | None:
        directory = self.options.records_dir
        return None if directory is None else PlayerRecord(directory / f"{account}.jsonl", account)

    def wait(self, runs: list[TableRun], deadline: float, broken: Callable[[], str | None]) -> None:
        """Until every table is done, the ``deadline`` (monotonic seconds) passes or ``broken``
        says why the play must stop (then ``report.stopped_because``)."""
        report = self.report
        while not all(run.done.is_set() for run in runs):
            if time.monotonic() > deadline:
                timeout = self.options.timeout_seconds
                report.stopped_because = f"the timeout of {timeout:.0f} s passed"
                break
            reason = broken()
            if reason:
                report.stopped_because = reason
                break
            time.sleep(0.5)
        report.finished = all(run.done.is_set() for run in runs)

    def read_books(self, runs: list[TableRun], house_before: int | None) -> None:
        """The bots' counters, their balances once settled and the house's commission moved."""
        report = self.report
        for bot in (bot for run in runs for bot in run.bots):
            report.bot_errors.extend(f"{bot.account_id}: {e}" for e in bot.stats.errors)
            report.bot_actions += bot.stats.actions
            report.stalled_turns += bot.stats.stalls
            report.refused_actions += bot.stats.refused
            if bot.stats.slowest_action_seconds > report.slowest_action_seconds:
                report.slowest_action_seconds = bot.stats.slowest_action_seconds
                report.slowest_action = bot.stats.slowest_action
        accounts = [bot.account_id for run in runs for bot in run.bots]
        settle_wait(self.ledger, self.operator, accounts, report)
        house_after = house_commission(self.ledger, self.operator)
        if house_before is not None and house_after is not None:
            report.house_commission_delta = house_after - house_before

    def close(self) -> None:
        self.router.close()
        self.ledger_channel.close()


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
    demo = _Demo(endpoints, options, echo)
    report = demo.report
    house_before = house_commission(demo.ledger, demo.operator)
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

    runs: list[TableRun] = []
    try:
        targets = share(options.hands, len(options.tables))
        for plan, target in zip(options.tables, targets, strict=True):
            runs.append(demo.open_table(plan, target, on_hand))
        bar = tqdm(total=options.hands, unit="hand", desc="hands", disable=not progress)
        for run in runs:
            run.thread.start()
            for bot in run.bots:
                bot.take_seat()
                bot.start()
        if seated is not None:
            seated({run.plan.name: run.bots for run in runs})
        demo.wait(runs, started + options.timeout_seconds, broken)
    finally:
        for run in runs:
            run.stop()
        if bar is not None:
            bar.close()
    demo.read_books(runs, house_before)
    report.wall_seconds = time.monotonic() - started
    demo.close()
    return report
