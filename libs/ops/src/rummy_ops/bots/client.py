"""A bot player: one gRPC client with its own player token, one per seat, seeing only its own view.

The bot takes a seat, then follows ``WatchTable`` (its own :class:`PlayerView`: its cards, the
discard pile, counts). When the client-seed window is open it contributes a seed; when the turn is
its own it asks its :class:`~rummy_ops.bots.strategy.BotBrain` which of the view's legal moves to
make (``PlayerView.legal_moves``: the variant's ``legal_commands``, read back as rules commands by
``rummy_game.moves``) and makes it through the public API (``DrawCard``, ``DiscardCard``, and
``Play`` with the variant's own command as the view packed it), each call naming the hand, the
turn number and a fresh client request id. A stalled turn is simply not played: the clock's
deadline makes the table play it (and drop the seat after too many in a row).

A refused command (FAILED_PRECONDITION: the turn or the match moved on, e.g. a timeout raced the
bot, or the next deal started before its rejoin answer arrived) is counted and the bot waits for
the next view; nothing is retried blindly. A command whose outcome is open (UNAVAILABLE,
DEADLINE_EXCEEDED: a service restarting, the event log not confirming) is sent again as it was,
same client_request_id, a few times: recorded once at most, answered alike.
Calls go through a :class:`~rummy_table.contract.TableRouter`: to the table-service
instance serving the table, following its redirect when the table moved to another instance (the
same request, same ``client_request_id``), and the watch follows the table there too.

The bot's thread ends only with :meth:`Bot.stop`: a watch stream that breaks or ends (with any
status, CANCELLED by the server included) is opened again, and a view the bot fails to react to
is noted in ``stats.errors`` (``alive`` says the thread runs).

What the bot does on a view is :meth:`Bot.reactions`, a generator of the calls to make, sent
their replies; :meth:`Bot.on_view` makes them with blocking calls, ``rummy_ops.bots.aio``'s
``AsyncBot`` (the same play on an asyncio event loop, for benchmarks) with awaited ones.
"""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from typing import Any

import grpc
from google.protobuf.message import Message

from rummy.common.v1 import cards_pb2
from rummy.match.v1 import match_pb2 as match_pb
from rummy.table.v1 import events_pb2 as table_events
from rummy.table.v1 import table_service_pb2 as api
from rummy_game import variant_wires
from rummy_game.moves import move_from_pb
from rummy_ops.bots.record import PlayerRecord
from rummy_ops.bots.strategy import BotBrain, match_moves
from rummy_platform.auth import bearer_metadata
from rummy_rules.bot import Situation
from rummy_rules.cards import Card
from rummy_rules.deck import Shoe
from rummy_table.contract import TableRouter

#: Answers that say a command was refused and nothing of it recorded (UNAVAILABLE, DEADLINE
#: EXCEEDED and the like leave the outcome open: the command may have been recorded).
REFUSALS = frozenset(
    {
        grpc.StatusCode.INVALID_ARGUMENT,
        grpc.StatusCode.FAILED_PRECONDITION,
        grpc.StatusCode.NOT_FOUND,
        grpc.StatusCode.ALREADY_EXISTS,
        grpc.StatusCode.PERMISSION_DENIED,
        grpc.StatusCode.UNAUTHENTICATED,
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        grpc.StatusCode.OUT_OF_RANGE,
    }
)


#: Answers after which the command may or may not have been recorded: retried as they were.
UNCONFIRMED = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED})
#: How often a bot retries a command answered :data:`UNCONFIRMED`.
RETRIES = 4

#: The commands of a turn (a hand is dealt and in play while one is answered; ``Declare`` and
#: ``Drop`` are the older per-command RPCs of the Indian variant, which other clients send).
TURN_COMMANDS = frozenset({"DrawCard", "DiscardCard", "Declare", "Drop", "Play"})
#: Every command a bot sends while a hand is in play.
HAND_COMMANDS = TURN_COMMANDS | {"ContributeSeed"}

#: One call a bot makes: the RPC's name and its request.
Call = tuple[str, Message]
#: A bot's reaction to a view (:meth:`Bot.reactions`): yields calls, is sent their replies.
Reactions = Generator[Call, Any, None]


