"""``rummy soak``: bots play while every kind of fault is injected in turn; then every invariant is
checked.

1. Starts its own Kafka broker and PostgreSQL server (:mod:`rummy_ops.own_brokers`: free ports,
   data in a folder of their own, never the shared 19092 / 15432) and the five services as
   processes on free ports (:func:`rummy_ops.stack.stack_for_tests`).
2. Bots play at the demo's three tables (:func:`rummy_ops.demo.play`) for at least ``--minutes``.
3. Faults, one after another (:data:`FAULTS`): SIGKILL of each service then its restart,
   SIGSTOP of Kafka for 40 s, a Kafka restart, a PostgreSQL restart. Each is injected at a
   moment when a hand is in play and a bot's command is in flight (the soak waits for one and
   reports which). *Ready* is when the restarted process answers SERVING, the stalled broker got
   SIGCONT, or the restarted server answers its round trip; *recovery* (``recovery_s``, at most
   :data:`MAX_RECOVERY_S`) is the seconds from ready until every table has had a player command
   answered OK, and ``next_hand_s`` until a hand dealt after ready has had a turn command
   answered OK (the ledger reserved its stakes, fairness committed, the dealer dealt). A service
   that exits meanwhile is a violation (and is restarted, so the soak goes on).
4. Checks (:func:`check`): balances + commission = grants; the ledger's invariants
   (``rummy_ledger.contract.invariant_violations``) and a journal summing to zero;
   every ended hand settled exactly once; no reservation held once its hand ended (after a
   grace); every hand's replay (``rummy_ops.demo.verify_demo``) clean and its result in the
   log equal to the result the operator's watch was told over gRPC, and the balances the bots'
   accounts were told over gRPC equal to the journal's; no refused command
   (``rummy_ops.bots.client.REFUSALS``) appended an event (:func:`rummy_ops.causation.caused_by`).

Exit status 1 on any violation, or when a fault's recovery took over :data:`MAX_RECOVERY_S`.
"""

from __future__ import annotations

import json
import secrets
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import click
import psycopg

from rummy.table.v1 import events_pb2 as table_events
from rummy_ledger.contract import invariant_violations, journal_sum
from rummy_ops.bots.client import HAND_COMMANDS, Bot
from rummy_ops.causation import caused_by
from rummy_ops.certs import local_certs_dir
from rummy_ops.demo import DemoOptions, DemoReport, Endpoints, play, stack_endpoints, verify_demo
from rummy_ops.money import tokens
from rummy_ops.own_brokers import OwnBrokers
from rummy_ops.replay.ledger import LEDGER_SCHEMA
from rummy_ops.replay.sources import read_kafka
from rummy_ops.stack import (
    Stack,
    StackError,
    insecure_requested,
    repository_root,
    stack_for_tests,
)
from rummy_ops.stack_command import clock_speed_option, insecure_option, tls_line
from rummy_platform.envelope import Envelope

#: The faults, in the order they are injected.
FAULTS: tuple[str, ...] = (
    "kill ledger",
    "kill fairness",
    "kill dealer",
    "kill clock",
    "kill table",
    "stall kafka",
    "restart kafka",
    "restart postgresql",
)
#: How long Kafka is SIGSTOPped (longer than the producers' request and append timeouts).
KAFKA_STALL_S = 40.0
#: The promise: play resumes within this many seconds of the process or broker being ready.
MAX_RECOVERY_S = 10.0
#: How long a fault may take to recover before the soak gives up on it (a violation).
GIVE_UP_S = 120.0
#: Seconds between one fault's recovery and the next fault.
PAUSE_S = 5.0
#: Seconds after the play stopped before a still-held reservation is a violation.
RESERVATION_GRACE_S = 60.0


@dataclass
class FaultRun:
    """One injected fault. Seconds are since the soak's play began."""

    kind: str
    in_flight: str = ""
    injected_at_s: float = 0.0
    ready_at_s: float = 0.0
    recovery_s: float | None = None
    next_hand_s: float | None = None
    note: str = ""


