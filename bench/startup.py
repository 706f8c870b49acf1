"""Start-up of the table service: time to SERVING and memory, on an empty topic and on a history.

Usage::

    .venv/bin/python bench/startup.py --hands 20000 [--hands-per-table 50] [--repeat 3]
        [--restarts 10] [--json]

Brokers: ``KAFKA_BOOTSTRAP_SERVERS`` when set (never started or stopped); otherwise the local
brokers, as ``bench/throughput.py`` gets them (``rummy_ops.stack.brokers``: ``deploy/local/stack.sh
up``, and ``down`` at the end, on an error or Ctrl-C too, if this run started them). Only Kafka is
used. Every run uses topics of its own (``RUMMY_TOPIC_PREFIX``), removed at the end, and free ports.

1. **Empty**: a topic prefix whose topics exist and hold no events.
2. **History**: real hands are recorded once, in this process, through the table service's own
   handlers and the rules library's decide/apply (the other services' inputs simulated as in the
   table service's tests, ``services/table/tests/world.py``): one table of 2-4 players playing
   ``--hands-per-table`` hands (each a random number of turns, drawing and discarding, then
   drops until one player is left; every hand revealed and settled), then closed. That table's
   stream is written again and again with fresh ids (table, hands, events, requests: every UUID
   of each record replaced, byte for byte the same otherwise) straight to the topic with a
   producer, until ``--hands`` hands are recorded.
3. The service starts on that history once: no snapshot exists yet, so it replays every
   partition in full (``first_start_s``: to its first answered command), writes its snapshots
   and, at SIGTERM, the last ones.
4. Then ``--repeat`` times (default 3) in turn: the service starts on the empty topics, and on
   the history, now from the snapshots and their (empty) tails; each time the seconds from
   spawning it to gRPC health SERVING and its resident memory (VmRSS) two seconds after, then
   SIGTERM. ``empty_s``/``rss_empty_mib`` and ``history_s``/``rss_history_mib`` are the medians
   (the machine is shared: alternating the two kinds of start exposes both to the same load).
   Targets: ``history_s`` <= 2 x ``empty_s`` (issue 13), ``rss_history_mib``
   <= 1.1 x ``rss_empty_mib`` (issue 34; 1.2 x in issue 13).
5. Before those, with ``--restarts N``: one instance on the history (fixed ports, so one
   transactional id, as a restarted pod or ``rummy up``'s restart keeps) is restarted N times,
   alternately after a graceful stop (SIGTERM, its exit awaited) and after SIGKILL (a crash: its
   group member and its transaction are left to the broker), the new process spawned at once;
   each time the seconds from spawning it to health SERVING and to its first answered command
   (an operator's ``OpenTable``: a transaction of its writer), and the seconds from spawning to
   each of its start's log lines in :data:`PHASES` (target, issue 34: the worst <= 10 s).
   Health and the command are asked on channels that reconnect every 50 ms
   (:data:`FAST_RECONNECT`).

``--json`` prints one JSON object on stdout (the text report goes to stderr): ``empty_s``,
``history_s``, ``rss_empty_mib``, ``rss_history_mib``, ``first_start_s``, ``hands``, ``tables``,
``events``, ``snapshot_bytes`` (the snapshots' total size, uncompressed), ``empty_samples_s``,
``history_samples_s`` and ``load_average`` (the lowest and highest 1-minute load average seen
at the measured starts); with ``--restarts``, ``restarts`` (one object each: ``stop``
``"graceful"`` or ``"kill"``, ``serving_s``, ``first_command_s``, ``phases_s``,
``load_average``) and ``restart_worst_s``; ``--repeat 0`` measures no empty/history starts.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import random
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import TypedDict

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from kafka import KafkaAdminClient, KafkaProducer

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "services" / "table" / "tests"))

import table_calls  # noqa: E402
from world import SERVER_SEED, World  # noqa: E402

from rummy.common.v1 import cards_pb2 as cards_pb  # noqa: E402
from rummy.fairness.v1 import events_pb2 as fairness_pb  # noqa: E402
from rummy.ledger.v1 import events_pb2 as ledger_pb  # noqa: E402
from rummy.table.v1 import events_pb2 as pb  # noqa: E402
from rummy.table.v1 import table_service_pb2 as api  # noqa: E402
from rummy.table.v1 import table_service_pb2_grpc as api_grpc  # noqa: E402
from rummy_ops.stack import brokers, free_port  # noqa: E402
from rummy_platform.auth import Role, bearer_metadata  # noqa: E402
from rummy_platform.envelope import decode, encode, event_payloads  # noqa: E402
from rummy_platform.eventlog import KafkaEventLog  # noqa: E402
from rummy_platform.topics import (  # noqa: E402
    FAIRNESS_EVENTS,
    LEDGER_EVENTS,
    TABLE_EVENTS,
    event_topic_specs,  # noqa: E402
)
from rummy_table.adapters import snapshot  # noqa: E402
from rummy_table.adapters.table_log import read_snapshots  # noqa: E402
from rummy_testing.token_keys import issuer_authority, token_environment  # noqa: E402

UUID = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


# -- the history -----------------------------------------------------------------------------


class _Turn(TypedDict):
    """The fields naming a turn in a turn command's request."""

    table_id: str
    hand_id: str
    turn_no: int


