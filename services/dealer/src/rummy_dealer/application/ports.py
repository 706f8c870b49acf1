"""What the dealer's handlers need from outside (implemented in ``rummy_dealer.adapters``, wired
by ``rummy_dealer.bootstrap``): the hand's seeds, the next stream version, the metrics."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol


class SeedSource(Protocol):
    """Where the dealer gets a hand's secret and locked inputs (the fairness service)."""

    def server_seed(self, hand_id: str) -> bytes:
        """The hand's 32-byte server seed (service role). Raises on any failure."""
        ...

    def locked_client_seeds(self, hand_id: str) -> Sequence[tuple[int, bytes]]:
        """``(seat, client seed)`` as locked for the hand."""
        ...


class StreamVersions(Protocol):
    """The next 1-based stream_version of a table's stream in dealer-events."""

    def next(self, stream_id: str) -> int: ...


@dataclass
class Counters:
    """Callbacks the bootstrap points at its metrics (no-ops by default)."""

    dealt: Callable[[], None] = lambda: None
    reshuffled: Callable[[], None] = lambda: None
