"""A fuzz of the gRPC surface of the running services (``rummy_testing.stacks``).

:class:`FuzzWorld` sets up a live world through the public API (a four-seat table with three
players granted House Tokens, a second table, an outsider and a player never granted anything,
the operator's and a service token), keeps a hand going there, and sends what
:func:`rummy_testing.fuzz_requests.draw_attempt` draws from the live state, one request at a
time. Each answer is checked:

- its status is one the API documents (:data:`DOCUMENTED`), never INTERNAL or UNKNOWN;
- a rejected request, or an accepted one that only reads, leaves the end offset of every
  partition of the five event topics and every ledger balance and reservation as they were.

Rejections must change nothing *synchronously*; so that nothing else changes the topics while
a request is judged, the world is kept quiet: turns of an hour and a seed window of ten minutes
(the clock runs at real speed), so no deadline fires, and after every accepted request the fuzz
waits until the other services' reactions are done (the table in a phase that waits for a
player, every offset still for a while).

:class:`Tally` counts the requests by RPC and status, how many reached the rules' ``decide``
(the table service's ``rummy_table_rules_decisions_total`` read from /metrics before and after),
and keeps every INTERNAL/UNKNOWN (or other undocumented status) and every changed state with a
repro. The driver's own moves (seating players, contributing seeds, playing a turn the fuzz did
not play for a while, dropping to end a long hand) are counted apart.
"""

from __future__ import annotations

import contextlib
import time
import urllib.request
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import grpc
import psycopg
from google.protobuf.message import Message
from hypothesis import HealthCheck, Phase, given, settings
from kafka import KafkaConsumer
from kafka import TopicPartition as KafkaTopicPartition
from prometheus_client.parser import text_string_to_metric_families

from rummy.clock.v1 import clock_service_pb2_grpc as clock_grpc
from rummy.common.v1 import cards_pb2
from rummy.dealer.v1 import dealer_service_pb2_grpc as dealer_grpc
from rummy.fairness.v1 import fairness_service_pb2_grpc as fairness_grpc
from rummy.ledger.v1 import ledger_service_pb2 as ledger_api
from rummy.ledger.v1 import ledger_service_pb2_grpc as ledger_grpc
from rummy.table.v1 import table_service_pb2 as api
from rummy.table.v1 import table_service_pb2_grpc as table_grpc
from rummy_ops.causation import caused_by, request_keys
from rummy_platform.auth import Role, TokenAuthority, bearer_metadata
from rummy_platform.envelope import Envelope, decode, event_payloads, type_name
from rummy_platform.eventlog import KafkaEventLog, TopicPartition
from rummy_platform.tls import dial
from rummy_platform.topics import EVENT_TOPICS
from rummy_testing.fuzz_requests import (
    HAND_RPCS,
    READ_ONLY,
    RPC_WEIGHTS,
    RPCS,
    Account,
    Attempt,
    Builder,
    Draws,
    Live,
    Tokens,
    TurnFields,
    draw_attempt,
    draws,
)
from rummy_testing.players import SHOES, STOCK, Operator, Player, Table, request_id, rule_set
from rummy_testing.stacks import RunningStack

