"""What the demo plays: the tables (:class:`TablePlan`, :data:`DEFAULT_TABLES`), the tables of
each game (:data:`GAMES`: points and the match formats) and the run's options
(:class:`DemoOptions`). Money in hundredths of a House Token, times in rule-set seconds."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from rummy.common.v1 import cards_pb2
from rummy.match.v1 import match_pb2 as match_pb
from rummy_ops.bots.strategy import MatchTemperament


@dataclass(frozen=True)
class TablePlan:
    """A table to open: ``point_value_hundredths`` per point (0 = free), ``commission_bps`` on
    the winner's take (basis points); ``players`` bots are seated (default: every seat).

    ``match``: the table's match format (``OpenTableRequest.match``; None: a points table). A
    format table has point value 0 (the format owns the money: its entry fees), its
    ``commission_bps`` is taken on the prize pool, every seat is taken (the match starts when
    all are), and it plays one match to its end (not a share of the hands); its bots play the
    match as ``bots_match`` says (rejoin offers, split requests)."""

    name: str
    seats: int
    point_value_hundredths: int
    commission_bps: int
    players: int | None = None
    match: match_pb.MatchOptions | None = field(default=None, compare=False)
    bots_match: MatchTemperament = MatchTemperament()

    @property
    def bots(self) -> int:
        return self.players or self.seats

    @property
    def plays_match(self) -> bool:
        """True at a table of a format other than ``single`` (it plays one match to its end)."""
        return self.match is not None and self.match.WhichOneof("format") not in (None, "single")


DEFAULT_TABLES: tuple[TablePlan, ...] = (
    TablePlan("free-4", 4, 0, 0, players=2),  # heads-up: a drop or a wrong declare ends it
    TablePlan("silver-6", 6, 10, 1000),
    TablePlan("gold-8", 8, 25, 500),
)


def _pool(
    target: int, entry: int, *, rejoin: bool = False, split: bool = False
) -> match_pb.MatchOptions:
    pool = match_pb.PoolOptions(
        target=target, entry_fee_hundredths=entry, rejoin=rejoin, split=split
    )
    return match_pb.MatchOptions(pool=pool)


#: The tables of each game of ``rummy demo --game``: ``points`` the three points tables; one
#: table of each match format with modest entry fees (``docs/rules/formats.md``): a 101 pool
#: with rejoin (3 seats: a rejoin needs two others still in), a 201 pool with split (its bots
#: ask to split once two are left), a 2-deal deals table and a best of 3.
GAMES: dict[str, tuple[TablePlan, ...]] = {
    "points": DEFAULT_TABLES,
    "pool101": (TablePlan("pool101-3", 3, 0, 1000, match=_pool(101, 10_00, rejoin=True)),),
    "pool201": (
        TablePlan(
            "pool201-3",
            3,
            0,
            1000,
            match=_pool(201, 10_00, split=True),
            bots_match=MatchTemperament(split_at_seats=2),
        ),
    ),
    "deals": (
        TablePlan(
            "deals2-3",
            3,
            0,
            500,
            match=match_pb.MatchOptions(
                deals=match_pb.DealsOptions(deals=2, entry_fee_hundredths=5_00)
            ),
        ),
    ),
    "best-of": (
        TablePlan(
            "bestof3-2",
            2,
            0,
            500,
            match=match_pb.MatchOptions(
                best_of=match_pb.BestOfOptions(deals=3, entry_fee_hundredths=5_00)
            ),
        ),
    ),
}
#: What ``rummy demo`` plays without ``--game``: every game (the points tables' share of the
#: hands and each format table's match, side by side).
DEFAULT_GAMES: tuple[str, ...] = tuple(GAMES)


def tables_of(games: Iterable[str]) -> tuple[TablePlan, ...]:
    """The tables of ``games`` (names of :data:`GAMES`), in that order. Raises KeyError for a
    game it does not know."""
    return tuple(plan for game in games for plan in GAMES[game])


@dataclass(frozen=True)
class DemoOptions:
    """``hands``: hands to play in all, shared among the tables; ``seed``: the bots' randomness;
    ``turn_seconds`` / ``seed_window_seconds`` / ``start_delay_seconds``: the tables' rule-set
    seconds (the services divide them by their ``RUMMY_CLOCK_SPEED``); ``grant_hundredths``: what
    each bot is granted; ``mischief``: scales how often bots stall or declare wrongly;
    ``timeout_seconds``: give up waiting for hands after this long."""

    hands: int = 30
    seed: int = 7
    tables: tuple[TablePlan, ...] = DEFAULT_TABLES
    turn_seconds: int = 20
    seed_window_seconds: int = 10
    start_delay_seconds: int = 10
    grant_hundredths: int = 500_00
    mischief: float = 1.0
    timeout_seconds: float = 900.0
    #: Where each bot keeps its own record (``<account>.jsonl``, rummy_ops.bots.record); None: none.
    records_dir: Path | None = None
    #: The tables' variant and its options as OpenTable takes them (``variant``,
    #: ``variant_options``; the seconds above are set on it); None: the house variant's house
    #: rule set. The bots play it with the variant's own strategy (``rummy_rules.registry``).
    rule_set: cards_pb2.RuleSet | None = None


def table_rule_set(options: DemoOptions) -> cards_pb2.RuleSet:
    """The demo tables' options: ``options.rule_set`` (none: the house variant's) with the demo's
    seconds; every rule left out is the variant's house rule."""
    out = cards_pb2.RuleSet()
    if options.rule_set is not None:
        out.CopyFrom(options.rule_set)
    out.turn_seconds = options.turn_seconds
    out.seed_window_seconds = options.seed_window_seconds
    out.start_delay_seconds = options.start_delay_seconds
    return out


def share(total: int, parts: int) -> list[int]:
    """``total`` split into ``parts`` near-equal whole shares, the larger ones first (none for
    no parts)."""
    if parts <= 0:
        return []
    base, extra = divmod(total, parts)
    return [base + (1 if i < extra else 0) for i in range(parts)]
