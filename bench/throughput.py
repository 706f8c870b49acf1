"""Throughput of the table service: N tables of bots over the public gRPC API.

Usage::

    .venv/bin/python bench/throughput.py --tables 1,4,16,64,256 --seconds 20 [--json] \
        [--watchers 10000] [--instances 2] [--driver aio|threads] [--strategy quick|variant] \
        [--game indian,500] [--tls]

Brokers (``rummy_ops.stack.brokers``): ``KAFKA_BOOTSTRAP_SERVERS`` + ``DATABASE_URL`` when both are
set (never started or stopped), otherwise ``deploy/local/stack.sh up`` (and ``down`` at the end if
this run started them).

1. The floor, before any service starts: on the same broker, a producer of its own (the services'
   producer configuration, ``KafkaEventLog.producer_config``, imported) commits one-record
   transactions one after the other for a few seconds on a topic of its own.
   ``serial_commits_per_s`` is their rate (what a design that commits one action at a time cannot
   beat); ``produce_p99_ms`` is the p99 of one such bare transaction (begin, send, wait for the
   ack, commit), ``produce_ack_p99_ms`` of its send-to-ack part alone. After a step whose
   group commits wrote to more than one partition (the median of the table's
   ``rummy_eventlog_transaction_partitions``, ``partitions_per_transaction_p50``), a second floor
   on the same producer configuration: transactions of one record on each of that many
   partitions (``span_floor_partitions``, ``span_commits_per_s``, ``span_p50_ms``,
   ``span_p99_ms``), so the step's transactions compare with a floor as wide as they are.
2. The five services start as processes on free ports (``rummy_ops.stack``: an own database
   and topic prefix, both removed at the end), ``--clock-speed`` times faster clocks, the
   operator's rate limit off (this harness opens hundreds of tables and grants every bot; the
   players keep the default limits).
3. Each step opens ``tables`` new tables of ``--seats`` seats (point value 0.10, so every hand is
   reserved and settled by the ledger), grants every bot and seats one bot per seat
   (``rummy_ops.bots``: its own token, its own ``WatchTable``, acting as soon as its view lets it;
   no stalls, no wrong declares). ``--driver aio`` (the default): the bots are tasks of one
   event loop per driver process (``rummy_ops.bots.aio.AsyncBot`` through ``AioTableRouter``,
   ``grpc.aio``); ``--driver threads``: a thread each (``rummy_ops.bots.client.Bot``, grpc's
   synchronous client, whose waiting streams wake their threads every 0.1 s). ``--strategy
   quick`` (the default): ``quick_bot.QuickIndianBot`` (beside this script), legal complete
   hands with the solver once a turn; ``variant``: the variant's own strategy, the demo's (4-6
   solver calls a turn). The bots of up to ``--tables-per-driver`` tables (64) run in
   this process; a step of more tables runs them in driver processes of that many tables each
   (this script with ``--drive``: the same bots, commanded over their standard input), whose
   CPU is counted as the driver's. After ``--warmup`` seconds it measures for ``--seconds``:
   player actions (DrawCard, DiscardCard, Play; Declare and Drop of older clients) per second
   and their latency from the client (p50/p99), hands ended per second and turn deadlines that
   fired (the table service's ``rummy_table_hands_ended`` / ``rummy_table_turn_timeouts``), CPU%
   of each service and of this
   driver (100% = one core), CPU milliseconds per action of each, RSS and threads of each service,
   and how many calls failed UNAVAILABLE or RESOURCE_EXHAUSTED. Then the bots leave.
4. ``--instances 2``: a second table-service instance (on free ports) joins the first's consumer
   group before the steps, so the two share the table partitions; the bots and the operator go
   through :class:`rummy_table.contract.TableRouter` (any instance, redirected to the
   table's owner). Each step's line also says how its tables split between the instances
   (``tables_by_instance``), and the table figures (hands, deadlines, CPU, RSS) cover both
   (``table-2`` is the second instance).
5. ``--watchers N``: at ``--watch-tables`` tables (default 16), one window as above, then a separate
   process (this script with ``--open-watches``, on grpc.aio) opens N idle ``WatchTable`` streams,
   one player account each, and a second window runs; the line reports the table service's RSS
   and threads and the change of action p99. The idle streams watch ``--quiet-tables`` (default
   16) tables of their own where nobody sits (streams that are open and carry nothing: what
   holding them costs); ``--watch-played`` makes them spectators of the played tables instead
   (every change of a table is then sent to each of its spectators: what the fan-out costs).

6. ``--game``: the games each step plays, one after the other at each table count (comma
   separated, so one run compares them): ``indian`` (the default) the house variant's points
   tables as above; any other name a game of ``rummy demo --game``
   (``rummy_ops.demo.plans.games``, e.g. ``500``): its first table's variant, format (a match to
   500 plays one match after another) and options at ``--seats`` seats, its bots the variant's
   own strategy (``--strategy quick`` is Indian's alone), their shoe the format's deals'.

7. ``--tls``: the services serve gRPC over mutual TLS only (``rummy_ops.stack``'s ``tls_dir``,
   the certificates of ``.local/certs``, made when missing), and the operator, the bots, the
   driver processes and the idle watches dial with the ``client`` certificate: a run with and a
   run without give what TLS costs an action (CPU ms/action of each service and of the driver).

``--json`` prints one JSON object per step on stdout (the text report goes to stderr); keys:
``tables``, ``game``, ``actions_per_s``, ``p50_ms``, ``p99_ms``, ``unavailable``,
``resource_exhausted``, ``other_errors`` and ``errors_by_rpc`` (calls not OK, by status and by
"RPC status"), ``seed_p50_ms`` / ``seed_p99_ms`` (ContributeSeed calls, answered OK or not),
``driver``, ``strategy`` and ``tls``, ``deadlines_fired``, ``hands_per_s``,
``serial_commits_per_s``, ``produce_p99_ms``, ``transactions_per_s``,
``commands_per_transaction`` and ``events_per_transaction`` (the table service's group-commit
transactions), ``cpu_percent``,
``cpu_ms_per_action``, ``rss_mib``, ``threads`` (per service and ``driver``, and ``broker`` when
``--broker-pid`` names the Kafka broker's process), ``driver_processes``,
and for the watcher step ``watchers``, ``watches_open`` and ``p99_ms_without_watchers``.

The machine is shared: absolute figures drift from run to run; compare ratios within one run.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import subprocess
import sys
import threading
import time
import urllib.request
import uuid
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

import grpc
import psycopg
from kafka import KafkaAdminClient, KafkaProducer
from prometheus_client.parser import text_string_to_metric_families
from psycopg import sql

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "support"))
sys.path.insert(0, str(ROOT / "libs" / "platform" / "bench"))

from produce_latency import small_event  # noqa: E402
from quick_bot import QuickIndianBot  # noqa: E402

from rummy.table.v1 import table_service_pb2 as api  # noqa: E402
from rummy.table.v1 import table_service_pb2_grpc as api_grpc  # noqa: E402
from rummy_ops.bots.aio import AioTableRouter, AsyncBot  # noqa: E402
from rummy_ops.bots.client import Bot  # noqa: E402
from rummy_ops.bots.strategy import BotBrain, Temperament  # noqa: E402
from rummy_ops.certs import local_certs_dir  # noqa: E402
from rummy_ops.demo.plans import TablePlan, games  # noqa: E402
from rummy_ops.demo.run import bot_shoe  # noqa: E402
from rummy_ops.stack import Stack, brokers, stack_for_tests  # noqa: E402
from rummy_platform.auth import Role, TokenAuthority, bearer_metadata  # noqa: E402
from rummy_platform.config import SIGNING_KEY_VARIABLE, rate_limit_variable  # noqa: E402
from rummy_platform.envelope import encode  # noqa: E402
from rummy_platform.eventlog import KafkaEventLog  # noqa: E402
from rummy_platform.eventlog.kafka_client import connection_config  # noqa: E402
from rummy_platform.tls import dial, dial_aio  # noqa: E402
from rummy_platform.token_keys import read_signing_key  # noqa: E402
from rummy_platform.topics import TopicSpec  # noqa: E402
from rummy_rules import registry  # noqa: E402
from rummy_rules.deck import Shoe  # noqa: E402
from rummy_rules.indian.bot import IndianBot  # noqa: E402
from rummy_table.contract import TableRouter  # noqa: E402
from rummy_testing.players import SHOES, Operator, rule_set  # noqa: E402
from rummy_testing.processes import ExtraService  # noqa: E402
from rummy_testing.service_process import drop_database  # noqa: E402

BotT = TypeVar("BotT", bound=Bot)
ACTIONS = frozenset({"DrawCard", "DiscardCard", "Declare", "Drop", "Play"})
COUNTED_CODES = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.RESOURCE_EXHAUSTED)
SERVICES = ("table", "dealer", "ledger", "fairness", "clock")
TICKS = os.sysconf("SC_CLK_TCK")
#: ``--game``'s name for the house variant's points tables (the benchmark's first game).
POINTS_GAME = "indian"


def game_plan(game: str, seats: int) -> TablePlan | None:
    """The table a step of ``game`` opens (``--game``): None for :data:`POINTS_GAME`; else the
    first table of that ``rummy demo`` game at ``seats`` seats, every seat a bot. Raises
    SystemExit for a game no installed variant declares."""
    if game == POINTS_GAME:
        return None
    known = games()
    if game not in known:
        raise SystemExit(f"--game {game!r}: not {POINTS_GAME} or one of {', '.join(known)}")
    return replace(known[game][0], seats=seats, players=None)


def game_shoe(game: str, seats: int) -> Shoe:
    """The shoe the bots of ``game`` at ``seats`` seats read card indices with."""
    plan = game_plan(game, seats)
    if plan is None:
        return SHOES[seats]
    return bot_shoe(registry.lookup(plan.variant or registry.LEGACY_VARIANT), plan)


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def percentile(values: Sequence[float], q: float) -> float:
    """The q-quantile (0..1) by nearest rank; 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered)) - 1))]