#: The statuses the API documents; anything else (INTERNAL, UNKNOWN, DEADLINE_EXCEEDED, ...)
#: is a finding.
DOCUMENTED = frozenset(
    {
        grpc.StatusCode.OK,
        grpc.StatusCode.INVALID_ARGUMENT,
        grpc.StatusCode.FAILED_PRECONDITION,
        grpc.StatusCode.PERMISSION_DENIED,
        grpc.StatusCode.NOT_FOUND,
        grpc.StatusCode.UNAUTHENTICATED,
        grpc.StatusCode.ALREADY_EXISTS,
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        grpc.StatusCode.OUT_OF_RANGE,
    }
)
#: The rules library's commands a player's request becomes (the service's own inputs, such as
#: TurnTimeout or Deal, are not requests of the fuzz).
PLAYER_COMMANDS = frozenset(
    {
        "DrawFromStock",
        "DrawFromDiscardPile",
        "Discard",
        "Declare",
        "Drop",
        "ContributeClientSeed",
        "LeaveHand",
    }
)
DECISIONS_METRIC = "rummy_table_rules_decisions"
#: Lifetime of the fuzz's valid tokens (within every role's longest): a run lasts minutes.
TOKEN_TTL_SECONDS = 3600
GRANT = 10_000_000  # hundredths granted to each player: thousands of hands of reservations
CALL_TIMEOUT_SECONDS = 20.0
SETTLE_TIMEOUT_SECONDS = 60.0
#: The driver plays the turn itself once the fuzz left it unchanged this many requests, and
#: ends a hand (drops) once it has lasted this many turns.
IDLE_REQUESTS = 12
MAX_TURNS = 14
TRACKED = (grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN)
#: Seconds every offset must stand still, once the main table waits for a player, before the
#: world counts as quiet; and once no hand runs (a settlement or reveal may still be on its way).
QUICK_STILL_SECONDS = 0.05
SLOW_STILL_SECONDS = 0.6
_UNPUBLISHED = (
    "SELECT (SELECT count(*) FROM ledger.outbox WHERE published_at IS NULL)"
    " + (SELECT count(*) FROM fairness.outbox WHERE published_at IS NULL)"
)


@dataclass
class Finding:
    """An answer the API does not document, or a state changed by a request that must not."""

    what: str
    attempt: str
    mutation: str
    actor: str
    status: str
    details: str
    count: int = 1

    def line(self) -> str:
        seen = f" (x{self.count})" if self.count > 1 else ""
        return (
            f"{self.what}{seen}: {self.attempt} [{self.mutation}; as {self.actor}] -> "
            f"{self.status}: {self.details[:160]}"
        )


