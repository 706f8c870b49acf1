"""The table service's application: :class:`TableApp`, every use case of the table over the
projection and the stream writer. Each RPC's handler is a plain function of the module named in
:class:`TableApp`'s method of the same name, taking the :class:`~.commit.TableCore` (the
projection, the writer, the settings and the one commit path: decide on the table under its
command lock, append through the writer, fold, answer; idempotent by the client's request id and
the request's digest) and the command:

- :mod:`.tables`: open, close and list tables (operators, the lobby);
- :mod:`.seating`: take and leave a seat;
- :mod:`.play`: a player's commands on the current hand (seed, draw, discard, the variant's and
  the match's own commands);
- :mod:`.reads`: a hand's result and proof, a caller's view, the watch check;
- :mod:`.starts`: the tick (overdue hands aborted, due hands started);
- :mod:`.inputs`: the other services' events recorded as the table's facts.

The handlers take the commands of :mod:`.commands` (decoded at the edge) and plain values, and
answer with plain values, the domain's messages and :mod:`.results`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from google.protobuf.message import Message

from rummy.common.v1 import cards_pb2
from rummy.table.v1 import events_pb2 as pb
from rummy_platform.envelope import Envelope
from rummy_platform.eventlog import Record, TopicPartition

from . import commands as c
from . import inputs, play, reads, seating, starts, tables
from .commit import DEFAULT_SERVICE_DEADLINE_SECONDS, INPUT_GROUP, TableCore
from .inputs import ConsumedProgress, InputsOutcome
from .results import TableSummary

__all__ = [
    "DEFAULT_SERVICE_DEADLINE_SECONDS",
    "INPUT_GROUP",
    "ConsumedProgress",
    "InputsOutcome",
    "TableApp",
]


class TableApp(TableCore):
    """The handlers, each one line naming its module's function (the fields and the one commit
    path: :class:`.commit.TableCore`)."""

    # -- tables (operators, the lobby) ------------------------------------------------------

    def open_table(self, request: c.OpenTable) -> str:
        return tables.open_table(self, request)

    def close_table(self, request: c.CloseTable) -> str:
        return tables.close_table(self, request)

    def list_tables(
        self,
        limit: int | None = None,
        after: str | None = None,
        *,
        everywhere: bool = True,
        include_closed: bool = False,
    ) -> list[TableSummary]:
        return tables.list_tables(
            self, limit, after, everywhere=everywhere, include_closed=include_closed
        )

    # -- seating -----------------------------------------------------------------------------

    def take_seat(self, request: c.TakeSeat) -> int:
        return seating.take_seat(self, request)

    def leave_table(self, request: c.LeaveTable) -> None:
        seating.leave_table(self, request)

    # -- play --------------------------------------------------------------------------------

    def contribute_seed(self, request: c.ContributeSeed) -> None:
        play.contribute_seed(self, request)

    def draw(self, request: c.DrawCard) -> cards_pb2.Card | None:
        return play.draw(self, request)

    def discard(self, request: c.DiscardCard) -> None:
        play.discard(self, request)

    def play(self, request: c.Play) -> Message | None:
        return play.play(self, request)

    def play_older_rpc(self, command: c.PlayOlderRpc) -> Message | None:
        return play.play_older_rpc(self, command)

    # -- reads -------------------------------------------------------------------------------

    def get_hand_result(self, account_id: str | None, table_id: str, hand_id: str) -> pb.HandEnded:
        return reads.get_hand_result(self, account_id, table_id, hand_id)

    def get_hand_proof(self, account_id: str | None, table_id: str, hand_id: str) -> str:
        return reads.get_hand_proof(self, account_id, table_id, hand_id)

    def voided_reason(self, table_id: str, hand_id: str) -> str:
        return reads.voided_reason(self, table_id, hand_id)

    def view_after(self, account_id: str | None, table_id: str, after_version: int = 0) -> Any:
        return reads.view_after(self, account_id, table_id, after_version)

    def view(self, account_id: str | None, table_id: str) -> Any:
        return reads.view(self, account_id, table_id)

    def check_watch(self, table_id: str, after_version: int) -> None:
        reads.check_watch(self, table_id, after_version)

    # -- starts (the tick) -------------------------------------------------------------------

    def tick(self) -> list[str]:
        return starts.tick(self)

    def abort_overdue_hands(self, now: int) -> list[str]:
        return starts.abort_overdue_hands(self, now)

    # -- inputs (the other services' events) -------------------------------------------------

    def on_input(self, envelope: Envelope, position: TopicPartition, next_offset: int) -> bool:
        return inputs.on_input(self, envelope, position, next_offset)

    def on_inputs(
        self, records: Sequence[Record], caps: Mapping[TopicPartition, int] | None = None
    ) -> InputsOutcome:
        return inputs.on_inputs(self, records, caps)
