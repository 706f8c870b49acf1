"""The hands a table played, packed (``rummy_table.domain.played_hands``): they answer as the
dict of offsets and the two sets of hand ids they replace, and read back from their packed parts
(a snapshot's)."""

from __future__ import annotations

import uuid

from hypothesis import given
from hypothesis import strategies as st

from rummy_table.domain.played_hands import PlayedHands

# canonical UUIDs (packed), other names (kept beside them), and the nil UUID and an upper-case
# UUID, which are not packed
_IDS = st.one_of(
    st.uuids().map(str),
    st.sampled_from(["hand-1", "h", "", str(uuid.UUID(int=0)), str(uuid.uuid4()).upper()]),
)
_STEPS = st.lists(
    st.tuples(st.sampled_from(["start", "reveal", "settle"]), _IDS, st.integers(-1, 2**40)),
    max_size=40,
)


@given(_STEPS, st.lists(_IDS, max_size=5))
def test_played_hands_answer_as_a_dict_and_two_sets(
    steps: list[tuple[str, str, int]], others: list[str]
) -> None:
    hands = PlayedHands()
    offsets: dict[str, int] = {}
    revealed: set[str] = set()
    settled: set[str] = set()
    for kind, hand_id, offset in steps:
        if kind == "start":
            hands[hand_id] = offset
            offsets[hand_id] = offset
        elif kind == "reveal":
            hands.revealed.add(hand_id)
            revealed |= {hand_id} & offsets.keys()
        else:
            hands.settled.add(hand_id)
            settled |= {hand_id} & offsets.keys()
    for again in (hands, PlayedHands.from_packed(*hands.packed())):
        assert list(again) == list(offsets) and len(again) == len(offsets)
        assert {h: again[h] for h in again} == offsets
        assert (set(again.revealed), set(again.settled)) == (revealed, settled)
        for hand_id in [*offsets, *others]:
            assert (hand_id in again) == (hand_id in offsets)
            assert (hand_id in again.revealed) == (hand_id in revealed)
            assert (hand_id in again.settled) == (hand_id in settled)
        assert again == hands


def test_a_uuid_is_found_only_where_a_hand_id_starts() -> None:
    # two ids whose bytes hold, across their boundary, the bytes of a third
    first, second = uuid.UUID(bytes=bytes(range(16))), uuid.UUID(bytes=bytes(range(16, 32)))
    across = uuid.UUID(bytes=bytes(range(8, 24)))
    hands = PlayedHands()
    hands[str(first)], hands[str(second)] = 10, 20
    assert str(across) not in hands
    hands[str(across)] = 30
    assert (hands[str(first)], hands[str(second)], hands[str(across)]) == (10, 20, 30)
