"""Test clients of the public gRPC API: a player (its own token, its own ``WatchTable`` view) and
the operator (opens tables, grants House Tokens, reads balances).

A :class:`Player` follows its table in a background thread and keeps the latest
:class:`PlayerView`; the test thread waits for a view (:meth:`Player.wait`) and acts through the
player's calls, each naming the hand, the turn number and a client request id (fresh unless
given). Nothing here reads a service's state except through gRPC.

Money is in hundredths of a House Token; times in seconds.
"""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any, TypeVar

import grpc
from google.protobuf.any_pb2 import Any as AnyMessage
from google.protobuf.message import Message

from rummy.common.v1 import cards_pb2
from rummy.ledger.v1 import ledger_service_pb2 as ledger_api
from rummy.ledger.v1 import ledger_service_pb2_grpc as ledger_grpc
from rummy.match.v1 import match_pb2
from rummy.table.v1 import events_pb2 as table_events
from rummy.table.v1 import table_service_pb2 as api
from rummy.table.v1 import table_service_pb2_grpc as api_grpc
from rummy_platform.auth import Role, TokenAuthority, bearer_metadata
from rummy_platform.limits import open_channel
from rummy_rules.cards import Card
from rummy_rules.deck import Shoe
from rummy_rules.events import DrawSource as Source
from rummy_rules.indian.bot import choose_discard, choose_draw, declaration
from rummy_rules.indian.rules import BOMBAY_BAAZI_SHOES
from rummy_rules.melds import MeldOptions
from rummy_rules.wild import WildRank
from rummy_table.contract import TableRouter, handed_over, resend

STOCK = table_events.DRAW_SOURCE_STOCK
DISCARD_PILE = table_events.DRAW_SOURCE_DISCARD_PILE
SHOES: dict[int, Shoe] = dict(BOMBAY_BAAZI_SHOES)
TOKEN_TTL_SECONDS = 3600
CALL_TIMEOUT_SECONDS = 30.0
#: How long :meth:`Player.unary` keeps sending a command again while its table is being
#: handed over between table-service instances (seconds).
HANDOVER_RETRY_SECONDS = 30.0
Request = TypeVar("Request")
Response = TypeVar("Response")


def request_id() -> str:
    """A fresh client request id."""
    return str(uuid.uuid4())


def rule_set(
    turn_seconds: int = 300, seed_window_seconds: int = 10, start_delay_seconds: int = 20
) -> cards_pb2.RuleSet:
    """Table options with the given seconds (the services divide them by their clock speed); every
    rule left out, so the table plays the house's: Bombay Baazi (first drop 20, middle drop 40,
    wrong declare 80, 3 missed turns, uncapped points, jokers-only groups impure sequences, the card
    taken from the pile not discardable that turn)."""
    return cards_pb2.RuleSet(
        turn_seconds=turn_seconds,
        seed_window_seconds=seed_window_seconds,
        start_delay_seconds=start_delay_seconds,
    )


