"""One failing table never stops another: the hand starter and the input loop isolate errors per
table (logged with table_id, counted, retried after a backoff) on the in-memory event log."""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from types import ModuleType

import pytest
from google.protobuf.message import Message
from world import INPUT_TOPICS, World, metrics_of

from rummy.fairness.v1 import events_pb2 as fairness_pb
from rummy.ledger.v1 import events_pb2 as ledger_pb
from rummy_platform import isolation
from rummy_platform.backoff import KeyedBackoff
from rummy_platform.envelope import Envelope
from rummy_platform.eventlog import TopicPartition, partition_for
from rummy_platform.topics import FAIRNESS_EVENTS, LEDGER_EVENTS
from rummy_table.application import inputs as table_inputs
from rummy_table.application import starts
from rummy_table.application.commit import TableCore
from rummy_table.application.held_table import HeldTable
from rummy_table.domain.table import Fact
from rummy_table.entrypoints.inputs import InputLoop


class ErrorLines:
    """Stands in for a module's structlog logger: keeps the error lines' fields."""

    def __init__(self) -> None:
        self.lines: list[dict[str, object]] = []

    def error(self, event: str, **fields: object) -> None:
        self.lines.append({"event": event, **fields})

    def __getattr__(self, level: str) -> Callable[..., None]:
        return lambda *args, **fields: None  # info, warning, debug: not asserted here


@contextmanager
def error_logs(*modules: ModuleType) -> Iterator[list[dict[str, object]]]:
    """The error lines ``modules`` log meanwhile (their ``_log`` replaced for the block)."""
    recorder = ErrorLines()
    with pytest.MonkeyPatch.context() as patch:
        for m in modules:
            patch.setattr(m, "_log", recorder)
        yield recorder.lines


class ManualSeconds:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def table_with_players(world: World, *accounts: str) -> str:
    table_id = world.open_table()
    for account in accounts:
        world.sit(table_id, account)
    return table_id


def break_start(table: HeldTable) -> None:
    def refuse(hand_id: str, at_ms: int) -> list[Fact]:
        raise ValueError("reservation does not fit in int64")

    table.start_hand = refuse  # type: ignore[method-assign]  # this table's start breaks


def test_a_table_whose_hand_start_raises_waits_while_every_other_table_starts_its_hands() -> None:
    world = World()
    seconds = ManualSeconds()
    world.app.start_retries = KeyedBackoff("start", first_s=1.0, cap_s=8.0, clock=seconds)
    bad = table_with_players(world, "a1", "a2")
    good = [table_with_players(world, f"{t}1", f"{t}2") for t in ("b", "c")]
    assert list(world.app.projection.tables)[0] == bad  # tried first: before the others
    break_start(world.app.projection.tables[bad])
    world.now += 5_000
    with error_logs(starts) as logs:
        started = world.app.tick()
    assert len(started) == 2
    assert all(world.app.projection.tables[t].hand_running for t in good)
    assert not world.app.projection.tables[bad].hand_running
    (failure,) = logs
    assert failure["table_id"] == bad and failure["hand_id"]
    assert metrics_of(world.app).hand_start_failures._value.get() == 1
    # Within its backoff the broken table is not tried again (nothing counted, nothing logged).
    assert world.app.tick() == []
    assert metrics_of(world.app).hand_start_failures._value.get() == 1
    # Repaired, it starts once its delay has passed, and the others play on meanwhile.
    del world.app.projection.tables[bad].start_hand
    seconds.now += 1.0
    (hand_id,) = world.app.tick()
    assert world.app.projection.tables[bad].hand_id == hand_id
    assert world.app.start_retries.failing == frozenset()


def other_service_event(world: World, topic: str, table_id: str, payload: Message) -> None:
    world.log.append(
        topic,
        Envelope.new(
            payload,
            stream_id=table_id,
            stream_version=world.app.projection.tables[table_id].version + 100,
            occurred_at=datetime.fromtimestamp(world.now / 1000, UTC),
        ),
    )


def stakes(world: World, table_id: str) -> ledger_pb.StakesReserved:
    table = world.app.projection.tables[table_id]
    assert table.ctx is not None
    return ledger_pb.StakesReserved(
        hand_id=table.hand_id,
        reservations=[
            ledger_pb.Reservation(seat=s, account_id=a, amount_hundredths=13_000)
            for s, a in sorted(table.ctx.accounts.items())
        ],
    )


def two_tables_on_one_partition(world: World) -> tuple[str, str]:
    opened: dict[int, str] = {}
    n = 0
    while True:
        n += 1
        table_id = table_with_players(world, f"p{n}a", f"p{n}b")
        partition = partition_for(table_id, 2)
        if partition in opened:
            return opened[partition], table_id
        opened[partition] = table_id


def test_an_input_that_raises_parks_its_table_while_the_other_tables_on_its_partition_play_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    world = World()
    world.app.input_group = "table-isolated"
    bad, good = two_tables_on_one_partition(world)
    world.now += 5_000
    world.app.tick()
    tables = world.app.projection.tables
    react = table_inputs.react

    def flaky(
        core: TableCore, table: HeldTable, payload: Message, hand_id: str, at: int
    ) -> list[Fact]:
        if table.table_id == bad:
            raise KeyError("a bug that only this table's state meets")
        return react(core, table, payload, hand_id, at)

    monkeypatch.setattr(table_inputs, "react", flaky)  # one table's reaction raises
    commitment = fairness_pb.SeedCommitted(
        hand_id="", commitment_sha256=hashlib.sha256(b"s").digest()
    )
    other_service_event(world, LEDGER_EVENTS, bad, stakes(world, bad))
    other_service_event(world, LEDGER_EVENTS, good, stakes(world, good))
    for table_id in (bad, good):
        commitment.hand_id = tables[table_id].hand_id
        other_service_event(world, FAIRNESS_EVENTS, table_id, commitment)
    loop = InputLoop(world.log, world.app, INPUT_TOPICS, retry_pause_s=0.05, poll_timeout_s=0.02)
    bad_version, good_version = tables[bad].version, tables[good].version
    stop = threading.Event()
    thread = threading.Thread(target=loop.run, args=(stop,), daemon=True)
    with error_logs(isolation) as logs:
        thread.start()
        try:
            assert eventually(lambda: tables[good].hand.phase.value == "seed_window")
            # The poll's tables run in parallel: the bad one is parked once the poll's
            # handling returns, which may be just after the good table's fold.
            assert eventually(lambda: loop.isolation.parked == {bad})
            assert tables[bad].version == bad_version
            # The committed offset of the shared partition stays on the parked table's input.
            ledger = TopicPartition(LEDGER_EVENTS, partition_for(bad, 2))
            probe = world.log.consumer("table-isolated", INPUT_TOPICS)
            assert probe.committed(ledger) == 0
            probe.close()
            monkeypatch.setattr(table_inputs, "react", react)  # the reaction mended
            assert eventually(lambda: tables[bad].hand.phase.value == "seed_window")
        finally:
            stop.set()
            thread.join(5)
    assert tables[bad].version - bad_version == tables[good].version - good_version
    assert loop.isolation.parked == frozenset()
    (failure,) = logs
    assert failure["table_id"] == bad and failure["hand_id"] == tables[bad].hand_id


def eventually(condition: Callable[[], bool], timeout_s: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return False
