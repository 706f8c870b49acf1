"""Two table-service instances sharing the tables by partition, with the other services as
processes on real brokers (``docs/rules/promises.md#scales-out``, issue 13):

- one instance killed with SIGKILL in the middle of hands: the group notices within its session
  (``RUMMY_TABLE_SESSION_SECONDS``, 6 s), the survivor takes over the dead one's partitions
  (rebuilt from the log) within 10 s of that, the hands go on and settle, the bots (following
  the redirect through ``TableRouter``) keep playing, and ``rummy replay`` verifies every hand;
- a rolling restart of both instances (SIGTERM, then a new process on the same ports): a stopped
  instance leaves the group at once, so the other serves its tables before any session could
  have timed out, and no bot command is lost. Its instances keep a group session of
  ``ROLLING_SESSION_S`` (30 s): the soonest a handover that waited for the stopped member's
  session could happen is that session less one heartbeat (25 s) after the stop, while leaving
  the group costs at most a heartbeat of the other's (5 s) and its rebuild, so the two stay far
  apart on a loaded machine (with the default 6 s session they would be 5 s and about as much).

Tables of 4 seats with two bots each, turns of 300 s (30 s at the stack's clock speed: no
deadline passes during a takeover), point value 10 hundredths (every hand is reserved and
settled).
"""

from __future__ import annotations

import random
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field

import grpc
import pytest
from click.testing import CliRunner

from rummy.table.v1 import events_pb2 as pb
from rummy.table.v1 import table_service_pb2 as api
from rummy_ops.bots.client import Bot
from rummy_ops.bots.strategy import BotBrain, Temperament
from rummy_ops.cli import main
from rummy_platform.auth import Role, TokenAuthority, bearer_metadata
from rummy_platform.eventlog import KafkaEventLog
from rummy_platform.eventlog.kafka_client import group_consumer_config
from rummy_platform.topics import TABLE_EVENTS
from rummy_table.contract import TableRouter
from rummy_testing.players import SHOES, Operator, rule_set
from rummy_testing.processes import ExtraService, kill_stack_service, stop_stack_service
from rummy_testing.stacks import RunningStack, running_stack

SESSION_S = 6.0  # the table service's default group session (RUMMY_TABLE_SESSION_SECONDS)
TAKEOVER_S = 10.0  # after the group noticed
ROLLING_SESSION_S = 30  # the rolling restart's group session (RUMMY_TABLE_SESSION_SECONDS)


def heartbeat_s(session_s: float) -> float:
    """Seconds between the heartbeats of a table instance whose group session is ``session_s``
    seconds (the event log's group member configuration, which the instance uses)."""
    config = group_consumer_config({}, session_timeout_s=session_s)
    return float(config["heartbeat_interval_ms"]) / 1000


def session_lapse_s(session_s: float) -> float:
    """The soonest (seconds after a member stops) the group could hand its partitions over by
    its session lapsing: the broker drops a member ``session_s`` after its last heartbeat, which
    it sent at most one heartbeat before it stopped. A handover sooner than that came from the
    member leaving the group."""
    return session_s - heartbeat_s(session_s)


def authority(stack: RunningStack) -> TokenAuthority:
    return TokenAuthority.of_issuer(stack.endpoints.token_keys)


@pytest.fixture
def stack(kafka_bootstrap: str, database_url: str) -> Iterator[RunningStack]:
    with running_stack(kafka_bootstrap, database_url, "takeover") as running:
        yield running


@pytest.fixture
def rolling_stack(kafka_bootstrap: str, database_url: str) -> Iterator[RunningStack]:
    """The stack with its table instances on a ``ROLLING_SESSION_S`` group session."""
    with running_stack(
        kafka_bootstrap,
        database_url,
        "rolling",
        extra_env={"RUMMY_TABLE_SESSION_SECONDS": str(ROLLING_SESSION_S)},
    ) as running:
        yield running