class Operator:
    """The operator's calls: open tables, grant tokens, read any account's balance."""

    def __init__(self, table_address: str, ledger_address: str, authority: TokenAuthority) -> None:
        self.authority = authority
        self._metadata = bearer_metadata(
            authority.issue(f"ops-{uuid.uuid4().hex[:6]}", Role.OPERATOR, TOKEN_TTL_SECONDS)
        )
        self._table_channel = open_channel(table_address)
        self._ledger_channel = open_channel(ledger_address)
        self.table = api_grpc.TableServiceStub(self._table_channel)
        self._router = TableRouter(table_address)
        self.ledger = ledger_grpc.LedgerServiceStub(self._ledger_channel)

    def open_table(
        self,
        seats: int,
        point_value_hundredths: int,
        commission_bps: int,
        rules: cards_pb2.RuleSet | None = None,
        match: match_pb2.MatchOptions | None = None,
    ) -> str:
        """Open a table (hosting the match format ``match``, when given); returns its id.
        Raises grpc.RpcError when refused."""
        # The instance asked may redirect to the one serving the new table's partition.
        reply: api.OpenTableResponse = self._router.call(
            "OpenTable",
            api.OpenTableRequest(
                client_request_id=request_id(),
                name=f"e2e-{uuid.uuid4().hex[:6]}",
                seat_count=seats,
                point_value_hundredths=point_value_hundredths,
                commission_bps=commission_bps,
                rule_set=rules or rule_set(),
                match=match,
            ),
            metadata=self._metadata,
            timeout=CALL_TIMEOUT_SECONDS,
        )
        return reply.table_id

    def close_table(self, table_id: str, reason: str = "e2e") -> None:
        """``CloseTable``: the hand being played plays out, then every seat is stood up (a
        match being played is aborted). Raises grpc.RpcError when refused."""
        self._router.call(
            "CloseTable",
            api.CloseTableRequest(table_id=table_id, client_request_id=request_id(), reason=reason),
            metadata=self._metadata,
            timeout=CALL_TIMEOUT_SECONDS,
        )

    def grant(self, account_id: str, amount_hundredths: int) -> None:
        """Grant House Tokens to an account (idempotent per call here: a fresh key)."""
        self.ledger.Grant(
            ledger_api.GrantRequest(
                account_id=account_id,
                amount_hundredths=amount_hundredths,
                idempotency_key=request_id(),
                memo="e2e",
            ),
            metadata=self._metadata,
            timeout=CALL_TIMEOUT_SECONDS,
        )

    def balance(self, account_id: str) -> ledger_api.GetBalanceResponse:
        """The account's posted, reserved and available hundredths."""
        return self.ledger.GetBalance(
            ledger_api.GetBalanceRequest(account_id=account_id),
            metadata=self._metadata,
            timeout=CALL_TIMEOUT_SECONDS,
        )

    def hands(
        self, account_id: str, player_token: str | None = None
    ) -> list[ledger_api.PlayedEntry]:
        """The account's hands and matches (ListMyHands, newest first, every page): asked by
        the operator, or by the player itself with its own ``player_token`` (naming no
        account)."""
        metadata = self._metadata if player_token is None else bearer_metadata(player_token)
        named = account_id if player_token is None else ""
        entries: list[ledger_api.PlayedEntry] = []
        token = ""
        while True:
            page = self.ledger.ListMyHands(
                ledger_api.ListMyHandsRequest(account_id=named, page_token=token),
                metadata=metadata,
                timeout=CALL_TIMEOUT_SECONDS,
            )
            entries.extend(page.entries)
            token = page.next_page_token
            if not token:
                return entries

    def settled_balances(self, accounts: list[str], timeout: float = 30.0) -> dict[str, int]:
        """Posted balances once no account holds a reservation (every hand settled or
        released). Raises TimeoutError when a reservation is still held after ``timeout``."""
        deadline = time.monotonic() + timeout
        while True:
            got = {a: self.balance(a) for a in accounts}
            if not any(b.reserved_hundredths for b in got.values()):
                return {a: b.balance_hundredths for a, b in got.items()}
            if time.monotonic() > deadline:
                raise TimeoutError(f"reservations still held: {got}")
            time.sleep(0.2)

    def close(self) -> None:
        self._router.close()
        self._table_channel.close()
        self._ledger_channel.close()


