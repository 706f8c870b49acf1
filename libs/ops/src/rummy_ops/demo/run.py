"""Playing the demo (:func:`play`) against running services: grant every bot, open the tables,
seat the bots, play until every points table has ended its share of the hands and every format
table its match, read the books."""

from __future__ import annotations

import random
import secrets
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, Never

from tqdm import tqdm

from rummy.common.v1 import cards_pb2
from rummy.ledger.v1 import ledger_service_pb2 as ledger_api
from rummy.ledger.v1 import ledger_service_pb2_grpc as ledger_grpc
from rummy.table.v1 import table_service_pb2 as table_api
from rummy_game import match_payloads, upcast
from rummy_ops.bots.client import Bot
from rummy_ops.bots.record import PlayerRecord
from rummy_ops.bots.strategy import BotBrain, Temperament
from rummy_ops.demo.books import house_commission, settle_wait
from rummy_ops.demo.endpoints import Endpoints
from rummy_ops.demo.plans import DemoOptions, TablePlan, share, table_rule_set
from rummy_ops.demo.report import (
    DemoReport,
    HandRecord,
    MatchRecord,
    endings_of,
    hand_line,
    match_line,
)
from rummy_ops.demo.watch import TableRun
from rummy_ops.money import commission_text, stakes_of, tokens
from rummy_platform.auth import Role, TokenAuthority, bearer_metadata
from rummy_platform.limits import open_channel
from rummy_rules import registry
from rummy_rules.deck import Shoe
from rummy_rules.variant import Variant
from rummy_table.contract import TableRouter

OPERATOR_ACCOUNT = "ops-demo"
_TOKEN_SECONDS = 6 * 3600


def temperament(index: int, rng: random.Random, mischief: float) -> Temperament:
    """Seat 0 of each table sometimes stalls a whole hand, seat 1 sometimes blunders (plays a
    move of the variant's own its strategy did not choose: a wrong declare at Indian points),
    everyone stalls a turn now and then; ``mischief`` scales all of it (0 = well behaved)."""
    m = max(0.0, mischief)
    if index == 0:
        return Temperament(stall_hand=min(1.0, 0.15 * m), stall_turn=min(1.0, 0.05 * m))
    if index == 1:
        return Temperament(blunder=min(1.0, 0.03 * m), stall_turn=min(1.0, 0.01 * m))
    return Temperament(
        stall_turn=min(1.0, 0.01 * m),
        blunder=min(1.0, 0.003 * m),
        give_up=rng.choice([0.3, 0.5, 0.8]),
    )


def bot_shoe(variant: Variant[Any], plan: TablePlan) -> Shoe:
    """The shoe ``plan``'s bots read card indices with: the variant's house rule set's for the
    table's seats, or at a format table the shoe of the format's deals (the variant's
    ``deal_rule_set`` under the format's deal rules; the house shoe for a format without deal
    rules). Raises RuleSetError if the variant plays no such deals (the table refuses it too)."""
    house = variant.house_rule_set(plan.seats, 0, 0)
    if not plan.plays_match:
        return house.shoe
    deal_rules = match_payloads.format_from_pb(plan.match, plan.commission_bps).deal_rules
    if deal_rules is None:
        return house.shoe
    return variant.deal_rule_set(house, deal_rules).shoe


#: How long a table may take to empty after its bots were told to leave (a hand dealt
#: meanwhile ends by their leaves within a few turns' time).
LEAVE_GRACE_SECONDS = 60.0