@dataclass
class SoakSummary:
    """What a soak did and found; ``violations`` empty means every invariant held."""

    minutes: float
    faults: list[FaultRun] = field(default_factory=list)
    hands: int = 0
    aborted_hands: int = 0
    checks: dict[str, str] = field(default_factory=dict)
    violations: list[str] = field(default_factory=list)
    state_dir: str = ""

    @property
    def max_recovery_s(self) -> float | None:
        times = [f.recovery_s for f in self.faults if f.recovery_s is not None]
        return max(times) if times else None

    def as_json(self) -> dict[str, object]:
        """One object: ``faults`` (each fault's fields), ``hands``, ``violations`` (strings),
        ``max_recovery_s`` (seconds, or null), ``checks`` (invariant -> verdict) and the rest."""
        return {
            "minutes": self.minutes,
            "faults": [asdict(f) for f in self.faults],
            "hands": self.hands,
            "aborted_hands": self.aborted_hands,
            "violations": list(self.violations),
            "max_recovery_s": self.max_recovery_s,
            "checks": dict(self.checks),
            "state_dir": self.state_dir,
        }


# -- faults ----------------------------------------------------------------------------------


class _Play:
    """The bots' play in a thread of its own, and what the soak reads of it."""

    def __init__(self, endpoints: Endpoints, options: DemoOptions) -> None:
        self.bots: dict[str, list[Bot]] = {}
        self.seated = threading.Event()
        self.over = threading.Event()
        self.report: DemoReport | None = None
        self.error: BaseException | None = None
        self.began = time.monotonic()
        self._thread = threading.Thread(
            target=self._run, args=(endpoints, options), name="soak-play", daemon=True
        )

    def start(self) -> None:
        self._thread.start()

    def _on_seated(self, bots: dict[str, list[Bot]]) -> None:
        self.bots = bots
        self.began = time.monotonic()
        self.seated.set()

    def _run(self, endpoints: Endpoints, options: DemoOptions) -> None:
        try:
            self.report = play(
                endpoints,
                options,
                echo=lambda _line: None,
                progress=False,
                broken=lambda: "the soak's time is over" if self.over.is_set() else None,
                seated=self._on_seated,
            )
        except BaseException as error:  # reported by finish()
            self.error = error
        finally:
            self.seated.set()

    def finish(self, timeout_s: float = 300.0) -> DemoReport:
        """Stop the bots and return the play's report. Raises StackError if the play failed."""
        self.over.set()
        self._thread.join(timeout_s)
        if self.report is None:
            raise StackError(f"the bots' play failed: {self.error!r}") from self.error
        return self.report

    def since(self) -> float:
        return time.monotonic() - self.began

    def in_flight(self) -> str | None:
        """``<account> <rpc> at <table>`` of a hand command in flight now, or None."""
        for table, bots in self.bots.items():
            for bot in bots:
                rpc = bot.in_flight
                if rpc in HAND_COMMANDS:
                    return f"{bot.account_id} {rpc} at {table}"
        return None

    def wait_in_flight(self, timeout_s: float = 60.0) -> str:
        """Wait for a hand command in flight (polling every millisecond); its description, or
        why none came."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            found = self.in_flight()
            if found is not None:
                return found
            time.sleep(0.001)
        return f"none within {timeout_s:.0f} s (injected anyway)"

    def resumed(self, ready: float) -> float | None:
        """The moment (monotonic) every table had a player command answered OK after
        ``ready``, if they all have."""
        moments = []
        for bots in self.bots.values():
            oks = [b.stats.last_ok for b in bots if b.stats.last_ok > ready]
            if not oks:
                return None
            moments.append(min(oks))
        return max(moments)

    def dealt(self, ready: float) -> float | None:
        """The moment (monotonic) a hand first seen after ``ready`` had a turn command answered
        OK (the ledger reserved, fairness committed, the dealer dealt), if one has."""
        moments = [
            b.stats.last_turn_ok
            for bots in self.bots.values()
            for b in bots
            if b.stats.new_hand_at > ready and b.stats.last_turn_ok > b.stats.new_hand_at
        ]
        return min(moments) if moments else None

    def wait(self, moment: Callable[[float], float | None], ready: float) -> float | None:
        """Seconds from ``ready`` to ``moment(ready)``, or None after :data:`GIVE_UP_S`."""
        deadline = ready + GIVE_UP_S
        while time.monotonic() < deadline:
            at = moment(ready)
            if at is not None:
                return at - ready
            time.sleep(0.05)
        return None


def inject(kind: str, stack: Stack, brokers: OwnBrokers, game: _Play) -> FaultRun:
    """Wait for a hand command in flight, inject ``kind`` (one of :data:`FAULTS`), restart what
    it stopped and measure the recovery."""
    run = FaultRun(kind)
    run.in_flight = game.wait_in_flight()
    run.injected_at_s = game.since()
    action, target = kind.split(" ", 1)
    if action == "kill":
        stack.kill(target)
        stack.restart(target)
    elif kind == "stall kafka":
        brokers.kafka.pause()
        time.sleep(KAFKA_STALL_S)
        brokers.kafka.resume()
    elif kind == "restart kafka":
        brokers.kafka.restart()
    elif kind == "restart postgresql":
        brokers.postgres.restart()
    else:
        raise ValueError(f"unknown fault {kind!r}")
    ready = time.monotonic()
    run.ready_at_s = ready - game.began
    run.recovery_s = game.wait(game.resumed, ready)
    run.next_hand_s = game.wait(game.dealt, ready)
    notes = []
    if run.recovery_s is None:
        notes.append(f"play had not resumed {GIVE_UP_S:.0f} s after ready")
    if run.next_hand_s is None:
        notes.append(f"no hand dealt {GIVE_UP_S:.0f} s after ready")
    broken = stack.broken()
    if broken:
        notes.append(broken)
        stack.restart(broken.split(" ", 1)[0])  # a supervisor would; the soak goes on
    run.note = "; ".join(notes)
    return run


# -- checks ----------------------------------------------------------------------------------


def _ledger(database_url: str) -> psycopg.Connection:
    return psycopg.connect(database_url, autocommit=True, options=f"-c search_path={LEDGER_SCHEMA}")


def check(
    report: DemoReport,
    endpoints: Endpoints,
    bots: Mapping[str, Sequence[Bot]],
    *,
    grace_s: float = RESERVATION_GRACE_S,
    verify: Callable[[DemoReport], tuple[bool, str]] = verify_demo,
) -> tuple[dict[str, str], list[str]]:
    """Every invariant of the module doc over the play's ``report``; returns ``(verdict per
    invariant, violations)``."""
    checks: dict[str, str] = {}
    violations: list[str] = []

    def verdict(name: str, problems: Sequence[str], ok_text: str = "OK") -> None:
        checks[name] = ok_text if not problems else f"VIOLATED ({len(problems)})"
        violations.extend(f"{name}: {p}" for p in problems[:20])

    # The commission as the house account holds it (the soak's ledger is its own): the watch
    # may not have seen the end of a hand the bots' leaving ended.
    total = sum(report.balances.values())
    commission = report.house_commission_delta
    verdict(
        "balances + commission = grants",
        ["the house commission account could not be read"]
        if commission is None
        else []
        if total + commission == report.granted_hundredths
        else [
            f"balances {tokens(total)} + commission {tokens(commission)} != granted "
            f"{tokens(report.granted_hundredths)}"
        ],
    )
    ended = {h.hand_id for h in report.ended}
    accounts = sorted(report.balances)
    with _ledger(endpoints.database_url) as conn:
        problems = invariant_violations(conn)
        verdict("ledger invariants", problems)
        total_journal = journal_sum(conn)
        verdict("journal sums to zero", [f"sum {total_journal}"] if total_journal else [])
        settled: dict[str, int] = {
            str(h): int(n)
            for h, n in conn.execute(
                "SELECT hand_id, count(*) FROM journal_transactions "
                "WHERE kind = 'settlement' GROUP BY hand_id"
            )
        }
        verdict(
            "every ended hand settled exactly once",
            [
                f"hand {h} settled {settled.get(h, 0)} times"
                for h in sorted(ended)
                if settled.get(h, 0) != 1
            ]
            + [f"hand {h} settled {n} times" for h, n in sorted(settled.items()) if n > 1],
        )
        held = _held_after_grace(conn, grace_s)
        verdict(
            "no reservation held past its hand's end",
            [f"hand {h} account {a}: {amount} held" for h, a, amount in held],
        )
        posted: dict[str, int] = {
            str(account): int(balance)
            for account, balance in conn.execute(
                "SELECT account_id, balance FROM balances WHERE account_id = ANY(%s)",
                (accounts,),
            )
        }
    ok, text = verify(report)
    checks["replay summary"] = text
    verdict("every hand's replay clean", [] if ok else [text])
    envelopes = _table_events(endpoints, report)
    verdict(
        "replay equals what the players were told",
        _told_differs(report, envelopes)
        + [
            f"{a}: told {report.balances[a]} over gRPC, the journal says {posted.get(a)}"
            for a in accounts
            if posted.get(a) != report.balances[a]
        ],
    )
    refused = [key for table in bots.values() for b in table for _rpc, key, _ in b.stats.refusals]
    appended = caused_by(envelopes, refused)
    verdict(
        "no refused request appended an event",
        [
            f"{e.payload.DESCRIPTOR.name} v{e.stream_version} caused by {e.causation_id}"
            for e in appended
        ],
        ok_text=f"OK ({len(refused)} refused requests)",
    )
    return checks, violations


def _held_after_grace(conn: psycopg.Connection, grace_s: float) -> list[tuple[str, str, int]]:
    """Reservations still held after waiting up to ``grace_s`` seconds for the last hands'
    settlements (the play has stopped: every hand has ended or is ending)."""
    deadline = time.monotonic() + grace_s
    while True:
        rows = conn.execute(
            "SELECT hand_id, account_id, amount FROM reservations WHERE state = 'held' "
            "ORDER BY hand_id"
        ).fetchall()
        if not rows or time.monotonic() > deadline:
            return [(str(h), str(a), int(n)) for h, a, n in rows]
        time.sleep(1.0)


def _table_events(endpoints: Endpoints, report: DemoReport) -> list[Envelope]:
    out: list[Envelope] = []
    for table_id in sorted(report.tables.values()):
        out += read_kafka(endpoints.kafka_bootstrap_servers, endpoints.topic_prefix, table_id)
    return out


def _told_differs(report: DemoReport, envelopes: Sequence[Envelope]) -> list[str]:
    """Hands whose HandEnded in the log differs from the result the operator's watch got."""
    logged = {
        e.payload.hand_id: e.payload
        for e in envelopes
        if isinstance(e.payload, table_events.HandEnded)
    }
    problems = []
    for hand in report.ended:
        if logged.get(hand.hand_id) != hand.result:
            problems.append(f"hand {hand.hand_id}: the log's result differs from the one told")
    return problems