# -- the floor: serial one-record transactions on the same broker --------------------------------


@dataclass(frozen=True)
class Floor:
    serial_commits_per_s: float
    produce_p99_ms: float
    produce_p50_ms: float
    produce_ack_p99_ms: float
    #: The partitions each of its transactions wrote one record to.
    partitions: int = 1


def measure_floor(bootstrap: str, seconds: float, partitions: int = 1) -> Floor:
    """Transactions one after the other for ``seconds`` (after 20 unmeasured ones), each writing
    one record to each of ``partitions`` partitions (waiting for every ack, then committing),
    through a producer with the services' own configuration (``KafkaEventLog.producer_config``,
    imported, so the floor and the table's writer differ only in what they send), on a fresh
    topic of that many partitions (deleted afterwards). ``partitions`` > 1: the floor of a
    transaction as wide as the table's group commits (``rummy_eventlog_transaction_partitions``).
    On a secured broker it connects as the process's principal (``use_kafka_security``), which
    must be allowed the topic and the transactional id (``bench-``): the broker's own super user
    is."""
    topic = f"bench-throughput-floor-{uuid.uuid4().hex[:8]}"
    with KafkaEventLog(bootstrap, client_id="throughput-bench") as log:
        log.ensure_topics([TopicSpec(topic, partitions=partitions)])
        config = log.producer_config()
    value = encode(small_event(f"table-{uuid.uuid4()}", 1))
    producer = KafkaProducer(**config, transactional_id=f"bench-floor-{uuid.uuid4()}")
    whole: list[float] = []
    acked: list[float] = []
    try:
        producer.init_transactions()

        def one() -> tuple[float, float]:
            started = time.perf_counter()
            producer.begin_transaction()
            sent = [
                producer.send(topic, key=b"floor", value=value, partition=p)
                for p in range(partitions)
            ]
            for future in sent:
                future.get(timeout=30)
            ack = time.perf_counter()
            producer.commit_transaction()
            return ack - started, time.perf_counter() - started

        for _ in range(20):
            one()
        began = time.perf_counter()
        while time.perf_counter() - began < seconds:
            ack_s, whole_s = one()
            acked.append(ack_s * 1000)
            whole.append(whole_s * 1000)
        elapsed = time.perf_counter() - began
    finally:
        producer.close(timeout=10)
        admin = KafkaAdminClient(**connection_config(bootstrap, "throughput-bench"))
        try:
            admin.delete_topics([topic])
        finally:
            admin.close()
    return Floor(
        serial_commits_per_s=len(whole) / elapsed,
        produce_p99_ms=percentile(whole, 0.99),
        produce_p50_ms=percentile(whole, 0.5),
        produce_ack_p99_ms=percentile(acked, 0.99),
        partitions=partitions,
    )