@dataclass
class Room:
    """Tables with two bots each, reached through one router per table over ``addresses``."""

    stack: RunningStack
    addresses: list[str]
    operator: Operator = field(init=False)
    log: KafkaEventLog = field(init=False)
    tables: list[str] = field(default_factory=list)
    bots: list[Bot] = field(default_factory=list)
    routers: dict[str, TableRouter] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.operator = Operator(
            self.stack.endpoints.table, self.stack.endpoints.ledger, authority(self.stack)
        )
        self.log = KafkaEventLog(self.stack.kafka_bootstrap)

    def open(self, per_instance: int = 2, most: int = 12) -> dict[str, list[str]]:
        """Open tables until every instance serves ``per_instance`` (at most ``most``);
        returns the tables by the address serving them."""
        rng = random.Random(5)
        rules = rule_set(turn_seconds=300, seed_window_seconds=2, start_delay_seconds=2)
        run = uuid.uuid4().hex[:6]
        for n in range(most):
            table_id = self.operator.open_table(4, 10, 500, rules)
            router = TableRouter(self.addresses)
            self.tables.append(table_id)
            self.routers[table_id] = router
            for seat in range(2):
                account = f"takeover-{run}-{n}-{seat}"
                self.operator.grant(account, 1_000_000)
                token = authority(self.stack).issue(account, Role.PLAYER, 3600)
                brain = BotBrain(
                    seed=rng.getrandbits(64),
                    temperament=Temperament(),
                )
                bot = Bot(account, token, router, table_id, SHOES[4], brain)
                bot.take_seat()
                self.bots.append(bot)
            split = self.by_owner()
            if len(split) == len(self.addresses) and all(
                len(v) >= per_instance for v in split.values()
            ):
                break
        for bot in self.bots:
            bot.start()
        return self.by_owner()

    def by_owner(self) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        for table_id, router in self.routers.items():
            found.setdefault(router.address_for(table_id), []).append(table_id)
        return found

    def hands_ended(self) -> dict[str, int]:
        topic = self.stack.topic_prefix + TABLE_EVENTS
        return {
            t: sum(
                isinstance(r.envelope.payload, pb.HandEnded) for r in self.log.read_stream(topic, t)
            )
            for t in self.tables
        }

    def wait_hands(self, more: int, since: dict[str, int], timeout_s: float = 240) -> None:
        """Until every table ended ``more`` hands past ``since``."""
        deadline = time.monotonic() + timeout_s
        while True:
            now = self.hands_ended()
            if all(now[t] >= since[t] + more for t in self.tables):
                return
            if time.monotonic() >= deadline:
                behind = [t for t in self.tables if now[t] < since[t] + more]
                raise AssertionError(
                    f"hands ended {now}, before {since}; behind: {behind}\n{self.diagnosis(behind)}"
                )
            time.sleep(1)

    def diagnosis(self, behind: list[str]) -> str:
        """What a failure message needs to tell a wedged table from a dead bot: each table's last
        event on its stream and the view its instance serves now, every bot's state and notes,
        and the tails of the services' logs (with the lines naming the ``behind`` tables)."""
        topic = self.stack.topic_prefix + TABLE_EVENTS
        lines = ["tables (last event on the stream | view served now):"]
        for t in self.tables:
            records = list(self.log.read_stream(topic, t))
            last = records[-1].envelope if records else None
            event = f"v{last.stream_version} {last.type}" if last is not None else "no event"
            lines.append(f"  {t}: {event} | {self.served_view(t)}")
        lines.append("bots:")
        for b in self.bots:
            s = b.stats
            lines.append(
                f"  {b.account_id} table {b.table_id} seat {b.seat} alive={b.alive} "
                f"in_flight={b.in_flight} actions={s.actions} seeds={s.seeds} "
                f"refused={s.refused} errors={s.errors[-8:]}"
            )
        lines.append(self.stack.log_tails(naming=behind))
        return "\n".join(lines)

    def served_view(self, table_id: str) -> str:
        """The operator's view of ``table_id`` where its router sends calls now (or the error)."""
        router = self.routers[table_id]
        address = router.address_for(table_id)
        metadata = bearer_metadata(authority(self.stack).issue("takeover-ops", Role.OPERATOR, 60))
        try:
            call = router.stub(address).WatchTable(
                api.WatchTableRequest(table_id=table_id), metadata=metadata, timeout=5
            )
            view = next(iter(call)).view
            call.cancel()
        except grpc.RpcError as error:
            return f"{address}: {error.code().name}: {error.details()}"
        return (
            f"{address}: v{view.stream_version} hand {view.hand_no} {view.hand_id or '-'} "
            f"{api.HandPhase.Name(view.phase)} turn {view.turn_no} seat {view.turn_seat} "
            f"{api.TableState.Name(view.table_state)} seats "
            f"{[(v.seat, v.account_id, v.status, v.sitting_out_reason) for v in view.seats]}"
        )

    def actions(self) -> int:
        return sum(b.stats.actions for b in self.bots)

    def lost_commands(self) -> list[str]:
        """The bots' notes of a command that failed UNAVAILABLE (its retries ran out)."""
        return [
            note
            for b in self.bots
            for note in b.stats.errors
            if "UNAVAILABLE" in note and not note.startswith("watch:")
        ]

    def quiesce(self, quiet_s: float = 5.0, timeout_s: float = 60.0) -> None:
        """Stop the bots (each leaves: a hand being played ends) and wait until no table ended a
        hand for ``quiet_s`` seconds, so a replay reads no table while its hand ends."""
        for bot in self.bots:
            bot.stop(leave=True)
        deadline = time.monotonic() + timeout_s
        seen, since = self.hands_ended(), time.monotonic()
        while time.monotonic() - since < quiet_s and time.monotonic() < deadline:
            time.sleep(1)
            now = self.hands_ended()
            if now != seen:
                seen, since = now, time.monotonic()

    def close(self) -> None:
        for bot in self.bots:
            bot.stop(leave=False)
        for router in self.routers.values():
            router.close()
        self.operator.close()
        self.log.close()


