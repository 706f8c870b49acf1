"""The seeded scheduler: one world per seed, stepped until its hands are played, invariants
checked after every step (:mod:`rummy_sim.invariants`), a trace whose hash names the run.

Each step, from the world's one ``random.Random(seed)``, picks one of the actions enabled now:

- ``deliver <service> <topic>/<partition>``: the next record of that partition to that service's
  consumer (each partition in order; the services and partitions interleaved every way);
- ``relay <service>``: the ledger's or fairness's outbox relay publishes one row;
- ``bot <account>``: a bot reacts to its view (``rummy_ops.bots.client.Bot.reactions``), each
  call through the table's servicer;
- ``tick``: the table's hand-start ticker (``TableApp.tick``) at the virtual time;
- ``fire``: the clock publishes the deadlines due at the virtual time;
- ``advance``: the virtual clock moves to the next time anything is due (a deadline, a hand's
  start, the table's service deadline);
- with faults on, ``crash <service>`` (its memory lost, rebuilt from the log and its store),
  ``redeliver <service>`` (its consumer reads again from its last stored offsets) and
  ``lost-answer <ledger|fairness>`` (its last record's transaction committed, the answer lost:
  the record is handled again).

A world ends when ``hands`` hands have ended (or ``max_steps`` steps were taken, an ending of
its own kind, ``stalled``), after every record and outbox row left is delivered; or at the
first violation (a broken invariant, or a handler that raised something other than an outage of
the log), where it stands.
"""

from __future__ import annotations

import hashlib
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, cast

from rummy.table.v1 import events_pb2 as table_events
from rummy.table.v1 import table_service_pb2 as api
from rummy_ledger.application.reactions import Ledger
from rummy_ops.bots.client import RETRIES, UNCONFIRMED, Bot
from rummy_ops.bots.strategy import BotBrain, Temperament
from rummy_platform.envelope import type_name
from rummy_platform.errors import ServiceError
from rummy_platform.eventlog import EventLogError, TopicPartition
from rummy_rules import registry
from rummy_sim.invariants import Checks
from rummy_sim.world import SimRpcError, World

SERVICES = ("table", "dealer", "ledger", "fairness", "clock")
#: A bot's grant (hundredths of a House Token).
GRANT_HUNDREDTHS = 1_000_000
#: Relative weights of the kinds of step (a fault is rare: a few per world).
WEIGHTS = {
    "deliver": 10.0,
    "relay": 10.0,
    "bot": 10.0,
    "tick": 20.0,
    "fire": 20.0,
    "advance": 0.3,
    "crash": 0.05,
    "redeliver": 0.05,
    "lost-answer": 0.3,
    "lost-commit": 0.1,
}
#: How often a bot's answered request is sent again (a client that never saw the answer).
RESEND_PROBABILITY = 0.05
FAULTS = ("crash", "redeliver", "lost-answer", "lost-commit", "resend")
#: The transactional writers whose commit outcome may be lost.
WRITERS = ("table-writer", "dealer", "clock")
#: The services whose consumer stores its offsets in its database with each record's effects.
STORE_REACTORS = ("ledger", "fairness")
HAND_ENDED = type_name(table_events.HandEnded)
HAND_ABORTED = type_name(table_events.HandAborted)


@dataclass
class SeedRun:
    """One world's outcome: its steps, hands ended (by kind), faults (by kind), the first
    violations (invariant name and message, with the step), the trace and its hash."""

    seed: int
    steps: int = 0
    hands: int = 0
    endings: Counter[str] = field(default_factory=Counter)
    faults: Counter[str] = field(default_factory=Counter)
    violations: list[tuple[int, str, str]] = field(default_factory=list)
    trace: list[str] = field(default_factory=list)
    trace_hash: str = ""
    stalled: bool = False

    def summary(self) -> dict[str, Any]:
        first = self.violations[0] if self.violations else None
        return {
            "seed": self.seed,
            "steps": self.steps,
            "hands": self.hands,
            "endings": dict(sorted(self.endings.items())),
            "faults": dict(sorted(self.faults.items())),
            "trace_hash": self.trace_hash,
            "violation": None
            if first is None
            else {"step": first[0], "invariant": first[1], "message": first[2]},
            "reproduce": f"rummy sim --seed {self.seed}",
        }