# -- the run ---------------------------------------------------------------------------------


def soak(
    minutes: float,
    *,
    seed: int = 7,
    clock_speed: float = 10.0,
    state_dir: Path | None = None,
    echo: Callable[[str], None] = print,
    insecure: bool = False,
) -> SoakSummary:
    """Start everything, play for at least ``minutes`` while every fault of :data:`FAULTS` is
    injected once, stop the bots, check. The services serve gRPC over mutual TLS with the
    certificates of ``.local/certs`` (made on first use) and this process's clients present
    the ``client`` one, unless ``insecure`` or ``RUMMY_INSECURE=1`` (plaintext). Raises
    StackError when the stack cannot start."""
    state = state_dir or Path(tempfile.mkdtemp(prefix="rummy-soak-"))
    summary = SoakSummary(minutes=minutes, state_dir=str(state))
    root = repository_root()
    with OwnBrokers(state / "brokers", root) as brokers:
        echo(f"starting Kafka and PostgreSQL of the soak's own (state in {state})")
        kafka = brokers.start_kafka()
        database = brokers.start_postgres()
        prefix = f"soak-{secrets.token_hex(3)}-"
        stack = stack_for_tests(
            root,
            kafka,
            database,
            topic_prefix=prefix,
            clock_speed=clock_speed,
            log_dir=state / "logs",
            tls_dir=None if insecure or insecure_requested() else local_certs_dir(root),
        )
        stack.use_client_certificate()
        echo(f"starting the five services (logs in {state / 'logs'})")
        with stack:
            click.echo(tls_line(stack.config.tls_dir), err=True)
            endpoints = stack_endpoints(stack)
            options = DemoOptions(
                hands=1_000_000,
                seed=seed,
                turn_seconds=10,
                timeout_seconds=minutes * 60 + len(FAULTS) * (GIVE_UP_S + KAFKA_STALL_S),
                records_dir=state / "records",
            )
            game = _Play(endpoints, options)
            game.start()
            if not game.seated.wait(180) or not game.bots:
                game.finish()
            echo(f"bots seated at {len(game.bots)} tables; injecting {len(FAULTS)} faults")
            for kind in FAULTS:
                time.sleep(PAUSE_S)
                fault = inject(kind, stack, brokers, game)
                summary.faults.append(fault)
                echo(_fault_line(fault))
            left = minutes * 60 - game.since()
            if left > 0:
                echo(f"playing {left:.0f} s more")
                time.sleep(left)
            report = game.finish()
            summary.hands = len(report.ended)
            summary.aborted_hands = len(report.hands) - len(report.ended)
            echo(f"{summary.hands} hands ended; checking the invariants")
            summary.checks, summary.violations = check(report, endpoints, game.bots)
    for fault in summary.faults:
        if fault.recovery_s is None or fault.recovery_s > MAX_RECOVERY_S:
            took = "never" if fault.recovery_s is None else f"{fault.recovery_s:.1f} s"
            summary.violations.append(
                f"recovery: play resumed {took} after {fault.kind} (at most {MAX_RECOVERY_S:.0f} s)"
            )
        if fault.note:
            summary.violations.append(f"{fault.kind}: {fault.note}")
    return summary


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f} s"