@dataclass
class Tally:
    """What the fuzz sent and got. ``by_status``: status name -> count; ``by_rpc``: (rpc,
    status) -> count; ``decided``: (command, outcome) -> decisions of the rules counted by the
    table service during the run (the driver's moves included)."""

    requests: int = 0
    driver_requests: int = 0
    #: The driver's moves that the rules judged (seeds, draws, discards, drops).
    driver_decisions: int = 0
    by_status: Counter[str] = field(default_factory=Counter)
    by_rpc: Counter[tuple[str, str]] = field(default_factory=Counter)
    by_mutation: Counter[str] = field(default_factory=Counter)
    findings: dict[tuple[str, str, str], Finding] = field(default_factory=dict)
    #: The first details of each (rpc, status) that is not OK, to read what a refusal says.
    samples: dict[tuple[str, str], str] = field(default_factory=dict)
    changed: list[Finding] = field(default_factory=list)
    stalls: list[str] = field(default_factory=list)
    #: Rejected or read-only requests answered while the hand's own flow appended (events caused
    #: by other services' events or other requests, none by the request: see ``_background``).
    background_changes: int = 0
    decided: Counter[tuple[str, str]] = field(default_factory=Counter)
    hands_played: int = 0
    seconds: float = 0.0

    @property
    def reached_decide(self) -> int:
        """Fuzzed requests the rules judged: every decision on a player's command the table
        service counted, less the driver's own moves."""
        judged = sum(n for (command, _), n in self.decided.items() if command in PLAYER_COMMANDS)
        return judged - self.driver_decisions

    @property
    def internal(self) -> int:
        return sum(self.by_status[c.name] for c in TRACKED)

    def note(self, attempt: Attempt, code: grpc.StatusCode, details: str) -> None:
        self.requests += 1
        self.by_status[code.name] += 1
        self.by_rpc[(attempt.rpc, code.name)] += 1
        self.by_mutation[attempt.mutation.split("=")[0].split(":")[0]] += 1
        if code != grpc.StatusCode.OK:
            self.samples.setdefault(
                (attempt.rpc, code.name), f"{details[:120]} [{attempt.mutation}]"
            )
        if code in DOCUMENTED:
            return
        key = (attempt.rpc, _mutation_kind(attempt.mutation), code.name)
        if key in self.findings:
            self.findings[key].count += 1
            return
        self.findings[key] = Finding(
            "undocumented status",
            attempt.describe(),
            attempt.mutation,
            attempt.actor,
            code.name,
            details,
        )

    def report(self, samples: bool = False) -> str:
        """The figures, then every finding with its repro (and with ``samples`` what the first
        refusal of each RPC and status said)."""
        lines = [
            f"requests: {self.requests} (and {self.driver_requests} moves of the driver) in "
            f"{self.seconds:.0f} s, {self.hands_played} hands",
            "by status: " + ", ".join(f"{k} {v}" for k, v in self.by_status.most_common()),
            f"reached the rules' decide: {self.reached_decide} of the {self.requests} requests "
            f"(all player commands judged, the driver's {self.driver_decisions} included: "
            f"{_outcomes(self.decided)})",
            f"INTERNAL or UNKNOWN: {self.internal}",
            f"undocumented statuses: {sum(f.count for f in self.findings.values())}, "
            f"state changed by a rejected or read-only request: {len(self.changed)} (and "
            f"{self.background_changes} answered while the hand flow alone appended), "
            f"stalls: {len(self.stalls)}",
        ]
        lines += ["  " + f.line() for f in self.findings.values()]
        lines += ["  " + f.line() for f in self.changed]
        lines += ["  stall: " + s for s in self.stalls]
        per_rpc: dict[str, list[str]] = {}
        for (rpc, status), n in sorted(self.by_rpc.items()):
            per_rpc.setdefault(rpc, []).append(f"{status} {n}")
        lines.append("by RPC: " + "; ".join(f"{r}: {', '.join(s)}" for r, s in per_rpc.items()))
        if samples:
            lines += [f"  {r} {c}: {text}" for (r, c), text in sorted(self.samples.items())]
        return "\n".join(lines)


def _mutation_kind(mutation: str) -> str:
    return mutation.split("=")[0].split(" (")[0]


def _outcomes(decided: Counter[tuple[str, str]]) -> str:
    by: Counter[str] = Counter()
    for (command, outcome), n in decided.items():
        if command in PLAYER_COMMANDS:
            by[outcome] += n
    return ", ".join(f"{k} {v}" for k, v in by.most_common())


class Stall(Exception):
    """The world did not come back to a quiet state in time."""