def span_floor(
    row: dict[str, Any], bootstrap: str, seconds: float, measured: dict[int, Floor]
) -> dict[str, Any]:
    """``row`` with the floor of one transaction as wide as the step's median group commit
    (``span_*``: measured once per width, after the step's bots left, kept in ``measured``);
    unchanged when that median is one partition (the first floor is that one)."""
    width = row["partitions_per_transaction_p50"]
    if width <= 1:
        return row
    if width not in measured:
        measured[width] = measure_floor(bootstrap, seconds, width)
    floor = measured[width]
    return {
        **row,
        "span_floor_partitions": width,
        "span_commits_per_s": round(floor.serial_commits_per_s, 1),
        "span_p50_ms": round(floor.produce_p50_ms, 2),
        "span_p99_ms": round(floor.produce_p99_ms, 2),
    }


# -- what the client sees: every unary call's latency and status ---------------------------------


@dataclass(frozen=True)
class Call:
    at: float  # time.monotonic() when it ended
    method: str
    seconds: float
    code: grpc.StatusCode


class CallRecorder(grpc.UnaryUnaryClientInterceptor):
    """Records every unary call made through the channels it intercepts (thread-safe); its
    :attr:`aio` intercepts ``grpc.aio`` channels into the same record."""

    def __init__(self) -> None:
        self.calls: list[Call] = []
        self._lock = threading.Lock()
        self.aio = _AioCallRecorder(self)

    def intercept_unary_unary(
        self, continuation: Callable[[Any, Any], Any], client_call_details: Any, request: Any
    ) -> Any:
        started = time.monotonic()
        outcome = continuation(client_call_details, request)
        self.note(client_call_details.method, started, outcome.code())
        return outcome

    def note(self, method: str | bytes, started: float, code: grpc.StatusCode) -> None:
        """One call of ``method`` (its full path) that began at ``started`` (``time.monotonic()``)
        ended now with ``code``."""
        ended = time.monotonic()
        name = (method.decode() if isinstance(method, bytes) else method).rsplit("/", 1)[-1]
        with self._lock:
            self.calls.append(Call(ended, name, ended - started, code))

    def window(self, since: float, until: float) -> list[Call]:
        with self._lock:
            return [c for c in self.calls if since <= c.at < until]


class _AioCallRecorder(grpc.aio.UnaryUnaryClientInterceptor):
    """:class:`CallRecorder` for ``grpc.aio`` channels: each call noted once it has ended."""

    def __init__(self, into: CallRecorder) -> None:
        self._into = into

    async def intercept_unary_unary(
        self, continuation: Callable[[Any, Any], Any], client_call_details: Any, request: Any
    ) -> Any:
        started = time.monotonic()
        call = await continuation(client_call_details, request)
        self._into.note(client_call_details.method, started, await call.code())
        return call


# -- the services' processes -----------------------------------------------------------------


@dataclass(frozen=True)
class ProcessSample:
    cpu_s: float
    rss_mib: float
    threads: int


def sample_process(pid: int) -> ProcessSample:
    """CPU seconds (user + system), resident memory and thread count of ``pid`` from /proc."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    cpu_s = (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime
    rss_kib, threads = 0, 0
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss_kib = int(line.split()[1])
            elif line.startswith("Threads:"):
                threads = int(line.split()[1])
    return ProcessSample(cpu_s, rss_kib / 1024, threads)


#: The histogram whose buckets :func:`scrape` also returns (partitions per group commit).
PARTITIONS_HISTOGRAM = "rummy_eventlog_transaction_partitions"


def scrape(port: int, names: Sequence[str]) -> tuple[dict[str, float], dict[float, float]]:
    """From one read of ``127.0.0.1:<port>/metrics``: the sum over labels of each counter
    ``names`` (a name ending in ``_count`` or ``_sum``: that sample of a histogram), and the
    buckets of :data:`PARTITIONS_HISTOGRAM` (upper bound ``le`` -> transactions that wrote to at
    most that many partitions)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as reply:
        text = reply.read().decode()
    out = dict.fromkeys(names, 0.0)
    buckets: dict[float, float] = {}
    for family in text_string_to_metric_families(text):
        if family.name in out:
            out[family.name] += sum(s.value for s in family.samples if s.name.endswith("_total"))
        for sample in family.samples:
            if sample.name in out and sample.name != family.name:
                out[sample.name] += sample.value
            elif family.name == PARTITIONS_HISTOGRAM and sample.name.endswith("_bucket"):
                buckets[float(sample.labels["le"])] = sample.value
    return out, buckets


