"""The keys the ledger's journal names a match's money by (``journal_transactions.hand_id``).

The ledger writes under these keys (``rummy_ledger.domain.matches``); the replay reads the
journal by them (``rummy_ops.replay``) through the ledger's contract (``rummy_ledger.contract``).
"""

from __future__ import annotations


def match_settlement_key(table_id: str, match_id: str, game_no: int = 0) -> str:
    """The key of match ``match_id``'s settlement at table ``table_id`` (``game_no`` 0) or of
    one of its games' (game to N: the game's number). Lengths are written out so no two (table,
    match) pairs share a key whatever their ids hold."""
    return f"match:{len(table_id)}:{table_id}:{len(match_id)}:{match_id}:g{game_no}"