@dataclass
class BotStats:
    """What a bot did. ``slowest_action_seconds``: the longest single player RPC it made;
    ``refusals``: ``(rpc, client_request_id, status name)`` of every command refused (see
    :data:`REFUSALS`), at most 10,000. ``time.monotonic()`` (0 before any) of the last RPC
    answered OK (``last_ok``), of the last turn command (draw, discard, declare, drop) answered
    OK (``last_turn_ok``) and of the first view of the latest hand (``new_hand_at``)."""

    actions: int = 0
    seeds: int = 0
    stalls: int = 0
    #: Moves of the variant's own sent (through ``Play``: a declare, a drop, a knock).
    commands: int = 0
    #: Of those, the ones its answer says did not do what they asked (the Indian wrong declare).
    rejected: int = 0
    #: Match commands sent (a rejoin answer, a split request: ``rummy.match.v1``).
    match_commands: int = 0
    #: Commands refused because the hand or match moved on first (FAILED_PRECONDITION).
    refused: int = 0
    slowest_action_seconds: float = 0.0
    slowest_action: str = ""
    errors: list[str] = field(default_factory=list)
    refusals: list[tuple[str, str, str]] = field(default_factory=list)
    last_ok: float = 0.0
    last_turn_ok: float = 0.0
    new_hand_at: float = 0.0


