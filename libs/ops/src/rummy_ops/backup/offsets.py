"""Old offsets to new: a partition copied into an empty broker without transactions has its
records at 0, 1, 2... where the original had gaps (transaction markers, aborted records), so
every offset stored elsewhere (a service's ``consumer_offsets`` rows, a consumer group's commits)
is carried over through an :class:`OffsetMap` (pure; no I/O)."""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class OffsetMap:
    """One partition's records: ``old`` (their offsets in the original, ascending) and ``new``
    (where each landed in the copy, same length, ascending); ``new_end``: the copy's end.

    Raises ValueError when the two do not pair up."""

    old: Sequence[int]
    new: Sequence[int]
    new_end: int

    def __post_init__(self) -> None:
        if len(self.old) != len(self.new):
            raise ValueError(f"{len(self.old)} old offsets but {len(self.new)} new ones")
        if any(b <= a for a, b in zip(self.old, self.old[1:], strict=False)):
            raise ValueError("old offsets are not ascending")
        if any(b <= a for a, b in zip(self.new, self.new[1:], strict=False)):
            raise ValueError("new offsets are not ascending")

    def next_offset(self, old_next: int) -> int:
        """Where a reader that would resume at ``old_next`` (a next offset: every record below
        it handled) resumes in the copy: at the first copied record at or past ``old_next``, or
        at the copy's end when there is none (an offset past the copy's end: its records were
        after the backup's cut, so the reader reads whatever comes next). Raises ValueError for
        a negative offset."""
        if old_next < 0:
            raise ValueError(f"offset {old_next} is negative")
        i = bisect.bisect_left(self.old, old_next)
        return self.new[i] if i < len(self.new) else self.new_end
