"""WatchTable on the aio host (issue 19): many streams cost no threads, a change wakes only its
table's streams, a cancelled stream is released at once."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import Protocol

import grpc
from served_table import SECRET, served_table_and_servicer
from test_table_service import discard_last, draw, first_drop, on_turn, playing_table
from world import World

from rummy.table.v1 import table_service_pb2 as api
from rummy.table.v1 import table_service_pb2_grpc as api_grpc
from rummy_platform.auth import Role, TokenAuthority, bearer_metadata
from rummy_table.entrypoints.views import player_view
from rummy_table.entrypoints.watches import TableWatches

STREAMS_PER_TABLE = 150


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
        authority = TokenAuthority(SECRET)
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
        async for view in watches.follow(account, table_id):
            seen[account].append(view.stream_version)

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
                async for view in watches.follow(account, table_id, table.version - 1):
                    return view
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