class Bot:
    """One seat's player. ``router`` reaches the table service; ``token`` is a player token for
    ``account_id``; ``shoe`` is the table's shoe (to read card indices as cards);
    ``match_options`` the table's match format (``OpenTableRequest.match``; None: a points
    table), whose match the bot plays as its brain's ``match`` temperament says;
    ``new_request_id`` makes each request's ``client_request_id`` (default: a random UUID)."""

    def __init__(
        self,
        account_id: str,
        token: str,
        router: TableRouter,
        table_id: str,
        shoe: Shoe,
        brain: BotBrain,
        record: PlayerRecord | None = None,
        match_options: match_pb.MatchOptions | None = None,
        new_request_id: Callable[[], str] | None = None,
    ) -> None:
        self.account_id = account_id
        #: Each request's ``client_request_id`` (a random UUID; the simulator draws it from its
        #: seed).
        self.new_request_id = new_request_id or _request_id
        self.match_options = match_options or match_pb.MatchOptions()
        self.record = record
        self.table_id = table_id
        self.shoe = shoe
        self.brain = brain
        self._wire_of_variant = variant_wires.lookup(brain.variant)
        self.stats = BotStats()
        self.seat: int | None = None
        self._router = router
        self._metadata = bearer_metadata(token)
        self._stop = threading.Event()
        self._call: grpc.Call | None = None  # the WatchTable stream, to cancel it
        self._hand_id = ""
        self._seeded: set[str] = set()
        #: The turn step last played: (hand, turn, has drawn, cards held) of its view. A turn may
        #: hold several steps after the draw (melds, lay-offs, then a discard), each
        #: changing the cards held; a view of the same step again is not played twice.
        self._acted: tuple[str, int, bool, int] = ("", 0, False, 0)
        #: (hand, turn) and the card the bot took from the discard pile on it.
        self._taken: tuple[tuple[str, int], Card | None] = (("", 0), None)
        self._match_sent: set[tuple[str, int, str]] = set()  # (match, deals scored, command)
        self._thread: threading.Thread | None = None
        #: The name of the RPC in flight (None between calls).
        self.in_flight: str | None = None

    # -- life cycle ----------------------------------------------------------------------------

    def take_seat(self) -> int:
        """Sit at the table (any free seat); returns the seat number. Raises grpc.RpcError."""
        reply = self._rpc(
            "TakeSeat",
            api.TakeSeatRequest(table_id=self.table_id, client_request_id=self.new_request_id()),
        )
        self.seat = reply.seat
        return self.seat

    def start(self) -> None:
        """Follow the table and play, in a daemon thread, until :meth:`stop`."""
        self._thread = threading.Thread(
            target=self._run, name=f"bot-{self.account_id}", daemon=True
        )
        self._thread.start()

    def stop(self, leave: bool = True) -> None:
        """Stop playing; with ``leave``, leave the table first if seated (between hands: no
        penalty; during a hand it is a leave drop). Idempotent."""
        self._drive(self._stopping(leave))
        if self._thread is not None:
            self._thread.join(10)

    def _stopping(self, leave: bool) -> Reactions:
        """:meth:`stop`'s calls: the bot stops, leaves the table (``leave``, if seated; a
        refusal noted) and its watch is cancelled."""
        self._stop.set()
        if leave and self.seat is not None:
            self.seat = None
            try:
                yield (
                    "LeaveTable",
                    api.LeaveTableRequest(
                        table_id=self.table_id, client_request_id=self.new_request_id()
                    ),
                )
            except grpc.RpcError as error:
                self._note(f"leave: {_describe(error)}")
        if self._call is not None:
            self._call.cancel()

    # -- the loop ------------------------------------------------------------------------------

    def _run(self) -> None:
        while not self._stop.is_set():
            address = self._router.address_for(self.table_id)
            try:
                call = self._router.stub(address).WatchTable(
                    api.WatchTableRequest(table_id=self.table_id), metadata=self._metadata
                )
                self._call = call
                for response in call:
                    if self._stop.is_set():
                        return
                    self._react(response.view)
            except grpc.RpcError as error:
                # Only our own stop ends the loop: a CANCELLED we did not ask for (the server
                # reset the stream, e.g. while shutting down) is followed like any other break.
                if self._stop.is_set():
                    return
                if self._moved(error, address):
                    continue
            # The stream broke or ended (a restart, the table handed over): follow it again.
            self._stop.wait(0.5)

    def _moved(self, error: grpc.RpcError, address: str) -> bool:
        """After the watch at ``address`` broke with ``error``: True when the table is served
        elsewhere now (watch it there at once); else the break is noted and False."""
        self._router.follow(error, self.table_id, address)
        if self._router.address_for(self.table_id) != address:
            return True
        self._note(f"watch: {_describe(error)}")
        return False

    def _react(self, view: api.PlayerView) -> None:
        """:meth:`on_view`, noting in ``stats.errors`` what it raised (a bug of the bot's own, a
        view it cannot read) instead of ending the thread: the next view is played on."""
        try:
            self.on_view(view)
        except Exception as exc:  # a bot thread must not die unseen
            self._note(f"view v{view.stream_version} hand {view.hand_id}: {exc!r}")

    @property
    def alive(self) -> bool:
        """True while the bot's thread runs (started and not stopped or dead)."""
        return self._thread is not None and self._thread.is_alive()

    def on_view(self, view: api.PlayerView) -> None:
        """React to the latest view of the table (public for tests): the calls of
        :meth:`reactions`, each made through this bot's router."""
        self._drive(self.reactions(view))

    def _drive(self, steps: Reactions) -> None:
        """Make the calls ``steps`` yields, blocking, sending it each reply (or its error)."""
        try:
            call = next(steps)
            while True:
                try:
                    reply = self._rpc(*call)
                except grpc.RpcError as error:
                    call = steps.throw(error)
                else:
                    call = steps.send(reply)
        except StopIteration:
            pass

    def reactions(self, view: api.PlayerView) -> Reactions:
        """What the bot does on seeing ``view``, without doing it: a generator that yields each
        call to make, ``(rpc name, request)``, and is sent its reply (or thrown the call's
        ``grpc.RpcError``: it handles the errors a call may end with, as the bot's notes and
        counts say, and ends). Shared by the threaded :meth:`on_view` and an asyncio driver
        (``rummy_ops.bots.aio``); no call is made when it yields nothing."""
        if view.HasField("match") and view.HasField("my_seat"):
            yield from self._play_match(view)
        if view.phase in (api.HAND_PHASE_ENDED, api.HAND_PHASE_ABORTED, api.HAND_PHASE_WAITING):
            return
        if not view.HasField("my_seat") or not _dealt_in(view):
            return  # a seat not dealt into this hand (e.g. out of the match) waits for the next
        if view.hand_id != self._hand_id:
            self._hand_id = view.hand_id
            self.stats.new_hand_at = time.monotonic()
            self.brain.new_hand()
        if view.phase == api.HAND_PHASE_SEEDING and view.hand_id not in self._seeded:
            self._seeded.add(view.hand_id)
            yield from self._contribute_seed(view)
            return
        if (
            view.phase == api.HAND_PHASE_PLAYING
            and view.turn_seat == view.my_seat
            and view.legal_moves
            and self._acted != _turn_step(view)
        ):
            self._acted = _turn_step(view)
            try:
                yield from self._play_turn(view)
            except grpc.RpcError as error:
                if error.code() == grpc.StatusCode.FAILED_PRECONDITION:
                    self.stats.refused += 1  # the turn moved on (a timeout raced us)
                else:
                    self._note(f"hand {view.hand_id} turn {view.turn_no}: {_describe(error)}")

    def _contribute_seed(self, view: api.PlayerView) -> Reactions:
        seat = view.my_seat
        if self.record is not None and view.server_commitment_sha256:
            self.record.commitment_seen(
                self.table_id, view.hand_id, seat, view.server_commitment_sha256
            )
        seed = self.brain.client_seed()
        try:
            yield (
                "ContributeSeed",
                api.ContributeSeedRequest(
                    table_id=self.table_id,
                    hand_id=view.hand_id,
                    client_request_id=self.new_request_id(),
                    client_seed=seed,
                ),
            )
            self.stats.seeds += 1
        except grpc.RpcError as error:
            if error.code() == grpc.StatusCode.FAILED_PRECONDITION:
                # the seed window closed first (a loaded machine): the hand goes on with the
                # empty seed recorded for this seat, as for a player who sent none
                self.stats.refused += 1
            else:
                self._note(f"seed for hand {view.hand_id}: {_describe(error)}")
            seed = b""
        if self.record is not None:
            self.record.seed_sent(self.table_id, view.hand_id, seat, seed)

    def _play_turn(self, view: api.PlayerView) -> Reactions:
        """One step of the bot's turn: the move its brain chooses among the view's legal moves
        (the variant's ``legal_commands``), sent as the RPC the move names; nothing when the
        brain stalls. A turn of a draw-and-discard game takes two views: the draw, then (on the
        view after it) the discard or the variant's own move."""
        wire, shoe = self._wire_of_variant, self.shoe
        seat, turn_no, hand_id = view.my_seat, view.turn_no, view.hand_id
        moves = list(view.legal_moves)
        legal = [move_from_pb(m, seat, turn_no, wire, shoe) for m in moves]
        taken = self._taken[1] if self._taken[0] == (hand_id, turn_no) else None
        situation = Situation(
            seat=seat,
            cards=tuple(self._card(c) for c in view.my_cards),
            discard_top=self._card(view.discard_pile[-1]) if view.discard_pile else None,
            wild_cut=self._card(view.wild_cut) if view.HasField("wild_cut") else None,
            has_drawn=view.has_drawn,
            taken_from_pile=taken,
            discard_pile=tuple(self._card(c) for c in view.discard_pile),
        )
        match = view.match if view.HasField("match") else None
        command = self.brain.choose(situation, legal, turn_no, match=match)
        if command is None:
            if not view.has_drawn:
                self.stats.stalls += 1
            return
        move = moves[legal.index(command)]
        arm = move.WhichOneof("move")
        if arm == "draw":
            drawn = yield (
                "DrawCard",
                api.DrawCardRequest(
                    table_id=self.table_id,
                    hand_id=hand_id,
                    turn_no=turn_no,
                    client_request_id=self.new_request_id(),
                    source=move.draw,
                ),
            )
            if move.draw == table_events.DRAW_SOURCE_DISCARD_PILE:
                self._taken = ((hand_id, turn_no), self._card(drawn.card))
        elif arm == "discard":
            yield (
                "DiscardCard",
                api.DiscardCardRequest(
                    table_id=self.table_id,
                    hand_id=hand_id,
                    turn_no=turn_no,
                    client_request_id=self.new_request_id(),
                    card=move.discard,
                ),
            )
        else:
            answer = yield from self._play(hand_id, turn_no, move)
            self.stats.commands += 1
            if answer is not None and not wire.accepted(answer):
                self.stats.rejected += 1

    def _play_match(self, view: api.PlayerView) -> Reactions:
        """Send the match commands the brain makes of the view (a rejoin answer, a split
        request), each once per match and deal count; never raised: FAILED_PRECONDITION (the
        match moved on, e.g. the next deal started before a rejoin answer arrived on a loaded
        machine, which closes the offer) is counted as refused, any other refusal noted."""
        match = view.match
        for name in match_moves(match, view.my_seat, self.match_options, self.brain.match):
            key = (match.match_id, match.deals_scored, name)
            if key in self._match_sent:
                continue
            self._match_sent.add(key)
            request = api.PlayRequest(
                table_id=self.table_id,
                hand_id=view.hand_id,
                client_request_id=self.new_request_id(),
            )
            request.command.Pack(getattr(match_pb, name)())
            try:
                yield ("Play", request)
                self.stats.match_commands += 1
            except grpc.RpcError as error:
                if error.code() == grpc.StatusCode.FAILED_PRECONDITION:
                    self.stats.refused += 1
                else:
                    self._note(f"match {match.match_id} {name}: {_describe(error)}")

    # -- helpers -------------------------------------------------------------------------------

    def _play(
        self, hand_id: str, turn_no: int, move: api.LegalMove
    ) -> Generator[Call, Any, Message | None]:
        """Send a legal move of the variant's own (``Play`` with its packed command); the
        variant's answer (None: none). The call's grpc.RpcError is raised on."""
        request = api.PlayRequest(
            table_id=self.table_id,
            hand_id=hand_id,
            turn_no=turn_no,
            client_request_id=self.new_request_id(),
        )
        request.command.CopyFrom(move.command)
        reply = yield ("Play", request)
        wire = self._wire_of_variant
        return wire.unpack_answer(reply.answer) if reply.HasField("answer") else None

    def _card(self, card: cards_pb2.Card) -> Card:
        return self.shoe.index_to_card(card.index)

    def _send(self, name: str, request: object) -> Any:
        """One RPC; an answer that leaves the outcome open (:data:`UNCONFIRMED`) is retried with
        the same request (so the same client_request_id: a command already recorded gets its
        first answer again) up to :data:`RETRIES` times, 0.5 s, 1 s, ... apart."""
        for attempt in range(RETRIES + 1):
            try:
                return self._router.call(name, request, metadata=self._metadata, timeout=30)
            except grpc.RpcError as error:
                if error.code() not in UNCONFIRMED or attempt == RETRIES or self._stop.is_set():
                    raise
                self._stop.wait(0.5 * (attempt + 1))
        raise AssertionError("unreachable")

    def _rpc(self, name: str, request: object) -> Any:
        with self._counted(name, request):
            return self._send(name, request)

    @contextlib.contextmanager
    def _counted(self, name: str, request: object) -> Iterator[None]:
        """Around one RPC (with its retries): ``in_flight``, the counts and times of ``stats``,
        and a refusal noted in ``stats.refusals``."""
        started = time.perf_counter()
        self.in_flight = name
        try:
            yield
            self.stats.last_ok = time.monotonic()
            if name in TURN_COMMANDS:
                self.stats.last_turn_ok = self.stats.last_ok
        except grpc.RpcError as error:
            request_id = getattr(request, "client_request_id", "")
            if error.code() in REFUSALS and len(self.stats.refusals) < 10_000:
                self.stats.refusals.append((name, request_id, error.code().name))
            raise
        finally:
            self.in_flight = None
            elapsed = time.perf_counter() - started
            self.stats.actions += 1
            if elapsed > self.stats.slowest_action_seconds:
                self.stats.slowest_action_seconds = elapsed
                self.stats.slowest_action = name

    def _note(self, message: str) -> None:
        if len(self.stats.errors) < 50:
            self.stats.errors.append(message)


def _request_id() -> str:
    return str(uuid.uuid4())


def _turn_step(view: api.PlayerView) -> tuple[str, int, bool, int]:
    """Which step of a turn ``view`` shows: its hand, turn, whether the seat has drawn and how
    many cards it holds (each move of the seat's own after the draw changes that count)."""
    return (view.hand_id, view.turn_no, view.has_drawn, len(view.my_cards))


def _dealt_in(view: api.PlayerView) -> bool:
    """True when the view's own seat is dealt into the view's hand (at a match table a seat
    eliminated or gone sits the deal out, seated but not dealt in)."""
    return any(s.seat == view.my_seat and s.dealt_in for s in view.seats)


def _describe(error: grpc.RpcError) -> str:
    return f"{error.code().name}: {error.details()}"