def _fault_line(fault: FaultRun) -> str:
    note = f"  ({fault.note})" if fault.note else ""
    return (
        f"  {fault.kind:<19} at {fault.injected_at_s:6.1f} s  ready {fault.ready_at_s:6.1f} s  "
        f"resumed {_seconds(fault.recovery_s):>7}  next hand {_seconds(fault.next_hand_s):>7}"
        f"  in flight: {fault.in_flight}{note}"
    )


def table(summary: SoakSummary) -> list[str]:
    """The human-readable report: the faults, the hands, each invariant's verdict."""
    lines = [
        "",
        "faults (seconds since the play began; resumed: every table had a player command "
        "answered OK, next hand: a hand dealt after ready had one; both counted from ready):",
    ]
    lines += [_fault_line(f) for f in summary.faults]
    worst = summary.max_recovery_s
    lines.append(
        f"hands ended: {summary.hands} (and {summary.aborted_hands} aborted); largest recovery "
        + ("-" if worst is None else f"{worst:.1f} s")
    )
    lines.append("invariants:")
    lines += [f"  {name:<44} {verdict}" for name, verdict in summary.checks.items()]
    if summary.violations:
        lines.append(f"VIOLATIONS ({len(summary.violations)}):")
        lines += [f"  {v}" for v in summary.violations]
    else:
        lines.append("no violations")
    return lines


