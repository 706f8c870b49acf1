"""A rules settlement of a match or a game (``rummy_rules.formats.money.MatchSettlement``) on the
wire (``rummy.match.v1.MatchSettlement``), as the table writes it: for tests that play the table
in front of the ledger."""

from __future__ import annotations

from rummy.match.v1 import match_pb2
from rummy_rules.formats.money import MatchSettlement


def wire_settlement(s: MatchSettlement) -> match_pb2.MatchSettlement:
    """``s`` as ``rummy.match.v1.MatchSettlement`` (cents are hundredths)."""
    return match_pb2.MatchSettlement(
        pool_hundredths=s.pool_cents,
        commission_bps=s.commission_bps,
        commission_hundredths=s.commission_cents,
        lines=[
            match_pb2.MoneyLine(
                seat=line.seat, held_hundredths=line.held_cents, amount_hundredths=line.amount_cents
            )
            for line in s.lines
        ],
        winners=list(s.winners),
    )
