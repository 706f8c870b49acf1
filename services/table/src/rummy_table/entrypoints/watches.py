"""WatchTable without a thread each: the streams are async generators on the gRPC event loop.

:class:`TableWatches` keeps, per table, the streams following it and a future for each of those
waiting for its next change (made by ``loop.create_future``: an ``asyncio.Event``'s wait looks
the running loop up each time, a ``getpid()`` system call: 7% of the table's Python time with
2,000 spectators, docs/benchmarks.md). The
projection tells it of every change (``Projection.on_change``, called under the projection's
lock on whatever thread folded the change: a command's pool thread, the input loop, the hand
starter); it hands that over to the loop with ``loop.call_soon_threadsafe``, once per change and
only for a table somebody watches, and there wakes only that table's streams. A stream that
ends (its client cancelled or went away: the loop cancels its task) leaves at once. Each
stream reads the table's latest version when woken, so a slow stream skips versions instead of
queueing them; the view sent is always the caller's view of the latest state.

A spectator's view (an account with no seat at the table, or an operator) is the same for every
spectator of a version: it is built once per table and version and shared, and so are the two
responses that carry it (a stream's first, with no cause, and every later one): every spectator
is sent the same message object, which gRPC serialises for each. It is also the public
part of every seat's view: a seat's view is that message's bytes (serialised once per version)
followed by the seat's own part's, ``my_seat`` and ``my_cards`` (the rules' view for that seat;
each card's bytes made once), parsed, instead of a view built field by field for each seat
(:func:`rummy_table.entrypoints.views.player_view`; measured with
``services/table/bench/seat_views.py``, docs/benchmarks.md). The variant's own part
(``variant_view``: e.g. every meld on the table, which can be large) is the spectator's too
when the seat's equals it; where it differs (e.g. a card only that seat took), the seat's own
part is packed for it and follows (a message field given twice is merged: an ``Any``'s fields
are the last one's). So every variant's public part is built and serialised once per change,
not once per watcher (a test counts the builds with several watchers of every variant). It is
the same message (a test compares the two for every account at every version of a played
hand); a variant whose view of a seat differs from the spectator's in more than the seat's
cards and variant part gets the full build.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections import Counter
from collections.abc import AsyncIterator
from typing import NamedTuple, cast

from rummy.table.v1 import table_service_pb2 as api
from rummy_game import variant_wires
from rummy_platform.errors import NotFound
from rummy_rules.cards import Card
from rummy_rules.deck import Shoe
from rummy_rules.view import PlayerView as RulesView
from rummy_table.application.app import TableApp
from rummy_table.application.held_table import HeldTable
from rummy_table.entrypoints.views import (
    SPECTATOR,
    _wire_cards,
    _wire_in,
    legal_moves,
    player_view,
)


class _Public(NamedTuple):
    """The public part of one version of a table: the spectator's view, serialised, the
    rules' view of the hand for a spectator (None between hands), and the two responses every
    spectator of the version is sent (the same message objects for all of them): ``first``
    with no cause (a stream's first response), ``later`` with the version's cause."""

    version: int
    view: api.PlayerView
    serialized: bytes
    hand: RulesView | None
    first: api.WatchTableResponse
    later: api.WatchTableResponse


class TableWatches:
    """The watch streams of one table service, on one event loop (the first that follows a
    table; a host serves on one)."""

    def __init__(self, app: TableApp) -> None:
        self._app = app
        self._loop: asyncio.AbstractEventLoop | None = None
        #: Streams following each table (a table is here while one follows it).
        self._following: Counter[str] = Counter()
        #: Per table, the futures of its streams waiting for its next change (each stream's
        #: own: a cancelled stream cancels only its own).
        self._waiting: dict[str, set[asyncio.Future[None]]] = {}
        self._public: dict[str, _Public] = {}
        self._closed = False
        #: Stream wake-ups by table id (how many streams a change of that table woke).
        self.wakeups: Counter[str] = Counter()
        app.projection.on_change = self._changed

    @property
    def watching(self) -> int:
        """Streams open now."""
        return sum(self._following.values())

    def _changed(self, table_id: str) -> None:
        # Any thread, under the projection's lock: only hand over to the loop.
        loop = self._loop
        if loop is not None and table_id in self._following:
            loop.call_soon_threadsafe(self._wake, table_id)

    def _wake(self, table_id: str) -> None:
        waiting = self._waiting.get(table_id)
        if not waiting:
            return
        self.wakeups[table_id] += len(waiting)
        for woken in waiting:
            if not woken.done():
                woken.set_result(None)
        waiting.clear()

    def close_all(self) -> None:
        """End every stream (at shutdown; any thread)."""
        self._closed = True
        loop = self._loop
        if loop is not None:
            loop.call_soon_threadsafe(self._wake_all)

    def _wake_all(self) -> None:
        for table_id in list(self._waiting):
            self._wake(table_id)

    def _response_after(
        self, account_id: str | None, table_id: str, sent: int, later: bool
    ) -> api.WatchTableResponse | None:
        """The caller's response past version ``sent``: its view and, if ``later`` (not the
        stream's first response), the full name of the last event in it as ``cause_type``
        (``""`` when not known); None while the table is at ``sent``. A spectator's is the
        version's shared message (:class:`_Public`). Raises NotFound."""
        with self._app.projection.lock:  # held for microseconds, never across I/O
            table = self._app.projection.tables.get(table_id)
            if table is None:
                # raises NotFound; the view is as render_view (player_view) renders it
                view = cast(api.PlayerView | None, self._app.view_after(account_id, table_id, sent))
                return None if view is None else api.WatchTableResponse(view=view)
            if table.version <= sent:
                return None
            public = self._public_of(table)
            seat = table.seat_of(account_id) if account_id is not None else None
            if seat is None:
                return public.later if later else public.first
            response = api.WatchTableResponse(cause_type=table.last_cause if later else "")
            response.view.MergeFromString(_seat_view(table, account_id, seat, public))
            return response

    def _public_of(self, table: HeldTable) -> _Public:
        """The public part of the table's current version (built at most once per version)."""
        cached = self._public.get(table.table_id)
        if cached is None or cached.version != table.version:
            hand = (
                table.variant.view(table.hand, SPECTATOR)
                if table.hand is not None and table.ctx is not None
                else None
            )
            view = player_view(table, None)
            first = api.WatchTableResponse(view=view)
            later = api.WatchTableResponse(view=view, cause_type=table.last_cause)
            cached = _Public(table.version, view, view.SerializeToString(), hand, first, later)
            self._public[table.table_id] = cached
        return cached

    async def follow(
        self, account_id: str | None, table_id: str, after_version: int = 0
    ) -> AsyncIterator[api.WatchTableResponse]:
        """The caller's view once the table's stream is past ``after_version`` (at once for 0),
        then after every change, until :meth:`close_all` or the table is gone, each with its
        ``cause_type``: the full name of the last table-stream event the view shows (empty for
        the first view). A spectator's responses are shared with every other spectator of the
        table: read them, never change them. Raises NotFound, InvalidArgument
        (``after_version`` beyond the table's version) before the first view."""
        self._app.check_watch(table_id, after_version)
        self._loop = loop = asyncio.get_running_loop()
        self._following[table_id] += 1
        waiting = self._waiting.setdefault(table_id, set())
        try:
            sent, later = after_version, False
            while not self._closed:
                try:
                    response = self._response_after(account_id, table_id, sent, later)
                except NotFound:
                    return
                if response is None:
                    # No await between the read and this: a change after the read wakes it
                    # (loop.create_future: asyncio.Event's wait looks the running loop up,
                    # a getpid() system call, every time).
                    woken: asyncio.Future[None] = loop.create_future()
                    waiting.add(woken)
                    try:
                        await woken
                    finally:
                        waiting.discard(woken)
                    continue
                yield response
                later, sent = True, response.view.stream_version
        finally:
            self._following[table_id] -= 1
            if not self._following[table_id]:
                del self._following[table_id]
                self._waiting.pop(table_id, None)
                self._public.pop(table_id, None)


def _seat_view(table: HeldTable, account_id: str | None, seat: int, public: _Public) -> bytes:
    """``player_view(table, account_id)`` for the account seated at ``seat``, serialised: the
    public part's bytes followed by the seat's own part's (parsed, a message serialised after
    another is the two merged: ``my_seat`` and ``my_cards`` are empty in the public part),
    under the projection's lock."""
    ctx = table.ctx
    own_cards: tuple[Card, ...] = ()
    dealt_in = ctx is not None and seat in ctx.accounts
    own_part = b""
    if dealt_in and public.hand is not None and table.hand is not None:
        own = table.variant.view(table.hand, seat)
        if not _same_public(own, public.hand):
            # this variant shows a seat more
            return player_view(table, account_id).SerializeToString()
        own_cards = own.cards
        if own.variant_view != public.hand.variant_view:
            assert ctx is not None
            packed = variant_wires.lookup(ctx.rule_set.variant).view_to_pb(
                own.variant_view, ctx.shoe
            )
            if packed is None:  # nothing of its own to put over the spectator's part
                return player_view(table, account_id).SerializeToString()
            mine = api.PlayerView()
            mine.variant_view.Pack(packed)
            own_part = mine.SerializeToString()
    private = _MY_SEAT[seat] if seat < len(_MY_SEAT) else _my_seat(seat)
    private += own_part
    if own_cards:
        assert ctx is not None
        shoe = ctx.shoe  # a property that looks the shoe up: once, not per card
        entries = _card_entries(shoe)
        private += b"".join([_card_entry(c, entries, shoe) for c in own_cards])
    if dealt_in:
        moves = legal_moves(table, seat)
        if moves:
            private += api.PlayerView(legal_moves=moves).SerializeToString()
    return public.serialized + private


#: The fields of the rules' view other than the seat, its cards and the variant's part: a
#: seat's view shares the public part only where these equal the spectator's.
_PUBLIC_FIELDS = tuple(
    f.name for f in dataclasses.fields(RulesView) if f.name not in ("seat", "cards", "variant_view")
)


def _same_public(own: RulesView, spectator: RulesView) -> bool:
    return all(getattr(own, name) == getattr(spectator, name) for name in _PUBLIC_FIELDS)


def _my_seat(seat: int) -> bytes:
    return api.PlayerView(my_seat=seat).SerializeToString()


_MY_SEAT = tuple(_my_seat(seat) for seat in range(16))

#: Per shoe, each card's ``my_cards`` entry as serialised bytes (tag, length, card), made once;
#: keyed like :func:`rummy_table.entrypoints.views._wire_in`'s cards.
_CARD_ENTRIES: dict[Shoe, dict[tuple[object, int, int], bytes]] = {}


def _card_entries(shoe: Shoe) -> dict[tuple[object, int, int], bytes]:
    found = _CARD_ENTRIES.get(shoe)
    if found is None:  # a few shoes at most
        found = _CARD_ENTRIES[shoe] = {}
    return found


def _card_entry(card: Card, entries: dict[tuple[object, int, int], bytes], shoe: Shoe) -> bytes:
    key = (card.rank, id(card.suit), card.copy)
    found = entries.get(key)
    if found is None:  # a few hundred cards per shoe at most
        wire = _wire_in(card, _wire_cards(shoe), shoe)
        found = entries[key] = api.PlayerView(my_cards=[wire]).SerializeToString()
    return found