class Simulation:
    """One seeded world of one Indian points table and its bots. ``faults``: crashes and
    redeliveries among the steps; ``ledger_type``: a planted bug (tests only)."""

    def __init__(
        self,
        seed: int,
        *,
        hands: int = 3,
        faults: bool = True,
        max_steps: int = 20_000,
        ledger_type: type[Ledger] = Ledger,
    ) -> None:
        self.world = World(seed, ledger_type=ledger_type)
        self.run = SeedRun(seed)
        self._hands = hands
        self._faults = faults
        self._max_steps = max_steps
        self.checks = Checks(self.world)
        self._views: dict[str, tuple[object, int, api.PlayerView]] = {}
        #: Violations a step found itself (a resent request answered differently).
        self._broken: list[tuple[str, str]] = []
        rng = self.world.rng
        self.seats = rng.randint(2, 6)
        self.bots = self._open_table(rng.choice([10, 25, 100]), rng.choice([0, 500, 1000]))

    # -- setup ------------------------------------------------------------------------------

    def _open_table(self, point_value: int, commission_bps: int) -> list[Bot]:
        world = self.world
        variant = registry.lookup("indian-points")
        reply = world.table.call(
            "sim-operator",
            "OpenTable",
            api.OpenTableRequest(
                client_request_id=world.draws.uuid(),
                seat_count=self.seats,
                point_value_hundredths=point_value,
                commission_bps=commission_bps,
                name="sim",
            ),
            operator=True,
        )
        self.table_id: str = reply.table_id
        shoe = variant.house_rule_set(self.seats, 0, 0).shoe
        bots = []
        for index in range(self.seats):
            account = f"sim-bot-{index}"
            world.ledger.grant(account, GRANT_HUNDREDTHS, f"grant-{account}")
            self.checks.granted += GRANT_HUNDREDTHS
            temperament = Temperament(
                stall_turn=world.rng.choice([0.0, 0.05, 0.2]),
                blunder=world.rng.choice([0.0, 0.05]),
                give_up=world.rng.choice([0.1, 0.3]),
            )
            brain = BotBrain(world.rng.getrandbits(64), temperament, variant.name)
            bot = Bot(
                account,
                "",
                cast(Any, None),  # no router: the simulator makes each call itself
                self.table_id,
                shoe,
                brain,
                new_request_id=world.draws.uuid,
            )
            request = api.TakeSeatRequest(
                table_id=self.table_id, client_request_id=world.draws.uuid()
            )
            bot.seat = world.table.call(account, "TakeSeat", request).seat
            self.checks.answered(account, request.client_request_id, "TakeSeat")
            bots.append(bot)
        # the grants' outbox rows and the table's first events are the world's first records
        return bots

    # -- the scheduler -----------------------------------------------------------------------

    def enabled(self) -> list[tuple[str, ...]]:
        """Every action possible now, in a fixed order (the seed picks among them)."""
        world = self.world
        actions: list[tuple[str, ...]] = []
        for name in SERVICES:
            for tp in world.service(name).inputs.pending():
                actions.append(("deliver", name, tp.topic, str(tp.partition)))
        actions.extend(("relay", name) for name in world.relay_pending())
        for bot in self.bots:
            if self._may_act(bot):
                actions.append(("bot", bot.account_id))
        now = world.clock.ms
        start = self._start_due()
        if start is not None and start <= now:
            actions.append(("tick",))
        if world.clock_service.app.due(world.clock.now()):
            actions.append(("fire",))
        actions.append(("advance",))
        if self._faults:
            for name in SERVICES:
                actions.append(("crash", name))
                if name != "clock":
                    actions.append(("redeliver", name))
            for name in STORE_REACTORS:
                if world.service(name).inputs.last_handled is not None:
                    actions.append(("lost-answer", name))
            actions.extend(("lost-commit", writer) for writer in WRITERS)
        return actions

    def _may_act(self, bot: Bot) -> bool:
        view = self._view(bot)
        if view.phase == api.HAND_PHASE_SEEDING:
            return True
        return view.phase == api.HAND_PHASE_PLAYING and view.turn_seat == view.my_seat

    def _view(self, bot: Bot) -> api.PlayerView:
        """The bot's view of the table (what its WatchTable stream renders), rendered again only
        when the table's stream moved on."""
        app = self.world.table.app
        table = app.projection.tables[self.table_id]
        cached = self._views.get(bot.account_id)
        if cached is not None and cached[0] is app and cached[1] == table.version:
            return cached[2]
        view = cast(api.PlayerView, app.view(bot.account_id, self.table_id))
        self._views[bot.account_id] = (app, table.version, view)
        return view

    def _start_due(self) -> int | None:
        app = self.world.table.app
        table = app.projection.tables.get(self.table_id)
        return None if table is None else table.start_due_ms(app.speed)

    def step(self) -> str:
        """Pick and take one action; returns its trace line."""
        actions = self.enabled()
        weights = [WEIGHTS[a[0]] for a in actions]
        action = self.world.rng.choices(actions, weights)[0]
        return " ".join(action) + " -> " + self._take(action)

    def _take(self, action: tuple[str, ...]) -> str:
        world, kind = self.world, action[0]
        if kind == "deliver":
            name, topic, partition = action[1], action[2], int(action[3])
            try:
                records = world.service(name).inputs.deliver(TopicPartition(topic, partition))
            except EventLogError as error:
                return f"outage ({type(error).__name__}): rewound"
            except Exception as error:  # a handler's bug: the world stops at it
                self._broken.append(("handler", f"{name} raised {error!r}"))
                return f"raised {type(error).__name__}"
            return (
                ",".join(f"{r.offset}:{r.envelope.type.rsplit('.', 1)[-1]}" for r in records) or "-"
            )
        if kind == "relay":
            envelope = world.relay(action[1])
            return envelope.type.rsplit(".", 1)[-1]
        if kind == "bot":
            return self._bot(next(b for b in self.bots if b.account_id == action[1]))
        if kind == "tick":
            try:
                return ",".join(world.table.app.tick()) or "-"
            except (EventLogError, ServiceError) as error:
                return f"outage ({type(error).__name__})"
        if kind == "fire":
            try:
                return ",".join(e.type.rsplit(".", 1)[-1] for e in world.clock_service.fire())
            except EventLogError as error:
                # the deadlines stay pending: they fire again, under the same event ids
                return f"outage ({type(error).__name__})"
        if kind == "advance":
            world.clock.ms = self._next_time()
            return str(world.clock.ms)
        self.run.faults[f"{kind}-{action[1]}"] += 1
        if kind == "crash":
            world.restart(action[1])
        elif kind == "lost-commit":
            landed = world.rng.random() < 0.5
            world.lose_commit(action[1], landed=landed)
            return "landed" if landed else "not landed"
        elif kind == "lost-answer":
            world.lose_answer(action[1])
        else:
            world.redeliver(action[1])
        return "ok"

    def _next_time(self) -> int:
        """The next time anything is due after now: a deadline, a hand's start, the table's
        service deadline for a hand waiting on another service; else one second on."""
        world = self.world
        now = world.clock.ms
        candidates = []
        due = world.clock_service.app.next_due()
        if due is not None:
            candidates.append(int(due.timestamp() * 1000))
        start = self._start_due()
        if start is not None:
            candidates.append(start)
        later = [c for c in candidates if c > now]
        return min(later) if later else now + 1_000

    def _bot(self, bot: Bot) -> str:
        """The bot's reactions to its view, each call made on the table's servicer (an answer
        that leaves the outcome open retried with the same request, as the bot's client does;
        with faults on, now and then an answered request sent again); the calls made."""
        calls: list[str] = []
        steps = bot.reactions(self._view(bot))
        try:
            call = next(steps)
            while True:
                rpc, request = call
                try:
                    reply = self._send(bot, rpc, request, calls)
                except SimRpcError as error:
                    call = steps.throw(error)
                else:
                    request_id: str = getattr(request, "client_request_id", "")
                    self.checks.answered(bot.account_id, request_id, rpc)
                    if self._faults and self.world.rng.random() < RESEND_PROBABILITY:
                        self._resend(bot, rpc, request, reply, calls)
                    call = steps.send(reply)
        except StopIteration:
            pass
        return ",".join(calls) or "-"

    def _send(self, bot: Bot, rpc: str, request: Any, calls: list[str]) -> Any:
        for attempt in range(RETRIES + 1):
            try:
                reply = self.world.table.call(bot.account_id, rpc, request)
            except SimRpcError as error:
                calls.append(f"{rpc}:{error.code().name}")
                if error.code() not in UNCONFIRMED or attempt == RETRIES:
                    raise
            else:
                calls.append(f"{rpc}:OK")
                return reply
        raise AssertionError("unreachable")

    def _resend(self, bot: Bot, rpc: str, request: Any, reply: Any, calls: list[str]) -> None:
        """The same request again: the table answers it from its first events (its first
        answer again, nothing appended: the commands invariant sees any second record)."""
        self.run.faults["resend"] += 1
        try:
            again = self._send(bot, rpc, request, calls)
        except SimRpcError as error:
            self._broken.append(
                ("commands", f"{rpc} {request.client_request_id} resent: {error.code().name}")
            )
            return
        if again != reply:
            self._broken.append(
                ("commands", f"{rpc} {request.client_request_id} resent: another answer")
            )

    # -- the whole world ---------------------------------------------------------------------

    def play(self) -> SeedRun:
        """Step until the hands are played (or ``max_steps``), drain, check the end; the run."""
        run = self.run
        while run.hands < self._hands and run.steps < self._max_steps and not run.violations:
            self._record(self.step())
        if not run.violations:  # a broken world stops at its first violation, as it is
            run.stalled = run.hands < self._hands
            self._drain()
            for message in self.checks.at_end():
                run.violations.append((run.steps, *message))
        run.trace_hash = self._hash()
        return run

    def _record(self, line: str) -> None:
        run = self.run
        run.steps += 1
        run.trace.append(f"{run.steps} {line}")
        found, self._broken = [*self._broken, *self.checks.after_step()], []
        for invariant, message in found:
            run.violations.append((run.steps, invariant, message))
        for kind in self.checks.take_endings():
            run.hands += 1
            run.endings[kind] += 1

    def _drain(self) -> None:
        """Deliver every record and outbox row left (no bot, timer or fault), in the seed's
        order, so the end's checks see a quiet world."""
        while True:
            actions = [a for a in self.enabled() if a[0] in ("deliver", "relay")]
            if not actions:
                return
            action = self.world.rng.choice(actions)
            self._record(" ".join(action) + " -> " + self._take(action))

    def _hash(self) -> str:
        """SHA-256 of the trace and of every record in the log (topic, partition, offset, bytes)."""
        digest = hashlib.sha256()
        for line in self.run.trace:
            digest.update(line.encode() + b"\n")
        for topic, tp_records in self.world.log_contents():
            for offset, value in tp_records:
                digest.update(f"{topic}:{offset}:".encode() + value)
        return digest.hexdigest()