def _new_id() -> str:
    return str(uuid.uuid4())


def record_table(hands: int, rng: random.Random) -> list[bytes]:
    """The encoded table stream of one table whose 2-4 players play ``hands`` hands (see the
    module doc), then closed. Every id in it is a UUID."""
    world = World()
    world.request_id = _new_id  # type: ignore[method-assign]
    world.app.new_hand_id = _new_id
    table_id = world.open_table(seats=4)
    for i in range(rng.randint(2, 4)):
        world.sit(table_id, f"player-{i}")
    for _ in range(hands):
        hand_id = world.start_hand(table_id)
        world.prepare(table_id, hand_id)
        turns = rng.randint(3, 30)
        for turn in itertools.count():
            view = world.view(table_id, None)
            if view.phase != api.HAND_PHASE_PLAYING:
                break
            account = next(s.account_id for s in view.seats if s.seat == view.turn_seat)
            mine = world.view(table_id, account)
            where: _Turn = {"table_id": table_id, "hand_id": hand_id, "turn_no": mine.turn_no}
            if turn >= turns:
                table_calls.drop(
                    world.app, account, api.DropRequest(**where, client_request_id=_new_id())
                )
                continue
            table_calls.draw(
                world.app,
                account,
                api.DrawCardRequest(
                    **where, client_request_id=_new_id(), source=pb.DRAW_SOURCE_STOCK
                ),
            )
            held = world.view(table_id, account).my_cards
            table_calls.discard(
                world.app,
                account,
                api.DiscardCardRequest(
                    **where, client_request_id=_new_id(), card=rng.choice(list(held))
                ),
            )
        ended = world.app.get_hand_result(None, table_id, hand_id)
        reveal = fairness_pb.SeedRevealed(hand_id=hand_id, server_seed=SERVER_SEED)
        world.feed(FAIRNESS_EVENTS, table_id, reveal)
        settled = ledger_pb.HandSettled(hand_id=ended.hand_id, journal_transaction_id=_new_id())
        world.feed(LEDGER_EVENTS, table_id, settled)
    table_calls.close_table(
        world.app, "operator", api.CloseTableRequest(table_id=table_id, client_request_id=_new_id())
    )
    return [encode(r.envelope) for r in world.log.read_stream(TABLE_EVENTS, table_id)]


def copy_of(table_id: str, records: list[bytes]) -> tuple[bytes, list[bytes]]:
    """``records`` (the stream of table ``table_id``) with every UUID replaced by a fresh one
    (the same one for the same id); returns the copy's table id and its records."""
    fresh: dict[bytes, bytes] = {}

    def swap(match: re.Match[bytes]) -> bytes:
        old = match.group(0)
        new = fresh.get(old)
        if new is None:
            new = fresh[old] = str(uuid.uuid4()).encode()
        return new

    out = [UUID.sub(swap, r) for r in records]
    return fresh[table_id.encode()], out


def write_history(bootstrap: str, topic: str, template: list[bytes], copies: int) -> int:
    """Write ``copies`` copies of the table stream ``template`` to ``topic``, each keyed by its
    table id (as the table service writes them); returns the records written."""
    template_table_id = decode(template[0], event_payloads()).stream_id
    producer = KafkaProducer(
        bootstrap_servers=bootstrap.split(","),
        acks="all",
        linger_ms=20,
        batch_size=512 * 1024,
        max_request_size=8 * 1024 * 1024,
    )
    written = 0
    try:
        for n in range(copies):
            table_id, records = copy_of(template_table_id, template)
            for value in records:
                producer.send(topic, key=table_id, value=value)
            written += len(records)
            if n % 50 == 49:
                producer.flush()
                say(f"  {n + 1}/{copies} tables written ({written} events)")
        producer.flush()
    finally:
        producer.close()
    return written


