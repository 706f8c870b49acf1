"""WatchTable on the aio host (issue 19): many streams cost no threads, a change wakes only its
table's streams, a cancelled stream is released at once."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Protocol

import grpc
import pytest
import table_calls
from google.protobuf import any_pb2
from google.protobuf.message import Message
from served_table import served_table_and_servicer
from test_table_service import discard_last, draw, first_drop, on_turn, playing_table
from world import World

from rummy.common.v1 import cards_pb2
from rummy.gin.v1 import events_pb2 as gin_pb
from rummy.gin.v1 import view_pb2 as gin_view_pb
from rummy.table.v1 import table_service_pb2 as api
from rummy.table.v1 import table_service_pb2_grpc as api_grpc
from rummy_game import variant_wires
from rummy_platform.auth import Role, bearer_metadata
from rummy_platform.topics import TABLE_EVENTS
from rummy_rules.deck import Shoe
from rummy_table.application.held_table import HeldTable
from rummy_table.entrypoints import watches as watches_module
from rummy_table.entrypoints.views import SPECTATOR, player_view
from rummy_table.entrypoints.watches import TableWatches
from rummy_testing.token_keys import issuer_authority

STREAMS_PER_TABLE = 150
STREAMS_THREAD = "watch-streams"


class _Watch(Protocol):
    """A WatchTable call as the client holds it: its responses, and cancel."""

    def __next__(self) -> api.WatchTableResponse: ...

    def cancel(self) -> bool: ...


def _until(condition: Callable[[], bool], what: str, timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


def test_hundreds_of_watches_take_no_thread_each_and_a_change_wakes_only_its_tables_streams() -> (
    None
):
    world = World()
    with served_table_and_servicer(world) as (_, host, servicer):
        busy, quiet = world.open_table(), world.open_table()
        authority = issuer_authority()
        channel = grpc.insecure_channel(host.address)
        table_stub = api_grpc.TableServiceStub(channel)
        threads_before = threading.active_count()

        def watch(table_id: str, i: int) -> _Watch:
            token = authority.issue(f"watcher-{table_id[:6]}-{i}", Role.PLAYER)
            return table_stub.WatchTable(
                api.WatchTableRequest(table_id=table_id), metadata=bearer_metadata(token)
            )

        streams = {t: [watch(t, i) for i in range(STREAMS_PER_TABLE)] for t in (busy, quiet)}
        for table_streams in streams.values():
            for stream in table_streams:
                assert next(stream).view.stream_version == 1
        _until(lambda: servicer.watches.watching == 2 * STREAMS_PER_TABLE, "streams open")
        # 300 streams open: the process has hardly more threads than before (the sync server
        # had one per stream).
        assert threading.active_count() - threads_before < 20

        woken_quiet = servicer.watches.wakeups[quiet]
        world.sit(busy, "alice")
        for stream in streams[busy]:
            view = next(stream).view
            assert view.stream_version == 2 and [s.account_id for s in view.seats] == ["alice"]
        assert servicer.watches.wakeups[busy] >= STREAMS_PER_TABLE
        assert servicer.watches.wakeups[quiet] == woken_quiet  # the quiet table's slept on

        for stream in streams[busy]:
            stream.cancel()  # released at once, with no change of the table to wake them
        _until(lambda: servicer.watches.watching == STREAMS_PER_TABLE, "cancelled released", 5)
        for stream in streams[quiet]:
            stream.cancel()
        _until(lambda: servicer.watches.watching == 0, "all released", 5)
        channel.close()


def test_a_discard_and_the_turn_it_starts_wake_each_watcher_of_the_table_once() -> None:
    # A discard appends two events (CardDiscarded, TurnStarted) in one commit: the streams are
    # woken once for the change, not once per event (each wake costs every stream a look).
    world = World()
    players = ("alice", "bob", "carol", "dave")
    table_id, _ = playing_table(world, players)
    watches = TableWatches(world.app)
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    seen: dict[str, list[int]] = {account: [] for account in players}

    async def follow(account: str) -> None:
        async for response in watches.follow(account, table_id):
            seen[account].append(response.view.stream_version)

    def drained() -> None:  # every wake-up handed to the loop so far has run
        asyncio.run_coroutine_threadsafe(asyncio.sleep(0), loop).result(5)

    def version() -> int:
        return world.app.projection.tables[table_id].version

    tasks = [asyncio.run_coroutine_threadsafe(follow(a), loop) for a in players]
    try:
        _until(lambda: all(seen[a] == [version()] for a in players), "first views")
        account, view = on_turn(world, table_id)
        draw(world, table_id, account, view)
        drained()
        before = watches.wakeups[table_id]
        events_before = version()
        discard_last(world, table_id, account)
        assert version() == events_before + 2  # CardDiscarded and TurnStarted
        drained()
        _until(lambda: all(seen[a][-1] == version() for a in players), "views after discard")
        assert watches.wakeups[table_id] - before == len(players)
    finally:
        watches.close_all()  # every stream ends
        for task in tasks:
            task.result(5)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
        loop.close()


def test_a_view_after_the_first_names_the_last_event_it_shows_as_its_cause() -> None:
    # WatchTableResponse.cause_type (protos/rummy/table/v1/table_service.proto): empty for the
    # first view of a stream, then the full name of the last table-stream event in each view.
    world = World()
    table_id = world.open_table()
    watches = TableWatches(world.app)

    def last_event() -> str:
        return world.log.read_stream(TABLE_EVENTS, table_id)[
            -1
        ].envelope.payload.DESCRIPTOR.full_name

    async def two_views() -> tuple[api.WatchTableResponse, api.WatchTableResponse]:
        stream = watches.follow("alice", table_id)
        first = await anext(stream)
        world.sit(table_id, "alice")
        second = await asyncio.wait_for(anext(stream), 5)
        watches.close_all()
        return first, second

    first, second = asyncio.run(two_views())
    assert first.cause_type == ""
    assert second.cause_type == last_event() == "rummy.table.v1.TablePlayerSeated"
    assert second.view.stream_version == world.app.projection.tables[table_id].version


def test_every_watchers_view_is_the_view_built_for_it_at_every_version_of_a_played_hand() -> None:
    # The streams build a seat's view from the version's shared public part plus the seat's own
    # cards: it must be exactly player_view's for each seated account (dealt in or seated after
    # the deal), a spectator and an account with no seat, from the waiting table to the end.
    world = World()
    dealt = ("alice", "bob", "carol")
    table_id = world.open_table()
    watches = TableWatches(world.app)
    accounts: tuple[str | None, ...] = (*dealt, "dave", "erin", None)

    def views_match() -> int:
        table = world.app.projection.tables[table_id]
        for account in accounts:

            async def first(account: str | None = account) -> api.PlayerView:
                async for response in watches.follow(account, table_id, table.version - 1):
                    return response.view
                raise AssertionError("the stream ended")

            got = asyncio.run(first())
            assert got == player_view(table, account), (account, table.version)
        return table.version

    checked = {views_match()}
    for account in dealt:
        world.sit(table_id, account)
        checked.add(views_match())
    hand_id = world.start_hand(table_id)
    world.prepare(table_id, hand_id)
    checked.add(views_match())
    world.sit(table_id, "dave")  # seated, not dealt in
    checked.add(views_match())
    for _ in range(4):
        account, view = on_turn(world, table_id)
        draw(world, table_id, account, view)
        checked.add(views_match())
        assert len(world.view(table_id, account).my_cards) == 14
        discard_last(world, table_id, account)
        checked.add(views_match())
    for _ in range(2):  # two drops end the hand of three: the result is revealed
        first_drop(world, table_id, hand_id)
        checked.add(views_match())
    assert world.view(table_id, None).HasField("result")
    assert len(checked) >= 15


def _turn_steps(world: World, table_id: str, variant: str) -> list[Callable[[], object]]:
    """The commands of one turn, each a change of its own: a gin seat offered the upcard passes
    it; otherwise the seat draws and then discards."""
    account, view = on_turn(world, table_id)
    offer = gin_view_pb.GinView()
    if variant == "gin" and view.variant_view.Unpack(offer) and offer.first_turn_offer:
        command = any_pb2.Any()
        command.Pack(gin_pb.PassUpcard())
        request = world.turn_request(api.PlayRequest, table_id, view, command=command)
        return [lambda: table_calls.play(world.app, account, request)]
    return [
        lambda: draw(world, table_id, account, view),
        lambda: discard_last(world, table_id, account),
    ]


def _seated(variant: str, seats: int, dealt_in: int) -> tuple[World, str, tuple[str, ...]]:
    """A world with a table of ``variant`` at ``seats`` and ``dealt_in`` players seated."""
    world = World()
    table_id = world.open_table(seats=seats, rules=cards_pb2.RuleSet(variant=variant))
    dealt = tuple(f"p{i}" for i in range(dealt_in))
    for account in dealt:
        world.sit(table_id, account)
    return world, table_id, dealt


@contextmanager
def _followed(
    watches: TableWatches, table_id: str, watchers: tuple[str | None, ...]
) -> Iterator[dict[str | None, list[api.WatchTableResponse]]]:
    """A stream of each watcher on a loop of its own thread (named :data:`STREAMS_THREAD`), its
    responses appended as they come, once each has its first; every stream ended and the loop
    closed after the block."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name=STREAMS_THREAD, daemon=True)
    thread.start()
    seen: dict[str | None, list[api.WatchTableResponse]] = {a: [] for a in watchers}

    async def follow(account: str | None) -> None:
        async for response in watches.follow(account, table_id):
            seen[account].append(response)

    tasks = [asyncio.run_coroutine_threadsafe(follow(a), loop) for a in watchers]
    try:
        _until(lambda: all(seen.values()), "first views")
        yield seen
    finally:
        watches.close_all()
        for task in tasks:
            task.result(5)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
        loop.close()