class Player:
    """One account at one table, through the public API only.

    ``views`` keeps every snapshot received (``view`` is the latest). Calls raise grpc.RpcError
    when the service refuses them.
    """

    def __init__(
        self,
        account_id: str,
        token: str,
        channel: grpc.Channel,
        table_id: str,
        seats: int,
    ) -> None:
        self.account_id = account_id
        self.table_id = table_id
        self.seats = seats
        self.token = token
        # Bombay Baazi's shoe for the seat count (a match table's deals use the format's shoe).
        self.shoe: Shoe | None = SHOES.get(seats)
        self.stub = api_grpc.TableServiceStub(channel)
        self.metadata = bearer_metadata(token)
        self.views: list[api.PlayerView] = []
        self._changed = threading.Condition()
        self._call: Any = None
        self._stopped = False
        self._thread: threading.Thread | None = None

    def via(self, channel: grpc.Channel) -> Player:
        """The same account at the same table through another channel (e.g. another instance
        of the table service), following the table there."""
        return Player(self.account_id, self.token, channel, self.table_id, self.seats).watch()

    # -- the view ------------------------------------------------------------------------------

    def watch(self) -> Player:
        """Start following the table (reconnecting when the stream breaks)."""
        self._thread = threading.Thread(target=self._follow, daemon=True)
        self._thread.start()
        return self

    def _follow(self) -> None:
        while not self._stopped:
            try:
                self._call = self.stub.WatchTable(
                    api.WatchTableRequest(table_id=self.table_id), metadata=self.metadata
                )
                for response in self._call:
                    with self._changed:
                        self.views.append(response.view)
                        self._changed.notify_all()
            except grpc.RpcError:
                if self._stopped:
                    return
                time.sleep(0.2)

    @property
    def view(self) -> api.PlayerView:
        with self._changed:
            return self.views[-1] if self.views else api.PlayerView()

    def wait(
        self, predicate: Callable[[api.PlayerView], bool], timeout: float = 30.0, what: str = ""
    ) -> api.PlayerView:
        """The first view (latest first, then every new one in order) satisfying
        ``predicate``. Raises TimeoutError with the last view's phase and turn after
        ``timeout``."""
        deadline = time.monotonic() + timeout
        with self._changed:
            seen = max(len(self.views) - 1, 0)
            while True:
                for view in self.views[seen:]:
                    if predicate(view):
                        return view
                seen = len(self.views)
                left = deadline - time.monotonic()
                if left <= 0:
                    last = self.views[-1] if self.views else None
                    state = (
                        f"phase {api.HandPhase.Name(last.phase)} turn {last.turn_no} seat "
                        f"{last.turn_seat} v{last.stream_version}"
                        if last
                        else "no view"
                    )
                    raise TimeoutError(f"{self.account_id}: no view {what!r} ({state})")
                self._changed.wait(left)

    def wait_my_turn(self, timeout: float = 30.0) -> api.PlayerView:
        """The view where this seat is on turn in a hand being played, not yet drawn."""
        return self.wait(
            lambda v: (
                v.phase == api.HAND_PHASE_PLAYING
                and v.HasField("my_seat")
                and v.turn_seat == v.my_seat
                and not v.has_drawn
            ),
            timeout,
            "my turn",
        )

    def wait_to_draw(self, timeout: float = 30.0) -> api.PlayerView:
        """The view where this seat is on turn and the stock holds cards (an emptied stock is
        reshuffled from the discard pile by the dealer shortly after)."""
        return self.wait(
            lambda v: (
                v.phase == api.HAND_PHASE_PLAYING
                and v.HasField("my_seat")
                and v.turn_seat == v.my_seat
                and not v.has_drawn
                and v.stock_count > 0
            ),
            timeout,
            "my turn with a stock",
        )

    def wait_phase(self, *phases: int, timeout: float = 30.0) -> api.PlayerView:
        return self.wait(lambda v: v.phase in phases, timeout, f"phase in {phases}")

    def stop(self) -> None:
        self._stopped = True
        if self._call is not None:
            self._call.cancel()

    # -- cards ---------------------------------------------------------------------------------

    def _shoe(self) -> Shoe:
        if self.shoe is None:
            raise ValueError(f"no Bombay Baazi shoe for {self.seats} seats")
        return self.shoe

    def card(self, wire: cards_pb2.Card) -> Card:
        return self._shoe().index_to_card(wire.index)

    def wire(self, card: Card) -> cards_pb2.Card:
        return cards_pb2.Card(index=self._shoe().card_to_index(card), face=card.face)

    def hand(self, view: api.PlayerView | None = None) -> list[Card]:
        return [self.card(c) for c in (view or self.view).my_cards]

    def wild(self, view: api.PlayerView | None = None) -> WildRank:
        v = view or self.view
        return self.card(v.wild_cut).rank if v.HasField("wild_cut") else None

    # -- calls ---------------------------------------------------------------------------------

    def call(self, name: str, request: Any) -> Any:
        """Call the table service's RPC ``name`` with this player's token."""
        return self.unary(getattr(self.stub, name), request)

    def unary(
        self, rpc: grpc.UnaryUnaryMultiCallable[Request, Response], request: Request
    ) -> Response:
        """Call ``rpc`` (a method of :attr:`stub`) with this player's token, as the table's
        contract asks of a client (``rummy_table.contract``): an UNAVAILABLE that names no
        other owner (the table's partition is being handed over, e.g. after the instance's
        group membership lapsed on a loaded machine, or a commit was not confirmed) is sent
        again, the same request with the same ``client_request_id``, after a short backoff for
        up to :data:`HANDOVER_RETRY_SECONDS`. Raises grpc.RpcError: any other status at once."""
        return resend(
            lambda: rpc(request, metadata=self.metadata, timeout=CALL_TIMEOUT_SECONDS),
            handed_over,
            HANDOVER_RETRY_SECONDS,
        )

    def take_seat(self, seat: int | None = None) -> int:
        reply = self.unary(
            self.stub.TakeSeat,
            api.TakeSeatRequest(table_id=self.table_id, client_request_id=request_id(), seat=seat),
        )
        return reply.seat

    def leave(self) -> None:
        self.call(
            "LeaveTable",
            api.LeaveTableRequest(table_id=self.table_id, client_request_id=request_id()),
        )

    def contribute_seed(self, hand_id: str, seed: bytes) -> None:
        self.call(
            "ContributeSeed",
            api.ContributeSeedRequest(
                table_id=self.table_id,
                hand_id=hand_id,
                client_request_id=request_id(),
                client_seed=seed,
            ),
        )

    def _turn(self, turn_no: int | None) -> tuple[str, int]:
        v = self.view
        return v.hand_id, v.turn_no if turn_no is None else turn_no

    def _in_hand(
        self,
        rpc: grpc.UnaryUnaryMultiCallable[Request, Response],
        request_type: Callable[..., Request],
        hand_id: str,
        turn_no: int,
        rid: str | None = None,
        **fields: Any,
    ) -> Response:
        """Call ``rpc`` with a ``request_type`` naming this table, ``hand_id``, ``turn_no`` and
        ``rid`` (a fresh client request id when None), plus ``fields``."""
        request = request_type(
            table_id=self.table_id,
            hand_id=hand_id,
            turn_no=turn_no,
            client_request_id=rid or request_id(),
            **fields,
        )
        return self.unary(rpc, request)

    def _on_turn(
        self,
        rpc: grpc.UnaryUnaryMultiCallable[Request, Response],
        request_type: Callable[..., Request],
        turn_no: int | None,
        rid: str | None = None,
        **fields: Any,
    ) -> Response:
        """As :meth:`_in_hand`, in the hand being played, on turn ``turn_no`` (None: the turn
        the view shows)."""
        hand_id, turn = self._turn(turn_no)
        return self._in_hand(rpc, request_type, hand_id, turn, rid, **fields)

    def draw(
        self,
        source: table_events.DrawSource.ValueType = STOCK,
        turn_no: int | None = None,
        rid: str | None = None,
    ) -> api.DrawCardResponse:
        return self._on_turn(self.stub.DrawCard, api.DrawCardRequest, turn_no, rid, source=source)

    def discard(
        self, card: cards_pb2.Card, turn_no: int | None = None, rid: str | None = None
    ) -> api.DiscardCardResponse:
        return self._on_turn(self.stub.DiscardCard, api.DiscardCardRequest, turn_no, rid, card=card)

    def declare(self, face_down: cards_pb2.Card, turn_no: int | None = None) -> api.DeclareResponse:
        return self._on_turn(self.stub.Declare, api.DeclareRequest, turn_no, face_down=face_down)

    def drop(self, turn_no: int | None = None) -> api.DropResponse:
        return self._on_turn(self.stub.Drop, api.DropRequest, turn_no)

    def play(self, command: Message, hand_id: str = "", turn_no: int = 0) -> api.PlayResponse:
        """``Play`` with ``command`` (a variant's or a match's command message) packed in an
        Any; the match's commands name no hand or turn."""
        packed = AnyMessage()
        packed.Pack(command)
        return self._in_hand(self.stub.Play, api.PlayRequest, hand_id, turn_no, command=packed)

    def match_command(self, command: Message) -> match_pb2.MatchCommandAnswer:
        """A match command (``rummy.match.v1`` AcceptRejoin, DeclineRejoin, RequestSplit);
        returns the table's ``MatchCommandAnswer``."""
        answer = match_pb2.MatchCommandAnswer()
        reply = self.play(command)
        if reply.HasField("answer"):
            reply.answer.Unpack(answer)
        return answer

    def draw_and_discard_drawn(self) -> api.PlayerView:
        """On this seat's turn: draw from the stock and discard the card drawn (keeps the hand
        as dealt). Returns the view the turn was played from."""
        view = self.wait_to_draw()
        drawn = self.draw(STOCK, turn_no=view.turn_no)
        self.discard(drawn.card, turn_no=view.turn_no)
        return view