@click.command(name="soak")
@click.option(
    "--minutes",
    default=5.0,
    show_default=True,
    type=click.FloatRange(min=0.1),
    help="Minutes of play at least (every fault is injected once, however long that takes).",
)
@click.option("--seed", default=7, show_default=True, type=int, help="The bots' seed.")
@clock_speed_option(10.0)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON summary object only.")
@insecure_option
def soak_command(
    minutes: float, seed: int, clock_speed: float, as_json: bool, insecure: bool
) -> None:
    """Play bots at three tables on a stack of the soak's own (own Kafka and PostgreSQL on free
    ports, the five services) while each service is SIGKILLed and restarted, Kafka is SIGSTOPped
    for 40 s and restarted and PostgreSQL restarted; then check every invariant. Exit status 1
    on any violation (or a recovery over 10 s)."""
    echo: Callable[[str], None] = (lambda _line: None) if as_json else click.echo
    try:
        summary = soak(minutes, seed=seed, clock_speed=clock_speed, echo=echo, insecure=insecure)
    except StackError as error:
        raise click.ClickException(str(error)) from None
    if as_json:
        click.echo(json.dumps(summary.as_json(), sort_keys=True))
    else:
        for line in table(summary):
            click.echo(line)
    if summary.violations:
        raise SystemExit(1)