@pytest.mark.parametrize(
    ("variant", "seats", "dealt_in"),
    [("indian-points", 4, 3), ("rummy500", 4, 3), ("rummy500", 8, 8), ("gin", 2, 2)],
)
def test_each_change_builds_and_serialises_the_public_part_once_however_many_watch(
    variant: str, seats: int, dealt_in: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue 29: the public part of a view (Rummy 500's melds and pile can be large) is built
    # and serialised once per change, not once per watcher, for every variant. Counted through
    # the streams' own code: the view builds (player_view) and the variant part's packings
    # (the wire's view_to_pb) per change, with every seat and three more accounts watching.
    world, table_id, dealt = _seated(variant, seats, dealt_in)
    watchers: tuple[str | None, ...] = (*dealt, "watcher-1", "watcher-2", None)
    builds = {"view": 0, "part": 0}
    built = player_view

    def on_streams() -> bool:  # the streams' loop, not the test's own reads of a view
        return threading.current_thread().name == STREAMS_THREAD

    def counted_view(table: HeldTable, account: str | None) -> api.PlayerView:
        builds["view"] += on_streams()
        return built(table, account)

    wire = variant_wires.lookup(variant)
    packed = wire.view_to_pb

    def counted_part(view: object, shoe: Shoe) -> Message | None:
        builds["part"] += on_streams()
        return packed(view, shoe)

    monkeypatch.setattr(watches_module, "player_view", counted_view)
    monkeypatch.setattr(wire, "view_to_pb", counted_part)
    watches = TableWatches(world.app)
    seen: dict[str | None, list[api.WatchTableResponse]]  # bound below

    def version() -> int:
        return world.app.projection.tables[table_id].version

    def after(change: Callable[[], object]) -> tuple[int, int]:
        """The view builds and part packings one change cost, once every watcher saw it."""
        before = dict(builds)
        change()
        _until(lambda: all(v[-1].view.stream_version == version() for v in seen.values()), "seen")
        return builds["view"] - before["view"], builds["part"] - before["part"]

    def parts() -> int:
        """The variant parts a change should pack: the spectator's (none for Indian rummy),
        and one for each seat whose part differs from it (gin's: the card it may take; none in
        Rummy 500, whose melds and pile are everybody's)."""
        table = world.app.projection.tables[table_id]
        assert table.hand is not None
        spectator = table.variant.view(table.hand, SPECTATOR).variant_view
        own = sum(table.variant.view(table.hand, s).variant_view != spectator for s in range(seats))
        if variant == "rummy500":
            assert own == 0
        return (spectator is not None) + own

    with _followed(watches, table_id, watchers) as seen:
        hand_id = ""

        def start() -> None:
            nonlocal hand_id
            hand_id = world.start_hand(table_id)

        assert after(start) == (1, 0)
        after(lambda: world.prepare(table_id, hand_id))  # several changes: each built once
        if dealt_in < seats:  # seated after the deal: not dealt in
            assert after(lambda: world.sit(table_id, "watcher-1")) == (1, parts())
        for _ in range(3):
            for step in _turn_steps(world, table_id, variant):
                assert after(step) == (1, parts())
        table = world.app.projection.tables[table_id]
        for watcher, responses in seen.items():
            assert responses[-1].view == player_view(table, watcher), watcher


def _indexes(message: Message, skip: str = "") -> set[int]:
    """The shoe index of every card anywhere inside ``message`` (but in its field ``skip``)."""
    if isinstance(message, cards_pb2.Card):
        return {message.index}
    found: set[int] = set()
    for field, value in message.ListFields():
        if field.message_type is None or field.name == skip:
            continue
        for item in [value] if isinstance(value, Message) else value:
            found |= _indexes(item)
    return found


def _unpacked_part(view: api.PlayerView) -> Message | None:
    """The view's variant part unpacked (its class registered by the variant's bundle)."""
    if not view.variant_view.type_url:
        return None
    from google.protobuf import symbol_database

    name = view.variant_view.type_url.rsplit("/", 1)[-1]
    part: Message = symbol_database.Default().GetSymbol(name)()
    view.variant_view.Unpack(part)
    return part


@pytest.mark.parametrize(
    ("variant", "seats", "dealt_in"),
    [("indian-points", 4, 3), ("rummy500", 4, 4), ("gin", 2, 2)],
)
def test_spectators_share_one_response_per_version_and_no_stream_sees_a_card_it_must_not(
    variant: str, seats: int, dealt_in: int
) -> None:
    # The shared path (issue 34): every spectator of a version is sent the one response built
    # for the version. At every change of a played hand, once each stream has seen it: the
    # spectators' responses are one message, its bytes those of the spectator's view built
    # field by field (player_view) and holding no card of any seat's hand (the result, once
    # the hand ends, reveals them by design); each seat's view is the one built for it, its
    # bytes too, and two seats' views differ; no stream was sent a version twice or an older
    # version after a newer one (a version's shared response is never sent for another).
    world, table_id, dealt = _seated(variant, seats, dealt_in)
    spectators: tuple[str | None, ...] = ("watcher-1", "watcher-2", None)
    watches = TableWatches(world.app)
    seen: dict[str | None, list[api.WatchTableResponse]]  # bound below

    def table() -> HeldTable:
        return world.app.projection.tables[table_id]

    def check(change: Callable[[], object]) -> None:
        change()
        version = table().version
        _until(lambda: all(s and s[-1].view.stream_version == version for s in seen.values()), "")
        shared = seen[spectators[0]][-1]
        built = player_view(table(), None)
        assert all(seen[a][-1] is shared for a in spectators)
        assert shared.view.SerializeToString() == built.SerializeToString()
        assert not shared.view.my_cards and not shared.view.HasField("my_seat")
        own = {a: seen[a][-1].view for a in dealt}
        public = _indexes(shared.view, skip="result")
        part = _unpacked_part(shared.view)
        if part is not None:
            public |= _indexes(part)
        for account, view in own.items():
            assert view.SerializeToString() == player_view(table(), account).SerializeToString()
            assert not public & {card.index for card in view.my_cards}, account
        if table().hand is not None:
            assert len({v.SerializeToString() for v in own.values()}) == len(own)

    with _followed(watches, table_id, (*dealt, *spectators)) as seen:
        hand_id = ""

        def start() -> None:
            nonlocal hand_id
            hand_id = world.start_hand(table_id)

        check(start)
        check(lambda: world.prepare(table_id, hand_id))
        for _ in range(4):
            for step in _turn_steps(world, table_id, variant):
                check(step)
        for account, responses in seen.items():
            versions = [r.view.stream_version for r in responses]
            assert versions == sorted(set(versions)), account
            assert [r.cause_type for r in responses[:1]] == [""]
            assert all(r.cause_type for r in responses[1:]), account
