"""The table service's application: :class:`TableApp`, every use case of the table over the
projection and the stream writer, one module per group of use cases, all on the one commit path
of :mod:`.commit` (decide on the table under its command lock, append through the writer, fold,
answer; idempotent by the client's request id and the request's digest):

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

from .commit import DEFAULT_SERVICE_DEADLINE_SECONDS, INPUT_GROUP
from .inputs import ConsumedProgress, Inputs, InputsOutcome
from .play import HandPlay
from .reads import Reads
from .seating import Seating
from .starts import HandStarts
from .tables import TableOperations

__all__ = [
    "DEFAULT_SERVICE_DEADLINE_SECONDS",
    "INPUT_GROUP",
    "ConsumedProgress",
    "InputsOutcome",
    "TableApp",
]


class TableApp(TableOperations, Seating, HandPlay, Reads, HandStarts, Inputs):
    """The handlers (the fields and the commit path: :class:`.commit.TableCore`)."""
