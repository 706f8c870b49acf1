"""Every hand started at one table, packed: where its HandStarted lies and whether its seed reveal
and its settlement are recorded (what a lookup by hand id needs before it reads the hand from the
log: ``rummy_table.application.reads``; what :meth:`~rummy_table.domain.table.Table.close_proof`
checks).

Memory: 25 bytes a hand (its id as the 16 bytes of its UUID, the offset as 8, both flags in one),
in three flat buffers, instead of Python strings, ints and set entries (about 450 bytes a hand: a
table service that had served 20,000 hands held 9 MiB of them). A hand id that is not a canonical
lower-case UUID (tests name hands as they like) is kept in a dict beside the buffers. A lookup
scans the table's ids with ``bytes.find`` (C speed: a table of 100,000 hands is 1.6 MB to scan).
"""

from __future__ import annotations

import functools
import sys
import uuid
from array import array
from collections.abc import Iterator

_REVEALED = 1
_SETTLED = 2
_NIL = bytes(16)


@functools.lru_cache(maxsize=1024)  # a lookup over every table parses its hand id once
def _key(hand_id: str) -> bytes | None:
    """The 16 bytes of ``hand_id`` when it is a canonical lower-case UUID (not the nil one),
    else None."""
    if len(hand_id) != 36:
        return None
    try:
        parsed = uuid.UUID(hand_id)
    except ValueError:
        return None
    key = parsed.bytes
    return key if key != _NIL and str(parsed) == hand_id else None


class PlayedHands:
    """The hands started at a table, oldest first: ``hand_id in hands``, ``hands[hand_id]``
    (the offset of its HandStarted in the table's partition; -1: not known), ``hands[hand_id] =
    offset`` (a hand started; again: its offset replaced), ``len(hands)``, iteration (the ids,
    oldest first). :attr:`revealed` and :attr:`settled` are the hands whose seed reveal, and
    whose settlement (or its refusal), are recorded (``in``, ``add``)."""

    __slots__ = ("_flags", "_ids", "_named", "_offsets", "revealed", "settled")

    def __init__(self) -> None:
        self._ids = bytearray()  # 16 bytes a hand; zeros for a hand of _named
        self._offsets = array("q")
        self._flags = bytearray()
        self._named: dict[str, int] = {}  # ids that are not canonical UUIDs -> their index
        self.revealed = HandFlag(self, _REVEALED)
        self.settled = HandFlag(self, _SETTLED)

    def _index(self, hand_id: str) -> int | None:
        key = _key(hand_id)
        if key is None:
            return self._named.get(hand_id)
        at = self._ids.find(key)
        while at >= 0 and at % 16:  # a match across two ids: look on
            at = self._ids.find(key, at + 1)
        return None if at < 0 else at // 16

    def __contains__(self, hand_id: object) -> bool:
        return isinstance(hand_id, str) and self._index(hand_id) is not None

    def __getitem__(self, hand_id: str) -> int:
        """The offset of ``hand_id``'s HandStarted. Raises KeyError for a hand not started here."""
        index = self._index(hand_id)
        if index is None:
            raise KeyError(hand_id)
        return self._offsets[index]

    def __setitem__(self, hand_id: str, offset: int) -> None:
        index = self._index(hand_id)
        if index is not None:
            self._offsets[index] = offset
            return
        key = _key(hand_id)
        if key is None:
            self._named[hand_id] = len(self._flags)
        self._ids += key or _NIL
        self._offsets.append(offset)
        self._flags.append(0)

    def __len__(self) -> int:
        return len(self._flags)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PlayedHands):
            return NotImplemented
        return self.packed() == other.packed()

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __iter__(self) -> Iterator[str]:
        names = {index: hand_id for hand_id, index in self._named.items()}
        for index in range(len(self._flags)):
            found = names.get(index)
            yield found if found is not None else str(uuid.UUID(bytes=bytes(self._id_at(index))))

    def _id_at(self, index: int) -> bytearray:
        return self._ids[index * 16 : index * 16 + 16]

    def _flagged(self, hand_id: str, flag: int) -> bool:
        index = self._index(hand_id)
        return index is not None and bool(self._flags[index] & flag)

    def _flag(self, hand_id: str, flag: int) -> None:
        """Set ``flag`` on ``hand_id``; nothing for a hand not started here (every lookup asks
        first whether it was, and :meth:`~rummy_table.domain.table.Table.close_proof` refuses
        the reveal or settlement of such a hand)."""
        index = self._index(hand_id)
        if index is not None:
            self._flags[index] |= flag

    # -- snapshots ---------------------------------------------------------------------------

    def packed(self) -> tuple[bytes, bytes, bytes, dict[str, int]]:
        """(ids, offsets as little-endian int64s, flags, the ids that are not UUIDs -> index):
        the state as :meth:`from_packed` reads it."""
        offsets = array("q", self._offsets)
        if sys.byteorder == "big":
            offsets.byteswap()
        return bytes(self._ids), offsets.tobytes(), bytes(self._flags), dict(self._named)

    @classmethod
    def from_packed(
        cls, ids: bytes, offsets: bytes, flags: bytes, named: dict[str, int]
    ) -> PlayedHands:
        """The hands :meth:`packed` returned. Raises ValueError when the parts disagree."""
        hands = cls()
        hands._offsets.frombytes(offsets)
        if sys.byteorder == "big":
            hands._offsets.byteswap()
        n = len(flags)
        if len(ids) != 16 * n or len(hands._offsets) != n:
            raise ValueError(f"{len(ids)} id bytes, {len(offsets)} offset bytes for {n} hands")
        if any(not 0 <= i < n for i in named.values()):
            raise ValueError("a named hand's index out of range")
        hands._ids, hands._flags, hands._named = bytearray(ids), bytearray(flags), dict(named)
        return hands


class HandFlag:
    """The hands of a :class:`PlayedHands` with one flag set (its reveal, or its settlement,
    recorded): ``hand_id in flag``, ``flag.add(hand_id)``, iteration (oldest first)."""

    __slots__ = ("_flag", "_hands")

    def __init__(self, hands: PlayedHands, flag: int) -> None:
        self._hands, self._flag = hands, flag

    def __contains__(self, hand_id: object) -> bool:
        return isinstance(hand_id, str) and self._hands._flagged(hand_id, self._flag)

    def add(self, hand_id: str) -> None:
        self._hands._flag(hand_id, self._flag)

    def __iter__(self) -> Iterator[str]:
        return (h for h in self._hands if h in self)
