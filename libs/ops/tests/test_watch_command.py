"""``rummy watch``'s command (rummy_ops.watch_command): piped, the state then one stamped line per
event and no escape code; on a terminal a redraw; it ends after ``--hands`` hands, when the table
closes, and refuses a table closed already; an address where nothing answers is an ``Error:``.
(What the lines say of a table's real views: services/table/tests/test_table_watch_rendering.py.)"""

from __future__ import annotations

import re

import click
import pytest
from click.testing import CliRunner

from rummy.common.v1 import cards_pb2
from rummy.table.v1 import table_service_pb2 as api
from rummy_ops.cli import main
from rummy_ops.watch_command import show
from rummy_ops.watch_view import Watched

TABLE = Watched(
    api.TableSummary(
        table_id="t-1", name="gold", variant="indian-points", seat_count=2, commission_bps=500
    )
)


def _view(
    version: int,
    phase: api.HandPhase.ValueType,
    state: api.TableState.ValueType = api.TABLE_STATE_OPEN,
) -> api.PlayerView:
    view = api.PlayerView(table_id="t-1", stream_version=version, phase=phase, table_state=state)
    if phase != api.HAND_PHASE_WAITING:
        view.hand_id, view.hand_no, view.turn_no, view.turn_seat = "h-1", 1, 1, 0
        view.stock_count = 80
        view.discard_pile.append(cards_pb2.Card(index=3, face="4C"))
    return view


def _hand() -> list[api.PlayerView]:
    return [
        _view(1, api.HAND_PHASE_WAITING),
        _view(2, api.HAND_PHASE_PLAYING),
        _view(3, api.HAND_PHASE_ABORTED),
        _view(4, api.HAND_PHASE_PLAYING),
    ]


def test_piped_it_prints_stamped_lines_without_escapes_and_ends_after_its_hands(
    capsys: pytest.CaptureFixture[str],
) -> None:
    show(TABLE, iter(_hand()), live=False, hands=1)
    lines = capsys.readouterr().out.splitlines()
    assert "\x1b" not in "".join(lines)
    assert all(re.match(r"\d\d:\d\d:\d\d v\d ", line) for line in lines)
    assert lines[0].endswith("table gold (t-1)  indian-points  single  point 0.00  open  v1")
    assert lines[-1].endswith("v3 hand 1 aborted: aborted")  # the fourth view is not read
    assert any(line.endswith("v2 turn 1: s0 ? to draw") for line in lines)


def test_on_a_terminal_it_redraws_the_state_above_the_events(
    capsys: pytest.CaptureFixture[str],
) -> None:
    show(TABLE, iter(_hand()[:2]), live=True)
    out = capsys.readouterr().out
    screens = out.split("\x1b[H\x1b[2J")
    assert screens[0] == "" and len(screens) == 3
    assert "events (latest last):" in screens[2] and "hand 1 begun (h-1)" in screens[2]


def test_it_ends_when_the_table_closes_and_refuses_a_closed_table(
    capsys: pytest.CaptureFixture[str],
) -> None:
    waiting = api.HAND_PHASE_WAITING
    closing = [_view(1, waiting), _view(2, waiting, api.TABLE_STATE_CLOSED), _view(3, waiting)]
    show(TABLE, iter(closing), live=False)
    assert capsys.readouterr().out.splitlines()[-1].endswith("v2 table closed")
    with pytest.raises(click.ClickException, match="table gold is closed: nothing more"):
        show(TABLE, iter(closing[1:]), live=False)
    assert "closed  v2" in capsys.readouterr().out  # its last state first


def test_an_address_where_nothing_answers_is_an_error() -> None:
    result = CliRunner().invoke(main, ["watch", "gold", "--address", "127.0.0.1:1", "--token", "x"])
    assert result.exit_code == 1
    assert result.output.startswith("Error: cannot reach the table service at 127.0.0.1:1")


class _Call:
    def __init__(self) -> None:
        self.cancelled = 0

    def cancel(self) -> bool:
        self.cancelled += 1
        return True


def test_ctrl_c_cancels_the_open_stream_and_one_opened_after_it_at_once() -> None:
    from rummy_ops.watch_command import Interrupt

    interrupt, first = Interrupt(), _Call()
    interrupt.follow(first)  # type: ignore[arg-type]  # a stand-in with cancel() only
    assert (interrupt.requested, first.cancelled) == (False, 0)
    interrupt(2, None)  # SIGINT
    assert (interrupt.requested, first.cancelled) == (True, 1)
    later = _Call()
    interrupt.follow(later)  # type: ignore[arg-type]
    assert later.cancelled == 1
