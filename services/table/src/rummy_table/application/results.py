"""What the table service's read handlers answer with, besides the domain's own values and
messages (a seat number, a card, the variant's answer, a hand's ``HandEnded``)."""

from __future__ import annotations

from dataclasses import dataclass

from rummy.match.v1 import match_pb2 as mpb


@dataclass(frozen=True)
class TableSummary:
    """One table of the lobby (ListTables): its options, the seats taken, ``state`` (``open``,
    ``closing``, or ``closed`` when closed tables are asked for), ``match_format`` (``single``: a
    points table; else the format's name, e.g. ``pool-101``), ``hands_played`` (hands started
    here, the one being played included) and ``match`` (the format options it was opened with;
    None: a points table). Money in hundredths of a House Token, the commission in basis
    points, times in seconds."""

    table_id: str
    name: str
    seat_count: int
    seats_taken: int
    point_value_hundredths: int
    commission_bps: int
    variant: str
    turn_seconds: int
    start_delay_seconds: int
    state: str
    match_format: str
    hands_played: int = 0
    match: mpb.MatchOptions | None = None