def served_by(address: str, table_id: str, stack: RunningStack, timeout_s: float) -> float:
    """Seconds until the instance at ``address`` serves ``table_id`` (a first WatchTable view);
    raises AssertionError after ``timeout_s``."""
    started = time.monotonic()
    metadata = bearer_metadata(authority(stack).issue("takeover-watch", Role.OPERATOR, 600))
    router = TableRouter(address, wait_s=0)
    try:
        while True:
            try:
                call = router.stub(address).WatchTable(
                    api.WatchTableRequest(table_id=table_id), metadata=metadata, timeout=2
                )
                next(iter(call))
                call.cancel()
                return time.monotonic() - started
            except grpc.RpcError as error:
                elapsed = time.monotonic() - started
                assert elapsed < timeout_s, f"{table_id} not served at {address}: {error.details()}"
                time.sleep(0.2)
    finally:
        router.close()


def replay_verifies(stack: RunningStack) -> str:
    result = CliRunner().invoke(
        main,
        ["replay", "--all", *stack.replay_options(), "--quiet"],
    )
    assert result.exit_code == 0, result.output
    assert "MISMATCH" not in result.output and "replay: OK" in result.output
    return result.output.splitlines()[-1]


def test_a_killed_instance_s_tables_are_taken_over_by_the_survivor_and_every_hand_verifies(
    stack: RunningStack,
) -> None:
    first = stack.endpoints.table
    second = ExtraService(stack.stack, "table", "second", same_ports=False).start()
    room = Room(stack, [first, second.address])
    try:
        split = room.open()
        assert set(split) == {first, second.address}, split
        room.wait_hands(1, dict.fromkeys(room.tables, 0))  # hands are being played at both

        before, acted = room.hands_ended(), room.actions()
        kill_stack_service(stack.stack, "table")  # SIGKILL: no goodbye, no flush
        taken = max(
            served_by(second.address, t, stack, SESSION_S + TAKEOVER_S + 5) for t in split[first]
        )
        print(f"takeover: the survivor served the dead one's tables {taken:.1f} s after the kill")
        assert taken <= SESSION_S + TAKEOVER_S

        room.wait_hands(2, before)
        assert room.actions() > acted
        assert all(room.routers[t].address_for(t) == second.address for t in split[first])
        room.quiesce()
        print(replay_verifies(stack))
    finally:
        room.close()
        second.stop()


def test_a_rolling_restart_of_both_instances_hands_over_at_once_and_loses_no_command(
    rolling_stack: RunningStack,
) -> None:
    stack = rolling_stack
    budget = session_lapse_s(ROLLING_SESSION_S)
    first = stack.endpoints.table
    second = ExtraService(stack.stack, "table", "second", same_ports=False).start()
    second_ports = (int(second.address.rsplit(":", 1)[1]), second.metrics_port)
    room = Room(stack, [first, second.address])
    replacements: list[ExtraService] = []
    try:
        split = room.open()
        assert set(split) == {first, second.address}, split
        room.wait_hands(1, dict.fromkeys(room.tables, 0))

        before = room.hands_ended()
        stopped = time.monotonic()
        second.stop()  # SIGTERM: leaves the group at once
        for t in split[second.address]:
            served_by(first, t, stack, budget)
        handed = time.monotonic() - stopped
        print(
            f"rolling restart: the other instance served the stopped one's tables {handed:.1f} s "
            f"after SIGTERM (a lapsed session: {budget:.0f} s at the soonest)"
        )
        assert handed < budget
        replacements.append(
            ExtraService(stack.stack, "table", "second-again", ports=second_ports).start()
        )

        stopped = time.monotonic()
        stop_stack_service(stack.stack, "table")
        for t in split[first]:
            served_by(second.address, t, stack, budget)
        handed = time.monotonic() - stopped
        print(
            f"rolling restart: the replacement served the first one's tables {handed:.1f} s after"
        )
        assert handed < budget
        replacements.append(ExtraService(stack.stack, "table", "first-again").start())

        room.wait_hands(2, before)
        assert room.lost_commands() == []
        room.quiesce()
        print(replay_verifies(stack))
    finally:
        room.close()
        for process in (second, *replacements):
            process.stop()
