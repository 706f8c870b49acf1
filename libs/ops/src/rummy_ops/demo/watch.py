"""The operator's watch on one demo table (:class:`TableRun`): it records every hand's end
(or abort) from the table's views and sends the table's bots away once its share of hands
has ended, or at a format table once its match is over (recorded as a :class:`MatchRecord`)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import grpc

from rummy.table.v1 import events_pb2 as table_events
from rummy.table.v1 import table_service_pb2 as table_api
from rummy.table.v1 import table_service_pb2_grpc as table_grpc
from rummy_ops.bots.client import Bot
from rummy_ops.demo.plans import TablePlan
from rummy_ops.demo.report import HandRecord, MatchRecord


class TableRun:
    """One table: its bots and the operator's watch that records hands and ends the table's
    play when its share of hands (``target``) has ended or, at a format table, its match is over
    (``on_match`` is called once with it)."""

    def __init__(
        self,
        plan: TablePlan,
        table_id: str,
        target: int,
        stub: table_grpc.TableServiceStub,
        metadata: tuple[tuple[str, str]],
        on_hand: Callable[[HandRecord], None],
        on_match: Callable[[MatchRecord], None] = lambda _record: None,
    ) -> None:
        self.plan, self.table_id, self.target = plan, table_id, target
        self.bots: list[Bot] = []
        self.records: dict[str, HandRecord] = {}
        self.ended = 0
        #: Set once the bots have left and the table holds no hand in play (so every hand that
        #: ended, also one a leave ended, is recorded), or when the run was stopped.
        self.done = threading.Event()
        self._leaving = False
        self.leaving_since: float | None = None  # monotonic seconds the bots were told to leave
        self._stub, self._metadata, self._on_hand = stub, metadata, on_hand
        self._on_match = on_match
        self.match: MatchRecord | None = None
        #: Why the table cannot play its plan ("" while it can): a format table whose service
        #: deals its hands as points hands (no match in the view) does not host the format.
        self.refused = ""
        self._call: grpc.Call | None = None
        self._last: tuple[str, int] = ("", 0)
        self._lock = threading.Lock()
        self.thread = threading.Thread(target=self._watch, name=f"watch-{plan.name}", daemon=True)

    def _watch(self) -> None:
        while not self.done.is_set():
            try:
                self._call = self._stub.WatchTable(
                    table_api.WatchTableRequest(table_id=self.table_id), metadata=self._metadata
                )
                for response in self._call:
                    self._on_view(response.view)
                    if self.done.is_set():
                        return
            except grpc.RpcError as error:
                if self.done.is_set() or error.code() == grpc.StatusCode.CANCELLED:
                    return
                time.sleep(0.5)
            finally:
                # Leaving the loop does not end the stream: cancel it, so the table service
                # frees the watch (it bounds the watches an account holds at once).
                if self._call is not None:
                    self._call.cancel()

    def _on_view(self, view: table_api.PlayerView) -> None:
        if self.plan.plays_match and view.hand_id and not view.HasField("match"):
            self.refused = self.refused or (
                f"{self.plan.name}: the table service deals it points hands (no match in its "
                "view): it does not host match formats yet"
            )
            self._finish()
            if _idle(view):
                self.done.set()
            return
        previous_id, previous_no = self._last
        if view.hand_id and view.hand_id != previous_id:
            if previous_id:
                self._finish_from_service(previous_id, previous_no)  # its end view was skipped
            self._last = (view.hand_id, view.hand_no)
        if view.phase == table_api.HAND_PHASE_ENDED and view.HasField("result"):
            self._record(self._hand(view.hand_no, view.hand_id, result=view.result))
        elif view.phase == table_api.HAND_PHASE_ABORTED:
            reason = view.aborted_reason or "aborted"
            self._record(self._hand(view.hand_no, view.hand_id, aborted_reason=reason))
        if self.plan.plays_match and view.HasField("match") and view.match.WhichOneof("result"):
            self._match_over(view)
        if self._leaving and _idle(view):
            self.done.set()

    def _match_over(self, view: table_api.PlayerView) -> None:
        with self._lock:
            if self.match is not None:
                return
            self.match = MatchRecord(self.plan.name, self.table_id, view.match)
        self._on_match(self.match)
        self._finish()

    def _finish_from_service(self, hand_id: str, hand_no: int) -> None:
        if hand_id in self.records:
            return
        try:
            reply = self._stub.GetHandResult(
                table_api.GetHandResultRequest(table_id=self.table_id, hand_id=hand_id),
                metadata=self._metadata,
                timeout=10,
            )
            record = self._hand(hand_no, hand_id, result=reply.result)
        except grpc.RpcError as error:
            record = self._hand(hand_no, hand_id, aborted_reason=f"no result ({error.code().name})")
        self._record(record)

    def _hand(
        self,
        hand_no: int,
        hand_id: str,
        result: table_events.HandEnded | None = None,
        aborted_reason: str = "",
    ) -> HandRecord:
        """A hand of this table: its ``result``, or why it has none."""
        return HandRecord(
            self.plan.name,
            self.table_id,
            hand_no,
            hand_id,
            result=result,
            aborted_reason=aborted_reason,
            variant=self.plan.variant,
        )

    def _record(self, record: HandRecord) -> None:
        with self._lock:
            if record.hand_id in self.records:
                return
            self.records[record.hand_id] = record
            if record.result is not None:
                self.ended += 1
        self._on_hand(record)
        if not self.plan.plays_match and self.ended >= self.target:
            self._finish()

    def _finish(self) -> None:
        """The table has played its part: its bots leave (between hands it costs nothing; a hand
        dealt meanwhile ends by their leaves, and the watch goes on to record it: the run is
        :attr:`done` once the table is empty with no hand in play)."""
        if self._leaving:
            return
        self._leaving = True
        self.leaving_since = time.monotonic()
        for bot in self.bots:
            bot.stop(leave=True)

    def stop(self) -> None:
        """Stop the bots and the watch; wait for the watch thread. Bots still seated leave (a
        hand in progress counts that as leaving mid-hand), so no table keeps dealing to seats
        nobody plays."""
        self._leaving = True
        for bot in self.bots:
            bot.stop(leave=True)
        self.done.set()
        if self._call is not None:
            self._call.cancel()
        if self.thread.is_alive() and self.thread is not threading.current_thread():
            self.thread.join(15)


_IN_PLAY = frozenset(
    {
        table_api.HAND_PHASE_RESERVING,
        table_api.HAND_PHASE_SEEDING,
        table_api.HAND_PHASE_DEALING,
        table_api.HAND_PHASE_PLAYING,
    }
)


def _idle(view: table_api.PlayerView) -> bool:
    """No hand in play and no seat taken at the table now (a seat of the last hand whose player
    left is not ``seated``): nothing more can end at the table."""
    return view.phase not in _IN_PLAY and not any(s.seated for s in view.seats)
