"""Measure one player action's latency through the table service process (gRPC call to answer)
next to the produce-and-ack floor of one Kafka transaction.

Usage (brokers up: `bash deploy/local/stack.sh up`):
    .venv/bin/python services/table/bench/action_latency.py [turns]

It starts `python -m rummy_table` on fresh topics, opens a table, seats two players, plays the
ledger, fairness and dealer parts itself (appending their events), then plays `turns` turns of
draw-from-discard-pile + discard through gRPC, timing each call. Prints median and p99 in ms.
"""

from __future__ import annotations

import hashlib
import os
import statistics
import sys
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tests" / "support"))  # rummy_testing

from google.protobuf.message import Message  # noqa: E402
from test_table_process import start, table_stub  # noqa: E402
from world import hand_dealt  # noqa: E402

from rummy.clock.v1 import events_pb2 as clock_pb  # noqa: E402
from rummy.fairness.v1 import events_pb2 as fairness_pb  # noqa: E402
from rummy.ledger.v1 import events_pb2 as ledger_pb  # noqa: E402
from rummy.table.v1 import events_pb2 as pb  # noqa: E402
from rummy.table.v1 import table_service_pb2 as api  # noqa: E402
from rummy_platform.auth import Role  # noqa: E402
from rummy_platform.envelope import Envelope  # noqa: E402
from rummy_platform.eventlog import KafkaEventLog  # noqa: E402
from rummy_platform.ports import LOCAL_KAFKA_BOOTSTRAP  # noqa: E402
from rummy_platform.topics import (  # noqa: E402
    CLOCK_EVENTS,
    DEALER_EVENTS,
    FAIRNESS_EVENTS,
    LEDGER_EVENTS,
    TABLE_EVENTS,
)
from rummy_rules.deck import Shoe  # noqa: E402
from rummy_rules.shuffle import ShuffleInputs, deal  # noqa: E402
from rummy_testing.token_keys import token_environment


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p * len(ordered)))]


def summary(ms: list[float]) -> str:
    return f"median={statistics.median(ms):.1f} ms p99={pct(ms, 0.99):.1f} ms"


def wait_for_fact(log: KafkaEventLog, prefix: str, table_id: str, cls: type) -> None:
    """Inputs are causal in the real flow (the clock closes a window the table opened)."""
    while not any(
        isinstance(r.envelope.payload, cls)
        for r in log.read_stream(prefix + TABLE_EVENTS, table_id)
    ):
        time.sleep(0.1)


def main(turns: int) -> None:
    bootstrap = os.environ.get("KAFKA_BOOTSTRAP_SERVERS", LOCAL_KAFKA_BOOTSTRAP)
    prefix = f"bench{uuid.uuid4().hex[:6]}-"
    env = {
        "KAFKA_BOOTSTRAP_SERVERS": bootstrap,
        **token_environment(),
        "RUMMY_GRPC_PORT": "0",
        "RUMMY_METRICS_PORT": "0",
        "RUMMY_TOPIC_PREFIX": prefix,
        "RUMMY_CLOCK_SPEED": "10",
    }
    proc = start(env)
    log = KafkaEventLog(bootstrap)
    try:
        op = table_stub(proc, "op", Role.OPERATOR)
        table_id = op.OpenTable(
            api.OpenTableRequest(client_request_id="o", seat_count=4, point_value_hundredths=0)
        ).table_id
        stubs = {a: table_stub(proc, a, Role.PLAYER) for a in ("alice", "bob")}
        for a, stub in stubs.items():
            stub.TakeSeat(api.TakeSeatRequest(table_id=table_id, client_request_id=a))
        started = None
        while started is None:
            time.sleep(0.2)
            for r in log.read_stream(prefix + TABLE_EVENTS, table_id):
                if isinstance(r.envelope.payload, pb.HandStarted):
                    started = r.envelope.payload
        hand_id = started.hand_id
        print("hand started", flush=True)
        seed = b"\x09" * 32

        def feed(topic: str, payload: Message) -> None:
            log.append(
                prefix + topic,
                Envelope.new(
                    payload, stream_id=table_id, stream_version=1, occurred_at=datetime.now(UTC)
                ),
            )

        feed(
            LEDGER_EVENTS,
            ledger_pb.StakesReserved(
                hand_id=hand_id,
                reservations=[ledger_pb.Reservation(seat=s.seat) for s in started.seats],
            ),
        )
        feed(
            FAIRNESS_EVENTS,
            fairness_pb.SeedCommitted(
                hand_id=hand_id, commitment_sha256=hashlib.sha256(seed).digest()
            ),
        )
        wait_for_fact(log, prefix, table_id, pb.SeedWindowOpened)
        feed(CLOCK_EVENTS, clock_pb.SeedWindowClosed(hand_id=hand_id))
        wait_for_fact(log, prefix, table_id, pb.SeedsLocked)
        shoe = Shoe(2, 2)
        seats = [s.seat for s in started.seats]
        dealt = deal(
            ShuffleInputs.of(seed, hand_id, {s: b"" for s in seats}),
            shoe,
            seats,
            started.dealer_seat,
            13,
        )
        feed(DEALER_EVENTS, hand_dealt(hand_id, dealt, shoe))
        watcher = stubs["alice"].WatchTable(api.WatchTableRequest(table_id=table_id))
        for response in watcher:
            if response.view.phase == api.HAND_PHASE_PLAYING:
                break
        watcher.cancel()
        accounts = {s.seat: s.account_id for s in started.seats}
        latencies: list[float] = []
        for _ in range(turns):
            view = next(
                iter(stubs["alice"].WatchTable(api.WatchTableRequest(table_id=table_id)))
            ).view
            who = accounts[view.turn_seat]
            t0 = time.perf_counter()
            drawn = stubs[who].DrawCard(
                api.DrawCardRequest(
                    table_id=table_id,
                    hand_id=hand_id,
                    turn_no=view.turn_no,
                    client_request_id=uuid.uuid4().hex,
                    source=pb.DRAW_SOURCE_DISCARD_PILE,
                )
            )
            latencies.append(time.perf_counter() - t0)
            mine = next(iter(stubs[who].WatchTable(api.WatchTableRequest(table_id=table_id)))).view
            card = next(c for c in mine.my_cards if c.index != drawn.card.index)
            t0 = time.perf_counter()
            stubs[who].DiscardCard(
                api.DiscardCardRequest(
                    table_id=table_id,
                    hand_id=hand_id,
                    turn_no=view.turn_no,
                    client_request_id=uuid.uuid4().hex,
                    card=card,
                )
            )
            latencies.append(time.perf_counter() - t0)
        floor: list[float] = []
        writer = log.transactional_writer(prefix + "bench-floor")
        for i in range(200):
            envelope = Envelope.new(
                pb.TurnStarted(hand_id="floor"),
                stream_id="floor",
                stream_version=i + 1,
                occurred_at=datetime.now(UTC),
            )
            t0 = time.perf_counter()
            writer.append_batch([(prefix + TABLE_EVENTS, envelope)])
            floor.append(time.perf_counter() - t0)
        writer.close()
        ms = [x * 1000 for x in latencies]
        fl = [x * 1000 for x in floor]
        print(f"player actions: n={len(ms)} {summary(ms)}")
        print(f"one-event Kafka transaction (produce, ack, commit): n={len(fl)} {summary(fl)}")
    finally:
        proc.stop()
        log.close()


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 150)