class FuzzWorld:
    """The live world of the fuzz on a running stack (see the module doc). Use as a context
    manager (closes the watches and channels)."""

    def __init__(self, running: RunningStack) -> None:
        self.running = running
        stack = running.stack
        self.authority = TokenAuthority.of_issuer(running.endpoints.token_keys)
        self.operator = Operator(stack.address("table"), stack.address("ledger"), self.authority)
        self.tally = Tally()
        # Over TLS the fuzz presents the table's certificate: its service tokens act as the
        # service role, as in plaintext (tests/test_grpc_tls.py tests the certificate rule).
        tls = stack.client_tls("table")
        self._channels = {name: dial(stack.address(name), (), tls) for name in _STUBS}
        self._methods: dict[str, Callable[..., Any]] = {}
        for name, stub_class in _STUBS.items():
            stub = stub_class(self._channels[name])
            for rpc in RPCS[name]:
                self._methods[rpc] = getattr(stub, rpc)
        self._log = KafkaEventLog(running.kafka_bootstrap, client_id="grpc-fuzz")
        self._partitions = self._all_partitions()
        self._db = psycopg.connect(running.database_url, autocommit=True)
        self._registry = event_payloads()
        run = uuid.uuid4().hex[:6]
        # The main table: hour-long turns and a ten-minute seed window, so no deadline fires
        # while the fuzz runs; a one-second start delay.
        rules = rule_set(turn_seconds=3600, seed_window_seconds=600, start_delay_seconds=1)
        self.table = Table(self.operator, stack.address("table"), 4, 10, 500, rules)
        # A second table whose hands never start (an hour's start delay): seats to take.
        quiet = rule_set(turn_seconds=3600, seed_window_seconds=600, start_delay_seconds=3600)
        self.other_table_id = self.operator.open_table(4, 10, 500, quiet)
        self.members = [self.table.player(f"fuzz{i}-{run}", grant=GRANT) for i in range(3)]
        self.outsider = self.table.player(f"fuzz-out-{run}", grant=GRANT)
        self.stranger = self.table.player(f"fuzz-poor-{run}")  # never granted
        self.spectator = Player(
            "operator",
            self.operator.authority.issue("fuzz-ops", Role.OPERATOR, TOKEN_TTL_SECONDS),
            dial(stack.address("table"), ()),
            self.table.table_id,
            4,
        ).watch()
        players = [*self.members, self.outsider, self.stranger]
        self.by_account = {p.account_id: p for p in players}
        self.tokens = Tokens(
            self.authority,
            {p.account_id: Account(p.account_id, p.token) for p in players},
            operator=self.authority.issue(f"fuzz-operator-{run}", Role.OPERATOR, TOKEN_TTL_SECONDS),
            service=self.authority.issue(f"fuzz-service-{run}", Role.SERVICE, TOKEN_TTL_SECONDS),
        )
        grantees = [*self.by_account, *(f"fuzz-grantee{i}-{run}" for i in range(3))]
        self.builder = Builder(self.tokens, grantees, limits_account=self.stranger.account_id)
        self.past_hands: list[str] = []
        self._drawn: dict[tuple[str, int], int] = {}  # (hand, turn) -> card index drawn
        self._idle = 0
        self._last_key: tuple[object, ...] = ()
        self._closed = False
        for p in self.members:
            p.take_seat()
            self.tally.driver_requests += 1
        self._snapshot = self.settle()
        self._decisions_before = self.decisions()
        self._started = time.monotonic()

    def __enter__(self) -> FuzzWorld:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self.tally.decided = self.decisions() - self._decisions_before
        self.tally.seconds = time.monotonic() - self._started
        self.spectator.stop()
        self.table.close()
        self.operator.close()
        for channel in self._channels.values():
            channel.close()
        self._log.close()
        self._db.close()

    # -- observing ---------------------------------------------------------------------------

    def _all_partitions(self) -> list[TopicPartition]:
        reader = self._log._get_reader()  # noqa: SLF001 - partition metadata of the log's reader
        found = []
        for topic in EVENT_TOPICS:
            name = self.running.topic_prefix + topic
            for partition in sorted(reader.partitions_for_topic(name) or ()):
                found.append(TopicPartition(name, partition))
        assert found, "no event topics found"
        return found

    def state(self) -> tuple[dict[TopicPartition, int], tuple[tuple[Any, ...], ...]]:
        """The end offset of every partition of the five topics, and every ledger balance and
        reservation (account, balance, reserved hundredths)."""
        offsets = self._log.end_offsets(self._partitions)
        balances = tuple(
            self._db.execute(
                "SELECT account_id, balance, reserved FROM ledger.balances ORDER BY account_id"
            ).fetchall()
        )
        return offsets, balances

    def appended(self, before: tuple[Any, Any], after: tuple[Any, Any]) -> list[Envelope]:
        """The events appended between two states, in partition order."""
        moved = {tp: (before[0].get(tp, 0), end) for tp, end in after[0].items()}
        moved = {tp: span for tp, span in moved.items() if span[0] != span[1]}
        if not moved:
            return []
        consumer = KafkaConsumer(
            bootstrap_servers=self.running.kafka_bootstrap.split(","),
            group_id=None,
            enable_auto_commit=False,
            isolation_level="read_committed",
        )
        found = []
        try:
            for tp, (start, end) in moved.items():
                ktp = KafkaTopicPartition(tp.topic, tp.partition)
                consumer.assign([ktp])
                consumer.seek(ktp, start)
                deadline = time.monotonic() + 10
                while consumer.position(ktp) < end and time.monotonic() < deadline:
                    for message in consumer.poll(timeout_ms=500).get(ktp, []):
                        if message.offset < end:
                            found.append(decode(message.value, self._registry))
        finally:
            consumer.close(autocommit=False)
        return found

    def decisions(self) -> Counter[tuple[str, str]]:
        """The table service's count of the rules' decisions, from its /metrics."""
        with urllib.request.urlopen(self.running.metrics_url("table"), timeout=10) as reply:
            text = reply.read().decode()
        found: Counter[tuple[str, str]] = Counter()
        for family in text_string_to_metric_families(text):
            if family.name != DECISIONS_METRIC:
                continue
            for sample in family.samples:
                if sample.name.endswith("_total"):
                    found[(sample.labels["command"], sample.labels["outcome"])] += int(sample.value)
        return found

    def live(self) -> Live:
        view = self.spectator.view
        seats = {
            a: p.view.my_seat for a, p in self.by_account.items() if p.view.HasField("my_seat")
        }
        dealt = tuple(
            s.account_id for s in view.seats if s.dealt_in and s.account_id in self.by_account
        )
        hands = {
            account: tuple(c.index for c in self.by_account[account].view.my_cards)
            for account in dealt
        }
        turn_account = None
        if view.phase == api.HAND_PHASE_PLAYING:
            turn_account = next(
                (s.account_id for s in view.seats if s.seat == view.turn_seat and s.dealt_in),
                None,
            )
        shoe = SHOES[4]
        return Live(
            table_id=self.table.table_id,
            other_table_id=self.other_table_id,
            phase=view.phase,
            hand_id=view.hand_id,
            turn_no=view.turn_no,
            turn_account=turn_account,
            has_drawn=view.has_drawn,
            discard_pile=tuple(c.index for c in view.discard_pile),
            stock_count=view.stock_count,
            hands=hands,
            seats=seats,
            dealt=dealt,
            past_hands=tuple(self.past_hands[-5:]),
            shoe_size=len(shoe.cards),
            face_of=lambda i: shoe.index_to_card(i).face,
            legal_moves=(
                tuple(self.by_account[turn_account].view.legal_moves)
                if turn_account is not None and turn_account in self.by_account
                else ()
            ),
        )

    def _quiet(self) -> float | None:
        """How long the offsets must have stood still for the world to count as quiet now, or
        None while it cannot be: the main table must wait for a player (a hand being played with
        a stock, or the seed window open: both come only after every other service reacted to
        what came before, in stream order) or be unable to start a hand; every player's view
        must have caught up (and :meth:`settle` sees the outboxes of the ledger and fairness
        published before it reads the offsets). A hand
        that ended (or no hand) gets a longer still time: its settlement and reveal are not
        gated by a phase."""
        view = self.spectator.view
        version = view.stream_version
        if any(p.view.stream_version != version for p in self.by_account.values()):
            return None
        if view.phase == api.HAND_PHASE_PLAYING:
            return QUICK_STILL_SECONDS if view.stock_count > 0 else None
        if view.phase == api.HAND_PHASE_SEEDING:  # opens once stakes and commitment are in
            return QUICK_STILL_SECONDS
        if view.phase in (api.HAND_PHASE_RESERVING, api.HAND_PHASE_DEALING):
            return None
        sitting_out = {s.account_id for s in view.seats if s.sitting_out_reason}
        eligible = self.seated() - sitting_out
        return SLOW_STILL_SECONDS if len(eligible) < 2 else None

    def seated(self) -> set[str]:
        """The fuzz's accounts seated at the main table, each from its own view (the table's
        seats view also shows a seat that left during the hand, until the next hand)."""
        return {a for a, p in self.by_account.items() if p.view.HasField("my_seat")}

    def current_version(self) -> int:
        """The main table's stream version now: the first snapshot of a fresh WatchTable is
        taken after every append the service has answered for (the followed views may lag)."""
        call = self.spectator.stub.WatchTable(
            api.WatchTableRequest(table_id=self.table.table_id),
            metadata=self.spectator.metadata,
            timeout=CALL_TIMEOUT_SECONDS,
        )
        try:
            return int(next(call).view.stream_version)
        finally:
            call.cancel()

    def settle(self) -> tuple[Any, Any]:
        """Wait until the world is quiet (:meth:`_quiet`), the followed views showing at least
        the main table's version of now; returns the state then. Raises Stall after
        SETTLE_TIMEOUT_SECONDS."""
        deadline = time.monotonic() + SETTLE_TIMEOUT_SECONDS
        target = self.current_version()
        last = self.state()
        since = time.monotonic()
        while True:
            time.sleep(0.02)
            # The views and the outboxes before the offsets: the table appends before its views
            # show an event, and the outboxes are marked after the append, so what they show is
            # in the offsets read next.
            caught_up = self.spectator.view.stream_version >= target
            needed = self._quiet() if caught_up else None
            published = self._db.execute(_UNPUBLISHED).fetchone() == (0,)
            now = self.state()
            if now != last:
                last, since = now, time.monotonic()
            elif published and needed is not None and time.monotonic() - since >= needed:
                self._note_hand()
                return now
            if time.monotonic() > deadline:
                view = self.spectator.view
                raise Stall(
                    f"phase {api.HandPhase.Name(view.phase)} hand {view.hand_id} turn "
                    f"{view.turn_no} v{view.stream_version}"
                )

    def _note_hand(self) -> None:
        hand = self.spectator.view.hand_id
        if hand and hand not in self.past_hands:
            self.past_hands.append(hand)
            self.tally.hands_played += 1

    # -- sending -----------------------------------------------------------------------------

    def send(self, attempt: Attempt) -> tuple[grpc.StatusCode, str, Message | None]:
        """Send one request; returns its status, details and answer (None unless OK)."""
        metadata = bearer_metadata(attempt.token) if attempt.token is not None else None
        method = self._methods[attempt.rpc]
        try:
            if attempt.rpc == "WatchTable":
                call = method(attempt.request, metadata=metadata, timeout=CALL_TIMEOUT_SECONDS)
                try:
                    answer = next(call)
                finally:
                    call.cancel()
            else:
                answer = method(attempt.request, metadata=metadata, timeout=CALL_TIMEOUT_SECONDS)
        except grpc.RpcError as error:
            return error.code(), error.details() or "", None
        return grpc.StatusCode.OK, "", answer

    def _first_pass(self) -> str | None:
        """The next RPC not sent yet, in :data:`RPC_WEIGHTS`' order, until each was sent once:
        a run of any size reaches every RPC, whatever the weighted draws would have left out."""
        sent = {rpc for rpc, _ in self.tally.by_rpc}
        return next((rpc for rpc in RPC_WEIGHTS if rpc not in sent), None)

    def step(self, choices: Draws) -> None:
        """Draw one request from the live state, send it and check the answer."""
        self.drive()
        live = self.live()
        attempt = draw_attempt(choices, self.builder, live, self._first_pass())
        before = self._snapshot
        code, details, answer = self.send(attempt)
        self.tally.note(attempt, code, details)
        after = self.state()
        must_not_change = code != grpc.StatusCode.OK or attempt.rpc in READ_ONLY
        if must_not_change and after != before:
            events = self.appended(before, after)
            if not _background(attempt, events):
                self.tally.changed.append(
                    Finding(
                        "state changed",
                        attempt.describe(),
                        attempt.mutation,
                        attempt.actor,
                        code.name,
                        _difference(before, after) + "; appended: " + _listed(events),
                    )
                )
            else:
                self.tally.background_changes += 1
            self._snapshot = self._settle_or_note()
            return
        if code == grpc.StatusCode.OK and attempt.rpc not in READ_ONLY:
            self._accepted(attempt, answer, live)
        elif code == grpc.StatusCode.OK and isinstance(
            answer, ledger_api.GetStatementResponse | ledger_api.ListMyHandsResponse
        ):
            if answer.next_page_token:
                self.builder.page_tokens.append(answer.next_page_token)
            self._snapshot = after
        else:
            self._snapshot = after

    def _accepted(self, attempt: Attempt, answer: Message | None, live: Live) -> None:
        rid = getattr(attempt.request, "client_request_id", "") or getattr(
            attempt.request, "idempotency_key", ""
        )
        if rid and len(rid) <= 200:
            self.builder.accepted_ids.append((attempt.actor, rid))
        if isinstance(answer, api.DrawCardResponse):
            self._drawn[(live.hand_id, live.turn_no)] = answer.card.index
        if isinstance(answer, api.OpenTableResponse):
            self.builder.opened_tables.append(answer.table_id)
        self._snapshot = self._settle_or_note()

    def _settle_or_note(self) -> tuple[Any, Any]:
        try:
            return self.settle()
        except Stall as stall:
            self.tally.stalls.append(str(stall))
            return self.state()

    # -- the driver ----------------------------------------------------------------------------

    def _driver_call(self, player: Player, rpc: str, request: Message) -> Message | None:
        self.tally.driver_requests += 1
        before = self.decisions() if rpc in HAND_RPCS else None
        try:
            reply: Message = player.call(rpc, request)
            return reply
        except grpc.RpcError as error:
            if error.code() not in DOCUMENTED:
                self.tally.findings[(rpc, "driver", error.code().name)] = Finding(
                    "undocumented status",
                    f"table.{rpc} (the driver's valid move)",
                    "valid",
                    player.account_id,
                    error.code().name,
                    error.details() or "",
                )
            return None
        finally:
            if before is not None:  # the driver's own decisions, counted apart exactly
                judged = self.decisions() - before
                self.tally.driver_decisions += sum(
                    n for (command, _), n in judged.items() if command in PLAYER_COMMANDS
                )

    def drive(self) -> None:
        """Keep the main table playing: seat members between hands, contribute the seeds, play
        a turn the fuzz leaves alone, end a long hand."""
        view = self.spectator.view
        key = (view.hand_id, view.phase, view.turn_no, view.has_drawn, view.stream_version)
        self._idle = self._idle + 1 if key == self._last_key else 0
        self._last_key = key
        moved = False
        running = view.phase in (api.HAND_PHASE_SEEDING, api.HAND_PHASE_PLAYING)
        if not running:
            seated = self.seated()
            for p in self.members:
                if p.account_id not in seated:
                    self._driver_call(
                        p,
                        "TakeSeat",
                        api.TakeSeatRequest(
                            table_id=self.table.table_id, client_request_id=request_id()
                        ),
                    )
                    moved = True
        elif self._idle >= IDLE_REQUESTS and view.phase == api.HAND_PHASE_SEEDING:
            for s in view.seats:
                dealt = self.by_account.get(s.account_id)
                if dealt is not None and s.dealt_in:
                    self._driver_call(
                        dealt,
                        "ContributeSeed",
                        api.ContributeSeedRequest(
                            table_id=self.table.table_id,
                            hand_id=view.hand_id,
                            client_request_id=request_id(),
                            client_seed=uuid.uuid4().bytes,
                        ),
                    )
            moved = True
        elif view.phase == api.HAND_PHASE_PLAYING and (
            self._idle >= IDLE_REQUESTS or (view.turn_no > MAX_TURNS and not view.has_drawn)
        ):
            moved = self._play_turn(view)
        if moved:
            self._idle = 0
            self._snapshot = self._settle_or_note()

    def _play_turn(self, view: api.PlayerView) -> bool:
        account = next(
            (s.account_id for s in view.seats if s.seat == view.turn_seat and s.dealt_in), None
        )
        player = self.by_account.get(account or "")
        if player is None:
            return False
        base: TurnFields = {
            "table_id": self.table.table_id,
            "hand_id": view.hand_id,
            "turn_no": view.turn_no,
            "client_request_id": request_id(),
        }
        if not view.has_drawn and view.turn_no > MAX_TURNS:
            self._driver_call(player, "Drop", api.DropRequest(**base))
        elif not view.has_drawn:
            drawn = self._driver_call(player, "DrawCard", api.DrawCardRequest(**base, source=STOCK))
            if isinstance(drawn, api.DrawCardResponse):
                self._drawn[(view.hand_id, view.turn_no)] = drawn.card.index
        else:
            mine = [c.index for c in player.view.my_cards]
            first = self._drawn.get((view.hand_id, view.turn_no))
            for index in [*([first] if first is not None else []), *mine]:
                base["client_request_id"] = request_id()
                card = cards_pb2.Card(index=index, face=SHOES[4].index_to_card(index).face)
                if self._driver_call(
                    player, "DiscardCard", api.DiscardCardRequest(**base, card=card)
                ):
                    break
        return True