# -- the service -----------------------------------------------------------------------------


def rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def service_env(
    bootstrap: str, prefix: str, port: int, metrics_port: int | None = None
) -> dict[str, str]:
    """The table service's environment for one start on ``port`` (its address, hence its
    transactional id)."""
    env = {
        **os.environ,
        "KAFKA_BOOTSTRAP_SERVERS": bootstrap,
        **token_environment(),
        "RUMMY_GRPC_PORT": str(port),
        "RUMMY_METRICS_PORT": str(metrics_port or free_port()),
        "RUMMY_TOPIC_PREFIX": prefix,
        "RUMMY_LOG_LEVEL": "info",
    }
    env.pop("RUMMY_SUPERVISOR_PID", None)
    return env


def spawn(env: dict[str, str], log_path: Path) -> subprocess.Popen[bytes]:
    with open(log_path, "ab") as log:
        return subprocess.Popen(
            [sys.executable, "-m", "rummy_table"], env=env, stdout=log, stderr=subprocess.STDOUT
        )


#: The health checks' channel reconnects every 50 ms while the port refuses: with gRPC's
#: default backoff (1 s, growing 1.6 times a try up to 120 s) a channel opened while the process
#: was still importing tried again seconds after the server was up, and the bench counted that
#: wait as the start's (5 s of a 15 s restart here; 57 s of a first start).
FAST_RECONNECT = [
    ("grpc.initial_reconnect_backoff_ms", 50),
    ("grpc.min_reconnect_backoff_ms", 50),
    ("grpc.max_reconnect_backoff_ms", 100),
]


def wait_serving(process: subprocess.Popen[bytes], port: int, log_path: Path) -> None:
    """Return once the service on ``port`` answers gRPC health SERVING."""
    with grpc.insecure_channel(f"127.0.0.1:{port}", options=FAST_RECONNECT) as channel:
        health = health_pb2_grpc.HealthStub(channel)
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"the table service exited; see {log_path}")
            try:
                request = health_pb2.HealthCheckRequest()
                status = health.Check(request, timeout=1).status  # type: ignore[attr-defined]  # HealthStub's stub lists no methods
                if status == health_pb2.HealthCheckResponse.SERVING:
                    return
            except grpc.RpcError:
                pass
            time.sleep(0.02)


def stop(process: subprocess.Popen[bytes], how: str = "graceful") -> None:
    """End ``process``: ``graceful`` (SIGTERM, then wait for its exit: its last snapshots are
    written then; SIGKILL after 60 s) or ``kill`` (SIGKILL, as a crash)."""
    if process.poll() is not None:
        return
    if how == "kill":
        process.kill()
        process.wait()
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(60)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@contextmanager
def table_service(
    bootstrap: str, prefix: str, log_dir: Path, name: str, *, answered: bool = False
) -> Iterator[tuple[subprocess.Popen[bytes], float]]:
    """The table service on free ports; yields (process, seconds to SERVING, or with
    ``answered`` to its first answered command, waited for up to 30 minutes). SIGTERM at the
    end (and waits for its exit: its last snapshots are written then)."""
    port = free_port()
    log_path = log_dir / f"{name}.log"
    began = time.monotonic()
    process = spawn(service_env(bootstrap, prefix, port), log_path)
    try:
        wait_serving(process, port, log_path)
        if answered:
            token = issuer_authority().issue("startup-bench", Role.OPERATOR, 3600)
            open_table_once(port, token, timeout_s=1800)
        yield process, time.monotonic() - began
    finally:
        stop(process)


def measure(bootstrap: str, prefix: str, log_dir: Path, name: str) -> tuple[float, float]:
    """(seconds to SERVING, RSS MiB two seconds later) of one start."""
    with table_service(bootstrap, prefix, log_dir, name) as (process, seconds):
        time.sleep(2)
        return seconds, rss_mib(process.pid)


# -- restarts --------------------------------------------------------------------------------

#: Log events of a start, in the order a start passes them (``--restarts``' phases).
PHASES = (
    "variants loaded",
    "consumer subscribed",
    "consumer partitions assigned",
    "tables rebuilt",
    "consumer partitions lost",
    "service started",
)


class Restart(TypedDict):
    """One restart of ``--restarts``: how the previous process ended, seconds from spawning
    the new one to health SERVING and to its first answered command, and the log's phases."""

    stop: str
    serving_s: float
    first_command_s: float
    phases_s: dict[str, float]
    load_average: float


