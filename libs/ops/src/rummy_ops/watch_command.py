"""``rummy watch TABLE``: a table's public state, live, through the table service's WatchTable
stream as an operator sees it (a spectator's view: never a hand's cards, never the stock's
order), rendered by :mod:`rummy_ops.watch_view` (the variant's own part by its bundle).

On a terminal the state is redrawn in place (plain ANSI: home, clear) above the latest events;
piped, it prints the state once and then one line per event (``HH:MM:SS vN what happened``, the
time the view arrived, UTC, and the table-stream version it reflects), flushed as it comes, no
escape codes. The stream is followed across a table service's restart or a table's hand-over
(UNAVAILABLE: the router's redirect, then the view after the last one seen). It ends on Ctrl-C
(status 0), once ``--hands`` hands have ended, when the table closes, or on a closed pipe (the
console wrapper's quiet exit, :func:`rummy_rules.console.run_console`).
"""

from __future__ import annotations

import signal
import sys
import time
from collections import deque
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from types import FrameType

import click
import grpc

from rummy.table.v1 import table_service_pb2 as api
from rummy_ops.legend import LegendCommand, demo_legend
from rummy_ops.operator_auth import operator_token
from rummy_ops.reach import TABLE_SERVICE, WrongService, refused
from rummy_ops.table_names import (
    list_tables,
    no_such_table,
    resolve,
    table_router,
    table_service_options,
)
from rummy_ops.watch_view import Watched, event_lines, hand_over, state_lines
from rummy_platform.auth import bearer_metadata
from rummy_table.contract import TableRouter

#: Events kept under the state on a terminal.
EVENT_LINES = 15
#: Seconds between two attempts to open the stream again after it broke.
RETRY_PAUSE_S = 0.5
#: Home the cursor and clear the screen (a terminal's redraw).
_REDRAW = "\x1b[H\x1b[2J"


def watch_legend() -> list[tuple[str, str]]:
    """What ``rummy watch`` abbreviates: its own marks, then the result's and the match's as
    ``rummy demo`` prints them (:func:`rummy_ops.legend.demo_legend`)."""
    return [
        ("HH:MM:SS vN", "piped: when the view arrived (UTC) and the table-stream version it shows"),
        ("sN NAME", "seat N and the account seated there"),
        (
            "cut / pile N top C / stock N",
            "the cut card, the pile's size and top card, the "
            "stock's size (its order is never shown)",
        ),  # fmt: skip
        ("to draw / to discard", "what the seat on turn does next; until: its deadline (UTC)"),
        ("missed N", "the seat's timed-out turns in a row"),
        *demo_legend()[1:],
    ]


class Interrupt:
    """Ctrl-C (SIGINT) while watching, as a signal handler: it cancels the open stream, so the
    watch ends between two views (:func:`views` returns) rather than by an exception raised
    wherever the main thread happens to be, e.g. inside gRPC's wait for the next view."""

    def __init__(self) -> None:
        self.requested = False
        self.call: grpc.RpcContext | None = None

    def __call__(self, _signum: int, _frame: FrameType | None) -> None:
        self.requested = True
        if self.call is not None:
            self.call.cancel()

    def follow(self, call: grpc.RpcContext) -> None:
        """``call`` is the stream open now (cancelled at once if Ctrl-C came already)."""
        self.call = call
        if self.requested:
            call.cancel()