@contextlib.contextmanager
def services(
    kafka: str, database: str, run: str, clock_speed: float, tls: bool = False
) -> Iterator[Stack]:
    """The five services on free ports, on an own database and topic prefix (removed after);
    ``tls``: their gRPC over mutual TLS (the certificates of ``.local/certs``, made when missing),
    and every client of this process and of its driver processes dialing with the ``client``
    certificate (the environment's ``RUMMY_TLS_*``)."""
    os.environ.setdefault(rate_limit_variable("operator"), "off")  # the harness's own calls
    name = f"rummy_throughput_{run}"
    with psycopg.connect(database, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    prefix = f"throughput-{run}-"
    stack = stack_for_tests(
        ROOT,
        kafka,
        database.rsplit("/", 1)[0] + f"/{name}",
        topic_prefix=prefix,
        clock_speed=clock_speed,
        log_dir=ROOT / ".local" / "logs" / f"throughput-{run}",
        tls_dir=local_certs_dir(ROOT) if tls else None,
    )
    try:
        with stack:
            stack.use_client_certificate()
            yield stack
    finally:
        drop_database(database, name)
        admin_client = KafkaAdminClient(bootstrap_servers=kafka.split(","))
        try:
            mine = [t for t in admin_client.list_topics() if t.startswith(prefix)]
            if mine:
                admin_client.delete_topics(mine)
        finally:
            admin_client.close()


# -- one step: tables of bots ----------------------------------------------------------------


@dataclass
class Options:
    seats: int
    seconds: float
    warmup: float
    turn_seconds: int
    floor: Floor
    #: How each driver process runs its bots: ``aio`` (one event loop, a task per bot) or
    #: ``threads`` (a thread per bot, grpc's synchronous client).
    driver: str = "aio"
    #: The bots' strategy: ``quick`` (:class:`QuickIndianBot`) or ``variant`` (the variant's own).
    strategy: str = "quick"
    #: The Kafka broker's process, when given: its CPU is reported as ``broker``.
    broker_pid: int | None = None
    #: The game the step's tables play (``--game``: :data:`POINTS_GAME` or a demo game's name).
    game: str = POINTS_GAME
    #: Whether every gRPC call of the run goes over mutual TLS (``--tls``).
    tls: bool = False


@dataclass(frozen=True)
class Seat:
    """One bot to seat: its table, account, player token and brain seed."""

    table_id: str
    account: str
    token: str
    seed: int


class Bots:
    """Bots of some tables driven by this process: one table router (own channels) per table,
    one bot (own ``WatchTable`` stream) per seat, every unary call recorded. ``addresses``: the
    table-service instances. ``driver`` ``aio``: :attr:`bot_class` (:class:`AsyncBot`) tasks on
    one event loop (in a thread of its own) through :class:`AioTableRouter`; ``threads``: a
    :class:`Bot` thread per seat through :class:`TableRouter`. ``strategy``, ``game``: see
    :class:`Options`."""

    #: The bots of ``driver`` ``aio`` (a subclass plays the same way with more measured).
    bot_class: type[AsyncBot] = AsyncBot

    def __init__(
        self,
        addresses: Sequence[str],
        seats: int,
        driver: str = "aio",
        strategy: str = "quick",
        game: str = POINTS_GAME,
    ) -> None:
        self.addresses = list(addresses)
        self.shoe = game_shoe(game, seats)
        plan = game_plan(game, seats)
        self.variant = registry.LEGACY_VARIANT if plan is None else plan.variant
        self.match = None if plan is None else plan.match
        self.strategy = strategy
        self.recorder = CallRecorder()
        self.bots: list[Bot] = []
        self.routers: dict[str, TableRouter] = {}
        self._noted: list[int] = []
        self._cpu_mark = 0.0
        self.loop: asyncio.AbstractEventLoop | None = None
        if driver == "aio":
            self.loop = asyncio.new_event_loop()
            threading.Thread(target=self.loop.run_forever, name="bots", daemon=True).start()

    def _brain(self, seed: int) -> BotBrain:
        return BotBrain(
            seed=seed,
            temperament=Temperament(),
            variant=self.variant,
            strategy=IndianBot(QuickIndianBot()) if self.strategy == "quick" else None,
        )

    def _router(self, table_id: str) -> TableRouter:
        router = self.routers.get(table_id)
        if router is None:
            if self.loop is not None:
                router = AioTableRouter(
                    self.addresses,
                    channel=lambda a: dial_aio(a, interceptors=[self.recorder.aio]),
                )
            else:
                router = TableRouter(
                    self.addresses,
                    channel=lambda a: grpc.intercept_channel(dial(a, ()), self.recorder),
                )
            self.routers[table_id] = router
        return router

    def _on_loop(self, work: Any) -> Any:
        assert self.loop is not None
        return asyncio.run_coroutine_threadsafe(work, self.loop).result()

    def seat(self, plan: Sequence[Seat]) -> None:
        """Make the bots of ``plan``, take their seats (16 at a time) and start them."""
        if self.loop is not None:
            self._on_loop(self._seat_on_loop(plan))
            return
        bots = self._make(Bot, plan)
        with ThreadPoolExecutor(16) as pool:
            list(pool.map(lambda bot: bot.take_seat(), bots))
        for bot in bots:
            bot.start()

    def _make(self, kind: type[BotT], plan: Sequence[Seat]) -> list[BotT]:
        """A bot of class ``kind`` for each seat of ``plan``, kept in :attr:`bots`."""
        bots = [
            kind(
                e.account,
                e.token,
                self._router(e.table_id),
                e.table_id,
                self.shoe,
                self._brain(e.seed),
                match_options=self.match,
            )
            for e in plan
        ]
        self.bots.extend(bots)
        return bots

    async def _seat_on_loop(self, plan: Sequence[Seat]) -> None:
        bots = self._make(self.bot_class, plan)
        gate = asyncio.Semaphore(16)

        async def sit(bot: AsyncBot) -> None:
            async with gate:
                await bot.take_seat()

        await asyncio.gather(*(sit(bot) for bot in bots))
        for bot in bots:
            bot.start()

    def mark(self) -> None:
        """Start a measured window: this process's CPU and the bots' error notes so far."""
        self._noted = [len(bot.stats.errors) for bot in self.bots]
        self._cpu_mark = time.process_time()

    def window(self, since: float, until: float) -> dict[str, Any]:
        """What the bots saw between ``since`` and ``until`` (``time.monotonic()``, the same
        clock in every process of the machine): the latency (ms) of every player action
        answered OK, every unary call's status, the broken watch streams by status (from the
        bots' notes since :meth:`mark`), this process's CPU seconds since :meth:`mark` and
        each table's owner as its router learned it."""
        cpu_s = time.process_time() - self._cpu_mark
        calls = self.recorder.window(since, until)
        watch_errors = Counter(
            code.name
            for bot, start in zip(self.bots, self._noted, strict=True)
            for error in bot.stats.errors[start:]
            for code in COUNTED_CODES
            if error.startswith(f"watch: {code.name}")
        )
        return {
            "latencies_ms": [
                c.seconds * 1000
                for c in calls
                if c.method in ACTIONS and c.code == grpc.StatusCode.OK
            ],
            "seed_latencies_ms": [c.seconds * 1000 for c in calls if c.method == "ContributeSeed"],
            "codes": dict(Counter(c.code.name for c in calls)),
            "errors_by_rpc": dict(
                Counter(f"{c.method} {c.code.name}" for c in calls if c.code != grpc.StatusCode.OK)
            ),
            "watch_errors": dict(watch_errors),
            "bot_notes": [
                note
                for bot, start in zip(self.bots, self._noted, strict=True)
                for note in bot.stats.errors[start:]
            ][:5],
            "cpu_s": cpu_s,
            "owners": {t: r.address_for(t) for t, r in self.routers.items()},
        }

    def command(self, message: Mapping[str, Any]) -> Any:
        """Answer a driver-process command other than seat, mark, window and close (none
        here: a subclass adds its own). Raises ValueError."""
        raise ValueError(f"unknown driver command {message.get('cmd')!r}")

    def close(self) -> None:
        """Every bot leaves its table; the channels close."""
        if self.loop is not None:
            self._on_loop(self._close_on_loop())
            self.loop.call_soon_threadsafe(self.loop.stop)
            return
        with ThreadPoolExecutor(16) as pool:
            list(pool.map(lambda bot: bot.stop(leave=True), self.bots))
        for router in self.routers.values():
            router.close()

    async def _close_on_loop(self) -> None:
        gate = asyncio.Semaphore(16)

        async def leave(bot: AsyncBot) -> None:
            async with gate:
                await bot.stop(leave=True)

        await asyncio.gather(*(leave(bot) for bot in self.bots if isinstance(bot, AsyncBot)))
        for router in self.routers.values():
            if isinstance(router, AioTableRouter):
                await router.close()


class DriverProcess:
    """:class:`Bots` in a process of their own (``script`` with ``--drive``, default this one),
    commanded by JSON lines on its standard input and answering on its standard output: the same
    methods; ``setup``: more of the first message, for ``script``'s own :func:`drive` factory."""

    def __init__(
        self,
        addresses: Sequence[str],
        seats: int,
        driver: str = "aio",
        strategy: str = "quick",
        game: str = POINTS_GAME,
        *,
        script: str = __file__,
        setup: Mapping[str, Any] | None = None,
    ) -> None:
        self.process = subprocess.Popen(
            [sys.executable, script, "--drive"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self._send(
            {
                "addresses": list(addresses),
                "seats": seats,
                "driver": driver,
                "strategy": strategy,
                "game": game,
                **(setup or {}),
            }
        )

    def _send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()

    def _answer(self) -> Any:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"bot driver process {self.process.pid} ended")
        return json.loads(line)

    def seat(self, plan: Sequence[Seat]) -> None:
        self._send({"cmd": "seat", "plan": [list(vars(entry).values()) for entry in plan]})

    def seated(self) -> None:
        """Wait until the bots of :meth:`seat` are seated and playing."""
        self._answer()

    def mark(self) -> None:
        self._send({"cmd": "mark"})
        self._answer()

    def window(self, since: float, until: float) -> dict[str, Any]:
        self._send({"cmd": "window", "since": since, "until": until})
        answer: dict[str, Any] = self._answer()
        return answer

    def ask(self, message: Mapping[str, Any]) -> Any:
        """Send ``message`` (a command of :meth:`Bots.command`) and return its answer."""
        self._send(dict(message))
        return self._answer()

    def close(self) -> None:
        try:
            self._send({"cmd": "close"})
            self._answer()
        finally:
            if self.process.stdin is not None:
                self.process.stdin.close()
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def _bots_of(setup: Mapping[str, Any]) -> Bots:
    return Bots(
        setup["addresses"], setup["seats"], setup["driver"], setup["strategy"], setup["game"]
    )


def drive(make: Callable[[Mapping[str, Any]], Bots] = _bots_of) -> None:
    """(The ``--drive`` process.) Serve :class:`DriverProcess`'s commands with the bots ``make``
    builds from its first message (default :class:`Bots`); answers go to the original standard
    output, anything else printed goes to stderr."""
    answers = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    bots = make(json.loads(sys.stdin.readline()))

    def answer(message: Any) -> None:
        answers.write(json.dumps(message) + "\n")
        answers.flush()

    for line in sys.stdin:
        command = json.loads(line)
        if command["cmd"] == "seat":
            bots.seat([Seat(*entry) for entry in command["plan"]])
            answer({"seated": len(bots.bots)})
        elif command["cmd"] == "mark":
            bots.mark()
            answer({"ok": True})
        elif command["cmd"] == "window":
            answer(bots.window(command["since"], command["until"]))
        elif command["cmd"] == "close":
            bots.close()
            answer({"ok": True})
            return
        else:
            answer(bots.command(command))


@dataclass
class Step:
    """``tables`` tables with a bot in every seat, playing from :meth:`open` to :meth:`close`.

    The bots run in this process up to ``tables_per_driver`` tables; beyond, in processes of
    ``tables_per_driver`` tables each (:class:`DriverProcess`), so that no Python process
    carries more than that many tables' bots and streams (with ``--driver threads``, at 256
    tables in one process, the 1,024 bot threads cost 13.9 ms of CPU per action against 2.4-2.8
    at 64)."""

    stack: Stack
    operator: Operator
    authority: TokenAuthority
    tables: int
    options: Options
    rng: random.Random
    table_ids: list[str] = field(default_factory=list)
    groups: list[Bots | DriverProcess] = field(default_factory=list)
    #: The other table-service instances (``--instances``).
    extra: list[ExtraService] = field(default_factory=list)
    tables_per_driver: int = 64
    #: Each table's owner, as the bots' routers last learned it.
    owners: dict[str, str] = field(default_factory=dict)

    def _addresses(self) -> list[str]:
        return [self.stack.address("table"), *(e.address for e in self.extra)]

    def _tables(self) -> dict[str, tuple[int, int]]:
        """Each table-service process: name -> (pid, metrics port)."""
        found = {"table": (self.stack.pids["table"], self.stack.config.ports["table"][1])}
        for n, extra in enumerate(self.extra, start=2):
            assert extra.process is not None
            found[f"table-{n}"] = (extra.process.pid, extra.metrics_port)
        return found

    def open(self) -> None:
        run = uuid.uuid4().hex[:6]
        rules = rule_set(
            turn_seconds=self.options.turn_seconds, seed_window_seconds=1, start_delay_seconds=1
        )
        point_value, commission, match = 10, 500, None
        game = game_plan(self.options.game, self.options.seats)
        if game is not None:  # a demo game's table: its variant, options and format
            rules.variant = game.variant
            if game.variant_options is not None:
                rules.other_variant.CopyFrom(game.variant_options)
            point_value, commission, match = (
                game.point_value_hundredths,
                game.commission_bps,
                game.match,
            )
        plan: list[Seat] = []
        for t in range(self.tables):
            table_id = self.operator.open_table(
                self.options.seats, point_value, commission, rules, match
            )
            self.table_ids.append(table_id)
            for s in range(self.options.seats):
                account = f"bench-{run}-{t}-{s}"
                self.operator.grant(account, 1_000_000)
                token = self.authority.issue(account, Role.PLAYER, 6 * 3600)
                plan.append(Seat(table_id, account, token, self.rng.getrandbits(64)))
        per_group = max(1, self.tables_per_driver) * self.options.seats
        chunks = [plan[i : i + per_group] for i in range(0, len(plan), per_group)]
        if len(chunks) == 1:
            local = Bots(
                self._addresses(),
                self.options.seats,
                self.options.driver,
                self.options.strategy,
                self.options.game,
            )
            self.groups.append(local)
            local.seat(chunks[0])
            return
        remote = [
            DriverProcess(
                self._addresses(),
                self.options.seats,
                self.options.driver,
                self.options.strategy,
                self.options.game,
            )
            for _ in chunks
        ]
        self.groups.extend(remote)
        for process, chunk in zip(remote, chunks, strict=True):
            process.seat(chunk)
        for process in remote:
            process.seated()

    def measure(self, seconds: float) -> dict[str, Any]:
        """Play ``seconds`` more and report that window."""
        tables = self._tables()
        pids = {**self.stack.pids, **{name: pid for name, (pid, _) in tables.items()}}
        names = [*SERVICES, *(n for n in tables if n != "table")]
        if self.options.broker_pid is not None:
            pids["broker"] = self.options.broker_pid
            names.append("broker")
        counters = (
            "rummy_table_hands_ended",
            "rummy_table_turn_timeouts",
            "rummy_eventlog_transaction_appends_count",
            "rummy_eventlog_transaction_appends_sum",
            "rummy_eventlog_transaction_events_sum",
        )
        before = {s: sample_process(pids[s]) for s in names}
        for group in self.groups:
            group.mark()
        driver_before = time.process_time()
        ports = [port for _, port in tables.values()]
        metrics_before, widths_before = _scrape_all(ports, counters)
        since = time.monotonic()
        time.sleep(seconds)
        until = time.monotonic()
        # The CPU figures first, at the window's end: a scrape or a driver's answer can take
        # seconds when the box is saturated, and that time is not in ``wall``.
        driver_cpu = time.process_time() - driver_before
        after = {s: sample_process(pids[s]) for s in names}
        seen = [group.window(since, until) for group in self.groups]
        metrics_after, widths_after = _scrape_all(ports, counters)
        wall = until - since
        latencies = [ms for g in seen for ms in g["latencies_ms"]]
        seeds = [ms for g in seen for ms in g["seed_latencies_ms"]]
        codes: Counter[str] = Counter()
        by_rpc: Counter[str] = Counter()
        watch_errors: Counter[str] = Counter()
        for g in seen:
            codes.update(g["codes"])
            by_rpc.update(g["errors_by_rpc"])
            watch_errors.update(g["watch_errors"])
            self.owners.update(g["owners"])
        cpu = {s: after[s].cpu_s - before[s].cpu_s for s in names}
        # This process (the operator, the in-process bots) and the driver processes, if any.
        cpu["driver"] = driver_cpu + sum(
            g["cpu_s"]
            for g, group in zip(seen, self.groups, strict=True)
            if isinstance(group, DriverProcess)
        )
        n = max(1, len(latencies))
        floor = self.options.floor
        counted = {code.name for code in (grpc.StatusCode.OK, *COUNTED_CODES)}
        return {
            "tables": self.tables,
            "game": self.options.game,
            "seats": self.options.seats,
            "driver": self.options.driver,
            "strategy": self.options.strategy,
            "tls": self.options.tls,
            "seconds": round(wall, 2),
            "actions": len(latencies),
            "actions_per_s": round(len(latencies) / wall, 1),
            "p50_ms": round(percentile(latencies, 0.5), 1),
            "p99_ms": round(percentile(latencies, 0.99), 1),
            "seed_p50_ms": round(percentile(seeds, 0.5), 1),
            "seed_p99_ms": round(percentile(seeds, 0.99), 1),
            "hands_per_s": round(
                (metrics_after[counters[0]] - metrics_before[counters[0]]) / wall, 2
            ),
            "deadlines_fired": int(metrics_after[counters[1]] - metrics_before[counters[1]]),
            **_per_transaction(metrics_before, metrics_after, counters[2:], wall),
            "partitions_per_transaction_p50": _median_bucket(widths_before, widths_after),
            "unavailable": codes["UNAVAILABLE"] + watch_errors["UNAVAILABLE"],
            "resource_exhausted": codes["RESOURCE_EXHAUSTED"] + watch_errors["RESOURCE_EXHAUSTED"],
            "other_errors": {k: v for k, v in codes.items() if k not in counted},
            "errors_by_rpc": dict(by_rpc),
            "bot_notes": [note for g in seen for note in g["bot_notes"]][:5],
            "cpu_percent": {k: round(100 * v / wall, 1) for k, v in cpu.items()},
            "cpu_ms_per_action": {k: round(1000 * v / n, 2) for k, v in cpu.items()},
            "rss_mib": {s: round(after[s].rss_mib, 1) for s in names},
            "threads": {s: after[s].threads for s in names},
            "instances": len(tables),
            "tables_by_instance": self.split(),
            "driver_processes": sum(isinstance(g, DriverProcess) for g in self.groups) or 1,
            "serial_commits_per_s": round(floor.serial_commits_per_s, 1),
            "produce_p99_ms": round(floor.produce_p99_ms, 2),
            "produce_ack_p99_ms": round(floor.produce_ack_p99_ms, 2),
        }

    def close(self) -> None:
        for group in self.groups:
            group.close()

    def split(self) -> dict[str, int]:
        """How many of the step's tables each instance serves (as the bots' routers learned)."""
        names = {self.stack.address("table"): "table"}
        names.update({e.address: f"table-{n}" for n, e in enumerate(self.extra, start=2)})
        owners = Counter(names.get(self.owners.get(t, ""), "?") for t in self.table_ids)
        return dict(sorted(owners.items()))


def _per_transaction(
    before: Mapping[str, float], after: Mapping[str, float], names: Sequence[str], wall: float
) -> dict[str, float]:
    """Group-commit transactions/s and the commands and events one carried on average, from
    the table service's ``rummy_eventlog_transaction_*`` histograms (``names``: the count of
    transactions, the sum of commands, the sum of events)."""
    transactions, commands, events = (after[n] - before[n] for n in names)
    carried = max(1.0, transactions)
    return {
        "transactions_per_s": round(transactions / wall, 1),
        "commands_per_transaction": round(commands / carried, 2),
        "events_per_transaction": round(events / carried, 2),
    }


def _median_bucket(before: Mapping[float, float], after: Mapping[float, float]) -> int:
    """The median partitions per transaction between two readings of the partitions
    histogram's buckets (:func:`_scrape_all`): the smallest bucket bound holding half the
    transactions (exact up to 16, ``PARTITION_BUCKETS``), 1 when none committed."""
    counts = {le: after[le] - before.get(le, 0.0) for le in sorted(after)}
    total = counts.get(float("inf"), 0.0)
    for le, count in counts.items():
        if total > 0 and count >= total / 2 and le != float("inf"):
            return int(le)
    return 1


def _scrape_all(
    ports: Sequence[int], names: Sequence[str]
) -> tuple[dict[str, float], dict[float, float]]:
    """:func:`scrape`'s two readings summed over the table-service instances on ``ports``."""
    total = dict.fromkeys(names, 0.0)
    buckets: dict[float, float] = {}
    for port in ports:
        counters, widths = scrape(port, names)
        for name, value in counters.items():
            total[name] += value
        for le, value in widths.items():
            buckets[le] = buckets.get(le, 0.0) + value
    return total, buckets


def report(row: dict[str, Any], as_json: bool) -> None:
    cpu = " ".join(f"{k} {v:g}%" for k, v in row["cpu_percent"].items())
    per_action = " ".join(f"{k} {v:g}" for k, v in row["cpu_ms_per_action"].items())
    memory = " ".join(f"{s} {row['rss_mib'][s]:g} MiB/{row['threads'][s]}t" for s in row["rss_mib"])
    watchers = (
        f"  watchers {row['watchers']} ({row['watches_open']} open, on the "
        f"{row['watched_tables']} tables), p99 without them "
        f"{row['p99_ms_without_watchers']:g} ms"
        if "watchers" in row
        else ""
    )
    by_rpc = ", ".join(f"{k} {v}" for k, v in row["errors_by_rpc"].items())
    by_rpc = f" ({by_rpc})" if by_rpc else ""
    notes = "".join(f"\n             a bot noted: {n}" for n in row.get("bot_notes", ()))
    span = (
        f"             median group commit over {row['span_floor_partitions']} partitions; "
        f"the floor of such a transaction: {row['span_commits_per_s']:g}/s, "
        f"p50 {row['span_p50_ms']:g} ms, p99 {row['span_p99_ms']:g} ms\n"
        if "span_floor_partitions" in row
        else ""
    )
    split = (
        "  tables by instance " + " ".join(f"{k} {v}" for k, v in row["tables_by_instance"].items())
        if row.get("instances", 1) > 1
        else ""
    )
    say(
        f"tables {row['tables']:>4} {row['game']}{' (TLS)' if row['tls'] else ''}: "
        f"{row['actions_per_s']:7.1f} actions/s"
        f"  p50 {row['p50_ms']:g} ms  p99 {row['p99_ms']:g} ms"
        f"  seed p50 {row['seed_p50_ms']:g} ms p99 {row['seed_p99_ms']:g} ms"
        f"  hands/s {row['hands_per_s']:g}  transactions/s {row['transactions_per_s']:g} "
        f"({row['commands_per_transaction']:g} commands, {row['events_per_transaction']:g} "
        f"events each)  deadlines fired "
        f"{row['deadlines_fired']}  UNAVAILABLE {row['unavailable']}  RESOURCE_EXHAUSTED "
        f"{row['resource_exhausted']}  other errors {row['other_errors'] or 0}"
        f"{by_rpc}"
        f"{notes}"
        f"{watchers}"
        f"{split}\n"
        f"{span}"
        f"             CPU {cpu}\n             CPU ms/action {per_action}\n"
        f"             memory {memory}"
    )
    if as_json:
        print(json.dumps(row), flush=True)


# -- idle watches from another process ----------------------------------------------------------


def open_watches(address: str, table_ids: list[str], count: int) -> None:
    """(The ``--open-watches`` process.) Open ``count`` WatchTable streams round-robin over
    ``table_ids``, one player account each (tokens signed with the issuer key
    ``RUMMY_TOKEN_SIGNING_KEY_FILE`` names), reading every view and doing nothing else; print
    ``{"open": n, "errors": {...}, "details": [[code: message, n], ...]}`` once every stream
    got its first view or failed (or after 120 s), then hold them until standard input closes."""
    asyncio.run(_open_watches(address, table_ids, count))


async def _open_watches(address: str, table_ids: list[str], count: int) -> None:
    authority = TokenAuthority(
        signing_key=read_signing_key(Path(os.environ[SIGNING_KEY_VARIABLE]), SIGNING_KEY_VARIABLE)
    )
    channels = [dial_aio(address) for _ in range(max(1, count // 500))]
    run = uuid.uuid4().hex[:6]
    opened = 0
    errors: Counter[str] = Counter()
    details: Counter[str] = Counter()
    settled = asyncio.Event()
    closing = False

    def check() -> None:
        if opened + sum(errors.values()) >= count:
            settled.set()

    async def watch(i: int) -> None:
        nonlocal opened
        stub = api_grpc.TableServiceStub(channels[i % len(channels)])
        token = authority.issue(f"watcher-{run}-{i}", Role.PLAYER, 6 * 3600)
        call = stub.WatchTable(
            api.WatchTableRequest(table_id=table_ids[i % len(table_ids)]),
            metadata=bearer_metadata(token),
        )
        first = True
        try:
            async for _ in call:
                if first:
                    first = False
                    opened += 1
                    check()
        except grpc.aio.AioRpcError as error:
            if not closing:  # a CANCELLED before we close is the server's (counted too)
                errors[error.code().name] += 1
                details[f"{error.code().name}: {error.details()}"] += 1
                check()

    tasks = [asyncio.create_task(watch(i)) for i in range(count)]
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(settled.wait(), 120)
    print(
        json.dumps({"open": opened, "errors": dict(errors), "details": details.most_common(3)}),
        flush=True,
    )
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    closing = True
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    for channel in channels:
        await channel.close()


def watcher_step(
    make_step: Callable[[int], Step],
    tables: int,
    watchers: int,
    seconds: float,
    warmup: float,
    quiet_tables: int = 16,
    watch_played: bool = False,
) -> dict[str, Any]:
    step = make_step(tables)
    step.open()
    if watch_played:
        watched = step.table_ids
    else:
        rules = rule_set(turn_seconds=step.options.turn_seconds, seed_window_seconds=1)
        watched = [
            step.operator.open_table(step.options.seats, 10, 500, rules)
            for _ in range(max(1, quiet_tables))
        ]
    try:
        time.sleep(warmup)
        without = step.measure(seconds)
        say(f"  {tables} tables without watchers: p99 {without['p99_ms']:g} ms; opening {watchers}")
        process = subprocess.Popen(
            [
                sys.executable,
                __file__,
                "--open-watches",
                step.stack.address("table"),
                ",".join(watched),
                str(watchers),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env={**os.environ, **step.stack.config.keys.issuer_environment()},
            text=True,
        )
        try:
            assert process.stdout is not None and process.stdin is not None
            opened = json.loads(process.stdout.readline() or '{"open": 0, "errors": {}}')
            say(f"  watches: {opened}")
            row = step.measure(seconds)
        finally:
            if process.stdin is not None:
                process.stdin.close()
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        row.update(
            watchers=watchers,
            watched_tables="played" if watch_played else f"{len(watched)} quiet",
            watches_open=opened["open"],
            watch_errors=opened["errors"],
            p99_ms_without_watchers=without["p99_ms"],
            p99_change_percent=round(
                100 * (row["p99_ms"] - without["p99_ms"]) / max(without["p99_ms"], 1e-9), 1
            ),
        )
        return row
    finally:
        step.close()


# -- main ------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", default="1,4,16,64,256", help="comma-separated table counts")
    parser.add_argument("--seconds", type=float, default=20.0, help="measured seconds per step")
    parser.add_argument("--warmup", type=float, default=5.0, help="seconds played before each")
    parser.add_argument("--seats", type=int, default=4, choices=sorted(SHOES))
    parser.add_argument("--json", action="store_true", help="one JSON object a step on stdout")
    parser.add_argument("--watchers", type=int, default=0, help="idle watches of the watch step")
    parser.add_argument("--watch-tables", type=int, default=16)
    parser.add_argument("--quiet-tables", type=int, default=16, help="tables idle watches watch")
    parser.add_argument(
        "--watch-played", action="store_true", help="the idle watches watch the played tables"
    )
    parser.add_argument("--floor-seconds", type=float, default=5.0)
    parser.add_argument("--clock-speed", type=float, default=10.0)
    parser.add_argument(
        "--turn-seconds", type=int, default=60, help="rule-set turn seconds (divided by the speed)"
    )
    parser.add_argument("--seed", type=int, default=7, help="the bots' randomness")
    parser.add_argument(
        "--driver",
        default="aio",
        choices=("aio", "threads"),
        help="bots as tasks of one event loop (grpc.aio) or a thread each (sync grpc)",
    )
    parser.add_argument(
        "--strategy",
        default="quick",
        choices=("quick", "variant"),
        help="the bots' play: QuickIndianBot (the solver once a turn) or the variant's own",
    )
    parser.add_argument(
        "--instances", type=int, default=1, choices=(1, 2), help="table-service instances"
    )
    parser.add_argument(
        "--tables-per-driver",
        type=int,
        default=64,
        help="the most tables whose bots one process drives (more: one process per that many)",
    )
    parser.add_argument(
        "--open-watches", nargs=3, metavar=("ADDRESS", "TABLE_IDS", "COUNT"), help=argparse.SUPPRESS
    )
    parser.add_argument(
        "--broker-pid", type=int, help="the Kafka broker's pid: its CPU is reported as broker"
    )
    parser.add_argument(
        "--game",
        default=POINTS_GAME,
        help=f"comma-separated games each step plays: {POINTS_GAME} (the house points tables) "
        "or a game of rummy demo --game (e.g. 500)",
    )
    parser.add_argument(
        "--tls",
        action="store_true",
        help="every gRPC connection over mutual TLS (.local/certs); default plaintext",
    )
    parser.add_argument("--drive", action="store_true", help=argparse.SUPPRESS)
    opts = parser.parse_args(argv)
    if opts.drive:
        drive()
        return 0
    if opts.open_watches:
        address, ids, count = opts.open_watches
        open_watches(address, ids.split(","), int(count))
        return 0
    counts = [int(n) for n in opts.tables.split(",") if n.strip()]
    played = [g.strip() for g in opts.game.split(",") if g.strip()]
    for game in played:
        game_plan(game, opts.seats)  # an unknown game stops the run before any broker work
    run = uuid.uuid4().hex[:8]
    with brokers() as (kafka, database):
        floor = measure_floor(kafka, opts.floor_seconds)
        say(
            f"broker {kafka}: serial one-record transactions {floor.serial_commits_per_s:.1f}/s, "
            f"p50 {floor.produce_p50_ms:.2f} ms, p99 {floor.produce_p99_ms:.2f} ms "
            f"(send-to-ack p99 {floor.produce_ack_p99_ms:.2f} ms)"
        )
        options = Options(
            opts.seats,
            opts.seconds,
            opts.warmup,
            opts.turn_seconds,
            floor,
            driver=opts.driver,
            strategy=opts.strategy,
            broker_pid=opts.broker_pid,
            tls=opts.tls,
        )
        rng = random.Random(opts.seed)
        with services(kafka, database, run, opts.clock_speed, opts.tls) as stack:
            authority = TokenAuthority.of_issuer(stack.config.keys)
            operator = Operator(stack.address("table"), stack.address("ledger"), authority)
            extra = [
                ExtraService(stack, "table", f"instance-{n}", same_ports=False).start()
                for n in range(2, opts.instances + 1)
            ]
            if extra:
                time.sleep(3)  # the group's rebalance: each instance rebuilds its partitions

            def make_step(tables: int, game: str = played[0]) -> Step:
                # Quick is Indian's strategy: another game's bots play the variant's own.
                strategy = options.strategy if game_plan(game, opts.seats) is None else "variant"
                return Step(
                    stack,
                    operator,
                    authority,
                    tables,
                    replace(options, game=game, strategy=strategy),
                    rng,
                    extra=extra,
                    tables_per_driver=opts.tables_per_driver,
                )

            spans: dict[int, Floor] = {}
            try:
                for tables in counts:
                    for game in played:
                        step = make_step(tables, game)
                        say(f"step: {tables} tables of {opts.seats} bots, {game}")
                        step.open()
                        try:
                            time.sleep(opts.warmup)
                            row = step.measure(opts.seconds)
                        finally:
                            step.close()
                        report(span_floor(row, kafka, opts.floor_seconds, spans), opts.json)
                if opts.watchers:
                    say(f"step: {opts.watch_tables} tables, then {opts.watchers} idle watches")
                    row = watcher_step(
                        make_step,
                        opts.watch_tables,
                        opts.watchers,
                        opts.seconds,
                        opts.warmup,
                        opts.quiet_tables,
                        opts.watch_played,
                    )
                    report(row, opts.json)
            finally:
                operator.close()
                for instance in extra:
                    instance.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