def open_table_once(port: int, token: str, timeout_s: float = 60.0) -> None:
    """Send ``OpenTable`` (an operator's command: a transaction of the instance's writer) until
    one is answered OK; a refusal other than UNAVAILABLE / DEADLINE_EXCEEDED is raised."""
    deadline = time.monotonic() + timeout_s
    request = api.OpenTableRequest(
        client_request_id=_new_id(),
        name=f"startup-{uuid.uuid4().hex[:6]}",
        seat_count=4,
        rule_set=cards_pb.RuleSet(turn_seconds=300, seed_window_seconds=10),
    )
    with grpc.insecure_channel(f"127.0.0.1:{port}", options=FAST_RECONNECT) as channel:
        stub = api_grpc.TableServiceStub(channel)
        while True:
            try:
                stub.OpenTable(request, metadata=bearer_metadata(token), timeout=10)
                return
            except grpc.RpcError as exc:
                retriable = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)
                if exc.code() not in retriable or time.monotonic() > deadline:
                    raise
            time.sleep(0.02)


def log_phases(log_path: Path, since: float) -> dict[str, float]:
    """Seconds from ``since`` (Unix time) to the first line of each of :data:`PHASES` that the
    service logged after it (JSON lines with an ISO ``timestamp``)."""
    found: dict[str, float] = {}
    for line in log_path.read_text(errors="replace").splitlines():
        try:
            entry = json.loads(line)
            event = entry["event"]
            at = datetime.fromisoformat(entry["timestamp"].replace("Z", "+00:00")).timestamp()
        except (ValueError, KeyError, TypeError, AttributeError):
            continue
        if event in PHASES and event not in found and at >= since:
            found[event] = round(at - since, 2)
    return found


def restarts(bootstrap: str, prefix: str, log_dir: Path, count: int) -> list[Restart]:
    """Restart one instance (the same ports, hence the same transactional id) on ``prefix``'s
    topics ``count`` times, alternately after a graceful stop (SIGTERM, its exit awaited) and
    after a SIGKILL; the new process is spawned as soon as the old one is gone."""
    port, metrics_port = free_port(), free_port()
    token = issuer_authority().issue("startup-bench", Role.OPERATOR, 3600)
    env = service_env(bootstrap, prefix, port, metrics_port)
    log_path = log_dir / "restarts.log"
    process = spawn(env, log_path)
    done: list[Restart] = []
    try:
        wait_serving(process, port, log_path)
        open_table_once(port, token)
        for n in range(count):
            how = "graceful" if n % 2 == 0 else "kill"
            time.sleep(1)  # a heartbeat or two of the running member before it goes
            stop(process, how)
            since = time.time()
            began = time.monotonic()
            process = spawn(env, log_path)
            wait_serving(process, port, log_path)
            serving = time.monotonic() - began
            open_table_once(port, token)
            answered = time.monotonic() - began
            done.append(
                {
                    "stop": how,
                    "serving_s": round(serving, 2),
                    "first_command_s": round(answered, 2),
                    "phases_s": log_phases(log_path, since),
                    "load_average": round(os.getloadavg()[0], 1),
                }
            )
            say(
                f"restart {n + 1} after a {how} stop: SERVING after {serving:.2f} s, first "
                f"command answered after {answered:.2f} s; phases {done[-1]['phases_s']} "
                f"(load average {done[-1]['load_average']:.1f})"
            )
    finally:
        stop(process)
    return done


def ensure_topics(bootstrap: str, prefix: str) -> None:
    """The table service's topics under ``prefix`` (event topics and snapshots)."""
    log = KafkaEventLog(bootstrap)
    try:
        log.ensure_topics([*event_topic_specs(prefix=prefix), snapshot.snapshot_topic_spec(prefix)])
    finally:
        log.close()


def drop_topics(bootstrap: str, prefixes: list[str]) -> None:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap.split(","))
    try:
        mine = [t for t in admin.list_topics() if any(t.startswith(p) for p in prefixes)]
        if mine:
            admin.delete_topics(mine)
    finally:
        admin.close()