class Table:
    """A table opened for a test, with its players (one account each, granted ``grant``)."""

    def __init__(
        self,
        operator: Operator,
        table_address: str,
        seats: int,
        point_value_hundredths: int,
        commission_bps: int,
        rules: cards_pb2.RuleSet | None = None,
        match: match_pb2.MatchOptions | None = None,
    ) -> None:
        self.operator = operator
        self.seats = seats
        self.table_id = operator.open_table(
            seats, point_value_hundredths, commission_bps, rules, match
        )
        self._channel = open_channel(table_address)
        self.players: list[Player] = []

    def player(self, name: str, grant: int = 0) -> Player:
        """A new account ``<name>-<random>`` with its own player token, granted ``grant``
        hundredths (none when 0), following the table."""
        account = f"{name}-{uuid.uuid4().hex[:8]}"
        if grant:
            self.operator.grant(account, grant)
        token = self.operator.authority.issue(account, Role.PLAYER, TOKEN_TTL_SECONDS)
        p = Player(account, token, self._channel, self.table_id, self.seats).watch()
        self.players.append(p)
        return p

    def seated(self, name: str, count: int, grant: int = 0) -> list[Player]:
        """``count`` new players (``<name>0``, ``<name>1``, ..., as :meth:`player`, each granted
        ``grant`` hundredths), seated in that order at the first free seats."""
        players = [self.player(f"{name}{i}", grant=grant) for i in range(count)]
        for p in players:
            p.take_seat()
        return players

    def close(self) -> None:
        """Every player still seated leaves (so the table deals no more hands to seats nobody
        plays), stops following the table; the channel is closed."""
        for p in self.players:
            if p.view.HasField("my_seat"):
                with contextlib.suppress(grpc.RpcError):
                    p.leave()
            p.stop()
        self._channel.close()