#: The stub class of each service.
_STUBS: dict[str, type] = {
    "table": table_grpc.TableServiceStub,
    "ledger": ledger_grpc.LedgerServiceStub,
    "fairness": fairness_grpc.FairnessServiceStub,
    "dealer": dealer_grpc.DealerServiceStub,
    "clock": clock_grpc.ClockServiceStub,
}


def _background(attempt: Attempt, events: list[Envelope]) -> bool:
    """True when what changed while ``attempt`` was answered is the hand's own flow, not the
    request: events were appended, every one caused by something (another service's event or
    another request), none naming a key of this request. A balance that changed with no event
    appended, an event without a cause, or one caused by this request is never background."""
    if not events:
        return False
    return all(e.causation_id for e in events) and not caused_by(
        events, request_keys(attempt.request)
    )


def _listed(events: list[Envelope]) -> str:
    return (
        ", ".join(
            f"{type_name(e.payload)} of {e.stream_id[:8]} v{e.stream_version}"
            f" caused by {e.causation_id[:40]!r}"
            for e in events
        )
        or "only transaction markers"
    )


def _difference(before: tuple[Any, Any], after: tuple[Any, Any]) -> str:
    offsets_before, balances_before = before
    offsets_after, balances_after = after
    moved = [
        f"{tp.topic}[{tp.partition}] {offsets_before.get(tp)}->{end}"
        for tp, end in offsets_after.items()
        if offsets_before.get(tp) != end
    ]
    changed = sorted(set(balances_after) ^ set(balances_before))
    return f"offsets moved: {moved or 'none'}; balance rows changed: {changed[:6] or 'none'}"


def run(world: FuzzWorld, requests: int, seed: int | None = None) -> Tally:
    """Send ``requests`` fuzzed requests (hypothesis examples, one request each; derandomized
    under the ``ci`` profile, or from ``seed``) and return the tally (closing the world)."""

    @settings(
        max_examples=requests,
        deadline=None,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(draws())
    def one(choices: Draws) -> None:
        world.step(choices)

    if seed is not None:
        from hypothesis import seed as with_seed

        one = with_seed(seed)(one)
    with contextlib.closing(world):
        one()
    return world.tally


@contextlib.contextmanager
def fuzz_world(running: RunningStack) -> Iterator[FuzzWorld]:
    world = FuzzWorld(running)
    try:
        yield world
    finally:
        with contextlib.suppress(Exception):
            world.close()