@contextmanager
def kafka_broker() -> Iterator[str]:
    """Bootstrap servers: ``KAFKA_BOOTSTRAP_SERVERS`` when set, else the local brokers'
    (``rummy_ops.stack.brokers``: started if need be, and then stopped at the end)."""
    given = os.environ.get("KAFKA_BOOTSTRAP_SERVERS")
    if given:
        yield given
        return
    with brokers(ROOT) as (bootstrap, _database):
        yield bootstrap


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hands", type=int, default=20_000)
    parser.add_argument("--hands-per-table", type=int, default=50)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--repeat", type=int, default=3, help="starts of each kind measured")
    parser.add_argument(
        "--restarts", type=int, default=0, help="restarts of one instance on the history"
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    with kafka_broker() as bootstrap:
        return measure_all(args, bootstrap)


def measure_all(args: argparse.Namespace, bootstrap: str) -> int:
    """The whole benchmark (the module doc) on the broker at ``bootstrap``."""
    run = uuid.uuid4().hex[:8]
    empty, history = f"startup-{run}-empty-", f"startup-{run}-history-"
    log_dir = Path(tempfile.mkdtemp(prefix="rummy-startup-"))
    say(f"logs in {log_dir}")
    samples: dict[str, list[tuple[float, float]]] = {"empty": [], "history": []}
    loads: list[float] = []
    try:
        # "empty": the topics exist (as on any restart) and hold no event
        ensure_topics(bootstrap, empty)
        per_table = max(1, min(args.hands, args.hands_per_table))
        copies = -(-args.hands // per_table)
        started = time.monotonic()
        with contextlib.redirect_stdout(sys.stderr):  # the handlers' logs; stdout is the JSON
            template = record_table(per_table, random.Random(args.seed))
        say(
            f"recorded {per_table} hands at one table: {len(template)} events "
            f"in {time.monotonic() - started:.1f} s"
        )
        ensure_topics(bootstrap, history)
        started = time.monotonic()
        events = write_history(bootstrap, history + TABLE_EVENTS, template, copies)
        say(
            f"wrote {copies} tables, {copies * per_table} hands, {events} events "
            f"in {time.monotonic() - started:.1f} s"
        )
        # until its first answered command: SERVING may come before its partitions are
        # rebuilt (bootstrap.FIRST_ASSIGNMENT_WAIT_S), and a stop then leaves the rest to replay
        first = table_service(bootstrap, history, log_dir, "first", answered=True)
        with first as (_process, first_s):
            say(f"history, no snapshot yet: first command answered after {first_s:.1f} s")
        stored = read_snapshots(bootstrap, history + snapshot.SNAPSHOT_TOPIC)
        say(f"snapshots of {len(stored)} partitions, {sum(map(len, stored.values()))} bytes")
        restarted = restarts(bootstrap, history, log_dir, args.restarts)
        # the machine is shared: the two kinds of start alternate, and each figure is a median
        for n in range(args.repeat):
            for kind, prefix in (("empty", empty), ("history", history)):
                loads.append(os.getloadavg()[0])
                seconds, rss = measure(bootstrap, prefix, log_dir, f"{kind}-{n}")
                samples[kind].append((seconds, rss))
                say(
                    f"{kind}: SERVING after {seconds:.2f} s, RSS {rss:.1f} MiB "
                    f"(load average {loads[-1]:.1f})"
                )
    finally:
        drop_topics(bootstrap, [empty, history])
    row: dict[str, object] = {
        "first_start_s": round(first_s, 1),
        "hands": copies * per_table,
        "tables": copies,
        "events": events,
        "snapshot_bytes": sum(map(len, stored.values())),
    }
    if restarted:
        worst = max(r["first_command_s"] for r in restarted)
        row["restarts"] = restarted
        row["restart_worst_s"] = worst
        say(f"{len(restarted)} restarts: worst {worst:.2f} s to the first answered command")
    if args.repeat:
        empty_s, rss_empty = (statistics.median(x) for x in zip(*samples["empty"], strict=True))
        history_s, rss_history = (
            statistics.median(x) for x in zip(*samples["history"], strict=True)
        )
        row |= {
            "empty_s": round(empty_s, 3),
            "history_s": round(history_s, 3),
            "rss_empty_mib": round(rss_empty, 1),
            "rss_history_mib": round(rss_history, 1),
            "empty_samples_s": [round(x, 2) for x, _ in samples["empty"]],
            "history_samples_s": [round(x, 2) for x, _ in samples["history"]],
            "load_average": [round(min(loads), 1), round(max(loads), 1)],
        }
        say(
            f"medians of {args.repeat}: history/empty: start {history_s / empty_s:.2f}x "
            f"(target <= 2), RSS {rss_history / rss_empty:.2f}x (target <= 1.1)"
        )
    if args.json:
        print(json.dumps(row))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
