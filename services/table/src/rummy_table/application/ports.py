"""What the application needs from outside, as protocols (the adapters implement them, bootstrap
hands them in): the metrics it counts (:class:`Metrics`, Prometheus in
:class:`rummy_table.adapters.metrics.TableMetrics`), the renderer of a caller's view
(:data:`ViewRenderer`, the edge's) and the application's state as the rebuild
and the snapshot writer read and fill it (:class:`ServedTables`, which
:class:`~rummy_table.application.app.TableApp` is). The event log's writer and readers are the
platform's own protocols (:class:`rummy_platform.eventlog.TransactionalWriter`, plain callables
for the reads)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from typing import Any, Literal, Protocol, get_args

from rummy_platform.envelope import Envelope
from rummy_rules.commands import Command
from rummy_table.application.held_table import HeldTable
from rummy_table.application.projection import Projection

#: ``action`` label of ``rummy_table_action_latency_seconds``: the player calls that are timed.
Action = Literal[
    "take_seat", "leave_table", "contribute_seed", "draw", "discard", "declare", "drop", "play"
]
ACTIONS: tuple[Action, ...] = get_args(Action)
#: What the tick aborted because another service did not answer within the service deadline:
#: a ``hand`` (waiting for the ledger's stakes, fairness's commitment or the dealer's deal) or a
#: ``match`` (whose money the ledger did not hold).
OverdueKind = Literal["hand", "match"]
OVERDUE_KINDS: tuple[OverdueKind, ...] = get_args(OverdueKind)


#: The caller's view of a table (its account, None: a spectator), rendered by the edge from the
#: table as it is (called under the projection's lock: the table is mutable); the application
#: hands it on as it comes.
ViewRenderer = Callable[[HeldTable, str | None], Any]


class Metrics(Protocol):
    """What the table service counts (never on replay)."""

    def count_decision(self, command: Command, outcome: str) -> None:
        """One call of the rules' ``decide`` for ``command``: ``accepted`` or the refusal's
        ErrorCode in lower case."""

    def count(self, envelopes: Iterable[Envelope]) -> None:
        """What freshly appended envelopes say happened (hands, declares, drops, seats ...)."""

    def tables_now(self, open_tables: int, seats_taken: int) -> None:
        """The tables open and the seats taken now (after a rebuild or a hand-over)."""

    def table_opened(self) -> None:
        """One more table open."""

    def action_answered(self, action: Action, seconds: float) -> None:
        """A player's call answered ``seconds`` after it came."""

    def overdue_aborted(self, kind: OverdueKind) -> None:
        """A hand or match aborted past the service deadline."""

    def hand_start_failed(self) -> None:
        """A table's hand start raised (that table is retried after a backoff)."""

    def snapshot_ignored(self, reason: str) -> None:
        """A partition's snapshot ignored at start (``shape`` or ``undecodable``)."""

    def snapshot_written(self, size_bytes: int) -> None:
        """A partition's snapshot written, ``size_bytes`` before compression."""


class ServedTables(Protocol):
    """The application's tables as the rebuild and the snapshot writer see them."""

    @property
    def projection(self) -> Projection:
        """Every table in memory."""

    @property
    def topic(self) -> str:
        """The table stream's topic (table-events, with the deployment's prefix)."""

    @property
    def metrics(self) -> Metrics:
        """What the application counts."""

    @property
    def unsure(self) -> Collection[str]:
        """Tables whose last commit's outcome is unknown (to be re-read first)."""

    @property
    def fenced(self) -> bool:
        """True once this instance's writer was replaced (it writes nothing more)."""

    def count_tables(self) -> None:
        """Set the tables-open and seats-taken figures from the projection."""