class _Demo:
    """One run's clients, operator token, bots' randomness and report."""

    def __init__(self, endpoints: Endpoints, options: DemoOptions, echo: Callable[[str], None]):
        self.options, self.echo = options, echo
        self.report = DemoReport(run_id=secrets.token_hex(3), endpoints=endpoints)
        self.authority = TokenAuthority.of_issuer(endpoints.token_keys)
        self.operator = bearer_metadata(
            self.authority.issue(OPERATOR_ACCOUNT, Role.OPERATOR, _TOKEN_SECONDS)
        )
        self.router = TableRouter(endpoints.table)
        self.ledger_channel = open_channel(endpoints.ledger)
        self.ledger = ledger_grpc.LedgerServiceStub(self.ledger_channel)
        self.rng = random.Random(options.seed)
        self.rule_set = table_rule_set(options)
        self.variant: Variant[Any] = registry.lookup(upcast.variant_of(self.rule_set))

    def open_table(
        self,
        plan: TablePlan,
        target: int,
        on_hand: Callable[[HandRecord], None],
        on_match: Callable[[MatchRecord], None],
    ) -> TableRun:
        """Open ``plan``'s table (of its match format, if any) and grant and seat (not yet
        start) its bots."""
        # The variant named (the demo's rule set's when the plan names none): the table's hands
        # are recorded and described as that variant's.
        plan = replace(plan, variant=self._variant_of(plan).name)
        run_id = self.report.run_id
        request = table_api.OpenTableRequest(
            client_request_id=f"demo-{run_id}-{plan.name}",
            name=table_name(plan.name, run_id),
            seat_count=plan.seats,
            point_value_hundredths=plan.point_value_hundredths,
            commission_bps=plan.commission_bps,
            rule_set=self._rules_of(plan),
        )
        if plan.match is not None:
            request.match.CopyFrom(plan.match)
        reply = self.router.call("OpenTable", request, metadata=self.operator, timeout=30)
        self.report.tables[plan.name] = reply.table_id
        # One watcher account per table: the table service bounds the watches one account
        # holds at once (RUMMY_TABLE_MAX_WATCHES_PER_ACCOUNT, 8), and the demo opens more tables.
        watcher = bearer_metadata(
            self.authority.issue(f"{OPERATOR_ACCOUNT}-{plan.name}", Role.OPERATOR, _TOKEN_SECONDS)
        )
        run = TableRun(
            plan,
            reply.table_id,
            target,
            self.router.stub_for(reply.table_id),
            watcher,
            on_hand,
            on_match,
        )
        shoe = bot_shoe(self._variant_of(plan), plan)
        for index in range(plan.bots):
            account = bot_account(run_id, plan.name, index)
            self._grant(account)
            token = self.authority.issue(account, Role.PLAYER, _TOKEN_SECONDS)
            if index >= plan.bots - plan.loss_limited:
                self._limit_losses(account, token, plan.daily_loss_limit_hundredths)
            run.bots.append(
                Bot(
                    account,
                    token,
                    self.router,
                    reply.table_id,
                    shoe,
                    self._brain(index, plan),
                    self._record(account),
                    match_options=plan.match,
                )
            )
        self.echo(
            opened_line(
                plan,
                request.name,
                reply.table_id,
                [bot.account_id for bot in run.bots],
                target,
                self.options.grant_hundredths,
            )
        )
        if plan.loss_limited:
            self.echo(
                f"  {plan.loss_limited} of {plan.name}'s bots set a daily loss limit of "
                f"{tokens(plan.daily_loss_limit_hundredths)} (SetLossLimit, their own)"
            )
        return run

    def _variant_of(self, plan: TablePlan) -> Variant[Any]:
        """The variant ``plan``'s table plays: its own, else the demo's rule set's."""
        return registry.lookup(plan.variant) if plan.variant else self.variant

    def _rules_of(self, plan: TablePlan) -> cards_pb2.RuleSet:
        """``plan``'s table options: the demo's rule set, for another variant without the
        demo's variant options (that variant's house rules, the demo's seconds); the plan's own
        packed ``variant_options`` (if any) in ``other_variant``."""
        if (not plan.variant or plan.variant == self.variant.name) and (
            plan.variant_options is None
        ):
            return self.rule_set
        out = cards_pb2.RuleSet()
        out.CopyFrom(self.rule_set)
        if plan.variant and plan.variant != self.variant.name:
            out.ClearField("variant_options")
            out.variant = plan.variant
        if plan.variant_options is not None:
            out.other_variant.CopyFrom(plan.variant_options)
        return out

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

    def _limit_losses(self, account: str, token: str, amount_hundredths: int) -> None:
        """The bot sets itself a daily loss limit of ``amount_hundredths`` with its own token
        (the player's ``SetLossLimit``; a first limit applies at once)."""
        self.ledger.SetLossLimit(
            ledger_api.SetLossLimitRequest(
                period=ledger_api.LIMIT_PERIOD_DAY, amount_hundredths=amount_hundredths
            ),
            metadata=bearer_metadata(token),
            timeout=30,
        )
        self.report.loss_limits[account] = amount_hundredths

    def _brain(self, index: int, plan: TablePlan) -> BotBrain:
        return BotBrain(
            seed=self.rng.getrandbits(64),
            temperament=temperament(index, self.rng, self.options.mischief),
            variant=self._variant_of(plan).name,
            match=plan.bots_match,
        )

    def _record(self, account: str) -> PlayerRecord | None:
        directory = self.options.records_dir
        return None if directory is None else PlayerRecord(directory / f"{account}.jsonl", account)

    def wait(self, runs: list[TableRun], deadline: float, broken: Callable[[], str | None]) -> None:
        """Until every table is done, the ``deadline`` (monotonic seconds) passes or ``broken``
        says why the play must stop (then ``report.stopped_because``)."""
        report = self.report
        while not all(run.done.is_set() for run in runs):
            for run in runs:  # a table still not empty this long after its bots left: go on
                since = run.leaving_since
                if since is not None and time.monotonic() - since > LEAVE_GRACE_SECONDS:
                    run.done.set()
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
        refused = next((run.refused for run in runs if run.refused), "")
        if refused:
            report.stopped_because, report.finished = refused, False

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


