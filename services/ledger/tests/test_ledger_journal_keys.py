"""A match's settlement key in the ledger's journal: the format the ledger writes and the replay
reads, distinct for every (table, match, game) whatever the ids hold."""

from __future__ import annotations

from rummy_ledger.contract import match_settlement_key


def test_a_matchs_settlement_key_names_the_table_the_match_and_the_game() -> None:
    assert match_settlement_key("t1", "t1/1") == "match:2:t1:4:t1/1:g0"
    assert match_settlement_key("t1", "t1/1", 3) == "match:2:t1:4:t1/1:g3"


def test_ids_holding_the_separator_never_share_a_key() -> None:
    pairs = [
        ("a:1", "b"),
        ("a", "1:b"),
        ("a:1:", "b"),
        ("a", ":1:b"),
        ("a:2:b", "c"),
        ("a", "b:2:c"),
    ]
    keys = {match_settlement_key(table, match) for table, match in pairs}
    assert len(keys) == len(pairs)
