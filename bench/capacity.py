"""Capacity: how many human-paced four-seat tables one box holds, measured open-loop.

Usage::

    .venv/bin/python bench/capacity.py --tables 500,2000 --think-s 5 [--json] [--instances 1] \
        [--drivers 2] [--window-s 120] [--stagger-s 60]

``bench/throughput.py`` measures saturation (bots act the moment they can). Here every bot waits a
think time before each action, as a player does, and an action's latency counts from when it was
DUE, not from when the driver got round to sending it, so a slow driver cannot hide a slow server.

Brokers and services as ``bench/throughput.py`` brings them up (its ``brokers()`` and
``services()``: ``KAFKA_BOOTSTRAP_SERVERS`` + ``DATABASE_URL`` when both are set, else
``deploy/local/stack.sh up``; the five services on free ports, an own database and topic prefix),
at clock speed 1 (real seconds), plus ``--instances`` - 1 more table-service instances sharing the
table partitions (default 1: what measured best on the 2-core box, ``docs/benchmarks.md``).

Each step (``--tables``, comma separated) opens that many four-seat points tables (point value
0.10, so the ledger reserves and settles every hand) with a fixed turn clock (``--turn-s``, 30),
seed window (``--seed-window-s``, 5) and start delay (``--start-delay-s``, 3), grants every bot and
seats one bot per seat: ``bench/throughput.py``'s ``Bots`` with this script's
:class:`ThinkingBot` (the quick strategy, ``quick_bot.QuickIndianBot``), in ``--drivers``
processes (default 2: asyncio with ``grpc.aio``, each table's four bots in one process, each seat
on its own ``WatchTable``). The tables are seated evenly over ``--stagger-s`` (60), then the step
warms up until a hand has ended at ``--warm-fraction`` (0.9) of its tables (at most
``--warmup-max-s``, 900), then measures ``--window-s`` (120: at 5 s a think a hand lasts about
3 minutes, so about two thirds of the tables end a hand in the window). Before each turn command
(DrawCard, DiscardCard, Play) a bot thinks: a time drawn from an exponential distribution of
mean ``--think-s``, capped at a third of the turn clock (10 s at 30 s: a turn's two actions stay
20 s under its clock; the capped mean is reported as ``think_mean_s``); a seed is sent at once.
The action is due when the view that allows it arrived plus that think time.

One JSON line per step (``--json``; the text report goes to stderr):

- ``tables``, ``actions`` (answered OK in the window), ``actions_per_s``, ``hands_per_s`` (the
  table service's ``rummy_table_hands_ended``);
- ``p50_ms``, ``p99_ms``, ``p999_ms``: from when each action was due to its answer
  (``p99_ms_by_rpc``: the p99 of each turn command);
- ``watch_p50_ms``, ``watch_p99_ms``: from an action's sending to the arrival of the view that
  shows it at the last of the table's four watchers (the seats): the commit happens in between
  and is not seen by a client (the table sends the views before the answer, so from the answer
  it is negative: ``watch_after_answer_p99_ms``); an upper bound of commit-to-last-view;
- ``errors``: calls not answered OK and watch streams broken, by gRPC code (``bot`` for a view a
  bot could not react to);
- ``deadlines_fired``: turn deadlines the clock fired (``rummy_clock_deadlines_fired{kind=turn}``);
- ``driver_slip_p50_ms``, ``driver_slip_p99_ms``: how late the driver sent its actions against
  their due times (its event loop's lag);
- ``cpu_ms_per_action`` and ``cpu_percent`` by process: each table instance (``table``,
  ``table-2``, ...), each other service, ``kafka`` and ``postgresql`` (the broker found by its
  listening port; PostgreSQL's postmaster with all its backends; on shared brokers this includes
  everyone else's traffic), ``driver`` (the driver processes and this one);
  ``server_cpu_ms_per_action``: all but the driver; ``rss_mib`` by process;
- ``load_average``: the 1-minute load average at the window's start and end; ``verdict``.

Then ``{"capacity_tables": N}``: the largest step with p99 <= 150 ms, watch p99 <= 250 ms, no
error, no deadline fired and driver slip p99 <= 20 ms (``open_loop.verdict``: a step whose driver
slipped more is ``unmeasured``, not passed). Steps whose bots left stay open, idle, while the next
runs.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import sys
import time
import urllib.request
import uuid
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any
from urllib.parse import urlsplit

import grpc
from open_loop import Limits, TableWatch, capacity_tables, capped_mean, think_time, verdict
from prometheus_client.parser import text_string_to_metric_families
from throughput import (
    POINTS_GAME,
    Bots,
    BotT,
    DriverProcess,
    ProcessSample,
    Seat,
    _scrape_all,
    drive,
    percentile,
    sample_process,
    say,
    services,
)

from rummy.table.v1 import table_service_pb2 as api
from rummy_ops.bots.aio import AsyncBot
from rummy_ops.bots.client import TURN_COMMANDS
from rummy_ops.stack import brokers
from rummy_platform.auth import Role, TokenAuthority
from rummy_table.contract import TableRouter
from rummy_testing.players import Operator, rule_set
from rummy_testing.processes import ExtraService

SEATS = 4
#: Mixed into a seat's seed for its think times (its brain keeps the seed itself).
THINK_SALT = 0x7468696E6B
TICKS = os.sysconf("SC_CLK_TCK")


# -- the bots: think, then act; every view timed ------------------------------------------------


class ThinkingBot(AsyncBot):
    """An :class:`AsyncBot` that thinks before each turn command and times what it sees.

    Its stream's views are read as they arrive (each noted in its table's :class:`TableWatch`
    with its arrival time) and played one after the other by a task of their own, so a bot
    thinking does not delay the reading of views. A turn command is due at the arrival of the
    view it answers plus a think time (:meth:`configure`); it is sent then (or as soon as the
    loop gets to it: the slip), and ``samples`` gets ``(answered at, due-to-answer s, slip s)``
    (and the RPC's name) for each one answered OK. Seeds and every other call are sent at once."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._views: asyncio.Queue[tuple[api.PlayerView, float]] = asyncio.Queue()
        self._player: asyncio.Task[None] | None = None
        self._view_at = 0.0
        self._view_version = 0
        self.table_watch = TableWatch()
        self.samples: list[tuple[float, float, float, str]] = []
        self.think: Callable[[], float] = lambda: 0.0

    def configure(
        self,
        table_watch: TableWatch,
        samples: list[tuple[float, float, float, str]],
        think: Callable[[], float],
    ) -> None:
        """The table's shared watch record, the driver's action samples and the think-time
        draw (seconds)."""
        self.table_watch, self.samples, self.think = table_watch, samples, think

    def start(self) -> None:
        self.table_watch.join(self)
        self._player = asyncio.get_running_loop().create_task(self._play_views())
        super().start()

    async def stop(self, leave: bool = True) -> None:  # type: ignore[override]
        if self._player is not None:
            self._player.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._player
        self.table_watch.leave(self)
        await super().stop(leave)

    async def _react_async(self, view: api.PlayerView) -> None:
        at = time.monotonic()
        self.table_watch.seen(self, view.stream_version, at)
        if view.phase == api.HAND_PHASE_ENDED and view.hand_id:
            self.table_watch.hands_ended.add(view.hand_id)
        self._views.put_nowait((view, at))

    async def _play_views(self) -> None:
        while True:
            view, at = await self._views.get()
            self._view_at, self._view_version = at, view.stream_version
            await AsyncBot._react_async(self, view)

    async def _arpc(self, name: str, request: Any) -> Any:
        if name not in TURN_COMMANDS or self._stop.is_set():
            return await super()._arpc(name, request)
        due = self._view_at + self.think()
        delay = due - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        fired = time.monotonic()
        change = self.table_watch.acted(self._view_version, fired)
        try:
            reply = await super()._arpc(name, request)
        except grpc.RpcError:
            self.table_watch.abandoned(change)
            raise
        answered = time.monotonic()
        self.table_watch.answered(change, answered)
        self.samples.append((answered, answered - due, fired - due, name))
        return reply


class CapacityBots(Bots):
    """:class:`Bots` of :class:`ThinkingBot` (quick strategy, ``grpc.aio``): the tables of
    ``tables_per_channel`` share a router (its channels), think times of mean ``think_s``
    capped at ``think_cap_s``. :meth:`window` adds the open-loop figures; the ``progress``
    command says how many tables saw a hand end."""

    bot_class = ThinkingBot

    def __init__(
        self,
        addresses: Sequence[str],
        think_s: float,
        think_cap_s: float,
        tables_per_channel: int = 64,
    ) -> None:
        super().__init__(addresses, SEATS, "aio", "quick", POINTS_GAME)
        self.think_s, self.think_cap_s = think_s, think_cap_s
        self.tables_per_channel = tables_per_channel
        self.watches: dict[str, TableWatch] = {}
        self.samples: list[tuple[float, float, float, str]] = []
        self._shared: TableRouter | None = None
        self._sharing = 0

    def _router(self, table_id: str) -> TableRouter:
        if table_id in self.routers:
            return self.routers[table_id]
        if self._shared is None or self._sharing >= self.tables_per_channel:
            self._shared, self._sharing = super()._router(table_id), 0
        self.routers[table_id] = self._shared
        self._sharing += 1
        return self._shared

    def _make(self, kind: type[BotT], plan: Sequence[Seat]) -> list[BotT]:
        bots = super()._make(kind, plan)
        for bot, seat in zip(bots, plan, strict=True):
            if isinstance(bot, ThinkingBot):
                rng = random.Random(seat.seed ^ THINK_SALT)
                bot.configure(
                    self.watches.setdefault(seat.table_id, TableWatch()),
                    self.samples,
                    partial(think_time, rng, self.think_s, self.think_cap_s),
                )
        return bots

    def window(self, since: float, until: float) -> dict[str, Any]:
        seen = super().window(since, until)
        seen.pop("latencies_ms")  # from each call's start: not what is measured here
        later: dict[str, Any] = self._on_loop(self._open_loop(since, until))
        return {**seen, **later}

    async def _open_loop(self, since: float, until: float) -> dict[str, Any]:
        actions = [(lat, slip, rpc) for at, lat, slip, rpc in self.samples if since <= at < until]
        lags = [
            (1000 * lag, 1000 * after)
            for w in self.watches.values()
            for at, lag, after in w.lags
            if since <= at < until
        ]
        broken: Counter[str] = Counter()
        for bot, start in zip(self.bots, self._noted, strict=True):
            for note in bot.stats.errors[start:]:
                if note.startswith("watch: "):
                    broken[note.split()[1].rstrip(":")] += 1
                elif note.startswith("view "):
                    broken["bot"] += 1
        return {
            "due_latencies_ms": [1000 * lat for lat, _, _ in actions],
            "slips_ms": [1000 * slip for _, slip, _ in actions],
            "rpcs": [rpc for _, _, rpc in actions],
            "watch_lags_ms": [lag for lag, _ in lags],
            "watch_after_answer_ms": [after for _, after in lags],
            "watch_breaks": dict(broken),
        }

    def command(self, message: Mapping[str, Any]) -> Any:
        if message.get("cmd") == "progress":
            return self._on_loop(self._progress())
        return super().command(message)

    async def _progress(self) -> dict[str, int]:
        return {
            "tables": len(self.watches),
            "ended": sum(1 for w in self.watches.values() if w.hands_ended),
        }


def _capacity_bots(setup: Mapping[str, Any]) -> Bots:
    return CapacityBots(setup["addresses"], setup["think_s"], setup["think_cap_s"])


# -- the processes measured ------------------------------------------------------------------


def listener_pid(port: int) -> int | None:
    """The process listening on TCP ``port`` (from /proc/net/tcp{,6} and /proc/*/fd); None when
    none is found (or its process is not readable)."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError), open(table) as f:
            for line in list(f)[1:]:
                fields = line.split()
                if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                    inodes.add(f"socket:[{fields[9]}]")
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        with contextlib.suppress(OSError):
            for fd in os.listdir(f"/proc/{entry}/fd"):
                with contextlib.suppress(OSError):
                    if os.readlink(f"/proc/{entry}/fd/{fd}") in inodes:
                        return int(entry)
    return None


def sample_tree(pid: int) -> ProcessSample:
    """:func:`sample_process` of ``pid`` and its children together: CPU seconds of all of them
    (their own and their ended children's, which the parent reaped), RSS summed (shared pages
    counted in each), threads summed. For PostgreSQL: the postmaster and its backends."""
    own = sample_process(pid)
    cpu, rss, threads = own.cpu_s + _reaped_s(pid), own.rss_mib, own.threads
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == pid:
            continue
        with contextlib.suppress(OSError, IndexError, ValueError):
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            if int(fields[1]) == pid:
                child = sample_process(int(entry))
                cpu += child.cpu_s + _reaped_s(int(entry))
                rss += child.rss_mib
                threads += child.threads
    return ProcessSample(cpu, rss, threads)


def _reaped_s(pid: int) -> float:
    """CPU seconds of ``pid``'s children that ended and were waited for (cutime + cstime)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[13]) + int(fields[14])) / TICKS


def labelled(port: int, family: str, labels: Mapping[str, str]) -> float:
    """The ``_total`` of counter ``family`` on ``127.0.0.1:<port>/metrics``, summed over the
    samples whose labels include ``labels``."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as reply:
        text = reply.read().decode()
    return sum(
        s.value
        for f in text_string_to_metric_families(text)
        if f.name == family
        for s in f.samples
        if s.name.endswith("_total") and all(s.labels.get(k) == v for k, v in labels.items())
    )


# -- one step ------------------------------------------------------------------------------------


class Run:
    """The stack, its processes and the options every step shares."""

    def __init__(self, opts: argparse.Namespace, stack: Any, extra: list[ExtraService]) -> None:
        self.opts = opts
        self.stack = stack
        self.extra = extra
        self.authority = TokenAuthority.of_issuer(stack.config.keys)
        self.operator = Operator(stack.address("table"), stack.address("ledger"), self.authority)
        self.think_cap_s = opts.turn_s / 3
        self.tables_ports = [stack.config.ports["table"][1], *(e.metrics_port for e in extra)]
        self.pids: dict[str, tuple[int, bool]] = {s: (p, False) for s, p in stack.pids.items()}
        for n, instance in enumerate(extra, start=2):
            assert instance.process is not None
            self.pids[f"table-{n}"] = (instance.process.pid, False)
        kafka = listener_pid(int(stack.kafka_bootstrap_servers.split(",")[0].rsplit(":", 1)[1]))
        postgres = listener_pid(urlsplit(stack.database_url).port or 5432)
        if kafka is not None:
            self.pids["kafka"] = (kafka, False)
        if postgres is not None:
            self.pids["postgresql"] = (postgres, True)

    def addresses(self) -> list[str]:
        return [self.stack.address("table"), *(e.address for e in self.extra)]

    def open_tables(self, tables: int) -> list[Seat]:
        """Open ``tables`` tables and grant and issue a token to each seat's bot (8 calls at a
        time): the seats to fill, table by table."""
        opts = self.opts
        rules = rule_set(
            turn_seconds=opts.turn_s,
            seed_window_seconds=opts.seed_window_s,
            start_delay_seconds=opts.start_delay_s,
        )
        run = uuid.uuid4().hex[:6]
        rng = random.Random(f"{opts.seed}-{tables}")
        with ThreadPoolExecutor(8) as pool:
            ids = list(
                pool.map(lambda _: self.operator.open_table(SEATS, 10, 500, rules), range(tables))
            )
            accounts = [f"capacity-{run}-{t}-{s}" for t in range(tables) for s in range(SEATS)]
            list(pool.map(lambda a: self.operator.grant(a, 1_000_000), accounts))
        return [
            Seat(
                ids[i // SEATS],
                account,
                self.authority.issue(account, Role.PLAYER, 6 * 3600),
                rng.getrandbits(64),
            )
            for i, account in enumerate(accounts)
        ]

    def sample(self, drivers: Sequence[DriverProcess]) -> dict[str, ProcessSample]:
        found = {
            name: sample_tree(pid) if tree else sample_process(pid)
            for name, (pid, tree) in self.pids.items()
        }
        for n, process in enumerate(drivers, start=1):
            found[f"driver-{n}"] = sample_process(process.process.pid)
        return found

    def step(self, tables: int) -> dict[str, Any]:
        opts = self.opts
        say(f"step: {tables} tables of {SEATS} bots, think {opts.think_s:g} s")
        began = time.monotonic()
        plan = self.open_tables(tables)
        say(f"  opened and granted in {time.monotonic() - began:.0f} s")
        drivers = [
            DriverProcess(
                self.addresses(),
                SEATS,
                script=__file__,
                setup={"think_s": opts.think_s, "think_cap_s": self.think_cap_s},
            )
            for _ in range(max(1, opts.drivers))
        ]
        try:
            for process in drivers:  # started and listening: the stagger starts now
                process.ask({"cmd": "progress"})
            self._seat_staggered(plan, drivers)
            warm = self._warm_up(tables, drivers)
            return self._measure(tables, drivers, warm)
        finally:
            for process in drivers:
                process.close()

    def _seat_staggered(self, plan: Sequence[Seat], drivers: Sequence[DriverProcess]) -> None:
        """Seat the tables evenly over ``--stagger-s`` (in up to 30 batches), each table's bots
        in one driver (tables dealt round-robin)."""
        tables = [plan[i : i + SEATS] for i in range(0, len(plan), SEATS)]
        batches = min(len(tables), 30)
        began = time.monotonic()
        for b in range(batches):
            at = began + self.opts.stagger_s * b / batches
            time.sleep(max(0.0, at - time.monotonic()))
            chunk = tables[b::batches]
            asked = []
            for d, process in enumerate(drivers):
                mine = [seat for table in chunk[d :: len(drivers)] for seat in table]
                if mine:
                    process.seat(mine)
                    asked.append(process)
            for process in asked:
                process.seated()
        say(f"  seated in {time.monotonic() - began:.0f} s")

    def _warm_up(self, tables: int, drivers: Sequence[DriverProcess]) -> dict[str, float]:
        """Play until a hand has ended at ``--warm-fraction`` of the tables (or ``--warmup-max-s``
        passed): the seconds it took and the fraction reached."""
        began = time.monotonic()
        while True:
            ended = sum(p.ask({"cmd": "progress"})["ended"] for p in drivers)
            waited = time.monotonic() - began
            if ended >= self.opts.warm_fraction * tables or waited >= self.opts.warmup_max_s:
                say(f"  warm after {waited:.0f} s: a hand ended at {ended} of {tables} tables")
                return {"warmup_s": round(waited, 1), "tables_warm": round(ended / tables, 3)}
            time.sleep(5)

    def _measure(
        self, tables: int, drivers: Sequence[DriverProcess], warm: Mapping[str, float]
    ) -> dict[str, Any]:
        counters = ("rummy_table_hands_ended",)
        clock_port = self.stack.config.ports["clock"][1]
        load_before = os.getloadavg()[0]
        before = self.sample(drivers)
        own_before = time.process_time()
        for process in drivers:
            process.mark()
        hands_before, _ = _scrape_all(self.tables_ports, counters)
        fired_before = labelled(clock_port, "rummy_clock_deadlines_fired", {"kind": "turn"})
        since = time.monotonic()
        time.sleep(self.opts.window_s)
        until = time.monotonic()
        after = self.sample(drivers)
        own_cpu = time.process_time() - own_before
        load_after = os.getloadavg()[0]
        seen = [process.window(since, until) for process in drivers]
        hands_after, _ = _scrape_all(self.tables_ports, counters)
        fired_after = labelled(clock_port, "rummy_clock_deadlines_fired", {"kind": "turn"})
        wall = until - since
        latencies = [ms for g in seen for ms in g["due_latencies_ms"]]
        by_rpc: dict[str, list[float]] = {}
        for g in seen:
            for ms, rpc in zip(g["due_latencies_ms"], g["rpcs"], strict=True):
                by_rpc.setdefault(rpc, []).append(ms)
        slips = [ms for g in seen for ms in g["slips_ms"]]
        lags = [ms for g in seen for ms in g["watch_lags_ms"]]
        after_answer = [ms for g in seen for ms in g["watch_after_answer_ms"]]
        errors: Counter[str] = Counter()
        for g in seen:
            errors.update({k: v for k, v in g["codes"].items() if k != grpc.StatusCode.OK.name})
            errors.update(g["watch_breaks"])
        cpu = {name: after[name].cpu_s - before[name].cpu_s for name in before}
        driver_cpu = own_cpu + sum(cpu.pop(f"driver-{n}") for n in range(1, len(drivers) + 1))
        server_cpu = sum(cpu.values())
        cpu["driver"] = driver_cpu
        n = max(1, len(latencies))
        rss = {name: round(s.rss_mib, 1) for name, s in after.items()}
        rss["driver"] = round(sum(rss.pop(f"driver-{k}") for k in range(1, len(drivers) + 1)), 1)
        row: dict[str, Any] = {
            "tables": tables,
            "instances": 1 + len(self.extra),
            "drivers": len(drivers),
            "think_s": self.opts.think_s,
            "think_mean_s": round(capped_mean(self.opts.think_s, self.think_cap_s), 2),
            "turn_s": self.opts.turn_s,
            **warm,
            "seconds": round(wall, 1),
            "actions": len(latencies),
            "actions_per_s": round(len(latencies) / wall, 1),
            "hands_per_s": round((hands_after[counters[0]] - hands_before[counters[0]]) / wall, 2),
            "p50_ms": round(percentile(latencies, 0.5), 1),
            "p99_ms": round(percentile(latencies, 0.99), 1),
            "p999_ms": round(percentile(latencies, 0.999), 1),
            "p99_ms_by_rpc": {k: round(percentile(v, 0.99), 1) for k, v in sorted(by_rpc.items())},
            "watch_p50_ms": round(percentile(lags, 0.5), 1),
            "watch_p99_ms": round(percentile(lags, 0.99), 1),
            "watch_after_answer_p99_ms": round(percentile(after_answer, 0.99), 1),
            "errors": dict(errors),
            "errors_by_rpc": dict(
                Counter({k: v for g in seen for k, v in g["errors_by_rpc"].items()})
            ),
            "deadlines_fired": int(fired_after - fired_before),
            "driver_slip_p50_ms": round(percentile(slips, 0.5), 1),
            "driver_slip_p99_ms": round(percentile(slips, 0.99), 1),
            "cpu_ms_per_action": {k: round(1000 * v / n, 2) for k, v in cpu.items()},
            "server_cpu_ms_per_action": round(1000 * server_cpu / n, 2),
            "cpu_percent": {k: round(100 * v / wall, 1) for k, v in cpu.items()},
            "rss_mib": rss,
            "load_average": [round(load_before, 2), round(load_after, 2)],
        }
        row["verdict"] = verdict(row, LIMITS)
        return row


LIMITS = Limits()


def _pairs(values: Mapping[str, float], unit: str = "") -> str:
    return " ".join(f"{k} {v:g}{unit}" for k, v in values.items())


def report(row: Mapping[str, Any], as_json: bool) -> None:
    lines = [
        f"tables {row['tables']:>5}: {row['verdict']}  {row['actions_per_s']:g} actions/s  "
        f"{row['hands_per_s']:g} hands/s  p50/p99/p99.9 {row['p50_ms']:g}/{row['p99_ms']:g}/"
        f"{row['p999_ms']:g} ms (p99 {_pairs(row['p99_ms_by_rpc'])})  watch p99 "
        f"{row['watch_p99_ms']:g} ms  slip p99 {row['driver_slip_p99_ms']:g} ms  deadlines "
        f"{row['deadlines_fired']}  errors {row['errors'] or 0}  load {row['load_average']}",
        f"CPU ms/action {_pairs(row['cpu_ms_per_action'])} "
        f"(server {row['server_cpu_ms_per_action']:g})",
        f"CPU {_pairs(row['cpu_percent'], '%')}",
        f"RSS MiB {_pairs(row['rss_mib'])}",
    ]
    say("\n             ".join(lines))
    if as_json:
        print(json.dumps(row), flush=True)


def main(argv: list[str] | None = None) -> int:
    assert __doc__ is not None
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--tables", default="50,250,500", help="comma-separated table counts")
    parser.add_argument("--think-s", type=float, default=5.0, help="mean think time (s)")
    parser.add_argument(
        "--turn-s", type=int, default=30, help="the turn clock (s); thinks cap at a third"
    )
    parser.add_argument("--seed-window-s", type=int, default=5, help="the seed window (s)")
    parser.add_argument("--start-delay-s", type=int, default=3, help="seconds before each hand")
    parser.add_argument("--stagger-s", type=float, default=60.0, help="tables seated over this")
    parser.add_argument(
        "--warm-fraction", type=float, default=0.9, help="warm once a hand ended at this share"
    )
    parser.add_argument("--warmup-max-s", type=float, default=900.0, help="warm-up at most")
    parser.add_argument("--window-s", type=float, default=120.0, help="measured seconds a step")
    parser.add_argument("--instances", type=int, default=1, help="table-service instances")
    parser.add_argument("--drivers", type=int, default=2, help="bot driver processes")
    parser.add_argument("--seed", type=int, default=7, help="the bots' randomness")
    parser.add_argument("--json", action="store_true", help="one JSON object a step on stdout")
    parser.add_argument("--drive", action="store_true", help=argparse.SUPPRESS)
    opts = parser.parse_args(argv)
    if opts.drive:
        drive(_capacity_bots)
        return 0
    counts = [int(n) for n in opts.tables.split(",") if n.strip()]
    run = uuid.uuid4().hex[:8]
    rows = []
    with brokers() as (kafka, database), services(kafka, database, run, 1.0) as stack:
        extra = [
            ExtraService(stack, "table", f"instance-{n}", same_ports=False).start()
            for n in range(2, opts.instances + 1)
        ]
        if extra:
            time.sleep(3)  # the group's rebalance
        measured = Run(opts, stack, extra)
        try:
            for tables in counts:
                row = measured.step(tables)
                rows.append(row)
                report(row, opts.json)
        finally:
            measured.operator.close()
            for instance in extra:
                instance.stop()
    verdict_line = {"capacity_tables": capacity_tables(rows, LIMITS)}
    say(f"capacity: {verdict_line['capacity_tables']} tables")
    if opts.json:
        print(json.dumps(verdict_line), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
