"""The figures line of the table service's in-process benchmarks."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence


def print_medians(figures: Mapping[str, Sequence[float]], per: str) -> None:
    """Print each way's median over its rounds (``per``: the unit and what it is of, e.g.
    ``"ms CPU per snapshot"``) with its range."""
    for name, values in figures.items():
        print(
            f"{name}: {statistics.median(values):.1f} {per} (median of {len(values)} rounds, "
            f"{min(values):.1f}-{max(values):.1f})"
        )