def run_seed(seed: int, **options: Any) -> SeedRun:
    """One world for ``seed`` (options: :class:`Simulation`'s)."""
    return Simulation(seed, **options).play()


def run_seeds(seeds: Iterable[int], **options: Any) -> dict[str, Any]:
    """Run each seed; the summary ``rummy sim --json`` prints: ``seeds``, ``hands``, ``steps``,
    ``endings`` and ``faults`` by kind, ``stalled`` (worlds that did not play their hands in
    ``max_steps``), ``violations`` (one line per failing seed), ``hands_per_cpu_s``."""
    began = time.process_time()
    total: dict[str, Any] = {"seeds": 0, "hands": 0, "steps": 0, "stalled": 0}
    endings: Counter[str] = Counter()
    faults: Counter[str] = Counter()
    violations = []
    hashes = hashlib.sha256()
    for seed in seeds:
        run = run_seed(seed, **options)
        total["seeds"] += 1
        total["hands"] += run.hands
        total["steps"] += run.steps
        total["stalled"] += run.stalled
        endings.update(run.endings)
        faults.update(run.faults)
        hashes.update(run.trace_hash.encode())
        if run.violations:
            violations.append(run.summary())
    cpu = time.process_time() - began
    total["endings"] = dict(sorted(endings.items()))
    total["faults"] = dict(sorted(faults.items()))
    total["violations"] = violations
    total["cpu_s"] = round(cpu, 3)
    total["hands_per_cpu_s"] = round(total["hands"] / cpu, 2) if cpu > 0 else 0.0
    total["trace_hash"] = hashes.hexdigest()
    return total