def seed_and_wait_for_play(players: list[Player], timeout: float = 60.0) -> api.PlayerView:
    """Every dealt-in player contributes a fixed client seed once the window opens; returns the
    first player's view once the hand is being played."""
    first = players[0]
    view = first.wait_phase(api.HAND_PHASE_SEEDING, api.HAND_PHASE_PLAYING, timeout=timeout)
    if view.phase == api.HAND_PHASE_SEEDING:
        for i, p in enumerate(players):
            try:
                p.contribute_seed(view.hand_id, bytes([i + 1]) * 32)
            except grpc.RpcError as error:  # the window closed first: the empty seed is used
                if error.code() != grpc.StatusCode.FAILED_PRECONDITION:
                    raise
    return first.wait_phase(api.HAND_PHASE_PLAYING, timeout=timeout)


def by_seat(players: list[Player]) -> dict[int, Player]:
    """Seat number -> player, from each player's latest view."""
    return {p.view.my_seat: p for p in players if p.view.HasField("my_seat")}


def on_turn(players: list[Player], view: api.PlayerView) -> Player:
    return by_seat(players)[view.turn_seat]


def cards_in(message: Any) -> set[int]:
    """Every card index anywhere inside a protobuf message (walks every field)."""
    found: set[int] = set()
    if isinstance(message, cards_pb2.Card):
        found.add(message.index)
        return found
    for field, value in message.ListFields():
        if field.message_type is None:
            continue
        items = [value] if hasattr(value, "ListFields") else value
        for item in items:
            found |= cards_in(item)
    return found


