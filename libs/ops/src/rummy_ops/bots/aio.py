"""Bots on one asyncio event loop: :class:`AsyncBot`, the :class:`~rummy_ops.bots.client.Bot` of a
``grpc.aio`` client, and :class:`AioTableRouter`, the table routing of its calls.

A threaded :class:`Bot` costs a thread per seat, and its ``WatchTable`` stream, read through
grpc's synchronous client, wakes that thread every 0.1 s while it waits for a view (grpc's
``_common.wait`` polls so that signals are seen): 1,024 waiting bots in one process used about
a third of a core doing nothing. An :class:`AsyncBot` is a task: a waiting stream costs nothing
until a view arrives. It plays exactly like :class:`Bot` (its reactions are
:meth:`Bot.reactions`, the same generator, driven with awaited calls), keeps the same
``stats`` and follows a table to the instance serving it the same way. Made, started and stopped
on the loop that runs it; not thread-safe (read ``stats`` from the loop, or between views).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import grpc

from rummy.table.v1 import table_service_pb2 as api
from rummy_ops.bots.client import RETRIES, UNCONFIRMED, Bot, Reactions, _request_id
from rummy_platform.tls import dial_aio
from rummy_table.contract import TableRouter, owner_named_by


class _Metadatum(NamedTuple):
    key: str
    value: str | bytes


class _SyncShaped(grpc.RpcError):
    """An ``AioRpcError`` in the shape :func:`owner_named_by` reads (``trailing_metadata()`` as
    entries with ``key`` and ``value``, like the synchronous client's)."""

    def __init__(self, error: grpc.RpcError) -> None:
        self._error: Any = error

    def code(self) -> grpc.StatusCode:
        return self._error.code()  # type: ignore[no-any-return]

    def trailing_metadata(self) -> Any:
        found = self._error.trailing_metadata()
        return tuple(_Metadatum(key, value) for key, value in found or ())


class AioTableRouter(TableRouter):
    """:class:`TableRouter` over ``grpc.aio`` channels (``channel`` builds one, default a
    ``grpc.aio`` channel, TLS per the process's ``RUMMY_TLS_*``:
    :func:`rummy_platform.tls.dial_aio`): the same owners, redirects and retries, with
    :meth:`call` and :meth:`close` awaited. Use it from one event loop."""

    def __init__(
        self,
        addresses: str | Sequence[str],
        *,
        wait_s: float = 30.0,
        channel: Callable[[str], grpc.aio.Channel] = dial_aio,
    ) -> None:
        super().__init__(addresses, wait_s=wait_s, channel=channel)  # type: ignore[arg-type]

    def follow(self, error: grpc.RpcError, table_id: str, address: str | None = None) -> bool:
        return super().follow(_SyncShaped(error), table_id, address)

    async def call(self, method: str, request: Any, **kwargs: Any) -> Any:
        """``TableService.<method>(request, **kwargs)``, awaited, as :meth:`TableRouter.call`:
        any status but UNAVAILABLE raised at once, UNAVAILABLE after ``wait_s`` of retries."""
        table_id: str = getattr(request, "table_id", "")
        deadline = time.monotonic() + self._wait_s
        pause, target = 0.05, None
        while True:
            address = target or self.address_for(table_id)
            try:
                return await getattr(self.stub(address), method)(request, **kwargs)
            except grpc.RpcError as error:
                if not self.follow(error, table_id, address) or time.monotonic() >= deadline:
                    raise
                target = owner_named_by(_SyncShaped(error))
                if target is None:
                    await asyncio.sleep(pause)
                    pause = min(pause * 2, 1.0)

    async def close(self) -> None:  # type: ignore[override]
        with self._lock:
            channels, self._channels, self._stubs = list(self._channels.values()), {}, {}
        for channel in channels:
            await channel.close()  # type: ignore[misc]


class AsyncBot(Bot):
    """A :class:`Bot` on an event loop; ``router`` is an :class:`AioTableRouter`. :meth:`take_seat`
    and :meth:`stop` are awaited; :meth:`start` makes the bot's task on the running loop."""

    _router: AioTableRouter

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._task: asyncio.Task[None] | None = None

    async def take_seat(self) -> int:  # type: ignore[override]
        """Sit at the table (any free seat); returns the seat number. Raises grpc.RpcError."""
        reply = await self._arpc(
            "TakeSeat",
            api.TakeSeatRequest(table_id=self.table_id, client_request_id=_request_id()),
        )
        self.seat = reply.seat
        return self.seat

    def start(self) -> None:
        """Follow the table and play, in a task of the running loop, until :meth:`stop`."""
        self._task = asyncio.get_running_loop().create_task(
            self._watch(), name=f"bot-{self.account_id}"
        )

    async def stop(self, leave: bool = True) -> None:  # type: ignore[override]
        """Stop playing; with ``leave``, leave the table first if seated. Idempotent."""
        await self._adrive(self._stopping(leave))
        if self._task is not None:
            with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(self._task, 10)

    @property
    def alive(self) -> bool:
        """True while the bot's task runs (started and not stopped or dead)."""
        return self._task is not None and not self._task.done()

    async def _watch(self) -> None:
        """:meth:`Bot._run` on the loop: the stream opened again whenever it breaks or ends."""
        while not self._stop.is_set():
            address = self._router.address_for(self.table_id)
            try:
                call: Any = self._router.stub(address).WatchTable(
                    api.WatchTableRequest(table_id=self.table_id), metadata=self._metadata
                )
                self._call = call
                async for response in call:
                    if self._stop.is_set():
                        return
                    await self._react_async(response.view)
            except grpc.RpcError as error:
                if self._stop.is_set():
                    return
                if self._moved(error, address):
                    continue
            except asyncio.CancelledError:
                if self._stop.is_set():
                    return
                raise
            await asyncio.sleep(0.5)

    async def _react_async(self, view: api.PlayerView) -> None:
        """:meth:`Bot.reactions` to ``view``, each call awaited; what it raises is noted."""
        try:
            await self._adrive(self.reactions(view))
        except Exception as exc:  # a bot's task must not die unseen
            self._note(f"view v{view.stream_version} hand {view.hand_id}: {exc!r}")

    async def _adrive(self, steps: Reactions) -> None:
        """:meth:`Bot._drive` awaited: each call ``steps`` yields made on the loop."""
        try:
            call = next(steps)
            while True:
                try:
                    reply = await self._arpc(*call)
                except grpc.RpcError as error:
                    call = steps.throw(error)
                else:
                    call = steps.send(reply)
        except StopIteration:
            pass

    async def _arpc(self, name: str, request: Any) -> Any:
        """:meth:`Bot._rpc` awaited: counted alike, an :data:`UNCONFIRMED` answer retried alike."""
        with self._counted(name, request):
            for attempt in range(RETRIES + 1):
                try:
                    return await self._router.call(
                        name, request, metadata=self._metadata, timeout=30
                    )
                except grpc.RpcError as error:
                    if error.code() not in UNCONFIRMED or attempt == RETRIES or self._stop.is_set():
                        raise
                    await asyncio.sleep(0.5 * (attempt + 1))
        raise AssertionError("unreachable")
