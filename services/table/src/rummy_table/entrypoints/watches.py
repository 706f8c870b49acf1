"""WatchTable without a thread each: the streams are async generators on the gRPC event loop.

:class:`TableWatches` keeps, per table, the asyncio events of the streams watching it. The
projection tells it of every change (``Projection.on_change``, called under the projection's
lock on whatever thread folded the change: a command's pool thread, the input loop, the hand
starter); it hands that over to the loop with ``loop.call_soon_threadsafe``, once per change and
only for a table somebody watches, and there wakes only that table's streams. A stream that
ends (its client cancelled or went away: the loop cancels its task) leaves at once. Each
stream reads the table's latest version when woken, so a slow stream skips versions instead of
queueing them; the view sent is always the caller's view of the latest state.

A spectator's view (an account with no seat at the table, or an operator) is the same for every
spectator of a version: it is built once per table and version and shared.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator

from rummy.table.v1 import table_service_pb2 as api
from rummy_platform.errors import NotFound
from rummy_table.application.app import TableApp


class TableWatches:
    """The watch streams of one table service, on one event loop (the first that follows a
    table; a host serves on one)."""

    def __init__(self, app: TableApp) -> None:
        self._app = app
        self._loop: asyncio.AbstractEventLoop | None = None
        self._waiting: dict[str, set[asyncio.Event]] = {}
        self._spectators: dict[str, api.PlayerView] = {}
        self._closed = False
        #: Stream wake-ups by table id (how many streams a change of that table woke).
        self.wakeups: Counter[str] = Counter()
        app.projection.on_change = self._changed

    @property
    def watching(self) -> int:
        """Streams open now."""
        return sum(len(events) for events in self._waiting.values())

    def _changed(self, table_id: str) -> None:
        # Any thread, under the projection's lock: only hand over to the loop.
        loop = self._loop
        if loop is not None and table_id in self._waiting:
            loop.call_soon_threadsafe(self._wake, table_id)

    def _wake(self, table_id: str) -> None:
        events = self._waiting.get(table_id, ())
        self.wakeups[table_id] += len(events)
        for event in events:
            event.set()

    def close_all(self) -> None:
        """End every stream (at shutdown; any thread)."""
        self._closed = True
        loop = self._loop
        if loop is not None:
            loop.call_soon_threadsafe(self._wake_all)

    def _wake_all(self) -> None:
        for table_id in list(self._waiting):
            self._wake(table_id)

    def _view_after(
        self, account_id: str | None, table_id: str, sent: int
    ) -> api.PlayerView | None:
        with self._app.projection.lock:  # held for microseconds, never across I/O
            table = self._app.projection.tables.get(table_id)
            seated = (
                table is not None
                and account_id is not None
                and (table.seat_of(account_id) is not None)
            )
            if seated or table is None:
                return self._app.view_after(account_id, table_id, sent)
            cached = self._spectators.get(table_id)
            if cached is None or cached.stream_version != table.version:
                cached = self._spectators[table_id] = self._app.view(None, table_id)
            return cached if cached.stream_version > sent else None

    async def follow(
        self, account_id: str | None, table_id: str, after_version: int = 0
    ) -> AsyncIterator[api.PlayerView]:
        """The caller's view once the table's stream is past ``after_version`` (at once for 0),
        then after every change, until :meth:`close_all` or the table is gone. Raises NotFound,
        InvalidArgument (``after_version`` beyond the table's version) before the first view."""
        self._app.check_watch(table_id, after_version)
        self._loop = asyncio.get_running_loop()
        event = asyncio.Event()
        waiting = self._waiting.setdefault(table_id, set())
        waiting.add(event)
        try:
            sent = after_version
            while not self._closed:
                event.clear()  # before reading: a change after the read sets it again
                try:
                    view = self._view_after(account_id, table_id, sent)
                except NotFound:
                    return
                if view is None:
                    await event.wait()
                    continue
                sent = view.stream_version
                yield view
        finally:
            waiting.discard(event)
            if not waiting and self._waiting.get(table_id) is waiting:
                del self._waiting[table_id]
                self._spectators.pop(table_id, None)