def operator_for(stack: Any) -> Operator:
    """The operator of a running e2e stack (``tests/e2e/conftest.py``'s ``RunningStack``)."""
    return Operator(
        stack.endpoints.table,
        stack.endpoints.ledger,
        TokenAuthority.of_issuer(stack.endpoints.token_keys),
    )


def next_turn(players: list[Player], after: int, timeout: float = 30.0) -> api.PlayerView | None:
    """The first player's view of the next turn after turn ``after`` being played (not yet
    drawn), or None when the hand has ended or aborted first."""
    view = players[0].wait(
        lambda v: (
            v.phase in (api.HAND_PHASE_ENDED, api.HAND_PHASE_ABORTED)
            or (v.phase == api.HAND_PHASE_PLAYING and v.turn_no > after and not v.has_drawn)
        ),
        timeout,
        f"turn after {after}",
    )
    return view if view.phase == api.HAND_PHASE_PLAYING else None


def play_turn_with_solver(player: Player, options: MeldOptions) -> api.DeclareResponse | None:
    """One turn of a player aiming to go out: draw where the bots' strategy says, then declare
    when the 14 cards hold a valid show (the rules library's ``valid_discards``), else discard
    the strategy's card. Returns the Declare answer, or None when it discarded."""
    view = player.wait_to_draw()
    wild = player.wild(view)
    hand = player.hand(view)
    top = player.card(view.discard_pile[-1]) if view.discard_pile else None
    source = choose_draw(hand, top, wild, options)
    drawn = player.card(
        player.draw(STOCK if source is Source.STOCK else DISCARD_PILE, view.turn_no).card
    )
    taken = drawn if source is Source.DISCARD_PILE else None
    cards = [*hand, drawn]
    face_down = declaration(cards, wild, taken, options)
    if face_down is not None:
        return player.declare(player.wire(face_down), view.turn_no)
    player.discard(player.wire(choose_discard(cards, wild, taken, options)), view.turn_no)
    return None


#: What a seat does in a scripted deal (:func:`play_deal`): draw and discard until the others are
#: out (``WIN``), drop on its first turn (``FIRST_DROP``), drop on its second turn or later
#: (``MIDDLE_DROP``), leave the table on its second turn or later (``LEAVE``: a middle drop),
#: or never act (``ABSENT``: the clock times its turns out until it is dropped).
WIN, FIRST_DROP, MIDDLE_DROP, LEAVE, ABSENT = "win", "first_drop", "middle_drop", "leave", "absent"


def next_hand(watcher: Player, after: set[str], timeout: float = 60.0) -> api.PlayerView:
    """``watcher``'s first view of a hand (seeding or being played) other than those in
    ``after``."""
    return watcher.wait(
        lambda v: (
            bool(v.hand_id)
            and v.hand_id not in after
            and v.phase in (api.HAND_PHASE_SEEDING, api.HAND_PHASE_PLAYING)
        ),
        timeout,
        f"a hand after {sorted(after)}",
    )