def views(
    router: TableRouter,
    table_id: str,
    metadata: Callable[[], tuple[tuple[str, str], ...]],
    interrupt: Interrupt | None = None,
) -> Iterator[api.PlayerView]:
    """The table's views as WatchTable streams them (a snapshot first), followed again after a
    break from the view after the last one seen (``metadata()`` asked at each opening: a minted
    token is fresh), until ``interrupt`` is requested. Raises TableNameError when the service
    does not know the table, click.ClickException when it refuses the watch otherwise."""
    version = 0
    while interrupt is None or not interrupt.requested:
        address = router.address_for(table_id)
        request = api.WatchTableRequest(table_id=table_id, after_stream_version=version)
        call = router.stub(address).WatchTable(request, metadata=metadata())
        if interrupt is not None:
            interrupt.follow(call)
        try:
            for response in call:
                version = response.view.stream_version
                yield response.view
        except grpc.RpcError as error:
            if interrupt is not None and interrupt.requested:
                return
            if error.code() == grpc.StatusCode.NOT_FOUND:
                raise no_such_table(table_id) from None
            why = refused(TABLE_SERVICE, address, error)
            if isinstance(why, WrongService):
                raise why from None
            if not router.follow(error, table_id, address):
                raise click.ClickException(
                    f"the table service at {address} refused the watch: "
                    f"{error.code().name}: {error.details()}"
                ) from None
        finally:
            call.cancel()  # a stream left open holds one of the account's watches
        time.sleep(RETRY_PAUSE_S)


def _stamp() -> str:
    return datetime.now(UTC).strftime("%H:%M:%S")


def show(
    table: Watched, stream: Iterator[api.PlayerView], live: bool, hands: int | None = None
) -> None:
    """Print ``stream``'s views of ``table``: on a terminal (``live``) the state redrawn above
    the latest events, else the state once and one line per event. Returns once ``hands``
    hands have ended (None: no such end) or the table closed. Raises click.ClickException when
    the table is closed already (its last state printed first)."""
    previous: api.PlayerView | None = None
    recent: deque[str] = deque(maxlen=EVENT_LINES)
    ended = 0
    for view in stream:
        stamp = _stamp()
        if live:
            if previous is not None:
                recent.extend(f"{stamp} {line}" for line in event_lines(table, previous, view))
            screen = [*state_lines(table, view), "", "events (latest last):", *recent]
            click.echo(_REDRAW + "\n".join(screen), color=True)  # the codes kept as given
        else:
            for line in event_lines(table, previous, view):
                click.echo(f"{stamp} v{view.stream_version} {line}")
        sys.stdout.flush()
        if previous is None and view.table_state == api.TABLE_STATE_CLOSED:
            raise click.ClickException(
                f"table {table.name} is closed: nothing more happens at it (its last state above)"
            )
        ended += hand_over(previous, view)
        previous = view
        if (hands is not None and ended >= hands) or view.table_state == api.TABLE_STATE_CLOSED:
            return


@click.command("watch", cls=LegendCommand, legend=watch_legend)
@click.argument("table")
@table_service_options()
@click.option(
    "--hands",
    type=click.IntRange(min=1),
    default=None,
    help="End once this many hands have ended (or been aborted) while watching.",
)
def watch(table: str, address: str, token: str | None, operator: str, hands: int | None) -> None:
    """Watch TABLE (an id or a name; closed tables too) live: whose turn and its deadline, the
    public cards and counts, each seat, what the table's variant shows of its own, the match,
    each event as it happens and each hand's result. Never a hand's cards or the stock's order
    (an operator watches as a spectator).

    On a terminal the view updates in place; piped, one line per event. Ctrl-C ends it.

    Exit status 1 when the table service refuses or is not reached, when TABLE names no table
    or several (their ids listed), or when the table is closed."""
    minted = [operator_token(token, operator)]

    def metadata() -> tuple[tuple[str, str], ...]:
        if token is None:  # a minted token lives 15 minutes: a new one for each opening
            minted[0] = operator_token(None, operator)
        return bearer_metadata(minted[0])

    router = table_router(address)
    try:
        listed = list_tables(router, bearer_metadata(minted[0]))
        table_id = resolve(table, lambda: listed)
        summary = next((t for t in listed if t.table_id == table_id), None)
        if summary is None:
            raise no_such_table(table)
        live = sys.stdout.isatty()
        interrupt = Interrupt()
        previous = signal.signal(signal.SIGINT, interrupt)
        try:
            show(Watched(summary), views(router, table_id, metadata, interrupt), live, hands)
        finally:
            signal.signal(signal.SIGINT, previous)
        if interrupt.requested and live:
            click.echo("")
    finally:
        router.close()