def table_name(plan_name: str, run_id: str) -> str:
    """The name the demo opens ``plan_name``'s table with: ``silver-6-b6b94b``. The run's id
    keeps each run's tables apart (the names are what ``rummy tables NAME`` and ``rummy watch``
    take, and a name several tables share must be given by id)."""
    return f"{plan_name}-{run_id}"


def bot_account(run_id: str, plan_name: str, index: int) -> str:
    """The account of the bot in seat order ``index`` (from 0) at ``plan_name``'s table:
    ``bot-b6b94b-silver-6-1`` (what ``rummy hands`` and ``rummy limits`` take)."""
    return f"bot-{run_id}-{plan_name}-{index + 1}"


def opened_line(
    plan: TablePlan,
    name: str,
    table_id: str,
    accounts: Sequence[str],
    target: int,
    grant_hundredths: int,
) -> str:
    """What the demo prints on opening a table: its real name (``name``, as ``rummy tables``
    lists it) and id, its stakes, and its bots' accounts."""
    seated = ", ".join(accounts) if len(accounts) <= 2 else f"{accounts[0]} .. {accounts[-1]}"
    return (
        f"opened {name} ({plan.seats} seats, {_stakes(plan)}, commission "
        f"{commission_text(plan.commission_bps)}) as {table_id}; {len(accounts)} bots seated "
        f"({seated}), granted {tokens(grant_hundredths)} each; "
        + ("one match to play" if plan.plays_match else f"{target} hands to play")
    )


def _stakes(plan: TablePlan) -> str:
    """``point value 0.10`` at a points table; ``pool-101, entry 10.00`` at a format table
    (its stakes as :func:`rummy_ops.money.stakes_of` reads them from the format)."""
    stakes = stakes_of(plan.match, plan.commission_bps, plan.point_value_hundredths)
    if not stakes.is_match:
        return f"point value {tokens(plan.point_value_hundredths)}"
    entry = stakes.entry_fee_hundredths
    return stakes.format_name + ("" if entry is None else f", entry {tokens(entry)}")


def play(
    endpoints: Endpoints,
    options: DemoOptions,
    echo: Callable[[str], None] = print,
    progress: bool = True,
    broken: Callable[[], str | None] = lambda: None,
    seated: Callable[[dict[str, list[Bot]]], None] | None = None,
) -> DemoReport:
    """Grant, open the tables, seat the bots, play ``options.hands`` hands (shared among the
    points tables) and every format table's match to its end, check the books.

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
    bar: tqdm[Never] | None = None  # a bar over no iterable, moved by update()
    lock = threading.Lock()
    match_tables = {plan.name for plan in options.tables if plan.plays_match}

    def on_hand(record: HandRecord) -> None:
        with lock:
            report.hands.append(record)
            if progress:
                tqdm.write(hand_line(record))
            else:
                echo(hand_line(record))
            if record.result is not None:
                report.commission_hundredths += record.result.commission_hundredths
                for ending in endings_of(record.result, record.variant):
                    report.endings[ending] += 1
                if bar is not None and record.table not in match_tables:
                    bar.update(1)

    def on_match(record: MatchRecord) -> None:
        with lock:
            report.matches.append(record)
            report.commission_hundredths += record.commission_hundredths
            (tqdm.write if progress else echo)(match_line(record))

    runs: list[TableRun] = []
    try:
        points = [plan for plan in options.tables if not plan.plays_match]
        targets = dict(
            zip([p.name for p in points], share(options.hands, len(points)), strict=True)
        )
        for plan in options.tables:
            runs.append(demo.open_table(plan, targets.get(plan.name, 0), on_hand, on_match))
        total = options.hands if points else None
        bar = tqdm(total=total, unit="hand", desc="hands", disable=not progress)
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