def _past_turn(hand_id: str, after: int) -> Callable[[api.PlayerView], bool]:
    """Whether a view shows hand ``hand_id`` over, a turn after ``after`` not yet drawn, or the
    table closed."""

    def past(v: api.PlayerView) -> bool:
        if v.table_state == api.TABLE_STATE_CLOSED:
            return True
        if v.hand_id != hand_id:
            return False
        if v.phase in (api.HAND_PHASE_ENDED, api.HAND_PHASE_ABORTED):
            return True
        return v.phase == api.HAND_PHASE_PLAYING and v.turn_no > after and not v.has_drawn

    return past


def play_deal(plan: dict[Player, str], done: set[str], timeout: float = 60.0) -> api.PlayerView:
    """Play the next deal (a hand not in ``done``) as ``plan`` says, one seat ``WIN`` and every
    other dealt-in seat dropping or leaving; returns the winner's view of the ended hand (its
    id added to ``done``), or of the table once closed (a close mid-hand). Raises
    AssertionError when a seat not in ``plan`` is on turn or the hand ends otherwise."""
    (winner,) = [p for p, what in plan.items() if what == WIN]
    view = next_hand(winner, done, timeout)
    hand_id = view.hand_id
    done.add(hand_id)
    if view.phase == api.HAND_PHASE_SEEDING:
        for i, p in enumerate(q for q, what in plan.items() if what != ABSENT):
            with contextlib.suppress(grpc.RpcError):  # the window closed: the empty seed is used
                p.contribute_seed(hand_id, bytes([i + 1]) * 32)
    played: set[Player] = set()
    after = 0
    while True:
        view = winner.wait(_past_turn(hand_id, after), timeout, f"hand {hand_id} after {after}")
        if view.table_state == api.TABLE_STATE_CLOSED:
            # A closed table's view names no hand (a watch sends the latest state, so the
            # hand's ENDED view may have been passed over): its result is GetHandResult's.
            return view
        if view.phase != api.HAND_PHASE_PLAYING:
            assert view.phase == api.HAND_PHASE_ENDED, f"hand {hand_id} aborted"
            return view
        seated = {v.my_seat: p for p in plan if (v := p.view).HasField("my_seat")}
        player = seated.get(view.turn_seat)
        assert player is not None, f"seat {view.turn_seat} is on turn and not in the plan"
        what = plan[player]
        if what == FIRST_DROP:
            assert player not in played, f"{player.account_id} cannot first-drop any more"
            player.drop(turn_no=view.turn_no)
        elif what == MIDDLE_DROP and player in played:
            player.drop(turn_no=view.turn_no)
        elif what == LEAVE and player in played:
            player.leave()
        elif what == ABSENT:
            pass  # its turn passes at its deadline
        else:
            player.wait_to_draw(timeout)
            drawn = player.draw(STOCK, turn_no=view.turn_no)
            player.discard(drawn.card, turn_no=view.turn_no)
            played.add(player)
        after = view.turn_no


def rejoin_after_elimination(a: Player, b: Player, c: Player, done: set[str]) -> api.PlayerView:
    """At a 3-seat pool 101 with rejoin: three deals leave A at 20, B at 40 and C eliminated at
    120 (offered a rejoin at 41), C accepts; returns A's view of the next deal, or of the match
    aborted (what the ledger answered about the rejoin's entry decides which)."""
    play_deal({a: WIN, b: FIRST_DROP, c: MIDDLE_DROP}, done)
    play_deal({a: WIN, b: FIRST_DROP, c: MIDDLE_DROP}, done)
    play_deal({b: WIN, a: FIRST_DROP, c: MIDDLE_DROP}, done)
    c.wait(
        lambda v: any(
            s.account_id == c.account_id and s.HasField("rejoin_total") for s in v.match.seats
        ),
        what="C's rejoin offer",
    )
    c.match_command(match_pb2.AcceptRejoin())
    return a.wait(
        lambda v: (
            v.match.HasField("aborted") or (v.match.deals_scored == 3 and bool(v.match.deal_seats))
        ),
        what="the next deal or an abort",
    )
